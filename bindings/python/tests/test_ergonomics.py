"""quantize()'s keyword defaults follow the scheme and the scale layout; a gated activation needs its gate
layout; NVFP4 gives back the global amax it used; repeated calls reuse their descriptor (issue 47)."""
import numpy as np
import pytest

import fusedquant as fq
from test_quantize import rand_bf16


@pytest.mark.parametrize("scheme,explicit", [
    ("mxfp8", dict(scale_dtype="e8m0")),
    ("mxfp4", dict(out_dtype="fp4_e2m1", scale_dtype="e8m0")),
    ("nvfp4", dict(out_dtype="fp4_e2m1", scale_dtype="fp8_e4m3fn", global_amax=4.0)),
])
def test_a_scheme_implies_its_value_and_scale_types(rng, scheme, explicit):
    x = rand_bf16(rng, (4, 128))
    amax = {k: v for k, v in explicit.items() if k == "global_amax"}
    q, s = fq.quantize(x, scheme=scheme, **amax)
    q_ref, s_ref = fq.quantize(x, scheme=scheme, **explicit)
    assert np.array_equal(np.asarray(q).view(np.uint8), np.asarray(q_ref).view(np.uint8))
    assert np.array_equal(np.asarray(s).view(np.uint8), np.asarray(s_ref).view(np.uint8))
    info = fq.scale_buffer_info(4, 128, scheme=scheme)
    assert info.dtype == fq.DataType[explicit["scale_dtype"].upper()]


def test_packed_ue8m0_implies_e8m0_pow2_scales(rng):
    x = rand_bf16(rng, (8, 512))
    q, s = fq.quantize(x, scale_layout="packed_ue8m0")
    q_ref, s_ref = fq.quantize(x, scale_layout="packed_ue8m0", scale_dtype="e8m0", scale_rounding="pow2_ceil")
    assert np.array_equal(np.asarray(q).view(np.uint8), np.asarray(q_ref).view(np.uint8))
    assert np.array_equal(np.asarray(s).view(np.uint8), np.asarray(s_ref).view(np.uint8))


def test_explicit_values_win_and_contradictions_get_the_library_error(rng):
    x = rand_bf16(rng, (4, 128))
    q, _ = fq.quantize(x, scheme="mxfp8", out_dtype="fp8_e5m2")  # the scale type is still implied
    assert "e5m2" in str(q.dtype)
    with pytest.raises(fq.FusedQuantError, match="FQ_QUANT_DESC_SCALE_TYPE"):
        fq.quantize(x, scheme="mxfp8", scale_dtype="fp32")
    with pytest.raises(fq.FusedQuantError, match="FQ_QUANT_DESC_SCALE_TYPE"):
        fq.quantize(x, scale_layout="packed_ue8m0", scale_rounding="none")


@pytest.mark.parametrize("activation", ["silu", "gelu_tanh", "swiglu_oai", "relu"])
def test_an_activation_without_gate_layout_is_refused(rng, activation):
    x = rand_bf16(rng, (8, 256))
    with pytest.raises(ValueError, match="gate_layout.*'split', 'interleaved', 'block_interleaved'"):
        fq.quantize(x, activation=activation)


def test_gate_layout_none_asks_for_the_plain_activation_and_split_for_silu_and_mul(rng):
    x = rand_bf16(rng, (8, 256))
    q, _ = fq.quantize(x, activation="silu", gate_layout="none")
    assert q.shape == (8, 256)
    q, _ = fq.quantize(x, activation="silu", gate_layout="split")
    assert q.shape == (8, 128)
    q, _ = fq.quantize(x)  # identity needs no gate layout
    assert q.shape == (8, 256)


class _Counting:
    """Counts the library objects and queries quantize() makes, through the names _api uses."""

    def __init__(self, monkeypatch):
        from fusedquant import _api, _core
        self.descs = self.layouts = self.scale_infos = self.workspaces = 0
        real_desc, real_layout = _api.QuantDesc, _api.TensorLayout
        info, ws = _core.QuantDesc.scale_buffer_info, _core.Handle.workspace_size

        def desc(*a, **k):
            self.descs += 1
            return real_desc(*a, **k)

        def layout(*a, **k):
            self.layouts += 1
            return real_layout(*a, **k)

        def scale_info(*a, **k):
            self.scale_infos += 1
            return info(*a, **k)

        def workspace(*a, **k):
            self.workspaces += 1
            return ws(*a, **k)

        monkeypatch.setattr(_api, "QuantDesc", desc)
        monkeypatch.setattr(_api, "TensorLayout", layout)
        monkeypatch.setattr(_core.QuantDesc, "scale_buffer_info", scale_info)
        monkeypatch.setattr(_core.Handle, "workspace_size", workspace)
        _api.clear_cache()

    def counts(self):
        return self.descs, self.layouts, self.scale_infos, self.workspaces


def test_a_repeated_call_creates_and_queries_nothing_again(rng, monkeypatch):
    n = _Counting(monkeypatch)
    x = rand_bf16(rng, (4, 256))
    kw = dict(activation="silu", gate_layout="split", group_size=64, scale_layout="col_major")
    q1, s1 = fq.quantize(x, **kw)
    assert n.counts() == (1, 2, 1, 1)
    q2, s2 = fq.quantize(x.copy(), **kw)
    assert n.counts() == (1, 2, 1, 1), "the second call reuses descriptor, layouts and queries"
    assert np.array_equal(np.asarray(q1).view(np.uint8), np.asarray(q2).view(np.uint8))
    assert np.array_equal(np.asarray(s1), np.asarray(s2))
    fq.quantize(rand_bf16(rng, (6, 256)), **kw)  # another shape: new layouts, same descriptor
    assert n.counts() == (1, 4, 2, 2)
    fq.quantize(x, **{**kw, "group_size": 128})  # another configuration: a new descriptor
    assert n.counts()[0] == 2


def test_a_cached_descriptor_takes_each_calls_pointer_attributes(rng, monkeypatch):
    from fusedquant import _api
    x = rand_bf16(rng, (4, 128))

    def nvfp4(amax, fresh):
        if fresh:
            _api.clear_cache()
        return np.asarray(fq.quantize(x, scheme="nvfp4", global_amax=amax)[0]).view(np.uint8).copy()

    n = _Counting(monkeypatch)
    cached = [nvfp4(a, fresh=False) for a in (2.0, 8.0, 2.0)]
    assert n.descs == 1
    fresh = [nvfp4(a, fresh=True) for a in (2.0, 8.0, 2.0)]
    assert all(np.array_equal(c, f) for c, f in zip(cached, fresh))
    assert not np.array_equal(cached[0], cached[1])
    for scale in (0.5, 4.0):
        _, s = fq.quantize(x, scheme="per_tensor_static", static_scale=scale)
        assert float(np.asarray(s)[0]) == scale
