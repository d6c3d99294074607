#!/usr/bin/env bash
# oneDNN 2.6 (Debian's libdnnl-dev, what the CPU plugin links) against oneDNN
# 3.2 (PyPI's onednn-devel-cpu-gomp 2023.2.0, pinned: the later `onednn`
# wheels are SYCL builds that pull in Intel's GPU runtime) on the primitives
# oar's models run: the same source (bench/onednn_versions/) built against
# each, run one after the other on the same threads, printed side by side as
# v2.6 time / v3.2 time (> 1: v3.2 faster). Issue 18 chose the version by it
# (docs/performance.md).
#
# Usage: bash bench/onednn_versions.sh [threads] [rounds]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
threads="${1:-$(nproc)}"
rounds="${2:-20}"
work="${OAR_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/oar/onednn-versions}"
v3="$work/onednn-3.2"
mkdir -p "$work"

if [ ! -f /usr/include/oneapi/dnnl/dnnl.hpp ]; then
  echo "error: Debian's libdnnl-dev is not installed (scripts/install_deps.sh installs it)" >&2
  exit 1
fi
if [ ! -f "$v3/include/oneapi/dnnl/dnnl.hpp" ]; then
  echo "fetching oneDNN 3.2 from PyPI into $v3"
  rm -rf "$work/wheels" "$v3.tmp"
  python3 -m pip download --quiet --no-deps -d "$work/wheels" \
    onednn-cpu-gomp==2023.2.0 onednn-devel-cpu-gomp==2023.2.0
  mkdir -p "$v3.tmp"
  for w in "$work"/wheels/*.whl; do python3 -m zipfile -e "$w" "$v3.tmp/unpacked"; done
  mkdir -p "$v3.tmp/include" "$v3.tmp/lib"
  cp -r "$v3.tmp"/unpacked/*.data/data/include/. "$v3.tmp/include/"
  cp -P "$v3.tmp"/unpacked/onednn_cpu_gomp-*.data/data/lib/libdnnl.so* "$v3.tmp/lib/"
  rm -rf "$v3.tmp/unpacked" && mv "$v3.tmp" "$v3"  # complete or absent: an interrupted fetch is redone
fi

src="$here/onednn_versions/bench_onednn_primitives.cpp"
g++ -std=c++17 -O2 -o "$work/bench_v2" "$src" -ldnnl
g++ -std=c++17 -O2 -I"$v3/include" -o "$work/bench_v3" "$src" -L"$v3/lib" -ldnnl -Wl,-rpath,"$v3/lib"

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1); threads: $threads"
export OMP_NUM_THREADS="$threads"
# Alternating runs (v2, v3, v2, v3), the faster median of each kept: neither version always
# runs first, on a cold or a warm machine.
for pass in 1 2; do
  "$work/bench_v2" "$rounds" > "$work/v2.$pass.txt"
  "$work/bench_v3" "$rounds" > "$work/v3.$pass.txt"
done
head -1 "$work/v2.1.txt"; head -1 "$work/v3.1.txt"
python3 - "$work" <<'EOF'
import sys
def rows(prefix):
    out = {}
    for path in (f"{prefix}.1.txt", f"{prefix}.2.txt"):
        for line in open(path):
            if line.startswith("#"):
                continue
            name, ms, impl = line.rstrip("\n").split("\t")
            out[name] = min(out.get(name, (float(ms), impl)), (float(ms), impl))
    return out
v2, v3 = rows(f"{sys.argv[1]}/v2"), rows(f"{sys.argv[1]}/v3")
print(f"{'primitive':36s} {'v2.6 ms':>9s} {'v3.2 ms':>9s} {'v2.6/v3.2':>9s}  implementations (v2.6 | v3.2)")
for name, (a, ia) in v2.items():
    b, ib = v3.get(name, (float("nan"), "-"))
    print(f"{name:36s} {a:9.3f} {b:9.3f} {a / b:9.2f}  {ia} | {ib}")
EOF
