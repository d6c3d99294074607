#!/usr/bin/env bash
# Installs dependencies, configures and builds oar into build/ (one build that
# tests, tools and benchmarks all run from).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
JOBS=${OAR_BUILD_JOBS:-$(nproc)}
# The HIP build of the GPU kernels is compile-and-link only (no AMD GPU here),
# and runs wherever hipcc is installed so the primitives stay portable.
HIP=OFF
if command -v hipcc >/dev/null 2>&1; then HIP=ON; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DOAR_BUILD_HIP="$HIP" >/dev/null
ninja -C build -j "$JOBS"

# Make `import oar` work from any directory: a .pth file pointing at the build.
PY=${PYTHON:-python3}
if [ -d build/python/oar ]; then
  site=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  echo "$(pwd)/build/python" > "$site/oar-build.pth" 2>/dev/null || \
    echo "build.sh: cannot write $site/oar-build.pth; use PYTHONPATH=$(pwd)/build/python"
fi
