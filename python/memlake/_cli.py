"""The `memlake` command that the wheel installs: runs the CLI binary shipped in
the package (memlake/bin/memlake), or the source tree's build/memlake."""
import os
import sys


def _binary():
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, "bin", "memlake"),
                 os.path.join(os.path.dirname(os.path.dirname(here)), "build", "memlake")):
        if os.access(path, os.X_OK):
            return path
    sys.exit("memlake: the memlake binary is not in this package (install the wheel, or build with scripts/setup.sh)")


def main():
    binary = _binary()
    os.execv(binary, [binary] + sys.argv[1:])


if __name__ == "__main__":
    main()
