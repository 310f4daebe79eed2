#!/usr/bin/env bash
# Concurrent streamed decode, edgellm serve against llama.cpp's llama-server, on one model.
#
#   bench/concurrent-decode.sh -m MODEL [-t THREADS] [-c CTX_PER_SLOT] [-s "1 2 4 8"]
#                              [-n MAX_TOKENS] [-r ROUNDS] [-e "llama edgellm"] [-o OUT.jsonl]
#                              [-d DEADLINE_S] [-- extra concurrent-decode.py args]
#
# For each slot count N in -s, it starts each engine with N slots, waits for /health,
# runs bench/concurrent-decode.py --clients N against it, and stops it; the engine that
# goes first alternates from one N to the next (llama first at the 1st, 3rd, ... N).
#   llama-server  -m MODEL -t T -tb T -c CTX*N --parallel N -ngl 0 --host 127.0.0.1 --port P
#                 (llama-server's -c is the total context, split evenly across the slots,
#                 so each slot gets CTX; the script reads the per-slot n_ctx back from
#                 /props and prints it)
#   edgellm serve -m MODEL -t T -c CTX --parallel N --host 127.0.0.1 --port P
#                 (edgellm's -c is per slot: "N slots x ctx CTX" in its start-up line)
# Everything listens on 127.0.0.1 only, on a free port picked per run.
#
# Defaults: -t 2, -c 512, -s "1 2 4", -n 64, -r 3, -e "llama edgellm", -d 1800 (the
# whole script's time bound: runs not started by then are skipped; each client run is
# also bounded by `timeout`). JSON lines (one per engine and N, see the python script's
# header for the fields) go to stdout and to -o (default: none). Server logs go to
# $LOGDIR (default a fresh /tmp/concurrent-decode.XXXX, kept).
#
# Binaries: EDGELLM (default <repo>/build/edgellm) and LLAMA_SERVER, built from the anchor
# source that shared/anchor/llamacpp.sh build clones into $A/llama.cpp
# (A=${EDGELLM_ANCHOR_DIR:-~/.cache/edgellm-anchor}), web UI off and nothing downloaded:
#   build-server:       the anchor's own flags (-DGGML_NATIVE=ON) with the server on:
#     cmake -S $A/llama.cpp -B $A/llama.cpp/build-server -DCMAKE_BUILD_TYPE=Release \
#       -DGGML_NATIVE=ON -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF \
#       -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF
#     cmake --build $A/llama.cpp/build-server -j2 --target llama-server
#   build-server-noamx: the same but -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON
#     -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=ON -DGGML_AVX512_VNNI=ON
#     -DGGML_AVX512_BF16=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
#     (as BENCHMARKS.md's AVX-512 llama.cpp): on hosts that report AMX but do not grant
#     its tile state (the 2-core Xeon VM), the native build dies of SIGILL in its AMX
#     kernels at the first decode unless run with LLAMA_EXTRA=--no-repack, which also
#     drops its repacked (fast) weight layouts.
# Default LLAMA_SERVER: build-server-noamx/bin/llama-server when it exists, else
# build-server/bin/llama-server; the "# llama-server:" line names the one used.
# Extra server flags: LLAMA_EXTRA="..." and EDGELLM_EXTRA="..." (word-split).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
ANCHOR=${EDGELLM_ANCHOR_DIR:-$HOME/.cache/edgellm-anchor}
if [ -z "${LLAMA_SERVER:-}" ]; then
  LLAMA_SERVER=$ANCHOR/llama.cpp/build-server-noamx/bin/llama-server
  [ -x "$LLAMA_SERVER" ] || LLAMA_SERVER=$ANCHOR/llama.cpp/build-server/bin/llama-server
fi
EDGELLM=${EDGELLM:-$ROOT/build/edgellm}
CLIENT="$HERE/concurrent-decode.py"

MODEL="" THREADS=2 CTX=512 SLOTS="1 2 4" NTOK=64 ROUNDS=3 ENGINES="llama edgellm" OUT="" DEADLINE=1800
HEALTH_WAIT=${HEALTH_WAIT:-180}
usage() { sed -n '2,42p' "$0"; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    -m) MODEL=$2; shift 2 ;;
    -t) THREADS=$2; shift 2 ;;
    -c) CTX=$2; shift 2 ;;
    -s) SLOTS=$2; shift 2 ;;
    -n) NTOK=$2; shift 2 ;;
    -r) ROUNDS=$2; shift 2 ;;
    -e) ENGINES=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    -d) DEADLINE=$2; shift 2 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    *) echo "concurrent-decode.sh: unknown argument $1" >&2; usage ;;
  esac
