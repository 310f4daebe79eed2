// Every SIMD kernel set against the scalar reference (kernels/dispatch.h):
//  - for each type a set implements (its entry differs from the scalar set's),
//    vec_dot on random rows of awkward lengths and several distributions,
//    within 1e-5 of sum|w_i * x_i| (the dequantized products) of the reference;
//  - quantize_act bit-identical to the reference quantizer's bytes, including
//    exact .5 ties (roundf breaks them away from zero, not to even);
//  - the registry: "scalar" first, the host's best set active by default, one
//    set per ISA the CPU reports.
// A set the host cannot run is skipped (GTEST_SKIP), never failed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "kernels/cpu_features.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"
#include "tensor/types.h"

using namespace edgellm;

namespace {

using T = GgmlType;

const KernelSet* find_set(const char* isa) {
  const KernelSet* sets[16];
  const int n = available_kernel_sets(sets, 16);
  for (int i = 0; i < n; ++i)
    if (std::strcmp(sets[i]->isa, isa) == 0) return sets[i];
  return nullptr;
}

const KernelSet& scalar_set() {
  const KernelSet* s = find_set("scalar");
  if (!s) throw std::runtime_error("no scalar kernel set");
  return *s;
}

enum class Dist { Gaussian, Uniform, Positive, Zeros, Outliers, Large, Small, Ties };
const Dist kDists[] = {Dist::Gaussian, Dist::Uniform, Dist::Positive, Dist::Zeros,
                       Dist::Outliers, Dist::Large,   Dist::Small,    Dist::Ties};
const char* dist_name(Dist d) {
  switch (d) {
    case Dist::Gaussian: return "gaussian";
    case Dist::Uniform: return "uniform";
    case Dist::Positive: return "positive";
    case Dist::Zeros: return "zeros";
    case Dist::Outliers: return "outliers";
    case Dist::Large: return "large";
    case Dist::Small: return "small";
    case Dist::Ties: return "ties";
  }
  return "?";
}

std::vector<float> make_row(Dist d, int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> g(0.f, 1.f);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::uniform_int_distribution<int> k(-126, 126), coin(0, 1), pick(0, 49);
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float v = 0;
    switch (d) {
      case Dist::Gaussian: v = g(rng); break;
      case Dist::Uniform: v = u(rng); break;
      case Dist::Positive: v = std::fabs(g(rng)) + 0.01f; break;
      case Dist::Zeros: v = 0; break;
      case Dist::Outliers: v = pick(rng) == 0 ? 100.f * g(rng) : g(rng); break;
      case Dist::Large: v = 3e3f * g(rng); break;
      case Dist::Small: v = 1e-4f * g(rng); break;
      // With 127 in each block of 32, d = 1 and x*id = x: every other value
      // is an exact half (k + 0.5), the case roundf and round-to-even differ on.
      case Dist::Ties:
        v = (i % 32 == 5) ? (coin(rng) ? 127.f : -127.f) : float(k(rng)) + (coin(rng) ? 0.5f : -0.5f);
        break;
    }
    x[size_t(i)] = v;
  }
  return x;
}

// Row lengths: 1, 3, 7, 33, 129 blocks; float types (block size 1) also get
// lengths that cross the SIMD widths, unroll factors and flush chunks.
std::vector<int64_t> lengths(int64_t bs) {
  std::vector<int64_t> ns;
  for (int64_t b : {1, 3, 7, 33, 129}) ns.push_back(b * bs);
  if (bs == 1)
    for (int64_t n : {8, 15, 16, 17, 31, 32, 63, 64, 65, 255, 256, 257, 511, 512, 513, 1000, 4128, 4133})
      ns.push_back(n);
  return ns;
}

std::vector<uint8_t> quantize(T t, const std::vector<float>& x) {
  std::vector<uint8_t> q(row_size(t, int64_t(x.size())));
  quantize_row(t, x.data(), q.data(), int64_t(x.size()));
  return q;
}

// sum |w_i * x_i| over the dequantized rows: the scale of the rounding error.
double abs_dot(T wt, const void* w, const void* a, int64_t n) {
  std::vector<float> wf(static_cast<size_t>(n)), af(static_cast<size_t>(n));
  dequantize_row(wt, w, wf.data(), n);
  dequantize_row(traits(wt).vec_dot_type, a, af.data(), n);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::fabs(double(wf[size_t(i)]) * double(af[size_t(i)]));
  return s;
}

