"""fusedquant.grouped_gemm on the host backend: C against a float64 NumPy computation (ml_dtypes decoding the fp8
bytes), the quantized epilogue byte for byte fusedquant.quantize of the returned C, rows no group owns untouched,
and the binding's own argument checks."""
import ml_dtypes
import numpy as np
import pytest

import fusedquant as fq
from fusedquant import FusedQuantError, Status

E4M3 = ml_dtypes.float8_e4m3fn
BF16 = ml_dtypes.bfloat16


def problem(rng, m, k, n, e, tma=True):
    """Random fp8 A [M, K], B [E, N, K] (NaN codes avoided), scales, sorted offsets with an empty group."""
    def fp8(shape):
        bits = rng.integers(0, 256, size=shape, dtype=np.uint8)
        bits[(bits & 0x7F) == 0x7F] = 0x38  # 1.0 instead of NaN
        return bits.view(E4M3)
    a, b = fp8((m, k)), fp8((e, n, k))
    kb, ld = -(-k // 128), (-(-m // 4) * 4 if tma else m)
    a_scales = (rng.uniform(0.5, 2.0, size=(kb, ld)) * 2.0**-6).astype(np.float32)
    b_scales = (rng.uniform(0.5, 2.0, size=(e, -(-n // 128), kb)) * 2.0**-7).astype(np.float32)
    offsets = np.sort(rng.integers(0, m + 1, size=e + 1)).astype(np.int32)
    if e > 2:
        offsets[2] = offsets[1]
    return a, a_scales, b, b_scales, offsets


def owners(m, offsets, counts=None):
    """The group of each row (-1: none), docs/moe.md's rule."""
    who = np.full(m, -1)
    for g in range(len(offsets) - 1):
        lo = min(max(int(offsets[g]), 0), m)
        hi = min(max(int(offsets[g + 1]), lo), m)
        cnt = hi - lo if counts is None else min(max(int(counts[g]), 0), hi - lo)
        who[lo:lo + cnt] = g
    return who


def reference_c(a, a_scales, b, b_scales, who, alpha=None):
    """C in float64: alpha * sum over k of (a * sa) * (b * sb), for each owned row."""
    m, k = a.shape
    e, n, _ = b.shape
    sa = np.repeat(a_scales[:, :m].T.astype(np.float64), 128, axis=1)[:, :k]                  # [M, K]
    sb = np.repeat(np.repeat(b_scales.astype(np.float64), 128, axis=1), 128, axis=2)[:, :n, :k]  # [E, N, K]
    af = a.astype(np.float64) * sa
    c = np.zeros((m, n))
    for g in range(e):
        rows = who == g
        c[rows] = af[rows] @ (b[g].astype(np.float64) * sb[g]).T * (1.0 if alpha is None else alpha[g])
    return c


@pytest.mark.parametrize("m,k,n,e,tma", [(77, 256, 128, 1, True), (130, 208, 256, 3, False), (301, 128, 128, 8, True)])
def test_c_matches_a_float64_numpy_computation(rng, m, k, n, e, tma):
    a, sa, b, sb, offsets = problem(rng, m, k, n, e, tma)
    counts = rng.integers(0, 40, size=e).astype(np.int32)
    alpha = rng.uniform(-2, 2, size=e).astype(np.float32)
    c = np.full((m, n), 0xABAB, dtype=np.uint16).view(BF16)
    r = fq.grouped_gemm(a, sa, b, sb, group_offsets=offsets, group_counts=counts, alpha=alpha, c=c,
                        a_scale_layout="col_major_tma" if tma else "col_major", quantize=False,
                        activation="silu", gate_layout="split")
    assert r.c is c and r.d is None and r.values is None
    who = owners(m, offsets, counts)
    want = reference_c(a, sa, b, sb, who, alpha)
    got = c.astype(np.float64)
    valid = who >= 0
    assert np.all(np.abs(got[valid] - want[valid]) <= 2.0**-8 * np.abs(want[valid]) + 1e-30)
    assert np.all(c.view(np.uint16)[~valid] == 0xABAB)


@pytest.mark.parametrize("attrs", [
    dict(activation="silu", gate_layout="split", group_size=128, scale_layout="col_major_tma"),
    dict(activation="gelu_tanh", gate_layout="interleaved", group_size=64, scale_layout="row_major", out_dtype="int8"),
    dict(activation="silu", gate_layout="split", group_size=32, scale_layout="col_major", outputs=3,
         columnwise_block=32),
    dict(activation="identity", scheme="per_tensor_dynamic"),
])
def test_epilogue_equals_quantize_of_the_returned_c(rng, attrs):
    m, k, n, e = 130, 256, 256, 3
    a, sa, b, sb, offsets = problem(rng, m, k, n, e)
    prob = rng.uniform(0.1, 1.0, size=m).astype(np.float32)
    gated = attrs.get("gate_layout", "none") != "none"
    h = n // 2 if gated else n
    columnwise = attrs.get("outputs") == 3
    moe = dict(moe_layout="contiguous", moe_num_experts=e)

    def buffers():  # every output poisoned alike, so that bytes neither call writes compare equal too
        out = dict(out=np.full((m, h), 0xAB, dtype=np.uint8),
                   scales=np.full(fq.scale_buffer_info(m, h, **moe, **attrs).bytes, 0xAB, dtype=np.uint8))
        if columnwise:
            out["col_out"] = np.full((m, h), 0xAB, dtype=np.uint8)
            out["col_scales"] = np.full(fq.scale_buffer_info(m, h, which="columnwise", **moe, **attrs).bytes, 0xAB,
                                        dtype=np.uint8)
        return out
    got, want = buffers(), buffers()
    r = fq.grouped_gemm(a, sa, b, sb, group_offsets=offsets, d=True, row_prob=prob, **got, **attrs)
    assert r.c.shape == (m, n) and r.d.shape == (m, h)
    fq.quantize(r.c, moe_offsets=offsets, row_prob=prob, **moe, **want, **attrs)
    for key in got:
        assert got[key].tobytes() == want[key].tobytes(), key
    valid = owners(m, offsets) >= 0
    assert np.all(got["out"][~valid] == 0xAB)
    if not gated:  # identity: D = prob * C in bf16
        want_d = (prob[:, None] * r.c.astype(np.float32)).astype(BF16)
        assert np.array_equal(r.d.view(np.uint16)[valid], want_d.view(np.uint16)[valid])


def test_scales_of_valid_rows_equal_quantize_and_unowned_rows_keep_their_bytes(rng):
    m, k, n, e = 96, 128, 128, 2
    a, sa, b, sb, _ = problem(rng, m, k, n, e)
    offsets = np.array([8, 40, 72], dtype=np.int32)
    out = np.full((m, 64), 0xAB, dtype=np.uint8).view(E4M3)
    scales = np.full((m, 1), -1.0, dtype=np.float32)
    r = fq.grouped_gemm(a, sa, b, sb, group_offsets=offsets, out=out, scales=scales, activation="silu",
                        gate_layout="split", group_size=64, scale_layout="row_major")
    assert r.values is out and r.scales is scales
    q = fq.quantize(r.c, activation="silu", gate_layout="split", group_size=64, scale_layout="row_major")
    valid = owners(m, offsets) >= 0
    assert np.array_equal(out.view(np.uint8)[valid], np.asarray(q[0]).view(np.uint8)[valid])
    assert np.array_equal(scales[valid], q[1][valid])
    assert np.all(out.view(np.uint8)[~valid] == 0xAB) and np.all(scales[~valid] == -1.0)


def test_b_as_a_2d_stack_and_one_group_without_offsets(rng):
    a, sa, b, sb, _ = problem(rng, 40, 128, 128, 1)
    r3 = fq.grouped_gemm(a, sa, b, sb, quantize=False, activation="silu", gate_layout="split")
    r2 = fq.grouped_gemm(a, sa, b.reshape(128, 128), sb, quantize=False, activation="silu", gate_layout="split")
    assert np.array_equal(r3.c.view(np.uint16), r2.c.view(np.uint16))
    want = reference_c(a, sa, b, sb, np.zeros(40, dtype=int))
    assert np.all(np.abs(r3.c.astype(np.float64) - want) <= 2.0**-8 * np.abs(want) + 1e-30)


def test_errors_name_the_argument(rng):
    a, sa, b, sb, offsets = problem(rng, 64, 128, 128, 2)
    with pytest.raises(FusedQuantError) as e:
        fq.grouped_gemm(a, sa, b, sb, group_offsets=offsets, activation="silu", gate_layout="split",
                        moe_layout="contiguous")
    assert e.value.status == Status.INVALID_VALUE and "FQ_QUANT_DESC_MOE_LAYOUT" in e.value.message
    with pytest.raises(FusedQuantError) as e:  # two groups need offsets
        fq.grouped_gemm(a, sa, b, sb, activation="silu", gate_layout="split")
    assert e.value.status == Status.NULL_POINTER and "FQ_GEMM_DESC_GROUP_OFFSETS_POINTER" in e.value.message
    with pytest.raises(FusedQuantError) as e:
        fq.grouped_gemm(a.astype(np.float32), sa, b, sb, group_offsets=offsets)
    assert "a:" in e.value.message
    with pytest.raises(FusedQuantError) as e:
        fq.grouped_gemm(a, np.zeros(10, dtype=np.float32), b, sb, group_offsets=offsets)
    assert e.value.status == Status.INSUFFICIENT_BUFFER and "a_scales" in e.value.message
    with pytest.raises(FusedQuantError) as e:
        fq.grouped_gemm(a, sa, b, sb, group_offsets=offsets, quantize=False, c=False)
    assert "FQ_GEMM_DESC_QUANTIZE" in e.value.message
    with pytest.raises(FusedQuantError) as e:
        fq.grouped_gemm(a, sa, b, sb, group_offsets=offsets[:2])
    assert "group_offsets" in e.value.message


def test_descriptor_attributes_read_back():
    with fq.GroupedGemmDesc(num_groups=4, quantize=0, a_scale_layout="col_major") as g:
        assert g.get("num_groups") == 4 and g.get("quantize") == 0
        assert g.get(fq.GroupedGemmDescAttribute.A_SCALE_LAYOUT) == fq.ScaleLayout.COL_MAJOR
        assert g.get("c_output_pointer") == 0
        with pytest.raises(FusedQuantError) as e:
            g.set("num_groups", 0)
        assert "FQ_GEMM_DESC_NUM_GROUPS" in e.value.message


def test_grouped_gemm_scale_query_gives_one_per_tensor_scale_per_group():
    from fusedquant._core import GroupedGemmDesc, QuantDesc
    with GroupedGemmDesc(num_groups=3) as g, QuantDesc(scheme="per_tensor_dynamic") as per_tensor, \
            QuantDesc(group_size=128) as per_group:
        for which in ("rowwise", "columnwise"):
            info = g.scale_buffer_info(per_tensor, 40, 256, which)
            assert (info.bytes, info.batch) == (3 * 4, 3)
            assert g.scale_buffer_info(per_group, 40, 256, which) == per_group.scale_buffer_info(40, 256, which)


def test_the_epilogue_scheme_sets_its_own_types_as_quantize_does(rng):
    """scheme="mxfp8" alone gives E8M0 scales (and "nvfp4" e2m1 values with e4m3 block scales), as in quantize()."""
    a, sa, b, sb, offsets = problem(rng, 64, 256, 256, 2)
    r = fq.grouped_gemm(a, sa, b, sb, group_offsets=offsets, scheme="mxfp8")
    assert r.values.dtype == E4M3 and r.scales.dtype == ml_dtypes.float8_e8m0fnu
    r = fq.grouped_gemm(a, sa, b, sb, group_offsets=offsets, scheme="nvfp4", global_amax=4.0)
    assert r.values.shape == (64, 128) and r.scales.dtype == E4M3
