#!/usr/bin/env bash
# Builds (if needed) and runs the whole test suite with ctest. Every suite runs
# with OAR_FALLBACK=error, so an op that silently left its device fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# Both CI devices must be present: a plugin that fails to load is a failure,
# not a quieter run (tests/support/test_util.h). Where the driver sees an
# NVIDIA GPU, the CUDA device is required too; elsewhere the GPU tests skip
# and print why.
required=cpu,opencl
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then required=$required,cuda; fi
export TEST_OAR_REQUIRE_DEVICES="${TEST_OAR_REQUIRE_DEVICES-$required}"
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 600 "$@")
# Python suites (the package is in build/python).
if [ -d tests/python ] && [ -d build/python/oar ]; then
  TEST_OAR_PYTHONPATH="$(pwd)/build/python" OAR_FALLBACK=error ${PYTHON:-python3} -m pytest -q tests/python
fi
# The wheel: pip install . into a fresh venv, used from outside the source tree
# (skipped with TEST_OAR_SKIP_PIP=1, e.g. for a quick local run).
if [ "${TEST_OAR_SKIP_PIP:-0}" != 1 ]; then
  bash scripts/test_pip_install.sh
fi
