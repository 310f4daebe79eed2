#!/usr/bin/env bash
# The server's client tests: installs the pinned `openai` package from the
# committed lockfile (npm ci, from the npm registry), makes a small synth
# qwen2 model, and runs a suite against real `edgellm serve` processes.
#   tests/server/run.sh EDGELLM_BINARY SUITE   (SUITE: setup | client | hostile | load | concurrency)
# `setup` only installs and makes the model (CTest's fixture, so that suites
# running side by side never run npm ci at once); the suites do it too when
# run by hand.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
suite=${2:-client}
shared=$here/../../../shared
work=$(dirname "$bin")/server-test-data
mkdir -p "$work"
cd "$here"
if [ ! -d node_modules/openai ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --ignore-scripts >/dev/null
fi
qwen2=$work/qwen2-tiny-q8_0.gguf
if [ ! -f "$qwen2" ]; then
  "$bin" synth --arch qwen2 --shape tiny --type q8_0 --vocab-from "$shared/testdata/vocab/ggml-vocab-qwen2.gguf" \
    -o "$qwen2.part" >/dev/null 2>&1
  mv "$qwen2.part" "$qwen2"
fi
# The concurrency suite's other layer kinds: llama (q4_0), gemma3's sliding
# window (six layers, window 32), phi3's fused projections; stories260K's
# 512-token vocabulary keeps them small.
stories=$shared/testdata/models/stories260K.gguf
more=""
for spec in llama:tiny:q4_0 gemma3:tiny-6l:f16 phi3:tiny-phi3:q4_k_m; do
  IFS=: read -r arch shape type <<<"$spec"
  f=$work/$arch-$shape-$type.gguf
  if [ ! -f "$f" ]; then
    "$bin" synth --arch "$arch" --shape "$shape" --type "$type" --vocab-from "$stories" -o "$f.part" >/dev/null 2>&1
    mv "$f.part" "$f"
  fi
  more=$more,$f
done
export EDGELLM_CONCURRENCY_MODELS=$stories,$qwen2$more
[ "$suite" = setup ] && exit 0
export EDGELLM_BIN=$bin
export EDGELLM_MODELS=$shared/testdata/models/stories260K.gguf,$qwen2
case "$(basename "$(dirname "$bin")")" in *asan*) export EDGELLM_SANITIZED=1 ;; esac
exec node --test --test-concurrency=1 "$here/$suite.test.mjs"
