#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/error.h"
#include "base/fp16.h"
#include "kernels/dispatch.h"
#include "tensor/blocks.h"

namespace edgellm {

namespace {

bool is_block_kv(GgmlType t) { return t == GgmlType::Q8_0 || t == GgmlType::Q4_0; }

// Reference scores and value accumulation for one cache row of each type.
// f16: q . k in f32 (the scalar kv_dot_f16), 2 bytes per element.
// q8_0 / q4_0: vec_dot of the row with the query quantized to q8_0
// (34 / 18 bytes per 32 elements).
float ref_score(GgmlType t, const float* q, const void* qq, const uint8_t* k, int64_t n) {
  float s = 0;
  switch (t) {
    case GgmlType::F16: {
      const uint16_t* kh = reinterpret_cast<const uint16_t*>(k);
      for (int64_t i = 0; i < n; ++i) s += q[i] * fp16_to_f32(kh[i]);
      return s;
    }
    case GgmlType::F32: {  // rows may sit at any byte offset: load through memcpy
      for (int64_t i = 0; i < n; ++i) {
        float x;
        std::memcpy(&x, k + i * 4, 4);
        s += q[i] * x;
      }
      return s;
    }
    case GgmlType::Q8_0: return ref::vec_dot_q8_0_q8_0(n, k, qq);
    case GgmlType::Q4_0: return ref::vec_dot_q4_0_q8_0(n, k, qq);
    default: fail("attention: unsupported K cache type ", type_name(uint32_t(t)));
  }
}

// acc += w * v, v one cache row of n elements of type t. Block types are
// widened a block at a time with dequantize_row's arithmetic (no row copy).
void ref_axpy(GgmlType t, float* acc, float w, const uint8_t* v, int64_t n) {
  switch (t) {
    case GgmlType::F16: {
      const uint16_t* vh = reinterpret_cast<const uint16_t*>(v);
      for (int64_t i = 0; i < n; ++i) acc[i] += w * fp16_to_f32(vh[i]);
      return;
    }
    case GgmlType::F32: {
      for (int64_t i = 0; i < n; ++i) {
        float x;
        std::memcpy(&x, v + i * 4, 4);
        acc[i] += w * x;
      }
      return;
    }
    case GgmlType::Q8_0: {
      const auto* b = reinterpret_cast<const block_q8_0*>(v);
      for (int64_t i = 0; i < n / QK8_0; ++i) {
        const float d = fp16_to_f32(b[i].d);
        for (int j = 0; j < QK8_0; ++j) acc[i * QK8_0 + j] += w * (float(b[i].qs[j]) * d);
      }
      return;
    }
    case GgmlType::Q4_0: {
      const auto* b = reinterpret_cast<const block_q4_0*>(v);
      for (int64_t i = 0; i < n / QK4_0; ++i) {
        const float d = fp16_to_f32(b[i].d);
        float* a = acc + i * QK4_0;
        for (int j = 0; j < QK4_0 / 2; ++j) {
          a[j] += w * (float((b[i].qs[j] & 0xF) - 8) * d);
          a[j + QK4_0 / 2] += w * (float((b[i].qs[j] >> 4) - 8) * d);
        }
      }
      return;
    }
    default: fail("attention: unsupported V cache type ", type_name(uint32_t(t)));
  }
}

// Byte offset of position p's row in a cache of rows `stride` apart.
size_t kv_row_offset(const AttendGroup& g, int64_t p, size_t stride) {
  return size_t(g.ring > 0 ? p % g.ring : p) * stride;
}

// One query head over positions 0 .. n_kv-1, or the last g.window of them
// (position p's key at K + kv_row_offset(p), value likewise), the output row
// overwritten.
void attend_head(const float* q, const AttendGroup& g, int64_t n_kv, float* acc) {
  const int64_t head_dim = g.head_dim, head_dim_v = g.head_dim_v;
  // The query row in q8_0 for a block-type K: at most kKvMaxBlockHeadDim
  // elements (kv_type_fits), on the stack.
  block_q8_0 qq[kKvMaxBlockHeadDim / QK8_0];
  if (is_block_kv(g.k_type)) {
    if (head_dim > kKvMaxBlockHeadDim || head_dim % QK8_0 != 0)
      fail("attention: head size ", head_dim, " does not fit a ", type_name(uint32_t(g.k_type)), " K cache");
    if (g.quantize_q8) g.quantize_q8(q, qq, head_dim);
    else quantize_row(GgmlType::Q8_0, q, qq, head_dim);
  }
  for (int64_t i = 0; i < head_dim_v; ++i) acc[i] = 0;
  float m = -std::numeric_limits<float>::infinity(), l = 0;
  // Keys in tiles of kTile: the tile's scores first, then one rescale of the
  // running sum per tile (not per key) when the tile raises the max.
  constexpr int64_t kTile = 32;
  float w[kTile];
  const int64_t first = g.window > 0 ? std::max<int64_t>(0, n_kv - g.window) : 0;
  for (int64_t s0 = first; s0 < n_kv; s0 += kTile) {
    const int64_t n = std::min(kTile, n_kv - s0);
    float tile_max = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < n; ++j) {
      w[j] = ref_score(g.k_type, q, qq, g.k + kv_row_offset(g, s0 + j, g.k_stride), head_dim) * g.scale;
      if (g.softcap > 0) w[j] = g.softcap * std::tanh(w[j] / g.softcap);
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
      ref_axpy(g.v_type, acc, p, g.v + kv_row_offset(g, s0 + j, g.v_stride), head_dim_v);
    }
  }
  const float inv = 1.0f / l;
  for (int64_t i = 0; i < head_dim_v; ++i) acc[i] *= inv;
}

// Query rows per kernel call: a block of tokens times the group's heads. More
// rows share each K/V row read; fewer leave more items to spread over the
// threads.
constexpr int64_t kRowsPerItem = 32;

// Tokens [t0, t0 + nt), KV head kvh and its group of query heads.
void attend_group(const AttentionArgs& a, int64_t t0, int64_t nt, int64_t kvh, const KernelSet& ks) {
  const int64_t group = a.n_head / a.n_head_kv;
  const int64_t q_tok = a.n_head * a.head_dim, o_tok = a.n_head * a.head_dim_v;
  AttendGroup g;
  g.q = a.q + t0 * q_tok + kvh * group * a.head_dim;
  g.q_stride = size_t(a.head_dim);
  g.q_tok_stride = size_t(q_tok);
  g.nq = int(group);
  g.n_tok = int(nt);
  // Head kvh's part of a row starts at row_size(type, kvh * head_dim) bytes.
  g.k = a.k_cache + row_size(a.k_type, kvh * a.head_dim);
  g.v = a.v_cache + row_size(a.v_type, kvh * a.head_dim_v);
  g.k_type = a.k_type;
  g.v_type = a.v_type;
  g.k_stride = a.k_stride;
  g.v_stride = a.v_stride;
  g.quantize_q8 = ks.quantize_act[int(GgmlType::Q8_0)];
  g.n_kv = a.n_past + t0 + 1;  // causal: token t0 sees positions 0 .. n_past + t0
  g.window = a.window;
  g.ring = a.ring;
  g.head_dim = a.head_dim;
  g.head_dim_v = a.head_dim_v;
  g.scale = a.scale;
  g.softcap = a.softcap;
  g.out = a.out + t0 * o_tok + kvh * group * a.head_dim_v;
  g.out_stride = size_t(a.head_dim_v);
  g.out_tok_stride = size_t(o_tok);
  if (ks.attend_group && a.k_type != GgmlType::F32) ks.attend_group(g);
  else attend_group_reference(g);
}

}  // namespace

