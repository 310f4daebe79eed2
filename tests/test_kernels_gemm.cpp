// The prefill GEMM kernels (KernelSet::gemm) of every kernel set against the
// scalar reference twin (one scalar vec_dot per row and token):
//  - every type of kGemmTypes: q4_0 / q5_0 / q8_0 / iq4_nl weights (quantized and raw
//    bytes) x q8_0 activations, q2_K..q6_K and iq4_xs x q8_K, f32 / f16 / bf16 x f32,
//    on awkward shapes: rows, tokens and blocks not multiples of any tile,
//    y with a row stride wider than the rows written (cells outside the
//    rectangle must stay untouched); within 1e-5 * sum|w x| per element, the
//    tolerance of tests/test_kernels.cpp;
//  - and bit-identical to the same set's vec_dot where the set says so
//    (KernelSet::gemm_reordered false: batching then never changes a result), else
//    within the same tolerance of it;
//  - matmul_multi with T > 1 (the GEMM path, fused jobs, 1-3 threads) against
//    T separate T == 1 calls (the vec_dot path), for every set: bit-identical
//    (or within tolerance where gemm_reordered is set);
//  - rows long enough (58K elements) that the token-block loops of the
//    kernels and of matmul_multi run several times, with partial blocks;
//  - every kernel and matmul_multi run in exactly the scratch bytes they
//    announce (KernelSet::gemm_scratch / gemv_scratch, matmul_scratch_bytes),
//    a heap block of that size filled with garbage: an under-report is a heap
//    overflow that the ASan build (scripts/build.sh asan) reports, and a
//    kernel relying on zeroed scratch gets wrong results.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "base/thread_pool.h"
#include "kernels/dispatch.h"
#include "kernels/matmul.h"
#include "tensor/blocks.h"
#include "tensor/types.h"

using namespace edgellm;

namespace {

using T = GgmlType;
// Every weight type a set may have a GEMM for (the scalar set has all).
constexpr T kGemmTypes[] = {T::F32, T::F16, T::BF16, T::Q4_0, T::Q5_0, T::Q8_0,
                            T::Q2_K, T::Q3_K, T::Q4_K, T::Q5_K, T::Q6_K, T::IQ4_NL, T::IQ4_XS};

std::vector<float> gaussian(size_t n, std::mt19937& rng, float sigma = 1.f) {
  std::normal_distribution<float> g(0.f, sigma);
  std::vector<float> x(n);
  for (auto& v : x) v = g(rng);
  return x;
}

std::vector<uint8_t> quantize_rows(T t, const std::vector<float>& x, int64_t rows, int64_t n) {
  const size_t rb = row_size(t, n);
  std::vector<uint8_t> q(rb * size_t(rows));
  for (int64_t r = 0; r < rows; ++r) quantize_row(t, x.data() + size_t(r * n), q.data() + size_t(r) * rb, n);
  return q;
}

// Every byte value (q8_0's -128 included) with random finite scales.
std::vector<uint8_t> raw_rows(T t, int64_t rows, int64_t n, std::mt19937& rng) {
  std::vector<uint8_t> w(row_size(t, n) * size_t(rows));
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : w) b = uint8_t(byte(rng));
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  const size_t bsz = traits(t).type_size;  // d is the first field of q4_0/q8_0
  for (size_t off = 0; off < w.size(); off += bsz) {
    const uint16_t d = f32_to_fp16(scale(rng));
    std::memcpy(&w[off], &d, 2);
  }
  return w;
}

