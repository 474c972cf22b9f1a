"""Builds folsom._native with CMake: the folsom C++ library compiled statically into the
extension. The C++ sources are the repository's (this file's parent directory) when built in a
checkout, or the copy an sdist carries under cpp/ (`python setup.py sdist` puts it there), so
that `pip install folsom-<version>.tar.gz` builds on a machine without the repository.

Needs cmake, a C++20 compiler (g++ 12), pybind11, the headers of the Python that runs this
file, and the library's -dev packages: Asio and OpenSSL, plus c-ares, zstd, LZ4, zlib and
nlohmann-json for the optional features (each is left out when not found). On Debian 12,
scripts/deps installs them all. The extension is built for the interpreter that runs this file
(CMake is given it as Python3_EXECUTABLE), with that interpreter's own headers: Debian's
python3-dev, or a pyenv or python.org Python's own. pybind11 is the interpreter's pybind11
module when it has one, else the CMake package CMake finds: Debian's pybind11-dev
(/usr/lib/cmake/pybind11) serves any interpreter, so a pyenv Python needs no pybind11 of its own
(python/README.md, "Another Python").

c-ares, zstd, LZ4 and zlib are linked from their static archives (FOLSOM_STATIC_DEPS), so a
wheel needs only OpenSSL's shared libraries (libssl3) and the C/C++ runtimes where it is
installed; FOLSOM_STATIC_DEPS=0 links their shared libraries instead.

Environment: FOLSOM_CMAKE_ARGS adds CMake arguments (e.g. -DCMAKE_BUILD_TYPE=Debug, or
-DFOLSOM_WITH_ZSTD=OFF); FOLSOM_BUILD_JOBS sets the build's parallelism (default: the
machine's cores); FOLSOM_BUILD_DIR is where CMake builds (default: under setuptools'
build_temp), kept between installs.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.install import install
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
# What an sdist carries of the C++ tree: enough to build the library (no tests, tools, docs).
CPP_PARTS = ["CMakeLists.txt", "cmake", "include", "src", "CHANGELOG.md"]


def cpp_root():
    """The folsom C++ tree: the repository around python/, or an sdist's cpp/ copy."""
    for root in (HERE.parent, HERE / "cpp"):
        if (root / "CMakeLists.txt").is_file() and (root / "include" / "folsom").is_dir():
            return root
    raise RuntimeError("the folsom C++ sources are missing: build from the folsom-cpp "
                       "repository's python/ directory, or from an sdist made by "
                       "`python setup.py sdist` (it carries them under cpp/)")


def version():
    """The version of the top CMakeLists.txt: the one version of folsom-cpp."""
    text = (cpp_root() / "CMakeLists.txt").read_text()
    m = re.search(r"project\(folsom VERSION ([0-9]+\.[0-9]+\.[0-9]+)", text)
    if not m:
        raise RuntimeError("no `project(folsom VERSION x.y.z` in %s" % (cpp_root() / "CMakeLists.txt"))
    return m.group(1)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        root = cpp_root()
        # From an sdist, cpp/build: laid out as a checkout's build/, so that ccache (used when
        # installed) finds the objects of an earlier build of the same sources.
        default_dir = (root / "build") if root == HERE / "cpp" else Path(self.build_temp) / "cmake"
        build_dir = Path(os.environ.get("FOLSOM_BUILD_DIR") or default_dir).resolve()
        build_dir.mkdir(parents=True, exist_ok=True)
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        static_deps = os.environ.get("FOLSOM_STATIC_DEPS", "1") not in ("0", "OFF", "off", "")
        args = [
            "cmake", "-S", str(root), "-B", str(build_dir), *generator,
            "-DCMAKE_BUILD_TYPE=Release",
            "-DBUILD_SHARED_LIBS=OFF",
            "-DFOLSOM_STATIC_DEPS=" + ("ON" if static_deps else "OFF"),
            "-DFOLSOM_BUILD_PYTHON=ON",
            "-DFOLSOM_PYTHON_SOURCE_DIR=" + str(HERE),
            "-DFOLSOM_BUILD_TESTS=OFF", "-DFOLSOM_BUILD_BENCH=OFF", "-DFOLSOM_BUILD_TOOLS=OFF",
            "-DFOLSOM_BUILD_EXAMPLES=OFF", "-DFOLSOM_BUILD_DOCS=OFF",
            "-DFOLSOM_BUILD_LIBMEMCACHED_COMPAT=OFF",
            "-DPython3_EXECUTABLE=" + sys.executable,
            # The C++ tree and the extension's sources (HERE) under one ccache base directory.
            "-DFOLSOM_CCACHE_BASEDIR=" + os.path.commonpath([str(root), str(HERE)]),
        ]
        try:  # pybind11 from pip, when the building interpreter has it
            import pybind11
            args.append("-Dpybind11_DIR=" + pybind11.get_cmake_dir())
        except ImportError:
            pass  # Debian's pybind11-dev: CMake finds it in /usr/lib/cmake/pybind11
        args += shlex.split(os.environ.get("FOLSOM_CMAKE_ARGS", ""))
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


class InstallWithDebianOptions(install):
    """The install command, with the options that Debian's setuptools reads from it.

    Debian patches its setuptools (the python3-setuptools-whl wheel too, which a venv of another
    Python, pyenv's for one, installs offline from /usr/share/python-wheels): its install_lib
    and install_egg_info copy `install_layout` (Debian's --install-layout=deb) and
    `prefix_option` from the install command, which only Debian's own Python's distutils
    declares (with `multiarch`). Elsewhere the wheel's build then fails with
    `AttributeError: install_layout`. Declared here and left unset where the install command
    lacks them, they make that setuptools work with any Python, and change nothing where they
    exist already; upstream setuptools never reads them.
    """

    def initialize_options(self):
        super().initialize_options()
        for debian_option in ("install_layout", "prefix_option", "multiarch"):
            if not hasattr(self, debian_option):
                setattr(self, debian_option, None)


class SdistWithCpp(sdist):
    """An sdist that carries the C++ library's sources under cpp/."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        root = cpp_root()
        dest = Path(base_dir) / "cpp"
        for part in CPP_PARTS:
            src = root / part
            if src.is_dir():
                shutil.copytree(src, dest / part, dirs_exist_ok=True)
            elif src.is_file():
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / part)


setup(version=version(), ext_modules=[CMakeExtension("folsom._native")],
      cmdclass={"build_ext": CMakeBuild, "install": InstallWithDebianOptions, "sdist": SdistWithCpp})
