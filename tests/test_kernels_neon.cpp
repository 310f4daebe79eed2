// The AArch64 NEON kernel set (kernels/neon) against the scalar reference, on
// rows of awkward lengths and several distributions (tests/test_kernels.cpp
// does the same for the x86 sets by name). Built on every host, but its tests
// only exist on ARM builds (scripts/test-arm64.sh runs them under
// qemu-aarch64: -cpu max for the SDOT path, -cpu cortex-a72 for the ARMv8.0
// widening path). The GEMM paths (widening, SDOT, SMMLA) are also run one by
// one, since the set holds only the best the host has.
#if defined(EDGELLM_ARM)
#include <gtest/gtest.h>
#include <sys/auxv.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "kernels/dispatch.h"
#include "kernels/neon/gemm_neon.h"
#include "tensor/blocks.h"
#include "tensor/types.h"

#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif

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

std::vector<float> make_row(int kind, int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> g(0.f, 1.f);
  std::uniform_int_distribution<int> k(-126, 126), coin(0, 1), pick(0, 49);
  std::vector<float> x(static_cast<size_t>(n), 0.f);
  for (int64_t i = 0; i < n; ++i) {
    float& v = x[size_t(i)];
    switch (kind) {
      case 0: v = g(rng); break;
      case 1: v = pick(rng) == 0 ? 100.f * g(rng) : g(rng); break;  // outliers
      case 2: v = 0; break;
      case 3: v = 3e3f * g(rng); break;
      case 4: v = 1e-4f * g(rng); break;
      case 5: v = std::fabs(g(rng)) + 0.01f; break;
      default:  // ties: d = 1 per block, every other x*id an exact half
        v = (i % 32 == 7) ? (coin(rng) ? 127.f : -127.f) : float(k(rng)) + (coin(rng) ? 0.5f : -0.5f);
    }
  }
  return x;
}
constexpr int kKinds = 7;

std::vector<uint8_t> quantize(T t, const std::vector<float>& x) {
  std::vector<uint8_t> q(row_size(t, int64_t(x.size())));
  quantize_row(t, x.data(), q.data(), int64_t(x.size()));
  return q;
}

double abs_dot(T wt, const void* w, const void* a, int64_t n) {
  std::vector<float> wf(static_cast<size_t>(n)), af(static_cast<size_t>(n));
  dequantize_row(wt, w, wf.data(), n);
  dequantize_row(traits(wt).vec_dot_type, a, af.data(), n);
  double s = 0;
  for (size_t i = 0; i < size_t(n); ++i) s += std::fabs(double(wf[i]) * double(af[i]));
  return s;
}

std::vector<int64_t> lengths(int64_t bs) {
  std::vector<int64_t> ns;
  for (int64_t b : {1, 2, 3, 7, 33, 129}) ns.push_back(b * bs);
  if (bs == 1)
    for (int64_t n : {4, 15, 16, 17, 31, 33, 255, 256, 257, 271, 512, 513, 1000, 4133}) ns.push_back(n);
  return ns;
}

// Byte offsets of the fp16 scale fields of a weight block (d; m for q5_1; dmin for
// the affine K-quants); empty for the float types.
std::vector<size_t> fp16_fields(T t) {
  switch (t) {
    case T::Q4_0: case T::Q5_0: case T::Q8_0: case T::IQ4_NL: return {0};
    case T::Q5_1: return {offsetof(block_q5_1, d), offsetof(block_q5_1, m)};
    case T::IQ4_XS: return {offsetof(block_iq4_xs, d)};
    case T::Q2_K: return {offsetof(block_q2_K, d), offsetof(block_q2_K, dmin)};
    case T::Q3_K: return {offsetof(block_q3_K, d)};
    case T::Q4_K: return {offsetof(block_q4_K, d), offsetof(block_q4_K, dmin)};
    case T::Q5_K: return {offsetof(block_q5_K, d), offsetof(block_q5_K, dmin)};
    case T::Q6_K: return {offsetof(block_q6_K, d)};
    default: return {};
  }
}

