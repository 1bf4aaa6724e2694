#!/usr/bin/env bash
# Installs what memlake needs to build and test (Debian/Ubuntu), then builds
# it in ./build. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  pkgs="cmake ninja-build g++ make zlib1g-dev libgtest-dev libbenchmark-dev libcli11-dev locales pkgconf python3 python3-pytest python3-pip python3-setuptools python3-wheel"
  missing=""
  for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  # promtool (tests check the Prometheus text with it): without the node exporter it recommends.
  lean=""
  dpkg -s prometheus >/dev/null 2>&1 || lean="prometheus"
  if [ -n "$missing$lean" ]; then
    apt-get update -qq
    [ -z "$missing" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
    [ -z "$lean" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $lean
  fi
fi
gen=""; command -v ninja >/dev/null && gen="-G Ninja"
cmake -S . -B build $gen -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$(nproc)"
