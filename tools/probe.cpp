#include "tools/probe.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "base/error.h"
#include "base/thread_pool.h"
#include "kernels/dispatch.h"

namespace edgellm {

namespace {

using Clock = std::chrono::steady_clock;

// Sums 64-bit words, 64 bytes per step into four independent vector
// accumulators, so the loop is bound by loads, not by the add chain (GCC
// vector extensions: full-width loads on any x86-64 / arm64 baseline).
// Returns the sum so the reads cannot be optimized away. A software prefetch
// 8 KiB ahead, as the decode GEMVs do: a core's hardware prefetcher alone
// keeps too few lines in flight to fill the bus. Zen 5 host, 2 threads over
// 1 GiB, variants interleaved, best of 5 (GB/s): no prefetch 66.5-66.8, a
// plain AVX2 loop (32-byte loads) 71.5-72.8, 2 KiB ahead 72.4-73.8, 8 KiB
// ahead 77.7-78.9; 32-byte loads with 8 KiB 78.5-79.3. The probe is the
// yardstick of decode's share of the bus, so it reads as much as it can.
typedef uint64_t v2u64 __attribute__((vector_size(16)));
uint64_t sum_words(const uint64_t* p, size_t n) {
  v2u64 a = {0, 0}, b = a, c = a, d = a;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __builtin_prefetch(p + i + 1024);
    v2u64 x0, x1, x2, x3;
    std::memcpy(&x0, p + i, 16);
    std::memcpy(&x1, p + i + 2, 16);
    std::memcpy(&x2, p + i + 4, 16);
    std::memcpy(&x3, p + i + 6, 16);
    a += x0;
    b += x1;
    c += x2;
    d += x3;
  }
  uint64_t s = 0;
  for (; i < n; ++i) s += p[i];
  const v2u64 t = a + b + c + d;
  return s + t[0] + t[1];
}

// The best of `passes` timed passes over the buffer: on a shared host the
// bandwidth a process gets moves from second to second, and the share column
// of `edgellm bench` should be against what the memory system can deliver,
// not against a dip.
double read_bandwidth(ThreadPool& pool, const uint64_t* buf, size_t words, int passes) {
  std::vector<uint64_t> sink(size_t(pool.size()) * 8);
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    const auto t0 = Clock::now();
    pool.run([&](int ith, int nth) {
      int64_t b, e;
      split_range(int64_t(words), ith, nth, &b, &e);
      sink[size_t(ith) * 8] += sum_words(buf + b, size_t(e - b));
    });
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, double(words) * 8.0 / s / 1e9);
  }
  volatile uint64_t keep = 0;
  for (uint64_t x : sink) keep = keep + x;
  return best;
}

// The streamed buffer in 2 MiB huge pages where the kernel grants them, as
// the model weights are (--load-mode auto): with 4 KiB pages every 4 KiB of
// a stream costs a TLB miss, and the probe would understate the bus.
struct ProbeBuffer {
  uint64_t* p = nullptr;
  size_t bytes = 0;
  explicit ProbeBuffer(size_t words) : bytes((words * 8 + (2u << 20) - 1) / (2u << 20) * (2u << 20)) {
    p = static_cast<uint64_t*>(std::aligned_alloc(2u << 20, bytes));
    if (!p) fail("probe: cannot allocate ", bytes >> 20, " MiB");
#if defined(__linux__)
    madvise(p, bytes, MADV_HUGEPAGE);  // a hint: without THP the pages stay 4 KiB
#endif
  }
  ~ProbeBuffer() { std::free(p); }
};

double int8_dot_gops(ThreadPool& pool) {
  // 64 rows of 4096 q8_0 weights against one activation row: ~140 KiB, in
  // L2, so this measures compute, not memory.
  const KernelSet& k = kernels();
  const int64_t n = 4096, rows = 64;
  const size_t row = row_size(GgmlType::Q8_0, n);
  std::vector<uint8_t> w(row * rows), a(row);
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float((i * 7919) % 255) / 127.0f - 1.0f;
  for (int64_t r = 0; r < rows; ++r) k.quantize_act[int(GgmlType::Q8_0)](x.data(), w.data() + size_t(r) * row, n);
  k.quantize_act[int(GgmlType::Q8_0)](x.data(), a.data(), n);
  const int reps = 200;
  std::vector<float> out(size_t(pool.size()) * 16);
  const auto t0 = Clock::now();
  pool.run([&](int ith, int) {
    float s = 0;
    for (int rep = 0; rep < reps; ++rep)
      for (int64_t r = 0; r < rows; ++r)
        s += k.vec_dot[int(GgmlType::Q8_0)](n, w.data() + size_t(r) * row, a.data());
    out[size_t(ith) * 16] = s;
  });
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return 2.0 * double(n) * rows * reps * pool.size() / s / 1e9;
}

}  // namespace

double read_bandwidth_over(const void* data, size_t bytes, int n_threads, int passes) {
  if (n_threads < 1 || passes < 1) fail("probe: thread count and passes must be at least 1");
  // Whole 64-byte lines inside the range: sum_words reads 8 words a step.
  const auto begin = (reinterpret_cast<uintptr_t>(data) + 63) & ~uintptr_t(63);
  const auto end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~uintptr_t(63);
  if (end <= begin) return 0;
  ThreadPool pool(n_threads);
  return read_bandwidth(pool, reinterpret_cast<const uint64_t*>(begin), (end - begin) / 8, passes);
}

ProbeResult probe_host(int n_threads, double buffer_mib) {
  if (n_threads < 1) fail("probe: thread count must be at least 1");
  if (!(buffer_mib >= 16 && buffer_mib <= 65536)) fail("probe: buffer size must be 16..65536 MiB");
  ProbeResult r;
  r.cores = int(std::max(1u, std::thread::hardware_concurrency()));
  r.threads = n_threads;
  r.isa = kernels().isa;
  r.buffer_mib = buffer_mib;
  const size_t words = size_t(buffer_mib * 1024 * 1024 / 8);
  ProbeBuffer buf(words);
  ThreadPool pool(n_threads), one(1);
  // Touch every page from the threads that will read it (first-touch NUMA placement).
  pool.run([&](int ith, int nth) {
    int64_t b, e;
    split_range(int64_t(words), ith, nth, &b, &e);
    for (int64_t i = b; i < e; ++i) buf.p[size_t(i)] = uint64_t(i);
  });
  read_bandwidth(pool, buf.p, words, 1);  // warm-up
  r.read_gbs_all = read_bandwidth(pool, buf.p, words, 5);
  r.read_gbs_one = read_bandwidth(one, buf.p, words, 3);
  r.int8_gops = int8_dot_gops(pool);
  return r;
}

std::string probe_to_json(const ProbeResult& p) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"cores\":%d,\"threads\":%d,\"isa\":\"%s\",\"read_gbs_all\":%.2f,\"read_gbs_one\":%.2f,"
                "\"int8_gops\":%.2f,\"buffer_mib\":%.0f}",
                p.cores, p.threads, p.isa.c_str(), p.read_gbs_all, p.read_gbs_one, p.int8_gops, p.buffer_mib);
  return buf;
}

}  // namespace edgellm