bool kv_type_fits(GgmlType t, int64_t head_dim, std::string* why, const char* flag) {
  auto refuse = [&](const std::string& msg) {
    if (why) *why = msg;
    return false;
  };
  const std::string name = type_name(uint32_t(t));
  if (head_dim <= 0) return refuse("KV cache: head size " + std::to_string(head_dim) + " is not positive");
  if (t == GgmlType::F16 || t == GgmlType::F32) return true;
  if (!is_block_kv(t))
    return refuse("KV cache type " + name + " is not supported (f16, q8_0, q4_0 or f32): use " + flag + " f16");
  if (head_dim % QK8_0 != 0)
    return refuse("KV cache type " + name + " needs a head size divisible by 32; this model's is " +
                  std::to_string(head_dim) + ": use " + flag + " f16");
  if (head_dim > kKvMaxBlockHeadDim)
    return refuse("KV cache type " + name + " supports head sizes up to " + std::to_string(kKvMaxBlockHeadDim) +
                  "; this model's is " + std::to_string(head_dim) + ": use " + flag + " f16");
  return true;
}

bool kv_types_fit(GgmlType k_type, GgmlType v_type, int64_t head_dim, int64_t head_dim_v, std::string* why) {
  if (!kv_type_fits(k_type, head_dim, why, "-ctk") || !kv_type_fits(v_type, head_dim_v, why, "-ctv")) return false;
  if ((k_type == GgmlType::F32) != (v_type == GgmlType::F32)) {
    if (why)
      *why = "KV cache types " + type_name(uint32_t(k_type)) + "/" + type_name(uint32_t(v_type)) +
             ": f32 works only for both K and V (-ctk f32 -ctv f32)";
    return false;
  }
  return true;
}

