#!/usr/bin/env bash
# Fuzz smoke test for the GGUF reader: builds fuzz_gguf (clang, libFuzzer,
# ASan + UBSan) if needed, seeds it with the malformed-GGUF test corpus and
# the .gguf files of ../shared/testdata, and fuzzes for 60 seconds.
# Exits non-zero on any finding (crash, sanitizer report, leak, OOM, timeout);
# the input that caused it is left in $BUILD_DIR/fuzz-smoke/artifacts/.
#
# Environment: BUILD_DIR (default build-fuzz), FUZZ_TIME (seconds, default 60).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
testdata=$root/../shared/testdata
fuzz_time=${FUZZ_TIME:-60}

if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DEDGELLM_FUZZ=ON \
    -DEDGELLM_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
ninja -C "$build" fuzz_gguf gguf_corpus_dump

work=$build/fuzz-smoke
rm -rf "$work"
mkdir -p "$work/seeds" "$work/corpus" "$work/artifacts"
models=$(ls "$testdata"/models/*.gguf "$testdata"/vocab/*.gguf 2>/dev/null || true)
# The test corpus, plus each model whole (the fuzzer reads its first -max_len
# bytes) and shrunk to a small valid file of the same structure.
"$build/fuzz/gguf_corpus_dump" "$work/seeds" $models
for f in $models; do cp "$f" "$work/seeds/"; done
echo "seeds: $(ls "$work/seeds" | wc -l) files"

status=0
"$build/fuzz/fuzz_gguf" -max_total_time="$fuzz_time" -rss_limit_mb=2048 -max_len=65536 \
  -timeout=20 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
  "$work/corpus" "$work/seeds" || status=$?

if [ "$status" -ne 0 ] || [ -n "$(ls -A "$work/artifacts")" ]; then
  echo "fuzz_gguf: FINDING (exit status $status); inputs in $work/artifacts:" >&2
  ls -l "$work/artifacts" >&2
  exit 1
fi
echo "fuzz_gguf: no findings in ${fuzz_time}s"
