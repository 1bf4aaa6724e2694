#!/usr/bin/env bash
# Copy-engine tuning sweep on a GPU machine (after scripts/gpu_suite.sh has
# built build-gpu): pageable H2D/D2H GB/s at one size for each combination
# of host threads and staging chunk, memlake and the plain driver copy in
# the same process, with the default ramp of first pieces, without it
# (--no-ramp) and with ordinary instead of non-temporal stores
# (--plain-memcpy), over STREAMS DMA streams for H2D. Prints one line
# per combination. A variant min-piece=SIZE sets the engine's smallest piece.
#   SIZE=256M THREADS="8 12 16" CHUNKS="2M 4M 8M" STREAMS="1 2" VARIANTS="ramp no-ramp" scripts/gpu_copy_sweep.sh
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"
size=${SIZE:-256M}
for t in ${THREADS:-8 12 16}; do
  for c in ${CHUNKS:-2M 4M 8M}; do
   for st in ${STREAMS:-1}; do
    for v in ${VARIANTS:-ramp no-ramp plain-memcpy}; do
      ramp=""; case $v in ramp) ;; min-piece=*) ramp="--min-piece ${v#min-piece=}" ;; *) ramp="--$v" ;; esac
      f="$out/sweep_t${t}_c${c}_s${st}_${v//=/_}.json"
      timeout 60 ./build-gpu/memlake bench copy --backend ${BACKEND:-cuda} --min "$size" --max "$size" --reps "${REPS:-6}" \
        --threads "$t" --chunk "$c" --h2d-streams "$st" $ramp --json > "$f" 2>&1 || { echo "t=$t c=$c s=$st $v failed"; tail -2 "$f"; continue; }
      python3 - "$f" "$t" "$c" "$v" "$st" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = {(x["direction"], x["host"]): x for x in d["samples"]}
h, dd, b, p = g[("h2d", "pageable")], g[("d2h", "pageable")], g[("both", "pageable")], g[("h2d", "pinned")]
def lanes(x):  # share of the lanes' time in the host memcpy, and one lane's memcpy GB/s
    return f"[copy {100 * x.get('lane_copy_share', -1):3.0f}%, lane {x.get('lane_gbps', 0):4.1f}]"
print(f"threads {sys.argv[2]:>2} chunk {sys.argv[3]:>3} streams {sys.argv[5]} {sys.argv[4]:12}  H2D {h['memlake_gbps']:5.1f} (plain {h['plain_gbps']:4.1f}) {lanes(h)}"
      f"  D2H {dd['memlake_gbps']:5.1f} (plain {dd['plain_gbps']:4.1f}) {lanes(dd)}  both {b['memlake_gbps']:5.1f}  pinned H2D {p['memlake_gbps']:5.1f}"
      f"  {'ok' if all(x['verified'] for x in d['samples']) else 'MISMATCH'}")
PY
    done
   done
  done
done
