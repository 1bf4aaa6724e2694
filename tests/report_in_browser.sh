#!/usr/bin/env bash
# memlake report's page in a real headless browser (Chromium or Chrome): the DOM
# it builds holds the inline SVG plots and the summary table, and a screenshot
# of it is a real picture. Without a browser on PATH: exit 77 (SKIP).
# Usage: report_in_browser.sh MEMLAKE_CLI TRACE
set -euo pipefail
cli=$1
trace=$2
browser=
for b in chromium chromium-headless-shell chrome-headless-shell google-chrome chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then browser=$(command -v "$b"); break; fi
done
if [ -z "$browser" ]; then echo "SKIP: no headless browser"; exit 77; fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" report "$trace" -o "$dir/report.html"
flags=(--headless --no-sandbox --disable-gpu --no-first-run --disable-extensions --user-data-dir="$dir/profile"
       --window-size=1100,1800)
echo "browser: $browser ($("$browser" --version 2>/dev/null | head -1 || true))"
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$dir/report.html" > "$dir/dom.html" 2> "$dir/browser.log" ||
  { cat "$dir/browser.log"; echo "FAIL: --dump-dom"; exit 1; }
fail=0
check() {  # check WHAT PATTERN: the dumped DOM matches PATTERN
  if grep -Eq -e "$2" "$dir/dom.html"; then echo "ok: $1"; else echo "FAIL: $1 (no match for $2)"; fail=1; fi
}
check "inline svg" '<svg[^>]*xmlns="http://www.w3.org/2000/svg"'
check "native polyline" '<polyline class="native reserved"'
check "memlake polyline" '<polyline class="memlake reserved"'
check "overhead polylines" '<polyline class="memlake overhead"'
check "summary table" '<table id="summary"'
check "summary peak reserved row" '<th scope="row">peak reserved</th>'
[ "$(grep -o '<svg' "$dir/dom.html" | wc -l)" -ge 2 ] && echo "ok: two plots" || { echo "FAIL: fewer than two svg"; fail=1; }
timeout 120 "$browser" "${flags[@]}" --screenshot="$dir/shot.png" "file://$dir/report.html" > "$dir/shot.log" 2>&1 ||
  { cat "$dir/shot.log"; echo "FAIL: --screenshot"; exit 1; }
size=$(stat -c %s "$dir/shot.png" 2>/dev/null || echo 0)
if [ "$(head -c 8 "$dir/shot.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && [ "$size" -gt 20000 ]; then
  echo "ok: screenshot, $size bytes of PNG"
else
  echo "FAIL: screenshot ($size bytes, or not a PNG)"; fail=1
fi
exit $fail
