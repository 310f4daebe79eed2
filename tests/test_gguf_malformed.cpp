// The GGUF reader on hostile input: every case of the malformed corpus
// (tests/gguf_corpus.cpp) must be rejected with an edgellm::Error whose message
// names the problem, and `edgellm inspect` must turn it into one line on
// stderr and exit status 1.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>

#include "base/error.h"
#include "format/gguf.h"
#include "tests/gguf_corpus.h"
#include "tests/run_cli.h"

namespace edgellm::test {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "edgellm_corpus_XXXXXX").string();
    path = mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

// Parses a copy in a buffer of exactly the input's size, so that a sanitizer
// build catches any read past the end. Returns the error message, or "" if
// the input was accepted.
std::string parse_error(const std::vector<uint8_t>& bytes) {
  std::unique_ptr<uint8_t[]> buf(new uint8_t[bytes.size()]);
  if (!bytes.empty()) std::memcpy(buf.get(), bytes.data(), bytes.size());
  try {
    gguf::File::parse(buf.get(), bytes.size(), "corpus");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(GgufMalformed, TheBaseFileIsValid) {
  const auto valid = valid_small_gguf();
  EXPECT_EQ(parse_error(valid), "");
  // Only trailing padding follows the last tensor: without it the file is fine.
  const size_t need = valid_small_gguf_min_size();
  ASSERT_LT(need, valid.size());
  EXPECT_EQ(parse_error({valid.begin(), valid.begin() + need}), "");
}

TEST(GgufMalformed, CorpusCoversEveryKindOfDamage) {
  std::set<std::string> names;
  size_t truncated = 0;
  for (const auto& c : malformed_gguf_corpus()) {
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case name " << c.name;
    truncated += c.name.rfind("truncated_", 0) == 0;
  }
  EXPECT_EQ(truncated, valid_small_gguf_min_size());
  for (const char* n :
       {"bad_magic", "version_0", "version_1", "version_4", "n_tensors_2p63", "n_kv_2p63",
        "string_len_max", "string_len_past_eof", "array_count_2p62", "array_nested_too_deep",
        "value_type_13", "array_elem_type_13", "duplicate_key", "alignment_0", "alignment_13",
        "alignment_2p31", "alignment_string", "alignment_uint64", "n_dims_0", "n_dims_5",
        "zero_dimension", "dims_product_overflow", "offset_past_eof", "offset_misaligned",
        "tensors_overlap", "duplicate_tensor_name", "type_99"})
    EXPECT_TRUE(names.count(n)) << "missing case " << n;
}

TEST(GgufMalformed, EveryCaseIsRejectedNamingTheProblem) {
  for (const auto& c : malformed_gguf_corpus()) {
    const std::string msg = parse_error(c.bytes);
    EXPECT_NE(msg, "") << c.name << ": accepted";
    EXPECT_NE(msg.find(c.keyword), std::string::npos)
        << c.name << ": message '" << msg << "' lacks '" << c.keyword << "'";
    EXPECT_EQ(msg.find('\n'), std::string::npos) << c.name << ": message spans lines";
  }
}

TEST(GgufMalformed, OpenRejectsEveryCaseFromDisk) {
  TempDir dir;
  const auto corpus = malformed_gguf_corpus();
  ASSERT_EQ(write_gguf_corpus(dir.path.string()), corpus.size() + 1);
  EXPECT_NO_THROW(gguf::File::open((dir.path / "valid.gguf").string()));
  for (const auto& c : corpus) {
    const std::string path = (dir.path / (c.name + ".gguf")).string();
    try {
      gguf::File::open(path);
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(path, 0), 0u) << c.name << ": message does not name the file: " << msg;
      EXPECT_NE(msg.find(c.keyword), std::string::npos) << c.name << ": " << msg;
    }
  }
}

const std::string kStories = std::string(EDGELLM_SHARED_DIR) + "/testdata/models/stories260K.gguf";

bool cli_has_inspect() {
  static const bool ok = run_command({EDGELLM_CLI, "inspect", kStories}).exited_with(0);
  return ok;
}

TEST(GgufMalformedCli, InspectFailsWithOneErrorLine) {
  if (!cli_has_inspect()) GTEST_SKIP() << "`edgellm inspect` is not available yet";
  TempDir dir;
  write_gguf_corpus(dir.path.string());
  for (const auto& c : malformed_gguf_corpus()) {
    // Starting a process is slow; the in-process test above already covers
    // every truncation point, so here every 8th one is enough.
    const bool truncation = c.name.rfind("truncated_", 0) == 0;
    if (truncation && c.bytes.size() > 32 && c.bytes.size() % 8 != 0) continue;
    const std::string path = (dir.path / (c.name + ".gguf")).string();
    const RunResult r = run_command({EDGELLM_CLI, "inspect", path});
    EXPECT_TRUE(r.exited_with(1)) << c.name << ": " << r.describe();
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << c.name << ": " << r.describe();
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.name << ": " << r.describe();
    EXPECT_TRUE(!r.err.empty() && r.err.back() == '\n') << c.name << ": " << r.describe();
    EXPECT_NE(r.err.find(c.keyword), std::string::npos) << c.name << ": " << r.describe();
  }
}

}  // namespace
}  // namespace edgellm::test
