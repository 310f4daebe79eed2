// Several C API contexts on one model, generating at once from their own
// threads: each gives exactly the tokens it gives alone (greedy, and seeded
// sampling), and cancelling one never disturbs the other. Each context has
// its own executor (thread pool, buffers) over the model's shared weights.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "edgellm/edgellm.h"
#include "test_models.h"

namespace {

struct Model {
  edgellm_model* m = nullptr;
  explicit Model(const std::string& path) {
    edgellm_model_options mo;
    edgellm_model_options_init(&mo);
    mo.n_threads = 1;
    EXPECT_EQ(edgellm_model_load(path.c_str(), &mo, &m), EDGELLM_OK) << edgellm_last_error(nullptr);
  }
  ~Model() { EXPECT_EQ(edgellm_model_free(m), EDGELLM_OK); }
  edgellm_context* context() {
    edgellm_context_options co;
    edgellm_context_options_init(&co);
    co.n_ctx = 256;
    edgellm_context* c = nullptr;
    EXPECT_EQ(edgellm_context_create(m, &co, &c), EDGELLM_OK) << edgellm_last_error(m);
    return c;
  }
};

struct Run {
  std::vector<int32_t> ids;
  std::atomic<int>* stop_after = nullptr;  // cancel from inside after this many
  static int32_t on_token(int32_t id, const char*, int32_t, void* user) {
    auto* r = static_cast<Run*>(user);
    r->ids.push_back(id);
    return 0;
  }
};

std::vector<int32_t> generate(edgellm_context* c, const std::vector<int32_t>& prompt, float temp, uint64_t seed, int n) {
  EXPECT_EQ(edgellm_reset(c), EDGELLM_OK);
  EXPECT_EQ(edgellm_prefill(c, prompt.data(), int32_t(prompt.size())), EDGELLM_OK) << edgellm_last_error(c);
  edgellm_sampling s;
  edgellm_sampling_init(&s);
  s.temperature = temp;
  s.seed = seed;
  s.n_predict = n;
  Run r;
  EXPECT_EQ(edgellm_generate(c, &s, Run::on_token, &r, nullptr), EDGELLM_OK) << edgellm_last_error(c);
  return r.ids;
}

void expect_two_contexts_equal_alone(const std::string& path) {
  Model m(path);
  edgellm_context* a = m.context();
  edgellm_context* b = m.context();
  const std::vector<int32_t> pa = {1, 34, 56, 78, 90}, pb = {1, 200, 3, 3, 41, 17, 9};
  for (const float temp : {0.0f, 0.9f}) {
    const std::vector<int32_t> wa = generate(a, pa, temp, 11, 60), wb = generate(b, pb, temp, 12, 60);
    for (int round = 0; round < 3; ++round) {
      std::vector<int32_t> ga, gb;
      std::thread ta([&] { ga = generate(a, pa, temp, 11, 60); });
      std::thread tb([&] { gb = generate(b, pb, temp, 12, 60); });
      ta.join();
      tb.join();
      EXPECT_EQ(ga, wa) << path << " temp " << temp << " round " << round;
      EXPECT_EQ(gb, wb) << path << " temp " << temp << " round " << round;
    }
  }
  EXPECT_EQ(edgellm_context_free(a), EDGELLM_OK);
  EXPECT_EQ(edgellm_context_free(b), EDGELLM_OK);
}

TEST(CApiConcurrency, TwoContextsOnOneModelEqualAloneStories260K) {
  expect_two_contexts_equal_alone(edgellm::test::stories260k());
}
TEST(CApiConcurrency, TwoContextsOnOneModelEqualAloneLlamaQ4_0) {
  expect_two_contexts_equal_alone(edgellm::test::synth_tiny("llama", "q4_0"));
}
TEST(CApiConcurrency, TwoContextsOnOneModelEqualAloneGemma3) {
  expect_two_contexts_equal_alone(edgellm::test::synth_tiny("gemma3", "f16"));
}
TEST(CApiConcurrency, TwoContextsOnOneModelEqualAlonePhi3) {
  expect_two_contexts_equal_alone(edgellm::test::synth_tiny("phi3", "q4_k_m"));
}

// Cancelling one context (edgellm_cancel from a third thread) while both
// generate: the cancelled one stops with EDGELLM_STOP_CANCELLED, the other
// runs to its end with exactly its tokens alone.
TEST(CApiConcurrency, CancellingOneLeavesTheOtherAlone) {
  Model m(edgellm::test::stories260k());
  edgellm_context* a = m.context();
  edgellm_context* b = m.context();
  const std::vector<int32_t> pa = {1, 34, 56}, pb = {1, 200, 3, 41};
  const std::vector<int32_t> wb = generate(b, pb, 0, 0, 200);
  for (int round = 0; round < 3; ++round) {
    std::vector<int32_t> gb;
    edgellm_generate_result ra;
    edgellm_generate_result_init(&ra);
    std::atomic<bool> a_started{false};
    std::thread ta([&] {
      EXPECT_EQ(edgellm_reset(a), EDGELLM_OK);
      EXPECT_EQ(edgellm_prefill(a, pa.data(), int32_t(pa.size())), EDGELLM_OK);
      edgellm_sampling s;
      edgellm_sampling_init(&s);
      s.temperature = 0;
      s.n_predict = -1;  // until cancelled or the context is full
      auto cb = [](int32_t, const char*, int32_t, void* u) -> int32_t {
        static_cast<std::atomic<bool>*>(u)->store(true);
        return 0;
      };
      EXPECT_EQ(edgellm_generate(a, &s, cb, &a_started, &ra), EDGELLM_OK) << edgellm_last_error(a);
    });
    std::thread tb([&] { gb = generate(b, pb, 0, 0, 200); });
    while (!a_started.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(edgellm_cancel(a), EDGELLM_OK);
    ta.join();
    tb.join();
    EXPECT_TRUE(ra.stop_reason == EDGELLM_STOP_CANCELLED || ra.stop_reason == EDGELLM_STOP_CONTEXT_FULL ||
                ra.stop_reason == EDGELLM_STOP_EOG)
        << ra.stop_reason;
    EXPECT_EQ(gb, wb) << "round " << round;
  }
  EXPECT_EQ(edgellm_context_free(a), EDGELLM_OK);
  EXPECT_EQ(edgellm_context_free(b), EDGELLM_OK);
}

}  // namespace
