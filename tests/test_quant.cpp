// Tests of the scalar reference quantizers, dequantizers and dot products
// (tensor/quant_legacy.cpp, tensor/quant_k.cpp, tensor/quant_iq4.cpp,
// tensor/ops.cpp):
//  - round-trip error per type on several input distributions and row lengths,
//  - vec_dot's integer math against a float64 dot of the dequantized rows,
//  - vec_dot against the true float dot, within the activation-quantization error,
//  - block sizes against the type table,
//  - hand-made blocks that pin ggml's bit layouts,
//  - f16 / bf16 conversions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fp16.h"
#include "tensor/blocks.h"
#include "tensor/types.h"

using namespace edgellm;

namespace {

using T = GgmlType;

// Round-trip RMS error / RMS of input, per type, in two tiers: "typical" rows
// (gaussian, uniform, all-positive) and "hard" rows (rare 30x outliers,
// Cauchy-like tails) where one large value coarsens its whole block's grid.
// Bounds sit ~1.25-1.5x above the worst case measured over the distributions
// and lengths below (printed by QuantRoundTrip.ErrorWithinBound), tight enough
// to catch a wrong rounding or a broken search, loose enough not to flake.
struct TypeCase {
  T type;
  double typical, hard;
};
// iq4 bounds, shared by the tests below (measured: iq4_nl typical .0775,
// hard .133, gaussian .0764; iq4_xs .0773, .116, .0774; q4_0 for comparison
// .0898, .162, .0846).
constexpr double IQ4_NL_TYPICAL = 0.10, IQ4_NL_HARD = 0.17, IQ4_XS_TYPICAL = 0.10, IQ4_XS_HARD = 0.15;
constexpr double IQ4_NL_GAUSS = 0.082, IQ4_XS_GAUSS = 0.083;
const TypeCase kTypes[] = {
    {T::F32, 0.0, 0.0},        {T::F16, 3e-4, 4e-4},      {T::BF16, 2.5e-3, 2.5e-3},
    {T::Q8_0, 0.0075, 0.016},  {T::Q4_0, 0.11, 0.21},     {T::Q4_1, 0.10, 0.16},
    {T::Q5_0, 0.055, 0.12},    {T::Q5_1, 0.048, 0.075},   {T::Q2_K, 0.37, 0.48},
    {T::Q3_K, 0.19, 0.23},     {T::Q4_K, 0.09, 0.135},    {T::Q5_K, 0.046, 0.07},
    {T::Q6_K, 0.023, 0.045},   {T::Q8_1, 0.0075, 0.017},  {T::Q8_K, 0.009, 0.04},
    {T::IQ4_NL, IQ4_NL_TYPICAL, IQ4_NL_HARD}, {T::IQ4_XS, IQ4_XS_TYPICAL, IQ4_XS_HARD},
};
// "tiny" rows (values ~1e-4) push the fp16 super-block scales into fp16's
// subnormal range (q6_K's d ~ 1e-7 has 1-2 significant bits), a limit of the
// file format itself, not of the quantizer: they get their own bound.
// iq4_xs is hit hardest: its d is the largest sub-block scale / 32, ~amax/4000,
// which for ~1e-4 values is at fp16's smallest subnormal (6e-8): measured .21.
double tiny_bound(const TypeCase& tc) { return tc.type == T::IQ4_XS ? 0.26 : std::max(tc.typical, 0.15); }

bool is_weight_type(T t) { return t != T::Q8_1 && t != T::Q8_K; }

enum class Dist { Gaussian, Uniform, Outliers, Positive, HeavyTail, Zero, Tiny };
const Dist kDists[] = {Dist::Gaussian, Dist::Uniform, Dist::Outliers, Dist::Positive,
                       Dist::HeavyTail, Dist::Zero, Dist::Tiny};
const char* dist_name(Dist d) {
  switch (d) {
    case Dist::Gaussian: return "gaussian";
    case Dist::Uniform: return "uniform";
    case Dist::Outliers: return "outliers";
    case Dist::Positive: return "positive";
    case Dist::HeavyTail: return "heavytail";
    case Dist::Zero: return "zero";
    case Dist::Tiny: return "tiny";
  }
  return "?";
}

std::vector<float> make_row(Dist d, int64_t n, std::mt19937& rng) {
  std::vector<float> x(static_cast<size_t>(n), 0.f);
  std::normal_distribution<float> g(0.f, 1.f);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& v : x) {
    switch (d) {
      case Dist::Gaussian: v = 0.02f * g(rng); break;  // LLM-weight-like scale
      case Dist::Uniform: v = u(rng); break;
      case Dist::Outliers: v = g(rng) * (u(rng) > 0.98f ? 30.f : 1.f); break;
      case Dist::Positive: v = 3.f + std::fabs(g(rng)); break;  // needs a real min
      case Dist::HeavyTail: v = g(rng) / std::max(0.05f, std::fabs(g(rng))); break;  // Cauchy-ish
      case Dist::Zero: v = 0.f; break;
      case Dist::Tiny: v = 1e-4f * g(rng); break;  // scales near fp16's subnormal range
    }
  }
  return x;
}