// A kernel's or matmul's scratch: exactly the announced bytes (null for 0),
// 64-byte aligned, filled with garbage.
class Scratch {
 public:
  explicit Scratch(size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    p_ = ::operator new(bytes, std::align_val_t(64));
    std::memset(p_, 0xA5, bytes);
  }
  ~Scratch() {
    if (p_) ::operator delete(p_, std::align_val_t(64));
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return p_; }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

// sum |w_i * x_i| over the dequantized rows: the scale of the rounding error.
double abs_dot(T wt, const void* w, const void* a, int64_t n) {
  std::vector<float> wf(static_cast<size_t>(n)), af(static_cast<size_t>(n));
  dequantize_row(wt, w, wf.data(), n);
  dequantize_row(traits(wt).vec_dot_type, a, af.data(), n);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::fabs(double(wf[size_t(i)]) * double(af[size_t(i)]));
  return s;
}

TEST(Gemm, ScalarSetIsTheReference) {
  const KernelSet* sets[8];
  ASSERT_GE(available_kernel_sets(sets, 8), 1);
  const KernelSet& ref = *sets[0];
  ASSERT_STREQ(ref.isa, "scalar");
  std::mt19937 rng(7);
  for (T wt : kGemmTypes) {
    ASSERT_TRUE(ref.gemm[int(wt)]);
    EXPECT_FALSE(ref.gemm_scratch[int(wt)]) << "the reference gemm needs no scratch";
    const T at = traits(wt).vec_dot_type;
    const int64_t n = 3 * traits(wt).block_size, rows = 5, tok = 3;
    const auto w = quantize_rows(wt, gaussian(size_t(rows * n), rng), rows, n);
    const auto a = quantize_rows(at, gaussian(size_t(tok * n), rng), tok, n);
    const size_t wr = row_size(wt, n), ar = row_size(at, n);
    std::vector<float> y(size_t(tok * rows));
    ref.gemm[int(wt)](n, w.data(), wr, rows, a.data(), ar, tok, y.data(), size_t(rows), nullptr);
    for (int64_t t = 0; t < tok; ++t)
      for (int64_t r = 0; r < rows; ++r)
        EXPECT_EQ(y[size_t(t * rows + r)], vec_dot(wt, n, w.data() + size_t(r) * wr, a.data() + size_t(t) * ar));
  }
}

struct Shapes {
  std::vector<int64_t> blocks, rows, toks;
  int64_t max_super_blocks;  // 256-element super-blocks: fewer, rows are long enough
};

// Runs fn (set ks's gemm or gemv for weight type wt, in the scratch sfn
// announces) on every shape against
// the scalar reference gemm: within 1e-5 * sum|w x| per element, finite, and
// nothing written outside the rows x tokens rectangle of y. With vs_vec_dot,
// also against ks's own vec_dot: bit-identical unless ks.gemm_reordered[wt].
// Returns the worst |fn - ref| / sum|w x|.
double check_against_reference(const KernelSet& ref, const KernelSet& ks, T wt, GemmFn fn, GemmScratchFn sfn,
                               const char* kind, const Shapes& sh, bool vs_vec_dot, std::mt19937& rng, int* cases) {
  const T at = traits(wt).vec_dot_type;
  const int64_t bs = traits(wt).block_size;
  double worst = 0;
  for (int64_t blocks : sh.blocks) {
    const int64_t n = blocks * bs;
    if (bs > 32 && blocks > sh.max_super_blocks) continue;
    for (int64_t rows : sh.rows) {
      for (int64_t tok : sh.toks) {
        const bool raw = bs == 32 && (rows + tok + blocks) % 3 == 0;  // raw bytes: one fp16 field (q4_0/q5_0/q8_0 d)
        const auto w = raw ? raw_rows(wt, rows, n, rng) : quantize_rows(wt, gaussian(size_t(rows * n), rng), rows, n);
        const auto a = quantize_rows(at, gaussian(size_t(tok * n), rng, (rows + tok) % 2 ? 1.f : 30.f), tok, n);
        const size_t wr = row_size(wt, n), ar = row_size(at, n);
        const size_t ldy = size_t(rows + 3);  // cells [rows, ldy) of each y row must stay untouched
        std::vector<float> want(size_t(tok) * ldy, -7.f), got(size_t(tok) * ldy, -7.f);
        ref.gemm[int(wt)](n, w.data(), wr, rows, a.data(), ar, tok, want.data(), ldy, nullptr);
        const Scratch scratch(gemm_scratch_bytes(sfn, n, rows, tok));
        fn(n, w.data(), wr, rows, a.data(), ar, tok, got.data(), ldy, scratch.get());
        const std::string what = std::string(ks.isa) + " " + kind + " " + type_name(uint32_t(wt)) +
                                 " n=" + std::to_string(n) + " rows=" + std::to_string(rows) +
                                 " tok=" + std::to_string(tok) + (raw ? " raw" : "");
        for (int64_t t = 0; t < tok; ++t) {
          for (int64_t r = 0; r < int64_t(ldy); ++r) {
            const size_t i = size_t(t) * ldy + size_t(r);
            if (r >= rows) {
              EXPECT_EQ(got[i], -7.f) << what << ": wrote outside the tile at t=" << t << " r=" << r;
              if (got[i] != -7.f) return worst;
              continue;
            }
            const double scale = abs_dot(wt, w.data() + size_t(r) * wr, a.data() + size_t(t) * ar, n);
            const double err = std::fabs(double(got[i]) - double(want[i]));
            const bool ok = std::isfinite(got[i]) && err <= 1e-5 * scale;
            EXPECT_TRUE(ok) << what << " t=" << t << " r=" << r << ": got " << got[i] << " ref " << want[i]
                            << " sum|wx| " << scale;
            if (!ok) return worst;
            if (scale > 0) worst = std::max(worst, err / scale);
            if (!vs_vec_dot) continue;
            const float dec = ks.vec_dot[int(wt)](n, w.data() + size_t(r) * wr, a.data() + size_t(t) * ar);
            const bool same = ks.gemm_reordered[int(wt)] ? std::fabs(double(got[i]) - double(dec)) <= 2e-5 * scale
                                                         : got[i] == dec;
            EXPECT_TRUE(same) << what << " t=" << t << " r=" << r << ": " << got[i] << " vs this set's vec_dot " << dec
                              << (ks.gemm_reordered[int(wt)] ? "" : " (must be bit-identical)");
            if (!same) return worst;
          }
        }
        ++*cases;
      }
    }
  }
  return worst;
}

TEST(Gemm, EverySetMatchesReference) {
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  const KernelSet& ref = *sets[0];
  std::mt19937 rng(1234);
  const Shapes shapes{{1, 2, 3, 5, 28, 29}, {1, 2, 3, 4, 5, 7, 9, 13, 16, 17, 31, 33, 48}, {1, 2, 3, 4, 5, 6, 7, 9, 11, 17, 40}, 5};
  int checked = 0;
  for (int s = 1; s < n_sets; ++s) {
    const KernelSet& ks = *sets[s];
    for (T wt : kGemmTypes) {
      if (!ks.gemm[int(wt)]) continue;
      ++checked;
      ASSERT_NE(ks.gemm[int(wt)], ref.gemm[int(wt)]) << ks.isa << ": a SIMD set must not inherit the reference gemm";
      int cases = 0;
      const double worst = check_against_reference(ref, ks, wt, ks.gemm[int(wt)], ks.gemm_scratch[int(wt)], "gemm",
                                                   shapes, true, rng, &cases);
      if (HasFailure()) return;
      std::printf("[ %s ] gemm %-5s %d shapes, worst |simd-ref|/sum|wx| = %.2e\n", ks.isa,
                  type_name(uint32_t(wt)).c_str(), cases, worst);
    }
  }
  if (checked == 0) GTEST_SKIP() << "no SIMD kernel set with a gemm kernel on this CPU";
}

// matmul_multi with T > 1 (GEMM where the set has it) against T calls with
// T == 1 (the set's gemv, or vec_dot), fused jobs of q4_0, q8_0 and f32 (no gemm: the fallback
// loop) weights, on every set and 1-3 threads: bit-identical (within
// tolerance where the set's gemm is not exact).
TEST(Gemm, MatmulPrefillMatchesDecode) {
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  struct Restore {  // put the active set back even when an assertion returns early
    std::string isa = kernels().isa;
    ~Restore() { select_kernels(isa.c_str()); }
  } restore;
  std::mt19937 rng(99);
  const int64_t cols = 7 * 32;
  struct W {
    T type;
    int64_t rows;
  };
  const W shapes[] = {{T::Q4_0, 45}, {T::Q8_0, 22}, {T::F32, 6}, {T::Q4_0, 3}};
  std::vector<std::vector<uint8_t>> data;
  std::vector<WeightView> views;
  for (const W& s : shapes) {
    const auto x = gaussian(size_t(s.rows * cols), rng, 0.1f);
    data.push_back(quantize_rows(s.type, x, s.rows, cols));
  }
  for (size_t j = 0; j < data.size(); ++j)
    views.push_back(WeightView{shapes[j].type, cols, shapes[j].rows, data[j].data()});

  for (int s = 0; s < n_sets; ++s) {
    select_kernels(sets[s]->isa);
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      for (int64_t T_ : {2, 5, 37}) {
        // Large enough x to cross the parallel threshold with 37 tokens.
        const auto x = gaussian(size_t(T_ * cols), rng);
        for (int n_jobs : {1, 4}) {
          std::vector<std::vector<float>> y_multi, y_single;
          std::vector<MatmulJob> jobs;
          for (int j = 0; j < n_jobs; ++j) {
            y_multi.emplace_back(size_t(T_ * views[size_t(j)].rows), -1.f);
            y_single.emplace_back(size_t(T_ * views[size_t(j)].rows), -1.f);
          }
          for (int j = 0; j < n_jobs; ++j) jobs.push_back(MatmulJob{&views[size_t(j)], y_multi[size_t(j)].data()});
          const Scratch scratch(matmul_scratch_bytes(jobs.data(), n_jobs, T_, threads));
          matmul_multi(pool, jobs.data(), n_jobs, x.data(), T_, scratch.get());
          for (int64_t t = 0; t < T_; ++t) {
            for (int j = 0; j < n_jobs; ++j) {
              const WeightView& w = views[size_t(j)];
              std::vector<float> y1(size_t(w.rows));
              // A plan for T_ rows covers any call with fewer (the session
              // plans at its batch size, then decodes one token at a time);
              // a separate plan for 1 row on every other call.
              const Scratch s1(t % 2 ? matmul_scratch_bytes(w, 1, threads) : 0);
              matmul(pool, w, x.data() + size_t(t * cols), 1, y1.data(), t % 2 ? s1.get() : scratch.get());
              std::copy(y1.begin(), y1.end(), y_single[size_t(j)].begin() + t * w.rows);
            }
          }
          for (int j = 0; j < n_jobs; ++j) {
            const WeightView& w = views[size_t(j)];
            const bool exact = !sets[s]->gemm_reordered[int(w.type)] || !sets[s]->gemm[int(w.type)];
            std::vector<float> wf(static_cast<size_t>(cols));
            for (size_t i = 0; i < y_multi[size_t(j)].size(); ++i) {
              const size_t t = i / size_t(w.rows), r = i % size_t(w.rows);
              const std::string what = std::string(sets[s]->isa) + " threads=" + std::to_string(threads) +
                                       " T=" + std::to_string(T_) + " job " + std::to_string(j) + " (" +
                                       type_name(uint32_t(w.type)) + ") t=" + std::to_string(t) +
                                       " r=" + std::to_string(r);
              if (exact) {
                ASSERT_EQ(y_multi[size_t(j)][i], y_single[size_t(j)][i]) << what;
                continue;
              }
              dequantize_row(w.type, w.data + r * w.row_bytes(), wf.data(), cols);
              double scale = 0;
              for (int64_t c = 0; c < cols; ++c) scale += std::fabs(double(wf[size_t(c)]) * x[t * size_t(cols) + size_t(c)]);
              ASSERT_LE(std::fabs(double(y_multi[size_t(j)][i]) - y_single[size_t(j)][i]), 2e-5 * scale) << what;
            }
          }
        }
      }
    }
  }
}

}  // namespace

