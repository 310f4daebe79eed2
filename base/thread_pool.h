// A persistent pool: n-1 worker threads plus the calling thread run one
// function at a time over (ith, nth). Workers spin briefly after a job (the
// next op usually follows within microseconds during decode) and then sleep on
// a condition variable, so an idle session burns no CPU. run() performs no
// heap allocation, so it is safe inside the decode loop.
//
// Optional pinning (pin = true, `--pin`): thread i (the caller is thread 0)
// is bound to the i-th fastest CPU this process may run on (its affinity
// mask, ordered by base/cpu_affinity's fastest_first), so the OS never
// migrates a worker mid-op and each thread's rows stay in one core's caches. Fails clearly where that is impossible
// (more threads than allowed CPUs, or no affinity API on this OS). The
// caller's own affinity is restored when the pool is destroyed on the thread
// that created it.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace edgellm {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads, bool pin = false);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }
  bool pinned() const { return !cpus_.empty(); }
  // The CPU thread ith is bound to (pinned pools only).
  int cpu_of(int ith) const { return cpus_[size_t(ith)]; }

  // Calls f(ith, nth) for ith in [0, nth) across the pool and waits for all.
  template <class F>
  void run(F&& f) {
    using Fn = std::remove_reference_t<F>;
    run_raw([](void* ctx, int ith, int nth) { (*static_cast<Fn*>(ctx))(ith, nth); }, &f);
  }
  void run_raw(void (*fn)(void*, int, int), void* ctx);

 private:
  void worker(int ith);
  void start_workers();

  int n_threads_;
  std::vector<std::thread> threads_;
  std::vector<int> cpus_;  // pinned: CPU of thread i
  // Pinned: the creating thread and the CPUs it was allowed before, restored
  // when the pool goes away on that same thread.
  std::vector<int> caller_cpus_;
  std::thread::id creator_;
  void shutdown();
  std::mutex mu_;
  std::condition_variable cv_;
  // A job is published by writing fn_/ctx_ and then bumping generation_
  // (release); workers that see the new generation (acquire) read them with
  // no lock. The mutex is only for workers that went to sleep.
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  void (*fn_)(void*, int, int) = nullptr;
  void* ctx_ = nullptr;
};

// Splits [0, n) into nth nearly equal chunks; returns chunk ith as [begin, end).
inline void split_range(int64_t n, int ith, int nth, int64_t* begin, int64_t* end) {
  const int64_t per = n / nth, extra = n % nth;
  *begin = ith * per + (ith < extra ? ith : extra);
  *end = *begin + per + (ith < extra ? 1 : 0);
}

}  // namespace edgellm
