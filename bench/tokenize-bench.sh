#!/usr/bin/env bash
# Tokenizer speed, edgellm next to llama.cpp's llama-tokenize, on the same
# vocabularies and the same 1 MB English and Chinese texts (one thread; both
# tokenizers are single-threaded). Also checks that both give the same ids.
#   bench/tokenize-bench.sh [VOCAB.gguf ...]   (default: qwen2, llama-bpe, llama-spm)
# llama-tokenize has no timer, so both tools are timed the same way: the best
# wall time on the text minus the best wall time on a one-byte text (process
# start and vocab load), of 5 runs each, printing the ids (--ids) to
# /dev/null. edgellm's encode call alone (tokenize --stats) is shown as well.
# llama-tokenize runs with --no-escape --no-parse-special, so both read the
# text verbatim (its defaults turn "\\n" into a newline and parse control tokens).
set -euo pipefail
cd "$(dirname "$0")/.."
shared=$(cd .. && pwd)/shared
edgellm=${EDGELLM:-build/edgellm}
anchor_bin=${LLAMACPP_BIN:-$HOME/.cache/edgellm-anchor/llama.cpp/build/bin}
[ -x "$edgellm" ] || { echo "tokenize-bench: $edgellm not built (scripts/build.sh)" >&2; exit 1; }
if [ ! -x "$anchor_bin/llama-tokenize" ]; then
  bash "$shared/anchor/llamacpp.sh" >&2
fi
[ -x "$anchor_bin/llama-tokenize" ] || { echo "tokenize-bench: no llama-tokenize in $anchor_bin" >&2; exit 1; }
vocabs=("$@")
[ ${#vocabs[@]} -gt 0 ] || vocabs=("$shared"/testdata/vocab/ggml-vocab-{qwen2,llama-bpe,llama-spm}.gguf)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash bench/tokenizer-corpus.sh "$work" >/dev/null
printf 'x' > "$work/one.txt"

best_wall() {  # best of 5 wall-clock seconds of a command
  local best=""
  for _ in 1 2 3 4 5; do
    local t0 t1
    t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
    best=$(echo "$t0 $t1 $best" | awk '{d=$2-$1; if ($3=="" || d<$3) print d; else print $3}')
  done
  echo "$best"
}
ids_of_llama() { "$anchor_bin/llama-tokenize" -m "$1" -f "$2" --ids --no-escape --no-parse-special --log-disable 2>/dev/null | tr -d '[] \n'; }

echo "| vocab | text | bytes | tokens | edgellm MB/s | llama-tokenize MB/s | ratio | edgellm encode-only MB/s | same ids |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for v in "${vocabs[@]}"; do
  for lang in en zh; do
    f="$work/$lang.txt"
    bytes=$(stat -c %s "$f")
    ours=""
    for _ in 1 2 3; do
      s=$("$edgellm" tokenize --vocab "$v" -f "$f" --ids --stats 2>&1 >/dev/null | sed -n 's/.*, \([0-9.]*\) MB\/s.*/\1/p')
      ours=$(echo "$s $ours" | awk '{ if ($2=="" || $1>$2) print $1; else print $2 }')
    done
    e_full=$(best_wall "$edgellm" tokenize --vocab "$v" -f "$f" --ids)
    e_base=$(best_wall "$edgellm" tokenize --vocab "$v" -f "$work/one.txt" --ids)
    ours_wall=$(echo "$bytes $e_full $e_base" | awk '{ printf "%.2f", $1 / 1e6 / ($2 - $3) }')
    full=$(best_wall "$anchor_bin/llama-tokenize" -m "$v" -f "$f" --ids --no-escape --no-parse-special --log-disable)
    base=$(best_wall "$anchor_bin/llama-tokenize" -m "$v" -f "$work/one.txt" --ids --no-escape --no-parse-special --log-disable)
    theirs=$(echo "$bytes $full $base" | awk '{ printf "%.2f", $1 / 1e6 / ($2 - $3) }')
    a=$("$edgellm" tokenize --vocab "$v" -f "$f" --ids)
    b=$(ids_of_llama "$v" "$f")
    same=no; [ "$a" = "$b" ] && same=yes
    n=$(echo "$a" | tr ',' '\n' | wc -l)
    ratio=$(echo "$ours_wall $theirs" | awk '{ printf "%.2fx", $1 / $2 }')
    echo "| $(basename "$v" .gguf | sed 's/ggml-vocab-//') | $lang | $bytes | $n | $ours_wall | $theirs | $ratio | $ours | $same |"
  done
done
echo
echo "texts: en sha256 $(sha256sum "$work/en.txt" | cut -c1-16), zh sha256 $(sha256sum "$work/zh.txt" | cut -c1-16) (bench/tokenizer-corpus.sh)"
