"""Build step of the binding: copies include/fusedquant/fusedquant.h into the package and generates
fusedquant/_cdef.py from it (fusedquant/_gen.py; needs a C compiler: `cc`, or $CC). The header is taken
from $FUSEDQUANT_HEADER, else ../../include/fusedquant/fusedquant.h (this checkout)."""
import importlib.util
import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
HEADER = Path(os.environ.get("FUSEDQUANT_HEADER") or HERE.parents[1] / "include" / "fusedquant" / "fusedquant.h")
_spec = importlib.util.spec_from_file_location("_fq_gen", HERE / "fusedquant" / "_gen.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


class BuildPy(build_py):
    def run(self):
        super().run()
        package = Path(self.build_lib) / "fusedquant"
        (package / "include").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HEADER, package / "include" / "fusedquant.h")
        data = gen.generate(HEADER)
        data["source_root"] = str(HEADER.parents[2])  # a library search hint: <checkout>/build
        (package / "_cdef.py").write_text(gen.render(data))


macros = gen.macros(HEADER.read_text())
setup(version="{FQ_VERSION_MAJOR}.{FQ_VERSION_MINOR}.{FQ_VERSION_PATCH}".format(**macros),
      cmdclass={"build_py": BuildPy})
