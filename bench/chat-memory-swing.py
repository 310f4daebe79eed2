#!/usr/bin/env python3
"""Memory swing of one long chat session (issue 12 acceptance).

Runs `edgellm chat` over a pipe, sends TURNS user messages (each ~WORDS words)
so the one session accumulates ~3,200 tokens, samples the process's VmRSS and
RssAnon from /proc/PID/status every 20 ms, and prints per turn the context and
the memory, and at the end the swing (max - min) after the first turn.

usage: bench/chat-memory-swing.py EDGELLM MODEL [extra chat flags...]
"""
import random, subprocess, sys, threading, time

def status(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "RssAnon", "RssFile"):
                    out[k] = int(v.split()[0]) * 1024
    except OSError:
        pass
    return out

def main():
    exe, model, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    turns, words = 8, 300
    rnd = random.Random(12)
    vocab = ("the a little girl boy dog cat went to park and saw big red ball happy sad tree house river sun "
             "moon played with friend mother father said one day time once upon there was very much").split()
    cmd = [exe, "chat", "-m", model, "--chat-template", "chatml", "-n", "96", "--temp", "0", "-c", "4096"] + extra
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    timings = []
    def read_err():
        for line in p.stderr:
            if line.startswith("timings:"):
                timings.append(line.strip())
    threading.Thread(target=read_err, daemon=True).start()
    threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()
    samples = []  # (turn_done_count, rss, anon)
    stop = False
    def sample():
        while not stop:
            s = status(p.pid)
            if s:
                samples.append((len(timings), s.get("VmRSS", 0), s.get("RssAnon", 0)))
            time.sleep(0.02)
    t = threading.Thread(target=sample, daemon=True)
    t.start()
    for i in range(turns):
        msg = " ".join(rnd.choice(vocab) for _ in range(words))
        p.stdin.write(msg + "\n")
        p.stdin.flush()
        while len(timings) <= i:
            if p.poll() is not None:
                sys.exit(f"chat ended early (exit {p.returncode}); timings so far: {timings}")
            time.sleep(0.05)
        print(timings[i])
    time.sleep(0.2)
    stop = True
    p.stdin.close()
    p.wait()
    after = [s for s in samples if s[0] >= 1]
    mib = 1048576.0
    rss = [s[1] for s in after]
    anon = [s[2] for s in after]
    print(f"after the first turn ({len(after)} samples): RSS {min(rss)/mib:.1f}..{max(rss)/mib:.1f} MiB "
          f"(swing {(max(rss)-min(rss))/mib:.1f}), anonymous {min(anon)/mib:.1f}..{max(anon)/mib:.1f} MiB "
          f"(swing {(max(anon)-min(anon))/mib:.1f})")

main()
