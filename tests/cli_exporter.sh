#!/usr/bin/env bash
# memlake exporter over two processes that serve statistics (Python over libmemlake,
# one with RANK=3): GET /metrics holds both, labelled by pid, rank and gpu_uuid, and
# promtool accepts it (when installed); another path is 404, a garbage or oversized
# request 400, a silent client is dropped without holding the others, and the
# exporter still serves after all of them; SIGTERM ends it with status 0.
#   cli_exporter.sh MEMLAKE_BINARY LIBMEMLAKE PYTHON SOURCE_DIR
set -euo pipefail
cli=$1 lib=$2 py=$3 src=$4
tmp=$(mktemp -d)
pids=()
exporter=
cleanup() {
  for p in "${pids[@]}" $exporter; do kill "$p" 2> /dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
export XDG_RUNTIME_DIR=$tmp  # only these two servers
serve='
import time
import memlake
a = memlake.Allocator(backend="host", stats_server=1)
p = a.alloc(3 << 20)
time.sleep(120)
'
(unset RANK LOCAL_RANK; MEMLAKE_LIBRARY=$lib PYTHONPATH=$src/python exec "$py" -c "$serve") & pids+=($!)
RANK=3 MEMLAKE_LIBRARY=$lib PYTHONPATH=$src/python "$py" -c "$serve" & pids+=($!)
for p in "${pids[@]}"; do
  for _ in $(seq 300); do [ -S "$tmp/memlake/$p.sock" ] && break; sleep 0.1; done
  [ -S "$tmp/memlake/$p.sock" ] || { echo "process $p serves no statistics"; exit 1; }
done

"$cli" exporter --listen 127.0.0.1:0 > "$tmp/exporter.out" 2> "$tmp/exporter.err" & exporter=$!
for _ in $(seq 100); do [ -s "$tmp/exporter.out" ] && break; sleep 0.1; done
line=$(head -n 1 "$tmp/exporter.out")
echo "exporter: $line"
[[ $line =~ ^listening\ on\ http://127\.0\.0\.1:([0-9]+)/metrics$ ]] || { echo "no address line"; exit 1; }
port=${BASH_REMATCH[1]}
url=http://127.0.0.1:$port/metrics

# HTTP: status and body of GET URL (curl if present, else urllib).
fetch() {  # fetch URL OUTFILE -> prints the status code
  if command -v curl > /dev/null; then
    curl -s -o "$2" -w '%{http_code}' --max-time 10 "$1"
  else
    "$py" - "$1" "$2" << 'EOF'
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen(sys.argv[1], timeout=10)
    code, body = r.status, r.read()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read()
open(sys.argv[2], "wb").write(body)
print(code, end="")
EOF
  fi
}
# Raw bytes to the exporter; prints the reply's first line.
raw() {  # raw PYTHON-BYTES-LITERAL
  "$py" - "$port" "$1" << 'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(eval(sys.argv[2]))  # a bytes expression of this script
reply = b""
while True:
    b = s.recv(65536)
    if not b:
        break  # the exporter closed the connection
    reply += b
print(reply.split(b"\r\n", 1)[0].decode())
EOF
}
check_metrics() {
  code=$(fetch "$url" "$tmp/metrics.prom")
  [ "$code" = 200 ] || { echo "GET /metrics: $code"; cat "$tmp/exporter.err"; exit 1; }
  [ "$(grep -c '^# TYPE memlake_reserved_bytes ' "$tmp/metrics.prom")" = 1 ]
  grep -q "^memlake_reserved_bytes{pid=\"${pids[0]}\",rank=\"\",device=\"0\",backend=\"host\",gpu_uuid=\"host-0\"} " "$tmp/metrics.prom"
  grep -q "^memlake_reserved_bytes{pid=\"${pids[1]}\",rank=\"3\",device=\"0\",backend=\"host\",gpu_uuid=\"host-0\"} " "$tmp/metrics.prom"
  grep -q '^memlake_exporter_processes 2$' "$tmp/metrics.prom"
}
check_metrics
cat "$tmp/metrics.prom"
if command -v promtool > /dev/null; then
  promtool check metrics < "$tmp/metrics.prom"
  echo "promtool accepts the exporter's exposition"
else
  echo "promtool not found (Debian package prometheus): not checked"
fi
if command -v curl > /dev/null; then
  curl -s -D - -o /dev/null --max-time 10 "$url" | grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8'
fi

# Errors, then the exporter still serves.
[ "$(fetch "http://127.0.0.1:$port/nothing" "$tmp/404")" = 404 ]
[ "$(raw 'b"GARBAGE\r\n\r\n"')" = "HTTP/1.1 400 Bad Request" ]
[ "$(raw 'b"\x00\xff\x01 / HTTP/1.1\r\n\r\n"')" = "HTTP/1.1 400 Bad Request" ]
[ "$(raw 'b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 9000')" = "HTTP/1.1 400 Bad Request" ]
[ "$(raw 'b"POST /metrics HTTP/1.0\r\n\r\n"')" = "HTTP/1.1 405 Method Not Allowed" ]
[ "$(raw 'b"GET /metrics?x=1 HTTP/1.0\r\nHost: x\r\n\r\n"')" = "HTTP/1.1 200 OK" ]
echo "404, 400 (garbage, binary, oversized), 405 answered"

# A silent client holds nobody: a scrape while it waits is served, and it is dropped.
"$py" - "$port" > "$tmp/silent.out" << 'EOF' & silent=$!
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
t = time.time()
s.settimeout(30)
print("closed" if s.recv(1) == b"" else "data", round(time.time() - t, 1))
EOF
sleep 0.5
start=$(date +%s)
check_metrics
[ $(($(date +%s) - start)) -le 2 ] || { echo "a scrape waited for the silent client"; exit 1; }
wait $silent
echo "silent client: $(cat "$tmp/silent.out")"
grep -q '^closed' "$tmp/silent.out"

kill -TERM $exporter
rc=0
wait $exporter || rc=$?
exporter=
[ $rc = 0 ] || { echo "exporter exit status $rc after SIGTERM"; exit 1; }
echo "SIGTERM: exit status 0"
