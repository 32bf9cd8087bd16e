"""The array frameworks the Pythonic layer speaks: NumPy (host), PyTorch (CPU = host, CUDA) and CuPy (CUDA).

torch and cupy are never imported here unless the caller already handed us one of their arrays.
Every array is reduced to an `Array`: address, shape, byte strides, dtype name and device.
"""
import contextlib
import dataclasses
import sys

import ml_dtypes  # noqa: F401  (registers bfloat16, float8_* dtypes with NumPy)
import numpy as np

# The natural dtype (by name, the same in NumPy/ml_dtypes and PyTorch) of each library type (DataType names).
# FP4 values are packed two per byte (element 2i in the low nibble), so their arrays are uint8.
TYPE_TO_DTYPE = {"FP32": "float32", "FP16": "float16", "BF16": "bfloat16", "FP8_E4M3FN": "float8_e4m3fn",
                 "FP8_E4M3FNUZ": "float8_e4m3fnuz", "FP8_E5M2": "float8_e5m2", "INT8": "int8",
                 "FP4_E2M1": "uint8", "E8M0": "float8_e8m0fnu", "INT32": "int32"}
DTYPE_TO_TYPE = {d: t for t, d in TYPE_TO_DTYPE.items() if d != "uint8"} | {"float4_e2m1fn": "FP4_E2M1"}
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4, "uint16": 2}  # every other dtype here: 1 byte


def itemsize(name):
    return ITEMSIZE.get(name, 1)


def dtype_name(dtype):
    """'bfloat16', 'float8_e4m3fn', ... for a NumPy/ml_dtypes/PyTorch/CuPy dtype or scalar type."""
    if type(dtype).__module__.startswith("torch"):
        return str(dtype).rpartition(".")[2]
    return np.dtype(dtype).name


@dataclasses.dataclass
class Array:
    obj: object
    kind: str       # "numpy" | "torch" | "cupy"
    device: int     # -1: host memory; else the CUDA ordinal
    ptr: int
    shape: tuple
    strides: tuple  # bytes
    itemsize: int
    dtype: str
    capacity: int   # bytes from ptr to the end of the allocation

    @property
    def where(self):
        return "the host" if self.device < 0 else f"CUDA device {self.device}"


def wrap(obj):
    """An Array for a NumPy array, a PyTorch tensor or a CuPy array (TypeError for anything else)."""
    if isinstance(obj, np.ndarray):
        if not obj.dtype.isnative:
            raise TypeError(f"fusedquant: a byte-swapped {obj.dtype} array; use .astype(native dtype)")
        owner = obj  # the array that owns the memory, through views and as_strided's DummyArray
        while True:
            base = owner.base if isinstance(owner.base, np.ndarray) else getattr(owner.base, "base", None)
            if not isinstance(base, np.ndarray):
                break
            owner = base
        ptr = obj.__array_interface__["data"][0]
        end = owner.__array_interface__["data"][0] + owner.nbytes
        return Array(obj, "numpy", -1, ptr, obj.shape, obj.strides, obj.itemsize, obj.dtype.name, end - ptr)
    module = type(obj).__module__.partition(".")[0]
    if module == "torch":
        if obj.device.type not in ("cpu", "cuda"):
            raise TypeError(f"fusedquant: torch tensors on {obj.device} are not supported (cpu and cuda are)")
        n = obj.element_size()
        return Array(obj, "torch", -1 if obj.device.type == "cpu" else obj.device.index, obj.data_ptr(),
                     tuple(obj.shape), tuple(s * n for s in obj.stride()), n, dtype_name(obj.dtype),
                     obj.untyped_storage().nbytes() - obj.storage_offset() * n)
    if module == "cupy":
        cai = obj.__cuda_array_interface__
        ptr, mem = cai["data"][0], obj.data.mem
        return Array(obj, "cupy", obj.device.id, ptr, tuple(cai["shape"]), tuple(obj.strides), obj.itemsize,
                     obj.dtype.name, mem.size - (ptr - mem.ptr))
    raise TypeError(f"fusedquant: expected a numpy array, torch tensor or cupy array, got {type(obj).__name__}")


def _framework_dtype(kind, name):
    if kind == "numpy":
        return np.dtype(name)  # ml_dtypes registers bfloat16, float8_*, ... with NumPy
    if kind == "torch":
        import torch
        return getattr(torch, name, None) or (torch.uint8 if itemsize(name) == 1 else None)
    if name in ("float32", "float16", "int8", "uint8", "int32", "uint16"):
        return np.dtype(name)
    if name == "bfloat16":  # CuPy has no bfloat16: its bits as uint16
        return np.dtype("uint16")
    if itemsize(name) == 1:  # CuPy has no fp8 dtypes: raw bytes
        return np.dtype("uint8")
    raise TypeError(f"fusedquant: CuPy has no {name} dtype")


def framework_dtype_name(kind, name):
    """The dtype name `kind` really uses for the library's natural dtype `name` (uint8 where it has none)."""
    return dtype_name(_framework_dtype(kind, name))


def empty(kind, device, shape, name):
    dtype = _framework_dtype(kind, name)
    if kind == "numpy":
        return np.empty(shape, dtype)
    if kind == "torch":
        import torch
        return torch.empty(shape, dtype=dtype, device="cpu" if device < 0 else f"cuda:{device}")
    import cupy
    with cupy.cuda.Device(device):
        return cupy.empty(shape, dtype)


def from_values(kind, device, values, name):
    """A 1-D array of `values` on the device (for scalar inputs such as static_scale=0.5)."""
    host = np.asarray(values, dtype=name).reshape(-1)
    if kind == "numpy":
        return host
    if kind == "torch":
        import torch
        return torch.from_numpy(host).to("cpu" if device < 0 else f"cuda:{device}")
    import cupy
    with cupy.cuda.Device(device):
        return cupy.asarray(host)


def as_strided(kind, storage, shape, strides):
    if kind == "numpy":
        return np.lib.stride_tricks.as_strided(storage, shape, strides, writeable=True)
    if kind == "torch":
        return storage.as_strided(shape, [s // storage.element_size() for s in strides])
    import cupy
    return cupy.lib.stride_tricks.as_strided(storage, shape, strides)


def current_stream(kind, device):
    if device < 0:
        return 0
    if kind == "torch":
        return sys.modules["torch"].cuda.current_stream(device).cuda_stream
    import cupy
    with cupy.cuda.Device(device):
        return cupy.cuda.get_current_stream().ptr


def device_guard(kind, device):
    if device < 0:
        return contextlib.nullcontext()
    if kind == "torch":
        return sys.modules["torch"].cuda.device(device)
    return sys.modules["cupy"].cuda.Device(device)


def ceil_div(a, b):
    return -(-a // b)
