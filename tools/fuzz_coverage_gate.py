#!/usr/bin/env python3
"""The fuzz coverage gate of tools/fuzz.sh: fails when a function the fuzzer must reach ran not once.

Reads the JSON of `llvm-cov export -format=text` (clang source-based coverage of the fuzz target replaying its
corpus) and checks every function of the quantize, repack and GEMM paths:
  - every function defined in src/host/*.cpp (the host reference: quantize, BLOCK_2D, columnwise, MoE,
    scale repack, grouped GEMM, the dispatch entry);
  - every public entry point (extern "C" fq*) defined in src/api/*.cpp.
A function counts as reached when its entry region ran at least once in any of its instantiations (a template
or an inline function has one record per instantiation; they are merged by file and first line).

    tools/fuzz_coverage_gate.py COVERAGE.json [--root DIR]

Exit status 0 when every such function ran, 1 otherwise (the unreached ones are listed, demangled).
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path


def in_scope(path: Path, name: str, root: Path):
    """Why the function `name` defined in `path` must be reached, or None."""
    try:
        rel = path.resolve().relative_to(root)
    except ValueError:
        return None
    if rel.parent == Path("src/host") and rel.suffix == ".cpp":
        return "host"
    if rel.parent == Path("src/api") and rel.suffix == ".cpp" and name.startswith("fq"):
        return "entry point"
    return None


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
        return out.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return list(names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("export", help="llvm-cov export -format=text output")
    ap.add_argument("--root", default=Path(__file__).resolve().parent.parent, type=Path, help="the repository")
    args = ap.parse_args()
    root = args.root.resolve()
    with open(args.export) as f:
        data = json.load(f)

    # (file, first line) -> [mangled name, scope, highest entry count over the instantiations]
    functions = {}
    for export in data["data"]:
        for fn in export["functions"]:
            if not fn["regions"] or not fn["filenames"]:
                continue
            # A region is [line start, col start, line end, col end, count, file id, expanded file id, kind];
            # the first region of file id 0 is the function's body.
            body = next((r for r in fn["regions"] if r[5] == 0), None)
            if body is None:
                continue
            path = Path(fn["filenames"][0])
            name = fn["name"].split(":", 1)[-1]  # internal-linkage names carry "file.cpp:" in front
            scope = in_scope(path, name, root)
            if scope is None:
                continue
            key = (str(path), body[0])
            entry = functions.setdefault(key, [name, scope, 0])
            entry[2] = max(entry[2], fn["count"], body[4])

    if not functions:
        print("fuzz coverage gate: no function of src/host/*.cpp or src/api/*.cpp in the export (wrong build?)")
        return 1
    unreached = sorted((k, v) for k, v in functions.items() if v[2] == 0)
    hosts = sum(1 for v in functions.values() if v[1] == "host")
    entries = len(functions) - hosts
    if not unreached:
        print(f"fuzz coverage gate: all {hosts} functions of src/host/*.cpp and all {entries} fq* entry points "
              "of src/api/*.cpp ran")
        return 0
    pretty = demangle([v[0] for _, v in unreached])
    print(f"fuzz coverage gate: FAILED: {len(unreached)} of {len(functions)} functions never ran "
          "(add a seed to tests/fuzz/make_corpus.py that reaches them):")
    for ((path, line), v), name in zip(unreached, pretty):
        rel = Path(path).resolve().relative_to(root)
        print(f"  {rel}:{line}  {name}  ({v[1]})")
    return 1


if __name__ == "__main__":
    sys.exit(main())
