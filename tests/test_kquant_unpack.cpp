// tensor/kquant_unpack: the integer form of each K-quant super-block
// (x = d*sc*q - dmin*mn) against the reference dequantizer, and the dot
// product rebuilt from it against the reference vec_dot, on quantized rows of
// random data and on raw random bytes (every bit pattern of scales, high bits
// and signs).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/fp16.h"
#include "tensor/blocks.h"
#include "tensor/kquant_unpack.h"
#include "tensor/types.h"

using namespace edgellm;

namespace {

std::vector<uint8_t> random_blocks(GgmlType t, int n_blocks, bool raw, std::mt19937& rng) {
  const size_t bytes = traits(t).type_size * size_t(n_blocks);
  std::vector<uint8_t> b(bytes);
  if (raw) {
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& v : b) v = uint8_t(byte(rng));
    // Finite fp16 scales: d (and dmin) sit in the block's last or first 4 bytes.
    const size_t bs = traits(t).type_size;
    std::uniform_real_distribution<float> s(-0.1f, 0.1f);
    for (int i = 0; i < n_blocks; ++i) {
      uint8_t* blk = b.data() + size_t(i) * bs;
      const uint16_t d = f32_to_fp16(s(rng)), dm = f32_to_fp16(s(rng));
      if (t == GgmlType::Q4_K || t == GgmlType::Q5_K) {
        std::memcpy(blk, &d, 2), std::memcpy(blk + 2, &dm, 2);
      } else if (t == GgmlType::Q2_K) {
        std::memcpy(blk + bs - 4, &d, 2), std::memcpy(blk + bs - 2, &dm, 2);
      } else {
        std::memcpy(blk + bs - 2, &d, 2);
      }
    }
    return b;
  }
  std::normal_distribution<float> g(0.f, 1.f);
  std::vector<float> x(size_t(n_blocks) * 256);
  for (auto& v : x) v = g(rng);
  quantize_row(t, x.data(), b.data(), int64_t(x.size()));
  return b;
}

TEST(KQuantUnpack, MatchesDequantizeAndVecDot) {
  std::mt19937 rng(42);
  const GgmlType types[] = {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};
  for (GgmlType t : types) {
    ASSERT_TRUE(is_unpackable_k(t));
    for (bool raw : {false, true}) {
      const int nb = 7;
      const auto w = random_blocks(t, nb, raw, rng);
      std::normal_distribution<float> g(0.f, 3.f);
      std::vector<float> x(size_t(nb) * 256), deq(x.size());
      for (auto& v : x) v = g(rng);
      std::vector<block_q8_K> a(static_cast<size_t>(nb));
      quantize_row(GgmlType::Q8_K, x.data(), a.data(), int64_t(x.size()));
      dequantize_row(t, w.data(), deq.data(), int64_t(x.size()));
      double dot = 0, mag = 0;
      for (int b = 0; b < nb; ++b) {
        KBlockInt u;
        unpack_k_block(t, w.data() + size_t(b) * traits(t).type_size, &u);
        int64_t isum = 0, msum = 0;
        for (int i = 0; i < 256; ++i) {
          ASSERT_LE(u.q[i], 63);
          const int j = i / 16;
          const double want = deq[size_t(b) * 256 + size_t(i)];
          const double got = double(u.d) * u.sc[j] * u.q[i] - double(u.dmin) * u.mn[j];
          const double tol = 1e-6 * (std::fabs(double(u.d) * u.sc[j] * u.q[i]) + std::fabs(double(u.dmin) * u.mn[j])) + 1e-30;
          ASSERT_LE(std::fabs(got - want), tol) << type_name(uint32_t(t)) << (raw ? " raw" : "") << " block " << b
                                                << " element " << i;
          isum += int64_t(u.sc[j]) * u.q[i] * a[size_t(b)].qs[i];
          mag += std::fabs(want * a[size_t(b)].qs[i] * a[size_t(b)].d);
        }
        for (int j = 0; j < 16; ++j) msum += int64_t(u.mn[j]) * a[size_t(b)].bsums[j];
        dot += double(a[size_t(b)].d) * (double(u.d) * double(isum) - double(u.dmin) * double(msum));
      }
      const double ref = vec_dot(t, int64_t(x.size()), w.data(), a.data());
      EXPECT_LE(std::fabs(dot - ref), 1e-5 * mag) << type_name(uint32_t(t)) << (raw ? " raw" : "");
    }
  }
  EXPECT_FALSE(is_unpackable_k(GgmlType::Q8_0));
}

}  // namespace
