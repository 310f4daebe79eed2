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
// the largest row tile (32 rows in the AVX-512 q4_0 / q5_0 / q8_0 / iq4_nl
// kernels; 16, 8 or 4 in the others), tokens in blocks of at most this many
// bytes of quantized activations. A kernel packs each row tile once per
// block, so the block sets how many tokens share one pack: with 512 KB (half
// a 1 MB L2, until 2026-12-07) a 14336-wide FFN row left 32 tokens per pack
// and llama3-8b Q4_0 pp512 ran 76.8 t/s; with 4 MB (256+ tokens even for
// such rows; the activations then stream from L3, a few GB/s per thread)
// 87.3-89.1, Q4_K_M 61.2 -> 70.3, qwen2.5-0.5b Q4_0 +2-5 %, the f16 and
// AVX2 tiles equal (Zen 5, 2 threads; BENCHMARKS.md). 16 MB: no better.
constexpr int64_t kRowUnit = 32;
constexpr size_t kActBlockBytes = size_t(4) << 20;
// Decode through vec_dot per row (types without a GEMV in the set): each
// row's cache lines are prefetched this far ahead of the one being read, as
// the GEMVs do inside their rows. A row of a few hundred bytes is too short a
// stream for the hardware prefetcher to run ahead of; without this the AVX2
// set decoded a q4_K file at ~30 % of the bus.
constexpr size_t kDecodePrefetchBytes = 2304;

// A decode step of a few sequences at once (continuous batching: one token
// per sequence) goes through the set's GEMV, never the prefill tiles: the
// tiles repack every row tile per call, a fixed cost a handful of tokens
// cannot amortize. Where the GEMV serves several tokens per read of a row
// (KernelSet::gemv_batch: each block unpacked once for all of them), up to
// that many go through one call; elsewhere the GEMV takes them one by one
// over row chunks small enough to stay in L1 (kDecodeChunkBytes), so the
// weights still come from DRAM once, but its arithmetic grows with each
// token. Either way each token's result is bit for bit its own alone.
// qwen2.5-0.5b Q4_0, 2 threads, one pass of T single-token sequences (Intel
// Xeon host, 2026-12-08), ms per pass:
//   T                       1     2     4     8
//   tiles                   -   31.2  33.8  38.6
//   GEMV token by token   18.4  25.1  40.4  72.2
// so token by token only up to kDecodeBatch, the tiles above. The AVX-512
// GEMVs' shared-unpack form (q4_0, q5_0, q8_0, iq4_nl, q4_K, q5_K, q6_K:
// gemv_batch 8) made the same passes 18.1 / 19.4 / 20.3 / 32.7 ms.
constexpr int64_t kDecodeBatch = 2;
constexpr size_t kDecodeChunkBytes = 16 << 10;

// Decode of float rows this short goes through the set's prefill tile (one
// token): its rows share each activation load and each row is reduced once,
// where the per-row dot pays a call and a double-precision reduction for a
// few FMAs (stories260K: rows of 64-172; its decode, both ways alternated in
// one process: 19.5k -> 30.7k tok/s). Longer rows keep the per-row dot: one
// sequential stream per thread, which decode of a float model needs.
constexpr int64_t kShortFloatRow = 256;
bool short_float_row(const WeightView& w, const KernelSet& k) {
  const bool is_float = w.type == GgmlType::F32 || w.type == GgmlType::F16 || w.type == GgmlType::BF16;
  return is_float && w.cols <= kShortFloatRow && !k.gemv[int(w.type)] && k.gemm[int(w.type)];
}

// Tokens per gemm call for activation rows of act_row bytes: blocks whose
// quantized activations fit in kActBlockBytes, a multiple of 16, at least 16.
int64_t token_block(size_t act_row) {
  return std::max<int64_t>(16, int64_t(kActBlockBytes / act_row) / 16 * 16);
}

// The distinct activation formats a set of jobs needs, in first-use order,
// and where each lives in the scratch buffer; then the threads' kernel areas.
struct ActPlan {
  GgmlType fmt[kMaxFormats];
  size_t offset[kMaxFormats];
  size_t row_bytes[kMaxFormats];
  int n = 0;
  int job_fmt[kMaxJobs];
  GemmFn kernel[kMaxJobs];   // the gemm / gemv each job goes through (null: vec_dot per row)
  bool batched[kMaxJobs] = {};  // a gemv serving all T tokens in one call
  bool any_tile = false;        // some job goes through the prefill tiles
  size_t thread_offset = 0;  // thread i's area at thread_offset + i * thread_bytes
  size_t thread_bytes = 0;   // multiple of 64; 0: no kernel needs scratch
  size_t total = 0;

