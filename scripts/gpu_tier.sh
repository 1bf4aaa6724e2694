#!/usr/bin/env bash
# memlake.torch.tier() on a GPU (through the device tool; any CUDA machine
# with PyTorch and transformers): builds libmemlake.so, runs the tiering GPU
# tests, then bench/tier_finetune.py (CONFIGS, default: all of its default
# set). Results go to ${OUT:-out}/.
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/gpu.txt"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMEMLAKE_BUILD_TESTS=OFF -DMEMLAKE_BUILD_BENCHMARKS=OFF \
  > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target libmemlake.so memlake_cli > "$out/build.log" 2>&1 || { grep -A5 error "$out/build.log" | head -40; exit 1; }
export MEMLAKE_LIBRARY=$PWD/build-gpu/libmemlake.so PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
[ -n "${SKIP_TESTS:-}" ] || timeout 240 python3 -m pytest -q -rA tests/python/test_tiering_gpu.py > "$out/tier_tests.txt" 2>&1
[ -n "${SKIP_TESTS:-}" ] || tail -40 "$out/tier_tests.txt"
timeout ${BENCH_TIMEOUT:-400} python3 bench/tier_finetune.py ${CONFIGS:+--configs $CONFIGS} --out "$out/tier_finetune.json" \
  --profile-dir "$out" 2>&1 | tee "$out/tier_finetune.txt" | grep -v '^{' 
# What the simulator predicts from each run's profile, to set against the measured step.
for f in "$out"/tier_profile_*.txt; do
  [ -e "$f" ] || continue
  echo "== $f"; ./build-gpu/memlake tier profile "$f" | head -12; ./build-gpu/memlake sim --profile "$f"
done 2>&1 | tee "$out/tier_sim.txt"