std::vector<uint8_t> quantize(T t, const std::vector<float>& x) {
  std::vector<uint8_t> q(row_size(t, int64_t(x.size())));
  quantize_row(t, x.data(), q.data(), int64_t(x.size()));
  return q;
}
std::vector<float> dequantize(T t, const std::vector<uint8_t>& q, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  dequantize_row(t, q.data(), y.data(), n);
  return y;
}

double rel_rms_error(const std::vector<float>& x, const std::vector<float>& y) {
  double e = 0, s = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    e += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    s += double(x[i]) * x[i];
  }
  return s == 0 ? std::sqrt(e) : std::sqrt(e / s);
}

double norm2(const std::vector<float>& v) {
  double s = 0;
  for (float f : v) s += double(f) * f;
  return std::sqrt(s);
}

const int64_t kBlockCounts[] = {1, 3, 7};

}  // namespace

// ---- (1) round-trip error --------------------------------------------------

TEST(QuantRoundTrip, ErrorWithinBound) {
  std::mt19937 rng(1234);
  for (const TypeCase& tc : kTypes) {
    const int64_t bs = traits(tc.type).block_size == 1 ? 32 : traits(tc.type).block_size;
    double worst_typical = 0, worst_hard = 0;
    for (Dist d : kDists)
      for (int64_t nb : kBlockCounts) {
        // Aggregate several rows so the bound is on a stable statistic.
        double e = 0, s = 0;
        for (int r = 0; r < 8; ++r) {
          const auto x = make_row(d, nb * bs, rng);
          const auto y = dequantize(tc.type, quantize(tc.type, x), nb * bs);
          for (size_t i = 0; i < x.size(); ++i) {
            ASSERT_TRUE(std::isfinite(y[i])) << traits(tc.type).name << " " << dist_name(d);
            e += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
            s += double(x[i]) * x[i];
          }
        }
        if (d == Dist::Zero) {
          EXPECT_EQ(e, 0.0) << traits(tc.type).name << ": an all-zero row must round-trip exactly";
          continue;
        }
        const double rel = std::sqrt(e / s);
        const bool hard = d == Dist::Outliers || d == Dist::HeavyTail;
        const double bound = d == Dist::Tiny ? tiny_bound(tc) : hard ? tc.hard : tc.typical;
        EXPECT_LE(rel, bound) << traits(tc.type).name << " " << dist_name(d) << " blocks=" << nb;
        double& w = hard ? worst_hard : worst_typical;
        if (d != Dist::Tiny) w = std::max(w, rel);
      }
    std::printf("[quant] %-5s rel RMS error: typical %.5f (bound %.4f), hard %.5f (bound %.4f)\n",
                traits(tc.type).name, worst_typical, tc.typical, worst_hard, tc.hard);
  }
}

// Typical (Gaussian) error, tighter than the worst case above: these are the
// numbers a user compares with llama.cpp's published per-type errors.
TEST(QuantRoundTrip, GaussianErrorTypical) {
  struct B { T t; double max; };
  // Measured: q8_0 .0052, q6_K .0176, q5_0 .0432, q5_1 .0383, q5_K .0361,
  // q4_0 .0846, q4_1 .0788, q4_K .0699, q3_K .1539, q2_K .2854.
  const B bounds[] = {{T::Q8_0, 0.006}, {T::Q6_K, 0.02}, {T::Q5_0, 0.048}, {T::Q5_1, 0.043},
                      {T::Q5_K, 0.04},  {T::Q4_0, 0.093}, {T::Q4_1, 0.087}, {T::Q4_K, 0.078},
                      {T::Q3_K, 0.17},  {T::Q2_K, 0.31}, {T::IQ4_NL, IQ4_NL_GAUSS}, {T::IQ4_XS, IQ4_XS_GAUSS}};
  std::mt19937 rng(99);
  for (const B& b : bounds) {
    const auto x = make_row(Dist::Gaussian, 16 * 256, rng);
    const double rel = rel_rms_error(x, dequantize(b.t, quantize(b.t, x), int64_t(x.size())));
    EXPECT_LE(rel, b.max) << traits(b.t).name;
    std::printf("[quant] %-5s gaussian rel RMS error %.5f\n", traits(b.t).name, rel);
  }
}

// The point of iq4_nl: the same 4.5 bits per weight as q4_0, on a grid
// shaped like the weights, so a bell-shaped row loses less. Same rows for
// both types; iq4_xs (4.25 bits) must also beat q4_0.
TEST(QuantRoundTrip, Iq4BeatsQ4_0OnGaussianRows) {
  std::mt19937 rng(2024);
  for (int64_t n : {int64_t(32 * 7), int64_t(256 * 3), int64_t(16 * 256)}) {
    const auto x = make_row(Dist::Gaussian, n, rng);
    const double q4 = rel_rms_error(x, dequantize(T::Q4_0, quantize(T::Q4_0, x), n));
    const double nl = rel_rms_error(x, dequantize(T::IQ4_NL, quantize(T::IQ4_NL, x), n));
    EXPECT_LT(nl, q4) << "n=" << n;
    EXPECT_LE(nl, IQ4_NL_GAUSS) << "n=" << n;
    if (n % 256 == 0) {
      const double xs = rel_rms_error(x, dequantize(T::IQ4_XS, quantize(T::IQ4_XS, x), n));
      EXPECT_LT(xs, q4) << "n=" << n;
      EXPECT_LE(xs, IQ4_XS_GAUSS) << "n=" << n;
      std::printf("[quant] n=%-5lld rel RMS error: q4_0 %.5f iq4_nl %.5f iq4_xs %.5f\n", (long long)n, q4, nl, xs);
    }
  }
}

