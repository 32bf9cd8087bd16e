"""MoE layouts and columnwise outputs through fusedquant.quantize on the host backend (docs/moe.md): MASKED and
CONTIGUOUS equal per-expert plain calls and leave other rows alone; the columnwise output is the rowwise output
of the transposed input; transposed columnwise data is the transpose; both outputs from one call."""
import ml_dtypes
import numpy as np
import pytest

import fusedquant as fq
from fusedquant import FusedQuantError, Status

BF16 = ml_dtypes.bfloat16
POISON = 0xAB
SWIGLU = dict(activation="swiglu_oai", gate_layout="split")


def rand_bf16(rng, shape):
    return (rng.standard_normal(shape) * 2).astype(BF16)


def test_masked_expert_equals_a_plain_call_on_its_valid_rows_and_other_rows_keep_their_bytes(rng):
    e, max_m, h = 3, 20, 64
    x = rand_bf16(rng, (e, max_m, 2 * h))
    counts = np.array([20, 0, 7], np.int32)
    prob = rng.uniform(0.1, 1, (e, max_m)).astype(np.float32)
    out = np.full((e, max_m, h), POISON, np.uint8)
    q, s = fq.quantize(x, out=out, moe_layout="masked", moe_num_experts=e, moe_counts=counts, row_prob=prob,
                       scheme="mxfp8", scale_dtype="e8m0", **SWIGLU)
    assert q is out and s.shape == (e, max_m, 2)  # one [max_m, K_g] block per expert
    for i in range(e):
        n = counts[i]
        pq, ps = fq.quantize(x[i, :n], row_prob=prob[i, :n].copy(), scheme="mxfp8", scale_dtype="e8m0", **SWIGLU)
        np.testing.assert_array_equal(q[i, :n], pq.view(np.uint8))
        np.testing.assert_array_equal(s[i, :n], ps)
        assert (q[i, n:] == POISON).all()


def test_contiguous_equals_per_expert_plain_calls_with_per_expert_static_scales(rng):
    x = rand_bf16(rng, (12, 64))
    offsets, scale = [1, 5, 5, 10], np.array([0.01, 0.02, 0.05], np.float32)
    out = np.full((12, 32), POISON, np.uint8)
    fq.quantize(x, out=out, moe_layout="contiguous", moe_num_experts=3, moe_offsets=offsets, scheme="per_tensor_static",
                static_scale=scale, **SWIGLU)
    for i in range(3):
        lo, hi = offsets[i], offsets[i + 1]
        pq, _ = fq.quantize(x[lo:hi], scheme="per_tensor_static", static_scale=scale[i:i + 1].copy(), **SWIGLU)
        np.testing.assert_array_equal(out[lo:hi], pq.view(np.uint8))
    assert (out[:1] == POISON).all() and (out[10:] == POISON).all()


def test_moe_scale_buffer_info_counts_blocks():
    info = fq.scale_buffer_info(4 * 50, 256, moe_layout="masked", moe_num_experts=4, scheme="mxfp8",
                                scale_dtype="e8m0", scale_layout="swizzled_128x4")
    assert (info.batch, info.rows, info.padded_rows, info.batch_stride) == (4, 50, 128, 128 * 8)
    assert info.bytes == 4 * info.batch_stride


