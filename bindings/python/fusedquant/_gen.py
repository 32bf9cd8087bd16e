"""Reads include/fusedquant/fusedquant.h and produces everything the binding knows about the C API.

Nothing in the package is copied from the header by hand. This module (standard library only, so the build
can run it as a script before the package is installed) turns the header into:
  cdef            the header run through the C preprocessor (FQ_API empty, the FQ_EXPERIMENTAL_API section
                  included: the binding offers the grouped GEMM and the handle's knobs, documented as
                  experimental; empty <stdint.h>/<stddef.h>
                  stubs: cffi knows int32_t, size_t, ... natively), whitespace-normalised so that every
                  compiler gives the same text
  macros          the integer #defines (FQ_VERSION_MAJOR, ...)
  attribute_types {enum: {member: (C type, enum name or None)}} for each fq*Attribute enum, read from the
                  "/**< int32_t fqActivation, ..." comment at each value (the header documents each
                  attribute's C type there); the tests check the sizes against the library
It is run by the CMake build (`python _gen.py HEADER OUT`, writing fusedquant/_cdef.py, which the wheel
carries), by the package at import time when no generated module exists (running from a source checkout), and
by the tests (the binding must equal a fresh generation from the header).
"""
import hashlib
import os
import re
import shlex
import subprocess
import sys
import tempfile

_ENUM = re.compile(r"\benum\s+(fq\w+)\s*\{(.*?)\}\s*;", re.S)
_MEMBER = re.compile(r"\b(FQ_\w+)\s*=\s*[^,}/]+,?\s*(?:/\*\*<(.*?)\*/)?", re.S)
_CTYPE = re.compile(r"\s*((?:const\s+)?(?:u?int(?:8|16|32|64)_t|float|double|size_t|void)(?:\s*\*)?)")
_MACRO = re.compile(r"^\s*#\s*define\s+(FQ_\w+)\s+(-?\d+)\s*$", re.M)


def preprocess(header, cc=None):
    """The cffi-ready declarations of `header` (see the module comment)."""
    cc = shlex.split(cc or os.environ.get("CC") or "cc")
    with tempfile.TemporaryDirectory() as stubs:
        for name in ("stdint.h", "stddef.h"):
            open(os.path.join(stubs, name), "w").close()
        cmd = [*cc, "-E", "-P", "-nostdinc", "-I", stubs, "-DFQ_API=", "-DFQ_EXPERIMENTAL_API", "-x", "c", str(header)]
        text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    text = " ".join(text.split())
    return re.sub(r"([;{]) ?", "\\1\n", text)


def attribute_types(text):
    enums = {name for name, _ in _ENUM.findall(text)}
    out = {}
    for name, body in _ENUM.findall(text):
        if not name.endswith("Attribute"):
            continue
        out[name] = {}
        for member, doc in _MEMBER.findall(body):
            ctype = _CTYPE.match(doc or "")
            if not ctype:
                raise ValueError(f"{member}: its /**< comment does not start with a C type: {doc!r}")
            etype = next((e for e in re.findall(r"\b(fq[A-Z]\w*)", doc) if e in enums), None)
            out[name][member] = (" ".join(ctype.group(1).replace("*", " *").split()).replace(" *", "*"), etype)
    return out


def macros(text):
    return {k: int(v) for k, v in _MACRO.findall(text)}


def generate(header, cc=None):
    """Everything the binding needs, as a plain dict (see the module comment)."""
    with open(header, encoding="utf-8") as f:
        text = f.read()
    return {
        "cdef": preprocess(header, cc),
        "macros": macros(text),
        "attribute_types": attribute_types(text),
        "header_sha256": hashlib.sha256(text.encode()).hexdigest(),
    }


def render(data):
    """The source of fusedquant/_cdef.py."""
    import pprint
    return ('"""Generated from include/fusedquant/fusedquant.h by fusedquant/_gen.py when the library was built.\n'
            'Do not edit and do not commit."""\n\nDATA = ' + pprint.pformat(data, width=110, sort_dicts=False) + "\n")


if __name__ == "__main__":  # python _gen.py HEADER [OUT]: the source of _cdef.py to OUT, or to stdout
    source = render(generate(sys.argv[1]))
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w", encoding="utf-8") as f:
            f.write(source)
    else:
        sys.stdout.write(source)