TEST(QuantRoundTrip, DeterministicAndRejectsBadLength) {
  std::mt19937 rng(7);
  for (const TypeCase& tc : kTypes) {
    const int64_t bs = traits(tc.type).block_size;
    const auto x = make_row(Dist::Outliers, 3 * std::max<int64_t>(bs, 32), rng);
    EXPECT_EQ(quantize(tc.type, x), quantize(tc.type, x)) << traits(tc.type).name;
    if (bs > 1) {
      std::vector<uint8_t> buf(4096);
      std::vector<float> out(static_cast<size_t>(bs + 1));
      EXPECT_THROW(quantize_row(tc.type, x.data(), buf.data(), bs + 1), Error) << traits(tc.type).name;
      EXPECT_THROW(dequantize_row(tc.type, buf.data(), out.data(), bs + 1), Error) << traits(tc.type).name;
    }
  }
  std::vector<uint8_t> buf(64);
  EXPECT_THROW(vec_dot(T::Q4_0, 33, buf.data(), buf.data()), Error);
  EXPECT_THROW(vec_dot(T::Q8_K, 256, buf.data(), buf.data()), Error);  // activation-only format
}

// ---- (2) + (3) vec_dot -----------------------------------------------------

namespace {

// Float64 dot of the dequantized rows; for q8_1 activations the offset term
// uses the block's stored s (that is what s is for), not d * sum(qs).
double exact_dot(T wt, const std::vector<uint8_t>& wq, const std::vector<float>& w,
                 const std::vector<uint8_t>& aq, const std::vector<float>& a) {
  double dot = 0;
  for (size_t i = 0; i < w.size(); ++i) dot += double(w[i]) * a[i];
  if (traits(wt).vec_dot_type == T::Q8_1) {
    const size_t nb = w.size() / 32;
    for (size_t b = 0; b < nb; ++b) {
      const auto* ab = reinterpret_cast<const block_q8_1*>(aq.data()) + b;
      double sum_a = 0;
      for (int j = 0; j < 32; ++j) sum_a += a[b * 32 + j];
      // the weights' m: q4_1 and q5_1 both start with d, m
      const uint16_t m = reinterpret_cast<const uint16_t*>(wq.data() + b * traits(wt).type_size)[1];
      dot += double(fp16_to_f32(m)) * (double(fp16_to_f32(ab->s)) - sum_a);
    }
  }
  return dot;
}

}  // namespace

TEST(QuantVecDot, MatchesDequantizedDotExactly) {
  std::mt19937 rng(42);
  for (const TypeCase& tc : kTypes) {
    if (!is_weight_type(tc.type)) continue;
    const T at = traits(tc.type).vec_dot_type;
    const int64_t bs = std::max<int64_t>(traits(tc.type).block_size, traits(at).block_size == 1 ? 32 : traits(at).block_size);
    for (Dist dw : kDists)
      for (Dist da : {Dist::Gaussian, Dist::Outliers, Dist::Positive, Dist::Zero})
        for (int64_t nb : kBlockCounts) {
          const int64_t n = nb * bs;
          const auto xw = make_row(dw, n, rng), xa = make_row(da, n, rng);
          const auto wq = quantize(tc.type, xw), aq = quantize(at, xa);
          const auto w = dequantize(tc.type, wq, n), a = dequantize(at, aq, n);
          const double want = exact_dot(tc.type, wq, w, aq, a);
          const double got = vec_dot(tc.type, n, wq.data(), aq.data());
          // Float rounding of per-block partial sums: scaled by the size of
          // the terms (for K-quants the scale and min terms can cancel, so use
          // the block's absmax rather than |w_i|).
          double mag = 0;
          const int64_t wb = traits(tc.type).block_size;
          for (int64_t b = 0; b < n / wb; ++b) {
            float amax = 0;
            for (int64_t i = b * wb; i < (b + 1) * wb; ++i) amax = std::max(amax, std::fabs(w[size_t(i)]));
            for (int64_t i = b * wb; i < (b + 1) * wb; ++i) mag += 2.0 * amax * std::fabs(a[size_t(i)]);
          }
          EXPECT_LE(std::fabs(got - want), 1e-5 * mag)
              << traits(tc.type).name << " w=" << dist_name(dw) << " a=" << dist_name(da) << " n=" << n
              << " got " << got << " want " << want;
        }
  }
}