  ActPlan(const KernelSet& k, const MatmulJob* jobs, int n_jobs, int64_t T, int n_threads) {
    if (n_jobs < 1 || n_jobs > kMaxJobs) fail("matmul: ", n_jobs, " jobs (1..", kMaxJobs, ")");
    if (n_threads < 1) fail("matmul: ", n_threads, " threads");
    const int64_t cols = jobs[0].w->cols;
    for (int j = 0; j < n_jobs; ++j) {
      const WeightView& w = *jobs[j].w;
      if (w.cols != cols) fail("matmul: fused jobs must share the input width");
      const GgmlType f = traits(w.type).vec_dot_type;
      int i = 0;
      while (i < n && fmt[i] != f) ++i;
      if (i == n) {
        fmt[n] = f;
        row_bytes[n] = row_size(f, cols);
        offset[n] = total;
        total += (row_bytes[n] * size_t(T) + 63) / 64 * 64;
        ++n;
      }
      job_fmt[j] = i;
      // Prefill (T > 1) through the set's gemm, decode through its gemv. A
      // call sees at most the matrix's rows and one token block: what the
      // kernel announces for those is the most any call of this job needs.
      const int t = int(w.type);
      const bool multi = k.gemv[t] && T > 1 && T <= k.gemv_batch[t];
      const bool tile = (T > kDecodeBatch && !multi) || short_float_row(w, k);
      kernel[j] = tile ? k.gemm[t] : k.gemv[t];
      batched[j] = !tile && multi;
      any_tile = any_tile || (tile && kernel[j]);
      if (kernel[j]) {
        const size_t b = gemm_scratch_bytes(tile ? k.gemm_scratch[t] : k.gemv_scratch[t], cols, w.rows,
                                            tile ? std::min(token_block(row_bytes[i]), T) : batched[j] ? T : 1);
        thread_bytes = std::max(thread_bytes, scratch_round64(b));
      }
    }
    thread_offset = total;
    total += thread_bytes * size_t(n_threads);
  }
};

}  // namespace

// Enough for any call with 1 <= T' <= T: the activations grow with T', the
// gemm areas too (GemmScratchFn is nondecreasing in n_tok), and T' = 1 goes
// through gemv, whose area is counted as well.
size_t matmul_scratch_bytes(const MatmulJob* jobs, int n_jobs, int64_t T, int n_threads) {
  const ActPlan plan(kernels(), jobs, n_jobs, T, n_threads);
  size_t decode = 0;  // single-token and batched-decode calls (their activations are within T's)
  for (int64_t t = 1; t < T && t <= 16; ++t) decode = std::max(decode, ActPlan(kernels(), jobs, n_jobs, t, 1).thread_bytes);
  return plan.thread_offset + std::max(plan.thread_bytes, decode) * size_t(n_threads);
}

