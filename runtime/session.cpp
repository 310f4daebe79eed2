// The optimized forward pass (f32 activations, weights in their GGUF type,
// int8 dot products via kernels/, f16 KV cache) over one batch of tokens.
// The double-precision model/reference_forward.cpp is its oracle.
#include "runtime/session.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "base/error.h"
#include "base/fp16.h"
#include "kernels/attention.h"
#include "kernels/dispatch.h"
#include "kernels/nn_ops.h"

namespace edgellm {

// Pointers into the session's single arena. Shapes with B = n_batch.
struct Session::Buffers {
  float* x;        // [B][n_embd]        residual stream
  float* xn;       // [B][n_embd]        normed input / projection output
  float* q;        // [B][q_dim]
  float* k;        // [B][k_dim]
  float* v;        // [B][v_dim]
  float* att;      // [B][n_head * head_dim_v]
  float* gate;     // [B][n_ff]
  float* up;       // [B][n_ff]
  float* logits;   // [B or 1][n_vocab]
  float* rope;     // [B][n_rot/2][2]    cos, sin per position and pair
  double* inv_freq;  // [n_rot/2]        per-pair angular frequency (incl. rope_freqs factors)
  void* act;       // quantized activations for matmul
  uint8_t* k_cache;  // [n_layer][n_ctx][k_dim] of kv_type
  uint8_t* v_cache;  // [n_layer][n_ctx][v_dim] of kv_type
};

namespace {
struct ArenaPlan {
  size_t total = 0;
  size_t add(size_t bytes) {
    const size_t at = total;
    total += (bytes + 63) / 64 * 64;
    return at;
  }
};
}  // namespace

Session::Session(const Model& model, const SessionConfig& cfg)
    : model_(model),
      kv_type_(cfg.kv_type),
      logits_all_(cfg.logits_all),
      pool_(cfg.n_threads > 0 ? cfg.n_threads : std::max(1, int(std::thread::hardware_concurrency())), cfg.pin_threads),
      arena_(nullptr, [](uint8_t* p) { std::free(p); }) {
  const HParams& hp = model.hparams();
  if (cfg.n_ctx < 0) fail("context size ", cfg.n_ctx, " is negative");
  n_ctx_ = cfg.n_ctx > 0 ? cfg.n_ctx : std::min<int64_t>(hp.n_ctx_train, 4096);
  if (n_ctx_ > hp.n_ctx_train)
    fail("context size ", n_ctx_, " is larger than the model supports (", hp.n_ctx_train,
         " tokens); use -c ", hp.n_ctx_train, " or less");
  if (cfg.n_batch < 1) fail("batch size ", cfg.n_batch, " must be at least 1");
  n_batch_ = std::min(cfg.n_batch, n_ctx_);
  if (kv_type_ != GgmlType::F16 && kv_type_ != GgmlType::F32)
    fail("KV cache type ", type_name(uint32_t(kv_type_)), " is not supported (f16, f32)");

  const int64_t B = n_batch_, E = hp.n_embd;
  const int64_t att_dim = hp.n_head * hp.head_dim_v;
  // Scratch for quantized activations: the largest need of any matmul group.
  size_t act = 0;
  for (const LayerWeights& L : model.layers()) {
    const MatmulJob qkv[3] = {{&L.wq, nullptr}, {&L.wk, nullptr}, {&L.wv, nullptr}};
    const MatmulJob gu[2] = {{&L.w_gate, nullptr}, {&L.w_up, nullptr}};
    act = std::max({act, matmul_scratch_bytes(qkv, 3, B), matmul_scratch_bytes(gu, 2, B),
                    matmul_scratch_bytes(L.wo, B), matmul_scratch_bytes(L.w_down, B)});
  }
  act = std::max(act, matmul_scratch_bytes(model.output(), B));

  const size_t kv_elt = kv_type_ == GgmlType::F16 ? 2 : 4;
  ArenaPlan plan;
  const size_t f = sizeof(float);
  const size_t o_x = plan.add(B * E * f), o_xn = plan.add(B * E * f), o_q = plan.add(B * hp.q_dim() * f),
               o_k = plan.add(B * hp.k_dim() * f), o_v = plan.add(B * hp.v_dim() * f),
               o_att = plan.add(B * att_dim * f), o_gate = plan.add(B * hp.n_ff * f),
               o_up = plan.add(B * hp.n_ff * f),
               o_logits = plan.add((logits_all_ ? B : 1) * hp.n_vocab * f),
               o_rope = plan.add(B * hp.n_rot * f), o_freq = plan.add(hp.n_rot / 2 * sizeof(double)),
               o_act = plan.add(act);
  const size_t kv_k = size_t(hp.n_layer) * n_ctx_ * hp.k_dim() * kv_elt;
  const size_t kv_v = size_t(hp.n_layer) * n_ctx_ * hp.v_dim() * kv_elt;
  const size_t o_kc = plan.add(kv_k), o_vc = plan.add(kv_v);
  kv_bytes_ = kv_k + kv_v;
  arena_bytes_ = plan.total;
  arena_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, plan.total)));
  if (!arena_)
    fail("cannot allocate ", plan.total >> 20, " MiB for the session (KV cache ", kv_bytes_ >> 20,
         " MiB at context ", n_ctx_, "); try a smaller -c or -b");
  uint8_t* a = arena_.get();
  b_ = std::make_unique<Buffers>(Buffers{
      reinterpret_cast<float*>(a + o_x), reinterpret_cast<float*>(a + o_xn), reinterpret_cast<float*>(a + o_q),
      reinterpret_cast<float*>(a + o_k), reinterpret_cast<float*>(a + o_v), reinterpret_cast<float*>(a + o_att),
      reinterpret_cast<float*>(a + o_gate), reinterpret_cast<float*>(a + o_up),
      reinterpret_cast<float*>(a + o_logits), reinterpret_cast<float*>(a + o_rope),
      reinterpret_cast<double*>(a + o_freq), a + o_act, a + o_kc, a + o_vc});
  // theta_i = base^(-2i/n_rot), divided by the file's per-pair factor (llama 3.1+)
  // and scaled for linear RoPE scaling.
  for (int64_t i = 0; i < hp.n_rot / 2; ++i) {
    double fr = std::pow(double(hp.rope_base), -2.0 * double(i) / double(hp.n_rot)) * hp.rope_freq_scale;
    if (!model.rope_freqs().empty()) fr /= model.rope_freqs()[size_t(i)];
    b_->inv_freq[i] = fr;
  }
}

