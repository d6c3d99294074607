#!/usr/bin/env bash
# Installs the OpenVINO runtime the openvino adapter driver builds against
# (adapter/drivers/openvino): the pinned pip wheel, which carries the C++
# headers, libopenvino and its device plugins. Idempotent: nothing is
# installed when that version is already there. Prints the folder holding
# OpenVINOConfig.cmake on stdout (CMake finds it by itself; pass it as
# -DOAR_OPENVINO_DIR=... for another Python). PYTHON overrides python3.
set -euo pipefail

OPENVINO_VERSION=2025.3.0
PYTHON=${PYTHON:-python3}

# importlib.metadata / find_spec: no import of openvino itself, whose Python
# module needs numpy, which --no-deps leaves out (the C++ runtime does not need it).
installed=$("$PYTHON" -c "import importlib.metadata as m; print(m.version('openvino'))" 2>/dev/null || true)
if [[ "$installed" != "$OPENVINO_VERSION"* ]]; then
  echo "installing openvino==$OPENVINO_VERSION (found: ${installed:-none})" >&2
  "$PYTHON" -m pip install --quiet --no-deps "openvino==$OPENVINO_VERSION" >&2
fi
"$PYTHON" -c "import importlib.util, os; s = importlib.util.find_spec('openvino'); \
print(os.path.join(s.submodule_search_locations[0], 'cmake'))"
