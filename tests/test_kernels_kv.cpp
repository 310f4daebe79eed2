// The f16 KV-cache row kernels of every kernel set against the scalar set,
// on awkward head sizes (tails shorter than a vector, odd lengths); the
// quantized KV cache's row store, its head-size check, and attention_causal
// over every K x V type pair with each kernel set against the per-head
// reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fp16.h"
#include "base/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/dispatch.h"
#include "kernels/nn_ops.h"
#include "tensor/types.h"

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

TEST(KernelsKv, StoreRowWritesTheReferenceBytes) {
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  const std::string active = kernels().isa;
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 3.f);
  for (int64_t n : {32, 64, 96, 7 * 64, 8 * 128}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& v : x) v = nd(rng);
    for (GgmlType t : {GgmlType::F16, GgmlType::F32, GgmlType::Q8_0, GgmlType::Q4_0}) {
      std::vector<uint8_t> want(row_size(t, n) + 8, 0x5A);
      if (t == GgmlType::F16)
        for (int64_t i = 0; i < n; ++i) {
          const uint16_t h = f32_to_fp16(x[size_t(i)]);
          std::memcpy(want.data() + 2 * i, &h, 2);
        }
      else quantize_row(t, x.data(), want.data(), n);
      for (int s = 0; s < n_sets; ++s) {
        select_kernels(sets[s]->isa);
        std::vector<uint8_t> got(want.size(), 0x5A);
        store_kv_row(t, x.data(), got.data(), n);
        EXPECT_EQ(got, want) << sets[s]->isa << " " << type_name(uint32_t(t)) << " n=" << n;
      }
    }
  }
  select_kernels(active.c_str());
}

TEST(KernelsKv, TypeFitsHeadSize) {
  std::string why;
  EXPECT_FALSE(kv_type_fits(GgmlType::Q8_0, 8, &why));
  EXPECT_EQ(why, "KV cache type q8_0 needs a head size divisible by 32; this model's is 8: use -ctk f16");
  EXPECT_FALSE(kv_type_fits(GgmlType::Q4_0, 80, &why, "-ctv"));
  EXPECT_EQ(why, "KV cache type q4_0 needs a head size divisible by 32; this model's is 80: use -ctv f16");
  EXPECT_FALSE(kv_types_fit(GgmlType::F16, GgmlType::Q8_0, 64, 48, &why));
  EXPECT_NE(why.find("-ctv f16"), std::string::npos) << why;
  EXPECT_FALSE(kv_types_fit(GgmlType::F32, GgmlType::F16, 64, 64, &why));
  EXPECT_NE(why.find("f32"), std::string::npos) << why;
  EXPECT_FALSE(kv_type_fits(GgmlType::Q4_K, 256, &why));
  EXPECT_NE(why.find("not supported"), std::string::npos) << why;
  EXPECT_FALSE(kv_type_fits(GgmlType::Q8_0, 2048, &why));
  for (int64_t hd : {8, 13, 64, 80})
    for (GgmlType t : {GgmlType::F16, GgmlType::F32}) EXPECT_TRUE(kv_type_fits(t, hd, nullptr));
  for (int64_t hd : {32, 64, 96, 128, 256})
    for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_0}) EXPECT_TRUE(kv_type_fits(t, hd, nullptr));
  for (GgmlType k : {GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4_0})
    for (GgmlType v : {GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4_0}) EXPECT_TRUE(kv_types_fit(k, v, 64, 128, nullptr));
  EXPECT_TRUE(kv_types_fit(GgmlType::F32, GgmlType::F32, 13, 13, nullptr));

  // attention_causal refuses what kv_types_fit refuses, with its message.
  ThreadPool pool(1);
  std::vector<float> q(8), out(8);
  std::vector<uint8_t> cache(64);
  AttentionArgs a;
  a.q = q.data();
  a.out = out.data();
  a.k_cache = a.v_cache = cache.data();
  a.k_type = GgmlType::Q8_0;
  a.v_type = GgmlType::F16;
  a.k_stride = a.v_stride = 16;
  a.n_tokens = 1;
  a.n_head = a.n_head_kv = 1;
  a.head_dim = a.head_dim_v = 8;
  try {
    attention_causal(pool, a);
    ADD_FAILURE() << "q8_0 K with head size 8 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("divisible by 32"), std::string::npos) << e.what();
  }
}

