"""grouped_gemm(): the grouped FP8 GEMM with the fused activation + quantization epilogue (fqGroupedGemm,
docs/gemm.md) over arrays of the caller's framework."""
import dataclasses

from . import _arrays
from ._api import (_attributes, _col_values, _ctype, _pointer_value, _rows, _scales, _stream, _values,
                   _with_implied, _writable, device_numbers)
from ._arrays import ceil_div, wrap
from ._core import (ENUMS, DataType, FusedQuantError, GroupedGemmDesc, QuantDesc, Status, TensorLayout,
                    default_handle, to_enum)

QuantDescAttribute, GateLayout, Backend = ENUMS["fqQuantDescAttribute"], ENUMS["fqGateLayout"], ENUMS["fqBackend"]
ScaleLayout, Outputs = ENUMS["fqScaleLayout"], ENUMS["fqOutputs"]
_BLOCK = 128  # K elements (and B rows) per scale block of A and B


@dataclasses.dataclass
class GroupedGemmResult:
    """What grouped_gemm() wrote; None for an output not asked for. c: bf16 [M, N]; d: bf16 y [M, H];
    values, scales (and col_values, col_scales): the quantized y, as quantize() returns them."""
    c: object = None
    d: object = None
    values: object = None
    scales: object = None
    col_values: object = None
    col_scales: object = None


def _on(name, obj, x):
    a = wrap(obj)
    if a.device != x.device:
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: the array is on {a.where}, a is on {x.where}")
    return a


def _fp8(name, obj, x):
    arr = _on(name, obj, x)
    if arr.dtype not in ("float8_e4m3fn", "uint8"):
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: dtype {arr.dtype}; the operands are float8_e4m3fn "
                              "(or their uint8 bytes)")
    return arr


def _fp32_buffer(name, obj, x, need):
    arr = _on(name, obj, x)
    if arr.dtype != "float32":
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: dtype {arr.dtype}; the scales are float32")
    if arr.capacity < need:
        raise FusedQuantError(Status.INSUFFICIENT_BUFFER, f"{name}: {arr.capacity} bytes from its start, the "
                              f"scales take {need}")
    return arr


def _small(name, value, x, dtype, count):
    """A 1-D contiguous int32 / float32 array of at least `count` values on x's device (numbers are copied there)."""
    try:
        arr = wrap(value)
    except TypeError:
        value = device_numbers(name, x.kind, x.device, value, dtype)
        arr = wrap(value)
    if arr.device != x.device:
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: the array is on {arr.where}, a is on {x.where}")
    if arr.dtype != dtype or len(arr.shape) != 1 or arr.shape[0] < count or (count > 1 and arr.strides[0] != 4):
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: {count} contiguous {dtype} values, not {arr.dtype} of "
                              f"shape {arr.shape}")
    return value


def _bf16_out(name, given, x, rows, cols):
    """A bf16 [rows, cols] output with row stride cols (new when `given` is True), or None."""
    if given is None or given is False:
        return None, 0
    if given is True:
        given = _arrays.empty(x.kind, x.device, (rows, cols), "bfloat16")
    o = _writable(name, _on(name, given, x))
    if o.dtype not in ("bfloat16", "uint16"):
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: dtype {o.dtype}; bf16 outputs are bfloat16 (or uint16 "
                              "bits)")
    if rows * cols and (tuple(o.shape) != (rows, cols) or tuple(o.strides) != (2 * cols, 2)):
        raise FusedQuantError(Status.INVALID_VALUE, f"{name}: shape {tuple(o.shape)} strides {tuple(o.strides)}; "
                              f"the output is a contiguous ({rows}, {cols})")
    return given, o.ptr