TEST(QuantVecDot, CloseToFloatDotWithinActivationError) {
  std::mt19937 rng(4242);
  for (const TypeCase& tc : kTypes) {
    if (!is_weight_type(tc.type)) continue;
    const T at = traits(tc.type).vec_dot_type;
    const int64_t bs = std::max<int64_t>(traits(tc.type).block_size, traits(at).block_size == 1 ? 32 : traits(at).block_size);
    for (Dist dw : {Dist::Gaussian, Dist::Outliers, Dist::Positive})
      for (Dist da : {Dist::Gaussian, Dist::Outliers, Dist::HeavyTail})
        for (int64_t nb : kBlockCounts) {
          const int64_t n = nb * bs;
          const auto xw = make_row(dw, n, rng), x = make_row(da, n, rng);
          const auto wq = quantize(tc.type, xw), aq = quantize(at, x);
          const auto w = dequantize(tc.type, wq, n), a = dequantize(at, aq, n);
          double want = 0;
          for (int64_t i = 0; i < n; ++i) want += double(w[size_t(i)]) * x[size_t(i)];
          const double got = vec_dot(tc.type, n, wq.data(), aq.data());
          // Cauchy-Schwarz: |w.(a-x)| <= |w| |a-x|, plus float rounding and,
          // for q8_1, the fp16 rounding of s (<= 2^-11 |s| per block).
          std::vector<float> diff(static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i) diff[size_t(i)] = a[size_t(i)] - x[size_t(i)];
          double tol = norm2(w) * norm2(diff) * 1.001 + 1e-5 * norm2(w) * norm2(x);
          if (at == T::Q8_1) {
            for (int64_t b = 0; b < n / 32; ++b) {
              const auto* ab = reinterpret_cast<const block_q8_1*>(aq.data()) + b;
              const uint16_t m = reinterpret_cast<const uint16_t*>(wq.data() + b * traits(tc.type).type_size)[1];
              tol += std::fabs(fp16_to_f32(m)) * (std::fabs(fp16_to_f32(ab->s)) * 1e-3 + 1e-6);
            }
          }
          EXPECT_LE(std::fabs(got - want), tol)
              << traits(tc.type).name << " w=" << dist_name(dw) << " a=" << dist_name(da) << " n=" << n;
          // And in plain terms: int8 activations cost well under 1% of |w||x|.
          EXPECT_LE(std::fabs(got - want), 0.01 * norm2(w) * norm2(x)) << traits(tc.type).name;
        }
  }
}

TEST(QuantVecDot, ActivationSums) {
  // q8_1's s and q8_K's bsums are what the dots use for the min terms.
  std::mt19937 rng(5);
  const auto x = make_row(Dist::Outliers, 7 * 256, rng);
  const auto q1 = quantize(T::Q8_1, x);
  for (size_t b = 0; b < x.size() / 32; ++b) {
    const auto& blk = reinterpret_cast<const block_q8_1*>(q1.data())[b];
    int sum = 0;
    for (int8_t v : blk.qs) sum += v;
    EXPECT_NEAR(fp16_to_f32(blk.s), sum * fp16_to_f32(blk.d), 2e-3 * std::fabs(sum * fp16_to_f32(blk.d)) + 1e-6);
  }
  const auto qk = quantize(T::Q8_K, x);
  for (size_t b = 0; b < x.size() / 256; ++b) {
    const auto& blk = reinterpret_cast<const block_q8_K*>(qk.data())[b];
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int l = 0; l < 16; ++l) sum += blk.qs[16 * j + l];
      EXPECT_EQ(blk.bsums[j], sum);
    }
    int mx = 0;
    for (int8_t v : blk.qs) mx = std::max(mx, std::abs(int(v)));
    EXPECT_EQ(mx, 127);  // the signed max lands on the extreme level
  }
}

// ---- (4) block sizes -------------------------------------------------------

TEST(QuantLayout, BlockSizesMatchTypeTable) {
  struct S { T t; size_t size; int64_t qk; };
  const S sizes[] = {
      {T::Q4_0, sizeof(block_q4_0), QK4_0}, {T::Q4_1, sizeof(block_q4_1), QK4_1},
      {T::Q5_0, sizeof(block_q5_0), QK5_0}, {T::Q5_1, sizeof(block_q5_1), QK5_1},
      {T::Q8_0, sizeof(block_q8_0), QK8_0}, {T::Q8_1, sizeof(block_q8_1), QK8_1},
      {T::Q2_K, sizeof(block_q2_K), QK_K},  {T::Q3_K, sizeof(block_q3_K), QK_K},
      {T::Q4_K, sizeof(block_q4_K), QK_K},  {T::Q5_K, sizeof(block_q5_K), QK_K},
      {T::Q6_K, sizeof(block_q6_K), QK_K},  {T::Q8_K, sizeof(block_q8_K), QK_K},
      {T::IQ4_NL, sizeof(block_iq4_nl), 32}, {T::IQ4_XS, sizeof(block_iq4_xs), QK_K},
  };
  for (const S& s : sizes) {
    EXPECT_EQ(traits(s.t).type_size, s.size) << traits(s.t).name;
    EXPECT_EQ(traits(s.t).block_size, s.qk) << traits(s.t).name;
  }
  EXPECT_EQ(traits(T::F32).type_size, 4u);
  EXPECT_EQ(traits(T::F16).type_size, 2u);
  EXPECT_EQ(traits(T::BF16).type_size, 2u);
}

// ---- (5) hand-made blocks pinning ggml's bit layouts -------------------------

namespace {

constexpr uint16_t kHalfOne = 0x3C00, kHalfHalf = 0x3800, kHalfQuarter = 0x3400, kHalfEighth = 0x3000;

template <class Block>
std::vector<float> deq_block(T t, const Block& b) {
  std::vector<float> y(static_cast<size_t>(traits(t).block_size));
  dequantize_row(t, &b, y.data(), traits(t).block_size);
  return y;
}

}  // namespace

