"""Prints the path of libmemlake_preload.so, the LD_PRELOAD shim:
    LD_PRELOAD=$(python3 -m memlake.preload_path) python3 train.py"""
import sys

import memlake

if __name__ == "__main__":
    try:
        print(memlake.preload_library())
    except FileNotFoundError as e:
        sys.exit(str(e))
