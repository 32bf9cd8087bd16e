"""fusedquant: Python binding of libfusedquant (fused gated activation + FP8/INT8 quantization).

    values, scales = fusedquant.quantize(x, activation="silu", gate_layout="split", group_size=128)
    swizzled = fusedquant.repack_scales(e8m0_scales, rows, groups, src_layout="row_major",
                                        dst_layout="swizzled_128x4")
    r = fusedquant.grouped_gemm(a, a_scales, b, b_scales, group_offsets=offsets, activation="silu",
                                gate_layout="split", scale_layout="col_major_tma")   # r.c, r.values, r.scales

The IntEnums (Status, DataType, Activation, GateLayout, QuantScheme, ScaleLayout, QuantDescAttribute, ...)
are generated from the C header's enums: FQ_ACTIVATION_SILU is Activation.SILU. See README.md.
"""
from ._api import clear_cache, quantize, repack_scales, scale_buffer_info
from ._core import (ENUMS, FusedQuantError, GroupedGemmDesc, Handle, Plan, QuantDesc, ScaleBufferInfo, TensorLayout,
                    ffi,
                    header_version, lib, library_path, library_version, scale_repack_size)
from ._gemm import GroupedGemmResult, grouped_gemm

# The torch operators (torch_ops.py) and their functional names: imported on first use, or now when the caller
# already imported torch, so torch.ops.fusedquant.* exist before a compiled graph refers to them.
_TORCH_NAMES = ("torch_ops", "silu_and_mul_quant", "gelu_and_mul_quant", "swiglu_oai_quant", "mxfp8_quantize",
                "nvfp4_quantize", "per_token_group_quant", "per_token_quant", "per_tensor_quant")


def _import_torch_ops():
    """Imports torch_ops and binds its names here (later uses of them skip __getattr__)."""
    torch_ops = __import__("importlib").import_module(".torch_ops", __name__)
    globals().update({name: getattr(torch_ops, name) for name in _TORCH_NAMES[1:]}, torch_ops=torch_ops)
    return torch_ops


def __getattr__(name):
    if name in _TORCH_NAMES:
        try:
            _import_torch_ops()
        except ImportError as e:
            raise ImportError(f"fusedquant.{name} needs PyTorch >= 2.4 (torch.library.custom_op): {e}") from e
        return globals()[name]
    raise AttributeError(f"module 'fusedquant' has no attribute {name!r}")


if "torch" in __import__("sys").modules:
    _import_torch_ops()

globals().update({cls.__name__: cls for cls in ENUMS.values()})
__version__ = ".".join(map(str, header_version))
__all__ = ["quantize", "clear_cache", "scale_buffer_info", "repack_scales", "scale_repack_size", "grouped_gemm", "GroupedGemmResult",
           "FusedQuantError", "Handle", "Plan", "QuantDesc", "GroupedGemmDesc", "TensorLayout",
           "ScaleBufferInfo", "library_version", "library_path", "header_version", "ffi", "lib",
           *(cls.__name__ for cls in ENUMS.values())]