// attention_causal (all heads, GQA, multi-head rows, a thread pool) with each
// kernel set over every K x V type pair, against attend_group_reference run
// per (token, query head) on the same bytes.
TEST(KernelsKv, AttentionCausalEveryTypePair) {
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  const std::string active = kernels().isa;
  std::mt19937 rng(19);
  std::normal_distribution<float> nd(0.f, 1.f);
  ThreadPool pool(2);
  const GgmlType types[] = {GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4_0};
  struct Shape {
    int64_t n_head, n_head_kv, hd, hdv, n_past, n_tokens;
  };
  const Shape shapes[] = {{6, 2, 64, 64, 40, 1}, {14, 2, 64, 64, 70, 9}, {4, 4, 128, 96, 0, 5}, {8, 1, 96, 96, 33, 40}};
  for (int ti = 0; ti < 10; ++ti) {
    const GgmlType kt = ti < 9 ? types[ti / 3] : GgmlType::F32, vt = ti < 9 ? types[ti % 3] : GgmlType::F32;
    for (const Shape& sh : shapes) {
      const int64_t n_rows = sh.n_past + sh.n_tokens;
      const int64_t kw = sh.n_head_kv * sh.hd, vw = sh.n_head_kv * sh.hdv;
      const size_t ks = row_size(kt, kw) + 4, vs = row_size(vt, vw) + 2;
      std::vector<uint8_t> kc(size_t(n_rows) * ks), vc(size_t(n_rows) * vs);
      std::vector<float> row(size_t(std::max(kw, vw)));
      for (int64_t p = 0; p < n_rows; ++p) {
        for (int64_t i = 0; i < kw; ++i) row[size_t(i)] = nd(rng);
        store_kv_row(kt, row.data(), kc.data() + size_t(p) * ks, kw);
        for (int64_t i = 0; i < vw; ++i) row[size_t(i)] = nd(rng);
        store_kv_row(vt, row.data(), vc.data() + size_t(p) * vs, vw);
      }
      std::vector<float> q(size_t(sh.n_tokens * sh.n_head * sh.hd));
      for (auto& x : q) x = nd(rng) * 3.f;
      AttentionArgs a;
      a.q = q.data();
      a.k_cache = kc.data();
      a.v_cache = vc.data();
      a.k_type = kt;
      a.v_type = vt;
      a.k_stride = ks;
      a.v_stride = vs;
      a.n_tokens = sh.n_tokens;
      a.n_past = sh.n_past;
      a.n_head = sh.n_head;
      a.n_head_kv = sh.n_head_kv;
      a.head_dim = sh.hd;
      a.head_dim_v = sh.hdv;
      a.scale = 1.0f / std::sqrt(float(sh.hd));
      // The oracle: one head, one token at a time.
      const size_t o_tok = size_t(sh.n_head * sh.hdv);
      std::vector<float> want(size_t(sh.n_tokens) * o_tok);
      const int64_t group = sh.n_head / sh.n_head_kv;
      for (int64_t t = 0; t < sh.n_tokens; ++t)
        for (int64_t h = 0; h < sh.n_head; ++h) {
          AttendGroup g;
          g.q = q.data() + (t * sh.n_head + h) * sh.hd;
          g.nq = 1;
          g.n_tok = 1;
          g.k = kc.data() + row_size(kt, (h / group) * sh.hd);
          g.v = vc.data() + row_size(vt, (h / group) * sh.hdv);
          g.k_type = kt;
          g.v_type = vt;
          g.k_stride = ks;
          g.v_stride = vs;
          g.n_kv = sh.n_past + t + 1;
          g.head_dim = sh.hd;
          g.head_dim_v = sh.hdv;
          g.scale = a.scale;
          g.out = want.data() + size_t(t) * o_tok + size_t(h * sh.hdv);
          attend_group_reference(g);
        }
      float vmax = 0;
      for (float x : want) vmax = std::max(vmax, std::fabs(x));
      for (int s = 0; s < n_sets; ++s) {
        select_kernels(sets[s]->isa);
        std::vector<float> got(want.size(), -7.f);
        a.out = got.data();
        attention_causal(pool, a);
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], want[i], 1e-4 * vmax)
              << sets[s]->isa << " K " << type_name(uint32_t(kt)) << " V " << type_name(uint32_t(vt)) << " n_head "
              << sh.n_head << "/" << sh.n_head_kv << " hd " << sh.hd << " n_past " << sh.n_past << " n_tokens "
              << sh.n_tokens << " at " << i;
      }
    }
  }
  select_kernels(active.c_str());
}

}  // namespace
}  // namespace edgellm
