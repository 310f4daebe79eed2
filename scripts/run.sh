#!/usr/bin/env bash
# The main job: build (once) and generate text. Arguments go to `edgellm run`;
# with none, stories260K continues "Once upon a time".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh release >/dev/null
if [ $# -eq 0 ]; then
  set -- -m ../shared/testdata/models/stories260K.gguf -p "Once upon a time" -n 128
fi
exec ./build/edgellm run "$@"
