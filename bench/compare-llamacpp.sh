#!/usr/bin/env bash
# Side-by-side speed: llama.cpp's llama-bench and `edgellm bench` on the same
# files with the same settings, runs alternating (one repetition of each
# engine in turn, so drift and heat hit both alike), then our/their ratio.
#
#   bench/compare-llamacpp.sh MODEL.gguf [MODEL.gguf ...] [-t N] [-p 512] [-n 128] [-r 5]
#
# Needs the reference build (../shared/anchor/llamacpp.sh build, or
# LLAMA_BIN=DIR naming another llama.cpp build's bin/, e.g. one configured
# for an ISA) and a built edgellm (scripts/build.sh). Prints a markdown table; raw JSON goes to
# $OUT_DIR (default: a temp dir, path printed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
anchor=$root/../shared/anchor/llamacpp.sh
edgellm=${EDGELLM:-$root/build/edgellm}
threads=2 n_prompt=512 n_gen=128 reps=5
models=()
while [ $# -gt 0 ]; do
  case "$1" in
    -t) threads=$2; shift 2 ;;
    -p) n_prompt=$2; shift 2 ;;
    -n) n_gen=$2; shift 2 ;;
    -r) reps=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "compare-llamacpp: unknown option $1" >&2; exit 2 ;;
    *) [ -f "$1" ] || { echo "compare-llamacpp: no such model file: $1" >&2; exit 2; }; models+=("$1"); shift ;;
  esac
done
[ ${#models[@]} -gt 0 ] || { echo "usage: bench/compare-llamacpp.sh MODEL.gguf... [-t N] [-p N] [-n N] [-r N]" >&2; exit 2; }
[ -x "$edgellm" ] || { echo "compare-llamacpp: $edgellm not built (run scripts/build.sh)" >&2; exit 2; }
bin=${LLAMA_BIN:-$("$anchor" path)}
[ -x "$bin/llama-bench" ] || { echo "compare-llamacpp: llama-bench not built (run $anchor build)" >&2; exit 2; }
out=${OUT_DIR:-$(mktemp -d)}
mkdir -p "$out"
echo "raw results: $out" >&2

# One engine run: its JSON to $1, its stderr to $out/logs/$2. A failing run
# stops the script with the engine, the file, its exit status and the end of
# its stderr (a bare `set -e` exit used to end the table with no word).
mkdir -p "$out/logs"
run_engine() {
  local json=$1 log=$out/logs/$2 rc=0
  shift 2
  "$@" > "$json" 2> "$log" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "compare-llamacpp: $(basename "$1") exited with status $rc on $name (run $r); the end of its stderr ($log):" >&2
    tail -n 5 "$log" >&2
    exit 1
  fi
}

for m in "${models[@]}"; do
  name=$(basename "$m")
  for r in $(seq 1 "$reps"); do
    run_engine "$out/$name.llama.$r.json" "$name.llama.$r.log" \
      "$bin/llama-bench" -m "$m" -p "$n_prompt" -n "$n_gen" -t "$threads" -r 1 -o json
    run_engine "$out/$name.edgellm.$r.json" "$name.edgellm.$r.log" \
      "$edgellm" bench -m "$m" -p "$n_prompt" -n "$n_gen" -t "$threads" -r 1 -o json
  done
done

python3 - "$out" "$threads" <<'PY'
import json, os, statistics, sys
out, threads = sys.argv[1], sys.argv[2]
rows = {}
host = None
for f in sorted(os.listdir(out)):
    if not f.endswith('.json'):
        continue  # logs/
    name, engine = f.split('.gguf.')[0] + '.gguf', f.split('.gguf.')[1].split('.')[0]
    # Both engines print llama-bench's JSON; edgellm adds isa, gbs and probe.
    for t in json.load(open(os.path.join(out, f))):
        test = ('pp%d' % t['n_prompt']) if t['n_prompt'] else ('tg%d' % t['n_gen'])
        d = rows.setdefault((name, test), {})
        d.setdefault(engine, []).append(t['avg_ts'])
        if engine == 'edgellm':
            if t.get('probe'): host = t['probe']
            d['type'] = t['model_type']
            if t.get('gbs') is not None: d.setdefault('gbs', []).append(t['gbs'])
            if t.get('bw_share') is not None: d.setdefault('share', []).append(t['bw_share'])
            for k in ('read_gbs_before', 'read_gbs_after'):
                if t.get(k) is not None: d.setdefault('bus', []).append(t[k])
if host:
    print(f"host: {host['cores']} cores, isa {host['isa']}, read {host['read_gbs_all']:.1f} GB/s ({host['threads']} threads), int8 dot {host['int8_gops']:.1f} GOP/s\n")
print(f"| model | type | test | llama.cpp t/s | edgellm t/s | edgellm/llama.cpp | edgellm GB/s | read GB/s around | share of read BW |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
def ms(v): return f"{statistics.mean(v):.2f} ± {statistics.stdev(v) if len(v) > 1 else 0:.2f}"
for (name, test), d in sorted(rows.items()):
    l, e = d.get('llama', []), d.get('edgellm', [])
    if not l or not e: continue
    ratio = statistics.mean(e) / statistics.mean(l)
    gbs = statistics.mean(d['gbs']) if 'gbs' in d else None
    # Each edgellm repetition's share is against the bus read over the weights
    # just before and after it (edgellm bench's bw_share); the mean of those.
    share = f"{statistics.mean(d['share']) * 100:.0f}%" if 'share' in d else ""
    bus = f"{min(d['bus']):.1f}-{max(d['bus']):.1f}" if 'bus' in d else ""
    print(f"| {name} | {d.get('type','')} | {test} | {ms(l)} | {ms(e)} | {ratio:.2f}x | {'' if gbs is None else f'{gbs:.1f}'} | {bus} | {share} |")
PY
