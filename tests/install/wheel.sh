#!/usr/bin/env bash
# The wheel, built offline as the README says (pip --no-build-isolation) from
# BUILD_DIR's binaries, then installed into a temporary folder: its platform tag,
# the `memlake` command, memlake.__version__ (= VERSION), the shim's path
# (python3 -m memlake.preload_path) and, with the shim preloaded, one copy of
# libmemlake in the process. Needs a Python with pip, setuptools and wheel
# (Debian: python3-pip python3-setuptools python3-wheel).
set -euo pipefail
build=$(cd "$1" && pwd); src=$(cd "$(dirname "$0")/../.." && pwd)
py=""
for c in ${PYTHON:-} python3 /usr/bin/python3; do
  if "$c" -c "import setuptools, wheel, pip" 2>/dev/null; then py=$c; break; fi
done
[ -n "$py" ] || { echo "no Python with pip, setuptools and wheel (apt-get install python3-pip python3-setuptools python3-wheel)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1 PIP_ROOT_USER_ACTION=ignore
MEMLAKE_BUILD_DIR=$build "$py" -m pip wheel -q --no-build-isolation --no-deps -w "$tmp/dist" "$src" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
version=$(cat "$src/VERSION")
whl=$tmp/dist/memlake-$version-py3-none-linux_$(uname -m).whl
[ -f "$whl" ] || { echo "expected $(basename "$whl"), got: $(ls "$tmp/dist")"; exit 1; }
"$py" -m pip install -q --no-deps --target "$tmp/site" "$whl" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
cd "$tmp"  # nothing of the source tree on the path
unset MEMLAKE_LIBRARY
export PYTHONPATH=$tmp/site
[ "$("$tmp/site/bin/memlake" --version)" = "memlake $version" ]
"$tmp/site/bin/memlake" replay --help | grep -q "^Usage: memlake replay"
[ "$("$py" -c 'import memlake; print(memlake.__version__)')" = "$version" ]
"$py" -c "import memlake; assert memlake.library_path.startswith('$tmp/site/memlake/'), memlake.library_path"
if [ -f "$build/libmemlake_preload.so" ]; then
  shim=$("$py" -m memlake.preload_path)
  [ "$shim" = "$tmp/site/memlake/libmemlake_preload.so" ]
  LD_PRELOAD=$shim "$py" -c "
import memlake
maps = {l.split()[-1] for l in open('/proc/self/maps') if 'libmemlake.so' in l}
assert len(maps) == 1, maps  # Python's and the shim's library are one
print('one libmemlake with the shim preloaded:', maps.pop())"
fi
echo "wheel $(basename "$whl"): memlake command, __version__ $version, shim path, all from the installed package"
