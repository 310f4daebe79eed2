// The AArch64 NEON kernel set (kernels/neon) against the scalar reference, on
// rows of awkward lengths and several distributions (tests/test_kernels.cpp
// does the same for the x86 sets by name). Built on every host, but its tests
// only exist on ARM builds (scripts/test-arm64.sh runs them under
// qemu-aarch64: -cpu max for the SDOT path, -cpu cortex-a72 for the ARMv8.0
// widening path).
#if defined(EDGELLM_ARM)
#include <gtest/gtest.h>
#include <sys/auxv.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "kernels/dispatch.h"
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

// Byte offsets of the fp16 scale fields of a weight block (d, and dmin for
// the affine K-quants); empty for the float types.
std::vector<size_t> fp16_fields(T t) {
  switch (t) {
    case T::Q4_0: case T::Q5_0: case T::Q8_0: return {0};
    case T::Q4_K: return {offsetof(block_q4_K, d), offsetof(block_q4_K, dmin)};
    case T::Q5_K: return {offsetof(block_q5_K, d), offsetof(block_q5_K, dmin)};
    case T::Q6_K: return {offsetof(block_q6_K, d)};
    default: return {};
  }
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
  for (T wt : {T::F32, T::F16, T::BF16, T::Q4_0, T::Q5_0, T::Q8_0, T::Q4_K, T::Q5_K, T::Q6_K}) {
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

TEST(KernelsNeon, QuantizeQ8_0BitIdentical) {
  const KernelSet* ks = find_set("neon");
  ASSERT_NE(ks, nullptr);
  std::mt19937 rng(7);
  int rows = 0;
  for (int64_t n : lengths(QK8_0)) {
    for (int kind = 0; kind < kKinds; ++kind) {
      const std::vector<float> x = make_row(kind, n, rng);
      const std::vector<uint8_t> want = quantize(T::Q8_0, x);
      std::vector<uint8_t> got(want.size(), 0xAB);
      ks->quantize_act[int(T::Q8_0)](x.data(), got.data(), n);
      ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size())) << "n=" << n << " kind " << kind;
      ++rows;
    }
  }
  // Ties spelled out: roundf breaks them away from zero.
  std::vector<float> x(32, 0.f);
  x[0] = 127.f, x[1] = 0.5f, x[2] = -2.5f, x[3] = 1.5f, x[4] = -0.5f, x[5] = 126.5f;
  block_q8_0 b{};
  ks->quantize_act[int(T::Q8_0)](x.data(), &b, 32);
  const int want[6] = {127, 1, -3, 2, -1, 127};
  for (int j = 0; j < 6; ++j) EXPECT_EQ(b.qs[j], want[j]) << "element " << j;
  std::printf("[ neon ] quantize_act q8_0: %d rows bit-identical\n", rows);
}
#endif  // EDGELLM_ARM
