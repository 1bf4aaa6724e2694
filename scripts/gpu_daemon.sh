#!/usr/bin/env bash
# The memory daemon on the GPU (issue 22), one device call: builds the library
# and the memlake command there, then runs bench/multi_process.py (dedup of a
# 1.5B model over 8 processes, a 16 GiB attach, pooled vs static bursts,
# reclaim and SIGKILL page return). Results: $OUT/multi_process.json.
#   scripts/gpu_prepare.sh here first; run with carry [".gpu"].
set -uo pipefail
OUT=${OUT:-/tmp/memlake_out}
mkdir -p "$OUT"
t0=$(date +%s)
# A library and command built beside this tree (.gpu/bin, copied by hand from
# build/) are used when they run there; else both are built there.
if [ -x .gpu/bin/memlake ] && .gpu/bin/memlake --version > /dev/null 2>&1 &&
   python3 -c "import ctypes; ctypes.CDLL('.gpu/bin/libmemlake.so')" 2> /dev/null; then
  mkdir -p build-gpu && cp .gpu/bin/memlake .gpu/bin/libmemlake.so build-gpu/ && echo "using .gpu/bin: $(build-gpu/memlake --version)"
else
{ cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DMEMLAKE_BUILD_TESTS=OFF -DMEMLAKE_BUILD_BENCHMARKS=OFF &&
  cmake --build build-gpu -j16 --target libmemlake.so memlake_cli; } > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
echo "build: $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt" 2>&1; cat "$OUT/gpu.txt"
export MEMLAKE_LIBRARY=$PWD/build-gpu/libmemlake.so PYTHONUNBUFFERED=1
timeout "${BENCH_TIMEOUT:-220}" python3 bench/multi_process.py --parts "${PARTS:-attach,dedup,pool,reclaim}" \
  --json "$OUT/multi_process.json" --out-dir "$OUT" 2>&1 | tee "$OUT/bench.log"
echo "total: $(( $(date +%s) - t0 )) s"
