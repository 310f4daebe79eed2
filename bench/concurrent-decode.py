#!/usr/bin/env python3
"""Concurrent streamed-decode benchmark for an OpenAI-compatible /v1/completions server.

Works against `edgellm serve` and llama.cpp's `llama-server` alike (python3 stdlib
only). For each client count N in --clients, it runs --rounds rounds; a round sends N
streamed requests at once (one thread and one connection each, released together by
a barrier) and waits for all of them to finish.

Request body (llama-server's own fields are added so both engines do the same work):
  {"prompt": P, "max_tokens": M, "n_predict": M, "temperature": 0, "stream": true,
   "ignore_eos": true, "stream_options": {"include_usage": true}}
(`--no-ignore-eos` drops ignore_eos; `--no-cache-prompt` adds "cache_prompt": false,
which only llama-server reads.) edgellm ignores the fields it does not know; it has
no ignore_eos, so a reply there can stop early at EOS: such replies are counted
under "short" in the output.

Per request it records, from the moment the request is sent:
  ttft   time to the first SSE `data:` chunk that carries non-empty text
  tokens usage.completion_tokens from the stream (the last chunk that has a usage
         object), else the number of non-empty text chunks
  t_end  time the stream ended ([DONE] or connection close)

Per round:
  wall        from the barrier's release to the last request's end
  agg_tok_s   THE aggregate decode rate: sum of tokens over all N requests
              / (wall - median ttft of the round).
              The median TTFT stands for the prefill phase of the round; what is
              left of the wall time is (mostly) decode of all N streams together.
  e2e_tok_s   sum of tokens / wall (prefill included)
  per_req_tok_s  mean over requests of (tokens - 1) / (t_end - t_first): the rate
              one client sees once its first token is in.
Per N (printed and in the JSON line): median over rounds of agg_tok_s / e2e_tok_s
(plus the per-round list), TTFT p50 / p99 over all requests of all rounds
(nearest-rank percentiles: with few requests p99 is the max), and the identity check:
`identical` is true when, for every prompt, every reply to it at this N (all clients,
all rounds) has the same text; `same_as_first_n` compares each prompt's reply with the
reply to it at the first N of this invocation (batched decoding is allowed to differ
numerically from N=1, so read it as information, not as a failure). `reply_sha1` lists,
per prompt of the list, the first 12 hex digits of the SHA-1 of its first reply (null:
no client sent it), to compare replies across separate runs, N and engines.
--check-serial: after the rounds of each N, every prompt used is sent once more alone
(one client) and `same_as_serial` says whether all concurrent replies equal that reply
(null when not checked). Each prompt always goes to the same client index (i % K), so
with N <= K `identical` only compares rounds; --distinct 1 or --check-serial are the
checks that catch cross-talk between concurrent sequences.
TTFT note: both servers reuse a slot's cached prompt prefix (edgellm picks the free
slot with the longest shared prefix; llama-server by similarity), so after the warm-up and
the first round a repeated prompt's TTFT is mostly the queueing and one-token prefill
(--no-cache-prompt turns that off on llama-server only).

Prompts: client i gets prompt i % K, where the prompt list is the built-in set of 8
(or --prompts-file, one prompt a line) cut to its first K = --distinct entries
(default: all). With N > K several clients send the same prompt at once, which is
what the identity check is for (--distinct 1: every client the same prompt).

Output (stdout): a readable line per N (starting with '## '), then one JSON line per N
(the lines that start with '{'), also appended to --json-out when given.
Exit status: 0 ok; 1 some request failed; 2 the server is not reachable or answers
/health with an error (--wait-health S polls it for S seconds first).

Example:
  python3 bench/concurrent-decode.py --url http://127.0.0.1:8080 --clients 1 2 4 \
      --max-tokens 64 --rounds 3 --label llama-server
"""
import argparse
import hashlib
import http.client
import json
import statistics
import sys
import threading
import time
import urllib.parse

DEFAULT_PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village by the sea,",
    "def fibonacci(n):",
    "The three primary colors are",
    "In 1969, the first humans to walk on the Moon",
    "A good recipe for bread needs",
    "The quick brown fox jumps over",
    "Photosynthesis is the process by which",
]