// Rows long enough that the kernels' token blocks (a few hundred KB of packed
// activations) hold only a few tokens, and matmul's activation blocks only 16:
// the loops over token blocks in the kernels and in matmul_multi, with
// partial last blocks. Still bit-identical to vec_dot (where not gemm_reordered).
TEST(Gemm, LongRowsSplitTokenBlocks) {
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  struct Restore {
    std::string isa = kernels().isa;
    ~Restore() { select_kernels(isa.c_str()); }
  } restore;
  std::mt19937 rng(5);
  const int64_t rows = 6, tok = 37;
  for (T wt : kGemmTypes) {
    // Odd block counts (a trailing half step in the pair-wise kernels).
    const int64_t bs = traits(wt).block_size, n = bs == 32 ? 32 * 1821 : bs == 1 ? 58623 : 256 * 229;
    const T at = traits(wt).vec_dot_type;
    const auto w = quantize_rows(wt, gaussian(size_t(rows * n), rng, 0.05f), rows, n);
    const auto x = gaussian(size_t(tok * n), rng);
    const auto a = quantize_rows(at, x, tok, n);
    const size_t wr = row_size(wt, n), ar = row_size(at, n);
    const WeightView view{wt, n, rows, w.data()};
    for (int s = 0; s < n_sets; ++s) {
      const KernelSet& ks = *sets[s];
      if (!ks.gemm[int(wt)]) continue;
      std::vector<float> y(size_t(tok * rows), -7.f);
      {
        const Scratch scratch(gemm_scratch_bytes(ks.gemm_scratch[int(wt)], n, rows, tok));
        ks.gemm[int(wt)](n, w.data(), wr, rows, a.data(), ar, tok, y.data(), size_t(rows), scratch.get());
      }
      // Bit-identical where the set's gemm is exact, else within tolerance.
      auto check = [&](float got, int64_t t, int64_t r, const char* what) {
        const float dec = ks.vec_dot[int(wt)](n, w.data() + size_t(r) * wr, a.data() + size_t(t) * ar);
        if (!ks.gemm_reordered[int(wt)]) {
          ASSERT_EQ(got, dec) << ks.isa << what << type_name(uint32_t(wt)) << " t=" << t << " r=" << r;
        } else {
          const double scale = abs_dot(wt, w.data() + size_t(r) * wr, a.data() + size_t(t) * ar, n);
          ASSERT_LE(std::fabs(double(got) - dec), 2e-5 * scale) << ks.isa << what << type_name(uint32_t(wt)) << " t=" << t << " r=" << r;
        }
      };
      for (int64_t t = 0; t < tok; ++t)
        for (int64_t r = 0; r < rows; ++r) check(y[size_t(t * rows + r)], t, r, " ");
      // matmul_multi, 2 threads: T = 37 in blocks of 16 tokens.
      select_kernels(ks.isa);
      ThreadPool pool(2);
      const Scratch scratch(matmul_scratch_bytes(view, tok, 2));
      std::vector<float> ym(size_t(tok * rows), -7.f);
      matmul(pool, view, x.data(), tok, ym.data(), scratch.get());
      for (int64_t t = 0; t < tok; ++t)
        for (int64_t r = 0; r < rows; ++r) check(ym[size_t(t * rows + r)], t, r, " matmul ");
    }
  }
}

