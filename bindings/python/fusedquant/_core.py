"""The C API through cffi (ABI mode): library loading, IntEnums made from the header's enums, errors, and
the descriptor objects (Handle, QuantDesc, TensorLayout) mirrored one to one."""
import dataclasses
import enum
import numbers
import os
import re
import sys
import threading
import weakref
from pathlib import Path

import cffi

from . import _arrays, _gen

_HERE = Path(__file__).resolve().parent
_REPO = _HERE.parents[2]  # bindings/python/fusedquant -> the repository root, in a source checkout


def _find_header():
    for p in (os.environ.get("FUSEDQUANT_HEADER"), _HERE / "include" / "fusedquant.h",
              _REPO / "include" / "fusedquant" / "fusedquant.h"):
        if p and Path(p).is_file():
            return Path(p)
    raise ImportError("fusedquant: no generated fusedquant/_cdef.py and no fusedquant.h to generate it from "
                      "(install the package with pip, or set FUSEDQUANT_HEADER)")


try:  # written by setup.py at build time
    from ._cdef import DATA
except ImportError:  # a source checkout: generate from the header now
    DATA = _gen.generate(_find_header())

ffi = cffi.FFI()
ffi.cdef(DATA["cdef"])

_NAMES = ("libfusedquant.so.0", "libfusedquant.so", "libfusedquant.dylib", "fusedquant.dll")


def _library_candidates():
    """Where the shared library is looked for, in order (README.md)."""
    if os.environ.get("FUSEDQUANT_LIBRARY"):
        return [Path(os.environ["FUSEDQUANT_LIBRARY"])]
    dirs = [_HERE]  # bundled next to the package
    # <prefix>/lib/pythonX.Y/site-packages/fusedquant -> <prefix>/lib (CMake's install prefix, a venv, ...)
    dirs += [p for p in _HERE.parents if p.name in ("lib", "lib64")] + [Path(sys.prefix) / "lib"]
    for root in (_REPO, DATA.get("source_root")):  # a CMake build tree of the checkout
        if root:
            dirs += [Path(root) / "build", Path(root) / "build" / "lib"]
    return [d / n for d in dict.fromkeys(dirs) for n in _NAMES] + [Path(_NAMES[0])]  # last: the system loader


def _load():
    tried = []
    for path in _library_candidates():
        if path.parent != Path(".") and not path.exists():
            continue
        try:
            return ffi.dlopen(str(path)), path
        except OSError as e:
            tried.append(f"{path}: {e}")
    raise ImportError("fusedquant: libfusedquant not found; build it with CMake or set FUSEDQUANT_LIBRARY.\n"
                      + "\n".join(tried))


lib, library_path = _load()
header_version = (DATA["macros"]["FQ_VERSION_MAJOR"], DATA["macros"]["FQ_VERSION_MINOR"],
                  DATA["macros"]["FQ_VERSION_PATCH"])