Session::~Session() = default;

void Session::truncate(int64_t n) {
  if (n < 0 || n > n_past_) fail("cannot truncate a session of ", n_past_, " tokens to ", n);
  n_past_ = n;
}

const float* Session::decode(const int32_t* tokens, int64_t T, bool all_logits) {
  const HParams& hp = model_.hparams();
  if (T < 1 || T > n_batch_) fail("decode: ", T, " tokens do not fit the batch size ", n_batch_);
  if (n_past_ + T > n_ctx_)
    fail("context is full: ", n_past_, " cached + ", T, " new tokens exceed the context size ", n_ctx_,
         " (use a larger -c)");
  if (all_logits && !logits_all_) fail("decode: all_logits needs a session created with logits_all");
  for (int64_t t = 0; t < T; ++t) model_.embed(tokens[t], b_->x + t * hp.n_embd);

  const int64_t half = hp.n_rot / 2;
  for (int64_t t = 0; t < T; ++t) {
    const double pos = double(n_past_ + t);
    for (int64_t i = 0; i < half; ++i) {
      const double th = pos * b_->inv_freq[i];
      b_->rope[(t * half + i) * 2] = float(std::cos(th));
      b_->rope[(t * half + i) * 2 + 1] = float(std::sin(th));
    }
  }
  for (int64_t il = 0; il < hp.n_layer; ++il) forward_layer(il, T);

  // Only the rows whose logits are wanted go through the output head.
  const int64_t first = all_logits ? 0 : T - 1, n_out = T - first;
  for (int64_t t = 0; t < n_out; ++t)
    rms_norm(b_->x + (first + t) * hp.n_embd, model_.output_norm().data(), hp.n_embd, hp.rms_eps,
             b_->xn + t * hp.n_embd);
  matmul(pool_, model_.output(), b_->xn, n_out, b_->logits, b_->act);
  n_past_ += T;
  return b_->logits;
}