// The decode kernels (KernelSet::gemv): one activation row (and, rarely, a
// few) over any number of weight rows, against the scalar reference within
// the kernels' tolerance; y cells outside the rows written stay untouched.
TEST(Gemv, EverySetMatchesReference) {
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  const KernelSet& ref = *sets[0];
  std::mt19937 rng(77);
  const Shapes shapes{{1, 2, 3, 4, 5, 7, 28, 29, 152}, {1, 2, 3, 4, 5, 7, 9, 16, 33}, {1, 2}, 29};
  int checked = 0;
  for (int s = 1; s < n_sets; ++s) {
    const KernelSet& ks = *sets[s];
    for (T wt : kGemmTypes) {
      if (!ks.gemv[int(wt)]) continue;
      ++checked;
      int cases = 0;
      const double worst = check_against_reference(ref, ks, wt, ks.gemv[int(wt)], ks.gemv_scratch[int(wt)], "gemv",
                                                   shapes, false, rng, &cases);
      if (HasFailure()) return;
      std::printf("[ %s ] gemv %-5s %d shapes, worst |simd-ref|/sum|wx| = %.2e\n", ks.isa,
                  type_name(uint32_t(wt)).c_str(), cases, worst);
    }
  }
  if (checked == 0) GTEST_SKIP() << "no kernel set with a gemv kernel on this CPU";
}

