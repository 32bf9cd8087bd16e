"""The torch operators (fusedquant/torch_ops.py): opcheck, torch.compile, CUDA graphs, the functional names.
CPU tensors run the host backend (these run in CI); the CUDA tests run on the device and skip elsewhere."""
import contextlib
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("torch.library.custom_op needs torch >= 2.4", allow_module_level=True)

import fusedquant as fq  # noqa: E402
from fusedquant import torch_ops  # noqa: E402

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
DEVICES = ["cpu", pytest.param("cuda", marks=cuda)]


def same_bytes(a, b):
    if a is None or b is None:
        return a is b
    a, b = torch.as_tensor(a).cpu(), torch.as_tensor(b).cpu()
    return a.shape == b.shape and torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


@contextlib.contextmanager
def counting_plans():
    """The plans torch_ops makes for calls in the block: a list with an entry for each."""
    made, new = [], torch_ops._new_planned_op
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(torch_ops, "_new_planned_op", lambda *a, **k: made.append(1) or new(*a, **k))
        yield made


def act(device, rows=8, width=512, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(rows, width, generator=g) * 3).to(torch.bfloat16).to(device)


# Every kind of configuration the general operator serves: schemes, layouts, both outputs, MoE.
CONFIGS = {
    "silu_group128": dict(activation="silu", gate_layout="split", group_size=128),
    "group64_col_major_tma_ue8m0": dict(group_size=64, scale_layout="col_major_tma", scale_rounding="pow2_ceil"),
    "packed_ue8m0": dict(scale_layout="packed_ue8m0"),
    "per_token_int8": dict(scheme="per_token", out_dtype="int8"),
    "per_tensor_dynamic": dict(scheme="per_tensor_dynamic"),
    "block2d": dict(scheme="block_2d"),
    "mxfp8_swizzled": dict(scheme="mxfp8", scale_layout="swizzled_128x4"),
    "mxfp4": dict(scheme="mxfp4"),
    "nvfp4": dict(scheme="nvfp4", scale_layout="swizzled_128x4"),
    "rowwise_and_columnwise": dict(outputs=int(fq.Outputs.ROWWISE | fq.Outputs.COLUMNWISE), scheme="mxfp8"),
    "columnwise_transposed": dict(outputs="columnwise", columnwise_transpose=1, scheme="mxfp8"),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", CONFIGS)
def test_opcheck_of_the_general_operator(name, device):
    x = act(device)
    torch.library.opcheck(torch.ops.fusedquant.quantize, (x, torch_ops._config(CONFIGS[name])))


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_of_the_moe_layouts_static_scale_and_out_variant(device):
    x = act(device, rows=12)
    offsets = torch.tensor([0, 5, 5, 12], dtype=torch.int32, device=device)
    moe = torch_ops._config(dict(activation="silu", gate_layout="split", moe_layout="contiguous",
                                 moe_num_experts=3))
    torch.library.opcheck(torch.ops.fusedquant.quantize, (x, moe), dict(moe_offsets=offsets))
    masked = torch_ops._config(dict(moe_layout="masked", moe_num_experts=3, scheme="mxfp8"))
    counts = torch.tensor([4, 0, 3], dtype=torch.int32, device=device)
    torch.library.opcheck(torch.ops.fusedquant.quantize, (x.view(3, 4, 512), masked), dict(moe_counts=counts))
    scale = torch.tensor([0.25], device=device)
    torch.library.opcheck(torch.ops.fusedquant.quantize, (x, "scheme=per_tensor_static"), dict(static_scale=scale))
    out = torch.empty(8, 512, dtype=torch.uint8, device=device)  # fp8 bytes (opcheck computes on its inputs)
    scales = torch.empty(8, 4, dtype=torch.float32, device=device)
    torch.library.opcheck(torch.ops.fusedquant.quantize_out, (act(device), "group_size=128", out, scales, None, None))


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_of_repack_scales(device):
    _, s = fq.mxfp8_quantize(act(device), scale_layout="row_major")
    args = (s.reshape(-1).contiguous().view(torch.uint8), 8, 16, "row_major", "swizzled_128x4", "e8m0")
    torch.library.opcheck(torch.ops.fusedquant.repack_scales, args)
    swizzled = torch_ops.repack_scales(*args[:3], src_layout="row_major", dst_layout="swizzled_128x4",
                                       scale_dtype="e8m0")
    assert same_bytes(swizzled, fq.mxfp8_quantize(act(device))[1].view(torch.uint8))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rows", [0, 1, 8, 130])
@pytest.mark.parametrize("name", CONFIGS)
def test_the_operator_writes_the_bytes_of_the_python_layer(name, rows, device):
    x, attrs = act(device, rows=rows), dict(CONFIGS[name])
    outs = torch.ops.fusedquant.quantize(x, torch_ops._config(attrs))
    ref = fq.quantize(x, **attrs, **({"global_amax": outs[4]} if name == "nvfp4" else {}))
    for got, want in zip(outs[:4], ref):
        if want is None:
            assert got.numel() == 0
        elif rows == 0:  # nothing written: the same sizes
            assert storage(got).numel() == storage(want).numel()
        else:
            assert torch.equal(storage(got), storage(want))


def storage(t):
    """The bytes of t's whole storage (the padding of a scale layout included)."""
    t = torch.as_tensor(t)
    return torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())