// Byte offsets of the fp16 scale fields of a weight block (d; m for q5_1; dmin for
// the affine K-quants); empty for types without a raw-bytes check.
std::vector<size_t> fp16_fields(T t) {
  switch (t) {
    case T::Q4_0: case T::Q5_0: case T::Q8_0: case T::IQ4_NL: return {0};
    case T::Q5_1: return {offsetof(block_q5_1, d), offsetof(block_q5_1, m)};
    case T::IQ4_XS: return {offsetof(block_iq4_xs, d)};
    case T::Q4_K: return {offsetof(block_q4_K, d), offsetof(block_q4_K, dmin)};
    case T::Q5_K: return {offsetof(block_q5_K, d), offsetof(block_q5_K, dmin)};
    case T::Q6_K: return {offsetof(block_q6_K, d)};
    default: return {};
  }
}

// Raw weight blocks that no quantizer produces: every byte value (q8_0's -128,
// any q5 high bits, any K-quant sub-block scale/min byte included) with random
// finite fp16 scales written over the scale fields.
std::vector<uint8_t> raw_blocks(T t, int64_t n, std::mt19937& rng) {
  std::vector<uint8_t> w(row_size(t, n));
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : w) b = uint8_t(byte(rng));
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  const size_t bsz = traits(t).type_size;
  for (size_t off = 0; off < w.size(); off += bsz)
    for (size_t field : fp16_fields(t)) {
      const uint16_t d = f32_to_fp16(scale(rng));
      std::memcpy(&w[off + field], &d, 2);
    }
  return w;
}

struct DotStats {
  int checked = 0;
  double worst = 0;  // max |simd - ref| / sum|w x|
};

void check_dot(const KernelSet& ks, T wt, const std::vector<uint8_t>& w, const std::vector<uint8_t>& a,
               int64_t n, const std::string& what, DotStats& st) {
  const float ref = scalar_set().vec_dot[int(wt)](n, w.data(), a.data());
  ASSERT_EQ(ref, vec_dot(wt, n, w.data(), a.data())) << "scalar set is not the reference";
  const float got = ks.vec_dot[int(wt)](n, w.data(), a.data());
  const double scale = abs_dot(wt, w.data(), a.data(), n);
  const double err = std::fabs(double(got) - double(ref));
  ASSERT_TRUE(std::isfinite(got)) << what;
  EXPECT_LE(err, 1e-5 * scale) << ks.isa << " " << type_name(uint32_t(wt)) << " " << what << ": got "
                               << got << " ref " << ref << " sum|wx| " << scale;
  if (scale > 0) st.worst = std::max(st.worst, err / scale);
  ++st.checked;
}