@pytest.mark.parametrize("scheme,group", [("per_group", 32), ("per_group", 128), ("mxfp8", 32)])
def test_columnwise_equals_rowwise_of_the_transposed_input(rng, scheme, group):
    x = rand_bf16(rng, (160, 96))
    kw = dict(scheme=scheme, **({"scale_dtype": "e8m0"} if scheme == "mxfp8" else {}))
    both = fq.Outputs.ROWWISE | fq.Outputs.COLUMNWISE
    col_kw = {} if scheme == "mxfp8" else {"columnwise_block": group}
    q, s, cq, cs = fq.quantize(x, outputs=both, **col_kw, **kw)
    rq, rs = fq.quantize(x, **({} if scheme == "mxfp8" else {"group_size": 128}), **kw)
    np.testing.assert_array_equal(q, rq)  # the rowwise half is unchanged by asking for both
    tq, ts = fq.quantize(np.ascontiguousarray(x.T), **({} if scheme == "mxfp8" else {"group_size": group}), **kw)
    assert cq.shape == x.shape and cs.shape == (96, -(-160 // group))
    np.testing.assert_array_equal(cq, tq.T)
    np.testing.assert_array_equal(cs, ts)


def test_transposed_columnwise_is_the_transpose_and_columnwise_only_returns_no_rowwise(rng):
    x = rand_bf16(rng, (64, 2 * 48))
    q, s, cq, cs = fq.quantize(x, outputs="columnwise", **SWIGLU)
    q2, s2, tq, ts = fq.quantize(x, outputs="columnwise", columnwise_transpose=1, **SWIGLU)
    assert q is None and s is None and q2 is None
    assert tq.shape == (48, 64)
    np.testing.assert_array_equal(tq, cq.T)
    np.testing.assert_array_equal(ts, cs)


def test_masked_transposed_fp4_columnwise_is_expert_major(rng):
    e, max_m, h = 2, 32, 64
    x = rand_bf16(rng, (e, max_m, h))
    counts = np.array([32, 32], np.int32)
    kw = dict(scheme="mxfp4", out_dtype="fp4_e2m1", scale_dtype="e8m0", outputs="columnwise")
    _, _, tq, ts = fq.quantize(x, moe_layout="masked", moe_num_experts=e, moe_counts=counts, columnwise_transpose=1,
                               **kw)
    assert tq.shape == (e, h, max_m // 2) and ts.shape == (e, h, 1)
    for i in range(e):
        _, _, pq, ps = fq.quantize(x[i], columnwise_transpose=1, **kw)
        np.testing.assert_array_equal(tq[i], pq)
        np.testing.assert_array_equal(ts[i], ps)


def test_columnwise_misuse_is_refused_with_the_librarys_message(rng):
    x = rand_bf16(rng, (8, 64))
    with pytest.raises(TypeError, match="col_out"):
        fq.quantize(x, outputs="columnwise", columnwise_output=np.zeros(512, np.uint8))
    with pytest.raises(FusedQuantError, match="COLUMNWISE_BLOCK") as e:
        fq.quantize(x, outputs="columnwise", columnwise_block=64)
    assert e.value.status == Status.INVALID_VALUE
    with pytest.raises(FusedQuantError, match="col_out"):
        fq.quantize(x, col_out=np.zeros((8, 64), np.uint8))
    with pytest.raises(FusedQuantError, match="col_out"):
        fq.quantize(x, outputs="columnwise", col_out=np.zeros((64, 8), np.uint8))
    with pytest.raises(FusedQuantError, match="MOE_NUM_EXPERTS"):
        fq.quantize(x, moe_layout="masked", moe_num_experts=3, moe_counts=[1, 1, 1])


def test_a_per_expert_number_is_every_experts_and_a_short_array_is_refused(rng):
    """static_scale= / global_amax= are read once per expert (the GEMM's groups too): one number is every
    expert's; an array with fewer values than the library reads is refused, naming the argument (a one-value
    buffer for E experts was read past its end, found by ASan)."""
    e, max_m, h = 3, 8, 64
    x = rand_bf16(rng, (e, max_m, 2 * h))
    counts = np.array([8, 0, 5], np.int32)
    moe = dict(moe_layout="masked", moe_num_experts=e, moe_counts=counts, **SWIGLU)
    one = fq.quantize(x, scheme="nvfp4", global_amax=6.0, **moe)
    each = fq.quantize(x, scheme="nvfp4", global_amax=np.full(e, 6.0, np.float32), **moe)
    for a, b in zip(one, each):  # the rows some expert owns (the others are not written)
        for i in range(e):
            np.testing.assert_array_equal(np.asarray(a)[i, :counts[i]].view(np.uint8),
                                          np.asarray(b)[i, :counts[i]].view(np.uint8))
    with pytest.raises(FusedQuantError, match=r"global_amax: 1 values; the library reads 3 \(one per expert\)") as err:
        fq.quantize(x, scheme="nvfp4", global_amax=np.array([6.0], np.float32), **moe)
    assert err.value.status == Status.INVALID_VALUE
    with pytest.raises(FusedQuantError, match=r"static_scale: 2 values; the library reads 3"):
        fq.quantize(x, scheme="per_tensor_static", static_scale=np.ones(2, np.float32), **moe)
    with pytest.raises(FusedQuantError, match=r"row_prob: 4 values; the library reads 24 \(one per row\)"):
        fq.quantize(x, scheme="mxfp8", row_prob=np.ones(4, np.float32), **moe)
