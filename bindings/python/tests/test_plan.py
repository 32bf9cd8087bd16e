"""Plans (fqPlanCreate / fqPlanExecute) from Python: the Plan object, and the plan quantize() keeps per
configuration so that a repeated call is one fqPlanExecute."""
import numpy as np
import pytest

import fusedquant as fq
from fusedquant import _api


def _bf16(rng, shape):
    return (rng.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def test_a_plan_writes_the_bytes_of_quantize_and_outlives_its_objects(rng):
    h = fq.Handle(fq.Backend.HOST)
    x = _bf16(rng, (5, 512))
    desc = fq.QuantDesc(activation="silu", gate_layout="split", group_size=64)
    lin, lout = fq.TensorLayout("bf16", 5, 512), fq.TensorLayout("fp8_e4m3fn", 5, 256)
    y, s = np.zeros((5, 256), np.uint8), np.zeros(desc.scale_buffer_size(5, 256), np.uint8)
    h.quantize(desc, lin, x.ctypes.data, lout, y.ctypes.data, s.ctypes.data, s.nbytes)
    plan = fq.Plan(h, desc, lin, lout)
    assert plan.scale_buffer_size == s.nbytes and plan.workspace_size == 0
    assert plan.variant_name() == h.query_support(desc, lin, lout)
    desc.set("activation", "relu")  # later changes do not reach the plan
    for obj in (desc, lin, lout):
        obj.close()
    y2, s2 = np.zeros_like(y), np.zeros_like(s)
    plan.run(x.ctypes.data, y2.ctypes.data, s2.ctypes.data, s2.nbytes)
    assert y2.tobytes() == y.tobytes() and s2.tobytes() == s.tobytes()
    with pytest.raises(fq.FusedQuantError) as e:
        plan.run(x.ctypes.data, y2.ctypes.data, s2.ctypes.data, s2.nbytes - 1)
    assert e.value.status == fq.Status.INSUFFICIENT_BUFFER and "scalesSizeInBytes" in str(e.value)


def test_quantize_reuses_one_plan_per_configuration_and_writes_the_same_bytes(rng):
    fq.clear_cache()
    kw = dict(activation="silu", gate_layout="split", group_size=128)
    x = _bf16(rng, (3, 1024))
    first = fq.quantize(x, in_dtype="bf16", **kw)
    plans = dict(_api._cache.plan)
    assert len(plans) == 1
    again = fq.quantize(x, in_dtype="bf16", **kw)
    assert dict(_api._cache.plan) == plans  # a hit: the same Plan object, no new one
    fq.clear_cache()  # the same problem without a cached plan: the same bytes
    fresh = fq.quantize(x, in_dtype="bf16", **kw)
    for a, b, c in zip(first, again, fresh):
        assert a.tobytes() == b.tobytes() == c.tobytes()


def test_a_changed_shape_stride_or_attribute_misses_the_plan_cache(rng):
    fq.clear_cache()
    kw = dict(activation="silu", gate_layout="split")
    fq.quantize(_bf16(rng, (3, 1024)), in_dtype="bf16", **kw)
    fq.quantize(_bf16(rng, (4, 1024)), in_dtype="bf16", **kw)  # rows
    fq.quantize(_bf16(rng, (4, 2048))[:, :1024], in_dtype="bf16", **kw)  # row stride
    fq.quantize(_bf16(rng, (4, 1024)), in_dtype="bf16", group_size=64, **kw)  # an attribute
    assert len(_api._cache.plan) == 4
    small = fq.quantize(_bf16(rng, (2, 256)), in_dtype="bf16", **kw)
    assert small[0].shape == (2, 128) and len(_api._cache.plan) == 5


def test_pointer_attributes_and_columnwise_buffers_take_the_unplanned_path(rng):
    fq.clear_cache()
    x = _bf16(rng, (4, 256))
    fq.quantize(x, in_dtype="bf16", activation="silu", gate_layout="split", row_prob=np.ones(4, np.float32))
    fq.quantize(x, in_dtype="bf16", outputs="columnwise")
    assert not getattr(_api._cache, "plan", None)


def test_the_planned_call_path_returns_what_the_full_path_returns(rng):
    fq.clear_cache()
    x = _bf16(rng, (2, 3, 512))  # leading axes fold into rows
    for scheme in ("per_group", "mxfp8", "nvfp4", "per_token"):
        kw = dict(activation="silu", gate_layout="interleaved", scheme=scheme)
        full = fq.quantize(x, in_dtype="bf16", **kw)
        planned = fq.quantize(x, in_dtype="bf16", **kw)  # the remembered call: one fqPlanExecute
        assert len(_api._cache.call) >= 1
        for a, b in zip(full, planned):
            assert a.shape == b.shape and a.dtype == b.dtype and a.strides == b.strides
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


def test_a_callers_handle_takes_the_unplanned_path(rng):
    fq.clear_cache()
    h = fq.Handle(fq.Backend.HOST)
    fq.quantize(_bf16(rng, (2, 256)), in_dtype="bf16", activation="silu", gate_layout="split", handle=h)
    assert not getattr(_api._cache, "plan", None) and not getattr(_api._cache, "call", None)


@pytest.mark.parametrize("scheme, layout", [("per_group", "row_major"), ("per_group", "col_major"), ("mxfp8", "swizzled_128x4"),
                                            ("mxfp8", "packed_ue8m0"), ("nvfp4", "swizzled_128x4"), ("per_token", "row_major")])
def test_a_remembered_torch_call_reads_the_tensor_alone_and_returns_what_the_full_path_returns(rng, scheme, layout):
    torch = pytest.importorskip("torch")
    fq.clear_cache()
    x = torch.from_numpy(_bf16(rng, (2, 3, 512)).astype(np.int16)).view(torch.bfloat16)
    kw = dict(activation="silu", gate_layout="split", scheme=scheme, scale_layout=layout)
    full = fq.quantize(x, **kw)
    calls = len(_api._cache.call)
    assert calls == 2  # by the tensor's geometry and by its Array's: the next call finds the first
    planned = fq.quantize(x, **kw)
    again = fq.quantize(x.clone(), **kw)  # another tensor of the same geometry: the same remembered call
    assert len(_api._cache.call) == calls
    for a, b, c in zip(full, planned, again):
        assert a.shape == b.shape == c.shape and a.dtype == b.dtype == c.dtype and a.stride() == b.stride() == c.stride()
        raw = [t.contiguous().view(torch.uint8).numpy().tobytes() for t in (a, b, c)]
        assert raw[0] == raw[1] == raw[2]
    other = fq.quantize(x[:1], **kw)  # another shape misses
    assert other[0].shape[:2] == (1, 3) and len(_api._cache.call) == calls + 2
