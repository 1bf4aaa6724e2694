#!/usr/bin/env bash
# Issue 27's device run, in one call (carry: [".gpu"] after scripts/gpu_prepare.sh):
# builds libmemlake.so, runs the graph-capture GPU tests under enable(), the
# allocation latency benchmark and the generation benchmark, memlake against
# native and expandable_segments, alternated. Every step writes under $OUT as
# it ends, so a step cut short leaves the others' results.
#   OUT=/tmp/o scripts/gpu_issue27.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
log() { echo "[$(date +%T)] $*" | tee -a "$out/steps.log"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$out/device.txt" 2>&1
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)" >> "$out/device.txt" 2>&1
log "device: $(head -1 "$out/device.txt")"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMEMLAKE_BUILD_TESTS=OFF -DMEMLAKE_BUILD_BENCHMARKS=OFF \
  > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target libmemlake.so > "$out/build.log" 2>&1 || { grep -B2 -A8 error "$out/build.log" | head -40; exit 1; }
log "built"
export MEMLAKE_LIBRARY=$PWD/build-gpu/libmemlake.so PYTHONPATH=$PWD/python
timeout ${T_TESTS:-75} python3 -m pytest -q -x tests/python/test_torch_gpu.py \
  -k "graph_capture_under_enable or capture_check_query or reduce_overhead" \
  > "$out/pytest.txt" 2>&1
log "pytest rc=$? $(tail -1 "$out/pytest.txt")"
timeout ${T_LAT:-55} python3 bench/alloc_latency.py ${LAT_ALLOCATORS:+--allocators $LAT_ALLOCATORS} --repeats ${LAT_REPEATS:-3} --events ${LAT_EVENTS:-12000} \
  --traces traces/opt13b-LR.csv.gz traces/opt13b-LRV.csv.gz traces/opt13b-R.csv.gz .gpu/traces/llama1b-gen.csv.gz --out "$out/alloc_latency.json" > "$out/alloc_latency.txt" 2>&1
log "alloc_latency rc=$?"
timeout ${T_GEN:-50} python3 bench/hf_generate.py --repeats ${GEN_REPEATS:-2} --calls ${GEN_CALLS:-3} --warmup 1 \
  --max-new 48 --out "$out/hf_generate.json" > "$out/hf_generate.txt" 2>&1
log "hf_generate rc=$?"
tail -30 "$out/alloc_latency.txt"; tail -6 "$out/hf_generate.txt"; cat "$out/steps.log"
