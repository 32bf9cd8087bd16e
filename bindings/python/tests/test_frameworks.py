"""PyTorch (CPU, CUDA) and CuPy arrays; on CUDA: every result must equal the host
reference's bytes (docs/spec.md §0). Skipped, not passed, where there is no CUDA device or no torch / cupy."""
import ml_dtypes
import numpy as np
import pytest

import fusedquant as fq

try:
    import torch
except ImportError:
    torch = None
try:
    import cupy
    HAVE_CUPY = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:  # not installed, or no device / driver
    cupy, HAVE_CUPY = None, False

needs_torch_cuda = pytest.mark.skipif(torch is None or not torch.cuda.is_available(), reason="no CUDA device")
needs_cupy = pytest.mark.skipif(not HAVE_CUPY, reason="no cupy CUDA device")

CASES = [
    dict(activation="silu", gate_layout="split", group_size=128),
    dict(activation="silu", gate_layout="split", group_size=128, scale_layout="col_major_tma",
         scale_dtype="e8m0", scale_rounding="pow2_ceil"),
    dict(activation="gelu_tanh", gate_layout="interleaved", scheme="per_token", out_dtype="int8"),
    dict(activation="swiglu_oai", gate_layout="block_interleaved", gate_order="up_first", group_size=32,
         scale_layout="col_major", out_dtype="fp8_e5m2"),
    dict(activation="relu_squared", gate_layout="split", scheme="per_tensor_dynamic", out_dtype="fp8_e4m3fnuz"),
]


def host_result(x_np, **attrs):
    q, s = fq.quantize(x_np, **attrs)
    return q.view(np.uint8), np.ascontiguousarray(s).view(np.uint8)  # logical scales, row-major


def as_bytes(a):
    """uint8 NumPy copy of a torch / cupy array's elements (any dtype)."""
    if torch is not None and isinstance(a, torch.Tensor):
        return a.contiguous().view(torch.uint8).cpu().numpy()
    return cupy.asnumpy(cupy.ascontiguousarray(a)).view(np.uint8)


@needs_torch_cuda
@pytest.mark.parametrize("attrs", CASES, ids=lambda a: "-".join(map(str, a.values())))
def test_torch_cuda_equals_the_host_reference_bit_for_bit(attrs):
    torch.manual_seed(0)
    x = torch.randn(67, 2 * 448, device="cuda", dtype=torch.bfloat16) * 3
    q, s = fq.quantize(x, **attrs)
    assert q.is_cuda and s.is_cuda and q.shape == (67, 448)
    q_host, s_host = host_result(x.cpu().view(torch.int16).numpy().view(ml_dtypes.bfloat16), **attrs)
    assert np.array_equal(as_bytes(q), q_host)
    assert np.array_equal(as_bytes(s), s_host)


@needs_torch_cuda
def test_torch_cuda_strided_rows_preallocated_outputs_and_a_side_stream():
    big = torch.randn(33, 1500, device="cuda", dtype=torch.bfloat16)
    x = big[:, 100:100 + 1024]
    out = torch.empty(33, 512, device="cuda", dtype=torch.uint8)
    info = fq.scale_buffer_info(33, 512, group_size=64, scale_layout="col_major_tma")
    scales = torch.full((info.bytes,), 0xFF, device="cuda", dtype=torch.uint8)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        q, s = fq.quantize(x, activation="silu", gate_layout="split", group_size=64,
                           scale_layout="col_major_tma", out=out, scales=scales)
    stream.synchronize()
    assert q is out and s is scales
    x_host = x.cpu().contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    scales_host = np.full(info.bytes, 0xFF, np.uint8)
    q_host, _ = fq.quantize(x_host, activation="silu", gate_layout="split", group_size=64,
                            scale_layout="col_major_tma", scales=scales_host)
    assert np.array_equal(out.cpu().numpy(), q_host.view(np.uint8))
    assert np.array_equal(scales.cpu().numpy(), scales_host)  # the whole storage, padding included