// A gemv that serves several tokens per read of a row (gemv_batch: a
// batched decode step) gives each token bit for bit what it gets alone:
// the same float operations in the same order. Awkward sizes: tails of the
// 4-block groups, 1..33 rows, every token count up to the batch.
TEST(Gemv, BatchedTokensEqualEachAloneBitForBit) {
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  std::mt19937 rng(91);
  int checked = 0;
  for (int s = 1; s < n_sets; ++s) {
    const KernelSet& ks = *sets[s];
    for (T wt : kGemmTypes) {
      const int batch = ks.gemv_batch[int(wt)];
      if (!ks.gemv[int(wt)] || batch < 2) continue;
      ++checked;
      for (int64_t blocks : {1, 3, 4, 5, 8, 9, 29, 152}) {
        for (int64_t rows : {1, 2, 7, 9, 33}) {
          const int64_t n = blocks * traits(wt).block_size;
          const auto w = quantize_rows(wt, gaussian(size_t(rows * n), rng), rows, n);
          const T at = traits(wt).vec_dot_type;
          const auto a = quantize_rows(at, gaussian(size_t(batch * n), rng, 3.f), batch, n);
          const size_t wr = row_size(wt, n), ar = row_size(at, n), ldy = size_t(rows + 1);
          for (int tok = 2; tok <= batch; ++tok) {
            std::vector<float> got(size_t(tok) * ldy, -7.f), one(ldy, -7.f);
            const Scratch sc(gemm_scratch_bytes(ks.gemv_scratch[int(wt)], n, rows, tok));
            ks.gemv[int(wt)](n, w.data(), wr, rows, a.data(), ar, tok, got.data(), ldy, sc.get());
            for (int t = 0; t < tok; ++t) {
              const Scratch s1(gemm_scratch_bytes(ks.gemv_scratch[int(wt)], n, rows, 1));
              ks.gemv[int(wt)](n, w.data(), wr, rows, a.data() + size_t(t) * ar, ar, 1, one.data(), ldy, s1.get());
              for (int64_t r = 0; r < rows; ++r)
                ASSERT_EQ(got[size_t(t) * ldy + size_t(r)], one[size_t(r)])
                    << ks.isa << " " << type_name(uint32_t(wt)) << " n=" << n << " rows=" << rows << " tok=" << tok
                    << " t=" << t << " r=" << r;
              ASSERT_EQ(got[size_t(t) * ldy + size_t(rows)], -7.f) << "wrote past the rows";
            }
          }
        }
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "no kernel set with a batched gemv on this CPU";
}

// matmul_scratch_bytes: the quantized activations, then one area per thread,
// the same size for each (adding a thread adds one area, a multiple of 64
// bytes); a decode (T = 1) area is small (the GEMVs keep one prepared token,
// not packed weights): at most 4 bytes per element of a row on every set
// (19 KB for a 4864-wide row). Prints the per-thread bytes of the
// qwen2.5-0.5b matrices at T = 512 and T = 1.
TEST(Gemm, ScratchPerThread) {
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  struct Restore {
    std::string isa = kernels().isa;
    ~Restore() { select_kernels(isa.c_str()); }
  } restore;
  struct M {
    const char* name;
    int64_t cols, rows;
  };
  const M mats[] = {{"attn_q/o", 896, 896}, {"ffn_up", 896, 4864}, {"ffn_down", 4864, 896}, {"7b ffn_down", 18944, 3584}};
  for (int s = 0; s < n_sets; ++s) {
    select_kernels(sets[s]->isa);
    for (T wt : {T::Q4_0, T::Q5_0, T::Q8_0, T::Q4_K, T::Q6_K, T::F16}) {
      for (const M& m : mats) {
        if (m.cols % traits(wt).block_size) continue;
        const WeightView w{wt, m.cols, m.rows, nullptr};
        for (int64_t T_ : {int64_t(512), int64_t(1)}) {
          const size_t one = matmul_scratch_bytes(w, T_, 1), two = matmul_scratch_bytes(w, T_, 2);
          const size_t per_thread = two - one;
          EXPECT_EQ(matmul_scratch_bytes(w, T_, 5), one + 4 * per_thread) << sets[s]->isa;
          EXPECT_EQ(per_thread % 64, 0u);
          if (T_ == 1) {
            EXPECT_LE(per_thread, size_t(4 * m.cols)) << sets[s]->isa << " " << type_name(uint32_t(wt)) << " " << m.name;
          }
          std::printf("[ %s ] %-5s %-12s T=%-3d per-thread %7zu B, activations %7zu B\n", sets[s]->isa,
                      type_name(uint32_t(wt)).c_str(), m.name, int(T_), per_thread, one - per_thread);
        }
      }
    }
  }
}
