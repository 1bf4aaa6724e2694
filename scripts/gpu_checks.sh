#!/usr/bin/env bash
# GPU validation for a short device lease: builds the library and tools (no
# test suite), then runs, each
# step bounded by its own timeout and logged to $OUT/<step>.txt:
#   alloc   the allocator hot path, C++ and C ABI, fresh and fragmented
#   replay  both shipped traces on the cuda backend (driver calls and their time)
#   shim    the shim probe: static runtime without the wait in free, and the
#           shared runtime plain, without the wait, with it (the default), and
#           with MEMLAKE_SHIM_COPY=1 (decision log)
#   tlb     kernel speed on memory built from handles of several sizes
#           (tests/gpu/tlb_probe.cu); what mapping costs the kernels running
#           meanwhile and a training-like pipeline (tests/gpu/map_stall.cu)
#   torch   PyTorch fine-tuning (opt-1.3b LR): native, memlake (8 MiB handles),
#           memlake with a second, 16 MiB growth handle (large_handle_size, off by
#           default until this shows its driver time), native again (the noise
#           control); the deterministic loss check; the live-bytes bound at
#           batch $BOUND under the 24 GiB cap
#   pytest  the Python suite, GPU tests included
#   pin     whether page-locking the caller's pages in place, piece by piece,
#           beats staging pageable copies (tests/gpu/pin_probe.cu)
#   sweep   copy-engine threads x staging chunk at 256 MiB
#   areplay the LRV trace replayed as torch.empty/del per allocator (the
#           allocator's host cost under PyTorch; bench/torch_alloc_replay.py)
# Everything takes more than one 10-minute call; split it with the SKIP_*
# variables, e.g. first SKIP_TORCH=1, then only the torch step with
# STRATEGIES=LR,R,LRV (TORCH_S up to about 500).
# scripts/gpu_suite.sh is the full run (GoogleTest on the cuda backend,
# replays, safety probes, stat latency).
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"
step() {
  local name=$1 t=$2; shift 2
  echo "== $name"
  timeout "$t" "$@" > "$out/$name.txt" 2>&1
  echo "rc=$?" >> "$out/$name.txt"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMEMLAKE_BUILD_TESTS=OFF -DMEMLAKE_BUILD_BENCHMARKS=OFF \
  > "$out/build.txt" 2>&1 && cmake --build build-gpu -j"$(nproc)" >> "$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }
export MEMLAKE_LIBRARY=$PWD/build-gpu/libmemlake.so PYTHONUNBUFFERED=1
pre=LD_PRELOAD=$PWD/build-gpu/libmemlake_preload.so
[ -n "${SKIP_ALLOC:-}" ] || step alloc 90 ./build-gpu/memlake bench alloc --backend cuda --fragmented
# The shipped traces on the cuda backend: driver calls and the time inside them (repairs
# of cached views since session 12). llama1b-gen is not shipped: scripts/gpu_prepare.sh
# copies it from ../shared/traces into .gpu/traces (git-ignored, carried).
[ -n "${SKIP_REPLAY:-}" ] || step replay 150 bash -c 'for t in traces/opt13b-LR.csv.gz .gpu/traces/llama1b-gen.csv.gz; do
    ./build-gpu/memlake replay "$t" --backend cuda --check --sweep handle_size=0,8M;
    ./build-gpu/memlake replay "$t" --backend cuda --check --sweep large_handle_size=0,16M; done'
if [ -z "${SKIP_SHIM:-}" ]; then
  nvcc -O2 -o build-gpu/shim_probe tests/gpu/shim_probe.cu -lcuda > "$out/nvcc.txt" 2>&1
  nvcc -O2 -cudart shared -o build-gpu/shim_probe_dyn tests/gpu/shim_probe.cu -lcuda >> "$out/nvcc.txt" 2>&1
  step shim 120 bash -c "echo '-- static, no wait'; env $pre MEMLAKE_SHIM_SYNC_FREE=0 ./build-gpu/shim_probe;
    echo '-- shared runtime, plain'; ./build-gpu/shim_probe_dyn;
    echo '-- shared runtime, no wait (cudaMalloc taken at the runtime)'; env $pre MEMLAKE_SHIM_SYNC_FREE=0 ./build-gpu/shim_probe_dyn;
    echo '-- shared runtime, default (cudaFree waits for the device)'; env $pre ./build-gpu/shim_probe_dyn;
    echo '-- shared runtime, shim copies'; env $pre MEMLAKE_SHIM_COPY=1 MEMLAKE_SHIM_LOG=1 ./build-gpu/shim_probe_dyn > $out/shimlog.txt 2>&1;
    grep RESULT $out/shimlog.txt; grep -i 'memcpy\|bytes ->' $out/shimlog.txt | sort | uniq -c | sort -rn | head -40"
fi
if [ -z "${SKIP_TLB:-}" ]; then
  nvcc -O2 -arch=sm_90 -o build-gpu/tlb_probe tests/gpu/tlb_probe.cu -lcuda >> "$out/nvcc.txt" 2>&1
  nvcc -O2 -arch=sm_90 -o build-gpu/map_stall tests/gpu/map_stall.cu -lcuda >> "$out/nvcc.txt" 2>&1
  step tlb 150 bash -c "./build-gpu/tlb_probe 8; ./build-gpu/map_stall 256 400; ./build-gpu/map_stall pipeline 30"
fi
if [ -z "${SKIP_PIN:-}" ]; then
  nvcc -O2 -o build-gpu/pin_probe tests/gpu/pin_probe.cu -lcuda >> "$out/nvcc.txt" 2>&1
  step pin 150 ./build-gpu/pin_probe "${PIN_MIB:-256}"
fi
# TORCH_EXTRA replaces the loss check and the live-bytes bound (e.g. TORCH_EXTRA="--repeats 2").
[ -n "${SKIP_TORCH:-}" ] || step torch "${TORCH_S:-300}" python3 bench/torch_fragmentation.py --strategies "${STRATEGIES:-LR}" \
  --allocators "${ALLOCATORS:-native,memlake,memlake:large_handle_size=16M,native#2}" ${TORCH_EXTRA:---loss-check --bound-batch ${BOUND:-30}} \
  --probe-steps 6 --out "$out/torch.json" --plot "$out/torch.png"
[ -n "${SKIP_PYTEST:-}" ] || step pytest 150 python3 -m pytest -q -rs tests/python
[ -n "${SKIP_AREPLAY:-}" ] || step areplay 240 python3 bench/torch_alloc_replay.py --out "$out/areplay.json" \
  --allocators "${AREPLAY_ALLOCATORS:-native,null,memlake,memlake:recent_spans=32,memlake:max_mapped_ratio=4}"
[ -n "${SKIP_SWEEP:-}" ] || step sweep "${SWEEP_S:-90}" env OUT="$out" THREADS="${THREADS:-16}" CHUNKS="${CHUNKS:-2M 4M}" scripts/gpu_copy_sweep.sh
for f in alloc replay shim tlb pin torch areplay pytest sweep; do [ -f "$out/$f.txt" ] && { echo "==== $f"; tail -${TAIL:-45} "$out/$f.txt"; }; done