TEST(QuantLayout, Q4_0KnownBlock) {
  block_q4_0 b{};
  b.d = kHalfOne;
  for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | (15 - j) << 4);
  const auto y = deq_block(T::Q4_0, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], float(j - 8));        // low nibbles: first half, -8 bias
    EXPECT_EQ(y[16 + j], float(7 - j));   // high nibbles: second half
  }
  // -8 is the extreme, so d = -8 / -8 = 1 and re-quantizing gives the block back.
  block_q4_0 back{};
  quantize_row(T::Q4_0, y.data(), &back, 32);
  EXPECT_EQ(std::memcmp(&b, &back, sizeof b), 0);
}

TEST(QuantLayout, Q4_1AndQ8_0KnownBlocks) {
  block_q4_1 b{};
  b.d = kHalfHalf;
  b.m = 0xBC00;  // -1
  for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | (15 - j) << 4);
  auto y = deq_block(T::Q4_1, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * j - 1);
    EXPECT_EQ(y[16 + j], 0.5f * (15 - j) - 1);
  }
  block_q8_0 c{};
  c.d = kHalfQuarter;
  for (int j = 0; j < 32; ++j) c.qs[j] = int8_t(j - 16);
  y = deq_block(T::Q8_0, c);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], (j - 16) * 0.25f);
}

TEST(QuantLayout, Q5KnownBlocks) {
  // qh is a little-endian uint32: bit j is the 5th bit of element j.
  const uint8_t qh[4] = {0x0F, 0xF0, 0x33, 0xCC};
  const uint32_t bits = 0xCC33F00Fu;
  auto bit = [&](int i) { return int((bits >> i) & 1); };
  block_q5_0 b{};
  b.d = kHalfOne;
  std::memcpy(b.qh, qh, 4);
  for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | (15 - j) << 4);
  auto y = deq_block(T::Q5_0, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], float((j | bit(j) << 4) - 16)) << j;
    EXPECT_EQ(y[16 + j], float(((15 - j) | bit(16 + j) << 4) - 16)) << j;
  }
  block_q5_1 c{};
  c.d = kHalfOne;
  c.m = kHalfHalf;
  std::memcpy(c.qh, qh, 4);
  std::memcpy(c.qs, b.qs, 16);
  y = deq_block(T::Q5_1, c);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], float(j | bit(j) << 4) + 0.5f);
    EXPECT_EQ(y[16 + j], float((15 - j) | bit(16 + j) << 4) + 0.5f);
  }
}

TEST(QuantLayout, Q2_KKnownBlocks) {
  block_q2_K b{};
  b.d = kHalfOne;
  b.dmin = kHalfHalf;
  for (int k = 0; k < 16; ++k) b.scales[k] = uint8_t(k | (15 - k) << 4);  // scale low, min high
  // Three qs patterns: 0xE4 puts value s at bit pair s (pins the shift order:
  // pair s = elements 32s..32s+31 of each 128); the others pin which byte
  // (32*(i/128) + i%32) holds element i.
  for (int pattern = 0; pattern < 3; ++pattern) {
    for (int byte = 0; byte < 64; ++byte)
      b.qs[byte] = pattern == 0 ? 0xE4 : pattern == 1 ? (byte < 32 ? 0x00 : 0xFF) : (byte % 32 == 5 ? 0xFF : 0x00);
    const auto y = deq_block(T::Q2_K, b);
    for (int i = 0; i < 256; ++i) {
      const int q = pattern == 0 ? (i % 128) / 32 : pattern == 1 ? (i < 128 ? 0 : 3) : (i % 32 == 5 ? 3 : 0);
      const int k = i / 16;
      EXPECT_EQ(y[i], float(k * q) - 0.5f * float(15 - k)) << "pattern " << pattern << " i " << i;
    }
  }
}

TEST(QuantLayout, Q3_KKnownBlock) {
  block_q3_K b{};
  b.d = kHalfOne;
  // Low nibbles of the 16 six-bit scales: bytes 0..7 low nibble = scales
  // 0..7, high nibble = scales 8..15; top 2 bits of scale j at bit pair j/4
  // of byte 8 + j%4. So 0x21 / 0xE4 give scales {1, 17, 34, 50} per group of 4,
  // i.e. {-31, -15, 2, 18} after the -32 bias.
  for (int j = 0; j < 8; ++j) b.scales[j] = 0x21;
  for (int j = 8; j < 12; ++j) b.scales[j] = 0xE4;
  const int want_scale[4] = {-31, -15, 2, 18};
  for (int j = 0; j < 16; ++j) EXPECT_EQ(q3k_scale(b.scales, j) - 32, want_scale[j / 4]) << j;
  // hmask bit i/32 of byte i%32 set = "high bit set" (no -4): 0x0F sets it
  // for elements 0..127 only.
  std::memset(b.hmask, 0x0F, 32);
  std::memset(b.qs, 0xE4, 64);
  const auto y = deq_block(T::Q3_K, b);
  for (int i = 0; i < 256; ++i) {
    const int v = (i % 128) / 32 - (i < 128 ? 0 : 4);
    EXPECT_EQ(y[i], float(want_scale[i / 64] * v)) << i;
  }
}

