"""repack_scales (fqScaleRepack): layouts rewritten bit for bit, read back through NumPy views written here
(the SWIZZLED_128X4 6-D view as a reshape + transpose), real quantize() outputs, MoE row offsets, errors; on a
CUDA device (torch), the GPU's bytes equal the host backend's."""
import ml_dtypes
import numpy as np
import pytest

import fusedquant as fq
from test_quantize import rand_bf16

try:
    import torch
except ImportError:
    torch = None

E8M0 = ml_dtypes.float8_e8m0fnu


def random_e8m0(rng, shape):
    return rng.integers(0, 255, size=shape, dtype=np.uint8).view(E8M0)


def swizzled_to_logical(buf, batch, rows, groups):
    """[batch, rows, groups] from SWIZZLED_128X4 storage: storage axes (L, m tile, k tile, 32, 4, 4) are the
    6-D view (32, 4, ceil(M/128), 4, ceil(K/4), L) in storage order; row = 128 tile + 32 i1 + i0, group = 4 tile + j."""
    mt, kt = -(-rows // 128), -(-groups // 4)
    t = np.asarray(buf).view(np.uint8).reshape(batch, mt, kt, 32, 4, 4)
    return t.transpose(0, 1, 4, 3, 2, 5).reshape(batch, mt * 128, kt * 4)


def test_row_major_to_swizzled_and_back_matches_the_6d_view_and_zero_padding(rng):
    batch, rows, groups = 2, 130, 7
    s = random_e8m0(rng, (batch, rows, groups))
    sw = fq.repack_scales(s, rows, groups, batch=batch, src_layout="row_major", dst_layout="swizzled_128x4")
    assert sw.dtype == E8M0 and sw.size == fq.scale_repack_size("e8m0", batch, rows, groups, "swizzled_128x4")
    logical = swizzled_to_logical(sw, batch, rows, groups)
    assert np.array_equal(logical[:, :rows, :groups], s.view(np.uint8))
    padding = logical.copy()
    padding[:, :rows, :groups] = 0
    assert not padding.any()
    back = fq.repack_scales(sw, rows, groups, batch=batch, src_layout="swizzled_128x4", dst_layout="row_major")
    assert np.array_equal(back.view(np.uint8), s.view(np.uint8).reshape(-1))


def test_repacked_quantize_scales_equal_quantize_in_the_other_layout(rng):
    x = rand_bf16(rng, (33, 9 * 32))
    for scheme, out_dtype, scale_dtype, groups, layouts in [
            ("mxfp8", "fp8_e4m3fn", "e8m0", 9, ["col_major", "col_major_tma", "swizzled_128x4", "packed_ue8m0"]),
            ("nvfp4", "fp4_e2m1", "fp8_e4m3fn", 18, ["col_major", "col_major_tma", "swizzled_128x4"])]:
        attrs = dict(scheme=scheme, out_dtype=out_dtype, scale_dtype=scale_dtype)
        _, rm = fq.quantize(x, scale_layout="row_major", **attrs)
        for layout in layouts:
            want = np.empty(fq.scale_buffer_info(33, 9 * 32, scale_layout=layout, **attrs).bytes, np.uint8)
            fq.quantize(x, scale_layout=layout, scales=want, **attrs)
            got = fq.repack_scales(rm, 33, groups, src_layout="row_major", dst_layout=layout)
            assert got.view(np.uint8).tobytes() == want.tobytes(), (scheme, layout)


def test_fp32_scales_col_major_tma_to_row_major(rng):
    x = rand_bf16(rng, (5, 2 * 256))
    tma = np.empty(4 * 8, np.float32)  # 4 columns of round_up(5, 4) = 8 rows
    fq.quantize(x, activation="silu", gate_layout="split", group_size=64, scale_layout="col_major_tma", scales=tma)
    _, rm = fq.quantize(x, activation="silu", gate_layout="split", group_size=64)
    got = fq.repack_scales(tma, 5, 4, src_layout="col_major_tma", dst_layout="row_major")
    assert got.dtype == np.float32 and np.array_equal(got.reshape(5, 4), rm)


def test_stacked_moe_scales_to_per_expert_swizzled_blocks_and_back(rng):
    counts = [37, 0, 128, 5]  # expert 1 is empty
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    total, groups = int(offsets[-1]), 6
    s = random_e8m0(rng, (total, groups))
    blocks = fq.repack_scales(s, 128, groups, row_offsets=offsets, stacked_rows=total, src_layout="row_major",
                              dst_layout="swizzled_128x4")
    logical = swizzled_to_logical(blocks, len(counts), 128, groups)
    for e, n in enumerate(counts):
        assert np.array_equal(logical[e, :n, :groups], s.view(np.uint8)[offsets[e]:offsets[e + 1]])
        assert not logical[e, n:].any() and not logical[e, :, groups:].any()
    back = fq.repack_scales(blocks, 128, groups, row_offsets=list(offsets), stacked_rows=total,
                            batching="blocks_to_stacked", src_layout="swizzled_128x4", dst_layout="row_major")
    assert np.array_equal(back.view(np.uint8), s.view(np.uint8).reshape(-1))


def test_preallocated_out_is_written_and_returned():
    s = np.arange(8, dtype=np.float32)
    out = np.full(16, -1.0, np.float32)
    got = fq.repack_scales(s, 4, 2, src_layout="row_major", dst_layout="col_major_tma", out=out)
    assert got is out
    assert out[:8].tolist() == [0, 2, 4, 6, 1, 3, 5, 7] and out[8:].tolist() == [-1] * 8  # only its 8 bytes x 4


def test_errors_carry_the_status_and_the_argument():
    s = np.zeros(8, np.float32)
    with pytest.raises(fq.FusedQuantError) as e:
        fq.repack_scales(s, 4, 2, src_layout="row_major", dst_layout="packed_ue8m0")
    assert e.value.status == fq.Status.INVALID_VALUE and e.value.message.startswith("dst_layout: PACKED_UE8M0")
    with pytest.raises(fq.FusedQuantError) as e:
        fq.repack_scales(s, 4, 2, src_layout="row_major", dst_layout="col_major", out=np.zeros(7, np.float32))
    assert e.value.status == fq.Status.INSUFFICIENT_BUFFER and "dstSizeInBytes" in e.value.message
    with pytest.raises(fq.FusedQuantError) as e:
        fq.repack_scales(s, 5, 2, src_layout="row_major", dst_layout="col_major")
    assert e.value.status == fq.Status.INSUFFICIENT_BUFFER and "srcSizeInBytes" in e.value.message
    with pytest.raises(fq.FusedQuantError) as e:
        fq.repack_scales(np.zeros(8, np.uint8), 4, 2, src_layout="row_major", dst_layout="col_major")
    assert e.value.status == fq.Status.INVALID_VALUE and "scale_dtype" in e.value.message
    with pytest.raises(fq.FusedQuantError) as e:
        fq.repack_scales(np.zeros(8, np.uint8), 4, 2, scale_dtype="e8m0", row_offsets=[0, 4, 9], batch=3,
                         stacked_rows=4, src_layout="row_major", dst_layout="col_major")
    assert "row_offsets" in e.value.message


@pytest.mark.skipif(torch is None or not torch.cuda.is_available(), reason="no CUDA device")
def test_torch_cuda_repack_equals_the_host_bytes(rng):
    counts = [3, 0, 140, 9]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    total = int(offsets[-1])
    s = rng.integers(0, 256, size=(total, 11), dtype=np.uint8)
    for dst in ["row_major", "col_major", "col_major_tma", "swizzled_128x4", "packed_ue8m0"]:
        want = fq.repack_scales(s, 160, 11, scale_dtype="e8m0", row_offsets=offsets, stacked_rows=total,
                                src_layout="row_major", dst_layout=dst)
        got = fq.repack_scales(torch.from_numpy(s).cuda(), 160, 11, scale_dtype="e8m0",
                               row_offsets=torch.from_numpy(offsets).cuda(), stacked_rows=total,
                               src_layout="row_major", dst_layout=dst)
        torch.cuda.synchronize()
        assert got.is_cuda
        assert got.cpu().view(torch.uint8).numpy().tobytes() == np.asarray(want).view(np.uint8).tobytes(), dst
