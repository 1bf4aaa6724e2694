#!/usr/bin/env bash
# Runs every fuzz target for a fixed time over the committed seed corpus and
# prints executions per target. Usage: tests/fuzz/run.sh BUILD_DIR [SECONDS]
# New inputs go to a scratch directory; the committed corpus is read only.
# A crash leaves its input in BUILD_DIR/fuzz-artifacts and fails the run.
set -euo pipefail
build=$1
secs=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
art="$build/fuzz-artifacts"
mkdir -p "$art"
status=0
printf '%-16s %12s %10s\n' target executions exec/s
for t in trace options topology stats_protocol daemon_protocol capi profile; do
  scratch=$(mktemp -d)
  log="$build/fuzz_$t.log"
  if ! "$build/fuzz_$t" -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=1024 \
      -artifact_prefix="$art/${t}-" -print_final_stats=1 "$scratch" "$here/corpus/$t" >"$log" 2>&1; then
    echo "fuzz_$t FAILED (log: $log):"; tail -40 "$log"; status=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  printf '%-16s %12s %10s\n' "$t" "${runs:-?}" "${rate:-?}"
  rm -rf "$scratch"
done
exit $status
