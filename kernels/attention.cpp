#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/dispatch.h"

namespace edgellm {

namespace {

// Row ops by cache element type: f16 through the dispatch table (F16C on
// x86), f32 plain.
template <class Elem>
struct Row;
template <>
struct Row<uint16_t> {
  static float dot(const float* q, const uint16_t* k, int64_t n, const KernelSet& ks) { return ks.kv_dot_f16(q, k, n); }
  static void axpy(float* acc, float w, const uint16_t* v, int64_t n, const KernelSet& ks) { ks.kv_axpy_f16(acc, w, v, n); }
};
template <>
struct Row<float> {
  static float dot(const float* q, const float* k, int64_t n, const KernelSet&) {
    float s = 0;
    for (int64_t i = 0; i < n; ++i) s += q[i] * k[i];
    return s;
  }
  static void axpy(float* acc, float w, const float* v, int64_t n, const KernelSet&) {
    for (int64_t i = 0; i < n; ++i) acc[i] += w * v[i];
  }
};

template <class Elem>
void attend(const AttentionArgs& a, int64_t t, int64_t h, const KernelSet& ks) {
  const int64_t group = a.n_head / a.n_head_kv, kvh = h / group;
  const int64_t kd = a.n_head_kv * a.head_dim, vd = a.n_head_kv * a.head_dim_v;
  const float* q = a.q + t * a.n_head * a.head_dim + h * a.head_dim;
  float* acc = a.out + t * a.n_head * a.head_dim_v + h * a.head_dim_v;
  const Elem* K = reinterpret_cast<const Elem*>(a.k_cache) + kvh * a.head_dim;
  const Elem* V = reinterpret_cast<const Elem*>(a.v_cache) + kvh * a.head_dim_v;
  for (int64_t i = 0; i < a.head_dim_v; ++i) acc[i] = 0;
  float m = -std::numeric_limits<float>::infinity(), l = 0;
  const int64_t n_kv = a.n_past + t + 1;  // causal: positions 0 .. n_past + t
  // Keys in tiles of kTile: the tile's scores first, then one rescale of the
  // running sum per tile (not per key) when the tile raises the max.
  constexpr int64_t kTile = 32;
  float w[kTile];
  for (int64_t s0 = 0; s0 < n_kv; s0 += kTile) {
    const int64_t n = std::min(kTile, n_kv - s0);
    float tile_max = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < n; ++j) {
      w[j] = Row<Elem>::dot(q, K + (s0 + j) * kd, a.head_dim, ks) * a.scale;
      tile_max = std::max(tile_max, w[j]);
    }
    if (tile_max > m) {  // new running max: rescale what was accumulated so far
      const float c = std::exp(m - tile_max);
      l *= c;
      for (int64_t i = 0; i < a.head_dim_v; ++i) acc[i] *= c;
      m = tile_max;
    }
    for (int64_t j = 0; j < n; ++j) {
      const float p = std::exp(w[j] - m);
      l += p;
      Row<Elem>::axpy(acc, p, V + (s0 + j) * vd, a.head_dim_v, ks);
    }
  }
  const float inv = 1.0f / l;
  for (int64_t i = 0; i < a.head_dim_v; ++i) acc[i] *= inv;
}

}  // namespace

void attention_causal(ThreadPool& pool, const AttentionArgs& a) {
  const KernelSet& ks = kernels();
  const int64_t items = a.n_tokens * a.n_head;
  // Small problems (short contexts, tiny models) run on the calling thread:
  // a pool wake-up costs more than the work.
  const int64_t macs = items * (a.n_past + a.n_tokens) * (a.head_dim + a.head_dim_v);
  // Items (token-major) are dealt round-robin, not in contiguous ranges: the
  // causal cost of token t grows with n_past + t, so contiguous ranges gave
  // the last thread most of a prompt's attention (3/4 of it with 2 threads).
  auto body = [&](int ith, int nth) {
    for (int64_t i = ith; i < items; i += nth) {
      if (a.kv_type == GgmlType::F16) attend<uint16_t>(a, i / a.n_head, i % a.n_head, ks);
      else attend<float>(a, i / a.n_head, i % a.n_head, ks);
    }
  };
  if (macs >= (1 << 16) && pool.size() > 1) pool.run(body); else body(0, 1);
}

}  // namespace edgellm
