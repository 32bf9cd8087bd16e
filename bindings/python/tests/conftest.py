import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
try:
    import fusedquant  # noqa: F401  (the installed package)
except ImportError:  # not installed: the checkout's source, which generates its cdef at import
    # An installed package that failed to load its library leaves its submodules (an older _cdef) behind.
    for name in [m for m in sys.modules if m == "fusedquant" or m.startswith("fusedquant.")]:
        del sys.modules[name]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
HEADER = Path(os.environ.get("FUSEDQUANT_HEADER") or REPO / "include" / "fusedquant" / "fusedquant.h")


def pytest_report_header(config):
    import fusedquant
    return [f"fusedquant {fusedquant.__file__}", f"libfusedquant {fusedquant.library_path} "
            f"{fusedquant.library_version()}", f"header {HEADER}"]


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(1234)
