#include "base/thread_pool.h"

#include "base/cpu_affinity.h"
#include "base/error.h"

#include <system_error>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

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

#if defined(__linux__)
bool bind_thread(pthread_t t, const int* cpus, size_t n) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (size_t i = 0; i < n; ++i) CPU_SET(cpus[i], &set);
  return pthread_setaffinity_np(t, sizeof set, &set) == 0;
}
#endif
}  // namespace

ThreadPool::ThreadPool(int n_threads, bool pin) : n_threads_(n_threads) {
  if (n_threads < 1 || n_threads > 512) fail("thread count ", n_threads, " is out of range (1..512)");
  if (pin) {
#if defined(__linux__)
    // Fastest first: on a phone the lowest-numbered CPUs are the little ones.
    const std::vector<int> cpus = fastest_first(allowed_cpus(), sysfs_cpu_root());
    if (int(cpus.size()) < n_threads)
      fail("--pin: ", n_threads, " threads but this process may run on only ", cpus.size(),
           " CPUs; use -t ", cpus.size(), " or less, or drop --pin");
    cpus_.assign(cpus.begin(), cpus.begin() + n_threads);
    caller_cpus_ = cpus;
    creator_ = std::this_thread::get_id();
#else
    fail("--pin: thread pinning is not supported on this OS (Linux and Android only); drop --pin");
#endif
  }
  start_workers();
#if defined(__linux__)
  if (pin) {
    for (int i = 0; i < n_threads; ++i) {
      const pthread_t t = i == 0 ? pthread_self() : threads_[size_t(i - 1)].native_handle();
      if (!bind_thread(t, &cpus_[size_t(i)], 1)) {
        const int cpu = cpus_[size_t(i)];
        shutdown();
        fail("--pin: cannot bind thread ", i, " to CPU ", cpu);
      }
    }
  }
#endif
}

// A worker that cannot be created (thread limit, `ulimit -u`, address space
// for its stack under `ulimit -v`) must not leave the ones already running
// behind: they are stopped and joined before the error leaves the
// constructor, whose destructor will never run.
void ThreadPool::start_workers() {
  threads_.reserve(size_t(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) {
    try {
      threads_.emplace_back([this, i] { worker(i); });
    } catch (const std::system_error& e) {
      shutdown();
      fail("cannot start thread ", i + 1, " of ", n_threads_, " (", e.code().message(),
           "): the system's thread or memory limits allow fewer; use -t ", i > 1 ? i : 1,
           " or less");
    }
  }
}

ThreadPool::~ThreadPool() { shutdown(); }

void ThreadPool::shutdown() {
#if defined(__linux__)
  if (!caller_cpus_.empty() && std::this_thread::get_id() == creator_)
    bind_thread(pthread_self(), caller_cpus_.data(), caller_cpus_.size());
  caller_cpus_.clear();
#endif
  stop_ = true;
  {
    std::lock_guard<std::mutex> lk(mu_);
    generation_.fetch_add(1);
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
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