// Random bytes (every high bit, sub-block scale and -128) with finite fp16
// scale fields: the extremes the integer bounds of the kernels must hold for.
std::vector<uint8_t> raw_row(T t, int64_t n, std::mt19937& rng) {
  std::vector<uint8_t> w(row_size(t, n));
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : w) b = uint8_t(byte(rng));
  for (size_t off = 0; off < w.size(); off += traits(t).type_size)
    for (size_t field : fp16_fields(t)) {
      const uint16_t d = f32_to_fp16(std::uniform_real_distribution<float>(-0.05f, 0.05f)(rng));
      std::memcpy(&w[off + field], &d, 2);
    }
  return w;
}

}  // namespace

TEST(KernelsNeon, NeonSetIsRegisteredAndActive) {
  const KernelSet* neon = find_set("neon");
  ASSERT_NE(neon, nullptr) << "an AArch64 host always has Advanced SIMD";
  const bool dotprod = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  std::printf("[ neon ] dotprod: %s; kernel ISA active: %s\n", dotprod ? "yes (SDOT path)" : "no (widening path)",
              kernels().isa);
  const char* env = std::getenv("EDGELLM_ISA");
  if (!env || !*env) {
    EXPECT_STREQ(kernels().isa, "neon");
  }
}

TEST(KernelsNeon, VecDotMatchesScalar) {
  const KernelSet* ks = find_set("neon");
  ASSERT_NE(ks, nullptr);
  const KernelSet* scalar = find_set("scalar");
  ASSERT_NE(scalar, nullptr);
  std::mt19937 rng(99);
  for (T wt : {T::F32, T::F16, T::BF16, T::Q4_0, T::Q5_0, T::Q5_1, T::Q8_0, T::Q4_K, T::Q5_K, T::Q6_K,
               T::IQ4_NL, T::IQ4_XS}) {
    ASSERT_NE(ks->vec_dot[int(wt)], scalar->vec_dot[int(wt)]) << type_name(uint32_t(wt)) << " not implemented";
    const T at = traits(wt).vec_dot_type;
    double worst = 0;
    int rows = 0;
    for (int64_t n : lengths(traits(wt).block_size)) {
      for (int wk = 0; wk < kKinds; ++wk) {
        for (int ak : {0, 1, 2, wk}) {
          const auto w = quantize(wt, make_row(wk, n, rng));
          const auto a = quantize(at, make_row(ak, n, rng));
          const float ref = scalar->vec_dot[int(wt)](n, w.data(), a.data());
          const float got = ks->vec_dot[int(wt)](n, w.data(), a.data());
          const double scale = abs_dot(wt, w.data(), a.data(), n);
          const double err = std::fabs(double(got) - double(ref));
          ASSERT_TRUE(std::isfinite(got));
          ASSERT_LE(err, 1e-5 * scale) << type_name(uint32_t(wt)) << " n=" << n << " w" << wk << " a" << ak
                                       << ": got " << got << " ref " << ref;
          if (scale > 0) worst = std::max(worst, err / scale);
          ++rows;
        }
      }
      if (!fp16_fields(wt).empty()) {  // raw weight bytes: -128, any high bits / sub-block scales
        std::vector<uint8_t> w(row_size(wt, n));
        std::uniform_int_distribution<int> byte(0, 255);
        for (auto& b : w) b = uint8_t(byte(rng));
        for (size_t off = 0; off < w.size(); off += traits(wt).type_size)
          for (size_t field : fp16_fields(wt)) {
            const uint16_t d = f32_to_fp16(std::uniform_real_distribution<float>(-0.05f, 0.05f)(rng));
            std::memcpy(&w[off + field], &d, 2);
          }
        const auto a = quantize(at, make_row(1, n, rng));
        const float ref = scalar->vec_dot[int(wt)](n, w.data(), a.data());
        const float got = ks->vec_dot[int(wt)](n, w.data(), a.data());
        ASSERT_LE(std::fabs(double(got) - double(ref)), 1e-5 * abs_dot(wt, w.data(), a.data(), n))
            << type_name(uint32_t(wt)) << " raw n=" << n;
        ++rows;
      }
    }
    std::printf("[ neon ] vec_dot %-5s %4d rows, worst |simd-ref|/sum|wx| = %.2e\n",
                type_name(uint32_t(wt)).c_str(), rows, worst);
  }
}

