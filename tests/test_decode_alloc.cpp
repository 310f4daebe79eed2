// The decode loop performs no heap allocation: global operator new is counted
// while a session decodes and a sampler samples, after warm-up.
#include <gtest/gtest.h>

#include <execinfo.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "test_models.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
// The call stack of the first counted allocation (for the failure message).
void* g_first_stack[48];
std::atomic<int> g_first_depth{0};
void note_allocation() {
  if (g_allocations.fetch_add(1) == 0) {
    g_counting = false;  // backtrace() may allocate itself (it was warmed up, but be safe)
    g_first_depth = backtrace(g_first_stack, 48);
    g_counting = true;
  }
}
}  // namespace

// GCC cannot see that these deletes pair with the malloc in the new below.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) note_allocation();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  if (g_counting.load(std::memory_order_relaxed)) note_allocation();
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

// Prints where the first counted allocation came from.
void print_first_allocation() {
  if (g_first_depth.load() > 0) {
    std::fprintf(stderr, "first allocation at:\n");
    backtrace_symbols_fd(g_first_stack, g_first_depth.load(), STDERR_FILENO);
  }
}

// From the moment the Session exists: a multi-token prefill (several batches,
// full and partial) and decode steps allocate nothing on the heap.
void expect_no_alloc_in_prefill(const std::string& path, int threads, GgmlType kv_type = GgmlType::F16) {
  auto m = Model::load(path);
  SessionConfig cfg;
  cfg.n_ctx = 128;
  cfg.n_batch = 16;
  cfg.n_threads = threads;
  cfg.type_k = cfg.type_v = kv_type;
  const int64_t V = m->hparams().n_vocab;
  std::vector<int32_t> prompt(16 + 16 + 7 + 3);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = int32_t((i * 37 + 1) % size_t(V));
  {
    void* warm[4];
    backtrace(warm, 4);  // loads libgcc's unwinder now, not while counting
  }
  Session s(*m, cfg);
  g_allocations = 0;
  g_first_depth = 0;
  g_counting = true;
  const float* out = s.decode(prompt.data(), 16);
  out = s.decode(prompt.data() + 16, 16);
  out = s.decode(prompt.data() + 32, 7);
  out = s.decode(prompt.data() + 39, 3);
  for (int step = 0; step < 20; ++step) {
    int32_t id = 0;  // greedy, by hand: no sampler
    for (int64_t i = 1; i < V; ++i)
      if (out[i] > out[id]) id = int32_t(i);
    out = s.decode(&id, 1);
  }
  // A second conversation on the same session: truncate, prefill again.
  s.truncate(0);
  out = s.decode(prompt.data(), 16);
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0) << path << " threads " << threads << " (backtrace of the first one on stderr)";
  if (g_allocations.load() != 0) print_first_allocation();
}

TEST(DecodeLoop, NoHeapAllocationInPrefillStories260k) {
  expect_no_alloc_in_prefill(test::stories260k(), 1);
  expect_no_alloc_in_prefill(test::stories260k(), 2);
}

TEST(DecodeLoop, NoHeapAllocationInPrefillQuantized) {
  expect_no_alloc_in_prefill(test::synth_tiny("qwen3", "q4_k_m"), 2);
  expect_no_alloc_in_prefill(test::synth_tiny("llama", "q8_0"), 2, GgmlType::Q8_0);
  expect_no_alloc_in_prefill(test::synth_tiny("llama", "f16"), 3, GgmlType::Q4_0);
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
