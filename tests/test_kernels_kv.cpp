// The f16 KV-cache row kernels of every kernel set against the scalar set,
// on awkward head sizes (tails shorter than a vector, odd lengths).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "base/fp16.h"
#include "kernels/dispatch.h"

namespace edgellm {
namespace {

TEST(KernelsKv, DotAndAxpyMatchScalar) {
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  const KernelSet& ref = *sets[0];
  ASSERT_STREQ(ref.isa, "scalar");
  std::mt19937 rng(42);
  std::normal_distribution<float> nd(0.f, 2.f);
  for (int64_t n : {1, 3, 7, 8, 9, 15, 16, 17, 31, 64, 67, 128, 131}) {
    const size_t len = static_cast<size_t>(n);
    std::vector<float> q(len), acc0(len);
    std::vector<uint16_t> k(len);
    for (int64_t i = 0; i < n; ++i) {
      q[size_t(i)] = nd(rng);
      k[size_t(i)] = f32_to_fp16(nd(rng));
      acc0[size_t(i)] = nd(rng);
    }
    double mag = 0;
    for (int64_t i = 0; i < n; ++i) mag += std::fabs(q[size_t(i)] * fp16_to_f32(k[size_t(i)]));
    const float want = ref.kv_dot_f16(q.data(), k.data(), n);
    std::vector<float> want_acc = acc0;
    ref.kv_axpy_f16(want_acc.data(), 0.37f, k.data(), n);
    for (int s = 1; s < n_sets; ++s) {
      EXPECT_NEAR(sets[s]->kv_dot_f16(q.data(), k.data(), n), want, 1e-5 * mag + 1e-6) << sets[s]->isa << " n=" << n;
      std::vector<float> got = acc0;
      sets[s]->kv_axpy_f16(got.data(), 0.37f, k.data(), n);
      for (int64_t i = 0; i < n; ++i)
        EXPECT_NEAR(got[size_t(i)], want_acc[size_t(i)], 1e-5f * (std::fabs(want_acc[size_t(i)]) + 1)) << sets[s]->isa;
    }
  }
}

}  // namespace
}  // namespace edgellm