// The set's quantizer for activation format at against the reference bytes,
// on every row length and kind; returns the number of rows checked.
int check_quantizer(const KernelSet& ks, T at, std::mt19937& rng) {
  int rows = 0;
  for (int64_t n : lengths(traits(at).block_size)) {
    for (int kind = 0; kind < kKinds; ++kind) {
      const std::vector<float> x = make_row(kind, n, rng);
      const std::vector<uint8_t> want = quantize(at, x);
      std::vector<uint8_t> got(want.size(), 0xAB);
      ks.quantize_act[int(at)](x.data(), got.data(), n);
      EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size()))
          << type_name(uint32_t(at)) << " n=" << n << " kind " << kind;
      if (::testing::Test::HasFailure()) return rows;
      ++rows;
    }
  }
  std::printf("[ neon ] quantize_act %s: %d rows bit-identical\n", type_name(uint32_t(at)).c_str(), rows);
  return rows;
}

TEST(KernelsNeon, QuantizeQ8_0BitIdentical) {
  const KernelSet* ks = find_set("neon");
  ASSERT_NE(ks, nullptr);
  std::mt19937 rng(7);
  check_quantizer(*ks, T::Q8_0, rng);
  // Ties spelled out: roundf breaks them away from zero.
  std::vector<float> x(32, 0.f);
  x[0] = 127.f, x[1] = 0.5f, x[2] = -2.5f, x[3] = 1.5f, x[4] = -0.5f, x[5] = 126.5f;
  block_q8_0 b{};
  ks->quantize_act[int(T::Q8_0)](x.data(), &b, 32);
  const int want[6] = {127, 1, -3, 2, -1, 127};
  for (int j = 0; j < 6; ++j) EXPECT_EQ(b.qs[j], want[j]) << "element " << j;
}

// q8_K (the K-quants' activations): the same bytes as the reference,
// including which of several equal |max| sets the sign (ties rows: +-127 at
// every 32nd element, so 8 candidates per super-block).
TEST(KernelsNeon, QuantizeQ8_KBitIdentical) {
  const KernelSet* ks = find_set("neon");
  ASSERT_NE(ks, nullptr);
  std::mt19937 rng(8);
  check_quantizer(*ks, T::Q8_K, rng);
}

