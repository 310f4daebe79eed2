// The generation engine's scheduler: sequences batched into one forward
// pass give exactly the tokens each gives alone (greedy), on every layer
// kind (sliding window, fused phi3 projections, biases); a seeded sampled
// request is the same whatever runs beside it; a hostile request inside a
// batch disturbs nobody else.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "base/error.h"
#include "model/model.h"
#include "runtime/executor.h"
#include "runtime/memory_plan.h"
#include "runtime/scheduler.h"
#include "runtime/session.h"
#include "test_models.h"

namespace edgellm {
namespace {

constexpr int kSlots = 4;

struct Engine {
  std::unique_ptr<Model> model;
  std::unique_ptr<Executor> ex;
  std::unique_ptr<Scheduler> sched;
  std::vector<std::unique_ptr<Session>> sessions;

  // Small batches (8 tokens a pass) so that prompts are prefilled in several
  // chunks, interleaved with the others' decode steps.
  explicit Engine(const std::string& path, int64_t n_ctx = 160, int64_t n_batch = 8) {
    model = Model::load(path);
    PlanSettings ps;
    ps.n_ctx = n_ctx;
    ps.n_batch = n_batch;
    ps.n_seq = kSlots;
    ps.n_threads = 2;
    ex = std::make_unique<Executor>(*model, plan_memory(*model, ps));
    sched = std::make_unique<Scheduler>(*ex);
    for (int i = 0; i < kSlots; ++i) sessions.push_back(std::make_unique<Session>(*ex));
  }
  int32_t n_vocab() const { return int32_t(model->hparams().n_vocab); }
};

struct Job {
  std::vector<int32_t> prompt;
  int64_t max_tokens = 20;
  SamplerParams sampling;
};

GenerationRequest request(const Job& j) {
  GenerationRequest r;
  r.prompt = j.prompt;
  r.reuse_prefix = true;
  r.max_tokens = j.max_tokens;
  r.sampling = j.sampling;
  r.evaluate_last = false;
  return r;
}

SamplerParams greedy() {
  SamplerParams p;
  p.temp = 0;
  return p;
}

// Distinct prompts of lengths 1..50 (BOS first), seeded.
std::vector<Job> jobs(int n, int32_t n_vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Job> out;
  for (int i = 0; i < n; ++i) {
    Job j;
    const int len = 1 + int(rng() % 50);
    j.prompt.push_back(1);
    for (int t = 1; t < len; ++t) j.prompt.push_back(int32_t(3 + rng() % uint64_t(n_vocab - 3)));
    j.max_tokens = 8 + int64_t(rng() % 24);
    j.sampling = greedy();
    out.push_back(j);
  }
  return out;
}

std::vector<int32_t> alone(Engine& e, const Job& j) {
  Session& s = *e.sessions[0];
  s.truncate(0);
  return e.sched->run(s, request(j)).tokens;
}

// Runs the jobs from kSlots threads at once, each on its own session,
// taking the next job when its last one ends: more jobs than slots queue.
std::vector<std::vector<int32_t>> together(Engine& e, const std::vector<Job>& js) {
  std::vector<std::vector<int32_t>> out(js.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kSlots; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = next++; i < js.size(); i = next++) out[i] = e.sched->run(*e.sessions[size_t(t)], request(js[i])).tokens;
    });
  for (auto& th : threads) th.join();
  return out;
}

void expect_batched_equals_alone(const std::string& path) {
  Engine e(path);
  const std::vector<Job> js = jobs(2 * kSlots, e.n_vocab(), 11);
  std::vector<std::vector<int32_t>> want;
  for (const Job& j : js) want.push_back(alone(e, j));
  for (int round = 0; round < 2; ++round) {
    const Scheduler::Stats before = e.sched->stats();
    const auto got = together(e, js);
    const Scheduler::Stats after = e.sched->stats();
    // The sequences really shared passes: fewer passes than sequence-steps.
    EXPECT_GE(after.widest, 2);
    EXPECT_LT(after.passes - before.passes, after.parts - before.parts);
    for (size_t i = 0; i < js.size(); ++i) {
      EXPECT_EQ(got[i], want[i]) << path << ": job " << i << " (prompt of " << js[i].prompt.size() << ") round " << round;
      EXPECT_FALSE(want[i].empty());
    }
  }
}

TEST(Scheduler, BatchedEqualsAloneStories260K) { expect_batched_equals_alone(test::stories260k()); }
TEST(Scheduler, BatchedEqualsAloneLlamaQ4_0) { expect_batched_equals_alone(test::synth_tiny("llama", "q4_0")); }
TEST(Scheduler, BatchedEqualsAloneQwen2Q8_0) { expect_batched_equals_alone(test::synth_tiny("qwen2", "q8_0")); }
TEST(Scheduler, BatchedEqualsAloneGemma3SlidingWindow) { expect_batched_equals_alone(test::synth_tiny("gemma3", "f16")); }
TEST(Scheduler, BatchedEqualsAlonePhi3) { expect_batched_equals_alone(test::synth_tiny("phi3", "q4_k_m")); }
TEST(Scheduler, BatchedEqualsAloneGemma4SharedKv) { expect_batched_equals_alone(test::synth_tiny("gemma4", "f16")); }

