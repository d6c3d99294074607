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
)

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
