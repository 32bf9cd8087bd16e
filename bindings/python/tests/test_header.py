"""The binding is generated from the header and must agree with it and with the loaded library."""
import re

import fusedquant
from fusedquant import _core, _gen
from conftest import HEADER

TEXT = HEADER.read_text()


def test_loaded_cdef_and_metadata_equal_a_fresh_generation_from_the_header():
    fresh = _gen.generate(HEADER)
    loaded = _core.DATA
    assert loaded["header_sha256"] == fresh["header_sha256"], "the installed binding was built from another header"
    assert loaded == fresh


def test_every_header_enum_constant_is_an_intenum_member_with_the_same_value():
    # parsed here independently of _gen (comments stripped, then NAME = value)
    body = re.sub(r"/\*.*?\*/", "", TEXT, flags=re.S)
    enums = re.findall(r"\benum\s+(fq\w+)\s*\{(.*?)\}", body, flags=re.S)
    assert len(enums) >= 18
    for cname, members in enums:
        cls = _core.ENUMS[cname]
        pairs = re.findall(r"(FQ_\w+)\s*=\s*(\d+)", members)
        assert len(cls) == len(pairs), cname
        for name, value in pairs:
            assert getattr(fusedquant, cls.__name__) is cls
            assert cls[name[len(_core.PREFIX[cname]):]] == int(value), name
            assert getattr(_core.lib, name) == int(value), name


def test_every_header_function_is_exported_by_the_library():
    names = re.findall(r"\bFQ_API\s+[\w\s\*]+?\b(fq\w+)\s*\(", TEXT)
    assert "fqQuantize" in names and len(names) >= 20
    for name in names:
        getattr(_core.lib, name)  # raises AttributeError when the symbol is missing


def test_library_and_header_versions_agree():
    m = _gen.macros(TEXT)
    number = m["FQ_VERSION_MAJOR"] * 10000 + m["FQ_VERSION_MINOR"] * 100 + m["FQ_VERSION_PATCH"]
    assert _core.lib.fqGetVersion() == number
    assert fusedquant.__version__ == f"{m['FQ_VERSION_MAJOR']}.{m['FQ_VERSION_MINOR']}.{m['FQ_VERSION_PATCH']}"


def test_attribute_c_types_have_the_sizes_the_library_reports():
    with fusedquant.QuantDesc() as d:
        for attr in fusedquant.QuantDescAttribute:
            _, ctype, _ = d.attribute(attr)
            size = _core.ffi.new("size_t*")
            _core.check(_core.lib.fqQuantDescGetAttribute(d.ptr, attr, _core.ffi.NULL, 0, size))
            assert size[0] == _core.ffi.sizeof(ctype), attr
    with fusedquant.GroupedGemmDesc() as g:
        for attr in fusedquant.GroupedGemmDescAttribute:
            _, ctype, _ = g.attribute(attr)
            size = _core.ffi.new("size_t*")
            _core.check(_core.lib.fqGroupedGemmDescGetAttribute(g.ptr, attr, _core.ffi.NULL, 0, size))
            assert size[0] == _core.ffi.sizeof(ctype), attr
    for obj in (fusedquant.Handle(), fusedquant.TensorLayout("bf16", 2, 8)):  # get() sends sizeof(ctype)
        for attr in _core.ENUMS[type(obj)._attr_enum]:
            obj.get(attr)


def test_each_status_has_the_librarys_name():
    for s in fusedquant.Status:
        assert _core.ffi.string(_core.lib.fqGetStatusString(s)).decode() == "FQ_STATUS_" + s.name
