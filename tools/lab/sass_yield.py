#!/usr/bin/env python3
"""Lab: rewrites the scheduling hints of the grouped GEMM's promotion FFMAs in a built sm_90a binary.

Each consumer thread promotes a K block with 64 FFMAs (total += acc * scale) between `WARPGROUP.DEPBAR` and the
loop's branch. ptxas marks every other one "reuse operand B, do not yield", so a warp may keep its scheduler for
pairs of FFMAs while the other warpgroup waits to issue its MMAs. This tool clears the hints on some of those
FFMAs (reuse bits 122-125 and the yield bit 109 of the 128-bit instruction: 0 lets the scheduler switch warps),
in place, to measure what the hints cost (docs/perf.md, session 22). The hints only steer scheduling: clearing
them never changes a result, which the lab's bit-exact checks confirm on the patched binary.

  tools/lab/sass_yield.py IN OUT MODE      MODE: all | reused | first-half | stay | none
  (needs cuobjdump on PATH; IN is an executable or cubin with uncompressed sm_90a code, as tools/lab/gemm_lab.sh
  builds it). It prints how many promotions it found: a run of 64 that a branch splits is not one, so compare
  the count with the kernel's (at 7862bf9, one per kernel: 6; the one-pass kernel of 3df769e has two per kernel,
  of which it finds 7).
"""
import re
import subprocess
import sys

YIELD_BIT = 1 << 45                 # bit 109 of the instruction: in the high 64-bit word
REUSE_BITS = 0xF << 58              # bits 122-125
FFMA = re.compile(r"FFMA (R\d+), (R\d+)(?:\.reuse)?, (R\d+)(?:\.reuse)?, (R\d+)(?:\.reuse)?\s*$")
INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);\s*/\* (0x[0-9a-f]{16}) \*/")
WORD = re.compile(r"/\* (0x[0-9a-f]{16}) \*/")


def instructions(path):
    """(function, text, low word, high word) of every sm_90a instruction, in code order."""
    sass = subprocess.run(["cuobjdump", "-sass", path], check=True, capture_output=True, text=True).stdout.split("\n")
    out, fn, i = [], None, 0
    while i < len(sass):
        if "Function :" in sass[i]:
            fn = sass[i].split("Function :")[1].strip()
        m = INSN.search(sass[i])
        if m and i + 1 < len(sass) and WORD.search(sass[i + 1]):
            out.append((fn, m.group(2).strip(), int(m.group(3), 16), int(WORD.search(sass[i + 1]).group(1), 16)))
            i += 2
        else:
            i += 1
    return out


def promotion_blocks(insns):
    """Index ranges [first, last] of each promotion: the accumulate-form FFMAs (d == c) after a
    WARPGROUP.DEPBAR, up to the next branch or MMA; only blocks of 64 (a thread's 64 accumulators)."""
    blocks, cur = [], None
    for i, (fn, text, _, _) in enumerate(insns):
        if "WARPGROUP.DEPBAR" in text:
            cur = []
            continue
        if cur is None:
            continue
        if "BRA " in text or text.startswith("QGMMA"):
            if len(cur) == 64:
                blocks.append(cur)
            cur = None
            continue
        m = FFMA.search(text)
        if m and m.group(1) == m.group(4):
            cur.append(i)
    return blocks


def main():
    src, dst, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    insns = instructions(src)
    blocks = promotion_blocks(insns)
    data = bytearray(open(src, "rb").read())
    enc = lambda i: insns[i][2].to_bytes(8, "little") + insns[i][3].to_bytes(8, "little")
    patched = 0
    for block in blocks:
        first, last = block[0], block[-1]
        region = b"".join(enc(i) for i in range(first, last + 1))
        chosen = {
            "all": block,
            "reused": [i for i in block if insns[i][3] & REUSE_BITS],
            "first-half": [i for i in block[:32] if insns[i][3] & REUSE_BITS],
            "none": [],
            "stay": block,  # the opposite: every promotion FFMA marked "do not yield" (reuse kept)
        }[mode]
        new = bytearray(region)
        for i in chosen:
            off = (i - first) * 16 + 8
            hi = int.from_bytes(new[off:off + 8], "little")
            hi = hi | YIELD_BIT if mode == "stay" else hi & ~(YIELD_BIT | REUSE_BITS)
            new[off:off + 8] = hi.to_bytes(8, "little")
        at = data.find(region)
        while at >= 0:  # identical kernels share the bytes: patch every copy
            data[at:at + len(region)] = new
            patched += len(chosen)
            at = data.find(region, at + len(region))
    open(dst, "wb").write(bytes(data))
    print(f"{len(blocks)} promotion blocks, {patched} FFMAs rewritten ({mode})")


if __name__ == "__main__":
    main()
