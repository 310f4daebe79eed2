#!/usr/bin/env bash
# Fuzz smoke test: builds the libFuzzer targets (clang, ASan + UBSan) if needed
# and fuzzes each for 60 seconds:
#   fuzz_gguf      the GGUF reader, seeded with the malformed-GGUF test corpus
#                  and the .gguf files of ../shared/testdata;
#   fuzz_template  the chat-template engine, seeded with the templates of
#                  ../shared/testdata/templates, with a Jinja dictionary
#                  (control-flow tags too, so it builds deep elif chains);
#   fuzz_json      the JSON reader (messages, template variables), seeded
#                  with the JSON files written below, with a JSON dictionary;
#   fuzz_tokenizer random bytes -> encode -> decode with every vocabulary of
#                  ../shared/testdata/vocab, seeded with their test texts.
# Exits non-zero on any finding (crash, sanitizer report, leak, OOM, timeout);
# the input that caused it is left in $BUILD_DIR/fuzz-smoke*/artifacts/.
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
ninja -C "$build" fuzz_gguf fuzz_template fuzz_json fuzz_tokenizer gguf_corpus_dump

work=$build/fuzz-smoke
rm -rf "$work"
mkdir -p "$work/seeds" "$work/corpus" "$work/artifacts"
models=$(ls "$testdata"/models/*.gguf "$testdata"/vocab/*.gguf 2>/dev/null || true)
# The test corpus, plus each model whole (the fuzzer reads its first -max_len
# bytes) and shrunk to a small valid file of the same structure.
"$build/fuzz/gguf_corpus_dump" "$work/seeds" $models
for f in $models; do cp "$f" "$work/seeds/"; done
echo "seeds: $(ls "$work/seeds" | wc -l) files"

# run_fuzz NAME WORKDIR [libFuzzer flags...]: fuzz for $fuzz_time seconds from
# WORKDIR/seeds into WORKDIR/corpus; a finding (non-zero exit or an artifact)
# sets failed=1.
failed=0
run_fuzz() {
  local name=$1 dir=$2 status=0
  shift 2
  "$build/fuzz/$name" -max_total_time="$fuzz_time" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
    -artifact_prefix="$dir/artifacts/" "$@" "$dir/corpus" "$dir/seeds" || status=$?
  if [ "$status" -ne 0 ] || [ -n "$(ls -A "$dir/artifacts")" ]; then
    echo "$name: FINDING (exit status $status); inputs in $dir/artifacts:" >&2
    ls -l "$dir/artifacts" >&2
    failed=1
  else
    echo "$name: no findings in ${fuzz_time}s"
  fi
}

run_fuzz fuzz_gguf "$work" -max_len=65536

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
"if"
"elif"
"else"
"endif"
"for"
"endfor"
"macro"
"endmacro"
"call"
"endcall"
"set"
"endset"
"filter"
"endfilter"
"{% if 0 %}"
"{% elif 0 %}"
"{% elif 1 %}"
"{% else %}"
"{% endif %}"
"{% for x in [1] %}"
"{% endfor %}"
"{% macro m() %}"
"{% endmacro %}"
"{% call m() %}"
"{% endcall %}"
"{% set x = 1 %}"
"{% set x %}"
"{% endset %}"
"{% filter upper %}"
"{% endfilter %}"
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

run_fuzz fuzz_template "$twork" -max_len=32768 -dict="$twork/jinja.dict"

# --- the JSON reader ---
jwork=$build/fuzz-smoke-json
rm -rf "$jwork"
mkdir -p "$jwork/seeds" "$jwork/corpus" "$jwork/artifacts"
# Conversations as the CLI reads them, and the corners of the grammar.
cat > "$jwork/seeds/conversation.json" <<'JSON'
{"messages": [{"role": "system", "content": "Be brief."},
  {"role": "user", "content": "Hi \u00e9\ud83d\ude80\n\"quoted\""},
  {"role": "assistant", "content": "", "tool_calls": [{"id": "a1", "type": "function",
    "function": {"name": "f", "arguments": {"x": [1, -2.5e3, true, false, null]}}}]}],
 "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}], "enable_thinking": false}
JSON
printf '[{"role":"user","content":"hi"}]' > "$jwork/seeds/messages.json"
printf '{"b":1,"a":2,"b":3,"0":4,"10":5,"2":6}' > "$jwork/seeds/keys.json"
printf '[[[[[[[[[[{"a":[{"b":[]}]}]]]]]]]]]]' > "$jwork/seeds/nested.json"
printf '[0,-0,1e308,1e999,-1.5E-7,0.1,123456789012345678901234567890]' > "$jwork/seeds/numbers.json"
printf '%s' '"\\ \/ \b \f \n \r \t \u0000 \ud800 \udc00x \uDBFF\uDFFF"' > "$jwork/seeds/escapes.json"
echo "json seeds: $(ls "$jwork/seeds" | wc -l) files"
cat > "$jwork/json.dict" <<'DICT'
"{"
"}"
"["
"]"
":"
","
"\""
"true"
"false"
"null"
"-0.5e+10"
"\\u00e9"
"\\ud83d\\ude80"
"\"role\""
"\"content\""
"\"messages\""
"\"tools\""
DICT
run_fuzz fuzz_json "$jwork" -max_len=65536 -dict="$jwork/json.dict"

# --- the tokenizers ---
kwork=$build/fuzz-smoke-tokenizer
rm -rf "$kwork"
mkdir -p "$kwork/seeds" "$kwork/corpus" "$kwork/artifacts"
# Byte 0 picks the vocabulary, byte 1 the flags, the rest is text: each test
# text file, once per flag combination.
i=0
for f in "$testdata"/vocab/*.inp; do
  for flags in 0 1 2 3; do
    { printf "\\$(printf '%03o' $((i % 256)))\\$(printf '%03o' "$flags")"; head -c 4096 "$f"; } > "$kwork/seeds/$i-$flags"
  done
  i=$((i + 1))
done
echo "tokenizer seeds: $(ls "$kwork/seeds" | wc -l) files"
EDGELLM_VOCAB_DIR="$testdata/vocab" run_fuzz fuzz_tokenizer "$kwork" -max_len=4096

exit "$failed"
