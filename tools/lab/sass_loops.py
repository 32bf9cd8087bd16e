#!/usr/bin/env python3
"""The grouped GEMM's two hot loops in two builds, compared without a GPU.

For each kernel instantiation (Pairing P, split K or not) of two cubins of src/kernels/gemm/grouped_gemm_sm90.cu,
finds the producer's K loop (the innermost backward branch whose body holds a UTMALDG) and the consumers' K loop
(... a QGMMA), normalizes register and constant names, and says whether the two builds' loops are the same
instruction for instruction. A lab flag whose code lies outside those loops should leave them the same: ptxas
rebuilding them (spilled or rematerialized invariants) cost 10-27% in earlier sessions (docs/perf.md).

  nvcc ... -cubin src/kernels/gemm/grouped_gemm_sm90.cu -o a.cubin            (the base)
  nvcc ... -DFQ_LAB_X -cubin src/kernels/gemm/grouped_gemm_sm90.cu -o b.cubin  (the candidate)
  tools/lab/sass_loops.py a.cubin b.cubin [--diff]

cuobjdump comes from CUOBJDUMP or PATH.
"""
import difflib
import os
import re
import subprocess
import sys

CUOBJDUMP = os.environ.get("CUOBJDUMP", "cuobjdump")


def kernels(cubin):
    """{'PairingE<p>ELb<split>ELb<segments>': [(address, instruction), ...]} of the cubin's grouped GEMM kernels
    (a build from before the segments parameter names its kernels without it: they are the tiles' ones, ELb0)."""
    out = subprocess.run([CUOBJDUMP, "-sass", cubin], capture_output=True, text=True, check=True).stdout
    found, current = {}, None
    for line in out.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = re.search(r"PairingE\d(?:ELb\d)+", m.group(1))
            current = name.group(0) if name else None
            if current and current.count("ELb") == 1:
                current += "ELb0"
            if current:
                found[current] = []
            continue
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m and current:
            found[current].append((int(m.group(1), 16), m.group(2).strip()))
    return found


def normalized(instruction):
    instruction = re.sub(r"\bU?R[0-9]+\b", "R", instruction)
    instruction = re.sub(r"\bU?P[0-9]\b", "P", instruction)
    instruction = re.sub(r"0x[0-9a-f]+", "X", instruction)
    return re.sub(r"\s+", " ", instruction)


def innermost_loop(code, opcode):
    """The shortest body [target, branch] of a backward BRA that holds `opcode`, normalized."""
    best = None
    for address, text in code:
        if "BRA" not in text.split(" ")[0] and " BRA " not in text:
            continue
        m = re.search(r"(0x[0-9a-f]+)\s*$", text)
        if not m or int(m.group(1), 16) >= address:
            continue
        body = [t for a, t in code if int(m.group(1), 16) <= a <= address]
        if any(opcode in t for t in body) and (best is None or len(body) < len(best)):
            best = body
    return [normalized(t) for t in best or []]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    base, candidate = kernels(sys.argv[1]), kernels(sys.argv[2])
    for name in sorted(base):
        for role, opcode in (("producer", "UTMALDG"), ("consumers", "QGMMA")):
            a, b = innermost_loop(base[name], opcode), innermost_loop(candidate.get(name, []), opcode)
            print(f"{name} {role} loop: {len(a)} -> {len(b)} instructions, {'same' if a == b else 'DIFFERENT'}")
            if a != b and "--diff" in sys.argv:
                for line in difflib.unified_diff(a, b, lineterm="", n=0):
                    print("    " + line)


if __name__ == "__main__":
    main()
