// base/thread_pool: every index runs exactly once per job, nested jobs in a
// loop do not lose wake-ups, and pinning binds thread i to the i-th allowed
// CPU (and gives the caller its affinity back), or fails clearly.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "base/thread_pool.h"

#if defined(__linux__)
#include <sched.h>
#endif

using namespace edgellm;

namespace {

TEST(ThreadPool, EveryIndexRunsOncePerJob) {
  for (int n : {1, 2, 3, 5}) {
    ThreadPool pool(n);
    for (int job = 0; job < 200; ++job) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> bad_nth{0};
      pool.run([&](int ith, int nth) {
        if (nth != n) bad_nth.fetch_add(1);
        hits[size_t(ith)].fetch_add(1);
      });
      ASSERT_EQ(bad_nth.load(), 0);
      for (int i = 0; i < n; ++i) ASSERT_EQ(hits[size_t(i)].load(), 1) << "n=" << n << " job " << job;
    }
  }
}

TEST(ThreadPool, RejectsBadThreadCounts) {
  EXPECT_THROW(ThreadPool(0), std::exception);
  EXPECT_THROW(ThreadPool(513), std::exception);
}

#if defined(__linux__)
std::vector<int> allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

TEST(ThreadPool, PinningBindsThreadIToTheIthAllowedCpu) {
  const std::vector<int> before = allowed();
  const int n = int(std::min<size_t>(before.size(), 4));
  {
    ThreadPool pool(n, /*pin=*/true);
    ASSERT_TRUE(pool.pinned());
    std::vector<int> seen(size_t(n), -1);
    pool.run([&](int ith, int) { seen[size_t(ith)] = sched_getcpu(); });
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(pool.cpu_of(i), before[size_t(i)]);
      EXPECT_EQ(seen[size_t(i)], before[size_t(i)]) << "thread " << i;
    }
    EXPECT_EQ(allowed(), std::vector<int>{before[0]});  // the caller is thread 0
  }
  EXPECT_EQ(allowed(), before);  // restored with the pool
}

TEST(ThreadPool, PinningMoreThreadsThanCpusFailsClearly) {
  const int n = int(allowed().size()) + 1;
  try {
    ThreadPool pool(n, /*pin=*/true);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("--pin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("use -t"), std::string::npos) << e.what();
  }
}
#endif

}  // namespace
