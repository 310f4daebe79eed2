// The stories260K golden test: greedy decoding from BOS must reproduce the
// token ids documented in shared/testdata/models/PROVENANCE.md.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "model/model.h"
#include "run_cli.h"
#include "runtime/generate.h"
#include "test_models.h"
#include "tokenizer/tokenizer.h"

namespace edgellm {
namespace {

std::vector<int32_t> golden_ids() {
  std::ifstream f(test::shared_dir() + "/testdata/models/PROVENANCE.md");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  const size_t at = doc.find("The 256 greedy token ids after BOS are:");
  const size_t start = doc.find("```", at) + 3, end = doc.find("```", start);
  std::vector<int32_t> ids;
  const std::string block = doc.substr(start, end - start);
  std::regex num("[0-9]+");
  for (auto it = std::sregex_iterator(block.begin(), block.end(), num); it != std::sregex_iterator(); ++it)
    ids.push_back(std::stoi(it->str()));
  return ids;
}

std::vector<int32_t> greedy(const Model& m, int64_t n, int threads, int64_t batch = 512) {
  SessionConfig cfg;
  cfg.n_threads = threads;
  cfg.n_ctx = 512;
  cfg.n_batch = batch;
  Session s(m, cfg);
  SamplerParams sp;
  sp.temp = 0;
  Sampler sampler(sp, int32_t(m.hparams().n_vocab));
  GenerateParams gp;
  gp.n_predict = n;
  std::vector<int32_t> out;
  generate(s, sampler, {1}, gp, [&](int32_t id) {
    out.push_back(id);
    return true;
  });
  return out;
}

TEST(Golden, Stories260kGreedyIdsMatchProvenance) {
  const std::vector<int32_t> golden = golden_ids();
  ASSERT_EQ(golden.size(), 256u);
  auto m = Model::load(test::stories260k());
  for (int threads : {1, 2}) {
    const std::vector<int32_t> got = greedy(*m, 256, threads);
    ASSERT_EQ(got.size(), 256u);
    size_t same = 0;
    while (same < got.size() && got[same] == golden[same]) ++same;
    EXPECT_GE(same, 200u) << "first divergence at step " << same << " with " << threads << " threads";
  }
}

TEST(Golden, Stories260kCliTextStartsAsDocumented) {
  const auto r = test::run_command({EDGELLM_CLI, "run", "-m", test::stories260k(), "-p", "", "-n", "256", "--temp", "0"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(r.out.rfind("Once upon a time, there was a little girl named Lily. She loved to play outside in the park.", 0), 0u)
      << r.out;
  EXPECT_NE(r.err.find("timings:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("peak RSS"), std::string::npos) << r.err;
}

TEST(Golden, CliIdsModeMatchesGolden) {
  const auto r = test::run_command({EDGELLM_CLI, "run", "-m", test::stories260k(), "--tokens", "1", "-n", "64",
                                    "--temp", "0", "--ids"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  const std::vector<int32_t> golden = golden_ids();
  std::string expect;
  for (int i = 0; i < 64; ++i) {
    if (i) expect += ",";
    expect += std::to_string(golden[size_t(i)]);
  }
  EXPECT_EQ(r.out.substr(0, expect.size()), expect);
}

}  // namespace
}  // namespace edgellm
