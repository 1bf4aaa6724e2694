#!/usr/bin/env bash
# Installs memlake from BUILD_DIR into a temporary prefix, then configures,
# builds and runs a C consumer through find_package(memlake), against the
# shared and the static library.
set -euo pipefail
build=$1; src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
cmake -S "$src" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
cmake --build "$tmp/b" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/b/consumer" | grep -q "reserved 67108864"
"$tmp/b/consumer_static" | grep -q "reserved 67108864"
echo "find_package(memlake): shared and static consumers built and ran"
