#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/fuzz_api.cpp into tests/fuzz/corpus/seed-*.bin: small programs in
the target's format (one opcode byte, then its operands; see the Reader and Fuzz::run() there), each
building a valid problem of one kind and running the queries and fqQuantize on it, plus a few that pass
wrong objects and extreme shapes. Run it again after changing the format; files named crash-* are kept
reproducers of fixed bugs and are not touched."""
import struct
from pathlib import Path

OUT = Path(__file__).resolve().parent / "corpus"

# Opcodes (Fuzz::run): the byte modulo 16.
CREATE_HANDLE, CREATE_DESC, CREATE_LAYOUT, DESTROY, SET_DESC, _, GET_DESC, SET_LAYOUT, GET_LAYOUT, HANDLE_ATTR, \
    VARIANTS, SCALE_QUERIES, SUPPORT, SET_POOL, QUANTIZE, _ = range(16)

# Header values used below.
A = dict(ACTIVATION=0, GATE_LAYOUT=1, GATE_ORDER=2, GATE_BLOCK_WIDTH=3, INTERMEDIATE_ROUNDING=4, SCHEME=5,
         GROUP_SIZE=6, OUTPUT_TYPE=7, SCALE_TYPE=8, SCALE_LAYOUT=9, SCALE_ROUNDING=10, MX_SCALE_RULE=11,
         SCALE_APPLY=12, QMAX=13, MIN_SCALE=14, SWIGLU_ALPHA=15, SWIGLU_BETA=16, SWIGLU_LIMIT=17,
         STATIC_SCALE_POINTER=18, SCALE_UB_POINTER=19, ROW_PROB_POINTER=20, MOE_LAYOUT=21, MOE_NUM_EXPERTS=22,
         OUTPUTS=25, GLOBAL_AMAX_POINTER=30)
BF16, FP16, E4M3FN, E4M3FNUZ, E5M2, INT8, FP4, E8M0 = 2, 1, 3, 4, 5, 6, 7, 8
POINTERS = {18, 19, 20, 23, 24, 28, 29, 30}


def i64(v):
    """Encodes v for Reader::i64()."""
    if 0 <= v <= 8:
        return bytes([0, v])
    if v % 16 == 0 and 0 <= v <= 256:
        return bytes([2, v // 16])
    if 1 <= v <= 2303:
        return bytes([3, (v - 1) & 255, (v - 1) >> 8])
    if -128 <= v < 0:
        return bytes([4, v & 255])
    return bytes([6]) + struct.pack("<q", v)


class Program:
    def __init__(self):
        self.b = bytearray()

    def op(self, code, *parts):
        self.b.append(code)
        for p in parts:
            self.b += p if isinstance(p, (bytes, bytearray)) else bytes([p])
        return self

    def desc(self, slot=0):
        return self.op(CREATE_DESC, slot)

    def set_i32(self, attr, value, slot=0):
        # desc pick, id (not raw), size right, buffer not NULL, small-value branch, i32 (not u32)
        return self.op(SET_DESC, slot, 1, A[attr], 0, 1, 1, 1, i64(value))

    def set_f32(self, attr, value, slot=0):
        return self.op(SET_DESC, slot, 1, A[attr], 0, 1, 0, struct.pack("<f", value))

    def set_ptr(self, attr, which, slot=0):
        """which: 2 = the float pool, 3 = the float pool + 1 byte (misaligned)."""
        extra = [0] if which == 3 else []
        return self.op(SET_DESC, slot, 1, A[attr], 0, 1, which, *extra)

    def layout(self, slot, dtype, rows, cols, pad=0):
        return self.op(CREATE_LAYOUT, slot, 1, dtype, i64(rows), i64(cols), 1, pad)

    def pool(self, index, value):
        return self.op(SET_POOL, index, struct.pack("<f", value))

    def scale_queries(self, rows, cols, which=1):
        """rows, cols: encoded (i64()); then every fqScaleInfo, and info 0 into a NULL value."""
        return self.op(SCALE_QUERIES, 0, rows, cols, 1, which - 1, 1, 0, 0, 0)

    def queries(self, rows, cols, which=1):
        self.scale_queries(i64(rows), i64(cols), which)
        return self.op(SUPPORT, 0, 0, 0, 1, 1, 64, 1, 1)

    def quantize(self, mistake=0, seed=2, in_slot=0, out_slot=1):
        """seed % 4 picks the input values: 0 one pattern, 1 random bits, 2 moderate values, 3 a mix."""
        return self.op(QUANTIZE, 0, 0, in_slot, out_slot, mistake, seed)


def gated(act=1, gate=1, group=128):
    return Program().desc().set_i32("ACTIVATION", act).set_i32("GATE_LAYOUT", gate).set_i32("GROUP_SIZE", group)


def seeds():
    s = {}
    p = gated(group=32).layout(0, BF16, 4, 128).layout(1, E4M3FN, 4, 64)
    s["silu-split-group32"] = p.queries(4, 64).quantize(seed=1).quantize(seed=3)
    p = gated(act=2, gate=2).set_i32("SCHEME", 2).set_i32("OUTPUT_TYPE", INT8).set_ptr("ROW_PROB_POINTER", 2)
    s["gelu-interleaved-per-token-int8-prob"] = p.layout(0, BF16, 5, 96).layout(1, INT8, 5, 48).queries(5, 48).quantize()
    p = Program().desc().set_i32("SCHEME", 0).set_i32("OUTPUT_TYPE", E4M3FNUZ).set_ptr("STATIC_SCALE_POINTER", 2).pool(0, 0.125)
    s["identity-per-tensor-static"] = p.layout(0, FP16, 3, 40, pad=8).layout(1, E4M3FNUZ, 3, 40).queries(3, 40).quantize()
    p = gated(act=6, gate=3).set_i32("GATE_BLOCK_WIDTH", 32).set_i32("SCHEME", 1).set_i32("OUTPUT_TYPE", E5M2)
    p.set_f32("SWIGLU_LIMIT", float("inf"))
    s["swiglu-block-interleaved-per-tensor-dynamic"] = p.layout(0, BF16, 2, 128).layout(1, E5M2, 2, 64).queries(2, 64).quantize()
    p = gated(act=5, group=64).set_i32("SCALE_TYPE", E8M0).set_i32("SCALE_ROUNDING", 1).set_i32("SCALE_LAYOUT", 2)
    s["relu2-e8m0-tma"] = p.layout(0, BF16, 7, 384).layout(1, E4M3FN, 7, 192).queries(7, 192).quantize()
    p = gated(act=3).set_i32("INTERMEDIATE_ROUNDING", 2).set_i32("SCALE_APPLY", 1).set_ptr("SCALE_UB_POINTER", 2)
    p.pool(0, 0.01).set_f32("MIN_SCALE", 1e-6)
    s["gelu-tanh-round-both-ub"] = p.layout(0, BF16, 3, 200).layout(1, E4M3FN, 3, 100).queries(3, 100).quantize()
    p = Program().desc().set_i32("SCHEME", 5).set_i32("SCALE_TYPE", E8M0).set_i32("SCALE_LAYOUT", 3)
    s["mxfp8-swizzled"] = p.layout(0, BF16, 3, 64).layout(1, E4M3FN, 3, 64).queries(3, 64).quantize()
    p = Program().desc().set_i32("SCHEME", 7).set_i32("OUTPUT_TYPE", FP4).set_i32("SCALE_TYPE", E4M3FN)
    s["nvfp4"] = p.layout(0, BF16, 2, 64).layout(1, FP4, 2, 64).queries(2, 64).quantize()
    p = Program().desc().set_i32("SCHEME", 6).set_i32("OUTPUT_TYPE", FP4).set_i32("SCALE_TYPE", E8M0)
    p.set_i32("MX_SCALE_RULE", 1).set_i32("SCALE_LAYOUT", 4)
    s["mxfp4-floor-packed"] = p.layout(0, BF16, 5, 96).layout(1, FP4, 5, 96).queries(5, 96).quantize()
    # Wrong objects: destroy the descriptor and a layout, then use them; a misaligned float pointer.
    p = gated(group=32).layout(0, BF16, 4, 128).layout(1, E4M3FN, 4, 64).set_ptr("ROW_PROB_POINTER", 3).quantize()
    p.op(DESTROY, 1, 0, 2).op(DESTROY, 2, 1, 3).quantize().op(GET_DESC, 7, 1, 3, 0, 3)
    s["destroyed-and-misaligned"] = p
    # Extreme shapes through the queries and layouts.
    p = Program().desc().set_i32("SCALE_LAYOUT", 2)
    p.scale_queries(bytes([5, 19]), bytes([5, 19])).scale_queries(bytes([5, 25]), bytes([5, 14]))
    p.op(CREATE_LAYOUT, 2, 1, BF16, 5, 19, i64(1), 0, 5, 20).op(SET_LAYOUT, 0, 1, 1, 0, 5, 19, 1)
    s["extreme-shapes"] = p.op(SUPPORT, 0, 0, 2, 2, 1, 16, 1, 1)
    # Handle attributes: PDL, pinning the variant (and one past it), and the variant listing.
    p = Program().op(HANDLE_ATTR, 0, 1, 4, 0, 0, 1, 1, 1).op(HANDLE_ATTR, 0, 1, 5, 0, 0, 0, 1, 1)
    p.op(HANDLE_ATTR, 0, 1, 5, 0, 0, 1, 1, 1).op(VARIANTS, 0, 1, 1, 1, 1, 64, 1, 0, 0)
    s["handle-attributes"] = p.op(CREATE_HANDLE, 1, 1, 0, 0).op(CREATE_HANDLE, 1, 0, 0, 1, 0, 0)
    # Mistakes on a valid problem: misaligned input, short scales, NULL input, NULL scales.
    for m in (4, 5, 6, 7):
        p = gated(group=32).layout(0, BF16, 4, 128).layout(1, E4M3FN, 4, 64)
        s[f"mistake-{m}"] = p.quantize(mistake=m, seed=m)
    return s


def main():
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("seed-*.bin"):
        old.unlink()
    for name, prog in seeds().items():
        (OUT / f"seed-{name}.bin").write_bytes(bytes(prog.b))
    print(f"{len(seeds())} seeds in {OUT}")


if __name__ == "__main__":
    main()