def library_version():
    """The (major, minor, patch) of the loaded library (fqGetVersion)."""
    v = lib.fqGetVersion()
    return (v // 10000, v // 100 % 100, v % 100)


if library_version()[0] != header_version[0]:
    raise ImportError(f"fusedquant: {library_path} is version {library_version()}, the binding was generated "
                      f"from header {header_version}: major versions differ")

# ---- enums: one IntEnum per C enum, members without their common prefix (FQ_STATUS_SUCCESS -> SUCCESS) ----


def _strip_prefix(names):
    prefix = os.path.commonprefix(names) if len(names) > 1 else names[0].rpartition("_")[0] + "_"
    prefix = prefix[:prefix.rfind("_") + 1]
    while any(not n[len(prefix):].isidentifier() for n in names):
        prefix = prefix[:prefix.rstrip("_").rfind("_") + 1]
    return prefix


ENUMS, PREFIX = {}, {}  # C enum name -> IntEnum class, and the prefix its members lost
for _cname in re.findall(r"\benum (fq\w+) \{", DATA["cdef"]):
    _members = sorted(ffi.typeof("enum " + _cname).relements.items(), key=lambda kv: kv[1])
    PREFIX[_cname] = _p = _strip_prefix([n for n, _ in _members])
    ENUMS[_cname] = enum.IntEnum(_cname[2:], [(n[len(_p):], v) for n, v in _members], module="fusedquant")
Status = ENUMS["fqStatus"]
DataType = ENUMS["fqDataType"]


def _enum_or_int(cls, value):
    try:
        return cls(value)
    except ValueError:  # a value a newer library added (enums are append-only)
        return int(value)


def to_enum(cls, value):
    """`value` as a member of `cls`: a member, its int, its name (any case), or for DataType an array dtype."""
    if isinstance(value, str) and value.upper() in cls.__members__:
        return cls[value.upper()]
    if cls is DataType and not isinstance(value, numbers.Integral):  # a dtype or its name
        try:
            name = value if isinstance(value, str) else _arrays.dtype_name(value)
        except TypeError:
            name = None
        if name in _arrays.DTYPE_TO_TYPE:
            return DataType[_arrays.DTYPE_TO_TYPE[name]]
    if isinstance(value, enum.Enum) and not isinstance(value, cls):
        raise FusedQuantError(Status.INVALID_VALUE, f"{value!r} is not a {cls.__name__}")
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return _enum_or_int(cls, int(value))
    raise FusedQuantError(Status.INVALID_VALUE, f"{value!r} is not a {cls.__name__}; one of "
                          + ", ".join(m.lower() for m in cls.__members__))


# ---- errors ----


class FusedQuantError(RuntimeError):
    """A failing call: `.status` (a Status) and `.message` (the library's fqGetLastErrorMessage())."""

    def __init__(self, status, message):
        self.status, self.message = _enum_or_int(Status, status), message
        name = getattr(self.status, "name", str(self.status))
        super().__init__(f"{name}: {message}" if message else name)


def check(status):
    if status != 0:
        raise FusedQuantError(status, ffi.string(lib.fqGetLastErrorMessage()).decode(errors="replace"))


# ---- descriptor objects ----


class _Object:
    """An opaque library object with create/destroy and attributes of the C types the header documents."""
    _api = _attr_enum = None  # (create, destroy, set, get) function names; the C attribute enum

    def __init__(self, *args):
        p = ffi.new(type(self)._ctype + "*")
        check(getattr(lib, self._api[0])(p, *args))
        self._ptr, self._keep = p[0], {}
        self._finalizer = weakref.finalize(self, getattr(lib, self._api[1]), self._ptr)

    @property
    def ptr(self):
        if not self._finalizer.alive:
            raise ValueError(f"{type(self).__name__} is closed")
        return self._ptr

    def close(self):
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @classmethod
    def attribute(cls, attr):
        """(member, C type, IntEnum of the value or None) of `attr` (a member, its int or its name)."""
        attr = to_enum(ENUMS[cls._attr_enum], attr)
        if not isinstance(attr, enum.Enum):
            raise FusedQuantError(Status.INVALID_VALUE, f"{cls.__name__}: unknown attribute {attr}")
        ctype, etype = DATA["attribute_types"][cls._attr_enum][PREFIX[cls._attr_enum] + attr.name]
        return attr, ctype, ENUMS.get(etype)

    def set(self, attr, value):
        """Sets an attribute. Enum values may be members, ints or names; pointers an int address, None or an
        array (numpy / torch / cupy), which this object keeps alive."""
        attr, ctype, etype = self.attribute(attr)
        if ctype.endswith("*"):
            self._keep.pop(attr, None)
            if value is not None and not isinstance(value, (int, ffi.CData)):
                self._keep[attr] = value
                value = _arrays.wrap(value).ptr
            value = ffi.cast(ctype, value or 0)
        elif etype is not None:
            value = int(to_enum(etype, value))
        check(getattr(lib, self._api[2])(self.ptr, attr, ffi.new(ctype + "[1]", [value]), ffi.sizeof(ctype)))

    def get(self, attr):
        attr, ctype, etype = self.attribute(attr)
        buf, written = ffi.new(ctype + "[1]"), ffi.new("size_t*")
        check(getattr(lib, self._api[3])(self.ptr, attr, buf, ffi.sizeof(ctype), written))
        if ctype.endswith("*"):
            return int(ffi.cast("uintptr_t", buf[0]))
        return _enum_or_int(etype, buf[0]) if etype else buf[0]


class TensorLayout(_Object):
    """A row-major 2-D tensor: dtype (DataType), rows, cols, ld (row stride in elements, default cols)."""
    _ctype, _api, _attr_enum = "fqTensorLayout_t", ("fqTensorLayoutCreate", "fqTensorLayoutDestroy",
                                                    "fqTensorLayoutSetAttribute", "fqTensorLayoutGetAttribute"), \
        "fqTensorLayoutAttribute"

    def __init__(self, dtype, rows, cols, ld=None):
        super().__init__(int(to_enum(DataType, dtype)), rows, cols, cols if ld is None else ld)


ScaleBufferInfo = dataclasses.make_dataclass(  # fields: the fqScaleInfo members, lower case
    "ScaleBufferInfo", [(m.lower(), int) for m in ENUMS["fqScaleInfo"].__members__], frozen=True,
    namespace={"__doc__": "Facts about a scale buffer (fqGetScaleBufferInfo); strides and sizes in bytes.",
               "__module__": "fusedquant"})


class QuantDesc(_Object):
    """A quantization descriptor; QuantDesc(activation="silu", group_size=64, ...) sets attributes by name."""
    _ctype, _api, _attr_enum = "fqQuantDesc_t", ("fqQuantDescCreate", "fqQuantDescDestroy",
                                                 "fqQuantDescSetAttribute", "fqQuantDescGetAttribute"), \
        "fqQuantDescAttribute"

    def __init__(self, **attrs):
        super().__init__()
        for k, v in attrs.items():
            self.set(k, v)

    def scale_buffer_size(self, rows, cols, which="rowwise"):
        size = ffi.new("size_t*")
        check(lib.fqGetScaleBufferSize(self.ptr, rows, cols, int(to_enum(ENUMS["fqOutputs"], which)), size))
        return size[0]

    def scale_buffer_info(self, rows, cols, which="rowwise"):
        return _scale_buffer_info(lambda *args: lib.fqGetScaleBufferInfo(self.ptr, rows, cols, *args), which)


def _scale_buffer_info(query, which):
    """ScaleBufferInfo from query(which, info, int64_t* value), one call per fqScaleInfo."""
    which, value, out = int(to_enum(ENUMS["fqOutputs"], which)), ffi.new("int64_t*"), {}
    for info in ENUMS["fqScaleInfo"]:
        check(query(which, info, value))
        out[info.name.lower()] = value[0]
    out["dtype"] = _enum_or_int(DataType, out["dtype"])
    return ScaleBufferInfo(**out)


class GroupedGemmDesc(_Object):
    """A grouped GEMM descriptor; GroupedGemmDesc(num_groups=8, quantize=0, ...) sets attributes by name
    (GroupedGemmDescAttribute, lower case)."""
    _ctype, _api, _attr_enum = "fqGroupedGemmDesc_t", ("fqGroupedGemmDescCreate", "fqGroupedGemmDescDestroy",
                                                       "fqGroupedGemmDescSetAttribute",
                                                       "fqGroupedGemmDescGetAttribute"), "fqGroupedGemmDescAttribute"

    def __init__(self, **attrs):
        super().__init__()
        for k, v in attrs.items():
            self.set(k, v)

    def scale_buffer_info(self, epilogue, rows, cols, which="rowwise"):
        """The scale buffer fqGroupedGemm writes for an [rows, cols] output with this descriptor's groups and
        the `epilogue` QuantDesc (fqGroupedGemmGetScaleBufferInfo)."""
        return _scale_buffer_info(
            lambda *args: lib.fqGroupedGemmGetScaleBufferInfo(self.ptr, epilogue.ptr, rows, cols, *args), which)


class Handle(_Object):
    """A library handle for a backend (Backend.HOST, or Backend.CUDA with a device ordinal, -1 = current)."""
    _ctype, _api, _attr_enum = "fqHandle_t", ("fqCreate", "fqDestroy", "fqHandleSetAttribute",
                                              "fqHandleGetAttribute"), "fqHandleAttribute"

    def __init__(self, backend=0, device=-1):
        super().__init__(int(to_enum(ENUMS["fqBackend"], backend)), device)

    def variants(self):
        """The dispatch table of this handle's backend: ["name: what it covers", ...]."""
        n, name = ffi.new("int32_t*"), ffi.new("char[512]")
        check(lib.fqGetVariantCount(self.ptr, n))
        out = []
        for i in range(n[0]):
            check(lib.fqGetVariantName(self.ptr, i, name, len(name)))
            out.append(ffi.string(name).decode())
        return out

    def query_support(self, desc, input_layout, output_layout):
        """The variant fqQuantize would run; raises FusedQuantError with the status execution would give."""
        name = ffi.new("char[512]")
        check(lib.fqQuerySupport(self.ptr, desc.ptr, input_layout.ptr, output_layout.ptr, name, len(name)))
        return ffi.string(name).decode()

    def workspace_size(self, desc, input_layout, output_layout):
        size = ffi.new("size_t*")
        check(lib.fqGetWorkspaceSize(self.ptr, desc.ptr, input_layout.ptr, output_layout.ptr, size))
        return size[0]

    def quantize(self, desc, input_layout, input, output_layout, output, scales, scales_size,
                 workspace=0, workspace_size=0, stream=0):
        """fqQuantize with raw addresses (ints); see fusedquant.quantize for the array-level call."""
        def p(address, ctype="void*"):
            return ffi.cast(ctype, address or 0)
        check(lib.fqQuantize(self.ptr, desc.ptr, input_layout.ptr, p(input), output_layout.ptr, p(output),
                             p(scales), scales_size, p(workspace), workspace_size, p(stream, "fqStream_t")))


    def scale_repack(self, scale_type, batch, rows, groups, batching, row_offsets, stacked_rows, src_layout, src,
                     src_size, dst_layout, dst, dst_size, stream=0):
        """fqScaleRepack with raw addresses (ints; row_offsets 0 for none); see fusedquant.repack_scales."""
        def p(address, ctype="void*"):
            return ffi.cast(ctype, address or 0)
        check(lib.fqScaleRepack(self.ptr, int(to_enum(DataType, scale_type)), batch, rows, groups,
                                int(to_enum(ENUMS["fqScaleRepackBatching"], batching)), p(row_offsets, "int32_t*"),
                                stacked_rows, int(to_enum(ENUMS["fqScaleLayout"], src_layout)), p(src), src_size,
                                int(to_enum(ENUMS["fqScaleLayout"], dst_layout)), p(dst), dst_size,
                                p(stream, "fqStream_t")))


    def grouped_gemm(self, gemm_desc, epilogue_desc, a_layout, a, a_scales, b_layout, b, b_scales, output_layout,
                     output, scales, scales_size, stream=0):
        """fqGroupedGemm with raw addresses (ints; output_layout None for none); see fusedquant.grouped_gemm."""
        def p(address, ctype="void*"):
            return ffi.cast(ctype, address or 0)
        check(lib.fqGroupedGemm(self.ptr, gemm_desc.ptr, epilogue_desc.ptr, a_layout.ptr, p(a), p(a_scales),
                                b_layout.ptr, p(b), p(b_scales),
                                output_layout.ptr if output_layout is not None else ffi.NULL, p(output), p(scales),
                                scales_size, p(stream, "fqStream_t")))


def scale_repack_size(scale_type, batch, rows, groups, layout):
    """Bytes of `batch` blocks of rows x groups scales of `scale_type` in `layout` (fqGetScaleRepackSize)."""
    size = ffi.new("size_t*")
    check(lib.fqGetScaleRepackSize(int(to_enum(DataType, scale_type)), batch, rows, groups,
                                   int(to_enum(ENUMS["fqScaleLayout"], layout)), size))
    return size[0]


_handles = threading.local()


def default_handle(backend, device):
    """One handle per (backend, device) and thread, created on first use."""
    cache = _handles.__dict__.setdefault("cache", {})
    if (backend, device) not in cache:
        cache[(backend, device)] = Handle(backend, device)
    return cache[(backend, device)]