void attention_causal(ThreadPool& pool, const AttentionArgs& a) {
  if (std::string why; !kv_types_fit(a.k_type, a.v_type, a.head_dim, a.head_dim_v, &why)) fail("attention: ", why);
  if (a.ring > 0 && (a.ring % 32 != 0 || a.window <= 0 || a.ring < a.window + a.n_tokens - 1))
    fail("attention: a ring cache of ", a.ring, " rows cannot serve a window of ", a.window, " for ", a.n_tokens,
         " tokens (needs a multiple of 32, at least window + tokens - 1)");
  const KernelSet& ks = kernels();
  const int64_t group = a.n_head / a.n_head_kv;
  const int64_t tok_block = std::max<int64_t>(1, kRowsPerItem / group);
  const int64_t n_blocks = (a.n_tokens + tok_block - 1) / tok_block;
  // Work items: (token block, KV head), each covering that KV head's query heads.
  const int64_t items = n_blocks * a.n_head_kv;
  // Small problems (short contexts, tiny models) run on the calling thread:
  // a pool wake-up costs more than the work.
  const int64_t seen = a.window > 0 ? std::min(a.window, a.n_past + a.n_tokens) : a.n_past + a.n_tokens;
  const int64_t macs = a.n_tokens * a.n_head * seen * (a.head_dim + a.head_dim_v);
  // Items (token-major) are dealt round-robin, not in contiguous ranges: the
  // causal cost of token t grows with n_past + t, so contiguous ranges gave
  // the last thread most of a prompt's attention (3/4 of it with 2 threads).
  auto body = [&](int ith, int nth) {
    for (int64_t i = ith; i < items; i += nth) {
      const int64_t t0 = (i / a.n_head_kv) * tok_block, nt = std::min(tok_block, a.n_tokens - t0);
      attend_group(a, t0, nt, i % a.n_head_kv, ks);
    }
  };
  if (macs >= (1 << 16) && pool.size() > 1) pool.run(body); else body(0, 1);
}

void attend_group_reference(const AttendGroup& g) {
  for (int t = 0; t < g.n_tok; ++t)
    for (int h = 0; h < g.nq; ++h)
      attend_head(g.q + size_t(t) * g.q_tok_stride + size_t(h) * g.q_stride, g, g.n_kv + t,
                  g.out + size_t(t) * g.out_tok_stride + size_t(h) * g.out_stride);
}

}  // namespace edgellm
