#!/usr/bin/env bash
# Runs the test suite: C++ (ctest) and Python (pytest). The GPU tests skip,
# saying so, where no GPU is present. Builds first if needed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/tests/memlake_tests ] || scripts/setup.sh
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
# The Python package over the library just built; PyTorch, where installed,
# comes with the interpreter that has it (PYTHON=... to choose).
py=${PYTHON:-python3}
"$py" -c "import pytest" 2>/dev/null || py=/usr/bin/python3
MEMLAKE_LIBRARY="$PWD/build/libmemlake.so" "$py" -m pytest -q tests/python
