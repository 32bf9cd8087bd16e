"""fusedquant.quantize on the host backend, checked against a float64 NumPy model of docs/spec.md with ml_dtypes
as the independent decoder of fp8 / e8m0 bytes."""
import math

import ml_dtypes
import numpy as np
import pytest

import fusedquant as fq
from fusedquant import FusedQuantError, Status

BF16 = ml_dtypes.bfloat16
FORMATS = {  # out_dtype -> the ml_dtypes type that decodes it
    "fp8_e4m3fn": ml_dtypes.float8_e4m3fn, "fp8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "fp8_e5m2": ml_dtypes.float8_e5m2, "int8": np.int8}
_erf = np.vectorize(math.erf)
ACT = {
    "identity": lambda v: v,
    "silu": lambda v: v / (1 + np.exp(-v)),
    "gelu_erf": lambda v: 0.5 * v * (1 + _erf(v / math.sqrt(2))),
    "gelu_tanh": lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))),
    "relu": lambda v: np.maximum(v, 0),
    "relu_squared": lambda v: np.maximum(v, 0) ** 2,
}


def split(x, gate_layout, gate_order="gate_first", block=32):
    """(gate, up) of gated rows x [M, 2H] (docs/spec.md §2)."""
    m, w = x.shape
    if gate_layout == "split":
        a, b = x[:, : w // 2], x[:, w // 2:]
    elif gate_layout == "interleaved":
        a, b = x[:, 0::2], x[:, 1::2]
    else:  # block_interleaved
        blocks = x.reshape(m, w // (2 * block), 2, block)
        a, b = blocks[:, :, 0].reshape(m, -1), blocks[:, :, 1].reshape(m, -1)
    return (a, b) if gate_order == "gate_first" else (b, a)


def reference(x, activation="identity", gate_layout="none", **kw):
    """(y in float64, the error bound of the library's fp32 evaluation of y): docs/spec.md §2's formulas in fp32 carry
    a few ulps relative error plus an absolute one where 1 + tanh / 1 + erf cancel (GELU's negative tail)."""
    x = x.astype(np.float64)
    if gate_layout == "none":
        y, size = ACT[activation](x), np.abs(x)
    else:
        g, u = split(x, gate_layout, **kw)
        size = np.abs(g) * np.abs(u)
        if activation == "swiglu_oai":
            alpha, beta, limit = 1.702, 1.0, 7.0
            g = np.minimum(g, limit)
            y = g / (1 + np.exp(-alpha * g)) * (np.clip(u, -limit, limit) + beta)
        else:
            y = ACT[activation](g) * u
    return y, 4e-6 * np.abs(y) + 2.0**-21 * size


def group_view(a, scheme, group):
    """a [M, H] as [M, K, G] groups (padded with 0 for a partial last group) of the scheme."""
    m, h = a.shape
    if scheme == "per_tensor_dynamic":
        return a.reshape(1, 1, -1)
    g = h if scheme == "per_token" else group
    k = -(-h // g)
    return np.pad(a, ((0, 0), (0, k * g - h))).reshape(m, k, g)


def check_quantized(ref, q, scales, out_dtype="fp8_e4m3fn", scheme="per_group", group=128, pow2=False,
                    qmax=None):
    """The scales are docs/spec.md §3.2's, and every decoded value is y / s rounded to nearest in the format."""
    y, y_err = ref
    fmt = FORMATS[out_dtype]
    info = ml_dtypes.finfo(fmt) if fmt is not np.int8 else None
    qmax = qmax or (float(info.max) if info else 127.0)
    min_scale = 1 / (qmax * 512) if info else float(np.finfo(np.float32).eps)
    s = np.asarray(scales).astype(np.float64)  # e8m0 decoded by ml_dtypes
    amax = np.abs(group_view(y, scheme, group)).max(axis=-1)
    amax_err = group_view(y_err, scheme, group).max(axis=-1)
    s_ref = np.maximum(amax / qmax, min_scale)
    s_lo, s_hi = np.maximum((amax - amax_err) / qmax, min_scale), np.maximum((amax + amax_err) / qmax, min_scale)
    assert s.shape == s_ref.shape
    if pow2:
        s_lo, s_hi = 2.0 ** np.ceil(np.log2(s_lo * (1 - 1e-7))), 2.0 ** np.ceil(np.log2(s_hi * (1 + 1e-7)))
    assert np.all((s >= s_lo * (1 - 1e-7)) & (s <= s_hi * (1 + 1e-7))), (s, s_ref)
    s_elem = s.item() if scheme == "per_tensor_dynamic" else \
        np.repeat(s, group_view(y, scheme, group).shape[-1], axis=-1)[:, : y.shape[1]]
    t = np.clip(y / s_elem, -qmax, qmax)
    dec = q.astype(np.float64)  # ml_dtypes decodes the fp8 bytes
    if info:  # half an ulp of t in the format, subnormals included
        e = np.maximum(np.floor(np.log2(np.maximum(np.abs(t), 1e-300))), info.minexp)
        half_ulp = 2.0 ** (e - info.nmant) / 2
    else:
        half_ulp = 0.5
    excess = np.abs(dec - t) - (half_ulp * (1 + 1e-9) + y_err / s_elem)
    assert np.all(excess <= 0), (np.argmax(excess), excess.max())
    if not pow2:  # the largest element of a group whose scale was not floored lands on qmax
        big = (amax / qmax > min_scale * 1.01) & (amax > 0)
        assert np.all(np.abs(group_view(dec, scheme, group)).max(axis=-1)[big] == qmax)


def rand_bf16(rng, shape, scale=3.0):
    return (rng.standard_normal(shape) * scale).astype(BF16)


# ---------------------------------------------------------------------------------------------------------
# numerics against the oracle


def test_silu_gated_per_group_128_matches_float64_within_half_an_fp8_ulp(rng):
    x = rand_bf16(rng, (37, 2 * 512))
    q, s = fq.quantize(x, activation="silu", gate_layout="split", scheme="per_group", group_size=128)
    assert q.dtype == ml_dtypes.float8_e4m3fn and q.shape == (37, 512)
    assert s.dtype == np.float32 and s.shape == (37, 4)
    check_quantized(reference(x, "silu", "split"), q, s)


@pytest.mark.parametrize("activation,gate", [
    (a, g) for a in [*ACT, "swiglu_oai"] for g in ["none", "split", "interleaved", "block_interleaved",
                                                   "split_up_first"] if (a, g) != ("swiglu_oai", "none")])
def test_every_activation_and_gate_layout(rng, activation, gate):
    layout, order = ("split", "up_first") if gate == "split_up_first" else (gate, "gate_first")
    x = rand_bf16(rng, (9, 256 if layout == "none" else 512), scale=6.0 if activation == "swiglu_oai" else 2.0)
    q, s = fq.quantize(x, activation=activation, gate_layout=layout, gate_order=order, group_size=64)
    kw = {} if layout == "none" else {"gate_order": order}
    check_quantized(reference(x, activation, layout, **kw), q, s, group=64)


@pytest.mark.parametrize("out_dtype", list(FORMATS))
@pytest.mark.parametrize("scheme,group", [("per_tensor_dynamic", 0), ("per_token", 0), ("per_group", 32),
                                          ("per_group", 64), ("per_group", 128)])
def test_every_output_type_and_scheme(rng, out_dtype, scheme, group):
    x = rand_bf16(rng, (11, 2 * 320))  # 320 = 2.5 groups of 128: a partial last group
    attrs = {"group_size": group} if group else {}
    q, s = fq.quantize(x, activation="gelu_tanh", gate_layout="interleaved", scheme=scheme,
                       out_dtype=out_dtype, **attrs)
    assert q.dtype == FORMATS[out_dtype]
    check_quantized(reference(x, "gelu_tanh", "interleaved"), q, s, out_dtype, scheme, group)


def test_row_probabilities_scale_each_row(rng):
    x = rand_bf16(rng, (6, 512))
    prob = rng.uniform(0.1, 1.0, 6).astype(np.float32)
    q, s = fq.quantize(x, activation="silu", gate_layout="interleaved", row_prob=prob)
    y, y_err = reference(x, "silu", "interleaved")
    check_quantized((y * prob[:, None], y_err), q, s)


def test_qmax_override_and_multiply_reciprocal(rng):
    x = rand_bf16(rng, (5, 256))
    q, s = fq.quantize(x, out_dtype="fp8_e4m3fnuz", qmax=224.0, scale_apply="multiply_reciprocal")
    check_quantized(reference(x), q, s, "fp8_e4m3fnuz", qmax=224.0)  # vLLM on ROCm


def test_min_scale_override_floors_an_all_zero_group():
    _, s = fq.quantize(np.zeros((2, 64), BF16), group_size=32, min_scale=0.25)
    assert s.tolist() == [[0.25, 0.25], [0.25, 0.25]]


@pytest.mark.parametrize("rounding", ["round_product", "round_both"])
def test_intermediate_rounding_to_bf16_stays_within_a_bf16_ulp(rng, rounding):
    x = rand_bf16(rng, (7, 512))
    q, s = fq.quantize(x, activation="gelu_erf", gate_layout="split", intermediate_rounding=rounding)
    y, y_err = reference(x, "gelu_erf", "split")
    check_quantized((y, y_err + 2.0**-7 * np.abs(y)), q, s)


@pytest.mark.parametrize("layout", ["row_major", "col_major", "col_major_tma"])
@pytest.mark.parametrize("scale_dtype", ["fp32", "e8m0"])
def test_scale_layouts_place_each_scale_where_spec_4_says(rng, layout, scale_dtype):
    x = rand_bf16(rng, (7, 2 * 384))
    kw = dict(activation="silu", gate_layout="split", group_size=128, scale_layout=layout,
              scale_dtype=scale_dtype, scale_rounding="pow2_ceil")
    q, s = fq.quantize(x, **kw)  # s: the logical [M, K] view over the layout's storage
    check_quantized(reference(x, "silu", "split"), q, s, pow2=True)
    size = 4 if scale_dtype == "fp32" else 1
    m, k = 7, 3
    ld = {"row_major": None, "col_major": m, "col_major_tma": -(-m // (16 // size)) * (16 // size)}[layout]
    nbytes = m * k * size if ld is None else ld * k * size
    info = fq.scale_buffer_info(m, 384, **kw)
    assert (info.bytes, info.rows, info.cols, info.element_bytes) == (nbytes, m, k, size)
    buf = np.full(nbytes + 8, 0xAB, np.uint8)  # poisoned; 8 bytes more than the layout needs
    q2, s2 = fq.quantize(x, scales=buf, **kw)
    assert s2 is buf and np.array_equal(q2.view(np.uint8), q.view(np.uint8))
    flat = buf[:nbytes].view(np.float32 if size == 4 else ml_dtypes.float8_e8m0fnu).astype(np.float64)
    for i in range(m):
        for j in range(k):
            off = i * k + j if ld is None else j * ld + i
            assert flat[off] == float(s[i, j])
    if ld is not None:  # padding rows are written with zero bytes
        assert not buf[:nbytes].reshape(k, ld * size)[:, m * size:].any()
    assert np.all(buf[nbytes:] == 0xAB), "wrote past the layout's size"


def test_packed_ue8m0_words_hold_four_e8m0_scales_lsb_first(rng):
    x = rand_bf16(rng, (6, 1024))  # 8 groups of 128 -> 2 words per row
    kw = dict(group_size=128, scale_dtype="e8m0", scale_rounding="pow2_ceil")
    _, ref = fq.quantize(x, **kw)
    _, words = fq.quantize(x, scale_layout="packed_ue8m0", **kw)
    assert words.dtype == np.int32 and words.shape == (6, 2)
    b = np.ascontiguousarray(words).view(np.uint8).reshape(6, 8)
    assert np.array_equal(b, np.asarray(ref).view(np.uint8))


# ---------------------------------------------------------------------------------------------------------
# hand-computed cases, exact bytes


def test_per_token_identity_hand_case_exact_bytes():
    x = np.array([[4, -2, 1, 0.5], [0, 0, 0, 0]], BF16)
    q, s = fq.quantize(x, scheme="per_token")
    # 4/s = 448 (0x7E), -224 = 1.75*2^7 (0xF6), 112 (0x6E), 56 (0x66); a zero row gets min_scale, values 0
    assert q.view(np.uint8).tolist() == [[0x7E, 0xF6, 0x6E, 0x66], [0, 0, 0, 0]]
    assert s[:, 0].tolist() == [np.float32(4) / np.float32(448), np.float32(1) / np.float32(448 * 512)]


def test_gated_relu_hand_case():
    q, s = fq.quantize(np.array([[2, -1, 3, 5]], BF16), activation="relu", gate_layout="split",
                       scheme="per_token")
    assert q.view(np.uint8).tolist() == [[0x7E, 0x00]] and s[0, 0] == np.float32(6) / np.float32(448)


def test_scale_upper_bound_saturates_to_qmax():
    q, s = fq.quantize(np.array([[1000, 1, -1000, 0]], BF16), scheme="per_token", scale_ub=1.0)
    assert s[0, 0] == 1.0 and q.view(np.uint8).tolist() == [[0x7E, 0x38, 0xFE, 0x00]]


def test_static_scale_divides_and_saturates_and_is_returned_as_the_scales():
    scale = np.array([0.5], np.float32)
    q, s = fq.quantize(np.array([[1, 300, -0.25]], BF16), scheme="per_tensor_static", static_scale=scale)
    assert q.view(np.uint8).tolist() == [[0x40, 0x7E, 0xB0]] and s is scale
    q2, s2 = fq.quantize(np.array([[1, 300, -0.25]], BF16), scheme="per_tensor_static", static_scale=0.5)
    assert np.array_equal(q2.view(np.uint8), q.view(np.uint8)) and s2.tolist() == [0.5]


def test_int8_rounds_half_to_even():
    q, s = fq.quantize(np.array([[127, -63.5, 0.5, 1.5, 2.5]], BF16), scheme="per_token", out_dtype="int8")
    assert q.dtype == np.int8 and s[0, 0] == 1.0 and q.tolist() == [[127, -64, 0, 2, 2]]


def test_pow2_ceil_e8m0_hand_case():
    x = np.full((1, 32), 0.25, BF16)
    x[0, 5] = 3
    q, s = fq.quantize(x, group_size=32, scale_dtype="e8m0", scale_rounding="pow2_ceil")
    # 3/448 -> 2^ceil(-7.22) = 2^-7: e8m0 byte 120; 3 * 128 = 384 = 1.5 * 2^8 (0x7C); 0.25 * 128 = 32 (0x60)
    assert s.dtype == ml_dtypes.float8_e8m0fnu and s.view(np.uint8).tolist() == [[120]]
    assert float(s[0, 0]) == 2.0**-7
    assert q.view(np.uint8)[0, 5] == 0x7C and (np.delete(q.view(np.uint8)[0], 5) == 0x60).all()


def test_float16_input_and_fp16_equals_bf16_for_representable_values(rng):
    x = rand_bf16(rng, (4, 256))
    a = fq.quantize(x, activation="silu", gate_layout="split")
    b = fq.quantize(x.astype(np.float16), activation="silu", gate_layout="split")
    assert np.array_equal(a[0].view(np.uint8), b[0].view(np.uint8)) and np.array_equal(a[1], b[1])


# ---------------------------------------------------------------------------------------------------------
# memory: strided rows, preallocated outputs, leading axes, zero rows


def test_strided_input_rows_give_the_bytes_of_a_contiguous_copy(rng):
    big = rand_bf16(rng, (10, 1024 + 96))
    x = big[:, 32:32 + 1024]  # row stride 1120 elements > width 1024
    kw = dict(activation="silu", gate_layout="split", group_size=64, scale_layout="col_major_tma")
    q1, s1 = fq.quantize(x, **kw)
    q2, s2 = fq.quantize(np.ascontiguousarray(x), **kw)
    assert np.array_equal(q1.view(np.uint8), q2.view(np.uint8)) and np.array_equal(s1, s2)


def test_strided_and_preallocated_outputs(rng):
    x = rand_bf16(rng, (10, 512))
    q_ref, s_ref = fq.quantize(x, group_size=32)
    out_big = np.zeros((10, 600), ml_dtypes.float8_e4m3fn)
    scales = np.empty((10, 16), np.float32)
    q, s = fq.quantize(x, group_size=32, out=out_big[:, 50:562], scales=scales)
    assert s is scales and np.array_equal(q.view(np.uint8), q_ref.view(np.uint8)) and np.array_equal(s, s_ref)
    assert not out_big[:, :50].view(np.uint8).any() and not out_big[:, 562:].view(np.uint8).any()
    q, _ = fq.quantize(x, group_size=32, out=np.empty((10, 512), np.uint8))  # raw bytes are accepted
    assert np.array_equal(q, q_ref.view(np.uint8))


def test_leading_axes_fold_into_rows(rng):
    x = rand_bf16(rng, (2, 3, 256))
    q, s = fq.quantize(x, activation="gelu_erf", gate_layout="split")
    q2, s2 = fq.quantize(x.reshape(6, 256), activation="gelu_erf", gate_layout="split")
    assert q.shape == (2, 3, 128) and np.array_equal(q.reshape(6, 128).view(np.uint8), q2.view(np.uint8))
    assert np.array_equal(s, s2)


def test_zero_rows_are_valid():
    q, s = fq.quantize(np.zeros((0, 256), BF16), scale_layout="col_major_tma")
    assert q.shape == (0, 256) and s.shape == (0, 2)


def test_reusing_the_returned_scales_view_as_the_scales_buffer(rng):
    x = rand_bf16(rng, (5, 512))
    q, s = fq.quantize(x, scale_layout="col_major_tma")  # a strided view over 8x4 padded storage
    q2, s2 = fq.quantize(x * BF16(2), out=q, scales=s, scale_layout="col_major_tma")
    assert q2 is q and s2 is s and np.allclose(np.asarray(s, np.float64), fq.quantize(x * BF16(2),
                                               scale_layout="col_major_tma")[1])


# ---------------------------------------------------------------------------------------------------------
# errors


def raises(status, match=None):
    class Check:
        def __enter__(self):
            self.ctx = pytest.raises(FusedQuantError, match=match)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            r = self.ctx.__exit__(*exc)
            assert self.info.value.status == status, self.info.value
            assert isinstance(self.info.value.status, Status) and self.info.value.message
            return r
    return Check()


def test_bad_input_dtypes():
    with raises(Status.INVALID_VALUE, "int16"):
        fq.quantize(np.zeros((2, 64), np.int16))
    with raises(Status.INVALID_VALUE, "FP32"):  # a library type, refused by the library with its message
        fq.quantize(np.zeros((2, 64), np.float32))
    with raises(Status.INVALID_VALUE, "element size"):
        fq.quantize(np.zeros((2, 64), np.int16), in_dtype="fp8_e4m3fn")


def test_inner_stride_must_be_one_element():
    with raises(Status.INVALID_VALUE, "innermost stride"):
        fq.quantize(np.zeros((4, 256), BF16)[:, ::2])
    with raises(Status.INVALID_VALUE, "row stride"):
        fq.quantize(np.zeros((4, 256), BF16)[::-1])


def test_too_small_or_wrong_outputs():
    x = np.ones((4, 256), BF16)
    with raises(Status.INSUFFICIENT_BUFFER, "out"):
        fq.quantize(x, out=np.empty((4, 255), ml_dtypes.float8_e4m3fn))
    with raises(Status.INSUFFICIENT_BUFFER, "out"):
        fq.quantize(x, out=np.empty((3, 256), ml_dtypes.float8_e4m3fn))
    with raises(Status.INVALID_VALUE, "dtype"):
        fq.quantize(x, out=np.empty((4, 256), np.int8))
    with raises(Status.INSUFFICIENT_BUFFER, "scales"):
        fq.quantize(x, scales=np.empty(7, np.float32))  # 4 rows x 2 groups need 8
    readonly = np.empty((4, 256), ml_dtypes.float8_e4m3fn)
    readonly.flags.writeable = False
    with raises(Status.INVALID_VALUE, "read-only"):
        fq.quantize(x, out=readonly)
    with raises(Status.INSUFFICIENT_BUFFER, "scales"):
        fq.quantize(x, scale_layout="col_major_tma", scale_dtype="e8m0", scale_rounding="pow2_ceil",
                    scales=np.empty(31, np.uint8))  # padded to 16 rows x 2 = 32 bytes


def test_library_rule_violations_carry_the_librarys_message():
    x = np.ones((4, 256), BF16)
    with raises(Status.INVALID_VALUE, "GROUP_SIZE"):
        fq.quantize(x, group_size=48)
    with raises(Status.INVALID_VALUE, "GATE_LAYOUT"):
        fq.quantize(x, activation="swiglu_oai", gate_layout="none")
    with raises(Status.NULL_POINTER, "STATIC_SCALE"):
        fq.quantize(x, scheme="per_tensor_static")
    with raises(Status.INVALID_VALUE, "odd"):
        fq.quantize(np.ones((4, 255), BF16), gate_layout="split")
    with raises(Status.INVALID_VALUE, "not a Activation"):
        fq.quantize(x, activation="swish")
    with pytest.raises(TypeError, match="unexpected keyword"):
        fq.quantize(x, activaton="silu")


def test_features_of_a_later_release_raise_not_supported():
    with raises(Status.NOT_SUPPORTED, "BLOCK_2D"):
        fq.quantize(np.ones((4, 256), BF16), scheme="block_2d", moe_layout="masked", moe_num_experts=2,
                    moe_counts=[1, 2])


def test_block_2d_writes_one_scale_per_128x128_tile():
    x = np.ones((130, 256), BF16)
    x[129, 255] = -4.0  # the bottom-right tile (2 rows x 128 columns) has amax 4
    q, s = fq.quantize(x, scheme="block_2d")
    assert s.shape == (2, 2)
    assert s[0, 0] == np.float32(1 / 448) and s[1, 1] == np.float32(4 / 448)


# ---------------------------------------------------------------------------------------------------------
# the descriptor API


def test_descriptor_api_round_trip_and_lifetime():
    with fq.Handle(fq.Backend.HOST) as h, fq.QuantDesc(activation="silu", gate_layout="split") as d:
        assert h.get(fq.HandleAttribute.BACKEND) is fq.Backend.HOST and h.get("device") == -1
        assert h.get("arch") == 0 and h.variants()
        assert d.get("activation") is fq.Activation.SILU and d.get("scheme") is fq.QuantScheme.PER_GROUP
        assert d.get("group_size") == 128 and d.get("output_type") is fq.DataType.FP8_E4M3FN
        assert abs(d.get("swiglu_alpha") - 1.702) < 1e-6
        d.set(fq.QuantDescAttribute.QMAX, 224.0)
        assert d.get("qmax") == 224.0
        prob = np.ones(4, np.float32)
        d.set("row_prob_pointer", prob)
        assert d.get("row_prob_pointer") == prob.ctypes.data
        d.set("output_type", ml_dtypes.float8_e5m2)
        assert d.get("output_type") is fq.DataType.FP8_E5M2
        with fq.TensorLayout(BF16, 4, 256, 300) as lin, fq.TensorLayout("fp8_e5m2", 4, 128) as lout:
            assert (lin.get("rows"), lin.get("cols"), lin.get("ld")) == (4, 256, 300)
            assert lin.get("type") is fq.DataType.BF16
            assert h.query_support(d, lin, lout).startswith("host")
            assert h.workspace_size(d, lin, lout) == 0
            assert d.scale_buffer_size(4, 128) == d.scale_buffer_info(4, 128).bytes == 16
    with pytest.raises(ValueError, match="closed"):
        d.get("activation")
    h2 = fq.Handle()
    h2.close()
    h2.close()  # idempotent


def test_raw_set_with_a_wrong_size_or_unknown_attribute_is_invalid_value():
    from fusedquant import _core
    with fq.QuantDesc() as d:
        buf = _core.ffi.new("int64_t*", 1)
        with raises(Status.INVALID_VALUE):
            _core.check(_core.lib.fqQuantDescSetAttribute(d.ptr, fq.QuantDescAttribute.ACTIVATION, buf, 8))
        with raises(Status.INVALID_VALUE):
            _core.check(_core.lib.fqQuantDescSetAttribute(d.ptr, 999, buf, 4))
        with raises(Status.INVALID_VALUE, "unknown attribute"):
            d.set(999, 1)


def test_scale_buffer_info_fields_follow_the_header():
    info = fq.scale_buffer_info(5, 384, scale_layout="col_major_tma", group_size=128)
    assert [f.upper() for f in info.__dataclass_fields__] == list(fq.ScaleInfo.__members__)
    assert (info.bytes, info.rows, info.cols, info.padded_rows, info.row_stride, info.col_stride) == \
        (96, 5, 3, 8, 4, 32)
    assert info.dtype is fq.DataType.FP32
    assert fq.scale_buffer_info(5, 192, group_size=128).cols == 2  # a partial last group counts


@pytest.mark.skipif(__import__("shutil").which("nvidia-smi") is not None, reason="a GPU may be present")
def test_cuda_handle_without_a_device_is_no_device():
    with raises(Status.NO_DEVICE):
        fq.Handle(fq.Backend.CUDA, 0)
