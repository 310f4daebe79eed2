#!/usr/bin/env bash
# The whole test suite: build, then run every test under CTest.
#   scripts/test.sh          Release build
#   scripts/test.sh asan     AddressSanitizer + UndefinedBehaviorSanitizer build
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
dir=$(bash scripts/build.sh "$kind" | tail -n 1)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$dir" -j"$(nproc)" --output-on-failure --timeout 900
