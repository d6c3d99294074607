#!/usr/bin/env bash
# Regenerates the committed conformance reports, docs/conformance/<device>.md,
# at --level full: cpu, opencl, the vendor template, and cuda where a GPU is.
# A report with failures is still the report: it is written either way.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/bin/oar-conformance ] || bash scripts/build.sh
mkdir -p docs/conformance
run() {  # name, then the device arguments
  local name=$1; shift
  build/bin/oar-conformance "$@" --level full --markdown "docs/conformance/$name.md" --quiet || true
}
run cpu --device cpu
run opencl --device opencl
run template --plugin build/test_plugins/template/liboar_plugin_template.so
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then run cuda --device cuda; fi
ls -l docs/conformance/
