#!/usr/bin/env bash
# The main job: build (once) and generate text. Arguments go to `edgellm run`;
# with none, stories260K continues "Once upon a time"; without -m, the model
# is stories260K (the binary itself has no default model).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh release >/dev/null
default_model=../shared/testdata/models/stories260K.gguf
if [ $# -eq 0 ]; then
  set -- -m "$default_model" -p "Once upon a time" -n 128
else
  has_model=0
  for a in "$@"; do
    case "$a" in -m|--model|--model=*) has_model=1 ;; esac
  done
  [ "$has_model" = 1 ] || set -- -m "$default_model" "$@"
fi
exec ./build/edgellm run "$@"
