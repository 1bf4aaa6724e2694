#!/usr/bin/env bash
# The copy-engine measurements of a GPU validation run (after
# scripts/gpu_suite.sh has built build-gpu): registration cost against its
# saving, multi-path over a loopback (one GPU) or the machine's GPUs, the
# allocator hot path per size (for the shim's overhead ratio), and the copy
# table with and without the ramp of first pieces, back to back.
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"
m=./build-gpu/memlake
lb=${LOOPBACK:-1}
[ "$(nvidia-smi -L | wc -l)" -gt 1 ] && lb=0
timeout 150 $m bench copy --backend cuda --registration --multipath --loopback "$lb" --max 1G > "$out/paths.txt" 2>&1
echo "paths rc=$?"; cat "$out/paths.txt"
timeout 60 $m bench alloc --backend cuda 2>&1 | head -6 | tee "$out/alloc_cuda.txt"
for r in ramp no-ramp; do
  flag=""; [ $r = no-ramp ] && flag=--no-ramp
  timeout 120 $m bench copy --backend cuda --min 64M --max 1G $flag --json > "$out/copy_$r.json" 2>&1
  echo "copy $r rc=$?"
done
python3 - "$out" <<'PY'
import json, sys
o = sys.argv[1]
a, b = (json.load(open(f"{o}/copy_{r}.json")) for r in ("ramp", "no-ramp"))
print(f"threads {a['threads']}; memlake GB/s with ramp / without (plain driver in the ramp run)")
for x, y in zip(a["samples"], b["samples"]):
    print(f"{x['direction']:5} {x['host']:9} {x['bytes']>>20:6} MiB  plain {x['plain_gbps']:6.1f}  ramp {x['memlake_gbps']:6.1f}"
          f"  no-ramp {y['memlake_gbps']:6.1f}  {'ok' if x['verified'] and y['verified'] else 'MISMATCH'}")
PY
