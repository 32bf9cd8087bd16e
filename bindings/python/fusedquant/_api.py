"""The Pythonic layer: quantize(), scale_buffer_info() and repack_scales() over arrays of the caller's framework."""
import collections
import contextlib
import math
import re
import sys as _sys
import threading

from . import _arrays
from ._arrays import ceil_div, itemsize, wrap
from ._core import (DATA, ENUMS, PREFIX, DataType, FusedQuantError, Plan, QuantDesc, Status, TensorLayout,
                    default_handle, ffi, scale_repack_size, to_enum)

QuantDescAttribute, GateLayout, Backend = ENUMS["fqQuantDescAttribute"], ENUMS["fqGateLayout"], ENUMS["fqBackend"]
ScaleLayout, ScaleRepackBatching = ENUMS["fqScaleLayout"], ENUMS["fqScaleRepackBatching"]
Outputs, MoeLayout = ENUMS["fqOutputs"], ENUMS["fqMoeLayout"]
QuantScheme, ScaleRounding = ENUMS["fqQuantScheme"], ENUMS["fqScaleRounding"]
Activation = ENUMS["fqActivation"]
_ALIASES = {"out_dtype": "output_type", "scale_dtype": "scale_type"}


def _attributes(kwargs):
    """{QuantDescAttribute: value} from quantize()'s keywords: the attribute names in lower case, pointer
    attributes without their _pointer suffix (static_scale, scale_ub, row_prob, ...), and the aliases."""
    members, out = QuantDescAttribute.__members__, {}
    for key, value in kwargs.items():
        name = _ALIASES.get(key, key).upper()
        name = name if name in members or name + "_POINTER" not in members else name + "_POINTER"
        if name in ("COLUMNWISE_OUTPUT_POINTER", "COLUMNWISE_SCALE_POINTER"):
            raise TypeError(f"fusedquant: pass the columnwise buffers as col_out= and col_scales=, not {key!r}")
        if name not in members:
            raise TypeError(f"fusedquant: unexpected keyword argument {key!r}; descriptor attributes are "
                            + ", ".join(sorted(m.lower().removesuffix("_pointer") for m in members)))
        out[members[name]] = value
    return out


# What a scheme implies for the attributes the caller leaves unset (docs/spec.md §3.3): its value and scale
# types. The C descriptor keeps PER_GROUP's defaults (e4m3fn values, fp32 scales) whatever the scheme.
_SCHEME_IMPLIES = {
    QuantScheme.MXFP8: {QuantDescAttribute.SCALE_TYPE: DataType.E8M0},
    QuantScheme.MXFP4: {QuantDescAttribute.OUTPUT_TYPE: DataType.FP4_E2M1, QuantDescAttribute.SCALE_TYPE: DataType.E8M0},
    QuantScheme.NVFP4: {QuantDescAttribute.OUTPUT_TYPE: DataType.FP4_E2M1,
                        QuantDescAttribute.SCALE_TYPE: DataType.FP8_E4M3FN},
}
# PACKED_UE8M0 holds E8M0 scales; under the fp32-scale schemes that allow them (PER_GROUP, PER_TOKEN) E8M0
# needs POW2_CEIL rounding (docs/spec.md §4, §6). The microscaling schemes bring E8M0 themselves.
_PACKED_IMPLIES = {QuantDescAttribute.SCALE_TYPE: DataType.E8M0,
                   QuantDescAttribute.SCALE_ROUNDING: ScaleRounding.POW2_CEIL}


def _with_implied(attrs):
    """attrs plus what the scheme and the scale layout imply for the attributes attrs leaves unset; explicit
    values always win (a contradiction then gets the library's error)."""
    A = QuantDescAttribute
    scheme = to_enum(QuantScheme, attrs.get(A.SCHEME, QuantScheme.PER_GROUP))
    implied = dict(_SCHEME_IMPLIES.get(scheme, {}))
    layout = attrs.get(A.SCALE_LAYOUT)
    if layout is not None and to_enum(ScaleLayout, layout) == ScaleLayout.PACKED_UE8M0 and \
            scheme in (QuantScheme.PER_GROUP, QuantScheme.PER_TOKEN):
        implied.update(_PACKED_IMPLIES)
    return {**{k: v for k, v in implied.items() if k not in attrs}, **attrs}


def _require_gate_layout(attrs):
    """An activation without gate_layout is refused: a vLLM / FlashInfer user writing activation="silu" means
    silu_and_mul (a [M, 2H] input, a [M, H] output), and running plain SiLU over the whole row instead would
    be silent. gate_layout="none" asks for the plain activation explicitly."""
    act = attrs.get(QuantDescAttribute.ACTIVATION)
    if act is not None and to_enum(Activation, act) != Activation.IDENTITY and \
            QuantDescAttribute.GATE_LAYOUT not in attrs:
        raise ValueError(f"fusedquant: activation={act!r} needs gate_layout=: how a row holds gate and up ("
                         + ", ".join(repr(m.lower()) for m in GateLayout.__members__ if m != "NONE")
                         + "), or gate_layout='none' for the plain activation over the whole row")


def _ctype(attr):
    return DATA["attribute_types"]["fqQuantDescAttribute"][PREFIX["fqQuantDescAttribute"] + attr.name][0]


