#!/usr/bin/env bash
# memlake stat --prometheus over two processes that serve statistics (Python over
# libmemlake, one of them with a comma-decimal LC_NUMERIC set): one exposition that
# promtool accepts (each family's HELP/TYPE once, unit-suffixed names), with both
# processes' samples.
#   cli_prometheus_two_processes.sh MEMLAKE_BINARY LIBMEMLAKE PYTHON SOURCE_DIR [LOCPATH]
set -euo pipefail
cli=$1 lib=$2 py=$3 src=$4 locpath=${5:-}
command -v promtool > /dev/null || { echo "promtool not found (Debian package prometheus)"; exit 1; }
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
export XDG_RUNTIME_DIR=$tmp  # only these two servers
serve='
import locale, sys, time
if len(sys.argv) > 1:
    locale.setlocale(locale.LC_ALL, sys.argv[1])  # the process formats numbers with a comma now
import memlake
a = memlake.Allocator(backend="host", stats_server=1)
p = a.alloc(3 << 20)
time.sleep(120)
'
MEMLAKE_LIBRARY=$lib PYTHONPATH=$src/python "$py" -c "$serve" & pids+=($!)
if [ -n "$locpath" ]; then
  LOCPATH=$locpath MEMLAKE_LIBRARY=$lib PYTHONPATH=$src/python "$py" -c "$serve" de_DE.UTF-8 & pids+=($!)
else
  MEMLAKE_LIBRARY=$lib PYTHONPATH=$src/python "$py" -c "$serve" & pids+=($!)
fi
for p in "${pids[@]}"; do
  for _ in $(seq 300); do [ -S "$tmp/memlake/$p.sock" ] && break; sleep 0.1; done
  [ -S "$tmp/memlake/$p.sock" ] || { echo "process $p serves no statistics"; exit 1; }
done
"$cli" stat --prometheus > "$tmp/metrics.prom"
cat "$tmp/metrics.prom"
promtool check metrics < "$tmp/metrics.prom"
[ "$(grep -c '^# TYPE memlake_reserved_bytes ' "$tmp/metrics.prom")" = 1 ]
for p in "${pids[@]}"; do grep -q "^memlake_utilization{pid=\"$p\"" "$tmp/metrics.prom"; done
echo "promtool accepts the two processes' exposition"
