#include "base/thread_pool.h"

#include "base/error.h"

namespace edgellm {

namespace {
// About 50-100 us of spinning: long enough to catch the next op of a decode
// step, short enough not to matter when the pool goes idle.
constexpr int kSpinIterations = 20000;
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}
}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads) {
  if (n_threads < 1 || n_threads > 512) fail("thread count ", n_threads, " is out of range (1..512)");
  for (int i = 1; i < n_threads; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_ = true;
  {
    std::lock_guard<std::mutex> lk(mu_);
    generation_.fetch_add(1);
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::run_raw(void (*fn)(void*, int, int), void* ctx) {
  if (n_threads_ == 1) {
    fn(ctx, 0, 1);
    return;
  }
  fn_ = fn;
  ctx_ = ctx;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1);  // seq_cst: ordered against the sleepers_ check below
  if (sleepers_.load() > 0) {
    // Taking the lock orders this notify after a sleeper's predicate check.
    std::lock_guard<std::mutex> lk(mu_);
    cv_.notify_all();
  }
  fn(ctx, 0, n_threads_);
  while (pending_.load(std::memory_order_acquire) != 0) cpu_relax();
}

void ThreadPool::worker(int ith) {
  uint64_t seen = 0;
  for (;;) {
    int spins = 0;
    while (generation_.load(std::memory_order_acquire) == seen && spins < kSpinIterations) {
      cpu_relax();
      ++spins;
    }
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lk(mu_);
      sleepers_.fetch_add(1);  // seq_cst, see run_raw
      cv_.wait(lk, [&] { return generation_.load() != seen; });
      sleepers_.fetch_sub(1);
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_) return;
    fn_(ctx_, ith, n_threads_);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace edgellm
