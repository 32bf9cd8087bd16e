#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/fuzz_api.cpp into tests/fuzz/corpus/seed-*.bin: small programs in
the target's format (one opcode byte, then its operands; see the Reader and Fuzz::run() there), each
building a valid problem of one kind and running the queries and fqQuantize on it (rowwise, columnwise, both,
under MoE layouts), scale repacks between layouts with and without MoE row offsets, plus a few that pass
wrong objects, wrong buffers and extreme shapes. Run it again after changing the format; files named crash-* are kept
reproducers of fixed bugs and are not touched."""
import struct
from pathlib import Path

OUT = Path(__file__).resolve().parent / "corpus"

# Opcodes (Fuzz::run): the byte modulo 16, except 0xFF (fqGroupedGemm).
CREATE_HANDLE, CREATE_DESC, CREATE_LAYOUT, DESTROY, SET_DESC, _, GET_DESC, SET_LAYOUT, GET_LAYOUT, HANDLE_ATTR, \
    VARIANTS, SCALE_QUERIES, SUPPORT, SET_POOL, QUANTIZE, REPACK = range(16)
GEMM = 0xFF
THREADS = 0xFE  # Fuzz::threads: handle, desc, input and output layout slots, then the second thread's mode
ONE_CALL = 0xFD  # Fuzz::one_call: handle, activation + 1, gate + 1, scheme + 1, input type, output type, layout + 1,
                 # rows, cols (i64), the input's seed

# Header values used below.
A = dict(ACTIVATION=0, GATE_LAYOUT=1, GATE_ORDER=2, GATE_BLOCK_WIDTH=3, INTERMEDIATE_ROUNDING=4, SCHEME=5,
         GROUP_SIZE=6, OUTPUT_TYPE=7, SCALE_TYPE=8, SCALE_LAYOUT=9, SCALE_ROUNDING=10, MX_SCALE_RULE=11,
         SCALE_APPLY=12, QMAX=13, MIN_SCALE=14, SWIGLU_ALPHA=15, SWIGLU_BETA=16, SWIGLU_LIMIT=17,
         STATIC_SCALE_POINTER=18, SCALE_UB_POINTER=19, ROW_PROB_POINTER=20, MOE_LAYOUT=21, MOE_NUM_EXPERTS=22,
         MOE_OFFSETS_POINTER=23, MOE_COUNTS_POINTER=24, OUTPUTS=25, COLUMNWISE_BLOCK=26, COLUMNWISE_TRANSPOSE=27,
         GLOBAL_AMAX_POINTER=30)
BF16, FP16, E4M3FN, E4M3FNUZ, E5M2, INT8, FP4, E8M0 = 2, 1, 3, 4, 5, 6, 7, 8
POINTERS = {18, 19, 20, 23, 24, 28, 29, 30}
ROWWISE, COLUMNWISE = 1, 2
ROW_MAJOR, COL_MAJOR, COL_MAJOR_TMA, SWIZZLED, PACKED = range(5)
FP32 = 0
REPACK_TYPE = {FP32: 0, E8M0: 1, E4M3FN: 2}  # Fuzz::scale_repack's type byte
BLOCKS, STACKED_TO_BLOCKS, BLOCKS_TO_STACKED = range(3)


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
        """which: 2 = the float pool, 3 = the float pool + 1 byte (misaligned), 4 = the int32 pool."""
        extra = [0] if which == 3 else []
        return self.op(SET_DESC, slot, 1, A[attr], 0, 1, which, *extra)

    def layout(self, slot, dtype, rows, cols, pad=0):
        return self.op(CREATE_LAYOUT, slot, 1, dtype, i64(rows), i64(cols), 1, pad)

    def pool(self, index, value):
        return self.op(SET_POOL, index, struct.pack("<f", value))

    def pool_i32(self, index, value):
        return self.op(SET_POOL, 16 + index, struct.pack("<i", value))

    def scale_queries(self, rows, cols, which=1):
        """rows, cols: encoded (i64()); then every fqScaleInfo, and info 0 into a NULL value."""
        return self.op(SCALE_QUERIES, 0, rows, cols, 1, which - 1, 1, 0, 0, 0)

    def queries(self, rows, cols, which=1):
        self.scale_queries(i64(rows), i64(cols), which)
        return self.op(SUPPORT, 0, 0, 0, 1, 1, 64, 1, 1)

    def quantize(self, mistake=0, seed=2, in_slot=0, out_slot=1, col=None, extra=()):
        """seed % 4 picks the input values: 0 one pattern, 1 random bits, 2 moderate values, 3 a mix. col: the
        columnwise buffers' mode (read only when the descriptor asks for columnwise output): 0 both buffers,
        5 NULL values, 6 NULL scales, (7, shift) scales misaligned by shift bytes. extra: the mistake's operand."""
        p = self.op(QUANTIZE, 0, 0, in_slot, out_slot, mistake, seed)
        if col is not None:
            p.op(*(col if isinstance(col, tuple) else (col,)))
            if isinstance(col, tuple):
                p.b[-1] -= 1  # 1 + byte % 3
        return p.op(*extra) if extra else p

    def repack(self, stype, batch, rows, groups, batching, src, dst, omode=0, offsets=(), shift=1, stacked=(3,),
               mistake=0, seed=1, extra=()):
        """Fuzz::scale_repack. omode: 0 NULL offsets, 1-3 non-decreasing (offsets[0] in 0..3, then steps of
        0..255), 4 any int32, 5 small signed, 6 non-decreasing at a misaligned address (`shift` 1..3).
        stacked: (0,) what the offsets cover, (1, d) that + d % 5 - 2, (2, i64 bytes) any, (3,) 0."""
        b = bytearray([0, REPACK_TYPE[stype]])
        b += bytes([batch]) if 0 <= batch < 9 else bytes([0xF0]) + i64(batch)
        b += i64(rows)
        b += bytes([groups]) if 0 <= groups < 13 else bytes([0xF0]) + i64(groups)
        b += bytes([batching, src, dst, omode])
        if omode == 6:
            b.append(shift - 1)
        for i, v in enumerate(offsets):
            if omode == 4:
                b += i64(v)
            elif omode == 5:
                b.append(v & 255)
            else:  # offsets[0], then the steps
                b.append(v if i == 0 else v - offsets[i - 1])
        for part in stacked:
            b += part if isinstance(part, (bytes, bytearray)) else bytes([part])
        b += bytes([mistake, seed]) + bytes(extra)
        return self.op(REPACK, b)


