// Every kernel set's attend_group (grouped-query attention over an f16, q8_0
// or q4_0 cache, blocks of query tokens, vector exp) against
// attend_group_reference, and its swiglu and geglu against the scalar ones, on random
// inputs of awkward sizes: head sizes not multiples of 8 or above the kernels'
// tile limit, group sizes above 16, context lengths on both sides of the key
// tiles, scores large enough that the running max moves many times. The
// quantized caches: every K x V type pair, SIMD against the reference over the
// same quantized bytes, and the reference against f32 attention.
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
#include "tensor/types.h"

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
    if (!ks.attend_group) continue;
    ++checked;
    double worst = 0;
    for (int64_t hd : {8, 13, 64, 80, 128, 256, 264, 384, 512, 520}) {  // 520: past the tiles, the reference
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
          g.k = reinterpret_cast<const uint8_t*>(k.data());
          g.v = reinterpret_cast<const uint8_t*>(v.data());
          g.k_stride = ks_stride * sizeof(uint16_t);
          g.v_stride = vs_stride * sizeof(uint16_t);
          g.n_kv = n_kv;
          g.head_dim = hd;
          g.head_dim_v = hdv;
          g.scale = 1.0f / std::sqrt(float(hd));
          g.softcap = nq % 2 ? 0.0f : 4.0f;  // gemma2's soft-capping (low, so the sharp scores hit it)
          g.out_stride = size_t(hdv) + 5;  // cells between the rows must stay untouched
          g.out_tok_stride = size_t(nq) * g.out_stride + 2;
          std::vector<float> want(size_t(n_tok) * g.out_tok_stride, -3.f), got(want);
          g.out = want.data();
          attend_group_reference(g);
          g.out = got.data();
          ks.attend_group(g);
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
    std::printf("[ %s ] attend_group f16 worst |simd-ref|/max|v| = %.2e\n", ks.isa, worst);
  }
  if (checked == 0) GTEST_SKIP() << "no kernel set with attend_group on this CPU";
}

// A cache of n_rows positions, each row n_heads heads of hd elements of type
// t plus padding bytes (the stride is not row_size), from f32 values.
struct TypedCache {
  GgmlType type;
  size_t stride;
  std::vector<uint8_t> bytes;
  std::vector<float> f32;  // the values stored, [n_rows][n_heads * hd]
};

TypedCache make_cache(GgmlType t, int64_t n_rows, int64_t n_heads, int64_t hd, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.f, 1.f);
  TypedCache c;
  c.type = t;
  const int64_t width = n_heads * hd;
  c.stride = row_size(t, width) + 6;  // padding between positions
  c.bytes.assign(size_t(n_rows) * c.stride + 64, 0xA5);
  c.f32.resize(size_t(n_rows * width));
  for (auto& x : c.f32) x = normal(rng);
  for (int64_t p = 0; p < n_rows; ++p) store_kv_row(t, c.f32.data() + p * width, c.bytes.data() + p * c.stride, width);
  return c;
}

const char* tname(GgmlType t) { return t == GgmlType::F16 ? "f16" : t == GgmlType::Q8_0 ? "q8_0" : "q4_0"; }

// SIMD against the scalar twin over the same quantized bytes: the int8 block
// dots are exact, so only float summation order and the vector exp differ.
// Soft-capping changes a sharp softmax (the kernels are held to the
// reference with it above; this shows the reference applies it at all).
TEST(AttentionKernels, SoftcapFlattensSharpScores) {
  const int64_t hd = 32, n_kv = 8;
  std::vector<float> q(hd, 3.0f), out_plain(hd), out_capped(hd);
  std::vector<uint16_t> k(size_t(n_kv * hd)), v(size_t(n_kv * hd));
  for (int64_t p = 0; p < n_kv; ++p)
    for (int64_t i = 0; i < hd; ++i) {
      k[size_t(p * hd + i)] = f32_to_fp16(p == 3 ? 1.0f : 0.1f * float(p));
      v[size_t(p * hd + i)] = f32_to_fp16(float(p));
    }
  AttendGroup g;
  g.q = q.data();
  g.q_stride = g.q_tok_stride = size_t(hd);
  g.nq = 1;
  g.k = reinterpret_cast<const uint8_t*>(k.data());
  g.v = reinterpret_cast<const uint8_t*>(v.data());
  g.k_stride = g.v_stride = size_t(hd) * sizeof(uint16_t);
  g.n_kv = n_kv;
  g.head_dim = g.head_dim_v = hd;
  g.scale = 1.0f / std::sqrt(float(hd));
  g.out_stride = g.out_tok_stride = size_t(hd);
  g.out = out_plain.data();
  attend_group_reference(g);
  g.softcap = 2.0f;
  g.out = out_capped.data();
  attend_group_reference(g);
  // Uncapped, position 3 (score 17) takes nearly all the weight; capped at
  // 2, every score sits within 2 of the others and the mean moves towards 3.5.
  EXPECT_NEAR(out_plain[0], 3.0f, 0.05f);
  EXPECT_GT(std::fabs(out_capped[0] - out_plain[0]), 0.3f);
}

