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


_DTYPE_NAMES = {}  # NumPy dtype -> its name, which is a Python-level property (read for every array of a call)


def _np_dtype_name(dtype):
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name


def wrap(obj):
    """An Array for a NumPy array, a PyTorch tensor or a CuPy array (TypeError for anything else)."""
    if isinstance(obj, np.ndarray):
        dtype = obj.dtype
        if not dtype.isnative:
            raise TypeError(f"fusedquant: a byte-swapped {dtype} array; use .astype(native dtype)")
        owner = obj  # the array that owns the memory, through views and as_strided's DummyArray
        while True:
            base = owner.base if isinstance(owner.base, np.ndarray) else getattr(owner.base, "base", None)
            if not isinstance(base, np.ndarray):
                break
            owner = base
        ptr = obj.__array_interface__["data"][0]
        end = (ptr if owner is obj else owner.__array_interface__["data"][0]) + owner.nbytes
        return Array(obj, "numpy", -1, ptr, obj.shape, obj.strides, obj.itemsize, _np_dtype_name(dtype), end - ptr)
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
                     _np_dtype_name(obj.dtype), mem.size - (ptr - mem.ptr))
    raise TypeError(f"fusedquant: expected a numpy array, torch tensor or cupy array, got {type(obj).__name__}")


def framework_dtype(kind, name):
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
    return dtype_name(framework_dtype(kind, name))


def empty(kind, device, shape, name):
    dtype = framework_dtype(kind, name)
    if kind == "numpy":
        return np.empty(shape, dtype)
    if kind == "torch":
        import torch
        return torch.empty(shape, dtype=dtype, device="cpu" if device < 0 else f"cuda:{device}")
    import cupy
    with cupy.cuda.Device(device):
        return cupy.empty(shape, dtype)


def capturing(kind, device):
    """Whether the current stream of `device` is capturing a CUDA graph (never for host memory)."""
    if device < 0:
        return False
    if kind == "torch":
        return sys.modules["torch"].cuda.is_current_stream_capturing()
    import cupy
    with cupy.cuda.Device(device):
        return cupy.cuda.get_current_stream().is_capturing()


def from_values(kind, device, values, name):
    """A 1-D array of `values` on the device (for scalar inputs such as static_scale=0.5). PyTorch copies from
    pinned host memory, asynchronously on the current stream; CuPy copies synchronously. The caller refuses
    numbers during CUDA-graph capture (capturing()), where a copy would be baked into the graph."""
    host = np.asarray(values, dtype=name).reshape(-1)
    if kind == "numpy":
        return host
    if kind == "torch":
        import torch
        t = torch.from_numpy(host)
        # torch's pinned-memory allocator keeps the buffer until the asynchronous copy has run
        return t if device < 0 else t.pin_memory().to(f"cuda:{device}", non_blocking=True)
    import cupy
    with cupy.cuda.Device(device):
        return cupy.asarray(host)  # CuPy's pinned pool does not follow streams: a synchronous copy


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
        torch = sys.modules["torch"]
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # what torch's own kernel launchers read
        return raw(device) if raw is not None else torch.cuda.current_stream(device).cuda_stream
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


# ---- objects of other frameworks: DLPack and the CUDA array interface ----
_DL_CPU, _DL_CUDA, _DL_CUDA_MANAGED = 1, 2, 13


def _foreign(obj):
    """Whether obj is an array of a framework this module does not speak but can read through DLPack or the
    CUDA array interface."""
    return (hasattr(obj, "__dlpack__") or hasattr(obj, "__cuda_array_interface__")) and \
        not isinstance(obj, np.ndarray) and type(obj).__module__.partition(".")[0] not in ("torch", "cupy")


def _bridge(obj):
    """obj as a PyTorch tensor (when torch is importable), else a CuPy array (GPU) or a NumPy array (host),
    sharing its memory."""
    on_gpu = hasattr(obj, "__cuda_array_interface__") or \
        obj.__dlpack_device__()[0] in (_DL_CUDA, _DL_CUDA_MANAGED)
    try:
        import torch
        return torch.from_dlpack(obj) if hasattr(obj, "__dlpack__") else \
            torch.as_tensor(obj, device="cuda")  # torch reads __cuda_array_interface__ in place
    except ImportError:
        pass
    if on_gpu:
        import cupy
        return cupy.from_dlpack(obj) if hasattr(obj, "__dlpack__") else cupy.asarray(obj)
    return np.from_dlpack(obj)


def _importer(obj):
    """The from_dlpack of obj's framework (JAX: jax.numpy.from_dlpack), or None."""
    module = type(obj).__module__.partition(".")[0]
    if module in ("jax", "jaxlib"):
        module = "jax.numpy"
    return getattr(sys.modules.get(module), "from_dlpack", None)


def framework_neutral(function):
    """function(x, ...) also for an x of another framework: x and the array arguments of that framework are read
    in place through DLPack (or __cuda_array_interface__), and the arrays of the result come back in x's
    framework where it imports DLPack; otherwise they stay the bridge framework's (DLPack-capable) arrays."""
    import functools

    @functools.wraps(function)
    def call(x, *args, **kwargs):
        if not _foreign(x):
            return function(x, *args, **kwargs)
        args = [_bridge(a) if _foreign(a) else a for a in args]
        kwargs = {k: _bridge(v) if _foreign(v) else v for k, v in kwargs.items()}
        result = function(_bridge(x), *args, **kwargs)
        importer = _importer(x)

        def back(r):
            if r is None or importer is None or not hasattr(r, "__dlpack__"):
                return r
            try:
                return importer(r)
            except (BufferError, TypeError, RuntimeError, ValueError):  # a dtype the framework cannot import
                return r
        return tuple(back(r) for r in result) if isinstance(result, tuple) else back(result)
    return call
