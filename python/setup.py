"""pip install ./python — the Python package `memcap`, built by memcap's own CMake.

    /usr/bin/python3 -m venv --system-site-packages .venv     # sees Debian's numpy and pandas
    .venv/bin/pip install ./python                            # from the source root; offline

The compiled part (memcap._memcap) is the CMake target `memcap_python` of the
source tree one directory up, configured for the interpreter running this
script (the venv's, which is Debian's /usr/bin/python3) with Debian's pybind11.
Nothing is downloaded: the build uses the setuptools and wheel of that
interpreter (python3-setuptools, python3-wheel), which pip sees without build
isolation because there is no pyproject.toml asking for an isolated build.
Environment: MEMCAP_JOBS (build jobs, default all cores), MEMCAP_CMAKE_ARGS
(more -D options, e.g. -DMEMCAP_PORTABLE=ON), MEMCAP_PIP_BUILD_DIR (the CMake
build directory, kept between installs; default: one under setuptools' build/).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(memcap VERSION ([0-9.]+)", f.read()).group(1)


class CMakeBuild(build_ext):
    """Builds memcap._memcap with CMake (only the library and the module: no tests, benchmarks or MPI)."""

    def build_extension(self, ext):
        if shutil.which("cmake") is None:
            sys.exit("memcap: building the module needs cmake and the packages scripts/setup.sh installs "
                     "(apt-get install cmake g++ libeigen3-dev ... pybind11-dev python3-dev)")
        build = os.environ.get("MEMCAP_PIP_BUILD_DIR") or os.path.join(os.path.abspath(self.build_temp), "cmake")
        os.makedirs(build, exist_ok=True)
        # A new build directory uses Ninja where it is installed; one configured earlier keeps its generator.
        generator = ["-G", "Ninja"] if shutil.which("ninja") and not os.path.exists(os.path.join(build, "CMakeCache.txt")) else []
        subprocess.run(["cmake", "-S", ROOT, "-B", build, *generator, "-DCMAKE_BUILD_TYPE=Release",
                        "-DPython3_EXECUTABLE=" + sys.executable, "-DMEMCAP_PYTHON=ON",
                        "-DMEMCAP_BUILD_TESTS=OFF", "-DMEMCAP_BUILD_BENCH=OFF", "-DMEMCAP_MPI=OFF", "-DMEMCAP_JEMALLOC=OFF",
                        *shlex.split(os.environ.get("MEMCAP_CMAKE_ARGS", ""))], check=True)
        jobs = os.environ.get("MEMCAP_JOBS", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", build, "--target", "memcap_python", "-j", jobs], check=True)
        built = os.path.join(build, "python", "memcap")
        so = [f for f in os.listdir(built) if f.startswith("_memcap") and f.endswith(".so")]
        if len(so) != 1:
            sys.exit("memcap: expected one _memcap*.so in %s, found %s" % (built, so))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(built, so[0]), target)


setup(
    name="memcap",
    version=version(),
    description="memory architectures at equal memory budgets: the memcap harness from Python",
    packages=["memcap"],
    package_dir={"memcap": "memcap"},  # relative to this directory, where pip runs setup.py
    ext_modules=[Extension("memcap._memcap", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    zip_safe=False,
)
