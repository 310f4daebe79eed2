#include "kernels/matmul.h"

#include <algorithm>
#include <atomic>

#include "base/error.h"
#include "kernels/dispatch.h"

namespace edgellm {

namespace {

// Below this many multiply-adds a call runs on the calling thread alone:
// waking the pool costs a few microseconds, more than the work itself for
// the small matrices of resident phone-sized models (stories260K: 4K-11K).
constexpr int64_t kParallelMacs = 1 << 17;
constexpr int kMaxJobs = 4;
constexpr int kMaxFormats = 4;
// Prefill through KernelSet::gemm: rows are dealt to threads in multiples of
// the micro-tile height (4 rows in the AVX2 and NEON kernels, 16 in the
// AVX-512 one), tokens in blocks of at most this many bytes of quantized
// activations (half of a 1 MB L2).
constexpr int64_t kRowUnit = 16;
constexpr size_t kActBlockBytes = 512 * 1024;

// The distinct activation formats a set of jobs needs, in first-use order,
// and where each lives in the scratch buffer.
struct ActPlan {
  GgmlType fmt[kMaxFormats];
  size_t offset[kMaxFormats];
  size_t row_bytes[kMaxFormats];
  int n = 0;
  int job_fmt[kMaxJobs];
  size_t total = 0;

  ActPlan(const MatmulJob* jobs, int n_jobs, int64_t T) {
    if (n_jobs < 1 || n_jobs > kMaxJobs) fail("matmul: ", n_jobs, " jobs (1..", kMaxJobs, ")");
    const int64_t cols = jobs[0].w->cols;
    for (int j = 0; j < n_jobs; ++j) {
      if (jobs[j].w->cols != cols) fail("matmul: fused jobs must share the input width");
      const GgmlType f = traits(jobs[j].w->type).vec_dot_type;
      int k = 0;
      while (k < n && fmt[k] != f) ++k;
      if (k == n) {
        fmt[n] = f;
        row_bytes[n] = row_size(f, cols);
        offset[n] = total;
        total += (row_bytes[n] * size_t(T) + 63) / 64 * 64;
        ++n;
      }
      job_fmt[j] = k;
    }
  }
};

}  // namespace

size_t matmul_scratch_bytes(const MatmulJob* jobs, int n_jobs, int64_t T) {
  return ActPlan(jobs, n_jobs, T).total;
}

void matmul_multi(ThreadPool& pool, const MatmulJob* jobs, int n_jobs, const float* x, int64_t T, void* scratch) {
  const KernelSet& k = kernels();
  const ActPlan plan(jobs, n_jobs, T);
  const int64_t cols = jobs[0].w->cols;
  uint8_t* base = static_cast<uint8_t*>(scratch);
  int64_t total_rows = 0;
  VecDotFn dot[kMaxJobs];
  for (int j = 0; j < n_jobs; ++j) {
    dot[j] = k.vec_dot[int(jobs[j].w->type)];
    if (!dot[j]) fail("no kernel for weight type ", type_name(uint32_t(jobs[j].w->type)));
    total_rows += jobs[j].w->rows;
  }
  const bool parallel = total_rows * cols * T >= kParallelMacs && pool.size() > 1;

  // 1. Quantize X once per activation format.
  auto quantize = [&](int ith, int nth) {
    int64_t t0, t1;
    split_range(T * plan.n, ith, nth, &t0, &t1);
    for (int64_t i = t0; i < t1; ++i) {
      const int f = int(i / T);
      const int64_t t = i % T;
      k.quantize_act[int(plan.fmt[f])](x + t * cols, base + plan.offset[f] + size_t(t) * plan.row_bytes[f], cols);
    }
  };
  if (parallel && T > 1) pool.run(quantize); else quantize(0, 1);

  // 2. All jobs' rows, as one range split across the threads. Prefill (T > 1)
  // goes through the set's GEMM kernel where it has one: the range is split
  // in multiples of kRowUnit rows (the kernels' micro-tile height) and the
  // tokens in blocks whose quantized activations fit in L2 (kActBlockBytes),
  // so each block of activation rows is read from L2, not memory, by every
  // micro-tile of this thread's rows. Decode (T == 1) goes through the set's gemv
  // where it has one (several rows share the activation work), else vec_dot
  // per row.
  GemmFn gemm[kMaxJobs];
  for (int j = 0; j < n_jobs; ++j) gemm[j] = T > 1 ? k.gemm[int(jobs[j].w->type)] : k.gemv[int(jobs[j].w->type)];
  // Rows [r0, r1) of the jobs' concatenated rows.
  auto rows = [&](int64_t r0, int64_t r1) {
    int64_t first = 0;
    for (int j = 0; j < n_jobs; ++j) {
      const WeightView& w = *jobs[j].w;
      const int64_t b = std::max<int64_t>(r0 - first, 0), e = std::min<int64_t>(r1 - first, w.rows);
      const uint8_t* xq = base + plan.offset[plan.job_fmt[j]];
      const size_t act_row = plan.row_bytes[plan.job_fmt[j]], wrow = w.row_bytes();
      if (gemm[j] && b < e) {
        const int64_t tb = std::max<int64_t>(16, int64_t(kActBlockBytes / act_row) / 16 * 16);
        for (int64_t t0 = 0; t0 < T; t0 += tb)
          gemm[j](w.cols, w.data + size_t(b) * wrow, wrow, e - b, xq + size_t(t0) * act_row, act_row,
                  std::min(tb, T - t0), jobs[j].y + size_t(t0) * size_t(w.rows) + size_t(b), size_t(w.rows));
      } else {
        for (int64_t r = b; r < e; ++r) {
          const uint8_t* wr = w.data + size_t(r) * wrow;
          for (int64_t t = 0; t < T; ++t) jobs[j].y[t * w.rows + r] = dot[j](w.cols, wr, xq + size_t(t) * act_row);
        }
      }
      first += w.rows;
    }
  };
  if (!parallel) {
    rows(0, total_rows);
  } else if (T > 1) {
    // Prefill: compute-bound and even, so a static split in multiples of the
    // micro-tile height.
    pool.run([&](int ith, int nth) {
      int64_t u0, u1;
      split_range((total_rows + kRowUnit - 1) / kRowUnit, ith, nth, &u0, &u1);
      rows(u0 * kRowUnit, std::min(u1 * kRowUnit, total_rows));
    });
  } else {
    // Decode: memory-bound, and the threads do not stream equally fast (one
    // also ran the previous op's tail, the other shares the bus with it), so
    // a static half each leaves one waiting at the barrier. Threads take
    // chunks of ~1/8 of their share from a counter instead (whole multiples
    // of 8 rows, the GEMVs' pass height). Which thread computes a row never
    // changes its result.
    std::atomic<int64_t> next{0};
    const int64_t chunk = std::max<int64_t>(16, total_rows / (int64_t(pool.size()) * 8) / 8 * 8);
    pool.run([&](int, int) {
      for (int64_t r0; (r0 = next.fetch_add(chunk, std::memory_order_relaxed)) < total_rows;)
        rows(r0, std::min(r0 + chunk, total_rows));
    });
  }
}

}  // namespace edgellm
