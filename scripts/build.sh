#!/usr/bin/env bash
# scripts/build.sh [release|asan]  ->  build/ or build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
kind=${1:-release}
case "$kind" in
  release) dir=build; flags="-DCMAKE_BUILD_TYPE=Release" ;;
  asan) dir=build-asan; flags="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDGELLM_SANITIZE=ON" ;;
  *) echo "usage: scripts/build.sh [release|asan]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -G Ninja $flags >/dev/null
cmake --build "$dir" -j"$(nproc)"
echo "$dir"
