// Every kernel set's attend_group_f16 (grouped-query attention over an f16
// cache, blocks of query tokens, vector exp) against attend_group_reference, and its swiglu against
// swiglu_inplace, on random inputs of awkward sizes: head sizes not multiples
// of 8 or above the kernels' tile limit, group sizes above 16, context
// lengths on both sides of the key tiles, scores large enough that the
// running max moves many times.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "kernels/attention.h"
#include "kernels/dispatch.h"
#include "kernels/nn_ops.h"

using namespace edgellm;

namespace {

TEST(AttentionKernels, AttendGroupMatchesReference) {
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.f, 1.f);
  int checked = 0;
  for (int s = 0; s < n_sets; ++s) {
    const KernelSet& ks = *sets[s];
    if (!ks.attend_group_f16) continue;
    ++checked;
    double worst = 0;
    for (int64_t hd : {8, 13, 64, 80, 128, 256, 264}) {
      for (int nq : {1, 2, 7, 16, 17, 40}) {
        for (int64_t n_kv : {1, 2, 15, 16, 17, 33, 130}) {
          const int n_tok = nq >= 16 ? 1 + int(n_kv % 2) : int(1 + n_kv % 5);  // token blocks, causal
          const int64_t hdv = hd == 13 ? 21 : hd;  // a V size unlike the K size
          const size_t ks_stride = size_t(hd) * 3, vs_stride = size_t(hdv) * 2;  // other heads between rows
          const float qscale = (n_kv % 2) ? 1.f : 6.f;  // sharp and flat softmaxes
          const size_t q_tok = size_t(nq) * size_t(hd) + 3;  // padding between tokens
          std::vector<float> q(size_t(n_tok) * q_tok);
          for (auto& x : q) x = normal(rng) * qscale;
          const int64_t n_rows = n_kv + n_tok - 1;  // the last token sees them all
          std::vector<uint16_t> k(size_t(n_rows) * ks_stride), v(size_t(n_rows) * vs_stride);
          float vmax = 0;
          for (auto& x : k) x = f32_to_fp16(normal(rng));
          for (auto& x : v) {
            x = f32_to_fp16(normal(rng));
            vmax = std::max(vmax, std::fabs(fp16_to_f32(x)));
          }
          AttendGroup g;
          g.q = q.data();
          g.q_stride = size_t(hd);
          g.q_tok_stride = q_tok;
          g.nq = nq;
          g.n_tok = n_tok;
          g.k = k.data();
          g.v = v.data();
          g.k_stride = ks_stride;
          g.v_stride = vs_stride;
          g.n_kv = n_kv;
          g.head_dim = hd;
          g.head_dim_v = hdv;
          g.scale = 1.0f / std::sqrt(float(hd));
          g.out_stride = size_t(hdv) + 5;  // cells between the rows must stay untouched
          g.out_tok_stride = size_t(nq) * g.out_stride + 2;
          std::vector<float> want(size_t(n_tok) * g.out_tok_stride, -3.f), got(want);
          g.out = want.data();
          attend_group_reference(g);
          g.out = got.data();
          ks.attend_group_f16(g);
          const std::string what = std::string(ks.isa) + " hd=" + std::to_string(hd) + " nq=" + std::to_string(nq) +
                                   " n_kv=" + std::to_string(n_kv) + " n_tok=" + std::to_string(n_tok);
          for (size_t i = 0; i < got.size(); ++i) {
            const size_t in_tok = i % g.out_tok_stride;
            if (in_tok >= size_t(nq) * g.out_stride || in_tok % g.out_stride >= size_t(hdv)) {
              ASSERT_EQ(got[i], -3.f) << what << ": wrote between rows at " << i;
              continue;
            }
            ASSERT_TRUE(std::isfinite(got[i])) << what;
            const double err = std::fabs(double(got[i]) - want[i]);
            ASSERT_LE(err, 2e-5 * vmax) << what << " i=" << i << ": got " << got[i] << " ref " << want[i];
            worst = std::max(worst, err / vmax);
          }
        }
      }
    }
    std::printf("[ %s ] attend_group_f16 worst |simd-ref|/max|v| = %.2e\n", ks.isa, worst);
  }
  if (checked == 0) GTEST_SKIP() << "no kernel set with attend_group_f16 on this CPU";
}

TEST(AttentionKernels, SwigluMatchesReference) {
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (int s = 0; s < n_sets; ++s) {
    const KernelSet& ks = *sets[s];
    ASSERT_NE(ks.swiglu, nullptr) << ks.isa;
    for (int64_t n : {1, 7, 8, 9, 31, 1000}) {
      for (float spread : {1.f, 30.f, 200.f}) {  // 200: exp far outside float range
        std::vector<float> gate(static_cast<size_t>(n)), up(static_cast<size_t>(n));
        for (auto& x : gate) x = normal(rng) * spread;
        for (auto& x : up) x = normal(rng);
        std::vector<float> want = gate, got = gate;
        swiglu_inplace(want.data(), up.data(), n);
        ks.swiglu(got.data(), up.data(), n);
        for (int64_t i = 0; i < n; ++i) {
          const size_t j = size_t(i);
          ASSERT_TRUE(std::isfinite(got[j])) << ks.isa << " gate " << gate[j];
          ASSERT_LE(std::fabs(got[j] - want[j]), 1e-6f * std::fabs(want[j]) + 1e-30f)
              << ks.isa << " n=" << n << " gate " << gate[j] << " up " << up[j] << ": got " << got[j] << " ref " << want[j];
        }
      }
    }
  }
}

}  // namespace
