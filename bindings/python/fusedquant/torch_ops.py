"""fusedquant's operations as PyTorch operators: torch.ops.fusedquant.* (torch.library, torch >= 2.4).

Importing this module registers the operators; `import fusedquant` imports it on first use of a name below.
They take and return torch tensors (CPU tensors run the host backend, CUDA tensors their GPU on torch's current
stream), allocate their outputs with torch, and have fake implementations whose shapes come from the library's
own queries, so torch.compile(fullgraph=True) traces through them and CUDA graphs capture them.

The general operators keep the C semantics (an activation without a gate layout is the plain activation); the
functional names below are the documented entry points and follow the scheme (README.md).
"""
import contextlib
import functools
import math
import operator
import os
import threading

import torch

from . import _api, _arrays, _core, _gemm
from ._core import DataType, scale_repack_size, to_enum

_A = _api.QuantDescAttribute
_POINTERS = ("static_scale", "scale_ub", "row_prob", "global_amax", "moe_offsets", "moe_counts")


# ---- attributes travel through the operator schema as one canonical string ----

def _config(attributes):
    """'name=value;...' of quantize()'s non-pointer keywords, sorted: enum members by name, dtypes by name."""
    items = []
    for key, value in sorted(attributes.items()):
        if value is None:
            continue
        if isinstance(value, torch.dtype):
            value = _arrays.dtype_name(value)
        elif hasattr(value, "name") and isinstance(value, int):  # an IntEnum member (Outputs may be a mask)
            value = value.name.lower() if value.name else int(value)
        items.append(f"{key}={int(value) if isinstance(value, bool) else value}")
    return ";".join(items)


@functools.lru_cache(maxsize=256)
def _parsed(config):
    def value(text):
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
        return text
    return tuple((k, value(v)) for k, v in (item.split("=", 1) for item in config.split(";") if item))


def _parse(config):
    """{name: value} of a config string (a new dict: callers may add to it)."""
    return dict(_parsed(config))


def _torch_dtype(name):
    """The torch dtype of a library dtype name in the operators' outputs: FP4 pairs and E8M0 scales as uint8
    (torch implements few operations on their dtypes; the functional names view them as those dtypes)."""
    return torch.uint8 if name in ("fp4x2", "float8_e8m0fnu") else _arrays.framework_dtype("torch", name)