def percentile(values, p):
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    v = sorted(values)
    if not v:
        return float("nan")
    k = max(1, int(-(-p * len(v) // 100)))  # ceil(p/100 * n), at least 1
    return v[min(k, len(v)) - 1]


class Target:
    def __init__(self, url):
        u = urllib.parse.urlsplit(url if "://" in url else "http://" + url)
        if u.scheme != "http":
            raise SystemExit(f"concurrent-decode: only http:// URLs are supported, got {url!r}")
        self.host = u.hostname or "127.0.0.1"
        self.port = u.port or 80
        self.base = (u.path or "").rstrip("/")

    def conn(self, timeout):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def __str__(self):
        return f"http://{self.host}:{self.port}{self.base}"


def check_health(t, wait_s):
    """Polls GET /health until it answers 200 or wait_s passes; exits 2 if it never does."""
    deadline = time.monotonic() + wait_s
    last = None
    while True:
        try:
            c = t.conn(5)
            c.request("GET", t.base + "/health")
            r = c.getresponse()
            body = r.read().decode("utf-8", "replace")
            c.close()
            if r.status == 200:
                return body
            last = f"/health answered HTTP {r.status}: {body[:200]}"
        except (OSError, http.client.HTTPException) as e:
            last = f"cannot reach {t}: {e.__class__.__name__}: {e}"
        if time.monotonic() >= deadline:
            print(f"concurrent-decode: the server is not up: {last}", file=sys.stderr)
            sys.exit(2)
        time.sleep(0.5)


class Result:
    __slots__ = ("prompt", "t_send", "t_first", "t_end", "chunks", "usage_tokens", "text", "finish", "error")

    def __init__(self, prompt):
        self.prompt = prompt
        self.t_send = self.t_first = self.t_end = None
        self.chunks = 0
        self.usage_tokens = None
        self.text = ""
        self.finish = None
        self.error = None

    @property
    def tokens(self):
        return self.usage_tokens if self.usage_tokens is not None else self.chunks


def chunk_text(obj):
    """The text a streamed chunk carries: completions, chat deltas, or llama.cpp's native 'content'."""
    ch = obj.get("choices")
    if isinstance(ch, list) and ch:
        c0 = ch[0] if isinstance(ch[0], dict) else {}
        if isinstance(c0.get("text"), str):
            return c0["text"], c0.get("finish_reason")
        d = c0.get("delta")
        if isinstance(d, dict) and isinstance(d.get("content"), str):
            return d["content"], c0.get("finish_reason")
        return "", c0.get("finish_reason")
    if isinstance(obj.get("content"), str):
        return obj["content"], obj.get("stop_type") if obj.get("stop") else None
    return "", None


def run_request(t, body_base, res, barrier, timeout_s):
    body = dict(body_base)
    body["prompt"] = res.prompt
    data = json.dumps(body).encode()
    c = None
    try:
        c = t.conn(timeout_s)  # per-socket-operation timeout
        c.connect()
        barrier.wait()
        deadline = time.monotonic() + timeout_s
        res.t_send = time.monotonic()
        c.request("POST", t.base + "/v1/completions", body=data,
                  headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
        r = c.getresponse()
        if r.status != 200:
            res.error = f"HTTP {r.status}: {r.read(500).decode('utf-8', 'replace')}"
            return
        parts = []
        while True:
            if time.monotonic() > deadline:
                res.error = f"timed out after {timeout_s:.0f} s"
                return
            line = r.readline()
            if not line:
                break
            line = line.strip()
            if not line or line.startswith(b":"):
                continue
            if line.startswith(b"error:"):
                res.error = "stream error: " + line[6:].decode("utf-8", "replace").strip()[:300]
                return
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                break
            try:
                obj = json.loads(payload)
            except ValueError:
                res.error = f"bad SSE JSON: {payload[:200]!r}"
                return
            if not isinstance(obj, dict):
                continue
            if "error" in obj:
                res.error = "stream error: " + json.dumps(obj["error"])[:300]
                return
            text, fin = chunk_text(obj)
            if text:
                if res.t_first is None:
                    res.t_first = time.monotonic()
                res.chunks += 1
                parts.append(text)
            if fin:
                res.finish = fin
            u = obj.get("usage")
            if isinstance(u, dict) and isinstance(u.get("completion_tokens"), int):
                res.usage_tokens = u["completion_tokens"]
            elif isinstance(obj.get("tokens_predicted"), int) and obj.get("stop"):
                res.usage_tokens = obj["tokens_predicted"]  # llama.cpp native /completion
        res.t_end = time.monotonic()
        res.text = "".join(parts)
        if res.t_first is None:
            res.error = "the stream carried no text"
    except threading.BrokenBarrierError:
        res.error = "another client failed to connect"
    except (OSError, http.client.HTTPException) as e:
        res.error = f"{e.__class__.__name__}: {e}"
        try:
            barrier.abort()
        except Exception:
            pass
    finally:
        if c is not None:
            c.close()


def run_round(t, n, prompts, body_base, timeout_s):
    results = [Result(prompts[i % len(prompts)]) for i in range(n)]
    barrier = threading.Barrier(n + 1, timeout=30)
    threads = [threading.Thread(target=run_request, args=(t, body_base, results[i], barrier, timeout_s), daemon=True)
               for i in range(n)]
    for th in threads:
        th.start()
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass
    t0 = time.monotonic()
    for th in threads:
        th.join(timeout_s + 30)
    for r, th in zip(results, threads):
        if th.is_alive() and not r.error:
            r.error = "client thread did not finish"
    return t0, results


def summarize_round(t0, results):
    ok = [r for r in results if not r.error]
    if not ok:
        return None
    wall = max(r.t_end for r in ok) - t0
    ttfts = [r.t_first - r.t_send for r in ok]
    tokens = sum(r.tokens for r in ok)
    med = statistics.median(ttfts)
    decode_wall = wall - med
    per_req = [(r.tokens - 1) / (r.t_end - r.t_first) for r in ok if r.tokens > 1 and r.t_end > r.t_first]
    return {
        "wall_s": wall,
        "tokens": tokens,
        "ttfts": ttfts,
        "agg_tok_s": tokens / decode_wall if decode_wall > 0 else float("nan"),
        "e2e_tok_s": tokens / wall if wall > 0 else float("nan"),
        "per_req_tok_s": statistics.mean(per_req) if per_req else float("nan"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="Definitions: see the header comment of this script.")
    ap.add_argument("--url", default="http://127.0.0.1:8080", help="server base URL (default %(default)s)")
    ap.add_argument("--clients", type=int, nargs="+", default=[1], help="concurrent clients; several values run in turn")
    ap.add_argument("--max-tokens", type=int, default=64, help="tokens to generate per request (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per client count (default %(default)s)")
    ap.add_argument("--prompts-file", help="prompts, one per line (default: a built-in set of 8)")
    ap.add_argument("--distinct", type=int, default=0, help="use only the first K prompts (0: all)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds one request may take (default %(default)s)")
    ap.add_argument("--wait-health", type=float, default=0, help="seconds to wait for /health to answer 200 (default 0)")
    ap.add_argument("--warmup", type=int, default=8, help="tokens of one warm-up request before measuring (0: none)")
    ap.add_argument("--no-ignore-eos", action="store_true", help="do not send ignore_eos")
    ap.add_argument("--no-cache-prompt", action="store_true", help="send cache_prompt: false (llama-server)")
    ap.add_argument("--label", default="", help="engine label written into the JSON lines")
    ap.add_argument("--json-out", help="append the JSON lines to this file")
    ap.add_argument("--check-serial", action="store_true",
                    help="after each N's rounds, send each prompt once alone and compare (same_as_serial)")
    ap.add_argument("--show-text", action="store_true", help="print each distinct reply")
    a = ap.parse_args()

    if a.max_tokens < 1 or a.rounds < 1 or any(n < 1 for n in a.clients):
        ap.error("--max-tokens, --rounds and --clients must be positive")
    if a.prompts_file:
        with open(a.prompts_file, encoding="utf-8") as f:
            prompts = [ln.rstrip("\n") for ln in f if ln.strip()]
        if not prompts:
            ap.error(f"{a.prompts_file} holds no prompts")
    else:
        prompts = list(DEFAULT_PROMPTS)
    if a.distinct > 0:
        prompts = prompts[:a.distinct]

    t = Target(a.url)
    health = check_health(t, a.wait_health)
    model = ""
    try:
        c = t.conn(10)
        c.request("GET", t.base + "/v1/models")
        r = c.getresponse()
        if r.status == 200:
            d = json.loads(r.read())
            model = d["data"][0]["id"] if d.get("data") else ""
        c.close()
    except Exception:
        pass
    print(f"# server {t} model {model!r} health {health.strip()[:120]}")

    body_base = {"max_tokens": a.max_tokens, "n_predict": a.max_tokens, "temperature": 0, "stream": True,
                 "stream_options": {"include_usage": True}}
    if not a.no_ignore_eos:
        body_base["ignore_eos"] = True
    if a.no_cache_prompt:
        body_base["cache_prompt"] = False

    if a.warmup > 0:
        wb = dict(body_base, max_tokens=a.warmup, n_predict=a.warmup)
        _, wr = run_round(t, 1, prompts, wb, a.timeout)
        if wr[0].error:
            print(f"concurrent-decode: warm-up request failed: {wr[0].error}", file=sys.stderr)
            sys.exit(1)

    failed = False
    first_n_reply = {}  # prompt -> text at the first N
    for n in a.clients:
        rounds = []
        replies = {}  # prompt -> set of texts
        errors = []
        short = 0
        finishes = {}
        for _ in range(a.rounds):
            t0, results = run_round(t, n, prompts, body_base, a.timeout)
            for r in results:
                if r.error:
                    errors.append(r.error)
                    continue
                replies.setdefault(r.prompt, []).append(r.text)
                finishes[r.finish or "?"] = finishes.get(r.finish or "?", 0) + 1
                if r.tokens < a.max_tokens:
                    short += 1
            s = summarize_round(t0, results)
            if s:
                rounds.append(s)
        if errors:
            failed = True
        identical = all(len(set(v)) == 1 for v in replies.values())
        if not first_n_reply:
            first_n_reply = {p: v[0] for p, v in replies.items()}
        same_first = all(first_n_reply.get(p, v[0]) == v[0] for p, v in replies.items())
        same_serial = None
        if a.check_serial:
            # Each prompt of this N once more, alone: what the concurrent replies should equal
            # on an engine whose batched decode matches its one-sequence decode.
            same_serial = True
            for p, v in replies.items():
                _, sr = run_round(t, 1, [p], body_base, a.timeout)
                if sr[0].error:
                    errors.append("serial check: " + sr[0].error)
                    same_serial = False
                elif any(x != sr[0].text for x in v):
                    same_serial = False
                    if a.show_text or identical:
                        print(f"   [{p[:30]!r} alone] {sr[0].text[:160]!r}")
                    replies[p].append(sr[0].text)
            failed = failed or bool(errors)
        ttfts = [x for s in rounds for x in s["ttfts"]]
        med = lambda key: statistics.median([s[key] for s in rounds]) if rounds else float("nan")
        rec = {
            "engine": a.label, "url": str(t), "model": model, "clients": n, "max_tokens": a.max_tokens,
            "rounds": a.rounds, "prompts": len(prompts),
            "agg_tok_s": round(med("agg_tok_s"), 3),
            "agg_tok_s_rounds": [round(s["agg_tok_s"], 3) for s in rounds],
            "e2e_tok_s": round(med("e2e_tok_s"), 3),
            "per_req_tok_s": round(med("per_req_tok_s"), 3),
            "ttft_p50_ms": round(percentile(ttfts, 50) * 1000, 1) if ttfts else None,
            "ttft_p99_ms": round(percentile(ttfts, 99) * 1000, 1) if ttfts else None,
            "wall_s_median": round(med("wall_s"), 3),
            "tokens_per_round": [s["tokens"] for s in rounds],
            "identical": identical, "same_as_first_n": same_first, "same_as_serial": same_serial,
            "reply_sha1": [hashlib.sha1(replies[p][0].encode()).hexdigest()[:12] if p in replies else None
                           for p in prompts],
            "short_replies": short, "finish": finishes,
            "errors": len(errors),
        }
        print(f"## N={n}: agg {rec['agg_tok_s']:.2f} tok/s (rounds {rec['agg_tok_s_rounds']}), "
              f"e2e {rec['e2e_tok_s']:.2f} tok/s, per-client {rec['per_req_tok_s']:.2f} tok/s, "
              f"TTFT p50 {rec['ttft_p50_ms']} ms p99 {rec['ttft_p99_ms']} ms, "
              f"wall {rec['wall_s_median']:.2f} s, tokens/round {rec['tokens_per_round']}, "
              f"identical replies per prompt: {identical}, same as N={a.clients[0]}: {same_first}, "
              f"same as alone: {'not checked' if same_serial is None else same_serial}, "
              f"short {short}, errors {len(errors)}")
        for e in sorted(set(errors))[:5]:
            print(f"   error: {e}")
        if a.show_text or not identical:
            for p, v in replies.items():
                for i, txt in enumerate(dict.fromkeys(v)):
                    print(f"   [{p[:30]!r} variant {i} x{v.count(txt)}] {txt[:160]!r}")
        line = json.dumps(rec)
        print(line, flush=True)
        if a.json_out:
            with open(a.json_out, "a", encoding="utf-8") as f:
                f.write(line + "\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
