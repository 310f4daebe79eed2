// Seeds for fuzz_gguf: gguf_corpus_dump DIR [MODEL.gguf ...]
// Writes the malformed-GGUF test corpus (tests/gguf_corpus.cpp) into DIR, and
// for each MODEL a shrunk but valid copy (arrays cut to 32 items, tensors kept
// while their data stays under 16 KiB) that fits within the fuzzer's -max_len
// yet keeps the file's real structure.
#include <cstdio>
#include <exception>
#include <filesystem>

#include "format/gguf.h"
#include "tests/gguf_corpus.h"

using namespace edgellm::gguf;

static Value shrink(Value v) {
  if (v.str.size() > 256) v.str.resize(256);
  if (v.arr.size() > 32) v.arr.resize(32);
  for (Value& e : v.arr) e = shrink(std::move(e));
  return v;
}

static void write_shrunk(const std::string& model, const std::string& dir) {
  const auto f = File::open(model);
  Writer w(f->alignment());
  for (const auto& [k, v] : f->metadata()) w.set(k, shrink(v));
  size_t data = 0;
  for (const auto& t : f->tensors()) {
    if (data + t.nbytes > 16384) continue;
    data += t.nbytes;
    w.add_tensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + t.n_dims), t.data, t.nbytes);
  }
  w.write(dir + "/shrunk-" + std::filesystem::path(model).filename().string());
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [MODEL.gguf ...]\n", argv[0]);
    return 2;
  }
  try {
    std::filesystem::create_directories(argv[1]);
    size_t n = edgellm::test::write_gguf_corpus(argv[1]);
    for (int k = 2; k < argc; ++k, ++n) write_shrunk(argv[k], argv[1]);
    std::printf("wrote %zu files to %s\n", n, argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
