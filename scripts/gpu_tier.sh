#!/usr/bin/env bash
# memlake.torch.tier() on a GPU (through the device tool; any CUDA machine
# with PyTorch and transformers): builds libmemlake.so, runs the tiering GPU
# tests (SKIP_TESTS=1: not), then bench/tier_finetune.py (CONFIGS: its
# --configs, default its default set; BENCH_ARGS: more of its arguments, e.g.
# "--model resnet152 --batch 256"), then `memlake sim --profile` of each
# profile the run saved. Results go to ${OUT:-out}/. Examples (one device call each):
#   CONFIGS=ideal,ckpt,ckpt_again,tier24_ckpt,tier32 scripts/gpu_tier.sh
#   SKIP_TESTS=1 CONFIGS=ideal,ckpt,tier16_ckpt_disk scripts/gpu_tier.sh
#   SKIP_TESTS=1 CONFIGS=ideal,tier24,tier32 BENCH_ARGS="--model neox2.7b" scripts/gpu_tier.sh
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/gpu.txt"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMEMLAKE_BUILD_TESTS=OFF -DMEMLAKE_BUILD_BENCHMARKS=OFF \
  > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target libmemlake.so memlake_cli > "$out/build.log" 2>&1 || { grep -A5 error "$out/build.log" | head -40; exit 1; }
export MEMLAKE_LIBRARY=$PWD/build-gpu/libmemlake.so PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
[ -n "${SKIP_TESTS:-}" ] || timeout ${TEST_TIMEOUT:-240} python3 -m pytest -q -rA tests/python/test_tiering_gpu.py > "$out/tier_tests.txt" 2>&1
[ -n "${SKIP_TESTS:-}" ] || tail -40 "$out/tier_tests.txt"
timeout ${BENCH_TIMEOUT:-400} python3 bench/tier_finetune.py ${CONFIGS:+--configs $CONFIGS} ${BENCH_ARGS:-} --out "$out/tier_finetune.json" \
  --profile-dir "$out" 2>&1 | tee "$out/tier_finetune.txt" | grep -v '^{' 
# What the simulator predicts from each run's profile, to set against the measured step.
for f in "$out"/tier_profile_*.txt; do
  [ -e "$f" ] || continue
  echo "== $f"; ./build-gpu/memlake tier profile "$f" | head -12; ./build-gpu/memlake sim --profile "$f"
done 2>&1 | tee "$out/tier_sim.txt"
