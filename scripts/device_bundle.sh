#!/usr/bin/env bash
# Packs what the GPU check needs from an existing build (test binaries, the
# core, the cpu and cuda plugins, ctest's files and every shared library they
# need beyond glibc, libstdc++ and NVIDIA's own) into .device/bundle.tar.xz,
# so that a lent GPU machine (no Debian packages, nothing to fetch) can run
# the CUDA suites without building there. scripts/device_check.sh unpacks and
# runs it there; docs/gpu_check.md says how the two are used.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${OAR_BUILD_DIR:-$repo/build}
out=$repo/.device
mkdir -p "$out"
grep -qx '/.device/' "$repo/.git/info/exclude" 2>/dev/null || echo '/.device/' >>"$repo/.git/info/exclude"

deps=$build/devdeps
rm -rf "$deps"
mkdir -p "$deps"
# Libraries the device image has (glibc, the C++ runtime) or must supply
# itself (the driver and NVIDIA's math libraries, matched to its driver).
system='^(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda|libcublas|libcublasLt|libcudnn.*|libnccl|libopenvino.*|linux-vdso)\.so'
find "$build/bin" "$build/lib" "$build/tests" "$build/test_plugins" "$build/test_adapters" \
  -path '*plugins-hip*' -prune -o -type f \( -name '*.so*' -o -perm -u+x \) -print |
  while read -r f; do file -b "$f" | grep -q ELF && ldd "$f" 2>/dev/null; done |
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    [[ $name =~ $system ]] && continue
    [[ $path == "$build"/* ]] && continue
    cp -L "$path" "$deps/$name"
  done

cd "$repo"
tar --exclude='CMakeFiles' --exclude='*.o' --exclude='*.a' --exclude='plugins-hip*' --exclude='liboar_adapter_openvino*' \
  --exclude='build/python' --exclude='build/out_of_tree' --exclude='build/Testing' \
  --exclude='.ninja_*' --exclude='build.ninja' --exclude='build/conformance_broken' \
  -cf - build | xz -T2 -6 >"$out/bundle.tar.xz"
ls -la "$out/bundle.tar.xz"
