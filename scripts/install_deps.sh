#!/usr/bin/env bash
# Installs every system dependency oar needs on a fresh Debian 12 machine.
# Idempotent: packages already present are not reinstalled, and apt-get update
# runs only when something is missing. docs/dependencies.md says why each is here.
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ pkg-config
  libdnnl-dev            # oneDNN: CPU GEMM, convolution, pooling, normalisation, softmax
  libboost-dev           # Boost.DLL: loading device plugins with local symbol scope
  libdlpack-dev          # DLPack: zero-copy tensor exchange
  libgtest-dev           # GoogleTest
  libbenchmark-dev       # Google Benchmark (bench/)
  zlib1g-dev             # reading the digits data set (.csv.gz) in the C++ demo
  ocl-icd-opencl-dev     # OpenCL ICD loader (libOpenCL.so) the OpenCL plugin links
  opencl-headers         # OpenCL C headers
  pocl-opencl-icd        # PoCL: an OpenCL 3.0 device on the host CPU, so CI runs the OpenCL plugin
  hipcc libamdhip64-dev  # HIP: compiles the GPU plugin's primitive kernels for AMD (compile and link only)
  libonnx-dev            # ONNX protobuf classes (onnx_proto) for liboar_onnx.so: import and export
  libprotobuf-dev        # protobuf runtime the ONNX classes are generated for
  protobuf-compiler      # protoc, which CMake's FindProtobuf expects alongside the library
  libonnx-testdata       # ONNX backend node tests: tests/onnx and docs/onnx_node_tests.md
  liblapacke-dev         # LAPACK (+ its C interface) and BLAS: the CPU plugin's linalg kernels (cholesky, qr, svd, ...)
  libtbb-dev             # TBB: HIP-CPU runs GPU blocks in parallel through it (the hipcpu plugin)
  python3-torch          # PyTorch 1.13 (CPU): a reference the Python tests compare with (tests/python/torch_ref.py)
)
# The CUDA plugin needs the CUDA toolkit with cuDNN, cuBLAS and NCCL; it is not
# a Debian package here but is preinstalled under /usr/local/cuda on the CI and
# development machines. Without it the CUDA plugin is simply not built.

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  echo "install_deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python side: nanobind builds the extension; NumPy is the tensor-exchange and
# test reference; scikit-learn ships the digits data set; pytest runs tests/python.
PY=${PYTHON:-python3}
py_missing=()
for m in nanobind numpy sklearn pytest; do
  "$PY" -c "import $m" >/dev/null 2>&1 || py_missing+=("$m")
done
if ((${#py_missing[@]})); then
  pkgs=("${py_missing[@]/sklearn/scikit-learn}")
  echo "install_deps: pip installing ${pkgs[*]}"
  "$PY" -m pip install --quiet --disable-pip-version-check "${pkgs[@]}"
fi

# onnx (PyPI, pinned): builds the models of tests/python/test_onnx_new_opsets.py and
# is their reference (onnx.reference, onnx.checker) at the opsets after Debian's 1.12;
# its default opset and IR version are the newest oar imports (docs/onnx.md). The C++
# side keeps Debian's libonnx-dev.
"$PY" -c "import onnx; assert onnx.__version__ == '1.17.0'" >/dev/null 2>&1 ||
  "$PY" -m pip install --quiet --disable-pip-version-check onnx==1.17.0

# OpenVINO (PyPI, pinned): the real vendor SDK behind the adapter's openvino
# driver (docs/adapter.md). Debian has no OpenVINO package.
bash "$(dirname "$0")/install_openvino.sh" >/dev/null