void Session::forward_layer(int64_t il, int64_t T) {
  const HParams& hp = model_.hparams();
  const LayerWeights& L = model_.layers()[size_t(il)];
  Buffers& b = *b_;
  const int64_t E = hp.n_embd;

  for (int64_t t = 0; t < T; ++t) rms_norm(b.x + t * E, L.attn_norm.data(), E, hp.rms_eps, b.xn + t * E);
  const MatmulJob qkv[3] = {{&L.wq, b.q}, {&L.wk, b.k}, {&L.wv, b.v}};
  matmul_multi(pool_, qkv, 3, b.xn, T, b.act);
  for (int64_t t = 0; t < T; ++t) {
    float* q = b.q + t * hp.q_dim();
    float* k = b.k + t * hp.k_dim();
    if (!L.bq.empty()) add_inplace(q, L.bq.data(), hp.q_dim());
    if (!L.bk.empty()) add_inplace(k, L.bk.data(), hp.k_dim());
    if (!L.bv.empty()) add_inplace(b.v + t * hp.v_dim(), L.bv.data(), hp.v_dim());
    if (!L.q_norm.empty())
      for (int64_t h = 0; h < hp.n_head; ++h)
        rms_norm(q + h * hp.head_dim, L.q_norm.data(), hp.head_dim, hp.rms_eps, q + h * hp.head_dim);
    if (!L.k_norm.empty())
      for (int64_t h = 0; h < hp.n_head_kv; ++h)
        rms_norm(k + h * hp.head_dim, L.k_norm.data(), hp.head_dim, hp.rms_eps, k + h * hp.head_dim);
    const float* cs = b.rope + t * hp.n_rot;
    const bool neox = model_.arch().rope == RopeStyle::Neox;
    for (int64_t h = 0; h < hp.n_head; ++h) rope_apply(q + h * hp.head_dim, cs, hp.n_rot, neox);
    for (int64_t h = 0; h < hp.n_head_kv; ++h) rope_apply(k + h * hp.head_dim, cs, hp.n_rot, neox);
    // Append this position's keys and values to the cache.
    const size_t pos = size_t(il) * n_ctx_ + size_t(n_past_ + t);
    store_row(kv_type_, k, b.k_cache, pos, hp.k_dim());
    store_row(kv_type_, b.v + t * hp.v_dim(), b.v_cache, pos, hp.v_dim());
  }
  attention(il, T);
  matmul(pool_, L.wo, b.att, T, b.xn, b.act);
  add_inplace(b.x, b.xn, T * E);

  for (int64_t t = 0; t < T; ++t) rms_norm(b.x + t * E, L.ffn_norm.data(), E, hp.rms_eps, b.xn + t * E);
  const MatmulJob gate_up[2] = {{&L.w_gate, b.gate}, {&L.w_up, b.up}};
  matmul_multi(pool_, gate_up, 2, b.xn, T, b.act);
  // A prompt's SwiGLU is T * n_ff exponentials (2.5 M per layer for 512 tokens
  // on qwen2.5-0.5b): split over the pool like the matmuls.
  const SwigluFn swiglu = kernels().swiglu;
  const int64_t n_act = T * hp.n_ff;
  if (n_act >= (1 << 16) && pool_.size() > 1) {
    pool_.run([&](int ith, int nth) {
      int64_t i0, i1;
      split_range(n_act, ith, nth, &i0, &i1);
      swiglu(b.gate + i0, b.up + i0, i1 - i0);
    });
  } else {
    swiglu(b.gate, b.up, n_act);
  }
  matmul(pool_, L.w_down, b.gate, T, b.xn, b.act);
  add_inplace(b.x, b.xn, T * E);
}

void Session::attention(int64_t il, int64_t T) {
  const HParams& hp = model_.hparams();
  AttentionArgs a;
  a.q = b_->q;
  a.out = b_->att;
  a.k_cache = b_->k_cache + size_t(il) * n_ctx_ * hp.k_dim() * (kv_type_ == GgmlType::F16 ? 2 : 4);
  a.v_cache = b_->v_cache + size_t(il) * n_ctx_ * hp.v_dim() * (kv_type_ == GgmlType::F16 ? 2 : 4);
  a.kv_type = kv_type_;
  a.n_tokens = T;
  a.n_past = n_past_;
  a.n_head = hp.n_head;
  a.n_head_kv = hp.n_head_kv;
  a.head_dim = hp.head_dim;
  a.head_dim_v = hp.head_dim_v;
  a.scale = 1.0f / std::sqrt(float(hp.head_dim));
  attention_causal(pool_, a);
}

}  // namespace edgellm