@pytest.mark.parametrize("rows", [0, 1, 8])
def test_a_repeated_eager_call_is_one_plan_execution(rows, monkeypatch):
    """After the first call of a configuration and input geometry, the eager operator and the functional names
    run the plan they made then: no config parsing, descriptor, layout or scale-size query per call."""
    x, config = act("cpu", rows=rows), "activation=silu;gate_layout=split;group_size=128"
    first = torch.ops.fusedquant.quantize(x, config), fq.silu_and_mul_quant(x), fq.mxfp8_quantize(x)

    def refused(*args, **kwargs):
        raise AssertionError("rebuilt on a repeated call")
    for module, name in ((torch_ops, "_parse"), (torch_ops, "_config"), (fq.QuantDesc, "__init__"),
                         (fq.TensorLayout, "__init__"), (fq.QuantDesc, "scale_buffer_info"),
                         (fq.Handle, "quantize")):
        monkeypatch.setattr(module, name, refused)
    runs = []
    run = fq.Plan.run
    monkeypatch.setattr(fq.Plan, "run", lambda *args: runs.append(1) or run(*args))
    again = torch.ops.fusedquant.quantize(x, config), fq.silu_and_mul_quant(x), fq.mxfp8_quantize(x)
    assert len(runs) == (0 if torch_ops.NATIVE_KERNEL else 3)  # the C++ kernel executes the plan itself
    for got, want in zip(again, first):
        for g, w in zip(got, want):  # nothing is written for no rows: the same sizes
            assert same_bytes(storage(g), storage(w)) if rows else storage(g).numel() == storage(w).numel()


@pytest.mark.parametrize("device", DEVICES)
def test_the_cpp_kernel_is_used_where_the_build_made_it(device):
    """libfusedquant_torch beside the library (a build with torch >= 2.10, and the wheel) is loaded, and runs a
    repeated call without Python; fusedquant.clear_cache() drops its plans (the next call plans again); its
    counts say so."""
    built = (fq.library_path.parent / "libfusedquant_torch.so").exists()
    assert torch_ops.NATIVE_KERNEL == (built and os.environ.get("FUSEDQUANT_TORCH_KERNEL", "1") != "0")
    if not torch_ops.NATIVE_KERNEL:
        pytest.skip("no libfusedquant_torch beside " + str(fq.library_path) + ", or FUSEDQUANT_TORCH_KERNEL=0")
    x, config = act(device, rows=3), "activation=silu;gate_layout=split;group_size=64"
    first = torch.ops.fusedquant.quantize(x, config)
    with counting_plans() as made:
        again = torch.ops.fusedquant.quantize(x, config)
        assert made == []
        fq.clear_cache()
        assert torch_ops.native_counts() == dict(planned=0, planned_here=0, general=0, refused=0, last_refusal="")
        torch.ops.fusedquant.quantize(x, config)
        assert made == [1]
        torch.ops.fusedquant.quantize(x.clone(), config)  # a new tensor of the same geometry: the same plan
        assert made == [1]
        counts = torch_ops.native_counts()
        assert (counts["planned"], counts["general"], counts["refused"]) == (1, 1, 0), counts
        for rows in (0, 1, 2, 17):  # other token counts: planned by the C++ kernel from the first call's family
            y = act(device, rows=rows, seed=rows)
            got, want = torch.ops.fusedquant.quantize(y, config), torch_ops._outputs(y, config, None)
            torch_ops._run(y, config, {}, *want)
            for g, w in zip(got, want):  # no rows: nothing is written, only the sizes compare
                assert same_bytes(storage(g), storage(w)) if rows else storage(g).numel() == storage(w).numel()
        assert made == [1]
        counts = torch_ops.native_counts()
        assert (counts["planned"], counts["planned_here"], counts["refused"]) == (5, 4, 0), counts
        strided = act(device, rows=6).view(2, 3, 512)[:, ::2]  # leading axes that do not fold: the general path
        with pytest.raises(RuntimeError, match="do not fold"):
            torch.ops.fusedquant.quantize(strided, config)
        made.clear()
        torch.ops.fusedquant.quantize(x, config + ";scale_rounding=pow2_ceil")  # another configuration
        assert made == [1]
    assert all(same_bytes(g, w) for g, w in zip(again, first))