# ---- the per-thread cache of quantize()'s library objects ----
# A repeated call with the same configuration reuses its descriptor (keyed by every attribute that shapes it;
# pointer attributes only by presence, as they are set on every call), its two layouts (type, rows, cols, ld)
# and its scale-buffer and workspace queries, instead of creating and querying them again. A configuration
# without pointer attributes (nor columnwise buffers, which are set per call) on the default handle also keeps
# its plan (handle, descriptor key, layout keys): the call is then one fqPlanExecute, which checks only the buffers. Such a call
# made without output buffers or a handle is also remembered by its keywords and x's geometry (_call_key), so
# that the next one skips the descriptor, layouts and queries altogether (_PlannedCall).
CACHE_SIZE = 64
_cache = threading.local()


def _lru(kind, key, make):
    """make() cached under (kind, key) in this thread's LRU dict of CACHE_SIZE entries per kind."""
    store = _cache.__dict__.setdefault(kind, collections.OrderedDict())
    if key in store:
        store.move_to_end(key)
        return store[key]
    value = store[key] = make()
    if len(store) > CACHE_SIZE:
        store.popitem(last=False)  # an evicted object is destroyed when the last reference goes
    return value


def _lru_get(kind, key):
    """What _lru cached under (kind, key), made the most recent; None if nothing."""
    store = _cache.__dict__.get(kind)
    value = None if store is None else store.get(key)
    if value is not None:
        store.move_to_end(key)
    return value


_clear_hooks = []


def on_clear_cache(hook):
    """Calls hook() on every clear_cache() (the torch operator's C++ kernel drops its plans)."""
    _clear_hooks.append(hook)


def clear_cache():
    """Drops this thread's cached descriptors, layouts and queries, and the plans the torch operator's C++
    kernel holds."""
    _cache.__dict__.clear()
    for hook in _clear_hooks:
        hook()


