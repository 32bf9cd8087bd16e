#!/usr/bin/env python3
"""The values the public header freezes, as a table checked against abi/values.txt (docs/abi.md).

A built program keeps the numbers it was compiled with: enum constants (status codes, data types, schemes,
layouts, FQ_SCALE_INFO ids, ...), attribute ids with the C type and size of their buffer, and the public
macros. The table is generated from include/fusedquant/fusedquant.h by the compiler, not by parsing text:
  - the names come from clang's JSON AST (`clang -Xclang -ast-dump=json`): every enumeration with an FQ_
    constant, and for the *Attribute enumerations the C type the constant's doc comment starts with
    ("int32_t fqActivation, ...", "const float*: ...");
  - the object-like macros defined by the header come from the preprocessor (`clang -dM -E`, minus the
    compiler's own);
  - every value, and the size of every stated type, is printed by a C program compiled against the header.
One line per entry, tab-separated: kind, scope, name, value, and for attributes the C type and its size in
bytes; kind is enum, attribute, macro or version.

    tools/abi_values.py              check: every entry of abi/values.txt still has its value (and type and
                                     size); fails when one changed or disappeared, or the header has entries
                                     the table lacks
    tools/abi_values.py --update     the same check, then append the header's new entries to the table (the
                                     only way it grows); the version macros are rewritten in place
    tools/abi_values.py --new-major  a new major version: write the table afresh
    tools/abi_values.py --print      print the header's table

The version macros (FQ_VERSION_MINOR, _PATCH, _NUMBER) change with every release: their lines must exist, their
values are not frozen. FQ_VERSION_MAJOR is, within a major version.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = ROOT / "include" / "fusedquant" / "fusedquant.h"
TABLE = ROOT / "abi" / "values.txt"
RELEASE_MACROS = {"FQ_VERSION_MINOR", "FQ_VERSION_PATCH", "FQ_VERSION_NUMBER"}
# FQ_API marks exported functions; its expansion depends on the compiler, it is no value.
NOT_VALUES = {"FQ_API"}
# The C type an attribute's doc comment starts with.
STATED_TYPE = re.compile(r"\s*((?:const\s+)?(?:u?int(?:8|16|32|64)_t|float|double|void|char|size_t)(?:\s*\*)*)")
CLANG = os.environ.get("FQ_CLANG", "clang")
# The experimental section (docs/abi.md) is read too: its values are frozen in the table like the others.
EXPERIMENTAL = "-DFQ_EXPERIMENTAL_API"


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"abi-values: {' '.join(cmd)} failed:\n{done.stderr}")
    return done.stdout


def comment_text(node):
    """The text of an enum constant's doc comment (the FullComment inside its AST node), or ''."""
    out = []

    def walk(n):
        if n.get("kind") == "TextComment":
            out.append(n.get("text", ""))
        for c in n.get("inner", []):
            walk(c)

    for c in node.get("inner", []):
        if c.get("kind") == "FullComment":
            walk(c)
    return " ".join(out)


def header_entries(header):
    """[(kind, scope, name, C expression of the value, stated type or None)] in header order."""
    ast = json.loads(run([CLANG, "-x", "c", "-std=c99", EXPERIMENTAL, "-Xclang", "-ast-dump=json", "-fsyntax-only",
                          "-fparse-all-comments", str(header)]))
    entries = []
    for decl in ast.get("inner", []):
        if decl.get("kind") != "EnumDecl":
            continue
        constants = [c for c in decl.get("inner", []) if c.get("kind") == "EnumConstantDecl"]
        if not any(c["name"].startswith("FQ_") for c in constants):
            continue
        scope = decl.get("name") or "(anonymous)"
        attribute = scope.endswith("Attribute")
        for c in constants:
            stated = None
            if attribute:
                m = STATED_TYPE.match(comment_text(c))
                stated = re.sub(r"\s*\*", "*", m.group(1)) if m else None
            entries.append(("attribute" if attribute else "enum", scope, c["name"], c["name"], stated))

    # Object-like macros defined in the header itself: the preprocessor's output with the definitions kept in
    # place (-dD) and line markers saying which file each comes from.
    in_header = False
    for line in run([CLANG, "-x", "c", "-std=c99", EXPERIMENTAL, "-dD", "-E", str(header)]).splitlines():
        marker = re.match(r'# \d+ "(.*)"', line)
        if marker:
            in_header = Path(marker.group(1)).resolve() == header.resolve()
            continue
        m = re.match(r"#define (\w+)(\(?)\s*(.*)", line) if in_header else None
        if not m or m.group(2) or not m.group(3) or m.group(1) in NOT_VALUES:
            continue  # function-like, empty (the include guard), or not a value
        name = m.group(1)
        entries.append(("version" if name in RELEASE_MACROS else "macro", "-", name, name, None))
    return entries