def test_threads_calling_the_operator_while_the_cache_is_cleared_get_the_same_bytes():
    """The C++ kernel's plans are shared by the calls running them: clear_cache() on one thread while others
    execute destroys none in use."""
    import threading
    config = "activation=silu;gate_layout=split;group_size=128"
    inputs = [act("cpu", rows=r) for r in (1, 3, 8)]
    want = [torch.ops.fusedquant.quantize(x, config) for x in inputs]
    failures = []

    def work(seed):
        for i in range(150):
            k = (seed + i) % len(inputs)
            got = torch.ops.fusedquant.quantize(inputs[k], config)
            if not all(same_bytes(g, w) for g, w in zip(got, want[k])):
                failures.append((seed, i))
            if i % 25 == seed:
                fq.clear_cache()
    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def _pointer_problems(device):
    """(config, x, pointer arguments) of the planned calls with pointer arguments: a static scale, a scale bound,
    NVFP4's given global amax, MoE counts and offsets (zero-filled rows no expert owns), routing probabilities."""
    f32 = dict(dtype=torch.float32, device=device)
    i32 = dict(dtype=torch.int32, device=device)
    silu = dict(activation="silu", gate_layout="split")
    x = act(device, rows=12)
    return [
        (dict(scheme="per_tensor_static", **silu), x, dict(static_scale=torch.tensor([0.25], **f32))),
        (dict(scheme="per_token", **silu), x, dict(scale_ub=torch.tensor([0.01], **f32))),
        (dict(scheme="nvfp4", **silu), x, dict(global_amax=torch.tensor([40.0], **f32))),
        (dict(moe_layout="masked", moe_num_experts=3, **silu), x.view(3, 4, 512),
         dict(moe_counts=torch.tensor([4, 0, 3], **i32))),
        (dict(moe_layout="contiguous", moe_num_experts=3, **silu), x,
         dict(moe_offsets=torch.tensor([0, 5, 5, 12], **i32), row_prob=torch.linspace(0, 1, 12, **f32))),
    ]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(5))
def test_planned_calls_with_pointer_arguments_follow_the_tensors_they_are_given(device, case):
    """A call with pointer arguments is planned with their addresses: repeated, it gives the general path's bytes
    (zero-filled where the library writes nothing); with new values in the same tensors, the new values' bytes;
    with other tensors, a new plan."""
    attrs, x, pointers = _pointer_problems(device)[case]
    config = torch_ops._config(attrs)

    def general():
        outs = torch_ops._outputs(x, config, pointers.get("global_amax"))
        torch_ops._run(x, config, pointers, *outs)
        return outs
    with counting_plans() as made:
        fq.clear_cache()
        for _ in range(3):
            got = torch.ops.fusedquant.quantize(x, config, **pointers)
            assert all(same_bytes(storage(g), storage(w)) for g, w in zip(got, general()))
        assert made == [1], torch_ops.native_counts()
        more = act(device, rows=24, seed=1).view(*x.shape[:-2], -1, 512)  # more rows, the same pointer tensors
        if "row_prob" in pointers:  # 12 probabilities for 24 rows: refused as the general path refuses it
            with pytest.raises(RuntimeError, match="row_prob: 12 values"):
                torch.ops.fusedquant.quantize(more, config, **pointers)
        else:
            want = torch_ops._outputs(more, config, pointers.get("global_amax"))
            torch_ops._run(more, config, pointers, *want)
            got = torch.ops.fusedquant.quantize(more, config, **pointers)
            assert all(same_bytes(storage(g), storage(w)) for g, w in zip(got, want))
        made.clear()
        torch.ops.fusedquant.quantize(x, config, **pointers)
        for t in pointers.values():  # new values at the same addresses: the same plan reads them
            t.mul_(0.5) if t.dtype == torch.float32 else None
        got = torch.ops.fusedquant.quantize(x, config, **pointers)
        assert all(same_bytes(storage(g), storage(w)) for g, w in zip(got, general()))
        assert made == []
        pointers = {k: v.clone() for k, v in pointers.items()}  # other tensors: another plan
        got = torch.ops.fusedquant.quantize(x, config, **pointers)
        assert all(same_bytes(storage(g), storage(w)) for g, w in zip(got, general()))
        assert made == [1]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(5))
