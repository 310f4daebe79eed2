#!/usr/bin/env bash
# Fuzz smoke test: builds the libFuzzer targets (clang, ASan + UBSan) if needed
# and fuzzes each for 60 seconds:
#   fuzz_gguf      the GGUF reader, seeded with the malformed-GGUF test corpus
#                  and the .gguf files of ../shared/testdata;
#   fuzz_template  the chat-template engine, seeded with the templates of
#                  ../shared/testdata/templates, with a Jinja dictionary.
# Exits non-zero on any finding (crash, sanitizer report, leak, OOM, timeout);
# the input that caused it is left in $BUILD_DIR/fuzz-smoke/artifacts/ or
# $BUILD_DIR/fuzz-smoke-template/artifacts/.
#
# Environment: BUILD_DIR (default build-fuzz), FUZZ_TIME (seconds per target,
# default 60).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
testdata=$root/../shared/testdata
fuzz_time=${FUZZ_TIME:-60}

if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DEDGELLM_FUZZ=ON \
    -DEDGELLM_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
ninja -C "$build" fuzz_gguf fuzz_template gguf_corpus_dump

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

failed=0
if [ "$status" -ne 0 ] || [ -n "$(ls -A "$work/artifacts")" ]; then
  echo "fuzz_gguf: FINDING (exit status $status); inputs in $work/artifacts:" >&2
  ls -l "$work/artifacts" >&2
  failed=1
else
  echo "fuzz_gguf: no findings in ${fuzz_time}s"
fi

# --- the chat-template engine ---
twork=$build/fuzz-smoke-template
rm -rf "$twork"
mkdir -p "$twork/seeds" "$twork/corpus" "$twork/artifacts"
cp "$testdata"/templates/*.jinja "$twork/seeds/" 2>/dev/null || true
echo "template seeds: $(ls "$twork/seeds" | wc -l) files"
cat > "$twork/jinja.dict" <<'DICT'
"{%"
"%}"
"{{"
"}}"
"{#"
"#}"
"{%-"
"-%}"
"{{-"
"-}}"
" for "
" in "
" if "
" elif "
" else "
" endif "
" endfor "
" set "
" endset "
" macro "
" endmacro "
" call "
" endcall "
" filter "
" endfilter "
" break "
" continue "
" namespace("
" is "
" not "
" and "
" or "
" defined"
" none"
"loop.index"
"loop.first"
"messages"
"message['content']"
"add_generation_prompt"
"|tojson"
"|trim"
"|length"
"|join(', ')"
"|default('x')"
"|selectattr('role', 'equalto', 'user')"
"|map(attribute='role')"
"|dictsort"
"|indent(2)"
"|replace('a', 'b')"
".split(',')"
".startswith('a')"
".strip()"
"[1:-1]"
"[::-1]"
"range(3)"
"raise_exception('x')"
"tools"
"caller()"
"**"
"//"
"~"
DICT

tstatus=0
"$build/fuzz/fuzz_template" -max_total_time="$fuzz_time" -rss_limit_mb=2048 -max_len=32768 \
  -timeout=20 -print_final_stats=1 -dict="$twork/jinja.dict" -artifact_prefix="$twork/artifacts/" \
  "$twork/corpus" "$twork/seeds" || tstatus=$?

if [ "$tstatus" -ne 0 ] || [ -n "$(ls -A "$twork/artifacts")" ]; then
  echo "fuzz_template: FINDING (exit status $tstatus); inputs in $twork/artifacts:" >&2
  ls -l "$twork/artifacts" >&2
  failed=1
else
  echo "fuzz_template: no findings in ${fuzz_time}s"
fi
exit "$failed"