@needs_torch_cuda
def test_torch_cuda_static_scale_from_a_number_and_device_checks():
    x = torch.randn(8, 256, device="cuda", dtype=torch.float16)
    q, s = fq.quantize(x, scheme="per_tensor_static", static_scale=0.25)
    assert s.is_cuda and s.item() == 0.25
    q_host, _ = host_result(x.cpu().numpy(), scheme="per_tensor_static", static_scale=0.25)
    assert np.array_equal(as_bytes(q), q_host)
    with pytest.raises(fq.FusedQuantError) as e:
        fq.quantize(x, out=np.empty((8, 256), ml_dtypes.float8_e4m3fn))
    assert e.value.status == fq.Status.INVALID_VALUE
    with pytest.raises(fq.FusedQuantError) as e:
        fq.quantize(x, handle=fq.Handle())  # a host handle with device pointers
    assert e.value.status == fq.Status.INVALID_VALUE


@needs_torch_cuda
@pytest.mark.parametrize("scheme", ["per_group", "mxfp8"])
def test_torch_cuda_masked_moe_with_both_outputs_equals_the_host_reference(scheme):
    torch.manual_seed(1)
    e, max_m, h = 3, 40, 256
    x = torch.randn(e, max_m, 2 * h, device="cuda", dtype=torch.bfloat16) * 3
    counts = [40, 0, 17]
    kw = dict(activation="silu", gate_layout="split", scheme=scheme, moe_layout="masked", moe_num_experts=e,
              outputs=fq.Outputs.ROWWISE | fq.Outputs.COLUMNWISE, columnwise_transpose=1)
    if scheme == "mxfp8":
        kw.update(scale_dtype="e8m0", scale_layout="swizzled_128x4")
    else:
        kw.update(columnwise_block=32)
    q, s, tq, ts = fq.quantize(x, moe_counts=counts, **kw)
    x_np = x.cpu().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    hq, hs, htq, hts = fq.quantize(x_np, moe_counts=np.array(counts, np.int32), **kw)
    host_bytes = lambda a: np.ascontiguousarray(a).view(np.uint8)
    for i, n in enumerate(counts):  # rows past a count are not written: compare the valid ones
        assert np.array_equal(as_bytes(q[i, :n]), host_bytes(hq[i, :n]))
        assert np.array_equal(as_bytes(tq[i, :, :n]), host_bytes(htq[i, :, :n]))
    if scheme == "per_group":  # row-major scales [E, max_m, K_g]: valid rows; columnwise scales of written blocks
        for i, n in enumerate(counts):
            blocks = (n + 31) // 32
            assert np.array_equal(as_bytes(s[i, :n]), host_bytes(hs[i, :n]))
            assert np.array_equal(as_bytes(ts[i, :, :blocks]), host_bytes(hts[i, :, :blocks]))


@needs_torch_cuda
def test_torch_cuda_not_supported_features_raise():
    x = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(fq.FusedQuantError) as e:  # 128x128 weight blocks have no columnwise form
        fq.quantize(x, scheme="block_2d", activation="identity", outputs=fq.Outputs.ROWWISE | fq.Outputs.COLUMNWISE)
    assert e.value.status in (fq.Status.NOT_SUPPORTED, fq.Status.INVALID_VALUE)


@needs_cupy
def test_cupy_float16_equals_the_host_reference():
    x = (cupy.random.standard_normal((40, 2 * 256), dtype=cupy.float32) * 2).astype(cupy.float16)
    attrs = dict(activation="gelu_erf", gate_layout="split", group_size=64)
    q, s = fq.quantize(x, **attrs)
    assert isinstance(q, cupy.ndarray) and q.dtype == cupy.uint8  # CuPy has no fp8 dtype: raw bytes
    q_host, s_host = host_result(cupy.asnumpy(x), **attrs)
    assert np.array_equal(as_bytes(q), q_host) and np.array_equal(as_bytes(s), s_host)


@pytest.mark.skipif(torch is None, reason="no torch")
def test_torch_cpu_tensors_run_on_the_host_backend_and_come_back_as_tensors():
    x = torch.randn(12, 2 * 192, dtype=torch.bfloat16)
    big = torch.zeros(12, 500, dtype=torch.bfloat16)
    big[:, 10:10 + 384] = x
    attrs = dict(activation="silu", gate_layout="split", group_size=64, scale_layout="col_major_tma")
    q, s = fq.quantize(big[:, 10:10 + 384], **attrs)  # strided rows
    assert isinstance(q, torch.Tensor) and q.dtype == torch.float8_e4m3fn and q.shape == (12, 192)
    assert s.shape == (12, 3) and s.stride() == (1, 12)  # COL_MAJOR_TMA: ld = round_up(12, 4)
    q_host, s_host = host_result(x.view(torch.int16).numpy().view(ml_dtypes.bfloat16), **attrs)
    assert np.array_equal(as_bytes(q), q_host)
    assert np.array_equal(s.numpy(), np.asarray(fq.quantize(x.view(torch.int16).numpy().view(
        ml_dtypes.bfloat16), **attrs)[1]))
    out = torch.empty(12, 192, dtype=torch.uint8)
    assert fq.quantize(x, out=out, **attrs)[0] is out and np.array_equal(out.numpy(), q_host)


