#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

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

// One query head over cache rows 0 .. n_kv-1 (position p's key at k + p * ks,
// value at v + p * vs), the output row overwritten.
template <class Elem>
void attend_head(const float* q, const Elem* K, const Elem* V, size_t ks, size_t vs, int64_t n_kv, int64_t head_dim,
                 int64_t head_dim_v, float scale, float* acc, const KernelSet& kset) {
  for (int64_t i = 0; i < head_dim_v; ++i) acc[i] = 0;
  float m = -std::numeric_limits<float>::infinity(), l = 0;
  // Keys in tiles of kTile: the tile's scores first, then one rescale of the
  // running sum per tile (not per key) when the tile raises the max.
  constexpr int64_t kTile = 32;
  float w[kTile];
  for (int64_t s0 = 0; s0 < n_kv; s0 += kTile) {
    const int64_t n = std::min(kTile, n_kv - s0);
    float tile_max = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < n; ++j) {
      w[j] = Row<Elem>::dot(q, K + size_t(s0 + j) * ks, head_dim, kset) * scale;
      tile_max = std::max(tile_max, w[j]);
    }
    if (tile_max > m) {  // new running max: rescale what was accumulated so far
      const float c = std::exp(m - tile_max);
      l *= c;
      for (int64_t i = 0; i < head_dim_v; ++i) acc[i] *= c;
      m = tile_max;
    }
    for (int64_t j = 0; j < n; ++j) {
      const float p = std::exp(w[j] - m);
      l += p;
      Row<Elem>::axpy(acc, p, V + size_t(s0 + j) * vs, head_dim_v, kset);
    }
  }
  const float inv = 1.0f / l;
  for (int64_t i = 0; i < head_dim_v; ++i) acc[i] *= inv;
}

// Query rows per kernel call: a block of tokens times the group's heads. More
// rows share each K/V conversion; fewer leave more items to spread over the
// threads.
constexpr int64_t kRowsPerItem = 32;

// Tokens [t0, t0 + nt), KV head kvh and its group of query heads.
template <class Elem>
void attend_group(const AttentionArgs& a, int64_t t0, int64_t nt, int64_t kvh, const KernelSet& ks) {
  const int64_t group = a.n_head / a.n_head_kv;
  const int64_t kd = a.n_head_kv * a.head_dim, vd = a.n_head_kv * a.head_dim_v;
  const int64_t q_tok = a.n_head * a.head_dim, o_tok = a.n_head * a.head_dim_v;
  const float* q = a.q + t0 * q_tok + kvh * group * a.head_dim;
  float* out = a.out + t0 * o_tok + kvh * group * a.head_dim_v;
  const Elem* K = reinterpret_cast<const Elem*>(a.k_cache) + kvh * a.head_dim;
  const Elem* V = reinterpret_cast<const Elem*>(a.v_cache) + kvh * a.head_dim_v;
  const int64_t n_kv = a.n_past + t0 + 1;  // causal: token t0 sees positions 0 .. n_past + t0
  if constexpr (std::is_same_v<Elem, uint16_t>) {
    if (ks.attend_group_f16) {
      AttendGroup g;
      g.q = q;
      g.q_stride = size_t(a.head_dim);
      g.q_tok_stride = size_t(q_tok);
      g.nq = int(group);
      g.n_tok = int(nt);
      g.k = K;
      g.v = V;
      g.k_stride = size_t(kd);
      g.v_stride = size_t(vd);
      g.n_kv = n_kv;
      g.head_dim = a.head_dim;
      g.head_dim_v = a.head_dim_v;
      g.scale = a.scale;
      g.out = out;
      g.out_stride = size_t(a.head_dim_v);
      g.out_tok_stride = size_t(o_tok);
      ks.attend_group_f16(g);
      return;
    }
  }
  for (int64_t t = 0; t < nt; ++t)
    for (int64_t h = 0; h < group; ++h)
      attend_head<Elem>(q + t * q_tok + h * a.head_dim, K, V, size_t(kd), size_t(vd), n_kv + t, a.head_dim,
                        a.head_dim_v, a.scale, out + t * o_tok + h * a.head_dim_v, ks);
}

}  // namespace

void attention_causal(ThreadPool& pool, const AttentionArgs& a) {
  const KernelSet& ks = kernels();
  const int64_t group = a.n_head / a.n_head_kv;
  const int64_t tok_block = std::max<int64_t>(1, kRowsPerItem / group);
  const int64_t n_blocks = (a.n_tokens + tok_block - 1) / tok_block;
  // Work items: (token block, KV head), each covering that KV head's query heads.
  const int64_t items = n_blocks * a.n_head_kv;
  // Small problems (short contexts, tiny models) run on the calling thread:
  // a pool wake-up costs more than the work.
  const int64_t macs = a.n_tokens * a.n_head * (a.n_past + a.n_tokens) * (a.head_dim + a.head_dim_v);
  // Items (token-major) are dealt round-robin, not in contiguous ranges: the
  // causal cost of token t grows with n_past + t, so contiguous ranges gave
  // the last thread most of a prompt's attention (3/4 of it with 2 threads).
  auto body = [&](int ith, int nth) {
    for (int64_t i = ith; i < items; i += nth) {
      const int64_t t0 = (i / a.n_head_kv) * tok_block, nt = std::min(tok_block, a.n_tokens - t0);
      if (a.kv_type == GgmlType::F16) attend_group<uint16_t>(a, t0, nt, i % a.n_head_kv, ks);
      else attend_group<float>(a, t0, nt, i % a.n_head_kv, ks);
    }
  };
  if (macs >= (1 << 16) && pool.size() > 1) pool.run(body); else body(0, 1);
}

void attend_group_reference(const AttendGroup& g) {
  static const KernelSet scalar = [] {
    const KernelSet* sets[1];
    available_kernel_sets(sets, 1);  // the scalar set comes first
    return *sets[0];
  }();
  for (int t = 0; t < g.n_tok; ++t)
    for (int h = 0; h < g.nq; ++h)
      attend_head<uint16_t>(g.q + size_t(t) * g.q_tok_stride + size_t(h) * g.q_stride, g.k, g.v, g.k_stride,
                            g.v_stride, g.n_kv + t, g.head_dim, g.head_dim_v, g.scale,
                            g.out + size_t(t) * g.out_tok_stride + size_t(h) * g.out_stride, scalar);
}

}  // namespace edgellm
