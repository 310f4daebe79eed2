// libFuzzer target for the tokenizers: random bytes -> encode -> decode with
// every vocabulary of ../shared/testdata/vocab (BPE with each pre-tokenizer,
// SPM, WordPiece). The first input byte picks the vocabulary, the second the
// flags (add_bos, parse_special), the rest is the text. Must hold for every
// input: encoding succeeds or throws edgellm::Error, every id is inside the
// vocabulary, decoding succeeds, and for BPE (byte-level, or Gemma 4's with
// byte fallback) on ASCII text the vocabulary can spell byte by byte (no
// control-token parsing, no BOS) decode(encode(text)) == text.
// Crashes, sanitizer reports, leaks and hangs are findings too.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "format/gguf.h"
#include "tokenizer/tokenizer.h"

using namespace edgellm;

namespace {

struct Loaded {
  std::unique_ptr<gguf::File> file;
  std::unique_ptr<Tokenizer> tok;
  // ASCII bytes this vocabulary can spell: byte-level BPE drops a byte whose
  // token the vocabulary lacks (falcon has none for 0x1C), as llama.cpp does.
  bool ascii_ok[128] = {};
};

std::vector<Loaded> load_all() {
  const char* env = std::getenv("EDGELLM_VOCAB_DIR");
  const std::string dir = env ? env : std::string(EDGELLM_SHARED_DIR) + "/testdata/vocab";
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".gguf") == 0) names.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());  // byte 0 of an input names the same file on every run
  std::vector<Loaded> out;
  for (const std::string& path : names) {
    Loaded l;
    l.file = gguf::File::open(path);
    try {
      l.tok = make_tokenizer(*l.file);
    } catch (const Error& e) {  // a family not supported yet: fuzz the others
      std::fprintf(stderr, "fuzz_tokenizer: skipping %s\n", e.what());
      continue;
    }
    for (int c = 0; c < 128; ++c) {
      const std::string one(1, char(c));
      l.ascii_ok[c] = detokenize(*l.tok, l.tok->encode(one, false, false)) == one;
    }
    out.push_back(std::move(l));
  }
  if (out.empty()) {
    std::fprintf(stderr, "fuzz_tokenizer: no vocabularies in %s (set EDGELLM_VOCAB_DIR)\n", dir.c_str());
    std::abort();
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<Loaded> vocabs = load_all();
  if (size < 2) return 0;
  const Loaded& v = vocabs[data[0] % vocabs.size()];
  const Tokenizer& tok = *v.tok;
  const bool add_bos = data[1] & 1, parse_special = data[1] & 2;
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  std::vector<int32_t> ids;
  try {
    ids = tok.encode(text, add_bos, parse_special);
  } catch (const Error&) {
    return 0;
  }
  const int64_t n_vocab = int64_t(tok.vocab().tokens.size());
  for (int32_t id : ids)
    if (id < 0 || id >= n_vocab) __builtin_trap();
  const std::string back = detokenize(tok, ids);
  // BPE round trip, on text every byte of which the vocabulary can spell.
  bool spellable = (tok.vocab().model == "gpt2" || tok.vocab().model == "gemma4") && !add_bos && !parse_special;
  for (size_t i = 0; spellable && i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    spellable = c < 128 && v.ascii_ok[c];
  }
  if (spellable && back != text) __builtin_trap();
  return 0;
}
