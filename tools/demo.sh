#!/usr/bin/env bash
# From a fresh Debian 12 checkout to a benchmark table in a couple of minutes:
# installs the dependencies, builds pario into build/, and runs the 3-D array
# experiment (seed 003) in its quick size on pario, OMPIO, ROMIO and the physical
# limit, every read verified.
# Results: build/demo/coll3d-quick.{json,md,png} (override with PARIO_DEMO_DIR).
# Usage: bash tools/demo.sh [extra pario bench options, e.g. --ranks 2]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${PARIO_DEMO_DIR:-build/demo}"
jobs=$(nproc)

echo "=== dependencies"
bash tools/deps.sh

echo "=== build (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs" --target io_coll3d io_limit pario-mpiio >/dev/null

echo "=== pario bench coll3d --quick"
mkdir -p "$out"
status=0
build/bin/pario bench coll3d --quick --dir "$out" \
  --json "$out/coll3d-quick.json" "$@" || status=$?
echo "=== results: $out/coll3d-quick.json, .md, .png"
exit $status
