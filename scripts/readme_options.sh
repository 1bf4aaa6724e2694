#!/usr/bin/env bash
# Rewrites README.md's options table from `memlake options --markdown` (the one
# options table, src/core/options.cpp); the test ReadmeOptionsTableMatchesTheCli
# fails until it is run after an option changes.
#   scripts/readme_options.sh [MEMLAKE_BINARY]   (default build/memlake)
set -euo pipefail
cd "$(dirname "$0")/.."
table=$("${1:-build/memlake}" options --markdown)
TABLE="$table" python3 - <<'PY'
import os, re
s = open("README.md").read()
new, n = re.subn(r"^\| key \| environment variable \|.*?\n(?=\n)", lambda m: os.environ["TABLE"] + "\n", s,
                 count=1, flags=re.M | re.S)
assert n == 1, "README.md has no options table"
open("README.md", "w").write(new)
PY
