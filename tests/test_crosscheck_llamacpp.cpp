// Cross-engine acceptance against llama.cpp: runs bench/crosscheck-llamacpp.sh
// --quick --arch A for A in llama, qwen2, qwen3, smollm3, gemma2, gemma3, phi3 (tiny
// models, 32k SPM vocab; --no-repack: llama.cpp's AMX kernels die of SIGILL on
// hosts that report AMX without granting it;
// our synth f32/f16/q8_0/q4_0/q4_k_m files in llama-completion; llama-quantize's
// Q4_0 Q8_0 Q4_K_M Q5_K_M Q6_K Q2_K Q3_K_M files in edgellm; per-position
// logits and greedy-32 compared; thresholds in the script's header; results
// in CROSSCHECK.md). Skipped when the llama.cpp anchor
// (/work/shared/anchor/llamacpp.sh build) is not built. Built only with
// -DEDGELLM_CROSSCHECK_TEST=ON (tests/CMakeLists.txt): 1-2 CPU-minutes per arch.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/run_cli.h"

namespace fs = std::filesystem;
using edgellm::test::run_command;

namespace {

fs::path anchor_bin() {
  const char* dir = std::getenv("EDGELLM_ANCHOR_DIR");
  const char* home = std::getenv("HOME");
  const fs::path base = dir && *dir ? fs::path(dir) : fs::path(home ? home : "/") / ".cache" / "edgellm-anchor";
  return base / "llama.cpp" / "build" / "bin";
}

// The repository root: this file lives in <root>/tests/.
fs::path repo_root() { return fs::path(__FILE__).parent_path().parent_path(); }

}  // namespace

class CrosscheckLlamaCpp : public ::testing::TestWithParam<const char*> {};

// One architecture per test (each well inside ctest's 600 s limit): 12 files,
// each compared in both precision set-ups.
TEST_P(CrosscheckLlamaCpp, TinyModelAllTypesAgreeWithLlamaCpp) {
  const fs::path bin = anchor_bin();
  if (!fs::exists(bin / "llama-quantize") || !fs::exists(bin / "llama-completion") ||
      !fs::exists(bin / "libllama.so"))
    GTEST_SKIP() << "llama.cpp anchor not built at " << bin.string()
                 << " (run /work/shared/anchor/llamacpp.sh build, or set EDGELLM_ANCHOR_DIR)";
  const fs::path script = repo_root() / "bench" / "crosscheck-llamacpp.sh";
  if (!fs::exists(script)) GTEST_SKIP() << script.string() << " not found (source tree moved?)";

  // EDGELLM / EDGELLM_SHARED_DIR tell the script which binary and fixtures to use.
  const auto r = run_command({"/usr/bin/env", std::string("EDGELLM=") + EDGELLM_CLI,
                              std::string("EDGELLM_SHARED_DIR=") + EDGELLM_SHARED_DIR, "bash", script.string(),
                              "--quick", "--no-repack", "--arch", GetParam()},
                             "", 580);
  if (r.exited_with(77)) GTEST_SKIP() << r.out;
  EXPECT_TRUE(r.exited_with(0)) << r.describe();
  // The summary table lists every file: 4 synth types (and f32 on the 2-layer
  // tiny shape) + 7 llama-quantize types.
  size_t rows = 0;
  for (size_t at = r.out.find("\n| "); at != std::string::npos; at = r.out.find("\n| ", at + 1)) ++rows;
  const std::string arch = GetParam();
  // phi3: two shapes (tiny-phi3, tiny-phi4), 11 files each.
  const size_t files = arch == "phi3" ? 22u : arch == "smollm3" || arch == "gemma3" ? 11u : 12u;
  EXPECT_EQ(rows, 1u + files) << r.out;  // header + the files
}

INSTANTIATE_TEST_SUITE_P(Archs, CrosscheckLlamaCpp, ::testing::Values("llama", "qwen2", "qwen3", "smollm3", "gemma2", "gemma3", "phi3"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });
