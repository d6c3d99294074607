#!/usr/bin/env bash
# Builds (if needed) and runs the whole test suite with ctest. Every suite runs
# with OAR_FALLBACK=error, so an op that silently left its device fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# Both CI devices must be present: a plugin that fails to load is a failure,
# not a quieter run (tests/support/test_util.h).
export TEST_OAR_REQUIRE_DEVICES="${TEST_OAR_REQUIRE_DEVICES-cpu,opencl}"
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 600 "$@")
# Python suites (the package is in build/python).
if [ -d tests/python ] && [ -d build/python/oar ]; then
  TEST_OAR_PYTHONPATH="$(pwd)/build/python" OAR_FALLBACK=error ${PYTHON:-python3} -m pytest -q tests/python
fi
