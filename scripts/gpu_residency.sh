#!/usr/bin/env bash
# The residency engine on a GPU (through the device tool; any CUDA machine):
# builds memlake and its tests, runs the residency and disk-tier tests on the
# cuda backend, then `memlake bench residency` (evict, restore and both
# directions at once vs plain pinned copies, 1-16 GiB) and its disk-tier
# part (demote, restore from disk vs plain O_DIRECT file I/O) in DISK_DIR.
# Results go to ${OUT:-out}/. Needs .gpu/ (scripts/gpu_prepare.sh).
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"
disk=${DISK_DIR:-/tmp/memlake-disk-tier}; mkdir -p "$disk"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/gpu.txt"
df -hT "$disk" | tee -a "$out/gpu.txt"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMEMLAKE_GTEST_SOURCE_DIR="$PWD/.gpu/googletest" \
  -DMEMLAKE_BUILD_BENCHMARKS=OFF > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target memlake_cli memlake_tests > "$out/build.log" 2>&1 ||
  { grep -A5 error "$out/build.log" | head -40; exit 1; }
./build-gpu/tests/memlake_tests --gtest_filter='*Residency*:*DiskTier*' > "$out/tests.log" 2>&1
grep -E "^\[  (PASSED|FAILED) |tests ran" "$out/tests.log"
./build-gpu/memlake bench residency --backend cuda --sizes 1G,4G,16G --reps 3 | tee "$out/residency.txt"
./build-gpu/memlake bench residency --backend cuda --sizes 1G,4G,16G --reps 3 --json > "$out/residency.json"
./build-gpu/memlake bench residency --backend cuda --sizes ${DISK_SIZES:-4G} --reps 1 --disk "$disk" | tee "$out/residency_disk.txt"
