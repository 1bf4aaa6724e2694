#!/usr/bin/env bash
# The KV cache's GPU run (issue 23; docs/results.md "KV cache on virtual memory"):
# builds libmemlake.so, checks correctness on a small model, times decode at 8K
# context, batch 8, on the 1.5 B GQA and MHA models (DynamicCache, StaticCache
# eager/compiled, KVCache eager/compiled, one process), and measures capacity
# under a budget with the cuda backend. About 6-8 minutes on an H100/H200
# (torch.compile of the 28-layer model dominates). Results in ${OUT:-out}/.
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMEMLAKE_BUILD_TESTS=OFF -DMEMLAKE_BUILD_BENCHMARKS=OFF \
  > "$out/configure.log" 2>&1 && cmake --build build-gpu -j"$(nproc)" --target libmemlake.so > "$out/build.log" 2>&1 \
  || { tail -30 "$out/configure.log" "$out/build.log"; exit 1; }
export MEMLAKE_LIBRARY=$PWD/build-gpu/libmemlake.so
${SKIP_CHECK:+:} timeout 240 python3 bench/kv_generate.py check --compiled-models gqa --out "$out" > "$out/check.log" 2>&1
grep '^{' "$out/check.log" | grep -v continuous_row | cut -c1-400
timeout ${BENCH_TIMEOUT:-420} python3 bench/kv_generate.py bench --out "$out" ${BENCH_ARGS:-} > "$out/bench.log" 2>&1
grep '^{' "$out/bench.log" | cut -c1-300
timeout 120 python3 bench/kv_generate.py capacity --models gqa --out "$out" 2>&1 | tail -2
