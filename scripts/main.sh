#!/usr/bin/env bash
# The main job: install dependencies, build, show what oar loaded, and train
# the example model on the default device (set OAR_DEVICE to choose another).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
build/bin/oar-info | head -n 20
build/bin/softmax_regression