void check_set(const char* isa) {
  const KernelSet* ks = find_set(isa);
  if (!ks) GTEST_SKIP() << "this CPU cannot run the " << isa << " kernel set";
  const KernelSet& ref = scalar_set();
  std::mt19937 rng(1234);
  int implemented = 0;

  for (int id = 0; id < kMaxTypeId; ++id) {
    if (!ks->vec_dot[id] || ks->vec_dot[id] == ref.vec_dot[id]) continue;
    ++implemented;
    const T wt = T(id);
    const T at = traits(wt).vec_dot_type;
    ASSERT_TRUE(ks->quantize_act[int(at)]) << "no activation quantizer for " << type_name(id);
    DotStats st;
    for (int64_t n : lengths(traits(wt).block_size)) {
      for (Dist wd : kDists) {
        for (Dist ad : {Dist::Gaussian, Dist::Outliers, Dist::Zeros, wd}) {
          const std::string what = "n=" + std::to_string(n) + " w:" + dist_name(wd) + " a:" + dist_name(ad);
          const auto w = quantize(wt, make_row(wd, n, rng));
          const auto a = quantize(at, make_row(ad, n, rng));
          check_dot(*ks, wt, w, a, n, what, st);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
      if (!fp16_fields(wt).empty()) {  // raw bytes: values quantizers never produce
        for (Dist ad : {Dist::Gaussian, Dist::Outliers, Dist::Ties}) {
          const auto w = raw_blocks(wt, n, rng);
          const auto a = quantize(at, make_row(ad, n, rng));
          check_dot(*ks, wt, w, a, n, "n=" + std::to_string(n) + " w:raw a:" + dist_name(ad), st);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
    std::printf("[ %s ] vec_dot %-5s %4d rows, worst |simd-ref|/sum|wx| = %.2e\n", isa,
                type_name(id).c_str(), st.checked, st.worst);
  }

  for (int id = 0; id < kMaxTypeId; ++id) {
    if (!ks->quantize_act[id] || ks->quantize_act[id] == ref.quantize_act[id]) continue;
    ++implemented;
    const T at = T(id);
    int rows = 0;
    for (int64_t n : lengths(traits(at).block_size)) {
      for (Dist d : kDists) {
        const std::vector<float> x = make_row(d, n, rng);
        const std::vector<uint8_t> want = quantize(at, x);
        std::vector<uint8_t> got(want.size(), 0xAB);
        ks->quantize_act[id](x.data(), got.data(), n);
        ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size()))
            << isa << " quantize_act " << type_name(id) << " n=" << n << " " << dist_name(d)
            << " differs from the reference bytes";
        ++rows;
      }
    }
    std::printf("[ %s ] quantize_act %s: %d rows bit-identical\n", isa, type_name(id).c_str(), rows);
  }
  EXPECT_GT(implemented, 0) << isa << " registers no kernel of its own";
}

}  // namespace

TEST(Kernels, Avx2MatchesScalar) { check_set("avx2"); }

// iq4_nl / iq4_xs on every set this host has, at the block-multiple lengths
// of their first real rows (32*7, 256*3) and longer, with weights whose
// every nibble is 0 (grid -127) or 15 (grid 113) and sub-block scales at
// both ends (-32, 31): the integer paths' extremes, against activations at
// +-127. Exact agreement is not required (float order), 1e-5 of sum|wx| is.
TEST(Kernels, Iq4ExtremesMatchScalarOnEverySet) {
  const KernelSet* sets[16];
  const int n_sets = available_kernel_sets(sets, 16);
  std::mt19937 rng(77);
  for (T wt : {T::IQ4_NL, T::IQ4_XS}) {
    const T at = traits(wt).vec_dot_type;
    const int64_t bs = traits(wt).block_size;
    for (int64_t n : {bs * 3, bs * 7, bs * 33}) {
      for (int pattern = 0; pattern < 3; ++pattern) {
        std::vector<uint8_t> w = raw_blocks(wt, n, rng);
        const size_t bsz = traits(wt).type_size;
        for (size_t off = 0; off < w.size(); off += bsz) {
          const size_t qs = wt == T::IQ4_NL ? offsetof(block_iq4_nl, qs) : offsetof(block_iq4_xs, qs);
          // 0x00: all -127; 0xFF: all 113; pattern 2 keeps random nibbles.
          if (pattern < 2) std::memset(&w[off + qs], pattern == 0 ? 0x00 : 0xFF, bsz - qs);
          if (wt == T::IQ4_XS) {  // scales -32 (ls 0) or 31 (ls 63), alternating by block
            const bool lo = (off / bsz) % 2 == 0;
            auto* b = reinterpret_cast<block_iq4_xs*>(&w[off]);
            b->scales_h = lo ? 0x0000 : 0xFFFF;
            std::memset(b->scales_l, lo ? 0x00 : 0xFF, sizeof b->scales_l);
          }
        }
        std::vector<float> x(static_cast<size_t>(n));
        for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 3 == 0) ? -1.f : 1.f;  // every activation +-127
        const auto a = quantize(at, x);
        for (int s = 1; s < n_sets; ++s) {
          DotStats st;
          const std::string what = "extreme pattern " + std::to_string(pattern) + " n=" + std::to_string(n);
          check_dot(*sets[s], wt, w, a, n, what, st);
        }
      }
    }
  }
}
TEST(Kernels, Avx512MatchesScalar) { check_set("avx512"); }

// q5_0 / q5_1 on every set this host has, with every level at an end (all
// qs and qh bits set: q = 31; all clear: q = 0; or alternating bytes)
// against activations at +-127: the int8 dots' extremes (AVX2's maddubs
// pairs reach 2*31*127 here), random fp16 d (and m) per block.
TEST(Kernels, Q5ExtremesMatchScalarOnEverySet) {
  const KernelSet* sets[16];
  const int n_sets = available_kernel_sets(sets, 16);
  std::mt19937 rng(55);
  for (T wt : {T::Q5_0, T::Q5_1}) {
    const T at = traits(wt).vec_dot_type;
    const size_t bsz = traits(wt).type_size, qh = wt == T::Q5_0 ? offsetof(block_q5_0, qh) : offsetof(block_q5_1, qh);
    for (int64_t n : {32 * 3, 32 * 7, 32 * 33}) {
      for (int pattern = 0; pattern < 3; ++pattern) {
        std::vector<uint8_t> w = raw_blocks(wt, n, rng);
        for (size_t off = 0; off < w.size(); off += bsz)
          for (size_t j = qh; j < bsz; ++j)  // qh and qs: every fifth bit and nibble
            w[off + j] = pattern == 0 ? 0x00 : pattern == 1 ? 0xFF : (j % 2 ? 0xFF : 0x00);
        std::vector<float> x(static_cast<size_t>(n));
        for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 3 == 0) ? -1.f : 1.f;  // every activation +-127
        const auto a = quantize(at, x);
        for (int s = 1; s < n_sets; ++s) {
          DotStats st;
          const std::string what = "extreme pattern " + std::to_string(pattern) + " n=" + std::to_string(n);
          check_dot(*sets[s], wt, w, a, n, what, st);
        }
      }
    }
  }
}