def test_the_out_form_plans_rowwise_buffers_and_writes_what_the_general_path_writes(device, case):
    """quantize_out with rowwise buffers: its first call checks and writes them (the general path) and plans; the
    next calls with buffers of the same geometry run the plan, into whichever buffers they are given."""
    attrs, x, pointers = _pointer_problems(device)[case]
    config = torch_ops._config(attrs)
    want = torch_ops._outputs(x, config, pointers.get("global_amax"))
    torch_ops._run(x, config, pointers, *want)
    with counting_plans() as made:
        fq.clear_cache()
        for _ in range(3):
            out, scales = torch.zeros_like(want[0]), torch.zeros_like(want[1])  # new buffers each call
            torch.ops.fusedquant.quantize_out(x, config, out, scales, None, None, **pointers)
            assert same_bytes(out, want[0]) and same_bytes(scales, want[1])
        assert made == [1]
        with pytest.raises(RuntimeError, match="out"):  # a buffer of another geometry: checked again
            torch.ops.fusedquant.quantize_out(x, config, out[:-1], scales, None, None, **pointers)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("scheme", ["mxfp8", "nvfp4"])
def test_the_out_form_takes_buffers_of_the_e8m0_and_fp4_dtypes(device, scheme):
    """quantize_out writes MXFP8's scales into a float8_e8m0fnu buffer and NVFP4's values into a float4_e2m1fn_x2
    one (where torch has them): the functional operator's bytes, and, with the C++ kernel, planned from the second
    call on (its keys compare dtypes the stable ABI of torch 2.10 cannot name)."""
    dtype = {"mxfp8": "float8_e8m0fnu", "nvfp4": "float4_e2m1fn_x2"}[scheme]
    if not hasattr(torch, dtype):
        pytest.skip(f"torch {torch.__version__} has no {dtype}")
    x = act(device, rows=6)
    config = torch_ops._config(dict(scheme=scheme, activation="silu", gate_layout="split"))
    given = dict(global_amax=torch.tensor([40.0], dtype=torch.float32, device=device)) if scheme == "nvfp4" else {}
    want = torch.ops.fusedquant.quantize(x, config, **given)
    fq.clear_cache()
    for _ in range(3):
        out, scales = torch.full_like(want[0], 0x55), torch.full_like(want[1], 0x55)
        if scheme == "mxfp8":
            scales = scales.view(getattr(torch, dtype))
        else:
            out = out.view(getattr(torch, dtype))
        torch.ops.fusedquant.quantize_out(x, config, out, scales, None, None, **given)
        assert same_bytes(out.view(torch.uint8), want[0].view(torch.uint8))
        assert same_bytes(scales.view(torch.uint8), want[1].view(torch.uint8))
    if torch_ops.NATIVE_KERNEL:
        counts = torch_ops.native_counts()
        assert (counts["planned"], counts["general"], counts["refused"]) == (2, 1, 0), counts


