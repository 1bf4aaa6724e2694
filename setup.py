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
        lib = os.path.join(ROOT, "build", "libmemlake.so")  # the developer's build, if there is one
        if not os.path.exists(lib):
            # A build directory of its own: never reconfigure the developer's build/.
            own = os.path.join(ROOT, "build-python", "cmake")
            subprocess.check_call(["cmake", "-S", ROOT, "-B", own, "-DCMAKE_BUILD_TYPE=Release",
                                   "-DMEMLAKE_BUILD_TESTS=OFF", "-DMEMLAKE_BUILD_BENCHMARKS=OFF"])
            subprocess.check_call(["cmake", "--build", own, "--target", "memlake", "-j"])
            lib = os.path.join(own, "libmemlake.so")
        super().run()
        # Into the wheel's tree only: a copy in the source tree would shadow later builds.
        target = os.path.join(self.build_lib, "memlake")
        os.makedirs(target, exist_ok=True)
        shutil.copy2(os.path.realpath(lib), os.path.join(target, "libmemlake.so"))


setup(cmdclass={"build_py": BuildWithLibrary})
