"""Builds folsom._native with CMake from the repository root (this file's parent directory):
the folsom library is compiled statically into the extension. Needs Debian's cmake,
ninja-build, g++, python3-dev, python3-pybind11 and the library's -dev packages
(scripts/deps installs them all).

Environment: FOLSOM_CMAKE_ARGS adds CMake arguments (e.g. -DCMAKE_BUILD_TYPE=Debug);
FOLSOM_BUILD_JOBS sets the build's parallelism (default: the machine's cores); FOLSOM_BUILD_DIR
is where CMake builds (default: under setuptools' build_temp), kept between installs.
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not (ROOT / "CMakeLists.txt").exists() or not (ROOT / "include" / "folsom").is_dir():
            raise RuntimeError("python/ must be built inside the folsom-cpp repository "
                               "(its parent directory holds the C++ library): %s" % ROOT)
        build_dir = Path(os.environ.get("FOLSOM_BUILD_DIR") or
                         Path(self.build_temp) / "cmake").resolve()
        build_dir.mkdir(parents=True, exist_ok=True)
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        args = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir), *generator,
            "-DCMAKE_BUILD_TYPE=Release",
            "-DBUILD_SHARED_LIBS=OFF",
            "-DFOLSOM_BUILD_PYTHON=ON",
            "-DFOLSOM_BUILD_TESTS=OFF", "-DFOLSOM_BUILD_BENCH=OFF", "-DFOLSOM_BUILD_TOOLS=OFF",
            "-DFOLSOM_BUILD_EXAMPLES=OFF", "-DFOLSOM_BUILD_DOCS=OFF",
            "-DPython3_EXECUTABLE=" + sys.executable,
        ] + shlex.split(os.environ.get("FOLSOM_CMAKE_ARGS", ""))
        subprocess.run(args, check=True)
        jobs = os.environ.get("FOLSOM_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "folsom_python",
                        "--parallel", jobs], check=True)
        built = list((build_dir / "python" / "folsom").glob("_native*.so"))
        if len(built) != 1:
            raise RuntimeError("expected one built _native*.so in %s, found %s" % (build_dir, built))
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(ext_modules=[CMakeExtension("folsom._native")], cmdclass={"build_ext": CMakeBuild})