def test_a_refused_call_raises_the_library_message_from_the_operator_and_its_error_from_the_functional_names():
    """The operator raises a RuntimeError with the library's message (from the C++ kernel, or the Python kernel's
    FusedQuantError, a RuntimeError); the functional names raise the FusedQuantError itself."""
    x = act("cpu", rows=2)
    with pytest.raises(RuntimeError, match="GROUP_SIZE: 96 is not"):
        torch.ops.fusedquant.quantize(x, "activation=silu;gate_layout=split;group_size=96")
    with pytest.raises(fq.FusedQuantError, match="GROUP_SIZE: 96 is not") as refused:
        fq.silu_and_mul_quant(x, group_size=96)
    assert refused.value.status == fq.Status.INVALID_VALUE


def test_functional_names_default_from_the_scheme_and_match_the_python_layer():
    x = act("cpu")
    v, s = fq.silu_and_mul_quant(x)
    rv, rs = fq.quantize(x, activation="silu", gate_layout="split", group_size=128)
    assert v.dtype == torch.float8_e4m3fn and v.shape == (8, 256) and same_bytes(v, rv) and same_bytes(s, rs)
    assert fq.mxfp8_quantize(x)[1].dtype == getattr(torch, "float8_e8m0fnu", torch.uint8)
    q, bs, amax = fq.nvfp4_quantize(x)
    assert q.dtype == getattr(torch, "float4_e2m1fn_x2", torch.uint8) and q.shape == (8, 256)
    assert bs.dtype == torch.float8_e4m3fn
    assert amax.item() == x.float().abs().max().item()  # identity: the global amax is max |x|
    rq, rbs = fq.quantize(x, scheme="nvfp4", scale_layout="swizzled_128x4", global_amax=amax)
    assert same_bytes(q, rq) and same_bytes(bs, rbs)
    given = torch.tensor([8.0])
    assert fq.nvfp4_quantize(x, given)[2] is given
    v, s = fq.per_token_group_quant(x, 64, column_major_scales=True, use_ue8m0=True)
    rv, rs = fq.quantize(x, group_size=64, scale_layout="col_major_tma", scale_rounding="pow2_ceil")
    assert same_bytes(v, rv) and same_bytes(s, rs) and s.stride() == (1, 8)
    assert same_bytes(fq.swiglu_oai_quant(x)[0], fq.quantize(x, activation="swiglu_oai", gate_layout="interleaved")[0])
    assert same_bytes(fq.gelu_and_mul_quant(x, approximate="tanh")[1],
                      fq.quantize(x, activation="gelu_tanh", gate_layout="split")[1])
    assert fq.per_token_quant(x)[1].shape == (8, 1)
    assert fq.per_tensor_quant(x, 0.5)[1].tolist() == [0.5]
    assert fq.per_tensor_quant(x)[1].numel() == 1


def test_a_gated_activation_name_without_gate_layout_is_an_error_in_the_functional_api_only():
    x = act("cpu")
    with pytest.raises(ValueError, match="gate_layout"):
        torch_ops.quantize(x, activation="silu")
    values = torch.ops.fusedquant.quantize(x, "activation=silu")[0]  # the general operator: the C semantics
    assert values.shape == (8, 512)


def test_nvfp4_with_a_masked_moe_layout_on_the_host_needs_the_global_amaxes():
    x = act("cpu", rows=8).view(2, 4, 512)
    with pytest.raises(fq.FusedQuantError, match="global_amax"):
        fq.nvfp4_quantize(x, moe_layout="masked", moe_num_experts=2, moe_counts=torch.tensor([4, 2], dtype=torch.int32))


