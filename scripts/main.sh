#!/usr/bin/env bash
# The main job: install dependencies, build, and train the digits CNN on the
# default device (set OAR_DEVICE to choose another; the script is unchanged).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
PYTHONPATH="$(pwd)/build/python${PYTHONPATH:+:$PYTHONPATH}" ${PYTHON:-python3} examples/train_digits.py "$@"
