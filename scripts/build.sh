#!/usr/bin/env bash
# Installs dependencies, configures and builds oar into build/ (one build that
# tests, tools and benchmarks all run from).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
JOBS=${OAR_BUILD_JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j "$JOBS"
