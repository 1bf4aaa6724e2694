"""`pip install .` builds libmemlake.so with CMake (unless build/libmemlake.so
exists) and ships it inside the package; the package itself is pure Python."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


class BuildWithLibrary(build_py):
    def run(self):
        lib = os.path.join(ROOT, "build", "libmemlake.so")
        if not os.path.exists(lib):
            subprocess.check_call(["cmake", "-S", ROOT, "-B", os.path.join(ROOT, "build"), "-DCMAKE_BUILD_TYPE=Release",
                                   "-DMEMLAKE_BUILD_TESTS=OFF", "-DMEMLAKE_BUILD_BENCHMARKS=OFF"])
            subprocess.check_call(["cmake", "--build", os.path.join(ROOT, "build"), "--target", "memlake", "-j"])
        super().run()
        # Into the wheel's tree only: a copy in the source tree would shadow later builds.
        target = os.path.join(self.build_lib, "memlake")
        os.makedirs(target, exist_ok=True)
        shutil.copy2(os.path.realpath(lib), os.path.join(target, "libmemlake.so"))


setup(cmdclass={"build_py": BuildWithLibrary})
