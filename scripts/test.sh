#!/usr/bin/env bash
# Builds (if needed) and runs the whole test suite with ctest. Every suite runs
# with OAR_FALLBACK=error, so an op that silently left its device fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 600 "$@"
