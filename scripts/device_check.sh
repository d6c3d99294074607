#!/usr/bin/env bash
# Runs on a lent GPU machine from the repository root, after
# scripts/device_bundle.sh packed .device/bundle.tar.xz here: the C++ suites
# with cpu and cuda required, the conformance suite on cuda (and its linalg /
# rnn cases again with OAR_CUDA_VENDOR_SOLVERS=1), bench_cuda and an ncu
# profile of its elementwise add.
# Logs go to $OUT (or .device/out). Suites that need what the image lacks
# (PoCL, OpenVINO, HIP-CPU, Debian's ONNX data, Python 3.11) are left out.
set -u
repo=$(pwd)
out=${OUT:-$repo/.device/out}
mkdir -p "$out"
python3 -c "import tarfile; tarfile.open('.device/bundle.tar.xz').extractall('.')" || exit 1
# ctest's files name /work/main; point it here when the copy lives elsewhere.
if [[ $repo != /work/main ]]; then mkdir -p /work && ln -sfn "$repo" /work/main; fi
nv=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/*/lib 2>/dev/null | tr '\n' ':')
export LD_LIBRARY_PATH=$repo/build/devdeps:${nv}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
{ nvidia-smi -L; nvcc --version | tail -1; } >"$out/machine.txt" 2>&1
build/bin/oar-info >"$out/oar-info.txt" 2>&1
echo "oar-info rc=$?" >>"$out/machine.txt"
skip='HipCpu|HipPlugin|/hip$|OpenVino|openvino|opencl|Opencl|SdkOnly|Package|Python|Debian|OnnxNodeTests|Pip'
TEST_OAR_REQUIRE_DEVICES=cpu,cuda OAR_FALLBACK=error \
  timeout ${CTEST_BUDGET_S:-300} ctest --test-dir build -j12 --timeout 240 -E "$skip" --output-on-failure \
  >"$out/ctest.log" 2>&1
echo "ctest rc=$?" >>"$out/machine.txt"
# A test that crashed is run once more under cuda-gdb (the image has no gdb)
# for a backtrace of every thread.
if command -v cuda-gdb >/dev/null; then
  grep -oE '^[[:space:]]*[0-9]+ - [^ ]+ \((SEGFAULT|Subprocess aborted|Child aborted)\)' "$out/ctest.log" |
    awk '{print $3}' | head -4 | while read -r name; do
      cmd=$(ctest --test-dir build -N -V -R "^${name}\$" | sed -n 's/^[0-9]*: Test command: //p' | head -1 | tr -d '"')
      [[ -z $cmd ]] && continue
      echo "=== $name: $cmd" >>"$out/backtraces.txt"
      TEST_OAR_REQUIRE_DEVICES=cpu,cuda OAR_FALLBACK=error timeout 120 cuda-gdb -q -batch -ex run \
        -ex 'thread apply all bt 25' --args $cmd >>"$out/backtraces.txt" 2>&1
    done
fi
timeout 120 build/bin/oar-conformance --device cuda --level full --markdown "$out/cuda.md" >"$out/conformance.log" 2>&1
echo "conformance rc=$?" >>"$out/machine.txt"
# The cuSOLVER / cuDNN RNN kernels are off by default until this has passed:
# their ops at level full, and the C++ RNN suite, with them switched on.
OAR_CUDA_VENDOR_SOLVERS=1 timeout 120 build/bin/oar-conformance --device cuda --level full \
  --filter 'ops/linalg_*,grad/linalg_*,gradgrad/linalg_*,ops/rnn_layer*,grad/rnn_layer*,onnx/node/*lstm*,onnx/node/*gru*,onnx/node/*rnn*' \
  --markdown "$out/cuda_vendor_solvers.md" >"$out/conformance_vendor_solvers.log" 2>&1
echo "conformance (OAR_CUDA_VENDOR_SOLVERS=1) rc=$?" >>"$out/machine.txt"
OAR_CUDA_VENDOR_SOLVERS=1 TEST_OAR_REQUIRE_DEVICES=cpu,cuda OAR_FALLBACK=error timeout 120 \
  build/bin/test_frontend_rnn >"$out/frontend_rnn_vendor_solvers.log" 2>&1
echo "test_frontend_rnn (OAR_CUDA_VENDOR_SOLVERS=1) rc=$?" >>"$out/machine.txt"
timeout 60 build/bin/bench_cuda >"$out/bench_cuda.txt" 2>&1
echo "bench_cuda rc=$?" >>"$out/machine.txt"
# The elementwise add's kernel under Nsight Compute: its own duration and DRAM
# throughput, to tell a slow kernel from host time between launches.
if command -v ncu >/dev/null; then
  timeout 90 ncu --kernel-name regex:elementwise --launch-skip 2 --launch-count 2 --section SpeedOfLight \
    --section LaunchStats build/bin/bench_cuda add >"$out/ncu_add.txt" 2>&1
  echo "ncu rc=$?" >>"$out/machine.txt"
fi
cat "$out/machine.txt"
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Exception|SEGFAULT" "$out/ctest.log" | head -60
tail -5 "$out/conformance.log"
grep -E "FAIL|CRASH|oar-conformance" "$out/conformance_vendor_solvers.log" | head -20
cat "$out/bench_cuda.txt"
