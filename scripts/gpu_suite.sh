#!/usr/bin/env bash
# The GPU validation run (used through the device tool; works on any CUDA
# machine): builds memlake, runs the whole GoogleTest suite (cuda instances
# included), replays the traces on the cuda backend and runs the allocator
# benchmarks on both backends. Results go to ${OUT:-out}/.
#   scripts/gpu_suite.sh [TRACE_DIR ...]
# Traces: traces/ and .gpu/traces/ by default. GoogleTest is built from
# $GTEST_SRC, else .gpu/googletest (untracked: scripts/gpu_prepare.sh fills
# .gpu/ and the device run carries it), else /usr/src/googletest.
# SKIP_TESTS, SKIP_REPLAY, SKIP_SHIM, SKIP_BENCH=1 leave parts out.
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"
traces=("$@"); [ ${#traces[@]} -gt 0 ] || traces=(traces .gpu/traces)
gtest=${GTEST_SRC:-}
[ -n "$gtest" ] || { [ -f .gpu/googletest/CMakeLists.txt ] && gtest=$PWD/.gpu/googletest; } || gtest=/usr/src/googletest
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMEMLAKE_GTEST_SOURCE_DIR="$gtest" \
  -DMEMLAKE_BUILD_BENCHMARKS=OFF > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" > "$out/build.log" 2>&1 || { grep -B2 -A8 error "$out/build.log" | head -60; exit 1; }
rc=0
if [ -z "${SKIP_TESTS:-}" ]; then
  ./build-gpu/tests/memlake_tests 2>&1 > "$out/tests.log"; rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$out/tests.log" | head -40; tail -3 "$out/tests.log"
fi
[ -n "${SKIP_REPLAY:-}" ] || for t in $(for d in "${traces[@]}"; do ls "$d"/*.csv.gz 2>/dev/null; done); do
  n=$(basename "$t" .csv.gz)
  ./build-gpu/memlake replay "$t" --backend cuda --check > "$out/replay_cuda_$n.txt" 2>&1
  ./build-gpu/memlake replay "$t" --backend host > "$out/replay_host_$n.txt" 2>&1
  echo "== $n (cuda)"; cat "$out/replay_cuda_$n.txt"
done
# The LD_PRELOAD shim under an ordinary CUDA program (static CUDA runtime,
# nvcc's default): plain, then through memlake with and without the wait in
# cudaFree.
if [ -z "${SKIP_SHIM:-}" ] && command -v nvcc >/dev/null; then
  nvcc -O2 -o build-gpu/shim_probe tests/gpu/shim_probe.cu -lcuda > "$out/shim_build.log" 2>&1 || cat "$out/shim_build.log"
  # The same program with the shared runtime (libcudart.so), as PyTorch uses it.
  nvcc -O2 -cudart shared -o build-gpu/shim_probe_dyn tests/gpu/shim_probe.cu -lcuda >> "$out/shim_build.log" 2>&1 || cat "$out/shim_build.log"
  pre=LD_PRELOAD=$PWD/build-gpu/libmemlake_preload.so
  for mode in plain shim shim_nosync shim_copy plain_dyn shim_copy_dyn; do
    prog=./build-gpu/shim_probe
    case $mode in
      plain) env=() ;;
      shim) env=($pre MEMLAKE_STATS_SERVER=0) ;;
      shim_nosync) env=($pre MEMLAKE_SHIM_SYNC_FREE=0) ;;
      shim_copy) env=($pre MEMLAKE_SHIM_COPY=1 MEMLAKE_SHIM_LOG=1) ;;
      plain_dyn) env=(); prog=./build-gpu/shim_probe_dyn ;;
      shim_copy_dyn) env=($pre MEMLAKE_SHIM_COPY=1 MEMLAKE_SHIM_LOG=1); prog=./build-gpu/shim_probe_dyn ;;
    esac
    echo "== shim_probe $mode"
    env "${env[@]}" $prog > "$out/shim_probe_$mode.txt" 2>&1 || rc=1
    grep -v "^memlake preload" "$out/shim_probe_$mode.txt"
    # With the log on: the copy entry points the runtime looked up, and what the shim decided.
    grep "^memlake preload" "$out/shim_probe_$mode.txt" | grep -iE "memcpy|copy of|H2D|D2H" | sort | uniq -c | head -30
  done
  # A buggy kernel (overrun, use after free) with and without the safety modes.
  nvcc -O2 -o build-gpu/guard_probe tests/gpu/guard_probe.cu > "$out/guard_build.log" 2>&1 || cat "$out/guard_build.log"
  for run in "overrun plain" "overrun shim" "overrun guard" "uaf shim" "uaf quarantine"; do
    set -- $run
    case $2 in
      plain) env=() ;;
      shim) env=($pre) ;;
      guard) env=($pre MEMLAKE_GUARD=1) ;;
      quarantine) env=($pre MEMLAKE_QUARANTINE=4) ;;
    esac
    echo "== guard_probe $1 $2"
    env "${env[@]}" ./build-gpu/guard_probe "$1" 2>&1 | tee "$out/guard_probe_$1_$2.txt"
  done
  # memlake stat against a GPU process under an allocation storm: 20 queries, each timed.
  env $pre MEMLAKE_STATS_SERVER=1 ./build-gpu/shim_probe storm 6 > "$out/storm.txt" 2>&1 &
  spid=$!; sleep 2
  : > "$out/stat_latency.txt"
  for i in $(seq 20); do
    t0=$(date +%s%N); ./build-gpu/memlake stat $spid --json > "$out/stat_last.json" 2>&1; r=$?; t1=$(date +%s%N)
    echo "$(( (t1 - t0) / 1000 )) us rc=$r" >> "$out/stat_latency.txt"; sleep 0.1
  done
  wait $spid; cat "$out/storm.txt"
  echo "== memlake stat latency under the storm (20 queries, process start included)"; sort -n "$out/stat_latency.txt" | sed -n '1p;10p;20p'
  head -c 600 "$out/stat_last.json"; echo
  (dmesg 2>/dev/null | grep -i xid | tail -4) > "$out/xid.txt" || true
  echo "== kernel log Xid lines (if readable)"; cat "$out/xid.txt"
fi
if [ -z "${SKIP_BENCH:-}" ]; then
  ./build-gpu/memlake bench alloc --backend cuda --fragmented | tee "$out/bench_cuda.txt"
  ./build-gpu/memlake bench alloc --backend host > "$out/bench_host.txt"
fi
exit $rc