def gemm(p, groups=1, m=40, n=128, k=200, pad=0, gmode=4, a_layout=5, quantize=2, flags=0x1F, omode=0, mistake=0, col=0,
         seed=7, out_pad=0, out_type=None):
    """Fuzz::grouped_gemm with the handle and epilogue slot 0: groups 1..4, m < 49, n even <= 128, k 1..256; gmode
    0: NUM_GROUPS E + 1, 1: 0, 2: -1, else E; a_layout 0: raw (not used here), 1-3 COL_MAJOR, else COL_MAJOR_TMA;
    quantize byte 0-1: 0, 2-3: 1; flags: 1 offsets, 2 counts, 4 alpha, 8 C, 16 D, 32 prob, 64 output width wrong,
    128 output type from the byte out_type; omode 3: raw offsets; mistake 6-11 (see there); col: columnwise mode."""
    b = bytearray([0, 0, groups - 1, m, n // 2 - 1, (k - 1) & 255, (k - 1) >> 8, pad, gmode, a_layout, quantize, 1,
                   flags | (0x80 if out_type is not None else 0), omode, mistake, col, seed])
    if out_type is not None:
        b.append(out_type)
    b.append(out_pad)
    return p.op(GEMM, b)


def gated(act=1, gate=1, group=None):
    """GROUP_SIZE only when given: other schemes than PER_GROUP refuse one (docs/spec.md §3.4); PER_GROUP's default is 128."""
    p = Program().desc().set_i32("ACTIVATION", act).set_i32("GATE_LAYOUT", gate)
    return p.set_i32("GROUP_SIZE", group) if group is not None else p


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

    # Columnwise output: MXFP8 alone; rowwise + columnwise per-group 128 transposed (COL_MAJOR_TMA scales);
    # NVFP4 both, transposed, swizzled; under MASKED and CONTIGUOUS MoE layouts; columnwise mistakes.
    p = Program().desc().set_i32("SCHEME", 5).set_i32("SCALE_TYPE", E8M0).set_i32("OUTPUTS", COLUMNWISE)
    s["columnwise-mxfp8"] = p.layout(0, BF16, 64, 64).layout(1, E4M3FN, 64, 64).queries(64, 64, which=2).quantize(col=0)
    p = gated(group=128).set_i32("OUTPUTS", ROWWISE | COLUMNWISE).set_i32("COLUMNWISE_BLOCK", 128)
    p.set_i32("COLUMNWISE_TRANSPOSE", 1).set_i32("SCALE_LAYOUT", COL_MAJOR_TMA)
    p.layout(0, BF16, 40, 256).layout(1, E4M3FN, 40, 128, pad=16).queries(40, 128, which=2)
    s["both-group128-transposed-tma"] = p.quantize(seed=3, col=0)
    p = Program().desc().set_i32("SCHEME", 7).set_i32("OUTPUT_TYPE", FP4).set_i32("SCALE_TYPE", E4M3FN)
    p.set_i32("SCALE_LAYOUT", SWIZZLED).set_i32("OUTPUTS", ROWWISE | COLUMNWISE).set_i32("COLUMNWISE_TRANSPOSE", 1)
    s["nvfp4-both-transposed-swizzled"] = p.layout(0, BF16, 32, 64).layout(1, FP4, 32, 64).quantize(seed=1, col=0)
    p = gated(act=1).set_i32("SCHEME", 6).set_i32("OUTPUT_TYPE", FP4).set_i32("SCALE_TYPE", E8M0)
    p.set_i32("SCALE_LAYOUT", PACKED).set_i32("OUTPUTS", ROWWISE | COLUMNWISE).set_i32("COLUMNWISE_TRANSPOSE", 1)
    p.set_i32("MOE_LAYOUT", 2).set_i32("MOE_NUM_EXPERTS", 2).set_ptr("MOE_COUNTS_POINTER", 4)
    p.pool_i32(0, 40).pool_i32(1, 7)
    s["mxfp4-both-masked-moe-packed"] = p.layout(0, BF16, 96, 128).layout(1, FP4, 96, 64).quantize(seed=2, col=0)
    p = Program().desc().set_i32("SCHEME", 2).set_i32("OUTPUT_TYPE", INT8).set_i32("OUTPUTS", COLUMNWISE)
    p.set_i32("MOE_LAYOUT", 1).set_i32("MOE_NUM_EXPERTS", 3).set_ptr("MOE_OFFSETS_POINTER", 4).set_ptr("ROW_PROB_POINTER", 2)
    p.pool_i32(0, 0).pool_i32(1, 5).pool_i32(2, 5).pool_i32(3, 33)
    s["per-token-columnwise-contiguous-moe"] = p.layout(0, BF16, 40, 96).layout(1, INT8, 40, 96).quantize(seed=3, col=0)
    # Columnwise only: wrong rowwise buffers are unused, so accepted.
    p = Program().desc().set_i32("SCHEME", 1).set_i32("OUTPUT_TYPE", E5M2).set_i32("OUTPUTS", COLUMNWISE)
    p.layout(0, FP16, 8, 64).layout(1, E5M2, 8, 64).quantize(mistake=7, col=0).quantize(mistake=5, col=0, extra=(2,))
    s["per-tensor-dynamic-columnwise-only-rowwise-mistakes"] = p
    # NULL columnwise values, NULL columnwise scales, misaligned fp32 columnwise scales: refused.
    p = gated(group=32).set_i32("OUTPUTS", ROWWISE | COLUMNWISE).layout(0, BF16, 33, 128).layout(1, E4M3FN, 33, 64)
    s["columnwise-null-and-misaligned"] = p.quantize(col=5).quantize(col=6).quantize(col=(7, 2)).quantize(col=0)

    # Scale repack: blocks between layouts, stacked MoE scales to blocks and back with good and garbage
    # offsets, mistakes (short dst / src, NULL, overlap, misaligned), shapes past 64 bits.
    p = Program().repack(FP32, 3, 5, 3, BLOCKS, ROW_MAJOR, COL_MAJOR_TMA)
    s["repack-blocks-fp32-row-major-to-tma"] = p.repack(FP32, 2, 130, 9, BLOCKS, COL_MAJOR, ROW_MAJOR, seed=2)
    p = Program().repack(E8M0, 4, 128, 6, STACKED_TO_BLOCKS, ROW_MAJOR, SWIZZLED, omode=1, offsets=(0, 37, 37, 165, 170), stacked=(0,))
    s["repack-stacked-to-swizzled-e8m0"] = p.repack(E8M0, 4, 128, 6, BLOCKS_TO_STACKED, SWIZZLED, PACKED, omode=2,
                                                    offsets=(0, 37, 37, 165, 170), stacked=(1, 4), seed=3)
    p = Program().repack(E8M0, 3, 6, 5, BLOCKS_TO_STACKED, PACKED, ROW_MAJOR, omode=4, offsets=(5, -7, 2**31 - 1, -2**31),
                         stacked=(2, i64(10)))
    s["repack-garbage-offsets"] = p.repack(E4M3FN, 3, 6, 5, STACKED_TO_BLOCKS, COL_MAJOR, SWIZZLED, omode=5,
                                           offsets=(3, 3, 3, -3), stacked=(2, i64(10)))
    s["repack-nvfp4-swizzled-to-col-major"] = Program().repack(E4M3FN, 2, 130, 9, BLOCKS, SWIZZLED, COL_MAJOR, seed=4)
    p = Program()
    for m, extra in ((4, (3,)), (5, (1,)), (6, (0,)), (6, (1,)), (6, (2, 8)), (7, (1,)), (7, (6,))):
        p.repack(FP32, 2, 17, 4, BLOCKS, ROW_MAJOR, COL_MAJOR, mistake=m, seed=m, extra=extra)
    p.repack(E8M0, 2, 17, 4, BLOCKS, PACKED, SWIZZLED, mistake=7, extra=(5,))
    p.repack(E8M0, 2, 9, 4, STACKED_TO_BLOCKS, ROW_MAJOR, SWIZZLED, omode=6, offsets=(0, 4, 9), shift=2, stacked=(0,))
    s["repack-mistakes"] = p.repack(E8M0, 2, 9, 4, BLOCKS, ROW_MAJOR, SWIZZLED, omode=1, offsets=(0, 4, 9))
    p = gated(act=6).set_ptr("SCALE_UB_POINTER", 2).pool(0, 1.0)
    gemm(p, groups=3, m=45, n=128, k=200)
    gemm(p, groups=1, m=17, n=64, k=130, flags=0x0F, seed=9)
    s["gemm-swiglu-three-groups"] = gemm(p, groups=4, m=48, n=96, k=256, pad=1, a_layout=1, flags=0x3F, omode=3, seed=11)
    p = gated(group=64).set_i32("OUTPUTS", ROWWISE | COLUMNWISE).set_i32("COLUMNWISE_BLOCK", 32)
    gemm(p, groups=2, m=40, n=128, k=100, col=0)
    s["gemm-both-columnwise"] = gemm(p, groups=2, m=40, n=128, k=100, col=7, seed=3)
    p = gated(gate=2).set_i32("OUTPUT_TYPE", INT8)
    for m in range(6, 12):
        gemm(p, groups=2, m=33, n=64, k=64, mistake=m, seed=m)
    gemm(p, gmode=0).op(GEMM, bytearray([0, 0, 1, 20, 31, 63, 0, 0, 1, 4, 2, 1, 0x9F, 0, 0, 0, 5, INT8, 0]))
    s["gemm-mistakes-and-wrong-groups"] = gemm(p, groups=2, gmode=2, quantize=0, flags=0x48)
    p = Program().repack(E8M0, 2**40, 2**62, 6, BLOCKS, ROW_MAJOR, SWIZZLED, seed=31)
    p.repack(FP32, 1, 2**62, 2**62, BLOCKS, COL_MAJOR_TMA, ROW_MAJOR, seed=1)
    s["repack-extreme-shapes"] = p.repack(E8M0, 3, 0, 1, BLOCKS_TO_STACKED, ROW_MAJOR, PACKED, omode=1,
                                          offsets=(0, 1, 2, 3), stacked=(2, i64(2**62)), seed=2)
    s.update(matrix())
    p = gated(group=32).layout(0, BF16, 8, 128).layout(1, E4M3FN, 8, 64)
    s["threads-shared-handle"] = p.op(THREADS, 0, 0, 0, 1, 1).op(THREADS, 0, 0, 0, 1, 0)
    # The one-call entry points (fqGetScaleBufferSizeSimple, fqQuantizeSimple, fqQuantizeDLPack): SiLU per-group
    # row-major, plain MXFP8 swizzled on fp16, NVFP4 interleaved, then refusals (unknown scheme, an input type that
    # is no input, a shape whose scale count overflows).
    def one_call(p, act, gate, scheme, in_type, out_type, layout, rows, cols, seed=0):
        return p.op(ONE_CALL, 0, act + 1, gate + 1, scheme + 1, in_type, out_type, layout + 1, i64(rows), i64(cols), seed)
    p = one_call(Program(), 1, 1, 3, BF16, E4M3FN, ROW_MAJOR, 4, 256, seed=1)
    p = one_call(p, 0, 0, 5, FP16, E4M3FN, SWIZZLED, 3, 64, seed=2)
    p = one_call(p, 1, 2, 7, BF16, FP4, SWIZZLED, 2, 64, seed=3)
    p = one_call(p, 1, 1, -1, BF16, E4M3FN, ROW_MAJOR, 4, 256)
    p = one_call(p, 1, 1, 3, E4M3FN, E4M3FN, ROW_MAJOR, 4, 256)
    s["one-call-simple-and-dlpack"] = one_call(p, 1, 1, 3, BF16, E4M3FN, ROW_MAJOR, 2**62, 2**62)
    return s


