#!/usr/bin/env bash
# Installs memlake from BUILD_DIR into a temporary prefix and builds the C
# consumer (main.c) with a C compiler alone through pkg-config: against the
# static library (memlake-static.pc carries the C++ runtime its code needs:
# without -lstdc++ operator new and the rest are undefined) and the shared one.
set -euo pipefail
build=$1; src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
pcdir=$(dirname "$(find "$tmp/prefix" -name memlake.pc)")
export PKG_CONFIG_PATH=$pcdir
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -o "$tmp/c_static" "$src/main.c" $(pkg-config --cflags --libs memlake-static)
"$tmp/c_static" | grep -q "reserved 67108864"
if ldd "$tmp/c_static" | grep -q libmemlake; then echo "c_static links libmemlake.so, not the archive"; exit 1; fi
# shellcheck disable=SC2046
$cc -o "$tmp/c_shared" "$src/main.c" $(pkg-config --cflags --libs memlake)
LD_LIBRARY_PATH="$pcdir/.." "$tmp/c_shared" | grep -q "reserved 67108864"
[ "$(pkg-config --modversion memlake)" = "$(cat "$src/../../VERSION")" ]
echo "pkg-config: a C program linked the static library ($(pkg-config --libs memlake-static | sed "s|$tmp/prefix|PREFIX|g")) and the shared one, and ran"