def grouped_gemm(a, a_scales, b, b_scales, *, num_groups=None, group_offsets=None, group_counts=None, alpha=None,
                 a_scale_layout="col_major_tma", c=True, d=False, quantize=True, out=None, scales=None, col_out=None,
                 col_scales=None, handle=None, stream=None, **attributes):
    """C = alpha[g] * (A * sa) (B[g] * sb)^T per group, then the epilogue (fqGroupedGemm); returns a
    GroupedGemmResult.

    a: [M, K] float8_e4m3fn (uint8 bytes accepted), rows 16-byte aligned. NumPy arrays and PyTorch CPU tensors run
       on the host backend (the fp64 reference), PyTorch CUDA tensors and CuPy arrays on their GPU, on the current
       stream (or `stream`).
    a_scales: float32 1x128 scales of A in `a_scale_layout` ("col_major_tma": ld round_up(M, 4), or "col_major":
       ld M), ceil(K/128) columns: the storage quantize(..., scheme="per_group", group_size=128,
       scale_layout=a_scale_layout) returns.
    b: [E, N, K] or [E*N, K] float8_e4m3fn weights (E = num_groups, default b.shape[0] of a 3-D b, or 1).
    b_scales: float32 128x128 block scales of B: E blocks of ceil(N/128) x ceil(K/128), row-major.
    group_offsets: E+1 int32 row offsets (group g owns rows [off[g], off[g+1]) of A); None: one group of all rows.
    group_counts: optional E int32 valid-row counts of each slot. alpha: optional E float32 per-group alphas.
    c, d: True for a new bf16 array, an array to write, or False / None for none: C [M, N] and y [M, H]
       (H = N/2 with a gated activation, else N).
    quantize: False writes no quantized output (the quantization attributes are then ignored).
    attributes: the epilogue descriptor, by quantize()'s keywords (activation, gate_layout, scheme, group_size,
       scale_layout, out_dtype, row_prob, outputs, ...), without MoE attributes (the groups are the GEMM's).
    out, scales, col_out, col_scales: the quantized output's buffers, as quantize() takes them.
    """
    x = _fp8("a", a, wrap(a))
    lead, m, k, lda = _rows("a", x)
    bx = _fp8("b", b, x)
    if len(bx.shape) == 3:
        if num_groups is not None and num_groups != bx.shape[0]:
            raise FusedQuantError(Status.INVALID_VALUE, f"num_groups: {num_groups}, b holds {bx.shape[0]} weights")
        num_groups = bx.shape[0]
    elif num_groups is None:
        num_groups = 1
    _, b_rows, b_cols, ldb = _rows("b", bx)
    if num_groups < 1 or b_rows % num_groups:
        raise FusedQuantError(Status.INVALID_VALUE, f"b: {b_rows} rows are not num_groups {num_groups} x N")
    n = b_rows // num_groups
    a_scale_layout = to_enum(ScaleLayout, a_scale_layout)
    a_ld = -(-m // 4) * 4 if a_scale_layout == ScaleLayout.COL_MAJOR_TMA else m
    sa = _fp32_buffer("a_scales", a_scales, x, 4 * ceil_div(k, _BLOCK) * a_ld)
    sb = _fp32_buffer("b_scales", b_scales, x, 4 * num_groups * ceil_div(n, _BLOCK) * ceil_div(b_cols, _BLOCK))
    backend = Backend.HOST if x.device < 0 else Backend.CUDA

    with GroupedGemmDesc(num_groups=num_groups, a_scale_layout=a_scale_layout, quantize=int(bool(quantize))) as g, \
            QuantDesc() as epi:
        if group_offsets is not None:
            g.set("group_offsets_pointer", _small("group_offsets", group_offsets, x, "int32", num_groups + 1))
        if group_counts is not None:
            g.set("group_counts_pointer", _small("group_counts", group_counts, x, "int32", num_groups))
        if alpha is not None:
            g.set("alpha_pointer", _small("alpha", alpha, x, "float32", num_groups))
        settings = _with_implied(_attributes(attributes))  # the scheme's own types, as quantize() sets them
        for attr, value in settings.items():
            epi.set(attr, _pointer_value(attr, value, x, num_groups, m) if _ctype(attr).endswith("*") and
                    value is not None else value)
        gated = epi.get(QuantDescAttribute.GATE_LAYOUT) != GateLayout.NONE
        h = n // 2 if gated else n
        result = GroupedGemmResult()
        result.c, c_ptr = _bf16_out("c", c, x, m, n)
        result.d, d_ptr = _bf16_out("d", d, x, m, h)
        g.set("c_output_pointer", c_ptr)
        g.set("d_output_pointer", d_ptr)
        out_arr = scales_arr = None
        out_type, out_ld = epi.get(QuantDescAttribute.OUTPUT_TYPE), h
        if quantize:
            # Scale buffers of the sizes the GEMM writes (its groups as MoE CONTIGUOUS experts).
            outputs = int(epi.get(QuantDescAttribute.OUTPUTS))
            if outputs & Outputs.ROWWISE:
                out, out_arr, out_ld = _values(out, x, lead, m, h, out_type)
                scales, scales_arr = _scales(scales, x, g.scale_buffer_info(epi, m, h))
                result.values, result.scales = out, scales
            if outputs & Outputs.COLUMNWISE:
                packed = out_type == DataType.FP4_E2M1
                shape = (h, m) if epi.get(QuantDescAttribute.COLUMNWISE_TRANSPOSE) else (*lead, h)
                shape = (*shape[:-1], ceil_div(shape[-1], 2) if packed else shape[-1])
                col_out, col_arr = _col_values(col_out, x, shape, out_type)
                col_info = g.scale_buffer_info(epi, m, h, "columnwise")
                col_scales, col_scales_arr = _scales(col_scales, x, col_info)
                epi.set(QuantDescAttribute.COLUMNWISE_OUTPUT_POINTER, (wrap(col_out) if col_arr is None
                                                                       else col_arr).ptr)
                epi.set(QuantDescAttribute.COLUMNWISE_SCALE_POINTER, col_scales_arr.ptr if col_info.bytes else 0)
                result.col_values, result.col_scales = col_out, col_scales
        hd = handle or default_handle(backend, x.device)
        if (hd.get("backend"), hd.get("device")) != (backend, x.device):
            raise FusedQuantError(Status.INVALID_VALUE, f"handle: backend {hd.get('backend')!r} device "
                                  f"{hd.get('device')}, a is on {x.where}")
        with TensorLayout(DataType.FP8_E4M3FN, m, k, lda) as la, \
                TensorLayout(DataType.FP8_E4M3FN, b_rows, b_cols, ldb) as lb, \
                TensorLayout(out_type, m, h, out_ld) as lo, _arrays.device_guard(x.kind, x.device):
            s = _stream(x.kind, x.device, stream)
            hd.grouped_gemm(g, epi, la, x.ptr, sa.ptr, lb, bx.ptr, sb.ptr, lo if quantize else None,
                            0 if out_arr is None else out_arr.ptr, 0 if scales_arr is None else scales_arr.ptr,
                            0 if scales_arr is None else scales_arr.capacity, s)
    return result