@pytest.mark.parametrize("name", CONFIGS)
def test_the_row_laws_of_symbolic_shapes_equal_the_library_queries(name):
    """torch.compile(dynamic=True) sizes the outputs of a symbolic row count by laws fitted to the library's
    queries (torch_ops._row_laws): they must equal the queries at every row count."""
    config = torch_ops._config(CONFIGS[name])
    laws = torch_ops._row_laws(config, 512, False)
    assert laws is not None
    for rows in range(2, 300):
        want = torch_ops._row_sizes(config, 512, False, rows)
        assert want == {name: a * -(-rows // p) + b for name, p, a, b in laws}, rows


def gemm_problem(device, m=40, k=256, n=256, e=2):
    """fp8 A [M, K], B [E, N, K] (no NaN codes), their float32 scales and group offsets leaving rows unowned."""
    g = torch.Generator().manual_seed(5)

    def fp8(*shape):
        bits = torch.randint(0, 256, shape, generator=g, dtype=torch.uint8)
        bits[(bits & 0x7F) == 0x7F] = 0x38
        return bits.view(torch.float8_e4m3fn).to(device)
    a, b = fp8(m, k), fp8(e, n, k)
    a_scales = (torch.rand(k // 128, -(-m // 4) * 4, generator=g) * 2.0**-6).to(device)
    b_scales = (torch.rand(e, n // 128, k // 128, generator=g) * 2.0**-7).to(device)
    offsets = torch.tensor([0, 13, 33], dtype=torch.int32, device=device)
    return a, a_scales, b, b_scales, offsets


BOTH = int(fq.Outputs.ROWWISE | fq.Outputs.COLUMNWISE)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("attrs", [dict(activation="silu", gate_layout="split", group_size=128),
                                   dict(activation="silu", gate_layout="split", group_size=32, scale_layout="col_major",
                                        outputs=BOTH, columnwise_block=32),
                                   dict(scheme="mxfp8", outputs=BOTH)])
def test_opcheck_of_the_grouped_gemm_and_its_bytes(device, attrs):
    a, sa, b, sb, offsets = gemm_problem(device)
    args = (a.view(torch.uint8), sa, b.view(torch.uint8), sb, torch_ops._config(attrs), 2, offsets)  # fp8 bytes
    if device == "cuda" and "activation" not in attrs:  # the operator gives the library's refusal (the CUDA
        # GEMM's epilogue is gated PER_GROUP with fp32 scales; the host backend runs the others)
        with pytest.raises(fq.FusedQuantError, match="fuses gated activations only"):
            torch.ops.fusedquant.grouped_gemm(*args, want_d=True)
        return
    torch.library.opcheck(torch.ops.fusedquant.grouped_gemm, args, dict(want_d=True))
    c, d, values, scales, col_values, col_scales = torch.ops.fusedquant.grouped_gemm(*args, want_d=True)
    r = fq.grouped_gemm(a, sa, b, sb, group_offsets=offsets, d=True, **attrs)
    owned = slice(0, 33)  # rows no group owns stay zero in the operator, unwritten in fq.grouped_gemm
    assert same_bytes(c[owned], r.c[owned]) and same_bytes(d[owned], r.d[owned])
    assert same_bytes(values[owned], torch.as_tensor(r.values)[owned])


class MLP(torch.nn.Module):
    """Two FP8 GEMMs with fq's activation quantization between them (the torch._scaled_mm of the device is
    replaced by a dequantizing matmul on the CPU)."""

    def __init__(self, hidden=256, inter=512, device="cpu"):
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.w1 = torch.nn.Parameter((torch.randn(2 * inter, hidden, generator=g) / 16).to(device), requires_grad=False)
        self.w2 = torch.nn.Parameter((torch.randn(hidden, inter, generator=g) / 16).to(device), requires_grad=False)

    def forward(self, x):
        q, s = fq.per_tensor_quant(x.to(torch.bfloat16))
        h = (q.float() * s) @ self.w1.t()
        q2, s2 = fq.silu_and_mul_quant(h.to(torch.bfloat16), group_size=128)
        y = (q2.float().view(*q2.shape[:-1], -1, 128) * s2.unsqueeze(-1)).flatten(-2) @ self.w2.t()
        q3, s3, amax = fq.nvfp4_quantize(y.to(torch.bfloat16), scale_layout="row_major")
        return y, q3.view(torch.uint8), s3.view(torch.uint8), amax


def test_torch_compile_fullgraph_dynamic_has_no_graph_break_and_the_bytes_of_eager():
    torch._dynamo.reset()
    model = MLP()
    compiled = torch.compile(model, fullgraph=True, dynamic=True, backend="aot_eager")
    for rows in (16, 24, 200):
        x = act("cpu", rows=rows, width=256, seed=rows)
        with torch._dynamo.config.patch(error_on_recompile=rows != 16):  # one graph for every token count
            got = compiled(x)
        for g, w in zip(got, model(x)):
            assert same_bytes(g, w)
    explained = torch._dynamo.explain(model)(act("cpu", rows=16, width=256))
    assert explained.graph_break_count == 0


def test_numbers_in_a_compiled_function_become_constants_of_the_graph():
    torch._dynamo.reset()

    def f(x):
        return fq.per_tensor_quant(x, 0.5)[0], fq.nvfp4_quantize(x, 6.0)[0]
    x = act("cpu", rows=16)
    for got, want in zip(torch.compile(f, fullgraph=True, dynamic=True, backend="aot_eager")(x), f(x)):
        assert same_bytes(got, want)


# ---- CUDA: the device runs these ----

@cuda
def test_cuda_graph_capture_and_replay_including_nvfp4_device_amax():
    x = act("cuda", rows=64)
    scale = torch.tensor([0.5], device="cuda")
    fq.nvfp4_quantize(x), fq.silu_and_mul_quant(x), fq.per_tensor_quant(x, scale)  # warm up outside capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        q, bs, amax = fq.nvfp4_quantize(x)
        v, s = fq.silu_and_mul_quant(x)
        vs, _ = fq.per_tensor_quant(x, scale)
    for seed in (1, 2):
        x.copy_(act("cuda", rows=64, seed=seed))
        scale.fill_(0.25 * seed)
        graph.replay()
        torch.cuda.synchronize()
        assert amax.item() == x.float().abs().max().item()
        rq, rbs, ramax = fq.nvfp4_quantize(x.cpu())
        assert same_bytes(q, rq) and same_bytes(bs, rbs) and same_bytes(amax, ramax)
        assert all(same_bytes(a, b) for a, b in zip((v, s), fq.silu_and_mul_quant(x.cpu())))
        assert same_bytes(vs, fq.per_tensor_quant(x.cpu(), scale.cpu())[0])


@cuda
def test_numbers_are_refused_during_capture_and_device_tensors_are_not():
    x = act("cuda")
    fq.per_tensor_quant(x, torch.tensor([0.5], device="cuda"))
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(fq.FusedQuantError, match="static_scale: numbers cannot be copied to the GPU while"):
        with torch.cuda.graph(graph):
            fq.quantize(x, scheme="per_tensor_static", static_scale=0.5)


@cuda
def test_done_when_of_issue_47():
    """The 'Done when' script: silu_and_mul + fp8 group 128 and NVFP4 on a CUDA tensor, and torch.compile
    (fullgraph) of a two-GEMM FP8 MLP of fq's operators and torch._scaled_mm."""
    x = torch.randn(64, 2 * 2048, device="cuda", dtype=torch.bfloat16)
    q, s = fq.silu_and_mul_quant(x, group_size=128)
    assert q.shape == (64, 2048) and q.dtype == torch.float8_e4m3fn and s.shape == (64, 16)
    q4, bs, amax = fq.nvfp4_quantize(x)
    assert q4.shape == (64, 2048) and amax.is_cuda
    assert fq.silu_and_mul_quant(x[:8].cpu(), scheme="per_tensor_dynamic")[1].numel() == 1  # no group size

    w1 = (torch.randn(2 * 1024, 512, device="cuda") / 16).to(torch.float8_e4m3fn)
    w2 = (torch.randn(512, 1024, device="cuda") / 16).to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")

    def mlp(h):
        qa, sa = fq.per_tensor_quant(h)
        g = torch._scaled_mm(qa, w1.t(), scale_a=sa.reshape(()), scale_b=one, out_dtype=torch.bfloat16)
        qb, sb = fq.silu_and_mul_quant(g, scheme="per_tensor_dynamic")
        return torch._scaled_mm(qb, w2.t(), scale_a=sb.reshape(()), scale_b=one, out_dtype=torch.bfloat16)
    h = torch.randn(64, 512, device="cuda", dtype=torch.bfloat16)
    torch._dynamo.reset()
    assert same_bytes(torch.compile(mlp, fullgraph=True)(h), mlp(h))


def test_dlpack_only_objects_are_read_in_place_and_come_back_as_dlpack_arrays():
    class Foreign:  # a framework fusedquant does not know: DLPack only
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()
    x = act("cpu")
    v, s = fq.quantize(Foreign(x), activation="silu", gate_layout="split")
    rv, rs = fq.quantize(x, activation="silu", gate_layout="split")
    assert hasattr(v, "__dlpack__") and same_bytes(v, rv) and same_bytes(s, rs)
    assert np.array_equal(np.from_dlpack(s), rs.numpy())