void matmul_multi(ThreadPool& pool, const MatmulJob* jobs, int n_jobs, const float* x, int64_t T, void* scratch) {
  const KernelSet& k = kernels();
  const ActPlan plan(k, jobs, n_jobs, T, pool.size());
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
  // (A decode step's few rows: on this thread; waking the pool costs more.)
  if (parallel && T > 16) pool.run(quantize); else quantize(0, 1);

  // 2. All jobs' rows, as one range split across the threads. Prefill (T > 1)
  // goes through the set's GEMM kernel where it has one: the range is split
  // in multiples of kRowUnit rows (the kernels' micro-tile height) and the
  // tokens in blocks of at most kActBlockBytes of quantized activations, so
  // each row tile's pack serves a few hundred tokens. Decode (T == 1) goes through the set's gemv
  // where it has one (several rows share the activation work), else vec_dot
  // per row.
  const GemmFn* gemm = plan.kernel;
  // Thread ith's kernel area (null where no kernel needs one).
  auto area = [&](int ith) -> void* {
    return plan.thread_bytes ? base + plan.thread_offset + size_t(ith) * plan.thread_bytes : nullptr;
  };
  // Rows [r0, r1) of the jobs' concatenated rows, on the thread owning area sc.
  auto rows = [&](int64_t r0, int64_t r1, void* sc) {
    int64_t first = 0;
    for (int j = 0; j < n_jobs; ++j) {
      const WeightView& w = *jobs[j].w;
      const int64_t b = std::max<int64_t>(r0 - first, 0), e = std::min<int64_t>(r1 - first, w.rows);
      const uint8_t* xq = base + plan.offset[plan.job_fmt[j]];
      const size_t act_row = plan.row_bytes[plan.job_fmt[j]], wrow = w.row_bytes();
      if (gemm[j] && b < e && plan.batched[j]) {
        // A batched decode step: every token in one call, each row read
        // once from memory for all of them. (Groups of 4 tokens over
        // L2-sized row chunks instead, to keep 8 tokens' prepared
        // activations of a wide row in L1: 32-34 -> 41 ms a pass of 8 on
        // qwen2.5-0.5b Q4_0; dropped.)
        gemm[j](w.cols, w.data + size_t(b) * wrow, wrow, e - b, xq, act_row, T, jobs[j].y + size_t(b), size_t(w.rows), sc);
      } else if (gemm[j] && b < e && T > 1 && gemm[j] == k.gemv[int(w.type)]) {
        // A few decode tokens: the GEMV per token over chunks of rows (a
        // multiple of 8, the GEMVs' pass height) that stay in L1 between tokens.
        const int64_t rc = std::max<int64_t>(8, int64_t(kDecodeChunkBytes / wrow) / 8 * 8);
        for (int64_t r = b; r < e; r += rc) {
          const int64_t n = std::min(rc, e - r);
          for (int64_t t = 0; t < T; ++t)
            gemm[j](w.cols, w.data + size_t(r) * wrow, wrow, n, xq + size_t(t) * act_row, act_row, 1,
                    jobs[j].y + size_t(t) * size_t(w.rows) + size_t(r), size_t(w.rows), sc);
        }
      } else if (gemm[j] && b < e) {
        const int64_t tb = token_block(act_row);
        for (int64_t t0 = 0; t0 < T; t0 += tb)
          gemm[j](w.cols, w.data + size_t(b) * wrow, wrow, e - b, xq + size_t(t0) * act_row, act_row,
                  std::min(tb, T - t0), jobs[j].y + size_t(t0) * size_t(w.rows) + size_t(b), size_t(w.rows), sc);
      } else {
        for (int64_t r = b; r < e; ++r) {
          const uint8_t* wr = w.data + size_t(r) * wrow;
          if (T == 1)  // (past the matrix's end is harmless: a prefetch never faults)
            for (size_t o = 0; o < wrow; o += 64) __builtin_prefetch(wr + kDecodePrefetchBytes + o);
          for (int64_t t = 0; t < T; ++t) jobs[j].y[t * w.rows + r] = dot[j](w.cols, wr, xq + size_t(t) * act_row);
        }
      }
      first += w.rows;
    }
  };
  if (!parallel) {
    rows(0, total_rows, area(0));
  } else if (plan.any_tile) {
    // Prefill: compute-bound and even, so a static split in multiples of the
    // micro-tile height.
    pool.run([&](int ith, int nth) {
      int64_t u0, u1;
      split_range((total_rows + kRowUnit - 1) / kRowUnit, ith, nth, &u0, &u1);
      rows(u0 * kRowUnit, std::min(u1 * kRowUnit, total_rows), area(ith));
    });
  } else {
    // Decode: memory-bound. Each thread takes one share of the rows (whole
    // multiples of 8, the GEMVs' pass height) from a counter: the first to
    // arrive takes the first share, and a remainder goes to whichever
    // finishes first. Smaller chunks (1/8 of a share, kept until 2026-12-06
    // to even out threads that stream at different speeds) cost more than
    // they balanced: every chunk restarts a thread's stream, and a layer's
    // matrices are a few hundred KB. Zen 5 host, 2 threads, the q4_0 GEMV
    // alone, interleaved in one process (mean GB/s, probe 69.6): 896 x 1152
    // (q, k, v) 30.4 with 1/8 chunks against 46.4 with one share each; 4864
    // x 896 47.6 / 56.3; 896 x 4864 47.6 / 53.8; the 151936-row head equal;
    // q4_K, q6_K, q5_0, q8_0 and the AVX2 set alike. Which thread computes a
    // row never changes its result.
    std::atomic<int64_t> next{0};
    const int64_t nth = pool.size();
    const int64_t chunk = std::max<int64_t>(16, (total_rows + nth - 1) / nth + 7) / 8 * 8;
    pool.run([&](int ith, int) {
      void* sc = area(ith);
      for (int64_t r0; (r0 = next.fetch_add(chunk, std::memory_order_relaxed)) < total_rows;)
        rows(r0, std::min(r0 + chunk, total_rows), sc);
    });
  }
}

}  // namespace edgellm