TEST(AttentionKernels, QuantizedKvMatchesReference) {
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  std::mt19937 rng(23);
  std::normal_distribution<float> normal(0.f, 1.f);
  const GgmlType types[] = {GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4_0};
  int checked = 0;
  for (int s = 0; s < n_sets; ++s) {
    const KernelSet& ks = *sets[s];
    if (!ks.attend_group) continue;
    ++checked;
    for (GgmlType kt : types) {
      for (GgmlType vt : types) {
        double worst = 0;
        for (int64_t hd : {64, 96, 128, 512}) {
          for (int nq : {1, 2, 7}) {
            for (int64_t n_kv : {1, 31, 33, 300}) {
              for (int n_tok : {1, 5}) {
                const int64_t n_heads_kv = 2, kvh = 1;  // attend the second head of each row
                const int64_t hdv = hd == 96 ? 64 : hd;  // V size unlike K size once
                const int64_t n_rows = n_kv + n_tok - 1;
                const TypedCache kc = make_cache(kt, n_rows, n_heads_kv, hd, rng);
                const TypedCache vc = make_cache(vt, n_rows, n_heads_kv, hdv, rng);
                const float qscale = (n_kv % 2) ? 1.f : 4.f;
                const size_t q_tok = size_t(nq) * size_t(hd) + 3;
                std::vector<float> q(size_t(n_tok) * q_tok);
                for (auto& x : q) x = normal(rng) * qscale;
                AttendGroup g;
                g.q = q.data();
                g.q_stride = size_t(hd);
                g.q_tok_stride = q_tok;
                g.nq = nq;
                g.n_tok = n_tok;
                g.k = kc.bytes.data() + row_size(kt, kvh * hd);
                g.v = vc.bytes.data() + row_size(vt, kvh * hdv);
                g.k_type = kt;
                g.v_type = vt;
                g.k_stride = kc.stride;
                g.v_stride = vc.stride;
                g.quantize_q8 = ks.quantize_act[int(GgmlType::Q8_0)];
                g.n_kv = n_kv;
                g.head_dim = hd;
                g.head_dim_v = hdv;
                g.scale = 1.0f / std::sqrt(float(hd));
                g.softcap = nq % 2 ? 0.0f : 4.0f;
                g.out_stride = size_t(hdv) + 5;
                g.out_tok_stride = size_t(nq) * g.out_stride + 2;
                std::vector<float> want(size_t(n_tok) * g.out_tok_stride, -3.f), got(want);
                g.out = want.data();
                attend_group_reference(g);
                g.out = got.data();
                ks.attend_group(g);
                float vmax = 0;
                for (float x : want) vmax = std::max(vmax, std::fabs(x));
                const std::string what = std::string(ks.isa) + " K " + tname(kt) + " V " + tname(vt) +
                                         " hd=" + std::to_string(hd) + " nq=" + std::to_string(nq) +
                                         " n_kv=" + std::to_string(n_kv) + " n_tok=" + std::to_string(n_tok);
                for (size_t i = 0; i < got.size(); ++i) {
                  const size_t in_tok = i % g.out_tok_stride;
                  if (in_tok >= size_t(nq) * g.out_stride || in_tok % g.out_stride >= size_t(hdv)) {
                    ASSERT_EQ(got[i], -3.f) << what << ": wrote between rows at " << i;
                    continue;
                  }
                  ASSERT_TRUE(std::isfinite(got[i])) << what;
                  const double err = std::fabs(double(got[i]) - want[i]);
                  ASSERT_LE(err, 1e-4 * vmax) << what << " i=" << i << ": got " << got[i] << " ref " << want[i];
                  worst = std::max(worst, err / vmax);
                }
              }
            }
          }
        }
        std::printf("[ %s ] attend_group K %s V %s: worst |simd-ref|/max|out| = %.2e\n", ks.isa, tname(kt), tname(vt),
                    worst);
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "no kernel set with attend_group on this CPU";
}

// The reference over a quantized cache against attention in f32 over the
// values the cache was written from (Gaussian rows: q4_0's 16 levels leave
// ~8 % per element, q8_0's 255 ~0.5 %; a sharp softmax magnifies K's part):
// q8_0 (K scores also through the q8_0 query) within 3 %, q4_0 within 35 %,
// q8_0 several times closer than q4_0, f16 closer than both.
TEST(AttentionKernels, QuantizedKvCloseToF32) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 1.f);
  const int64_t hd = 128, n_kv = 200;
  const int nq = 4, n_tok = 3;
  const int64_t n_rows = n_kv + n_tok - 1;
  const TypedCache k32 = make_cache(GgmlType::F32, n_rows, 1, hd, rng);
  const TypedCache v32 = make_cache(GgmlType::F32, n_rows, 1, hd, rng);
  std::vector<float> q(size_t(n_tok * nq * hd));
  for (auto& x : q) x = normal(rng) * 2.f;  // a softmax neither flat nor one-hot
  AttendGroup g;
  g.q = q.data();
  g.q_stride = size_t(hd);
  g.q_tok_stride = size_t(nq * hd);
  g.nq = nq;
  g.n_tok = n_tok;
  g.n_kv = n_kv;
  g.head_dim = g.head_dim_v = hd;
  g.scale = 1.0f / std::sqrt(float(hd));
  g.out_stride = size_t(hd);
  g.out_tok_stride = size_t(nq * hd);
  auto run = [&](GgmlType kt, GgmlType vt) {
    std::vector<uint8_t> kb(size_t(n_rows) * row_size(kt, hd)), vb(size_t(n_rows) * row_size(vt, hd));
    for (int64_t p = 0; p < n_rows; ++p) {
      store_kv_row(kt, k32.f32.data() + p * hd, kb.data() + size_t(p) * row_size(kt, hd), hd);
      store_kv_row(vt, v32.f32.data() + p * hd, vb.data() + size_t(p) * row_size(vt, hd), hd);
    }
    g.k = kb.data();
    g.v = vb.data();
    g.k_type = kt;
    g.v_type = vt;
    g.k_stride = row_size(kt, hd);
    g.v_stride = row_size(vt, hd);
    std::vector<float> out(size_t(n_tok * nq * hd));
    g.out = out.data();
    attend_group_reference(g);
    return out;
  };
  const std::vector<float> want = run(GgmlType::F32, GgmlType::F32);
  auto rel_err = [&](const std::vector<float>& got) {
    double num = 0, den = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      num += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
      den += double(want[i]) * want[i];
    }
    return std::sqrt(num / den);
  };
  const double e_f16 = rel_err(run(GgmlType::F16, GgmlType::F16));
  const double e_q8 = rel_err(run(GgmlType::Q8_0, GgmlType::Q8_0));
  const double e_q4 = rel_err(run(GgmlType::Q4_0, GgmlType::Q4_0));
  const double e_q8k_f16v = rel_err(run(GgmlType::Q8_0, GgmlType::F16));
  const double e_f16k_q4v = rel_err(run(GgmlType::F16, GgmlType::Q4_0));
  std::printf("rel. L2 error vs f32 attention: f16 %.2e, q8_0 %.2e, q4_0 %.2e, K q8_0 + V f16 %.2e, K f16 + V q4_0 %.2e\n",
              e_f16, e_q8, e_q4, e_q8k_f16v, e_f16k_q4v);
  EXPECT_LT(e_f16, 2e-3);
  EXPECT_LT(e_q8, 3e-2);
  EXPECT_LT(e_q8k_f16v, 3e-2);
  EXPECT_LT(e_q4, 0.35);
  EXPECT_LT(e_f16k_q4v, 0.2);
  EXPECT_LT(e_q8 * 4, e_q4);
  EXPECT_LT(e_f16, e_q8);
}

