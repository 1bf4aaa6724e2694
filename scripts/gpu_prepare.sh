#!/usr/bin/env bash
# Fills .gpu/ (git-ignored) with what a GPU run needs beside the tree, before the
# device run that carries it (carry: [".gpu"]):
#   .gpu/googletest   GoogleTest's sources, built there by scripts/gpu_suite.sh
#                     (from $GTEST_SRC, default Debian's /usr/src/googletest,
#                     package googletest / libgtest-dev)
#   .gpu/cli11        CLI11's headers (the memlake command; header-only, from
#                     Debian's libcli11-dev) for a machine that has no package
#   .gpu/traces       the ../shared traces that traces/ does not ship (llama1b-gen)
#   scripts/gpu_prepare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
src=${GTEST_SRC:-/usr/src/googletest}
[ -f "$src/CMakeLists.txt" ] || { echo "gpu_prepare: no GoogleTest sources in $src (apt-get install googletest, or set GTEST_SRC)" >&2; exit 1; }
mkdir -p .gpu/traces
rm -rf .gpu/googletest .gpu/cli11
cp -r "$src" .gpu/googletest
cli11=${CLI11_INCLUDE:-/usr/include}
[ -f "$cli11/CLI/CLI.hpp" ] || { echo "gpu_prepare: no CLI11 headers in $cli11 (apt-get install libcli11-dev, or set CLI11_INCLUDE)" >&2; exit 1; }
mkdir -p .gpu/cli11/include
cp -r "$cli11/CLI" .gpu/cli11/include/
for t in ../shared/traces/*.csv.gz; do
  [ -f "$t" ] || continue
  n=$(basename "$t")
  [ -f "traces/$n" ] || cp "$t" ".gpu/traces/$n"   # one copy: traces/ already ships the rest
done
du -sh .gpu/googletest .gpu/cli11 .gpu/traces
echo "gpu_prepare: .gpu/ ready; carry it with the run (carry: [\".gpu\"])"
