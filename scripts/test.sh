#!/usr/bin/env bash
# Runs the test suite: C++ (ctest; the cuda instances skip without a GPU).
# Builds first if needed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/tests/memlake_tests ] || scripts/setup.sh
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