SCHEMES = ["per-tensor-static", "per-tensor-dynamic", "per-token", "per-group", "block2d", "mxfp8", "mxfp4", "nvfp4"]
LAYOUTS = ["row-major", "col-major", "col-major-tma", "swizzled", "packed"]
OUTPUTS = {ROWWISE: "rowwise", COLUMNWISE: "columnwise", ROWWISE | COLUMNWISE: "both"}
MOE = ["no-moe", "contiguous", "masked"]


def matrix():
    """One seed for every scheme x scale layout x outputs x MoE layout: a problem valid wherever the library
    runs that combination (the scheme's own output and scale types; E8M0 with POW2_CEIL for fp32-scale schemes
    in the byte-scale layouts), refused with its reason otherwise (a per-tensor scale in a non-row-major
    layout, BLOCK_2D with columnwise outputs or MoE, NVFP4 in PACKED_UE8M0). The activation, gate layout and
    columnwise transposition vary with the seed's index, so the matrix also spreads over those."""
    s = {}
    experts, rows, cols = 2, 40, 64
    index = 0
    for scheme, scheme_name in enumerate(SCHEMES):
        block2d = scheme == 4
        for layout, layout_name in enumerate(LAYOUTS):
            for outputs, outputs_name in OUTPUTS.items():
                for moe, moe_name in enumerate(MOE):
                    index += 1
                    r, c = (136, 160) if block2d else (rows, cols)  # BLOCK_2D: a full and a partial tile
                    act, gate = index % 7, index % 4
                    if act == 6 and gate == 0:
                        gate = 1  # SwiGLU-OAI is gated only
                    p = Program().desc().set_i32("ACTIVATION", act).set_i32("GATE_LAYOUT", gate).set_i32("SCHEME", scheme)
                    out_type = {5: E4M3FN, 6: FP4, 7: FP4}.get(scheme, (E4M3FN, E5M2, INT8, E4M3FNUZ)[index % 4])
                    p.set_i32("OUTPUT_TYPE", out_type)
                    if scheme in (5, 6):
                        p.set_i32("SCALE_TYPE", E8M0)
                    elif scheme == 7:
                        p.set_i32("SCALE_TYPE", E4M3FN)
                    elif layout in (SWIZZLED, PACKED):
                        p.set_i32("SCALE_TYPE", E8M0).set_i32("SCALE_ROUNDING", 1)
                    if scheme == 3:
                        p.set_i32("GROUP_SIZE", (32, 64, 128)[index % 3])
                    p.set_i32("SCALE_LAYOUT", layout).set_i32("OUTPUTS", outputs)
                    if outputs & COLUMNWISE:
                        if scheme in (2, 3, 4) and index % 2:  # the fp32 block schemes take 32 or 128
                            p.set_i32("COLUMNWISE_BLOCK", 128)
                        p.set_i32("COLUMNWISE_TRANSPOSE", index % 3 == 0)
                    if scheme == 0:
                        p.set_ptr("STATIC_SCALE_POINTER", 2).pool(0, 0.0625).pool(1, 0.25)
                    if moe:
                        p.set_i32("MOE_LAYOUT", moe).set_i32("MOE_NUM_EXPERTS", experts)
                        if moe == 1:  # CONTIGUOUS: rows [0, 13) and [13, 37); three rows no expert owns
                            p.set_ptr("MOE_OFFSETS_POINTER", 4).pool_i32(0, 0).pool_i32(1, 13).pool_i32(2, 37)
                        else:  # MASKED: 20 rows per expert, 11 and 20 of them valid
                            p.set_ptr("MOE_COUNTS_POINTER", 4).pool_i32(0, 11).pool_i32(1, 20)
                    in_cols = c if gate == 0 else 2 * c
                    p.layout(0, BF16, r, in_cols).layout(1, out_type, r, c)
                    p.queries(r, c, which=2 if outputs == COLUMNWISE else 1)
                    p.quantize(seed=index % 4, col=0 if outputs & COLUMNWISE else None)
                    s[f"matrix-{scheme_name}-{layout_name}-{outputs_name}-{moe_name}"] = p
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