TEST(QuantLayout, Q4_KAndQ5_KScalePacking) {
  // The 12 bytes below were packed by hand from these 6-bit values following
  // ggml's layout (see get_scale_min_k4 in tensor/blocks.h).
  const uint8_t sc[8] = {1, 17, 33, 63, 5, 40, 22, 60}, mn[8] = {62, 3, 48, 0, 31, 16, 59, 9};
  const uint8_t packed[12] = {0x01, 0x91, 0x61, 0xFF, 0x7E, 0x43, 0xF0, 0x00, 0xF5, 0x08, 0xB6, 0x9C};
  for (int j = 0; j < 8; ++j) {
    uint8_t s, m;
    get_scale_min_k4(j, packed, &s, &m);
    EXPECT_EQ(s, sc[j]) << j;
    EXPECT_EQ(m, mn[j]) << j;
  }
  block_q4_K b{};
  b.d = kHalfHalf;
  b.dmin = kHalfQuarter;
  std::memcpy(b.scales, packed, 12);
  for (int byte = 0; byte < 128; ++byte) b.qs[byte] = uint8_t((byte % 32) & 15) | uint8_t(((byte % 32) >> 1) << 4);
  auto y = deq_block(T::Q4_K, b);
  // Written the way ggml's dequantizer walks the block: per 64 elements, 32
  // low nibbles then 32 high nibbles of the same 32 bytes.
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < 32; ++l) {
      const int j0 = 2 * p, j1 = 2 * p + 1;
      EXPECT_EQ(y[64 * p + l], 0.5f * sc[j0] * float(b.qs[32 * p + l] & 15) - 0.25f * mn[j0]);
      EXPECT_EQ(y[64 * p + 32 + l], 0.5f * sc[j1] * float(b.qs[32 * p + l] >> 4) - 0.25f * mn[j1]);
    }
  block_q5_K c{};
  c.d = kHalfHalf;
  c.dmin = kHalfQuarter;
  std::memcpy(c.scales, packed, 12);
  std::memcpy(c.qs, b.qs, 128);
  for (int l = 0; l < 32; ++l) c.qh[l] = uint8_t(l * 37 + 11);
  y = deq_block(T::Q5_K, c);
  // 5th bits: qh bit 2p for the low-nibble half of pair p, bit 2p+1 for the high.
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < 32; ++l) {
      const int j0 = 2 * p, j1 = 2 * p + 1;
      const int q0 = (c.qs[32 * p + l] & 15) + (c.qh[l] & (1 << (2 * p)) ? 16 : 0);
      const int q1 = (c.qs[32 * p + l] >> 4) + (c.qh[l] & (2 << (2 * p)) ? 16 : 0);
      EXPECT_EQ(y[64 * p + l], 0.5f * sc[j0] * float(q0) - 0.25f * mn[j0]);
      EXPECT_EQ(y[64 * p + 32 + l], 0.5f * sc[j1] * float(q1) - 0.25f * mn[j1]);
    }
}

TEST(QuantLayout, Q6_KKnownBlock) {
  block_q6_K b{};
  b.d = kHalfEighth;
  for (int k = 0; k < 16; ++k) b.scales[k] = int8_t(k * 9 - 70);
  for (int i = 0; i < 128; ++i) b.ql[i] = uint8_t(i * 7 + 3);
  for (int i = 0; i < 64; ++i) b.qh[i] = uint8_t(i * 13 + 5);
  const auto y = deq_block(T::Q6_K, b);
  // Per 128 elements (half h): ql[64h + l] low/high nibble -> elements l / l+64,
  // ql[64h + 32 + l] -> l+32 / l+96; qh[32h + l] bit pairs 0..3 -> l, l+32, l+64, l+96.
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const uint8_t* ql = b.ql + 64 * h;
      const uint8_t hb = b.qh[32 * h + l];
      const int q[4] = {(ql[l] & 15) | ((hb >> 0) & 3) << 4, (ql[l + 32] & 15) | ((hb >> 2) & 3) << 4,
                        (ql[l] >> 4) | ((hb >> 4) & 3) << 4, (ql[l + 32] >> 4) | ((hb >> 6) & 3) << 4};
      for (int s = 0; s < 4; ++s) {
        const int i = 128 * h + 32 * s + l;
        EXPECT_EQ(y[i], 0.125f * float(b.scales[i / 16]) * float(q[s] - 32)) << i;
      }
    }
}

TEST(QuantLayout, Q8_KKnownBlock) {
  block_q8_K b{};
  b.d = 0.5f;
  for (int i = 0; i < 256; ++i) b.qs[i] = int8_t(i - 128);
  const auto y = deq_block(T::Q8_K, b);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(y[i], 0.5f * (i - 128));
}

// The iq4 grid, spelled out (ggml's kvalues_iq4nl): nibble k means this level.
constexpr int kIq4Grid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