// One pass over several caches is the same arithmetic as one pass each, up
// to the matrix kernels' blocking: logits agree closely.
TEST(Scheduler, ForwardBatchMatchesSeparatePasses) {
  Engine e(test::synth_tiny("qwen2", "f32"), 64, 16);
  const int32_t n_vocab = e.n_vocab();
  const std::vector<std::vector<int32_t>> prompts = {{1, 5, 9}, {1, 7}, {1, 8, 8, 8, 4}};
  std::vector<std::vector<float>> want;
  for (size_t i = 0; i < prompts.size(); ++i) {
    Session& s = *e.sessions[i];
    const float* l = s.decode(prompts[i].data(), int64_t(prompts[i].size()));
    want.emplace_back(l, l + n_vocab);
    s.truncate(0);
  }
  std::vector<Executor::Part> parts;
  for (size_t i = 0; i < prompts.size(); ++i)
    parts.push_back({&e.sessions[i]->kv(), prompts[i].data(), int64_t(prompts[i].size())});
  const float* l = e.ex->forward_batch(parts.data(), int64_t(parts.size()));
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(e.sessions[i]->n_past(), int64_t(prompts[i].size()));
    double worst = 0;
    for (int32_t v = 0; v < n_vocab; ++v) worst = std::max(worst, double(std::fabs(l[i * n_vocab + v] - want[i][size_t(v)])));
    EXPECT_LT(worst, 1e-3) << "part " << i;
  }
  // One cache twice in a pass, or more parts than the plan has rows: refused.
  parts[1].kv = parts[0].kv;
  EXPECT_THROW(e.ex->forward_batch(parts.data(), 2), Error);
}

TEST(Scheduler, SeededSamplingIsReproducibleUnderConcurrency) {
  Engine e(test::stories260k());
  std::vector<Job> js = jobs(2 * kSlots, e.n_vocab(), 5);
  for (size_t i = 0; i < js.size(); ++i) {
    js[i].sampling = SamplerParams{};
    js[i].sampling.temp = 0.9f;
    js[i].sampling.seed = 100 + i;
    js[i].max_tokens = 24;
  }
  std::vector<std::vector<int32_t>> want;
  for (const Job& j : js) want.push_back(alone(e, j));
  const auto got = together(e, js);
  for (size_t i = 0; i < js.size(); ++i) EXPECT_EQ(got[i], want[i]) << "job " << i;
}

// Hostile requests inside a concurrent batch: a prompt longer than the
// context, an id outside the vocabulary, a bad sampling value, a client
// that stops reading after three tokens. Each gets its own error (or stop);
// the honest ones beside them give exactly their tokens alone.
TEST(Scheduler, HostileRequestsDoNotDisturbTheBatch) {
  Engine e(test::synth_tiny("llama", "q8_0"), 96);
  const std::vector<Job> honest = jobs(3, e.n_vocab(), 21);
  std::vector<std::vector<int32_t>> want;
  for (const Job& j : honest) want.push_back(alone(e, j));
  for (int round = 0; round < 3; ++round) {
    std::vector<std::vector<int32_t>> got(honest.size());
    std::atomic<int> refused{0};
    std::atomic<int64_t> cancelled_tokens{-1};
    std::vector<std::thread> threads;
    for (size_t i = 0; i < honest.size(); ++i)
      threads.emplace_back([&, i] { got[i] = e.sched->run(*e.sessions[i], request(honest[i])).tokens; });
    threads.emplace_back([&] {
      Session& s = *e.sessions[3];
      Job too_long{std::vector<int32_t>(200, 5), 8, greedy()};
      try {
        e.sched->run(s, request(too_long));
      } catch (const Error& err) {
        EXPECT_NE(std::string(err.what()).find("does not fit the context"), std::string::npos) << err.what();
        ++refused;
      }
      Job bad_id{{1, 2, e.n_vocab() + 5}, 8, greedy()};
      EXPECT_THROW(e.sched->run(s, request(bad_id)), Error);
      Job bad_temp{{1, 2, 3}, 8, greedy()};
      bad_temp.sampling.top_p = std::nanf("");
      EXPECT_THROW(e.sched->run(s, request(bad_temp)), Error);
      // A client gone after three tokens.
      GenerationRequest r = request({{1, 4, 4, 9}, 40, greedy()});
      int seen = 0;
      r.on_token = [&](int32_t) { return ++seen < 3; };
      const GenerationResult res = e.sched->run(s, std::move(r));
      EXPECT_TRUE(res.cancelled);
      cancelled_tokens = int64_t(res.tokens.size());
    });
    for (auto& th : threads) th.join();
    EXPECT_EQ(refused.load(), 1);
    EXPECT_GE(cancelled_tokens.load(), 3);
    // Computed past the refusal while its thread was slow to look: bounded.
    EXPECT_LE(cancelled_tokens.load(), 3 + Scheduler::kRunAhead + 1);
    for (size_t i = 0; i < honest.size(); ++i) EXPECT_EQ(got[i], want[i]) << "honest job " << i << " round " << round;
  }
}

// More sequences than a step's token budget: each still gets its turn.
TEST(Scheduler, SmallBudgetStillServesEverySequence) {
  Engine e(test::stories260k());
  Scheduler tight(*e.ex, 2);  // two tokens a step, four sequences
  const std::vector<Job> js = jobs(kSlots, e.n_vocab(), 3);
  std::vector<std::vector<int32_t>> want;
  for (const Job& j : js) want.push_back(alone(e, j));
  std::vector<std::vector<int32_t>> got(js.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < js.size(); ++i)
    threads.emplace_back([&, i] { got[i] = tight.run(*e.sessions[i], request(js[i])).tokens; });
  for (auto& th : threads) th.join();
  for (size_t i = 0; i < js.size(); ++i) EXPECT_EQ(got[i], want[i]) << "job " << i;
}

TEST(Scheduler, RefusesASessionOfAnotherExecutorOrOneAlreadyRunning) {
  Engine a(test::stories260k()), b(test::stories260k());
  EXPECT_THROW(a.sched->run(*b.sessions[0], request({{1, 2}, 4, greedy()})), Error);
}

}  // namespace
}  // namespace edgellm
