// A corpus of malformed GGUF files, for the reader's tests and to seed the
// fuzzer (fuzz/gguf_corpus_dump.cpp). Each case starts from a small valid file
// made with gguf::Writer and corrupts one thing.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace edgellm::test {

struct CorpusCase {
  std::string name;            // usable as a file name: "bad_magic", "truncated_0123"
  std::vector<uint8_t> bytes;
  std::string keyword;         // the reader's error message must contain this
};

// A small valid GGUF v3 file: every metadata value type, an array of strings,
// a nested array, and three tensors (f32, f16, q8_0) at alignment 32.
std::vector<uint8_t> valid_small_gguf();

// How many leading bytes of valid_small_gguf() a reader needs (the end of the
// last tensor's data; what follows is padding).
size_t valid_small_gguf_min_size();

// Every malformed case; File::parse must throw an edgellm::Error for each.
std::vector<CorpusCase> malformed_gguf_corpus();

// Writes valid_small_gguf() as "valid.gguf" and every case as "NAME.gguf" into
// `dir` (which must exist). Returns the number of files written.
size_t write_gguf_corpus(const std::string& dir);

}  // namespace edgellm::test