// SwiGLU and GeGLU (gemma's FFN) per set against swiglu_inplace and
// geglu_inplace, with spreads whose exponentials leave float range (200;
// 1e30, where x^3 overflows to inf). The sets compute GeGLU's 0.5 x (1 +
// tanh u) as x / (1 + e^(-2u)), which avoids the scalar formula's
// cancellation in 1 + tanh(u) for x < -3 (there the reference itself carries
// ~1e-7 of |x| in absolute error): its bound adds that absolute part.
TEST(AttentionKernels, GatedActivationsMatchReference) {
  struct Glu {
    const char* name;
    SwigluFn KernelSet::*fn;
    SwigluFn reference;
    double rel, abs_of_x_up;
  };
  const Glu glus[] = {{"swiglu", &KernelSet::swiglu, swiglu_inplace, 1e-6, 0},
                      {"geglu", &KernelSet::geglu, geglu_inplace, 2e-6, 2e-7}};
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (const Glu& glu : glus)
    for (int s = 0; s < n_sets; ++s) {
      const SwigluFn fn = sets[s]->*glu.fn;
      const char* isa = sets[s]->isa;
      ASSERT_NE(fn, nullptr) << isa << " " << glu.name;
      for (int64_t n : {1, 7, 8, 9, 31, 1000}) {
        for (float spread : {1.f, 5.f, 30.f, 200.f, 1e30f}) {
          std::vector<float> gate(static_cast<size_t>(n)), up(static_cast<size_t>(n));
          for (auto& x : gate) x = normal(rng) * spread;
          for (auto& x : up) x = normal(rng);
          std::vector<float> want = gate, got = gate;
          glu.reference(want.data(), up.data(), n);
          fn(got.data(), up.data(), n);
          for (size_t j = 0; j < size_t(n); ++j) {
            ASSERT_TRUE(std::isfinite(got[j])) << isa << " " << glu.name << " gate " << gate[j];
            const double tol = glu.rel * std::fabs(want[j]) + glu.abs_of_x_up * std::fabs(double(gate[j]) * up[j]) + 1e-30;
            ASSERT_LE(std::fabs(double(got[j]) - want[j]), tol) << isa << " " << glu.name << " n=" << n << " gate "
                                                                 << gate[j] << " up " << up[j] << ": got " << got[j]
                                                                 << " ref " << want[j];
          }
        }
      }
    }
}

