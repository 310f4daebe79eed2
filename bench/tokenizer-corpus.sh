#!/usr/bin/env bash
# Builds the two 1 MB tokenizer benchmark texts from files every Debian system
# has, so nothing is downloaded:
#   en.txt  English prose: the licence texts in /usr/share/common-licenses
#   zh.txt  Chinese: the translated messages (msgstr) of the zh_CN gettext
#           catalogues in /usr/share/locale/zh_CN/LC_MESSAGES
# Each is the concatenation, repeated until 1,000,000 bytes and cut at a
# character boundary. The set of installed packages decides the exact text,
# so the bench script prints each file's sha256 next to the numbers.
#   bench/tokenizer-corpus.sh OUT_DIR
set -euo pipefail
out=${1:?usage: bench/tokenizer-corpus.sh OUT_DIR}
mkdir -p "$out"
python3 - "$out" <<'PY'
import glob, os, struct, sys
out = sys.argv[1]
SIZE = 1_000_000

def fill(parts, path):
    text = "\n".join(p for p in parts if p.strip())
    if not text:
        sys.exit(f"tokenizer-corpus: no source text for {path}")
    data = text.encode("utf-8")
    while len(data) < SIZE:
        data += b"\n" + text.encode("utf-8")
    data = data[:SIZE]
    while data and (data[-1] & 0xC0) == 0x80:  # do not end inside a character
        data = data[:-1]
    if data and data[-1] >= 0xC0:
        data = data[:-1]
    with open(path, "wb") as f:
        f.write(data)

def mo_strings(path):
    """msgstr texts of a GNU .mo catalogue (format: magic, revision, N, offsets)."""
    b = open(path, "rb").read()
    if len(b) < 28:
        return []
    magic = struct.unpack("<I", b[:4])[0]
    end = "<" if magic == 0x950412DE else ">"
    n, _, trans = struct.unpack(end + "III", b[8:20])
    res = []
    for i in range(1, n):  # entry 0 is the catalogue header
        ln, off = struct.unpack(end + "II", b[trans + 8 * i: trans + 8 * i + 8])
        s = b[off: off + ln].split(b"\0")[0].decode("utf-8", "ignore")
        if any("\u4e00" <= c <= "\u9fff" for c in s):
            res.append(s)
    return res

en = [open(p, encoding="utf-8", errors="ignore").read()
      for p in sorted(glob.glob("/usr/share/common-licenses/*")) if os.path.isfile(p)]
fill(en, os.path.join(out, "en.txt"))
zh = []
for p in sorted(glob.glob("/usr/share/locale/zh_CN/LC_MESSAGES/*.mo")):
    zh += mo_strings(p)
fill(zh, os.path.join(out, "zh.txt"))
PY
ls -l "$out"/en.txt "$out"/zh.txt