// The weight types of llama.cpp's common files (Q4_0, Q8_0, Q4_K_M, Q5_K_M,
// IQ4_NL, IQ4_XS: q4_0, q5_0, q5_1 (IQ4_*'s attn_v), q8_0, q4_K, q5_K, q6_K,
// iq4_nl, iq4_xs, plus f16/bf16/f32) have their own kernel in every x86 SIMD
// set; the *MatchesScalar tests only check the ones a set has.
TEST(Kernels, X86SetsCoverCommonWeightTypes) {
  int sets = 0;
  for (const char* isa : {"avx2", "avx512"}) {
    const KernelSet* ks = find_set(isa);
    if (!ks) continue;
    ++sets;
    for (T t : {T::F32, T::F16, T::BF16, T::Q4_0, T::Q5_0, T::Q5_1, T::Q8_0, T::Q4_K, T::Q5_K, T::Q6_K, T::IQ4_NL,
                T::IQ4_XS})
      EXPECT_NE(ks->vec_dot[int(t)], scalar_set().vec_dot[int(t)]) << isa << " has no " << type_name(uint32_t(t))
                                                                    << " kernel";
  }
  if (sets == 0) GTEST_SKIP() << "no x86 SIMD kernel set on this host";
}

// The matmul path exercises quantize_act then vec_dot; a ties row must give
// the reference's q8_0 bytes (roundf: 0.5 -> 1, -2.5 -> -3), spelled out.
TEST(Kernels, QuantizeQ8_0TiesAwayFromZero) {
  std::vector<float> x(32, 0.f);
  x[0] = 127.f, x[1] = 0.5f, x[2] = -2.5f, x[3] = 1.5f, x[4] = -0.5f, x[5] = 126.5f;
  const KernelSet* sets[16];
  const int n = available_kernel_sets(sets, 16);
  for (int i = 0; i < n; ++i) {
    block_q8_0 b{};
    sets[i]->quantize_act[int(T::Q8_0)](x.data(), &b, 32);
    EXPECT_EQ(fp16_to_f32(b.d), 1.0f) << sets[i]->isa;
    const int want[6] = {127, 1, -3, 2, -1, 127};
    for (int j = 0; j < 6; ++j) EXPECT_EQ(b.qs[j], want[j]) << sets[i]->isa << " element " << j;
  }
}

TEST(Kernels, RegistryFollowsCpuFeatures) {
  const KernelSet* sets[16];
  const int n = available_kernel_sets(sets, 16);
  ASSERT_GE(n, 1);
  EXPECT_STREQ(sets[0]->isa, "scalar");
  const CpuFeatures& cpu = cpu_features();
#if defined(EDGELLM_X86)
  EXPECT_EQ(find_set("avx2") != nullptr, cpu.can_run_avx2());
  EXPECT_EQ(find_set("avx512") != nullptr, cpu.can_run_avx512());
#else
  EXPECT_FALSE(cpu.can_run_avx2());
#endif
  std::printf("kernel sets:");
  for (int i = 0; i < n; ++i) std::printf(" %s", sets[i]->isa);
  std::printf(" (active: %s)\n", kernels().isa);
  // Without EDGELLM_ISA the best set (registered last) is the active one; other
  // tests select_kernels() and put the last one back, so this holds here too.
  const char* env = std::getenv("EDGELLM_ISA");
  if (!env || !*env) {
    EXPECT_STREQ(kernels().isa, sets[n - 1]->isa);
  }
  // Every set is complete: the scalar set's entries are all still there.
  for (int i = 1; i < n; ++i)
    for (int id = 0; id < kMaxTypeId; ++id) {
      EXPECT_EQ(sets[i]->vec_dot[id] != nullptr, sets[0]->vec_dot[id] != nullptr) << sets[i]->isa << " " << id;
      EXPECT_EQ(sets[i]->quantize_act[id] != nullptr, sets[0]->quantize_act[id] != nullptr)
          << sets[i]->isa << " " << id;
    }
}