// Sliding windows (gemma2/3: a token at position p sees p - window + 1 .. p)
// and ring caches (position p at row p % ring). The reference's window
// against softmax attention written out in double over exactly the visible
// positions; the reference over a ring against the same rows laid out by
// position (bit-identical: the same arithmetic in the same order); every
// kernel set over the ring against the reference, with windows of 1, odd
// ones, ones past a key tile, token blocks whose rows see different tiles,
// and a ring that has wrapped several times.
TEST(AttentionKernels, WindowAndRingMatchReference) {
  const KernelSet* sets[8];
  const int n_sets = available_kernel_sets(sets, 8);
  std::mt19937 rng(41);
  std::normal_distribution<float> normal(0.f, 1.f);
  const GgmlType types[][2] = {{GgmlType::F16, GgmlType::F16}, {GgmlType::Q8_0, GgmlType::Q8_0},
                               {GgmlType::Q4_0, GgmlType::F16}, {GgmlType::F16, GgmlType::Q8_0}};
  int simd_checked = 0;
  for (const auto& kv : types) {
    const GgmlType kt = kv[0], vt = kv[1];
    for (int64_t hd : {64, 128}) {
      for (int nq : {1, 7}) {
        for (int n_tok : {1, 5, 13}) {
          for (int64_t window : {1, 5, 32, 33, 100}) {
            const int64_t n_kv = 290;                   // the first token's position is n_kv - 1
            const int64_t n_rows = n_kv + n_tok - 1;    // positions 0 .. n_rows - 1
            const int64_t ring = (window + n_tok - 1 + 31) / 32 * 32 + (window % 2) * 32;  // tight, and not
            const TypedCache kc = make_cache(kt, n_rows, 1, hd, rng), vc = make_cache(vt, n_rows, 1, hd, rng);
            // The same rows in a ring: position p at row p % ring, the last ring positions.
            std::vector<uint8_t> kr(size_t(ring) * kc.stride, 0x5A), vr(size_t(ring) * vc.stride, 0x5A);
            for (int64_t p = std::max<int64_t>(0, n_rows - ring); p < n_rows; ++p) {
              std::copy_n(kc.bytes.data() + size_t(p) * kc.stride, kc.stride, kr.data() + size_t(p % ring) * kc.stride);
              std::copy_n(vc.bytes.data() + size_t(p) * vc.stride, vc.stride, vr.data() + size_t(p % ring) * vc.stride);
            }
            std::vector<float> q(size_t(n_tok * nq * hd));
            for (auto& x : q) x = normal(rng) * 2.f;
            AttendGroup g;
            g.q = q.data();
            g.q_stride = size_t(hd);
            g.q_tok_stride = size_t(nq * hd);
            g.nq = nq;
            g.n_tok = n_tok;
            g.k_type = kt;
            g.v_type = vt;
            g.k_stride = kc.stride;
            g.v_stride = vc.stride;
            g.n_kv = n_kv;
            g.window = window;
            g.head_dim = g.head_dim_v = hd;
            g.scale = 1.0f / std::sqrt(float(hd));
            g.out_stride = size_t(hd);
            g.out_tok_stride = size_t(nq * hd);
            const size_t n_out = size_t(n_tok * nq * hd);
            std::vector<float> linear(n_out), ringed(n_out), got(n_out);
            g.k = kc.bytes.data();
            g.v = vc.bytes.data();
            g.out = linear.data();
            attend_group_reference(g);
            g.k = kr.data();
            g.v = vr.data();
            g.ring = ring;
            g.out = ringed.data();
            attend_group_reference(g);
            const std::string what = std::string("K ") + tname(kt) + " V " + tname(vt) + " hd=" + std::to_string(hd) +
                                     " nq=" + std::to_string(nq) + " n_tok=" + std::to_string(n_tok) +
                                     " window=" + std::to_string(window) + " ring=" + std::to_string(ring);
            ASSERT_EQ(linear, ringed) << what;
            // Softmax over the visible positions, in double, from the values
            // the cache holds (f32 stored values for f16 rows; the tolerance
            // covers the cache types' rounding).
            if (kt == GgmlType::F16 && vt == GgmlType::F16) {
              for (int t = 0; t < n_tok; ++t)
                for (int h = 0; h < nq; ++h) {
                  const int64_t p = n_kv - 1 + t, lo = std::max<int64_t>(0, p - window + 1);
                  const float* qr = q.data() + size_t((t * nq + h) * hd);
                  std::vector<double> w;
                  double mx = -1e300;
                  for (int64_t s = lo; s <= p; ++s) {
                    double d = 0;
                    for (int64_t i = 0; i < hd; ++i) d += double(qr[i]) * kc.f32[size_t(s * hd + i)];
                    w.push_back(d / std::sqrt(double(hd)));
                    mx = std::max(mx, w.back());
                  }
                  double l = 0;
                  for (double& x : w) l += (x = std::exp(x - mx));
                  for (int64_t i = 0; i < hd; ++i) {
                    double o = 0;
                    for (int64_t s = lo; s <= p; ++s) o += w[size_t(s - lo)] / l * vc.f32[size_t(s * hd + i)];
                    ASSERT_NEAR(linear[size_t((t * nq + h) * hd + i)], o, 5e-3) << what << " t=" << t << " h=" << h;
                  }
                }
            }
            for (int k = 0; k < n_sets; ++k) {
              const KernelSet& ks = *sets[k];
              if (!ks.attend_group) continue;
              ++simd_checked;
              g.quantize_q8 = ks.quantize_act[int(GgmlType::Q8_0)];
              g.out = got.data();
              ks.attend_group(g);
              g.quantize_q8 = nullptr;
              float vmax = 0;
              for (float x : linear) vmax = std::max(vmax, std::fabs(x));
              for (size_t i = 0; i < n_out; ++i) {
                ASSERT_TRUE(std::isfinite(got[i])) << ks.isa << " " << what;
                ASSERT_LE(std::fabs(double(got[i]) - linear[i]), 1e-4 * vmax)
                    << ks.isa << " " << what << " i=" << i << ": got " << got[i] << " ref " << linear[i];
              }
            }
          }
        }
      }
    }
  }
  std::printf("window/ring: %d SIMD cases against the reference\n", simd_checked);
}

}  // namespace
