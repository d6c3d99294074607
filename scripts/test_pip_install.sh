#!/usr/bin/env bash
# `pip install .` into a fresh virtual environment, then, from outside the
# source tree, `python -m oar.info` and one training step through `import oar`
# (docs/packaging.md). Run by scripts/test.sh; takes a full build (no CUDA
# plugin, to keep CI short: -Ccmake.define.OAR_BUILD_CUDA=ON adds it).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
work=${TEST_OAR_PIP_DIR:-$src/build/pip-test}
rm -rf "$work/venv"
mkdir -p "$work"
${PYTHON:-python3} -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$src" \
  -Ccmake.define.OAR_BUILD_CUDA=OFF -Cbuild-dir="$work/build"
cd "$(mktemp -d)"  # nothing of the source tree on the path
"$work/venv/bin/python" -m oar.info | head -20
"$work/venv/bin/python" - <<'PY'
import os, oar
assert "site-packages" in oar.__file__, oar.__file__  # the wheel, not a source or build tree
print("oar from", os.path.dirname(oar.__file__))
oar.manual_seed(0)
model = oar.nn.Sequential(oar.nn.Linear(4, 8), oar.nn.ReLU(), oar.nn.Linear(8, 2))
opt = oar.optim.SGD(model.parameters(), lr=0.1)
x, y = oar.randn(16, 4), oar.randint(0, 2, (16,))
losses = []
for _ in range(5):
    opt.zero_grad()
    loss = oar.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
print("training steps from the installed wheel, loss:", " ".join("%.4f" % l for l in losses))
assert losses[-1] < losses[0], losses
PY
echo "test_pip_install: the wheel works from outside the source tree"