TEST(QuantLayout, Iq4_NLKnownBlock) {
  for (int k = 0; k < 16; ++k) EXPECT_EQ(kvalues_iq4nl[k], kIq4Grid[k]) << k;
  block_iq4_nl b{};
  b.d = kHalfHalf;
  for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | (15 - j) << 4);
  const auto y = deq_block(T::IQ4_NL, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * float(kIq4Grid[j])) << j;            // low nibbles: elements 0..15
    EXPECT_EQ(y[16 + j], 0.5f * float(kIq4Grid[15 - j])) << j;  // high nibbles: 16..31
  }
  // A block already on the grid (its max at -127 d) quantizes back to itself.
  block_iq4_nl back{};
  quantize_row(T::IQ4_NL, y.data(), &back, 32);
  EXPECT_EQ(std::memcmp(&b, &back, sizeof b), 0);
}

TEST(QuantLayout, Iq4_XSKnownBlock) {
  // Eight 6-bit scales ls (value d * (ls - 32) * grid), packed by hand: low
  // nibbles two per byte of scales_l (even sub-block low), top 2 bits at bit
  // pair j of scales_h.
  const int ls[8] = {0, 1, 17, 31, 32, 47, 62, 63};
  block_iq4_xs b{};
  b.d = kHalfHalf;
  b.scales_h = 0xFA50;
  const uint8_t scales_l[4] = {0x10, 0xF1, 0xF0, 0xFE};
  std::memcpy(b.scales_l, scales_l, 4);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(iq4xs_scale(b, j), ls[j]) << j;
  for (int j = 0; j < 8; ++j)
    for (int l = 0; l < 16; ++l) b.qs[16 * j + l] = uint8_t(((l + j) & 15) | ((3 * l + j) & 15) << 4);
  const auto y = deq_block(T::IQ4_XS, b);
  for (int j = 0; j < 8; ++j)
    for (int l = 0; l < 16; ++l) {
      const float s = 0.5f * float(ls[j] - 32);
      EXPECT_EQ(y[32 * j + l], s * float(kIq4Grid[(l + j) & 15])) << j << " " << l;
      EXPECT_EQ(y[32 * j + 16 + l], s * float(kIq4Grid[(3 * l + j) & 15])) << j << " " << l;
    }
  // And the quantizer writes the same packing: every stored scale decodes to
  // the one its sub-block was dequantized with, within 6 bits.
  std::mt19937 rng(3);
  const auto x = make_row(Dist::Outliers, 256, rng);
  block_iq4_xs q{};
  quantize_row(T::IQ4_XS, x.data(), &q, 256);
  const auto z = deq_block(T::IQ4_XS, q);
  for (int j = 0; j < 8; ++j) {
    EXPECT_GE(iq4xs_scale(q, j), 0);
    EXPECT_LE(iq4xs_scale(q, j), 63);
  }
  EXPECT_LE(rel_rms_error(x, z), IQ4_XS_HARD);
}

// ---- (6) f16 / bf16 --------------------------------------------------------

namespace {
float pow2(int e) { return std::ldexp(1.0f, e); }
}  // namespace

TEST(QuantHalf, Fp16RoundTripAllPatterns) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_f32(uint16_t(h));
    const uint16_t back = f32_to_fp16(f);
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) {  // NaN: stays a NaN of the same sign
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_EQ(back & 0xFC00, h & 0xFC00) << h;
      EXPECT_NE(back & 0x3FF, 0) << h;
    } else {
      EXPECT_EQ(back, h) << h;
    }
  }
}

TEST(QuantHalf, Fp16KnownValues) {
  EXPECT_EQ(fp16_to_f32(0x0001), pow2(-24));          // smallest subnormal
  EXPECT_EQ(fp16_to_f32(0x03FF), 1023 * pow2(-24));   // largest subnormal
  EXPECT_EQ(fp16_to_f32(0x0400), pow2(-14));          // smallest normal
  EXPECT_EQ(fp16_to_f32(0x7BFF), 65504.f);
  EXPECT_EQ(fp16_to_f32(0x7C00), INFINITY);
  EXPECT_EQ(fp16_to_f32(0xFC00), -INFINITY);
  EXPECT_TRUE(std::signbit(fp16_to_f32(0x8000)));
  EXPECT_EQ(f32_to_fp16(65519.f), 0x7BFF);             // rounds down to max
  EXPECT_EQ(f32_to_fp16(65520.f), 0x7C00);             // rounds up to inf
  EXPECT_EQ(f32_to_fp16(1e10f), 0x7C00);
  EXPECT_EQ(f32_to_fp16(-INFINITY), 0xFC00);
  EXPECT_EQ(f32_to_fp16(1 + pow2(-11)), 0x3C00);       // tie -> even
  EXPECT_EQ(f32_to_fp16(1 + 3 * pow2(-11)), 0x3C02);   // tie -> even (up)
  EXPECT_EQ(f32_to_fp16(pow2(-25)), 0x0000);           // half the min subnormal: tie -> 0
  EXPECT_EQ(f32_to_fp16(std::nextafter(pow2(-25), 1.f)), 0x0001);
  EXPECT_EQ(f32_to_fp16(3 * pow2(-25)), 0x0002);       // 1.5 ulp: tie -> even
  EXPECT_EQ(f32_to_fp16(-1e-10f), 0x8000);             // underflow keeps the sign
  EXPECT_EQ(f32_to_fp16(1023 * pow2(-24) + pow2(-25)), 0x0400);  // subnormal rounds up into normal
  const uint16_t nan = f32_to_fp16(NAN);
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x3FF, 0);
}

