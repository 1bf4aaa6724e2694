#!/usr/bin/env bash
# Sets up (installs dependencies, builds) and runs the main job: replays the
# shipped allocation traces through memlake and prints what it saved against
# the native PyTorch allocator that recorded them.
#   scripts/run.sh [TRACE ...]      (default: traces/*.csv.gz, then any other
#                                    trace in ../shared/traces/ when it is there)
# A plain clone is enough: the traces the main job needs are in traces/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
traces=("$@")
if [ ${#traces[@]} -eq 0 ]; then
  traces=(traces/*.csv.gz)
  # ../shared/traces is an optional extra (llama1b-gen); a trace traces/ ships too is replayed once.
  for t in ../shared/traces/*.csv.gz; do
    if [ -f "$t" ] && [ ! -f "traces/$(basename "$t")" ]; then traces+=("$t"); fi
  done
fi
for t in "${traces[@]}"; do
  ./build/memlake replay "$t"
  echo
done
