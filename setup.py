"""Builds the wheel: the pure-Python package plus what CMake builds, shipped
inside the package: libmemlake.so.0, libmemlake_preload.so (the LD_PRELOAD shim,
where cuda.h was found) and the `memlake` CLI (memlake/bin/memlake, run by the
`memlake` console script).

Offline, without fetching build requirements:
    pip install --no-build-isolation .
(needs cmake, a C++ compiler, setuptools and wheel: Debian's python3-setuptools
python3-wheel). The binaries come from $MEMLAKE_BUILD_DIR if set, else from
build/ (brought up to date) when it is configured, else from a build of its own
in build-python/cmake. The wheel is tagged py3-none-<platform>: it runs on any
Python 3 (ctypes, no extension module) but only on this platform."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))


def _build_dir():
    given = os.environ.get("MEMLAKE_BUILD_DIR")
    if given:
        return os.path.abspath(given)  # as it is: the caller built it
    dev = os.path.join(ROOT, "build")  # the developer's build, if there is one: never reconfigured
    if not os.path.exists(os.path.join(dev, "CMakeCache.txt")):
        dev = os.path.join(ROOT, "build-python", "cmake")
        subprocess.check_call(["cmake", "-S", ROOT, "-B", dev, "-DCMAKE_BUILD_TYPE=Release",
                               "-DMEMLAKE_BUILD_TESTS=OFF", "-DMEMLAKE_BUILD_BENCHMARKS=OFF"])
    # Everything the build has (a target list would not do: under Ninja the name "memlake"
    # is the CLI's file, not the library's target).
    subprocess.check_call(["cmake", "--build", dev, "-j", str(os.cpu_count() or 2)])
    return dev


class BuildWithLibrary(build_py):
    def run(self):
        build = _build_dir()
        super().run()
        # Into the wheel's tree only: a copy in the source tree would shadow later builds.
        target = os.path.join(self.build_lib, "memlake")
        for stale in ("libmemlake.so", "libmemlake.so.0", "libmemlake_preload.so", "bin"):  # an earlier build's
            path = os.path.join(target, stale)
            shutil.rmtree(path) if os.path.isdir(path) else os.path.exists(path) and os.remove(path)
        os.makedirs(os.path.join(target, "bin"), exist_ok=True)
        # One copy, under its soname: the shim (RUNPATH $ORIGIN) needs libmemlake.so.0, and
        # Python loading the same file means one process-wide allocator with the shim on.
        shutil.copy2(os.path.realpath(os.path.join(build, "libmemlake.so")), os.path.join(target, "libmemlake.so.0"))
        shutil.copy2(os.path.join(build, "memlake"), os.path.join(target, "bin", "memlake"))
        shim = os.path.join(build, "libmemlake_preload.so")
        if os.path.exists(shim):
            shutil.copy2(shim, os.path.join(target, "libmemlake_preload.so"))


class BinaryDistribution(Distribution):
    """The package carries native binaries: the wheel is platform-specific."""

    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildWithLibrary}
try:
    try:
        from setuptools.command.bdist_wheel import bdist_wheel
    except ImportError:
        from wheel.bdist_wheel import bdist_wheel

    class PlatformWheel(bdist_wheel):
        """py3-none-<platform>: any Python 3 (ctypes), this platform only."""

        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = PlatformWheel
except ImportError:  # no wheel support here: sdists and direct installs still work
    pass

setup(cmdclass=cmdclass, distclass=BinaryDistribution)
