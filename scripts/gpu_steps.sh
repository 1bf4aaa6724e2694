#!/usr/bin/env bash
# The open issues' GPU measurements as named steps, in the order given, each
# under its own time limit, results under $OUT/<step>/ as each ends (a step
# cut short leaves the others'). One device call runs as many as its time
# allows; scripts/gpu_prepare.sh first here, then carry [".gpu"].
#   STEPS="sleep kv" OUT=/tmp/o scripts/gpu_steps.sh
# Steps (about how long each takes on an H100/H200):
#   sleep   issue 21: bench/sleep_wake.py, memlake beside torch_memory_saver's
#           method and tensor.cpu(), 100 cycles; the sleep/graph GPU tests (~220 s)
#   kv      issue 23: kv_generate.py check (GQA, compiled) and bench (3 rounds,
#           GQA and MHA, StaticCache vs the layouts, compiled and eager) (~450 s)
#   kvbench issue 23: kv's bench alone (KV_KINDS, T_KV; KV_ARGS e.g. "--fresh-lengths --no-cudnn-sdp")
#   kvcheck issue 23: kv_generate.py check only (GQA, compiled) (~150 s)
#   disk    issue 20: memlake bench residency --disk (the disk tier vs plain
#           O_DIRECT file I/O, 4 GiB) (~60 s)
#   tier    issues 20, 26: tier_finetune.py speed (ideal, ckpt, 24/32 GiB, 16 GiB
#           + disk), then `memlake sim` on the profiles it saved; its GPU tests (~450 s)
#           TIER_CONFIGS: the configs (add save_on_cpu_cap32,cpu_adam_cap24_ckpt for the baselines
#           in the same table; about 100 s more); T_TIER_TESTS=0: the speed table alone
#   tiertests issue 20: tests/python/test_tiering_gpu.py alone (~120 s)
#   tier32diag issue 20: tier32 with eager attention at batch 4, its failure's counts (~120 s)
#   copyprobe issue 20: pinned copies both ways while the host maps/unmaps (tests/gpu/map_stall.cu copies) (~40 s)
#   tierloss issue 20: the first 5 losses with deterministic (eager) attention,
#           capped against uncapped (~300 s)
#   tiermodels issue 20: GPT-NeoX 2.7 B and ResNet-152 against their own ideal (~480 s)
#   tierresnet issue 20: ResNet-152 alone (RESNET_CONFIGS, default ideal,tier20) (~150 s)
#   daemon  issue 22: device-wide memory with deduplicated weights (~60 s)
#   hash    issue 22: content ids computed on the GPU against the host's (~60 s)
#   vision  issue 27: ResNet-50 with batch and resolution changing every step, memlake against
#           native and expandable_segments, 3 rounds (bench/vision_varshape.py) (~200 s)
#   frag    issue 27: bench/torch_fragmentation.py, FRAG_STRATEGIES (default L,LR; then R,LRV) (~540 s)
#   gentrace issue 27: bench/hf_generate.py and vision_varshape.py under memlake, their allocations traced
#           for a CPU replay (~100 s)
#   gen     issue 27: bench/hf_generate.py alone, GEN_ALLOCATORS (e.g. native,expandable,memlake:tail_share=1), GEN_REPEATS
#   lat     issue 27: capture tests, alloc latency, HF generation (~360 s);
#           LAT_ALLOCATORS e.g. native,expandable,memlake,memlake:max_mapped_ratio=1.5
# KINETO_STEP: tier and tierresnet profile this iteration's GPU activity (tier_finetune.py --kineto-step; default 6, -1: none).
# KV_KINDS: kv's bench kinds (kv_generate.py --kinds; default the issue's baselines, the default
# KVCache compiled and eager, and its live reads eager).
# Limits: T_<STEP> seconds for each step's main run (e.g. T_KV=300); a step's
# other parts have fixed limits of their own (kv's check 150 s, sleep's tests
# 60 s, tier's tests 150 s, tierloss's two runs T_TIER_LOSS=200 each), so a step takes up to their sum.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}; mkdir -p "$out"
log() { echo "[$(date +%T)] $*" | tee -a "$out/steps.log"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$out/device.txt" 2>&1
log "device: $(head -1 "$out/device.txt")"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMEMLAKE_BUILD_TESTS=OFF -DMEMLAKE_BUILD_BENCHMARKS=OFF \
  > "$out/configure.log" 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" --target libmemlake.so memlake_cli > "$out/build.log" 2>&1 ||
  { tail -30 "$out/configure.log" "$out/build.log"; exit 1; }
export MEMLAKE_LIBRARY=$PWD/build-gpu/libmemlake.so PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
log "built"

step_sleep() {
  timeout "${T_SLEEP:-240}" python3 bench/sleep_wake.py --workers memlake,tms,cpu --cycles 100 \
    --json "$1/sleep_wake.json" > "$1/sleep_wake.txt" 2>&1
  tail -8 "$1/sleep_wake.txt"
  timeout 60 python3 -m pytest -q -rA tests/python/test_torch_gpu.py -k "sleep or graph_captured" > "$1/pytest.txt" 2>&1
  tail -3 "$1/pytest.txt"
}
step_kv() {
  step_kvcheck "$1"
  step_kvbench "$1"
}
step_kvbench() {
  # No kernel trace unless KV_TRACE=N: a trace in the process slows its later eager rounds
  # (results §19d, §24), so the timed runs go without.
  timeout "${T_KV:-330}" python3 bench/kv_generate.py bench --rounds 3 --steps 20 ${KV_TRACE:+--trace-kernels $KV_TRACE} \
    --kinds "${KV_KINDS:-static-compiled,kv-compiled,static-eager,kv-eager,kvlive-eager,dynamic}" ${KV_ARGS:-} --out "$1" \
    > "$1/bench.log" 2>&1
  grep decode_summary "$1/bench.log"
}
step_kvcheck() {
  timeout 150 python3 bench/kv_generate.py check --models gqa --compiled-models gqa --out "$1" > "$1/check.log" 2>&1
  grep '"check"' "$1/check.log" | cut -c1-240
}
step_disk() {
  local disk=${DISK_DIR:-/tmp/memlake-disk-tier}; mkdir -p "$disk"; df -hT "$disk" > "$1/df.txt"
  timeout "${T_DISK:-120}" ./build-gpu/memlake bench residency --backend cuda --sizes ${DISK_SIZES:-4G} --reps 2 \
    --disk "$disk" > "$1/residency_disk.txt" 2>&1
  cat "$1/residency_disk.txt"; rm -rf "$disk"
}
step_tierloss() {
  # Losses with deterministic (eager) attention: the checkpointed caps against uncapped ckpt at
  # batch 8; the uncheckpointed cap against the ideal at batch 4 (eager attention's ideal at
  # batch 8 does not fit 80 GB).
  timeout "${T_TIER_LOSS:-200}" python3 bench/tier_finetune.py --configs ckpt,tier24_ckpt,tier16_ckpt_disk --attn eager \
    --steps 5 --out "$1/losses_ckpt.json" > "$1/losses_ckpt.txt" 2>&1
  grep -v '^{' "$1/losses_ckpt.txt" | tail -6
  timeout "${T_TIER_LOSS:-200}" python3 bench/tier_finetune.py --configs ideal,tier32 --attn eager --batch 4 \
    --steps 5 --out "$1/losses_b4.json" > "$1/losses_b4.txt" 2>&1
  grep -v '^{' "$1/losses_b4.txt" | tail -6
}
step_tier32diag() {
  # Why tier32 ran out of memory with eager attention at batch 4 (results §21c): the failure's step,
  # place and counts (tier_finetune records them).
  timeout "${T_TIER32DIAG:-200}" python3 bench/tier_finetune.py --configs tier32 --attn eager --batch 4 --steps 5 \
    --out "$1/tier32diag.json" > "$1/tier32diag.txt" 2>&1
  grep -v '^{' "$1/tier32diag.txt" | tail -6 | cut -c1-3000
}
step_copyprobe() {
  # Do the driver's map/unmap calls hold the copy engines back? (the residency engine's both
  # directions at once: 68.8 GB/s against 93.5 for plain copies, results §21c)
  nvcc -O2 -arch=sm_90 -o build-gpu/map_stall tests/gpu/map_stall.cu -lcuda > "$1/nvcc.txt" 2>&1 || { tail -5 "$1/nvcc.txt"; return; }
  timeout "${T_COPYPROBE:-120}" ./build-gpu/map_stall copies 4 > "$1/copies.txt" 2>&1
  cat "$1/copies.txt"
}
step_tiertests() {
  timeout "${T_TIER_TESTS:-150}" python3 -m pytest -q -rA tests/python/test_tiering_gpu.py > "$1/pytest.txt" 2>&1
  tail -3 "$1/pytest.txt"
}
step_tier() {
  [ "${T_TIER_TESTS:-150}" = 0 ] || step_tiertests "$1"
  timeout "${T_TIER:-360}" python3 bench/tier_finetune.py --configs "${TIER_CONFIGS:-ideal,ckpt,tier24_ckpt,tier32,tier16_ckpt_disk}" \
    --out "$1/speed.json" --profile-dir "$1" --kineto-step "${KINETO_STEP:-6}" > "$1/speed.txt" 2>&1
  grep -v '^{' "$1/speed.txt" | tail -24
  for f in "$1"/tier_profile_*.txt; do [ -e "$f" ] && ./build-gpu/memlake sim --profile "$f"; done > "$1/sim.txt" 2>&1
  cat "$1/sim.txt"
}
step_tiermodels() {
  # Not tuned to one model: a GPT-NeoX of Pythia-2.8B's shape and ResNet-152 at a batch beyond the
  # cap, each against its own ideal (issue 20).
  timeout "${T_TIER_MODELS:-240}" python3 bench/tier_finetune.py --model neox2.7b \
    --configs ideal,ckpt,tier24_ckpt,tier32 --out "$1/neox.json" > "$1/neox.txt" 2>&1
  grep -v '^{' "$1/neox.txt" | tail -10
  step_tierresnet "$1"
}
step_tierresnet() {
  # ResNet-152 at batch 256 peaks at 23.7 GiB uncapped (H100); with every state and activation off
  # the GPU it still needs 16.0 GiB (results §23c), so 20 GiB is the cap beyond its peak.
  timeout "${T_TIER_MODELS:-240}" python3 bench/tier_finetune.py --model resnet152 --batch 256 \
    --configs ${RESNET_CONFIGS:-ideal,tier20} --out "$1/resnet.json" --profile-dir "$1" --kineto-step "${KINETO_STEP:-6}" > "$1/resnet.txt" 2>&1
  grep -v '^{' "$1/resnet.txt" | tail -16
}
step_daemon() { OUT="$1" PARTS=dedup BENCH_TIMEOUT="${T_DAEMON:-120}" scripts/gpu_daemon.sh | tail -15; }
step_hash() {
  cmake -S . -B build-gpu-tests -G Ninja -DCMAKE_BUILD_TYPE=Release -DMEMLAKE_BUILD_BENCHMARKS=OFF \
    ${GTEST_DIR:+-DMEMLAKE_GTEST_SOURCE_DIR=$GTEST_DIR} > "$1/configure.log" 2>&1 &&
    cmake --build build-gpu-tests -j"$(nproc)" --target memlake_tests > "$1/build.log" 2>&1 &&
    timeout "${T_HASH:-120}" build-gpu-tests/tests/memlake_tests --gtest_filter='ContentId*:*Hash*:SharePrim*' \
      > "$1/tests.txt" 2>&1
  if [ -f "$1/tests.txt" ]; then tail -5 "$1/tests.txt"; else tail -20 "$1/configure.log" "$1/build.log" 2>/dev/null; fi
}
step_vision() {
  timeout "${T_VISION:-240}" python3 bench/vision_varshape.py --repeats "${VISION_REPEATS:-3}" ${VISION_ARGS:-} --out "$1/vision.json" \
    > "$1/vision.txt" 2>&1
  tail -5 "$1/vision.txt"
}
step_frag() {
  # Issue 27's fine-tuning workloads (L = LoRA, R = recomputation, V = batch following length),
  # memlake against native and expandable_segments, alternated repeats; about 30 s per run, so
  # 2 strategies x 3 allocators x 3 repeats fill one call.
  timeout "${T_FRAG:-540}" python3 bench/torch_fragmentation.py --strategies "${FRAG_STRATEGIES:-L,LR}" \
    --allocators native,expandable,memlake --repeats "${FRAG_REPEATS:-3}" --steps "${FRAG_STEPS:-15}" \
    --out "$1/frag.json" --plot "$1/frag.png" > "$1/frag.txt" 2>&1
  tail -25 "$1/frag.txt"
}
step_gen() {
  # issue 27: HF generation with varying batch and prompt, GEN_ALLOCATORS side by side (alternated rounds)
  timeout "${T_GEN:-150}" python3 bench/hf_generate.py --allocators "${GEN_ALLOCATORS:-native,expandable,memlake}" \
    --repeats "${GEN_REPEATS:-2}" --out "$1/gen.json" > "$1/gen.txt" 2>&1
  tail -8 "$1/gen.txt"
}
step_gentrace() {
  # hf_generate under memlake with its allocations traced (MEMLAKE_TRACE), for `memlake replay` on
  # a CPU: why its utilization (0.92) stays below expandable_segments' (0.98) (results §24d).
  timeout "${T_GENTRACE:-150}" python3 bench/hf_generate.py --allocators "memlake:trace=$(cd "$1" && pwd)/hf_generate.csv.gz" \
    --repeats 1 --out "$1/gen.json" > "$1/gen.txt" 2>&1
  tail -3 "$1/gen.txt"
  # ResNet-50 with changing shapes the same way (its utilization 0.984 against expandable_segments' 0.996)
  timeout "${T_VISIONTRACE:-60}" python3 bench/vision_varshape.py --allocators "memlake:trace=$(cd "$1" && pwd)/vision.csv.gz" \
    --repeats 1 --steps 20 --warmup 5 --out "$1/vision.json" > "$1/vision.txt" 2>&1
  tail -2 "$1/vision.txt"; ls -la "$1"
}
step_lat() { OUT="$1" T_TESTS=90 T_LAT="${T_LAT:-70}" T_GEN="${T_LAT_GEN:-200}" scripts/gpu_issue27.sh | tail -30; }

[ -d .gpu/googletest ] && export GTEST_DIR=$PWD/.gpu/googletest
for s in ${STEPS:-sleep kv}; do
  d="$out/$s"; mkdir -p "$d"
  log "step $s"
  "step_$s" "$d" 2>&1 | tee "$d/summary.txt"
  log "step $s done"
done
