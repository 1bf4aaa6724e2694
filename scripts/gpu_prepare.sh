#!/usr/bin/env bash
# Fills .gpu/ (git-ignored) with what a GPU run needs beside the tree, before the
# device run that carries it (carry: [".gpu"]):
#   .gpu/googletest   GoogleTest's sources, built there by scripts/gpu_suite.sh
#                     (from $GTEST_SRC, default Debian's /usr/src/googletest,
#                     package googletest / libgtest-dev)
#   .gpu/traces       the ../shared traces that traces/ does not ship (llama1b-gen)
#   scripts/gpu_prepare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
src=${GTEST_SRC:-/usr/src/googletest}
[ -f "$src/CMakeLists.txt" ] || { echo "gpu_prepare: no GoogleTest sources in $src (apt-get install googletest, or set GTEST_SRC)" >&2; exit 1; }
mkdir -p .gpu/traces
rm -rf .gpu/googletest
cp -r "$src" .gpu/googletest
for t in ../shared/traces/*.csv.gz; do
  [ -f "$t" ] || continue
  n=$(basename "$t")
  [ -f "traces/$n" ] || cp "$t" ".gpu/traces/$n"   # one copy: traces/ already ships the rest
done
du -sh .gpu/googletest .gpu/traces
echo "gpu_prepare: .gpu/ ready; carry it with the run (carry: [\".gpu\"])"