done
EXTRA_CLIENT=("$@")
[ -n "$MODEL" ] || { echo "concurrent-decode.sh: -m MODEL is required" >&2; usage; }
[ -f "$MODEL" ] || { echo "concurrent-decode.sh: no model file $MODEL" >&2; exit 2; }
for e in $ENGINES; do
  case $e in
    llama) [ -x "$LLAMA_SERVER" ] || { echo "concurrent-decode.sh: no llama-server at $LLAMA_SERVER (set LLAMA_SERVER)" >&2; exit 2; } ;;
    edgellm) [ -x "$EDGELLM" ] || { echo "concurrent-decode.sh: no edgellm at $EDGELLM (set EDGELLM)" >&2; exit 2; } ;;
    *) echo "concurrent-decode.sh: unknown engine '$e' (llama, edgellm)" >&2; exit 2 ;;
  esac
done
LOGDIR=${LOGDIR:-$(mktemp -d /tmp/concurrent-decode.XXXX)}
mkdir -p "$LOGDIR"
START=$SECONDS
SERVER_PID=""

stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$SERVER_PID" 2>/dev/null; then kill -KILL "$SERVER_PID" 2>/dev/null || true; fi
  fi
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}
trap stop_server EXIT
trap 'stop_server; exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_health PORT: 0 once /health answers 200; 1 if the server died or HEALTH_WAIT passed.
wait_health() {
  local port=$1 t0=$SECONDS
  while [ $((SECONDS - t0)) -lt "$HEALTH_WAIT" ]; do
    kill -0 "$SERVER_PID" 2>/dev/null || return 1
    if python3 - "$port" <<'EOF' 2>/dev/null; then return 0; fi
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=2)
c.request("GET", "/health")
sys.exit(0 if c.getresponse().status == 200 else 1)
EOF
    sleep 0.5
  done
  return 1
}

describe() {  # describe ENGINE PORT LOG: one line on what the server set up
  local engine=$1 port=$2 log=$3
  if [ "$engine" = llama ]; then
    python3 - "$port" <<'EOF' || true
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
c.request("GET", "/props")
p = json.loads(c.getresponse().read())
g = p.get("default_generation_settings", {})
print(f"  llama-server /props: total_slots {p.get('total_slots')} per-slot n_ctx {g.get('n_ctx')} build {p.get('build_info', '')}")
EOF
  else
    grep -m1 'slots x ctx' "$log" | sed 's/^/  /' || true
  fi
}

run_one() {  # run_one ENGINE N
  local engine=$1 n=$2 port log rc=0
  local left=$((DEADLINE - (SECONDS - START)))
  if [ "$left" -le 30 ]; then echo "# skip $engine N=$n: the $DEADLINE s deadline is near"; return 0; fi
  port=$(free_port)
  log="$LOGDIR/$engine-np$n.log"
  if [ "$engine" = llama ]; then
    # shellcheck disable=SC2086
    "$LLAMA_SERVER" -m "$MODEL" -t "$THREADS" -tb "$THREADS" -c $((CTX * n)) --parallel "$n" -ngl 0 \
      --host 127.0.0.1 --port "$port" ${LLAMA_EXTRA:-} >"$log" 2>&1 &
  else
    # shellcheck disable=SC2086
    "$EDGELLM" serve -m "$MODEL" -t "$THREADS" -c "$CTX" --parallel "$n" \
      --host 127.0.0.1 --port "$port" ${EDGELLM_EXTRA:-} >"$log" 2>&1 &
  fi
  SERVER_PID=$!
  echo "# $engine N=$n port $port pid $SERVER_PID log $log"
  if ! wait_health "$port"; then
    echo "# $engine N=$n: the server did not come up in ${HEALTH_WAIT} s; last log lines:" >&2
    tail -n 15 "$log" >&2
    stop_server
    return 1
  fi
  describe "$engine" "$port" "$log"
  local label=$engine; [ "$engine" = llama ] && label=llama-server
  local args=(--url "http://127.0.0.1:$port" --clients "$n" --max-tokens "$NTOK" --rounds "$ROUNDS" --label "$label")
  [ -n "$OUT" ] && args+=(--json-out "$OUT")
  timeout --signal=TERM "$left" python3 "$CLIENT" "${args[@]}" "${EXTRA_CLIENT[@]}" || rc=$?
  stop_server
  [ "$rc" = 0 ] || echo "# $engine N=$n: the client exited $rc" >&2
  return "$rc"
}

echo "# model $MODEL | threads $THREADS | ctx/slot $CTX | slots $SLOTS | max-tokens $NTOK | rounds $ROUNDS | logs $LOGDIR"
case " $ENGINES " in *" llama "*) echo "# llama-server: $LLAMA_SERVER ${LLAMA_EXTRA:-}" ;; esac
case " $ENGINES " in *" edgellm "*) echo "# edgellm: $EDGELLM ($("$EDGELLM" --version 2>&1 | head -1)) ${EDGELLM_EXTRA:-}" ;; esac
status=0 i=0
for n in $SLOTS; do
  order=$ENGINES
  if [ $((i % 2)) = 1 ]; then order=$(echo "$ENGINES" | tr ' ' '\n' | tac | tr '\n' ' '); fi
  for e in $order; do run_one "$e" "$n" || status=1; done
  i=$((i + 1))
done
echo "# done in $((SECONDS - START)) s"
exit $status