def _desc_key(attrs):
    """A hashable key of the attributes (pointer attributes by presence only), or None if a value is not hashable."""
    key = tuple(sorted((int(a), type(v).__name__, None if _ctype(a).endswith("*") else v) for a, v in attrs.items()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _new_desc(attrs):
    desc = QuantDesc()
    for attr, value in _with_implied(attrs).items():
        if not _ctype(attr).endswith("*"):
            desc.set(attr, value)
    return desc


@contextlib.contextmanager
def _descriptor(attrs):
    """(descriptor with attrs' non-pointer attributes set, its cache key or None); a cached descriptor stays
    open but lets go of the caller's pointer arrays afterwards (the next call sets them again)."""
    key = _desc_key(attrs)
    desc = _new_desc(attrs) if key is None else _lru("desc", key, lambda: _new_desc(attrs))
    try:
        yield desc, key
    finally:
        if key is None:
            desc.close()
        else:
            desc._keep.clear()


def _scale_info(desc, key, rows, cols, which="rowwise"):
    if key is None:
        return desc.scale_buffer_info(rows, cols, which)
    return _lru("scale_info", (key, rows, cols, which), lambda: desc.scale_buffer_info(rows, cols, which))


def _layout(dtype, rows, cols, ld):
    key = (int(dtype), rows, cols, ld)
    return key, _lru("layout", key, lambda: TensorLayout(dtype, rows, cols, ld))


def _workspace_size(h, desc, key, lin, lout):
    """The workspace size for desc and the (key, TensorLayout) pairs lin and lout on handle h."""
    if key is None:
        return h.workspace_size(desc, lin[1], lout[1])
    handle_id = int(ffi.cast("uintptr_t", h.ptr))  # never reused by a later handle (fusedquant.h, Object lifetime)
    return _lru("workspace", (handle_id, key, lin[0], lout[0]), lambda: h.workspace_size(desc, lin[1], lout[1]))


def device_numbers(key, kind, device, values, dtype):
    """Numbers given for argument `key` as a new 1-D `dtype` array on the device (_arrays.from_values: PyTorch
    copies from pinned host memory asynchronously), refused while the stream captures a CUDA graph (the graph
    would keep this call's values; device arrays are read when the work runs)."""
    if _arrays.capturing(kind, device):
        raise FusedQuantError(Status.INVALID_VALUE, f"{key}: numbers cannot be copied to the GPU while its stream "
                              "captures a CUDA graph; pass a device array")
    return _arrays.from_values(kind, device, values, dtype)


def _plan(h, desc, key, lin, lout):
    """The cached plan of desc and the (key, TensorLayout) pairs lin and lout on handle h."""
    handle_id = int(ffi.cast("uintptr_t", h.ptr))
    return _lru("plan", (handle_id, key, lin[0], lout[0]), lambda: Plan(h, desc, lin[1], lout[1]))


def _stream(kind, device, stream):
    """The stream a call runs on: `stream` (an int, or an object with .cuda_stream / .ptr), else the current one
    of `kind` on `device` (0 for host memory)."""
    if stream is None:
        return _arrays.current_stream(kind, device)
    return int(getattr(stream, "cuda_stream", getattr(stream, "ptr", stream)))


def _call_key(geometry, in_dtype, attributes):
    """The key of a call whose library work depends only on its keywords and x's geometry (no buffers or handle
    given): `geometry` (x's framework, device, dtype, shape and strides), in_dtype and the keywords; None when
    a keyword value is not hashable (an array)."""
    key = (*geometry, in_dtype, tuple(sorted(attributes.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _remembered(key):
    """The _PlannedCall remembered under `key` (None: none, or no key), made the most recent."""
    return None if key is None else _lru_get("call", key)


def torch_run(plan, x, values, scales, ws_size, stream=None, zeroed=(False, False)):
    """One execution of `plan` on PyTorch tensor x into new outputs on x's device, on `stream` (_stream's rules;
    x's current one by default): values (shape, torch dtype) and scale storage (elements, torch dtype), each
    zero-filled first where `zeroed` says; returns them. The remembered calls of quantize() and of the torch
    operator."""
    torch = _sys.modules["torch"]
    device = x.device
    out = (torch.zeros if zeroed[0] else torch.empty)(values[0], dtype=values[1], device=device)
    storage = (torch.zeros if zeroed[1] else torch.empty)(scales[0], dtype=scales[1], device=device)
    torch_execute(plan, x, out, storage, ws_size, stream)
    return out, storage


def torch_execute(plan, x, out, scales, ws_size, stream=None):
    """One execution of `plan` on PyTorch tensor x into the tensors `out` and `scales` (all of its bytes), with a
    new workspace of ws_size bytes, on `stream` (_stream's rules; x's current one by default)."""
    torch = _sys.modules["torch"]
    device = x.device
    ws = torch.empty(ws_size, dtype=torch.uint8, device=device) if ws_size else None
    plan.run(x.data_ptr(), out.data_ptr(), scales.data_ptr(), scales.numel() * scales.element_size(),
             0 if ws is None else ws.data_ptr(), ws_size,
             _stream("torch", -1 if device.type == "cpu" else device.index, stream))


class _PlannedCall:
    """What a planned quantize() call worked out, for the next call with the same _call_key: the plan, the
    output's shape and dtype, the scale buffer's facts and the workspace size. Running it allocates the outputs
    and makes one fqPlanExecute."""
    __slots__ = ("plan", "out_shape", "out_dtype", "info", "ws_size", "scale_facts", "torch")

    def __init__(self, plan, out_shape, out_dtype, info, ws_size):
        self.plan, self.out_shape, self.out_dtype, self.info, self.ws_size = plan, out_shape, out_dtype, info, ws_size
        self.scale_facts = new_scale_facts(info)
        self.torch = None  # torch_run's values and scales, and the scale view, made on the first torch_call

    def __call__(self, x, stream):
        with _arrays.device_guard(x.kind, x.device):
            out = _arrays.empty(x.kind, x.device, self.out_shape, self.out_dtype)
            scales, storage = new_scales(x.kind, x.device, self.scale_facts)
            ws = wrap(_arrays.empty(x.kind, x.device, (self.ws_size,), "uint8")).ptr if self.ws_size else 0
            self.plan.run(x.ptr, wrap(out).ptr, storage.ptr, storage.capacity, ws, self.ws_size,
                          _stream(x.kind, x.device, stream))
        return out, scales

    def torch_call(self, x, stream):
        """The same for a PyTorch tensor x, without Arrays (torch_run)."""
        if self.torch is None:
            elements, storage_dtype, _ = self.scale_facts
            view = scale_view_geometry(self.info, itemsize(storage_dtype))  # strides in elements, for as_strided
            self.torch = ((self.out_shape, _arrays.framework_dtype("torch", self.out_dtype)),
                          (elements, _arrays.framework_dtype("torch", storage_dtype)), view)
        values, scales, view = self.torch
        out, storage = torch_run(self.plan, x, values, scales, self.ws_size, stream)
        return out, (storage.as_strided(*view) if view else storage)


def _values_read(attr, experts, rows):
    """How many values the library reads through pointer attribute `attr` (docs/api.md): one per expert (the
    GEMM's groups are its experts) for the per-tensor scale and NVFP4's global amax, one per row for the routing
    probability, E counts or E + 1 offsets; None for the output buffers."""
    a = QuantDescAttribute
    return {a.STATIC_SCALE_POINTER: experts, a.GLOBAL_AMAX_POINTER: experts, a.SCALE_UB_POINTER: 1,
            a.ROW_PROB_POINTER: rows, a.MOE_COUNTS_POINTER: experts,
            a.MOE_OFFSETS_POINTER: experts + 1}.get(attr)


def _pointer_value(attr, value, x, experts=1, rows=1):
    """A pointer attribute's array on x's device: numbers become a new float32/int32 array there (one number for
    a per-expert value is every expert's); an array must hold every value the library reads (_values_read)."""
    ctype, key = _ctype(attr), attr.name.lower().removesuffix("_pointer")
    wanted = "float32" if "float" in ctype else "int32" if "int32" in ctype else None
    needed = _values_read(attr, experts, rows)
    try:
        a = wrap(value)
    except TypeError:
        if wanted is None:
            raise TypeError(f"fusedquant: {key} must be an array on {x.where}") from None
        if needed and not isinstance(value, (list, tuple)) and attr in (QuantDescAttribute.STATIC_SCALE_POINTER,
                                                       QuantDescAttribute.GLOBAL_AMAX_POINTER):
            value = [value] * needed
        value = device_numbers(key, x.kind, x.device, value, wanted)
        a = wrap(value)
    if a.device != x.device:
        raise FusedQuantError(Status.INVALID_VALUE, f"{key}: the array is on {a.where}, x is on {x.where}")
    if wanted and a.dtype != wanted:
        raise FusedQuantError(Status.INVALID_VALUE, f"{key}: dtype {a.dtype}, the library reads {wanted}")
    if needed and math.prod(a.shape) < needed:
        per = "row" if attr == QuantDescAttribute.ROW_PROB_POINTER else "expert"
        raise FusedQuantError(Status.INVALID_VALUE, f"{key}: {math.prod(a.shape)} values; the library reads "
                              f"{needed} (one per {per})")
    return value


def _rows(name, a):
    """(leading shape, rows, width, row stride in elements) of `a` seen as rows: the last axis must have
    stride 1; the leading axes must fold into one row axis whose stride is at least the width."""
    if not a.shape:
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: a 0-d array has no rows")
    lead, width = a.shape[:-1], a.shape[-1]
    if 0 in a.shape:  # an empty array's strides mean nothing (NumPy gives 0)
        return lead, math.prod(lead), width, max(width, 1)
    if a.strides[-1] != a.itemsize and width > 1:
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: the innermost stride is {a.strides[-1]} bytes, it "
                              f"must be one element ({a.itemsize} bytes); pass a contiguous copy")
    dims = [(n, s) for n, s in zip(lead, a.strides[:-1]) if n != 1]
    stride = dims[-1][1] if dims else width * a.itemsize
    if any(s != s2 * n2 for (_, s), (n2, s2) in zip(dims, dims[1:])):
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: strides {a.strides} do not fold into rows")
    if stride < width * a.itemsize or stride % a.itemsize:
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: the row stride of {stride} bytes must be a positive "
                              f"multiple of {a.itemsize} of at least the row width ({width} elements)")
    return lead, math.prod(lead), width, stride // a.itemsize


def _writable(name, a):
    if not getattr(getattr(a.obj, "flags", None), "writeable", True):
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: the array is read-only")
    return a


def _value_array(name, given, x, out_type):
    """A caller's values array, writable, on x's device, of the output type's dtype (or uint8 for 8-bit ones)."""
    natural = _arrays.TYPE_TO_DTYPE[out_type.name]
    o = _writable(name, wrap(given))
    accepted = {_arrays.framework_dtype_name(o.kind, natural)} | ({"uint8"} if itemsize(natural) == 1 else set())
    if o.device != x.device:
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: the array is on {o.where}, x is on {x.where}")
    if o.dtype not in accepted:
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: dtype {o.dtype}; {out_type.name} values are "
                              + " or ".join(sorted(accepted)))
    return o


def _values(out, x, lead, rows, cols, out_type):
    """The output array (given or new) and its layout's ld; fp4 values are packed two per byte."""
    natural = _arrays.TYPE_TO_DTYPE[out_type.name]
    packed = out_type == DataType.FP4_E2M1
    width = ceil_div(cols, 2) if packed else cols
    if out is None:
        out = _arrays.empty(x.kind, x.device, (*lead, width), natural)
    o = _value_array("out", out, x, out_type)
    _, orows, owidth, ld = _rows("out", o)
    if (orows, owidth) != (rows, width):
        status = Status.INSUFFICIENT_BUFFER if orows < rows or owidth < width else Status.INVALID_VALUE
        raise FusedQuantError(status, f"out: {orows} rows of {owidth} {o.dtype}, the output is {rows} rows of "
                              f"{width}")
    return out, o, 2 * ld if packed else ld


def _col_values(col_out, x, shape, out_type):
    """The columnwise values array (given or new) of `shape` (fp4: the last axis packed two per byte); a given
    array must be C-contiguous with exactly that shape (the library writes it densely)."""
    natural = _arrays.TYPE_TO_DTYPE[out_type.name]
    if col_out is None:
        return _arrays.empty(x.kind, x.device, shape, natural), None
    o = _value_array("col_out", col_out, x, out_type)
    dense = [o.itemsize * math.prod(shape[i + 1:]) for i in range(len(shape))]
    if tuple(o.shape) != tuple(shape) or (math.prod(shape) and list(o.strides) != dense):
        raise FusedQuantError(Status.INVALID_VALUE, f"col_out: shape {tuple(o.shape)} strides {tuple(o.strides)}; "
                              f"the columnwise values are a contiguous {tuple(shape)}")
    return col_out, o


def scale_storage(info):
    """(elements, dtype name) of a new buffer holding scales of `info` (a ScaleBufferInfo): the scale dtype, or
    int32 words / bytes where the layout stores scales in wider elements (PACKED_UE8M0)."""
    scale_dtype = _arrays.TYPE_TO_DTYPE.get(getattr(info.dtype, "name", ""), "uint8")
    el = info.element_bytes or 1
    storage_dtype = scale_dtype if itemsize(scale_dtype) == el else {4: "int32"}.get(el, "uint8")
    return max(ceil_div(info.bytes, el), 1), storage_dtype


def scale_view_geometry(info, element=1):
    """(shape, strides in units of `element` bytes) of the logical [rows, groups] ([batch, rows, groups]) view
    of scale storage whose strides follow the layout (S[m, k] = view[m, k]); None for a non-affine layout
    (SWIZZLED_128X4), whose storage is returned as it is."""
    scale_dtype = _arrays.TYPE_TO_DTYPE.get(getattr(info.dtype, "name", ""), "uint8")
    el = info.element_bytes or 1
    if not (info.row_stride and (info.col_stride or info.rows * info.cols == 0)):
        return None
    shape = (info.rows, ceil_div(info.cols, el // itemsize(scale_dtype) or 1))
    strides = (info.row_stride, info.col_stride)
    if info.batch > 1:
        shape, strides = (info.batch, *shape), (info.batch_stride, *strides)
    return shape, tuple(s // element for s in strides)


def new_scale_facts(info):
    """What new scale storage of `info` is: (elements, dtype name: scale_storage; its view's geometry in bytes:
    scale_view_geometry), worked out once for a planned call."""
    return (*scale_storage(info), scale_view_geometry(info))


def new_scales(kind, device, facts):
    """New scale storage of `facts` (new_scale_facts) in `kind`'s framework on `device`: its logical view (the
    storage itself for a non-affine layout) and the storage's Array."""
    elements, dtype, view = facts
    storage = _arrays.empty(kind, device, (elements,), dtype)
    return (storage if view is None else _arrays.as_strided(kind, storage, *view)), wrap(storage)


def _scales(scales, x, info):
    """The scale buffer (given, or new with a logical [rows, cols] view over it) and its Array."""
    if scales is not None:
        s = _writable("scales", wrap(scales))
        if s.device != x.device:
            raise FusedQuantError(Status.INVALID_VALUE, f"scales: the array is on {s.where}, x is on {x.where}")
        if s.capacity < info.bytes:
            raise FusedQuantError(Status.INSUFFICIENT_BUFFER, f"scales: {s.capacity} bytes from its start, the "
                                  f"layout needs {info.bytes} for {info.rows}x{info.cols} scales")
        return scales, s
    return new_scales(x.kind, x.device, new_scale_facts(info))


def columnwise_shape(desc, lead, rows, cols):
    """The shape of the columnwise values of `desc` for rows x cols output ([..., H], [H, M] transposed, or
    [E, H, max_m] transposed MASKED); fp4 packs the last axis two per byte."""
    if desc.get(QuantDescAttribute.COLUMNWISE_TRANSPOSE):
        experts = desc.get(QuantDescAttribute.MOE_NUM_EXPERTS)
        masked = desc.get(QuantDescAttribute.MOE_LAYOUT) == MoeLayout.MASKED and experts > 0
        shape = (experts, cols, rows // experts) if masked else (cols, rows)
    else:
        shape = (*lead, cols)
    packed = desc.get(QuantDescAttribute.OUTPUT_TYPE) == DataType.FP4_E2M1
    return (*shape[:-1], ceil_div(shape[-1], 2) if packed else shape[-1])


def _workspace(workspace, x, size):
    """The workspace array (given, checked, or new; None when size is 0)."""
    if workspace is None:
        return _arrays.empty(x.kind, x.device, (size,), "uint8") if size else None
    w = _writable("workspace", wrap(workspace))
    if w.device != x.device:
        raise FusedQuantError(Status.INVALID_VALUE, f"workspace: the array is on {w.where}, x is on {x.where}")
    if w.capacity < size:
        raise FusedQuantError(Status.INSUFFICIENT_BUFFER, f"workspace: {w.capacity} bytes from its start, the "
                              f"call needs {size} (fqGetWorkspaceSize)")
    return workspace


@_arrays.framework_neutral
def quantize(x, *, out=None, scales=None, col_out=None, col_scales=None, in_dtype=None, handle=None, stream=None,
             workspace=None, **attributes):
    """Applies the activation and quantizes the rows of `x`; returns (values, scales) in x's framework, or
    (values, scales, col_values, col_scales) when `outputs` asks for the columnwise output (values and scales
    are None when it asks for columnwise only).

    x: [..., W] bfloat16 / float16 rows (W = 2H gated, else H); a NumPy array or a PyTorch CPU tensor runs on
       the host backend, a PyTorch CUDA tensor or a CuPy array on its GPU, on the current stream (or `stream`:
       an int or an object with .cuda_stream / .ptr). The last axis must be contiguous; rows may be strided.
    attributes: any descriptor attribute by its lower-case name (QuantDescAttribute), with the aliases
       out_dtype = output_type and scale_dtype = scale_type; enum values as members, ints or names
       ("silu", "per_group", "fp8_e4m3fn"; dtypes too); pointer attributes without "_pointer"
       (static_scale, scale_ub, row_prob, global_amax, moe_offsets, ...) as an array on x's device or
       numbers, copied there (PyTorch: from pinned memory, asynchronously; refused with INVALID_VALUE while the
       stream captures a CUDA graph: pass device arrays there). Unset attributes keep the library's defaults,
       except what the scheme and the scale layout imply (docs/spec.md §3.3, §4): scheme="mxfp8" -> scale_dtype="e8m0"; "mxfp4" ->
       out_dtype="fp4_e2m1", scale_dtype="e8m0"; "nvfp4" -> out_dtype="fp4_e2m1", scale_dtype="fp8_e4m3fn";
       scale_layout="packed_ue8m0" under per_group / per_token -> scale_dtype="e8m0",
       scale_rounding="pow2_ceil". Explicit values win; contradictory ones get the library's error.
       An activation other than identity needs gate_layout= ("split", "interleaved", "block_interleaved":
       silu_and_mul semantics, x is [..., 2H]); without it quantize() raises ValueError rather than run the
       plain activation over the whole row, which gate_layout="none" asks for explicitly.
    out: optional [..., H] values array (rows may be strided), of the natural dtype or uint8.
    scales: optional buffer of at least scale_buffer_info(...).bytes bytes from its start, written in the
       layout's storage order; returned as given. When new, the returned scales are a [rows, groups] view
       whose strides follow the layout (S[m, k] = scales[m, k]), or the flat storage for a non-affine layout.
    col_out, col_scales: optional columnwise buffers (outputs="columnwise" or Outputs.ROWWISE |
       Outputs.COLUMNWISE): values [..., H] like `out`, or with columnwise_transpose=1 [H, M] ([E, H, max_m] for
       moe_layout="masked"), C-contiguous (fp4: last axis packed); scales as `scales`, sized by
       scale_buffer_info(..., which="columnwise"). New ones are allocated when not given.
    MoE: moe_layout="contiguous" with moe_offsets (E+1 ints) and optionally moe_counts, or "masked" with x as
       [E, max_m, W] and moe_counts (E ints); moe_num_experts = E. Rows no expert owns are not written
       (docs/moe.md); pass `out` to keep their bytes.
    in_dtype: reads x as this type (e.g. "bf16" for a uint16 array of bf16 bits).
    workspace: optional array of at least fqGetWorkspaceSize bytes on x's device (new when needed and not given).
       NVFP4 on a GPU without global_amax reduces the global amax there and leaves it there after the call: one
       float32 per expert (one without MoE), S_enc = 2688 / amax (docs/api.md); read it from a given workspace.
    x may also be any object with __dlpack__ or __cuda_array_interface__ (a JAX array, ...): it is read in place
       through DLPack and the results come back in its framework where that framework imports DLPack
       (`<module>.from_dlpack`), else as PyTorch / CuPy / NumPy arrays (DLPack-capable).
    """
    remembered = out is None and scales is None and col_out is None and col_scales is None and handle is None and \
        workspace is None
    torch_key = None
    torch = _sys.modules.get("torch")
    if remembered and torch is not None and type(x) is torch.Tensor:
        # A tensor's own key (no Array: its geometry lies within its storage, PyTorch checks views).
        torch_key = _call_key(("torch", x.device, x.dtype, x.shape, x.stride()), in_dtype, attributes)
        planned_call = _remembered(torch_key)
        if planned_call is not None:
            return planned_call.torch_call(x, stream)
    x_arr = wrap(x)
    call_key = None
    if remembered:
        call_key = _call_key((x_arr.kind, x_arr.device, x_arr.dtype, x_arr.shape, x_arr.strides), in_dtype, attributes)
        planned_call = _remembered(call_key)
        if planned_call is not None:
            return planned_call(x_arr, stream)
    if in_dtype is None and x_arr.dtype not in _arrays.DTYPE_TO_TYPE:
        raise FusedQuantError(Status.INVALID_VALUE, f"x: dtype {x_arr.dtype} is not a library type (inputs are "
                              "bfloat16 or float16; in_dtype= reinterprets raw 16-bit data)")
    in_type = to_enum(DataType, x_arr.dtype if in_dtype is None else in_dtype)
    if itemsize(_arrays.TYPE_TO_DTYPE.get(getattr(in_type, "name", ""), "")) != x_arr.itemsize:
        raise FusedQuantError(Status.INVALID_VALUE, f"in_dtype: {in_type!r} does not have x's element size")
    lead, rows, width, ld = _rows("x", x_arr)
    backend = Backend.HOST if x_arr.device < 0 else Backend.CUDA
    attrs = _attributes(attributes)
    _require_gate_layout(attrs)
    with _descriptor(attrs) as (desc, key):
        experts = max(int(desc.get(QuantDescAttribute.MOE_NUM_EXPERTS)), 1)
        for attr, value in attrs.items():
            if _ctype(attr).endswith("*"):
                desc.set(attr, None if value is None else _pointer_value(attr, value, x_arr, experts, rows))
        gated = desc.get(QuantDescAttribute.GATE_LAYOUT) != GateLayout.NONE
        if gated and width % 2:
            raise FusedQuantError(Status.INVALID_VALUE, f"x: a gated row holds gate and up halves; its width "
                                  f"{width} is odd")
        cols, out_type = width // 2 if gated else width, desc.get(QuantDescAttribute.OUTPUT_TYPE)
        outputs = int(desc.get(QuantDescAttribute.OUTPUTS))
        rowwise, columnwise = bool(outputs & Outputs.ROWWISE), bool(outputs & Outputs.COLUMNWISE)
        out_ld, out_arr, scales_arr = cols, None, None
        if rowwise:
            info = _scale_info(desc, key, rows, cols)
            out, out_arr, out_ld = _values(out, x_arr, lead, rows, cols, out_type)
            static = desc._keep.get(QuantDescAttribute.STATIC_SCALE_POINTER) if scales is None else None
            scales, scales_arr = _scales(scales, x_arr, info)
            if info.bytes == 0 and static is not None:
                scales = static  # PER_TENSOR_STATIC writes no scales: return the scale it used
        elif out is not None or scales is not None:
            raise FusedQuantError(Status.INVALID_VALUE, "out, scales: outputs asks for the columnwise output only")
        if columnwise:
            shape = columnwise_shape(desc, lead, rows, cols)
            col_out, col_arr = _col_values(col_out, x_arr, shape, out_type)
            col_info = _scale_info(desc, key, rows, cols, "columnwise")
            col_scales, col_scales_arr = _scales(col_scales, x_arr, col_info)
            desc.set(QuantDescAttribute.COLUMNWISE_OUTPUT_POINTER, (wrap(col_out) if col_arr is None else col_arr).ptr)
            desc.set(QuantDescAttribute.COLUMNWISE_SCALE_POINTER, col_scales_arr.ptr if col_info.bytes else 0)
        elif col_out is not None or col_scales is not None:
            raise FusedQuantError(Status.INVALID_VALUE, "col_out, col_scales: outputs does not ask for the "
                                  "columnwise output")
        h = handle or default_handle(backend, x_arr.device)
        if (h.get("backend"), h.get("device")) != (backend, x_arr.device):
            raise FusedQuantError(Status.INVALID_VALUE, f"handle: backend {h.get('backend')!r} device "
                                  f"{h.get('device')}, x is on {x_arr.where}")
        lin, lout = _layout(in_type, rows, width, ld), _layout(out_type, rows, cols, out_ld)
        # A caller's handle may have its attributes changed between calls, which a plan would not see.
        planned = key is not None and handle is None and not columnwise and \
            not any(_ctype(a).endswith("*") for a in attrs)
        with _arrays.device_guard(x_arr.kind, x_arr.device):
            plan = _plan(h, desc, key, lin, lout) if planned else None
            ws_size = _workspace_size(h, desc, key, lin, lout)
            ws = _workspace(workspace, x_arr, ws_size)
            buffers = (0 if out_arr is None else out_arr.ptr, 0 if scales_arr is None else scales_arr.ptr,
                       0 if scales_arr is None else scales_arr.capacity, wrap(ws).ptr if ws is not None else 0,
                       wrap(ws).capacity if ws is not None else 0, _stream(x_arr.kind, x_arr.device, stream))
            if plan:
                plan.run(x_arr.ptr, *buffers)
            else:
                h.quantize(desc, lin[1], x_arr.ptr, lout[1], *buffers)
        if plan and call_key is not None:  # the next such call is this plan's execution alone
            packed = out_type == DataType.FP4_E2M1
            out_shape = (*lead, ceil_div(cols, 2) if packed else cols)
            out_dtype = _arrays.TYPE_TO_DTYPE[out_type.name]
            planned_call = _lru("call", call_key, lambda: _PlannedCall(plan, out_shape, out_dtype, info, ws_size))
            if torch_key is not None:
                _lru("call", torch_key, lambda: planned_call)
    if columnwise:
        return (out if rowwise else None), (scales if rowwise else None), col_out, col_scales
    return out, scales


def scale_buffer_info(rows, cols, *, which="rowwise", **attributes):
    """ScaleBufferInfo (bytes, rows, cols, padded_rows, padded_cols, row_stride, col_stride, element_bytes,
    dtype, batch, batch_stride) of the scales of a rows x cols output under these descriptor attributes
    (the keywords of quantize(); pointer attributes are ignored)."""
    with QuantDesc() as desc:
        for attr, value in _with_implied(_attributes(attributes)).items():
            if not _ctype(attr).endswith("*"):
                desc.set(attr, value)
        return desc.scale_buffer_info(rows, cols, which)


def _repack_scale_type(scale_dtype, src, src_layout):
    """The DataType of the scales in `src`: scale_dtype when given, else from src's dtype (int32 words are
    E8M0 in PACKED_UE8M0; raw uint8 bytes must say what they hold)."""
    if scale_dtype is not None:
        return to_enum(DataType, scale_dtype)
    if src.dtype == "int32" and src_layout == ScaleLayout.PACKED_UE8M0:
        return DataType.E8M0
    if src.dtype in ("float32", "float8_e8m0fnu", "float8_e4m3fn"):
        return DataType[_arrays.DTYPE_TO_TYPE[src.dtype]]
    raise FusedQuantError(Status.INVALID_VALUE, f"scale_dtype: src has dtype {src.dtype}; say which scales it holds "
                          "(scale_dtype='fp32', 'e8m0' or 'fp8_e4m3fn')")


@_arrays.framework_neutral
def repack_scales(src, rows, groups, *, src_layout, dst_layout, scale_dtype=None, batch=None, row_offsets=None,
                  stacked_rows=0, batching=None, out=None, handle=None, stream=None):
    """Rewrites scales from src_layout to dst_layout (fqScaleRepack); returns the destination storage.

    src: the source scale buffer (NumPy array or PyTorch CPU tensor: host backend; PyTorch CUDA tensor or CuPy
       array: its GPU, on the current stream or `stream`), read from its start in src_layout's storage order,
       e.g. the storage of quantize()'s scales or a producer's buffer. Its bytes from its start to the end of its
       allocation must hold scale_repack_size(...) bytes.
    rows, groups: logical scale rows of one block (one expert) and scale columns (groups per row).
    src_layout, dst_layout: ScaleLayout members, ints or names ("row_major", "swizzled_128x4", ...).
    scale_dtype: "fp32", "e8m0" or "fp8_e4m3fn" (NVFP4 block scales), or a DataType / dtype; by default taken
       from src's dtype (float32, float8_e8m0fnu, float8_e4m3fn; int32 words of PACKED_UE8M0 are E8M0).
    batch: blocks of rows x groups (default 1, or len(row_offsets) - 1).
    row_offsets: None, or batch + 1 int32 row offsets into the stacked side (an int32 array on src's device, or
       numbers, copied there), read when the work runs. With them one side is one stacked block of
       `stacked_rows` rows and batch b is its rows [off[b], off[b+1]).
    batching: ScaleRepackBatching ("blocks", "stacked_to_blocks", "blocks_to_stacked"); default "blocks", or
       "stacked_to_blocks" when row_offsets are given.
    out: optional destination of at least scale_repack_size(...) bytes from its start; returned as given.
       Otherwise a new flat array of dst_layout's storage elements on src's device: float32 for FP32 scales,
       int32 words for PACKED_UE8M0, else the byte-scale dtype (float8_e8m0fnu / float8_e4m3fn; uint8 where the
       framework has none). Every byte of it is written: layout padding and rows of no batch are 0.
    """
    s = wrap(src)
    src_layout, dst_layout = to_enum(ScaleLayout, src_layout), to_enum(ScaleLayout, dst_layout)
    scale_type = _repack_scale_type(scale_dtype, s, src_layout)
    if batching is None:
        batching = ScaleRepackBatching.BLOCKS if row_offsets is None else ScaleRepackBatching.STACKED_TO_BLOCKS
    batching = to_enum(ScaleRepackBatching, batching)
    offsets_arr = keep = None
    if row_offsets is not None:
        try:
            offsets_arr = wrap(row_offsets)
            keep = row_offsets
        except TypeError:
            keep = device_numbers("row_offsets", s.kind, s.device, row_offsets, "int32")
            offsets_arr = wrap(keep)
        if offsets_arr.device != s.device:
            raise FusedQuantError(Status.INVALID_VALUE, f"row_offsets: the array is on {offsets_arr.where}, src is on "
                                  f"{s.where}")
        if offsets_arr.dtype != "int32" or len(offsets_arr.shape) != 1:
            raise FusedQuantError(Status.INVALID_VALUE, f"row_offsets: a 1-D int32 array, not {offsets_arr.dtype} of "
                                  f"shape {offsets_arr.shape}")
        if offsets_arr.shape[0] > 1 and offsets_arr.strides[0] != 4:
            raise FusedQuantError(Status.INVALID_VALUE, "row_offsets: must be contiguous")
        if batch is None:
            batch = max(offsets_arr.shape[0] - 1, 0)
        if offsets_arr.shape[0] != batch + 1:
            raise FusedQuantError(Status.INVALID_VALUE, f"row_offsets: {offsets_arr.shape[0]} entries, batch + 1 = "
                                  f"{batch + 1} expected")
    batch = 1 if batch is None else batch
    dst_stacked = batching == ScaleRepackBatching.BLOCKS_TO_STACKED
    try:
        dst_bytes = scale_repack_size(scale_type, 1 if dst_stacked else batch, stacked_rows if dst_stacked else rows,
                                      groups, dst_layout)
    except FusedQuantError as e:  # the size query calls its layout argument "layout": here it is dst_layout
        raise FusedQuantError(e.status, re.sub(r"^layout:", "dst_layout:", e.message)) from None
    if out is None:
        element = 4 if scale_type == DataType.FP32 or dst_layout == ScaleLayout.PACKED_UE8M0 else 1
        dtype = "int32" if dst_layout == ScaleLayout.PACKED_UE8M0 else _arrays.TYPE_TO_DTYPE[scale_type.name]
        out = _arrays.empty(s.kind, s.device, (dst_bytes // element,), dtype)
    o = wrap(out)
    if o.device != s.device:
        raise FusedQuantError(Status.INVALID_VALUE, f"out: the array is on {o.where}, src is on {s.where}")
    if getattr(getattr(o.obj, "flags", None), "writeable", True) is False:
        raise FusedQuantError(Status.INVALID_VALUE, "out: the array is read-only")
    h = handle or default_handle(Backend.HOST if s.device < 0 else Backend.CUDA, s.device)
    with _arrays.device_guard(s.kind, s.device):
        st = _stream(s.kind, s.device, stream)
        h.scale_repack(scale_type, batch, rows, groups, batching, offsets_arr.ptr if offsets_arr is not None else 0, stacked_rows,
                       src_layout, s.ptr, s.capacity, dst_layout, o.ptr, o.capacity, st)
    # `keep` held offsets copied from numbers alive through the call; on a GPU their memory goes back to the
    # framework's caching allocator, which reuses it in the current stream's order (with another `stream=`,
    # pass the offsets as a device array that outlives the work).
    del keep
    return out