class DLPackOnly:
    """An array of a framework fusedquant does not know: it speaks DLPack (or the CUDA array interface) only."""

    def __init__(self, a, cuda_array_interface=False):
        self.a = a
        if cuda_array_interface:
            self.__cuda_array_interface__ = a.__cuda_array_interface__
        else:
            self.__dlpack__, self.__dlpack_device__ = a.__dlpack__, a.__dlpack_device__


def elements(a):
    """uint8 NumPy bytes of a NumPy / torch / cupy / JAX result."""
    if type(a).__module__.partition(".")[0] in ("jax", "jaxlib"):
        return np.asarray(a).view(np.uint8)
    return a.view(np.uint8) if isinstance(a, np.ndarray) else as_bytes(a)


def test_an_object_with_only_dlpack_is_read_in_place_and_equals_the_numpy_call():
    x = np.random.default_rng(3).standard_normal((6, 512)).astype(np.float16)
    attrs = dict(activation="silu", gate_layout="split", group_size=64)
    q, s = fq.quantize(DLPackOnly(x), **attrs)
    want_q, want_s = fq.quantize(x, **attrs)
    assert hasattr(q, "__dlpack__") and hasattr(s, "__dlpack__")
    assert np.array_equal(elements(q), want_q.view(np.uint8))
    assert np.array_equal(elements(np.ascontiguousarray(s) if isinstance(s, np.ndarray) else s.contiguous()),
                          np.ascontiguousarray(want_s).view(np.uint8))


@needs_torch_cuda
def test_a_cuda_array_interface_object_runs_on_its_gpu_and_nvfp4_leaves_the_amax_in_a_given_workspace():
    x = torch.randn(64, 256, device="cuda", dtype=torch.bfloat16)
    q, s = fq.quantize(DLPackOnly(x.view(torch.int16), cuda_array_interface=True), in_dtype="bf16", group_size=128)
    want_q, want_s = host_result(x.view(torch.int16).cpu().numpy().view(ml_dtypes.bfloat16), group_size=128)
    assert np.array_equal(as_bytes(q), want_q)
    workspace = torch.zeros(4, dtype=torch.uint8, device="cuda")
    fq.quantize(x, scheme="nvfp4", workspace=workspace)
    assert workspace.view(torch.float32).item() == x.float().abs().max().item()


@needs_torch_cuda
def test_numbers_go_to_the_gpu_from_pinned_memory_and_are_refused_during_capture():
    x = torch.randn(8, 256, device="cuda", dtype=torch.bfloat16)
    q, s = fq.quantize(x, scheme="per_tensor_static", static_scale=0.5)
    assert s.is_cuda and s.item() == 0.5
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(fq.FusedQuantError, match="static_scale: numbers cannot be copied to the GPU while"):
        with torch.cuda.graph(graph):
            fq.quantize(x, scheme="per_tensor_static", static_scale=0.5)


def test_jax_arrays_come_back_as_jax_arrays_where_jax_imports_the_dtype():
    """A JAX array (the device image has JAX) is read through DLPack; float32 scales come back as a JAX array,
    values of an fp8 dtype JAX's DLPack import may lack come back DLPack-capable."""
    jnp = pytest.importorskip("jax.numpy")
    x_np = np.random.default_rng(4).standard_normal((8, 256)).astype(ml_dtypes.bfloat16)
    q, s = fq.quantize(jnp.asarray(x_np), group_size=128)
    want_q, want_s = fq.quantize(x_np, group_size=128)
    assert type(s).__module__.partition(".")[0] in ("jax", "jaxlib")
    assert np.array_equal(np.asarray(s), want_s) and hasattr(q, "__dlpack__")
    assert np.array_equal(elements(q), want_q.view(np.uint8))
