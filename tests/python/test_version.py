"""memlake.__version__ is the repository's VERSION (the one version source, through
CMake into the library); the shim's path is found beside the library."""
import os

import memlake

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_version_is_the_version_file():
    with open(os.path.join(ROOT, "VERSION")) as f:
        assert memlake.__version__ == f.read().strip() == memlake.version


def test_preload_library_is_beside_the_library():
    shim = os.path.join(os.path.dirname(os.path.abspath(memlake.library_path)), "libmemlake_preload.so")
    if os.path.exists(shim):
        assert memlake.preload_library() == shim
    else:  # built without cuda.h: no shim, and the error says so
        try:
            memlake.preload_library()
        except FileNotFoundError as e:
            assert "libmemlake_preload.so" in str(e)
        else:
            raise AssertionError("preload_library() found a shim that is not there")