// Every GEMM path this host can run (kernels/neon/gemm_neon.h), not only the
// one the set holds: under qemu -cpu max the set has the SMMLA tiles, so the
// SDOT ones run only here (and the widening ones on every host). Each against
// the scalar reference gemm within 1e-5 * sum|w x| and against the set's
// vec_dot within 2e-5 * sum|w x| (the gemm_reordered contract), on shapes
// that are no multiple of any tile; cells outside the rows x tokens
// rectangle must stay untouched. The K-quant tiles of the three paths differ
// only in how they form exact int32 sums (gemm_kquant_neon.h): their
// results must be bit-identical.
TEST(KernelsNeon, GemmEveryPathMatchesScalar) {
  const KernelSet* ks = find_set("neon");
  const KernelSet* scalar = find_set("scalar");
  ASSERT_NE(ks, nullptr);
  ASSERT_NE(scalar, nullptr);
  const int n_paths = 1 + neon_can_run(NeonInt8::Sdot) + neon_can_run(NeonInt8::Smmla);
  std::printf("[ neon ] gemm paths on this host: %d, the set's: %s\n", n_paths, neon_int8_name(neon_int8_best()));
  std::mt19937 rng(2468);
  for (T wt : {T::Q4_0, T::Q5_0, T::Q8_0, T::IQ4_NL, T::Q2_K, T::Q3_K, T::Q4_K, T::Q5_K, T::Q6_K, T::IQ4_XS}) {
    const std::string type = type_name(uint32_t(wt));
    EXPECT_EQ(ks->gemm[int(wt)], neon_gemm(wt, neon_int8_best()).fn) << type << ": the set must hold the best path";
    EXPECT_EQ(ks->gemm_scratch[int(wt)], neon_gemm(wt, neon_int8_best()).scratch) << type << ": and its scratch size";
    EXPECT_FALSE(scalar->gemm_scratch[int(wt)]) << type;
    NeonGemm fns[4];
    const char* names[4];
    const int nv = neon_gemm_variants(wt, fns, names, 4);
    ASSERT_EQ(nv, n_paths) << type;
    const T at = traits(wt).vec_dot_type;
    const int64_t bs = traits(wt).block_size;
    const bool kquant = bs == QK_K;
    double worst[4] = {};
    int cases = 0;
    for (int64_t blocks : {1, 2, 3, 7}) {
      if (kquant && blocks > 3) continue;
      const int64_t n = blocks * bs;
      const size_t wr = row_size(wt, n), ar = row_size(at, n);
      for (int64_t rows : {1, 2, 3, 5, 7, 9}) {
        for (int64_t tok : {1, 2, 3, 5, 7}) {
          const bool raw = (rows + tok + blocks) % 3 == 0;
          std::vector<uint8_t> w, a;
          for (int64_t r = 0; r < rows; ++r) {
            const auto row = raw ? raw_row(wt, n, rng) : quantize(wt, make_row(int((r + tok) % kKinds), n, rng));
            w.insert(w.end(), row.begin(), row.end());
          }
          for (int64_t t = 0; t < tok; ++t) {
            const auto row = quantize(at, make_row(int((t + rows) % 2 ? 0 : (t + blocks) % kKinds), n, rng));
            a.insert(a.end(), row.begin(), row.end());
          }
          const size_t ldy = size_t(rows + 2);  // cells [rows, ldy) of each token's y must stay untouched
          std::vector<float> want(size_t(tok) * ldy, -7.f);
          scalar->gemm[int(wt)](n, w.data(), wr, rows, a.data(), ar, tok, want.data(), ldy, nullptr);
          std::vector<std::vector<float>> got(size_t(nv), std::vector<float>(size_t(tok) * ldy, -7.f));
          for (int v = 0; v < nv; ++v) {
            // Exactly the announced bytes, garbage-filled (see test_kernels_gemm.cpp's Scratch).
            ASSERT_TRUE(fns[v].scratch) << type << " " << names[v];
            const size_t bytes = fns[v].scratch(n, rows, tok);
            void* scratch = ::operator new(bytes, std::align_val_t(64));
            std::memset(scratch, 0xA5, bytes);
            fns[v].fn(n, w.data(), wr, rows, a.data(), ar, tok, got[size_t(v)].data(), ldy, scratch);
            ::operator delete(scratch, std::align_val_t(64));
          }
          for (int64_t t = 0; t < tok; ++t)
            for (int64_t r = 0; r < int64_t(ldy); ++r) {
              const size_t i = size_t(t) * ldy + size_t(r);
              const uint8_t* wrow = w.data() + size_t(r) * wr;
              const uint8_t* arow = a.data() + size_t(t) * ar;
              const double scale = r < rows ? abs_dot(wt, wrow, arow, n) : 0;
              const float dec = r < rows ? ks->vec_dot[int(wt)](n, wrow, arow) : 0;
              for (int v = 0; v < nv; ++v) {
                const float y = got[size_t(v)][i];
                const std::string what = type + " " + names[v] + " n=" + std::to_string(n) + " rows=" +
                                         std::to_string(rows) + " tok=" + std::to_string(tok) + " t=" +
                                         std::to_string(t) + " r=" + std::to_string(r) + (raw ? " raw" : "");
                if (r >= rows) {
                  ASSERT_EQ(y, -7.f) << what << ": wrote outside the rows x tokens rectangle";
                  continue;
                }
                const double err = std::fabs(double(y) - double(want[i]));
                ASSERT_TRUE(std::isfinite(y)) << what;
                ASSERT_LE(err, 1e-5 * scale) << what << ": got " << y << " ref " << want[i];
                ASSERT_LE(std::fabs(double(y) - double(dec)), 2e-5 * scale) << what << ": vec_dot " << dec;
                if (kquant && v > 0) {
                  ASSERT_EQ(y, got[0][i]) << what << ": not bit-identical to the widening tile";
                }
                if (scale > 0) worst[v] = std::max(worst[v], err / scale);
              }
            }
          ++cases;
        }
      }
    }
    for (int v = 0; v < nv; ++v)
      std::printf("[ neon ] gemm %-5s %-5s %3d shapes, worst |simd-ref|/sum|wx| = %.2e\n", type.c_str(), names[v],
                  cases, worst[v]);
  }
}
#endif  // EDGELLM_ARM