TEST(QuantHalf, Bf16RoundTripAndRounding) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = bf16_to_f32(uint16_t(h));
    const uint16_t back = f32_to_bf16(f);
    if ((h & 0x7F80) == 0x7F80 && (h & 0x7F)) {
      EXPECT_TRUE(std::isnan(bf16_to_f32(back))) << h;
    } else {
      EXPECT_EQ(back, h) << h;
    }
  }
  EXPECT_EQ(f32_to_bf16(1 + pow2(-8)), 0x3F80);          // tie -> even
  EXPECT_EQ(f32_to_bf16(1 + 3 * pow2(-8)), 0x3F82);      // tie -> even (up)
  EXPECT_EQ(f32_to_bf16(1 + pow2(-8) + pow2(-20)), 0x3F81);
  EXPECT_EQ(f32_to_bf16(3.4028235e38f), 0x7F80);         // FLT_MAX rounds to inf
  EXPECT_EQ(f32_to_bf16(-INFINITY), 0xFF80);
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x000116C2u)), 0x0001);  // f32 subnormal
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(bits_to_f32(0x7F800001u)))));  // signalling NaN stays NaN
}

// ---- golden bytes from llama.cpp -------------------------------------------
// The hashes below are FNV-1a of the bytes llama.cpp's quantize_row_*_ref
// (ggml-quants.c, no imatrix: what llama-quantize writes) produced for
// golden_input(1024), and of the floats its dequantize_row_* produced from
// those bytes. The input uses only integer arithmetic and exact int->float
// conversions so it is identical on every platform.

namespace {

std::vector<float> golden_input(int n) {
  uint32_t s = 12345;
  auto next = [&s] { s = s * 1664525u + 1013904223u; return s >> 8; };
  std::vector<float> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    // Sum of three uniforms: bell-shaped, in [-3000, 3000] / 65536.
    const int v = int(next() % 2001) + int(next() % 2001) + int(next() % 2001) - 3000;
    float f = float(v) / 65536.f;
    const int block = (i / 256) % 4;
    if (block == 1) f += 0.03125f;                     // all-positive block: needs a min
    if (block == 2 && next() % 32 == 0) f *= 16.f;     // outliers
    if (block == 3 && next() % 8 != 0) f = 0.f;        // mostly zeros
    x[static_cast<size_t>(i)] = f;
  }
  return x;
}

uint64_t fnv1a(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t*>(p)[i]) * 1099511628211ull;
  return h;
}

}  // namespace

TEST(QuantGolden, BytesMatchLlamaCpp) {
#if !defined(__x86_64__)
  // The golden values were made on x86-64 without FMA; a compiler that
  // contracts a*b+c into fma elsewhere may legitimately move a rounding tie.
  GTEST_SKIP() << "golden quantizer bytes are pinned on x86-64 only";
#endif
  struct G { T t; uint64_t quant, dequant; };
  const G golden[] = {
      {T::Q4_0, 0x02662247a1bd6678ull, 0xa8246754df1cbab0ull},
      {T::Q4_1, 0xd95f777d9a51fb01ull, 0x94122a8a3b7868b6ull},
      {T::Q5_0, 0x317f24b71d4179a6ull, 0xc7bae2b1ecb66267ull},
      {T::Q5_1, 0x799d6804360bc139ull, 0x655b7b2729d36220ull},
      {T::Q8_0, 0x80cc791b0dac9350ull, 0x3d86d93ae6b3209cull},
      {T::Q8_1, 0x94e4d69cd28d7821ull, 0x0000000000000000ull},
      {T::Q2_K, 0x4c2e38fe74b2c486ull, 0xb5c5b9dd4d34c198ull},
      {T::Q3_K, 0xf38ffc12bf0007f4ull, 0x83387dc10a75e4a6ull},
      {T::Q4_K, 0x64d26a31059df4ccull, 0xd3318d9d13e120f7ull},
      {T::Q5_K, 0x3314ac98346da50bull, 0x3cee2f5b8122b754ull},
      {T::Q6_K, 0x83d879d2849c2e73ull, 0x975e14ec274ac4c1ull},
      {T::Q8_K, 0x1283b010fc62ad10ull, 0x2d20e334dd84d2a2ull},
      // quantize_iq4_nl / quantize_iq4_xs (nrow 1, no imatrix) and
      // dequantize_row_iq4_{nl,xs} of the llama.cpp anchor's libggml-base.
      {T::IQ4_NL, 0xf69f0b9e50096a1cull, 0x87162c09b16efebdull},
      {T::IQ4_XS, 0x798998059eaf864bull, 0xaf9a87c7aa6d47f7ull},
  };
  const auto x = golden_input(1024);
  for (const G& g : golden) {
    const auto q = quantize(g.t, x);
    EXPECT_EQ(fnv1a(q.data(), q.size()), g.quant) << traits(g.t).name << " quantized bytes differ from llama.cpp";
    if (g.dequant != 0) {  // 0: activation-only format, no ggml dequantizer
      const auto y = dequantize(g.t, q, 1024);
      EXPECT_EQ(fnv1a(y.data(), y.size() * sizeof(float)), g.dequant) << traits(g.t).name;
    }
  }
}

