#!/usr/bin/env bash
# Sets up (installs dependencies, builds) and runs the main job: replays the
# shipped allocation traces through memlake and prints what it saved against
# the native PyTorch allocator that recorded them.
#   scripts/run.sh [TRACE ...]      (default: ../shared/traces/*.csv.gz and traces/*.csv.gz)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
traces=("$@")
[ ${#traces[@]} -gt 0 ] || traces=(../shared/traces/*.csv.gz traces/*.csv.gz)
for t in "${traces[@]}"; do
  ./build/memlake replay "$t"
  echo
done