def evaluate(header, entries):
    """Each entry as a table line, with the value (and the stated type's size) printed by a compiled program."""
    lines = ["#include <stdio.h>", f'#include "{header}"', "int main(void) {"]
    for _, _, _, expr, stated in entries:
        lines.append(f'    printf("%lld\\n", (long long)({expr}));')
        if stated:
            lines.append(f'    printf("%zu\\n", sizeof({stated}));')
    lines += ["    return 0;", "}"]
    cc = shlex.split(os.environ.get("CC", "cc"))
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "values.c", Path(tmp) / "values"
        src.write_text("\n".join(lines) + "\n")
        run(cc + ["-std=c99", EXPERIMENTAL, "-Wall", "-Werror", "-o", str(exe), str(src)])
        values = iter(run([str(exe)]).split())
    table = []
    for kind, scope, name, _, stated in entries:
        row = [kind, scope, name, next(values)]
        if kind == "attribute":
            row += [stated, next(values)] if stated else ["-", "-"]
        table.append("\t".join(row))
    return table


def read_table(path):
    return [l for l in path.read_text().splitlines() if l.strip() and not l.startswith("#")]


def fields(line):
    return line.split("\t")


def key(line):
    return fields(line)[2]


def write_table(path, rows):
    head = ["# The values include/fusedquant/fusedquant.h freezes (docs/abi.md). Generated by tools/abi_values.py;",
            "# entries are only ever appended (tools/abi_values.py --update). Tab-separated columns: kind, scope, name,",
            "# value, and for attributes the C type of the buffer and its size in bytes (- where the header states none)."]
    path.write_text("\n".join(head + rows) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--update", action="store_true")
    mode.add_argument("--new-major", action="store_true")
    mode.add_argument("--print", action="store_true")
    ap.add_argument("--header", type=Path, default=HEADER)
    ap.add_argument("--table", type=Path, default=TABLE)
    args = ap.parse_args()

    now = evaluate(args.header.resolve(), header_entries(args.header))
    if args.print:
        print("\n".join(now))
        return 0
    if args.new_major or not args.table.exists():
        if not args.new_major:
            print(f"abi-values: no table {args.table} (tools/abi_values.py --new-major writes it)")
            return 1
        write_table(args.table, now)
        print(f"abi-values: wrote {len(now)} entries to {args.table} (new major version)")
        return 0

    stored = read_table(args.table)
    current = {key(l): l for l in now}
    recorded = {key(l) for l in stored}
    changed, removed, release = [], [], []
    for line in stored:
        name = key(line)
        if name not in current:
            removed.append(line)
        elif current[name] != line:
            (release if fields(line)[0] == "version" else changed).append((line, current[name]))
    new = [l for l in now if key(l) not in recorded]
    for line in removed:
        print(f"abi-values: REMOVED  {line}")
    for old, cur in changed:
        print(f"abi-values: CHANGED  {old}  ->  {cur}")
    if removed or changed:
        print(f"abi-values: INCOMPATIBLE with {args.table.relative_to(ROOT)}: {len(removed)} removed, {len(changed)} "
              "changed. A built program keeps the old numbers: restore them, and give a new meaning a new value.")
        return 1
    if args.update:
        rows = [current[key(l)] if fields(l)[0] == "version" else l for l in stored] + new
        write_table(args.table, rows)
        print(f"abi-values: {len(new)} new entries appended to {args.table.relative_to(ROOT)}"
              + (f", {len(release)} version macros updated" if release else "") + "; commit it with the header")
        return 0
    if new:
        for line in new:
            print(f"abi-values: NEW      {line}")
        print(f"abi-values: {len(new)} header entries are not in {args.table.relative_to(ROOT)}: "
              "'tools/abi_values.py --update' appends them (commit the table with the header)")
        return 1
    print(f"abi-values: all {len(stored)} entries of {args.table.relative_to(ROOT)} hold"
          + (f" ({len(release)} version macros differ: a release; --update records them)" if release else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