@functools.lru_cache(maxsize=256)
def _geometry(config, lead, width, has_global_amax):
    """What a quantize call of `config` on rows [*lead, width] writes, from the library's queries:
    {"values": (shape, dtype), "scales": (elements, dtype, info), "col_values": ..., "col_scales": ...,
    "amax": elements, "cols": the output's columns, "out_type": its DataType} (entries None when not written)."""
    attrs = _api._attributes(_parse(config))
    rows = math.prod(lead)
    with _api._descriptor(attrs) as (desc, key):
        gated = desc.get(_A.GATE_LAYOUT) != _api.GateLayout.NONE
        cols, out_type = (width // 2 if gated else width), desc.get(_A.OUTPUT_TYPE)
        packed = out_type == DataType.FP4_E2M1
        value_dtype = "fp4x2" if packed else _arrays.TYPE_TO_DTYPE[out_type.name]
        outputs = int(desc.get(_A.OUTPUTS))
        g = dict.fromkeys(("values", "scales", "col_values", "col_scales"))
        g["cols"], g["out_type"] = cols, out_type
        if outputs & _api.Outputs.ROWWISE:
            info = _api._scale_info(desc, key, rows, cols)
            g["values"] = ((*lead, -(-cols // 2) if packed else cols), value_dtype)
            g["scales"] = (*_api.scale_storage(info), info)
        if outputs & _api.Outputs.COLUMNWISE:
            info = _api._scale_info(desc, key, rows, cols, "columnwise")
            g["col_values"] = (_api.columnwise_shape(desc, lead, rows, cols), value_dtype)
            g["col_scales"] = (*_api.scale_storage(info), info)
        nvfp4 = desc.get(_A.SCHEME) == _api.QuantScheme.NVFP4
        g["nvfp4"], g["amax"] = nvfp4, max(desc.get(_A.MOE_NUM_EXPERTS), 1) if nvfp4 and not has_global_amax else 0
        g["moe"] = desc.get(_A.MOE_LAYOUT) != _api.MoeLayout.NONE
        g["col_transposed"] = bool(desc.get(_A.COLUMNWISE_TRANSPOSE))
    return g


# ---- symbolic row counts (torch.compile with dynamic shapes) ----
# The library's queries take concrete sizes. Every size that depends on the row count R is, for the layouts of
# docs/spec.md §4, a law a * ceil(R / P) + b (P: the rows a layout pads to, or a columnwise block): each law is
# fitted to the queries at two row counts and checked against them at others, so a symbolic R stays symbolic
# (one compiled graph serves every token count). Where no law fits (MoE layouts) R is specialized. The width
# is always specialized (a model's hidden sizes are fixed).
_PERIODS = (1, 4, 16, 32, 128)
_CHECKS = (2, 3, 5, 17, 31, 33, 100, 127, 129, 255, 256, 257, 1000, 4097)


def _row_sizes(config, width, has_global_amax, rows):
    """{name: size} of every size of the outputs of `rows` rows: values shapes, scale storage elements and
    bytes, and the scale view's shape and strides (in storage elements) where the layout is affine."""
    g = _geometry(config, (rows,), width, has_global_amax)
    sizes = {}
    for key in ("values", "col_values"):
        if g[key]:
            sizes.update({(key, i): n for i, n in enumerate(g[key][0])})
    for key in ("scales", "col_scales"):
        if g[key]:
            elements, dtype, info = g[key]
            view = _api.scale_view_geometry(info, _arrays.itemsize(dtype))
            sizes.update({(key, "elements"): elements, (key, "bytes"): info.bytes})
            if view:
                sizes.update({(key, "shape", i): n for i, n in enumerate(view[0])})
                sizes.update({(key, "stride", i): st for i, st in enumerate(view[1])})
    return sizes


def _constant(fn):
    """fn as a constant of the graph under torch.compile (its arguments are constants there), its results
    cached by its (hashable) arguments. (Dynamo traces into an lru_cache wrapper: the cache sits inside.)"""
    cached = functools.lru_cache(maxsize=1024)(fn)

    def constant(*args):
        return cached(*args)
    constant.__name__, constant.__doc__ = fn.__name__, fn.__doc__
    return torch.compiler.assume_constant_result(constant)


@_constant
def _row_laws(config, width, has_global_amax, rows=None):
    """((name, P, a, b), ...): size(R) = a * ceil(R / P) + b for every size of _row_sizes and every R >= 2;
    for a concrete `rows` the sizes themselves (P 1, a 0); None where no law fits. Constants for torch.compile."""
    if rows is not None:
        return tuple((name, 1, 0, n) for name, n in _row_sizes(config, width, has_global_amax, rows).items())
    if _parse(config).get("moe_layout", "none") not in ("none", 0):
        return None
    samples = {r: _row_sizes(config, width, has_global_amax, r)
               for r in {*_CHECKS, *(k * p for p in _PERIODS for k in (2, 3))}}
    laws = []
    for name in samples[2]:
        for p in _PERIODS:
            a = samples[3 * p][name] - samples[2 * p][name]
            b = samples[2 * p][name] - 2 * a
            if all(samples[r][name] == a * -(-r // p) + b for r in _CHECKS):
                laws.append((name, p, a, b))
                break
        else:
            return None
    return tuple(laws)


def _sizes(config, lead, width, has_global_amax):
    """{name: size} of _row_sizes for a lead shape whose sizes may be symbolic (SymInts)."""
    rows = math.prod(lead)
    laws = _row_laws(config, width, has_global_amax)
    if laws is None or rows < 2:  # the laws hold from 2 rows (a symbolic size is >= 2 under torch.compile)
        laws = _row_laws(config, width, has_global_amax, _static(rows))
    return {name: a * ((rows + p - 1) // p) + b for name, p, a, b in laws}


def _static(n):
    """n as an int; torch.compile specializes a symbolic size here (operator.index: dynamo turns a SymInt into
    a constant with a guard, where int() keeps it symbolic)."""
    return operator.index(n)


@_constant
def _structure(config, width, has_global_amax):
    """What a call writes, as constants for torch.compile: {"values", "scales", "col_values", "col_scales": the
    dtype name or None when not written; "col_transposed", "moe", "no_scales" (PER_TENSOR_STATIC): bools;
    "nvfp4"; "amax": how many global amaxes the operator returns}."""
    experts = max(int(_parse(config).get("moe_num_experts", 0)), 1)
    g = _geometry(config, (2 * experts,), width, has_global_amax)
    out = {key: g[key] and g[key][1] for key in ("values", "scales", "col_values", "col_scales")}
    return {**out, "col_transposed": g["col_transposed"], "moe": g["moe"], "nvfp4": g["nvfp4"], "amax": g["amax"],
            "no_scales": bool(g["scales"]) and g["scales"][2].bytes == 0}


def _outputs(x, config, global_amax):
    """New outputs of the general operator on x (the fake implementation's too)."""
    width, has_global_amax = _static(x.shape[-1]), global_amax is not None
    st = _structure(config, width, has_global_amax)
    sizes = _sizes(config, tuple(x.shape[:-1]), width, has_global_amax)
    # Under a MoE layout the library leaves rows no expert owns unwritten: new outputs start zeroed there, so
    # an operator's result is a function of its inputs. PER_TENSOR_STATIC's unwritten scale slot likewise.
    allocate = x.new_zeros if st["moe"] or st["no_scales"] else x.new_empty

    def new(key):
        if st[key] is None:
            return x.new_empty((0,), dtype=torch.uint8)
        if key.endswith("scales"):
            shape = (sizes[(key, "elements")],)
        elif key == "values" or not st["col_transposed"]:
            shape = (*x.shape[:-1], sizes[(key, 1)])
        else:
            shape = tuple(sizes[(key, i)] for i in range(3 if st["moe"] else 2))
        return allocate(shape, dtype=_torch_dtype(st[key]))
    return (new("values"), new("scales"), new("col_values"), new("col_scales"),
            x.new_empty((st["amax"],), dtype=torch.float32))


def _raw(t):
    """A tensor the Python layer accepts: FP4 pairs as their bytes."""
    return t.view(torch.uint8) if t.dtype == getattr(torch, "float4_e2m1fn_x2", None) else t


def _host_global_amax(x, attrs, pointers, amax):
    """NVFP4 on the host backend: the global amax the library uses, written to `amax` (one float32; the GPU
    backend leaves it in the workspace instead). It is the PER_TENSOR_DYNAMIC scale of the same activation
    with qmax 1 and no floor: s = max(amax / 1, 0) = amax, computed by the library."""
    probe = {k: v for k, v in attrs.items() if k in ("activation", "gate_layout", "gate_order", "gate_block_width",
                                                      "intermediate_rounding", "swiglu_alpha", "swiglu_beta",
                                                      "swiglu_limit")}
    _api.quantize(x, scheme="per_tensor_dynamic", out_dtype="fp8_e4m3fn", qmax=1.0, min_scale=float.fromhex("0x1p-149"),
                  scales=amax, row_prob=pointers.get("row_prob"), gate_layout=probe.pop("gate_layout", "none"),
                  **probe)


def _run(x, config, pointers, out, scales, col_out, col_scales, amax):
    """quantize() of the Python layer into the given torch tensors."""
    attrs = _parse(config)
    g = _geometry(config, tuple(x.shape[:-1]), x.shape[-1], pointers.get("global_amax") is not None)
    workspace = None
    if g["amax"] and x.device.type == "cpu":
        if g["moe"]:
            raise _api.FusedQuantError(_api.Status.NOT_SUPPORTED, "global_amax: NVFP4 with a MoE layout on the host "
                                       "backend needs the per-expert global amaxes as global_amax=")
        _host_global_amax(x, attrs, pointers, amax)
        pointers = {**pointers, "global_amax": amax}
    elif g["amax"]:
        workspace = amax  # the GPU reduces the global amax in the workspace and leaves it there
    attrs.setdefault("gate_layout", "none")  # the C semantics: an activation alone is the plain activation
    _api.quantize(x, out=_raw(out) if g["values"] else None, scales=scales if g["scales"] else None,
                  col_out=_raw(col_out) if g["col_values"] else None,
                  col_scales=col_scales if g["col_scales"] else None, workspace=workspace,
                  **{k: v for k, v in pointers.items() if v is not None}, **attrs)


# ---- the eager path: one plan per configuration, input geometry and pointer arguments ----
# A call whose outputs are the rowwise values and scales alone (no columnwise output, no NVFP4 amax to compute) is
# one fqPlanExecute into new outputs: the plan (with the pointer arguments' addresses, which it reads at each
# execution), the output shapes and the workspace size are worked out on the first call of its key and kept in
# the Python layer's per-thread cache (fusedquant.clear_cache() drops them), or handed over to the C++ kernel.
# Other calls take _run's general path.

class _PlannedOp:
    """The eager operator for one (config, x geometry, pointer arguments): what it allocates (values (shape, dtype),
    scale storage (elements, dtype), zero-filled where the library leaves bytes unwritten: MoE rows no expert owns,
    PER_TENSOR_STATIC's scale slot, as _outputs), the plan it runs (fusedquant's torch_run) and the empty tensors it
    returns for the outputs it does not write (columnwise values and scales, global amax): the same ones every call,
    since an empty tensor holds nothing to overwrite and each new one costs a dispatcher call."""
    __slots__ = ("plan", "values", "scales", "ws_size", "zeroed", "unwritten", "family")

    def __init__(self, plan, values, scales, ws_size, zeroed, device, family=None):
        self.plan, self.values, self.scales, self.ws_size, self.zeroed = plan, values, scales, ws_size, zeroed
        self.family = family  # for the C++ kernel: (descriptor it takes over, input / output DataType, columns)
        self.unwritten = (torch.empty(0, dtype=torch.uint8, device=device),
                          torch.empty(0, dtype=torch.uint8, device=device),
                          torch.empty(0, dtype=torch.float32, device=device))

    def __call__(self, x):
        return (*_api.torch_run(self.plan, x, self.values, self.scales, self.ws_size, zeroed=self.zeroed),
                *self.unwritten)

    def run_into(self, x, out, scales):
        """The out= form: one execution into the caller's buffers (those its plan was made for)."""
        _api.torch_execute(self.plan, x, out, scales, self.ws_size)


def _device_index(t):
    """A tensor's CUDA device index, -1 for host memory (the C++ kernel's keys count devices so)."""
    return t.device.index if t.is_cuda else -1


def _pointer_key(given):
    """The key of a call's pointer arguments: (address, dtype, elements, device index (-1: host)) of each given
    tensor, None for each absent; None for the whole when one is not contiguous (the general path takes it)."""
    key = []
    for t in given:
        if t is None:
            key.append(None)
        elif not t.is_contiguous():
            return None
        else:
            key.append((t.data_ptr(), t.dtype, t.numel(), _device_index(t)))
    return tuple(key)


def _planned_op(config, x, given):
    """The _PlannedOp of config on x's geometry with the pointer arguments `given`, or None where the call takes
    the general path (or is refused there, with the library's message). With the C++ kernel this is its miss:
    the plan is made here and handed over to it after this call (_run_planned), so it is not kept here too."""
    pointer_key = _pointer_key(given)
    if pointer_key is None:
        return None
    if _NATIVE is not None:
        return _new_planned_op(config, x, given)
    key = (config, x.device, x.dtype, x.shape, x.stride(), pointer_key)
    return _api._lru("torch_op", key, lambda: _new_planned_op(config, x, given))


def _run_planned(planned, config, x, given):
    """planned(x); then, with the C++ kernel, the plan handed over to it for the next call of this key."""
    outputs = planned(x)
    if _NATIVE is not None:
        _NATIVE.remember(config, x, given, planned, *outputs[:2])
    return outputs


def _new_planned_op(config, x, given, out=None):
    """The plan of a call (its outputs new, or the out= form's buffer `out`, already checked by the general path),
    or None where the general path takes it."""
    xa = _arrays.wrap(x)
    if xa.dtype not in _arrays.DTYPE_TO_TYPE:
        return None
    lead, rows, width, ld = _api._rows("x", xa)
    has_global_amax = given[_POINTERS.index("global_amax")] is not None
    g = _geometry(config, tuple(lead), width, has_global_amax)
    if g["values"] is None or g["col_values"] is not None or g["amax"]:
        return None
    st = _structure(config, width, has_global_amax)
    attrs = _api._attributes({"gate_layout": "none", **_parse(config)})
    backend = _api.Backend.HOST if xa.device < 0 else _api.Backend.CUDA
    (shape, value_dtype), (elements, scale_dtype, _) = g["values"], g["scales"]
    out_ld = _api._rows("out", _arrays.wrap(_raw(out)))[3] if out is not None else shape[-1]
    out_ld *= 2 if value_dtype == "fp4x2" else 1  # FP4 pairs: ld in elements
    pointers = _api._attributes({k: v for k, v in zip(_POINTERS, given) if v is not None})
    in_type = to_enum(DataType, xa.dtype)
    # The C++ kernel takes over a descriptor of its own (it plans the call's other geometries with it).
    descriptor = contextlib.nullcontext((_api._new_desc(attrs), None)) if _NATIVE is not None else \
        _api._descriptor(attrs)
    try:
        with descriptor as (desc, _), _arrays.device_guard("torch", xa.device):
            experts = max(int(desc.get(_A.MOE_NUM_EXPERTS)), 1)
            for attr, value in pointers.items():  # checked as the general path checks them
                desc.set(attr, _api._pointer_value(attr, value, xa, experts, rows))
            h = _api.default_handle(backend, xa.device)
            plan = _api.Plan(h, desc, _api.TensorLayout(in_type, rows, width, ld),
                             _api.TensorLayout(g["out_type"], rows, g["cols"], out_ld))
    except (_api.FusedQuantError, TypeError, ValueError):
        return None
    zeroed = (st["moe"], st["moe"] or st["no_scales"])
    family = (desc, int(in_type), int(g["out_type"]), g["cols"]) if _NATIVE is not None else None
    return _PlannedOp(plan, (shape, _torch_dtype(value_dtype)), (elements, _torch_dtype(scale_dtype)),
                      plan.workspace_size, zeroed, x.device, family)


# The functional operator, the one every call of the functional names makes, is registered with the dispatcher
# directly (one kernel for CPU and CUDA, CompositeExplicitAutograd) rather than through torch.library.custom_op,
# whose Python wrapper layers (autograd, redispatch, a Dynamo guard) cost 3-5 us a call more; its outputs are
# integer and fp8 codes, which carry no gradient. The other operators are custom_ops.
_LIBRARY = torch.library.Library("fusedquant", "DEF")
_LIBRARY.define("quantize(Tensor x, str config, Tensor? static_scale=None, Tensor? scale_ub=None, "
                "Tensor? row_prob=None, Tensor? global_amax=None, Tensor? moe_offsets=None, "
                "Tensor? moe_counts=None) -> (Tensor, Tensor, Tensor, Tensor, Tensor)")


def _kernel(fn):
    """A Python kernel of an operator that has a C++ kernel: called by it (on a miss), its error goes to the C++
    kernel, which raises a RuntimeError of its message, and stays here for the functional names (_quantize_op)."""
    @functools.wraps(fn)
    def kernel(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            if _NATIVE is not None:
                _NATIVE.failed(e)
            raise
    return kernel


@_kernel
def quantize_op(x, config, static_scale=None, scale_ub=None, row_prob=None, global_amax=None, moe_offsets=None,
                moe_counts=None):
    """fusedquant.quantize as one operator: (values, scale storage, columnwise values, columnwise scale storage,
    global amax); outputs not written are empty. config: the non-pointer attributes as 'name=value;...'."""
    given = (static_scale, scale_ub, row_prob, global_amax, moe_offsets, moe_counts)
    planned = _planned_op(config, x, given)
    if planned is not None:
        return _run_planned(planned, config, x, given)
    outs = _outputs(x, config, global_amax)
    _run(x, config, dict(zip(_POINTERS, given)), *outs)
    return outs


_LIBRARY.impl("quantize", quantize_op, "CompositeExplicitAutograd")
# The same operator's Python kernel under its own name: what the C++ kernel (below) calls on a miss.
_LIBRARY.define("quantize_general(Tensor x, str config, Tensor? static_scale=None, Tensor? scale_ub=None, "
                "Tensor? row_prob=None, Tensor? global_amax=None, Tensor? moe_offsets=None, "
                "Tensor? moe_counts=None) -> (Tensor, Tensor, Tensor, Tensor, Tensor)")
_LIBRARY.impl("quantize_general", quantize_op, "CompositeExplicitAutograd")


def _fake_quantize(x, config, static_scale=None, scale_ub=None, row_prob=None, global_amax=None, moe_offsets=None,
                   moe_counts=None):
    return _outputs(x, config, global_amax)


torch.library.register_fake("fusedquant::quantize")(_fake_quantize)
torch.library.register_fake("fusedquant::quantize_general")(_fake_quantize)


# ---- the C++ kernels of quantize and quantize_out (bindings/python/csrc/torch_ops.cpp) ----
# libfusedquant_torch, beside the library where the build made it, registers CPU and CUDA kernels of
# fusedquant::quantize and quantize_out on torch's stable ABI (torch >= 2.10): a planned call runs there as one
# fqPlanExecute without Python. Without it (not built, an older torch, FUSEDQUANT_TORCH_KERNEL=0), the Python
# kernels run every call.

class _Native:
    """The C++ kernel's library: its plans are handed over through its operator fusedquant::_remember, its
    bookkeeping (clear_cache, counts, the Python kernel's error message) through ctypes."""

    def __init__(self, path):
        import ctypes
        torch.ops.load_library(str(path))
        self.path, self._lib = path, ctypes.CDLL(str(path))
        p64 = ctypes.POINTER(ctypes.c_int64)
        self._lib.fq_torch_forget_all.argtypes = []
        self._lib.fq_torch_counts.argtypes = [p64, ctypes.c_char_p, ctypes.c_size_t]
        self._lib.fq_torch_counts.restype = ctypes.c_size_t
        self._lib.fq_torch_fail.argtypes = [ctypes.c_char_p]
        self._failure = threading.local()

    def remember(self, config, x, given, planned, values, scales, out_form=False):
        """Hands planned's plan and descriptor over to the C++ kernel (fusedquant::_remember) as the plan of
        (config, x's geometry, the pointer arguments `given`); `values` and `scales`: the outputs the call
        returned, or (out_form) the out= form's buffers."""
        plan, (desc, in_type, out_type, cols) = planned.plan, planned.family
        address = lambda obj: int(_core.ffi.cast("uintptr_t", obj.ptr))  # noqa: E731
        if torch.ops.fusedquant._remember(x, config, *given, values, scales, out_form, address(plan), address(desc),
                                          in_type, out_type, cols, planned.ws_size, *planned.zeroed):
            plan._finalizer.detach()  # the C++ kernel destroys them
            desc._finalizer.detach()

    def forget_all(self):
        self._lib.fq_torch_forget_all()

    def counts(self):
        import ctypes
        values, reason = (ctypes.c_int64 * 4)(), ctypes.create_string_buffer(512)
        self._lib.fq_torch_counts(values, reason, len(reason))
        return dict(zip(("planned", "planned_here", "general", "refused"), values),
                    last_refusal=reason.value.decode(errors="replace"))

    def failed(self, error):
        """The Python kernel's error, kept for the functional names (raise_cause) and given to the C++ kernel."""
        self._failure.error = error
        self._lib.fq_torch_fail(str(error).encode())

    def raise_cause(self, runtime_error):
        """Raises the Python kernel's error behind the C++ kernel's RuntimeError of its message, if it is one."""
        cause, self._failure.error = getattr(self._failure, "error", None), None
        if cause is not None and cause is not runtime_error and str(cause) in str(runtime_error):
            raise cause from None


def _load_native():
    """The C++ kernel beside the library, unless FUSEDQUANT_TORCH_KERNEL=0 asks for the Python kernel alone."""
    path = _core.library_path.parent / "libfusedquant_torch.so"
    if not path.exists() or os.environ.get("FUSEDQUANT_TORCH_KERNEL", "1") == "0":
        return None
    try:
        native = _Native(path)
    except (OSError, RuntimeError):
        return None
    _api.on_clear_cache(native.forget_all)
    return native


# The out= form, registered as the functional operator is (its C++ kernel below runs a planned call of rowwise
# buffers). The buffers it writes have no defaults (pass None for those not written).
_OUT_SCHEMA = ("(Tensor x, str config, Tensor(a!)? out, Tensor(b!)? scales, Tensor(c!)? col_out, "
               "Tensor(d!)? col_scales, Tensor? static_scale=None, Tensor? scale_ub=None, Tensor? row_prob=None, "
               "Tensor? global_amax=None, Tensor? moe_offsets=None, Tensor? moe_counts=None) -> ()")
_LIBRARY.define("quantize_out" + _OUT_SCHEMA)
_LIBRARY.define("quantize_out_general" + _OUT_SCHEMA)  # its Python kernel under its own name, for the C++ one


@_kernel
def quantize_out_op(x, config, out, scales, col_out, col_scales, static_scale=None, scale_ub=None, row_prob=None,
                    global_amax=None, moe_offsets=None, moe_counts=None):
    """The out= form: writes the given buffers (checked as fusedquant.quantize checks them). NVFP4's computed
    global amax is not returned here: pass global_amax=, or call the functional operator, which returns it. A
    repeated call with rowwise buffers of the same geometry runs the plan its first call made."""
    given = (static_scale, scale_ub, row_prob, global_amax, moe_offsets, moe_counts)
    rowwise = out is not None and scales is not None and col_out is None and col_scales is None
    pointer_key = _pointer_key(given) if rowwise else None
    key = None if pointer_key is None else \
        (config, x.device, x.dtype, x.shape, x.stride(), pointer_key, out.shape, out.stride(), out.dtype,
         out.device, scales.numel() * scales.element_size(), scales.dtype, scales.device)
    planned = _api._lru_get("torch_out_op", key) if key is not None and _NATIVE is None else None
    if planned is not None:
        return planned.run_into(x, out, scales)
    attrs = _parse(config)
    attrs.setdefault("gate_layout", "none")
    _api.quantize(x, out=None if out is None else _raw(out), scales=scales,
                  col_out=None if col_out is None else _raw(col_out), col_scales=col_scales,
                  **{k: v for k, v in zip(_POINTERS, given) if v is not None}, **attrs)
    if key is not None:  # checked and written: plan the next call of these buffers' geometry
        planned = _new_planned_op(config, x, given, out=out)
        if planned is not None and _NATIVE is not None:
            _NATIVE.remember(config, x, given, planned, out, scales, out_form=True)
        elif planned is not None:
            _api._lru("torch_out_op", key, lambda: planned)


_LIBRARY.impl("quantize_out", quantize_out_op, "CompositeExplicitAutograd")
_LIBRARY.impl("quantize_out_general", quantize_out_op, "CompositeExplicitAutograd")


def _fake_quantize_out(x, config, out, scales, col_out, col_scales, static_scale=None, scale_ub=None,
                       row_prob=None, global_amax=None, moe_offsets=None, moe_counts=None):
    return None


torch.library.register_fake("fusedquant::quantize_out")(_fake_quantize_out)
torch.library.register_fake("fusedquant::quantize_out_general")(_fake_quantize_out)

_NATIVE = _load_native()
NATIVE_KERNEL = _NATIVE is not None  # whether the quantize operators run their C++ kernels


def native_counts():
    """What the C++ kernels did with their calls since the last fusedquant.clear_cache(): `planned` (run as a plan,
    without Python), `planned_here` (plans they made for a new token count), `general` (sent to the Python kernel:
    the first call of a kind, or one they do not plan), `refused` (planned calls the library or the CUDA stream
    lookup turned down, then sent to the Python kernel) and `last_refusal` (the reason of the last). None without
    the C++ kernels (NATIVE_KERNEL)."""
    return None if _NATIVE is None else _NATIVE.counts()


@torch.library.custom_op("fusedquant::repack_scales", mutates_args=())
def repack_scales_op(src: torch.Tensor, rows: int, groups: int, src_layout: str, dst_layout: str, scale_dtype: str,
                     batch: int = 1, row_offsets: torch.Tensor | None = None, stacked_rows: int = 0,
                     batching: str = "") -> torch.Tensor:
    """fusedquant.repack_scales: the destination storage (a new flat tensor; E8M0 scales as uint8)."""
    out = _repacked(src, rows, groups, dst_layout, scale_dtype, batch, stacked_rows, batching)
    _api.repack_scales(src, rows, groups, src_layout=src_layout, dst_layout=dst_layout, scale_dtype=scale_dtype,
                       batch=batch, row_offsets=row_offsets, stacked_rows=stacked_rows, batching=batching or None,
                       out=out)
    return out


@repack_scales_op.register_fake
def _(src, rows, groups, src_layout, dst_layout, scale_dtype, batch=1, row_offsets=None, stacked_rows=0,
      batching=""):
    return _repacked(src, rows, groups, dst_layout, scale_dtype, batch, stacked_rows, batching)


def _repacked(src, rows, groups, dst_layout, scale_dtype, batch, stacked_rows, batching):
    """A new destination of repack_scales, sized by the library's scale_repack_size."""
    scale_type, dst = to_enum(DataType, scale_dtype), to_enum(_api.ScaleLayout, dst_layout)
    to_stacked = bool(batching) and to_enum(_api.ScaleRepackBatching, batching) == \
        _api.ScaleRepackBatching.BLOCKS_TO_STACKED
    size = scale_repack_size(scale_type, 1 if to_stacked else batch, stacked_rows if to_stacked else rows, groups, dst)
    element = 4 if scale_type == DataType.FP32 or dst == _api.ScaleLayout.PACKED_UE8M0 else 1
    name = "int32" if dst == _api.ScaleLayout.PACKED_UE8M0 else _arrays.TYPE_TO_DTYPE[scale_type.name]
    return src.new_empty((size // element,), dtype=_torch_dtype(name))


@functools.lru_cache(maxsize=256)
def _gemm_geometry(config, m, n, num_groups, a_scale_layout, quantize):
    """What grouped_gemm writes for A [m, K], B of num_groups x n rows, from the library's queries (the
    epilogue descriptor as fusedquant.grouped_gemm builds it): {"h", "values": (shape, dtype), "scales":
    (elements, dtype), "col_values", "col_scales"} (None when not written)."""
    g = dict.fromkeys(("values", "scales", "col_values", "col_scales"))
    layout = to_enum(_api.ScaleLayout, a_scale_layout)
    with _gemm.GroupedGemmDesc(num_groups=num_groups, a_scale_layout=layout, quantize=int(quantize)) as gd, \
            _api.QuantDesc() as epi:
        for attr, value in _api._with_implied(_api._attributes(_parse(config))).items():
            epi.set(attr, value)
        g["h"] = h = n // 2 if epi.get(_A.GATE_LAYOUT) != _api.GateLayout.NONE else n
        if not quantize:
            return g
        out_type, outputs = epi.get(_A.OUTPUT_TYPE), int(epi.get(_A.OUTPUTS))
        packed = out_type == DataType.FP4_E2M1
        dtype = "fp4x2" if packed else _arrays.TYPE_TO_DTYPE[out_type.name]
        if outputs & _api.Outputs.ROWWISE:
            g["values"] = ((m, -(-h // 2) if packed else h), dtype)
            g["scales"] = _api.scale_storage(gd.scale_buffer_info(epi, m, h))
        if outputs & _api.Outputs.COLUMNWISE:
            shape = (h, m) if epi.get(_A.COLUMNWISE_TRANSPOSE) else (m, h)
            g["col_values"] = ((shape[0], -(-shape[1] // 2) if packed else shape[1]), dtype)
            g["col_scales"] = _api.scale_storage(gd.scale_buffer_info(epi, m, h, "columnwise"))
    return g


def _gemm_outputs(a, b, config, num_groups, a_scale_layout, want_c, want_d, quantize):
    """New outputs of the grouped GEMM operator (its fake implementation's too); the row count M specializes."""
    m, n = _static(a.shape[0]), _static(b.numel() // b.shape[-1]) // num_groups
    g = _gemm_geometry(config, m, n, num_groups, a_scale_layout, quantize)
    # Rows no group owns are not written: new outputs start zeroed, so the result is a function of the inputs.
    def none():
        return a.new_empty((0,), dtype=torch.uint8)
    c = a.new_zeros((m, n), dtype=torch.bfloat16) if want_c else none()
    d = a.new_zeros((m, g["h"]), dtype=torch.bfloat16) if want_d else none()
    values = [none() if g[k] is None else a.new_zeros(g[k][0], dtype=_torch_dtype(g[k][1]))
              for k in ("values", "col_values")]
    scales = [none() if g[k] is None else a.new_zeros((g[k][0],), dtype=_torch_dtype(g[k][1]))
              for k in ("scales", "col_scales")]
    return c, d, values[0], scales[0], values[1], scales[1]


@torch.library.custom_op("fusedquant::grouped_gemm", mutates_args=())
def grouped_gemm_op(a: torch.Tensor, a_scales: torch.Tensor, b: torch.Tensor, b_scales: torch.Tensor, config: str,
                    num_groups: int, group_offsets: torch.Tensor | None = None,
                    group_counts: torch.Tensor | None = None, alpha: torch.Tensor | None = None,
                    a_scale_layout: str = "col_major_tma", want_c: bool = True, want_d: bool = False,
                    quantize: bool = True, row_prob: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """fusedquant.grouped_gemm as one operator: (c, d, values, scale storage, columnwise values, columnwise
    scale storage), empty where not written. config: the epilogue's non-pointer attributes."""
    outs = _gemm_outputs(a, b, config, num_groups, a_scale_layout, want_c, want_d, quantize)
    c, d, values, scales, col_values, col_scales = outs
    _gemm.grouped_gemm(a, a_scales, b, b_scales, num_groups=num_groups, group_offsets=group_offsets,
                       group_counts=group_counts, alpha=alpha, a_scale_layout=a_scale_layout,
                       c=c if want_c else False, d=d if want_d else False, quantize=quantize,
                       out=_raw(values) if values.numel() else None, scales=scales if scales.numel() else None,
                       col_out=_raw(col_values) if col_values.numel() else None,
                       col_scales=col_scales if col_scales.numel() else None,
                       **({"row_prob": row_prob} if row_prob is not None else {}), **_parse(config))
    return outs


@grouped_gemm_op.register_fake
def _(a, a_scales, b, b_scales, config, num_groups, group_offsets=None, group_counts=None, alpha=None,
      a_scale_layout="col_major_tma", want_c=True, want_d=False, quantize=True, row_prob=None):
    return _gemm_outputs(a, b, config, num_groups, a_scale_layout, want_c, want_d, quantize)


# ---- the functional names: thin wrappers over torch.ops.fusedquant.quantize ----

def quantize(x, *, activation=None, gate_layout=None, **attributes):
    """fusedquant.quantize's rules on torch tensors, traceable: (values, scales), (values, scales, global_amax)
    for NVFP4, or with a columnwise output (values, scales, col_values, col_scales). An activation other than
    identity needs gate_layout= (ValueError otherwise); the scheme sets its types (README.md)."""
    pointers = {k: attributes.pop(k) for k in _POINTERS if k in attributes}
    for key, value in pointers.items():
        if value is not None and not isinstance(value, torch.Tensor):
            pointers[key] = _number(key, value, x)
    has_amax = pointers.get("global_amax") is not None
    if not torch.compiler.is_compiling():
        call = _eager_call(x, activation, gate_layout, attributes, has_amax)
        return call.present(_quantize_op(x, call.config, pointers), pointers)
    call = _functional_call(x, activation, gate_layout, attributes, has_amax, _views)
    return call.present(torch.ops.fusedquant.quantize(x, call.config, **pointers), pointers)


class _FunctionalCall:
    """What a functional call returns from the operator's outputs, for its config, x's shape and whether a global
    amax is given: the structure (_structure) and the scale views (_views)."""
    __slots__ = ("config", "st", "views")

    def __init__(self, config, st, views):
        self.config, self.st, self.views = config, st, views

    def present(self, outputs, pointers):
        values, scales, col_values, col_scales, amax = outputs
        st, views = self.st, self.views
        result = ()
        if st["values"] is not None:
            result = _present(values, scales, "scales", st, views["scales"], pointers.get("static_scale"))
        if st["col_values"] is not None:
            result = (*(result or (None, None)),
                      *_present(col_values, col_scales, "col_scales", st, views["col_scales"], None))
        if st["nvfp4"]:
            result = (*result, amax if st["amax"] else pointers["global_amax"])
        return result


def _functional_call(x, activation, gate_layout, attributes, has_amax, views):
    """The _FunctionalCall of the functional API's keywords on x (`views`: _views, or _eager_views for concrete
    sizes)."""
    config = _functional_config(tuple(sorted({"activation": activation, "gate_layout": gate_layout,
                                              **attributes}.items())))
    width = _static(x.shape[-1])
    return _FunctionalCall(config, _structure(config, width, has_amax),
                           views(config, tuple(x.shape[:-1]), width, has_amax))


_EAGER_CALLS = {}  # (activation, gate_layout, keyword items, global amax given, x's shape) -> _FunctionalCall
_api.on_clear_cache(_EAGER_CALLS.clear)


def _eager_call(x, activation, gate_layout, attributes, has_amax):
    """The _FunctionalCall of an eager call, kept by its keywords (in the caller's order) and x's shape."""
    key = (activation, gate_layout, tuple(attributes.items()), has_amax, x.shape)
    try:
        return _EAGER_CALLS[key]
    except KeyError:
        pass
    except TypeError:  # a keyword value that does not hash
        key = None
    call = _functional_call(x, activation, gate_layout, attributes, has_amax, _eager_views)
    if key is not None:
        if len(_EAGER_CALLS) >= 4096:
            _EAGER_CALLS.clear()
        _EAGER_CALLS[key] = call
    return call


def _quantize_op(x, config, pointers):
    """torch.ops.fusedquant.quantize (eager); where its C++ kernel reports the Python kernel's error as a
    RuntimeError, that error itself (a FusedQuantError, ValueError, ...), as the Python kernel raises it."""
    if _NATIVE is None:
        return torch.ops.fusedquant.quantize(x, config, **pointers)
    try:
        return torch.ops.fusedquant.quantize(x, config, **pointers)
    except RuntimeError as e:
        _NATIVE.raise_cause(e)
        raise


@_constant
def _functional_config(items):
    """The config string of the functional API's keywords (sorted (name, value) pairs; None values unset), after
    the functional API's own rule: an activation other than identity needs gate_layout= (ValueError).
    A constant under torch.compile: the library's enums are looked up here, outside the traced code."""
    attributes = {k: v for k, v in items if v is not None}
    _api._require_gate_layout(_api._attributes({k: attributes[k] for k in ("activation", "gate_layout")
                                                if k in attributes}))
    return _config(attributes)


def _views(config, lead, width, has_global_amax):
    """{"scales", "col_scales": (shape, strides) of the layout's [rows, groups] view of the scale storage, or
    None where the layout is not affine (or not written)}; sizes may be symbolic under torch.compile."""
    sizes, views = _sizes(config, lead, width, has_global_amax), {}
    for key in ("scales", "col_scales"):
        dims = sum(1 for name in sizes if name[:2] == (key, "shape"))
        views[key] = ([sizes[(key, "shape", i)] for i in range(dims)],
                      [sizes[(key, "stride", i)] for i in range(dims)]) if dims else None
    return views


_eager_views = functools.lru_cache(maxsize=256)(_views)  # concrete sizes: the same for every call of a shape


def _present(values, scales, key, st, view, static_scale):
    """(values, scales) as fusedquant.quantize returns them: FP4 as float4_e2m1fn_x2, E8M0 as float8_e8m0fnu,
    scales as the layout's [rows, groups] view (the storage for a non-affine layout), PER_TENSOR_STATIC's scale."""
    if values.dtype == torch.uint8 and hasattr(torch, "float4_e2m1fn_x2"):  # uint8 values are FP4 pairs
        values = values.view(torch.float4_e2m1fn_x2)
    if st[key] == "float8_e8m0fnu" and hasattr(torch, "float8_e8m0fnu"):
        scales = scales.view(torch.float8_e8m0fnu)
    if static_scale is not None and st["no_scales"]:
        return values, static_scale
    return values, scales if view is None else scales.as_strided(*view)


def _number(key, value, x):
    """A float32 / int32 tensor of numbers on x's device: a constant of the graph under torch.compile, else
    fusedquant's copy from pinned memory (refused during CUDA-graph capture)."""
    dtype = "int32" if key.startswith("moe_") else "float32"
    if torch.compiler.is_compiling():
        return torch.tensor(value, dtype=getattr(torch, dtype), device=x.device).reshape(-1)
    return _api.device_numbers(key, "torch", -1 if x.device.type == "cpu" else x.device.index, value, dtype)


def silu_and_mul_quant(x, *, gate_layout="split", group_size=None, **attributes):
    """vLLM's silu_and_mul + per-token-group FP8 quantization: x [..., 2H] -> (values [..., H], scales).
    group_size None keeps the scheme's own (128 under per_group, the default scheme)."""
    return quantize(x, activation="silu", gate_layout=gate_layout, group_size=group_size, **attributes)


def gelu_and_mul_quant(x, *, approximate="none", gate_layout="split", group_size=None, **attributes):
    """vLLM's gelu_and_mul (approximate="none": erf; "tanh": gelu_tanh_and_mul) + per-group quantization."""
    activation = {"none": "gelu_erf", "tanh": "gelu_tanh"}[approximate]
    return quantize(x, activation=activation, gate_layout=gate_layout, group_size=group_size, **attributes)


def swiglu_oai_quant(x, *, alpha=1.702, beta=1.0, limit=7.0, gate_layout="interleaved", group_size=None,
                     **attributes):
    """gpt-oss's clamped SwiGLU (vLLM swigluoai_and_mul; interleaved g0 u0 g1 u1 ...) + quantization."""
    return quantize(x, activation="swiglu_oai", gate_layout=gate_layout, swiglu_alpha=alpha, swiglu_beta=beta,
                    swiglu_limit=limit, group_size=group_size, **attributes)


def mxfp8_quantize(x, *, scale_layout="swizzled_128x4", **attributes):
    """FlashInfer's mxfp8_quantize: e4m3 values and E8M0 scales per 32 (RCEIL), Blackwell's swizzled layout by
    default (scale_layout="row_major" for the plain one)."""
    return quantize(x, scheme="mxfp8", scale_layout=scale_layout, **attributes)


def nvfp4_quantize(x, global_amax=None, *, scale_layout="swizzled_128x4", **attributes):
    """NVFP4: (values as float4_e2m1fn_x2 [..., H/2], e4m3 block scales per 16, global amax). Without
    global_amax the library computes it (on the device, no host sync) and returns it: S_enc = 2688 / amax."""
    return quantize(x, scheme="nvfp4", scale_layout=scale_layout, global_amax=global_amax, **attributes)


def per_token_group_quant(x, group_size=128, *, column_major_scales=False, use_ue8m0=False,
                          out_dtype=torch.float8_e4m3fn, **attributes):
    """vLLM's per_token_group_quant_fp8: scales [rows, groups] row-major, or column-major (TMA-aligned ld) as
    DeepGEMM reads them; use_ue8m0 rounds scales to powers of two."""
    layout = "col_major_tma" if column_major_scales else "row_major"
    rounding = {"scale_rounding": "pow2_ceil"} if use_ue8m0 else {}
    return quantize(x, group_size=group_size, scale_layout=layout, out_dtype=out_dtype, **rounding, **attributes)


def per_token_quant(x, *, out_dtype=torch.float8_e4m3fn, **attributes):
    """One dynamic scale per row (vLLM scaled_fp8_quant(use_per_token_if_dynamic=True))."""
    return quantize(x, scheme="per_token", out_dtype=out_dtype, **attributes)


def per_tensor_quant(x, scale=None, *, out_dtype=torch.float8_e4m3fn, **attributes):
    """vLLM's scaled_fp8_quant: with `scale` (a tensor, or a number outside capture) static, else one dynamic
    scale for the tensor computed on the device; returns (values, scale)."""
    if scale is None:
        return quantize(x, scheme="per_tensor_dynamic", out_dtype=out_dtype, **attributes)
    return quantize(x, scheme="per_tensor_static", static_scale=scale, out_dtype=out_dtype, **attributes)


def repack_scales(src, rows, groups, *, src_layout, dst_layout, scale_dtype, batch=1, row_offsets=None,
                  stacked_rows=0, batching=None):
    """torch.ops.fusedquant.repack_scales with fusedquant.repack_scales's keywords."""
    name = lambda v: v if isinstance(v, str) else v.name.lower()  # noqa: E731
    dtype = scale_dtype if isinstance(scale_dtype, str) else (
        _arrays.dtype_name(scale_dtype) if isinstance(scale_dtype, torch.dtype) else scale_dtype.name.lower())
    return torch.ops.fusedquant.repack_scales(src, rows, groups, name(src_layout), name(dst_layout), dtype, batch,
                                              row_offsets, stacked_rows, name(batching) if batching else "")


FUNCTIONAL = ("silu_and_mul_quant", "gelu_and_mul_quant", "swiglu_oai_quant", "mxfp8_quantize", "nvfp4_quantize",
              "per_token_group_quant", "per_token_quant", "per_tensor_quant")
