"""MXFP8 / MXFP4 / NVFP4 (docs/spec.md §3.3) against ml_dtypes decoding of e8m0, fp8 and fp4 (float4_e2m1fn).
The host backend implements them; on a backend that answers NOT_SUPPORTED (no kernel for the scheme yet)
these oracle tests skip."""
import ml_dtypes
import numpy as np
import pytest

import fusedquant as fq
from test_quantize import rand_bf16, reference


def quantize_or_skip(x, **attrs):
    try:
        return fq.quantize(x, **attrs)
    except fq.FusedQuantError as e:
        if e.status == fq.Status.NOT_SUPPORTED:
            pytest.skip(f"not in this library version: {e.message}")
        raise


def unpack_fp4(packed, cols):
    """Decoded e2m1 values of bytes holding two per byte, element 2i in the low nibble (docs/spec.md §1)."""
    codes = np.stack([packed & 0xF, packed >> 4], axis=-1).reshape(packed.shape[0], -1)[:, :cols]
    return codes.astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float64)


def half_ulp(t, fmt):
    info = ml_dtypes.finfo(fmt)
    e = np.maximum(np.floor(np.log2(np.maximum(np.abs(t), 1e-300))), info.minexp)
    return 2.0 ** (e - info.nmant) / 2


def pow2_ceil(v):
    """2^ceil(log2 v): e8m0_roundup of docs/spec.md §3.3 for positive normal v."""
    m, e = np.frexp(v)
    return np.where(m == 0.5, v, np.ldexp(1.0, e))


def blocks(a, n):
    return a.reshape(a.shape[0], -1, n)


def test_fp4_unpacking_matches_the_spec_magnitudes():
    packed = np.array([[0x21, 0x43, 0x65, 0x87, 0xF7]], np.uint8)  # codes 1..7, 8 (-0), 7, 15
    assert unpack_fp4(packed, 10).tolist() == [[0.5, 1, 1.5, 2, 3, 4, 6, -0.0, 6, -6]]


@pytest.mark.parametrize("out_dtype,scheme", [("fp8_e4m3fn", "mxfp8"), ("fp8_e5m2", "mxfp8"),
                                              ("fp4_e2m1", "mxfp4")])
def test_mx_rceil_scales_and_values(rng, out_dtype, scheme):
    x = rand_bf16(rng, (9, 2 * 256))
    q, s = quantize_or_skip(x, activation="silu", gate_layout="split", scheme=scheme, out_dtype=out_dtype,
                            scale_dtype="e8m0", scale_layout="row_major")
    y, y_err = reference(x, "silu", "split")
    fmt = ml_dtypes.float4_e2m1fn if scheme == "mxfp4" else getattr(ml_dtypes, "float8_" + out_dtype[4:])
    qmax = float(ml_dtypes.finfo(fmt).max)
    scale = np.asarray(s).astype(np.float64)  # e8m0 decoded by ml_dtypes
    assert scale.shape == (9, 8)
    amax, amax_err = np.abs(blocks(y, 32)).max(-1), blocks(y_err, 32).max(-1)
    lo, hi = pow2_ceil((amax - amax_err) / qmax), pow2_ceil((amax + amax_err) / qmax)
    assert np.all((scale >= lo) & (scale <= hi))
    dec = unpack_fp4(q, 256) if scheme == "mxfp4" else q.astype(np.float64)
    t = y / np.repeat(scale, 32, axis=-1)
    assert np.all(np.abs(t) <= qmax * (1 + 1e-6)), "RCEIL: no element saturates"
    assert np.all(np.abs(dec - t) <= half_ulp(t, fmt) * (1 + 1e-9) + y_err / np.repeat(scale, 32, axis=-1))


def test_nvfp4_block_scales_and_values(rng):
    x = rand_bf16(rng, (5, 256))
    y, y_err = reference(x)
    g_amax = float(np.abs(y).max())
    q, s = quantize_or_skip(x, scheme="nvfp4", out_dtype="fp4_e2m1", scale_dtype="fp8_e4m3fn",
                            scale_layout="row_major", global_amax=g_amax)
    s_enc = 2688 / np.float32(g_amax)
    s_blk = np.asarray(s).astype(np.float64)  # e4m3 block scales decoded by ml_dtypes
    want = (np.abs(blocks(y, 16)).max(-1) * (s_enc / 6)).astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
    assert np.array_equal(s_blk, want)
    t = np.clip(y * s_enc / np.repeat(s_blk, 16, axis=-1), -6, 6)
    assert np.all(np.abs(unpack_fp4(q, 256) - t) <= half_ulp(t, ml_dtypes.float4_e2m1fn) * (1 + 1e-6) + 1e-6)


def test_swizzled_128x4_places_each_e8m0_scale_where_spec_4_says(rng):
    m, h = 130, 32 * 9  # two 128-row tiles, 9 groups -> 3 column tiles of 4
    x = rand_bf16(rng, (m, h))
    kw = dict(scheme="mxfp8", scale_dtype="e8m0")
    _, ref = quantize_or_skip(x, scale_layout="row_major", **kw)
    _, flat = quantize_or_skip(x, scale_layout="swizzled_128x4", **kw)
    n_kt, mp = 3, 256
    flat = np.asarray(flat).view(np.uint8).reshape(-1)
    assert flat.size >= mp * n_kt * 4
    seen = np.zeros(flat.size, bool)
    for i in range(m):
        for k in range(9):
            off = (i // 128) * n_kt * 512 + (k // 4) * 512 + (i % 32) * 16 + ((i % 128) // 32) * 4 + k % 4
            assert flat[off] == np.asarray(ref).view(np.uint8)[i, k]
            seen[off] = True
    assert not flat[~seen].any(), "padding is written with zero"


def test_pow2_ceil_is_e8m0_roundup():
    assert pow2_ceil(np.array([0.75, 1.0, 3.0, 2.0**-127])).tolist() == [1.0, 1.0, 4.0, 2.0**-127]
