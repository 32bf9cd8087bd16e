"""Where the package finds its library and cdef: in itself when installed (pip, a wheel), with no environment
variable; $FUSEDQUANT_LIBRARY overrides that."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fusedquant
from fusedquant import _core
from conftest import REPO

PACKAGE = Path(fusedquant.__file__).resolve().parent
INSTALLED = REPO not in PACKAGE.parents


def _import_in_a_new_process(env):
    """fusedquant.library_path as a fresh interpreter importing this same package sees it."""
    path = os.pathsep.join(filter(None, [str(PACKAGE.parent), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, **env}
    env = {k: v for k, v in env.items() if v is not None}
    code = "import fusedquant; print(fusedquant.library_path)"
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=PACKAGE.anchor, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.mark.skipif(not INSTALLED, reason="the package runs from the source checkout")
def test_an_installed_package_loads_the_library_and_cdef_it_carries_without_environment_variables():
    assert (PACKAGE / "_cdef.py").is_file(), "the wheel carries the cdef generated when the library was built"
    from fusedquant import _cdef
    assert _core.DATA is _cdef.DATA
    loaded = _import_in_a_new_process({"FUSEDQUANT_LIBRARY": None, "FUSEDQUANT_HEADER": None, "CC": "false"})
    assert Path(loaded) == PACKAGE / "libfusedquant.so.0"


def test_fusedquant_library_overrides_where_the_library_is_looked_for(tmp_path):
    copy = tmp_path / "libfusedquant.so.0"
    shutil.copyfile(fusedquant.library_path, copy)
    assert Path(_import_in_a_new_process({"FUSEDQUANT_LIBRARY": str(copy)})) == copy


def test_the_torch_names_say_they_need_torch_where_it_is_missing():
    import importlib.util
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("torch is installed: tests/test_torch_ops.py covers the names")
    with pytest.raises(ImportError, match="fusedquant.silu_and_mul_quant needs PyTorch"):
        fusedquant.silu_and_mul_quant
