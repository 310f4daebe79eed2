// The decode loop performs no heap allocation: global operator new is counted
// while a session decodes and a sampler samples, after warm-up.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "test_models.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace

// GCC cannot see that these deletes pair with the malloc in the new below.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  return std::malloc(n ? n : 1);
}
void* operator new[](size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace edgellm {
namespace {

void expect_no_alloc_in_decode(const std::string& path, int threads) {
  auto m = Model::load(path);
  SessionConfig cfg;
  cfg.n_ctx = 128;
  cfg.n_batch = 16;
  cfg.n_threads = threads;
  Session s(*m, cfg);
  SamplerParams sp;
  sp.temp = 0.8f;
  sp.repeat_penalty = 1.1f;
  Sampler sampler(sp, int32_t(m->hparams().n_vocab));
  std::vector<int32_t> history(128, 1);
  std::vector<float> logits(size_t(m->hparams().n_vocab));
  int32_t prompt[4] = {1, 5, 9, 13};
  const float* out = s.decode(prompt, 4);
  int32_t id = 1;
  // Warm-up step (first use of lazily built tables), then count.
  std::copy(out, out + logits.size(), logits.begin());
  id = sampler.sample(logits.data(), history.data(), 4);
  out = s.decode(&id, 1);
  g_allocations = 0;
  g_counting = true;
  for (int step = 0; step < 40; ++step) {
    std::copy(out, out + logits.size(), logits.begin());
    id = sampler.sample(logits.data(), history.data(), size_t(6 + step));
    history[size_t(6 + step)] = id;
    out = s.decode(&id, 1);
  }
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0) << path << " threads " << threads;
}

TEST(DecodeLoop, NoHeapAllocationStories260k) {
  expect_no_alloc_in_decode(test::stories260k(), 1);
  expect_no_alloc_in_decode(test::stories260k(), 2);
}

TEST(DecodeLoop, NoHeapAllocationQuantized) {
  expect_no_alloc_in_decode(test::synth_tiny("qwen3", "q4_k_m"), 2);
}

}  // namespace
}  // namespace edgellm
