#include "runtime/executor.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "kernels/attention.h"
#include "kernels/dispatch.h"
#include "kernels/nn_ops.h"

namespace edgellm {

// Pointers into the arena (shapes in ArenaLayout).
struct Executor::Buffers {
  float *x, *xn, *q, *k, *v, *att, *gate, *up, *ffn_out, *logits, *rope, *per_layer, *per_layer_gate;
  double* inv_freq;
  void* act;
};

Executor::Executor(const Model& model, const MemoryPlan& plan, bool pin_threads)
    : model_(model),
      plan_(plan),
      pool_(plan.settings.n_threads, pin_threads),
      arena_(nullptr, [](uint8_t* p) { std::free(p); }) {
  if (model.planning_only())
    fail(model.file().source(), ": loaded for planning only (no tokenizer, weights unread); load it fully to run it");
  allocate_arena();
  const size_t B = size_t(plan.n_batch);
  tok_id_.resize(B);
  tok_pos_.resize(B);
  tok_part_.resize(B);
}

Executor::~Executor() = default;

void Executor::allocate_arena() {
  const ArenaLayout& l = plan_.arena;
  arena_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, l.total)));
  if (!arena_) fail("cannot allocate ", l.total >> 20, " MiB of activation buffers; try a smaller -b");
  uint8_t* a = arena_.get();
  std::memset(a, 0, l.total);  // resident now, like the KV cache: the footprint never grows later
  auto f = [&](size_t off) { return reinterpret_cast<float*>(a + off); };
  const bool pl = l.per_layer > 0;
  b_ = std::make_unique<Buffers>(Buffers{f(l.x), f(l.xn), f(l.q), f(l.k), f(l.v), f(l.att), f(l.gate), f(l.up),
                                         f(l.ffn_out), f(l.logits), f(l.rope), pl ? f(l.per_layer) : nullptr,
                                         pl ? f(l.per_layer_gate) : nullptr,
                                         reinterpret_cast<double*>(a + l.inv_freq), a + l.act});
  // theta_i = base^(-2i/n_rot), divided by the file's per-pair factor (llama
  // 3.1+; Gemma 4's global layers: 1e30 for the pairs it leaves unrotated)
  // and scaled for linear RoPE scaling; local (sliding-window) layers with
  // their own base (and, Gemma 4, their own n_rot) get a second table.
  const HParams& hp = model_.hparams();
  const std::vector<float>& factors = model_.rope_factors(plan_.n_ctx);  // LongRoPE: long or short by context
  for (int64_t i = 0; i < hp.n_rot / 2; ++i) {
    double fr = std::pow(double(hp.rope_base), -2.0 * double(i) / double(hp.n_rot)) * hp.rope_freq_scale;
    if (!factors.empty()) fr /= factors[size_t(i)];
    b_->inv_freq[i] = fr;
  }
  const int64_t rot_swa = hp.n_rot_of_table(1);
  if (hp.local_rope())
    for (int64_t i = 0; i < rot_swa / 2; ++i)
      b_->inv_freq[hp.max_n_rot() / 2 + i] =
          std::pow(double(hp.rope_base_swa), -2.0 * double(i) / double(rot_swa)) * hp.rope_freq_scale_swa;
}

// The RoPE table (cos, sin per position and pair: [n_batch][n_rot_at(il)])
// and the inverse frequencies layer il uses.
const float* Executor::rope_table(int64_t il) const {
  const HParams& hp = model_.hparams();
  return hp.local_rope() && hp.sliding(il) ? b_->rope + plan_.n_batch * hp.max_n_rot() : b_->rope;
}

void Executor::release_buffers() {
  b_.reset();
  arena_.reset();
}

const float* Executor::forward(KvCache& kv, const int32_t* tokens, int64_t T, bool all_logits) {
  if (all_logits && !plan_.settings.logits_all) fail("decode: all_logits needs a plan made with logits_all");
  const Part part{&kv, tokens, T};
  return run(&part, 1, all_logits);
}

int64_t Executor::max_parts() const {
  return plan_.settings.logits_all ? plan_.n_batch : std::min<int64_t>(plan_.n_batch, plan_.settings.n_seq);
}

const float* Executor::forward_batch(const Part* parts, int64_t n_parts) {
  if (n_parts < 1 || n_parts > max_parts())
    fail("decode: ", n_parts, " sequences in one pass (this plan has room for 1..", max_parts(), ")");
  return run(parts, n_parts, false);
}

const float* Executor::run(const Part* parts, int64_t n_parts, bool all_logits) {
  const HParams& hp = model_.hparams();
  int64_t T = 0;
  for (int64_t j = 0; j < n_parts; ++j) {
    const Part& p = parts[j];
    KvCache& kv = *p.kv;
    if (p.n < 1 || p.n > plan_.n_batch - T) fail("decode: ", T + p.n, " tokens do not fit the batch size ", plan_.n_batch);
    if (kv.size() + p.n > kv.n_ctx())
      fail("context is full: ", kv.size(), " cached + ", p.n, " new tokens exceed the context size ", kv.n_ctx(),
           " (use a larger -c)");
    if (!kv.resident()) fail("decode: the KV cache was released (memory pressure) and not restored");
    if (kv.reusable(kv.size()) != kv.size())
      fail("decode: the sliding-window layers no longer hold the last ", hp.n_swa, " positions (from ", kv.swa_floor(),
           " of ", kv.size(), "); truncate the cache and feed its tokens again");
    for (int64_t i = 0; i < j; ++i)
      if (parts[i].kv == p.kv) fail("decode: one cache appears twice in a batched pass");
    for (int64_t t = 0; t < p.n; ++t) {
      if (p.tokens[t] < 0 || p.tokens[t] >= hp.n_vocab)
        fail("decode: token id ", p.tokens[t], " is outside the vocabulary (", hp.n_vocab, " tokens)");
      tok_id_[size_t(T)] = p.tokens[t];
      tok_pos_[size_t(T)] = kv.size() + t;
      tok_part_[size_t(T)] = int32_t(j);
      ++T;
    }
  }
  if (!arena_) allocate_arena();
  for (int64_t t = 0; t < T; ++t) model_.embed(tok_id_[size_t(t)], b_->x + t * hp.n_embd);
  // Gemma scales its embeddings by sqrt(n_embd) (the tied head reads them unscaled).
  if (model_.arch().embed_scale) {
    const float s = std::sqrt(float(hp.n_embd));
    for (int64_t i = 0; i < T * hp.n_embd; ++i) b_->x[i] *= s;
  }

  // cos and sin times rope.scaling.attn_factor (1 unless the file says):
  // q and k's rotated dims scaled as llama.cpp's rope does. (rotate_keys
  // rotates cached keys, already scaled, by a plain rotation.) Each token
  // at its own position in its own sequence.
  const double mscale = hp.rope_attn_factor;
  for (int tab = 0; tab < (hp.local_rope() ? 2 : 1); ++tab) {
    const int64_t half = hp.n_rot_of_table(tab) / 2;
    float* rope = b_->rope + tab * plan_.n_batch * hp.max_n_rot();
    const double* inv = b_->inv_freq + tab * hp.max_n_rot() / 2;
    for (int64_t t = 0; t < T; ++t) {
      const double pos = double(tok_pos_[size_t(t)]);
      for (int64_t i = 0; i < half; ++i) {
        const double th = pos * inv[i];
        rope[(t * half + i) * 2] = float(std::cos(th) * mscale);
        rope[(t * half + i) * 2 + 1] = float(std::sin(th) * mscale);
      }
    }
  }
  if (hp.n_embd_per_layer > 0) per_layer_inputs(T);
  for (int64_t il = 0; il < hp.n_layer; ++il) forward_layer(parts, n_parts, il, T);
  for (int64_t j = 0; j < n_parts; ++j) parts[j].kv->append(parts[j].tokens, parts[j].n);

  // Only the rows whose logits are wanted go through the output head: every
  // token's (all_logits, one part), else each part's last.
  int64_t n_out = 0;
  if (all_logits) {
    for (int64_t t = 0; t < T; ++t)
      rms_norm(b_->x + t * hp.n_embd, model_.output_norm().data(), hp.n_embd, hp.rms_eps, b_->xn + t * hp.n_embd);
    n_out = T;
  } else {
    int64_t end = 0;
    for (int64_t j = 0; j < n_parts; ++j) {
      end += parts[j].n;
      rms_norm(b_->x + (end - 1) * hp.n_embd, model_.output_norm().data(), hp.n_embd, hp.rms_eps,
               b_->xn + j * hp.n_embd);
    }
    n_out = n_parts;
  }
  matmul(pool_, model_.output(), b_->xn, n_out, b_->logits, b_->act);
  if (hp.final_softcap > 0)
    for (int64_t i = 0; i < n_out * hp.n_vocab; ++i)
      b_->logits[i] = hp.final_softcap * std::tanh(b_->logits[i] / hp.final_softcap);
  return b_->logits;
}

// Gemma 4's per-layer inputs, [T][n_layer][P]: for each layer, the RMS-normed
// projection of the (scaled) embedding plus the token's per-layer embedding
// times sqrt(P), the sum times 1/sqrt(2) (llama.cpp's
// project_per_layer_inputs, Hugging Face's get/project_per_layer_inputs).
void Executor::per_layer_inputs(int64_t T) {
  const HParams& hp = model_.hparams();
  const int64_t P = hp.n_embd_per_layer, LP = hp.n_layer * P;
  float* pl = b_->per_layer;
  float* tok = pl + plan_.n_batch * LP;  // the buffer's spare row: one token's embedding
  const WeightView& emb = model_.per_layer_token_embd();
  matmul(pool_, model_.per_layer_model_proj(), b_->x, T, pl, b_->act);
  const float s_proj = 1.0f / std::sqrt(float(hp.n_embd)), s_tok = std::sqrt(float(P));
  const float s_sum = 1.0f / std::sqrt(2.0f);
  for (int64_t t = 0; t < T; ++t) {
    dequantize_row(emb.type, emb.data + size_t(tok_id_[size_t(t)]) * emb.row_bytes(), tok, LP);
    float* row = pl + t * LP;
    for (int64_t i = 0; i < LP; ++i) row[i] *= s_proj;
    for (int64_t l = 0; l < hp.n_layer; ++l)
      rms_norm(row + l * P, model_.per_layer_proj_norm().data(), P, hp.rms_eps, row + l * P);
    for (int64_t i = 0; i < LP; ++i) row[i] = (row[i] + tok[i] * s_tok) * s_sum;
  }
}

void Executor::forward_layer(const Part* parts, int64_t n_parts, int64_t il, int64_t T) {
  const HParams& hp = model_.hparams();
  const LayerWeights& L = model_.layers()[size_t(il)];
  Buffers& b = *b_;
  const int64_t E = hp.n_embd;
  // This layer's sizes (Gemma 4's sliding layers have their own head size),
  // and whether it computes keys and values or reads an earlier layer's.
  const int64_t hd = hp.head_dim_at(il), q_dim = hp.q_dim_at(il), k_dim = hp.k_dim_at(il), v_dim = hp.v_dim_at(il);
  const int64_t hdv = hp.head_dim_v_at(il), n_rot = hp.n_rot_at(il), n_head_kv = hp.n_head_kv_at(il);
  const bool owns_kv = hp.owns_kv(il);

  for (int64_t t = 0; t < T; ++t) rms_norm(b.x + t * E, L.attn_norm.data(), E, hp.rms_eps, b.xn + t * E);
  const MatmulJob qkv[3] = {{&L.wq, b.q}, {&L.wk, b.k}, {&L.wv, b.v}};
  matmul_multi(pool_, qkv, owns_kv ? 3 : 1, b.xn, T, b.act);
  const bool ropes = model_.arch().ropes_layer(il), neox = model_.arch().rope == RopeStyle::Neox;
  for (int64_t t = 0; t < T; ++t) {
    float* q = b.q + t * q_dim;
    if (!L.bq.empty()) add_inplace(q, L.bq.data(), q_dim);
    if (!L.q_norm.empty())
      for (int64_t h = 0; h < hp.n_head; ++h) rms_norm(q + h * hd, L.q_norm.data(), hd, hp.rms_eps, q + h * hd);
    const float* cs = rope_table(il) + t * n_rot;
    if (ropes)
      for (int64_t h = 0; h < hp.n_head; ++h) rope_apply(q + h * hd, cs, n_rot, neox);
    if (!owns_kv) continue;
    float* k = b.k + t * k_dim;
    float* v = b.v + t * v_dim;
    if (!L.bk.empty()) add_inplace(k, L.bk.data(), k_dim);
    if (!L.bv.empty()) add_inplace(v, L.bv.data(), v_dim);
    if (!L.k_norm.empty())
      for (int64_t h = 0; h < n_head_kv; ++h) rms_norm(k + h * hd, L.k_norm.data(), hd, hp.rms_eps, k + h * hd);
    if (model_.arch().v_norm)
      for (int64_t h = 0; h < n_head_kv; ++h) rms_norm(v + h * hdv, nullptr, hdv, hp.rms_eps, v + h * hdv);
    if (ropes)
      for (int64_t h = 0; h < n_head_kv; ++h) rope_apply(k + h * hd, cs, n_rot, neox);
    // Append this position's keys and values to its sequence's cache.
    KvCache& kv = *parts[tok_part_[size_t(t)]].kv;
    const int64_t pos = tok_pos_[size_t(t)];
    store_kv_row(kv.type_k(), k, kv.k_row(il, pos), k_dim);
    store_kv_row(kv.type_v(), v, kv.v_row(il, pos), v_dim);
  }
  // Attention per sequence: each part's queries against its own cache.
  for (int64_t j = 0, t0 = 0; j < n_parts; t0 += parts[j].n, ++j) attention(*parts[j].kv, il, t0, parts[j].n);
  matmul(pool_, L.wo, b.att, T, b.xn, b.act);
  if (!L.attn_post_norm.empty())
    for (int64_t t = 0; t < T; ++t) rms_norm(b.xn + t * E, L.attn_post_norm.data(), E, hp.rms_eps, b.xn + t * E);
  add_inplace(b.x, b.xn, T * E);

  for (int64_t t = 0; t < T; ++t) rms_norm(b.x + t * E, L.ffn_norm.data(), E, hp.rms_eps, b.xn + t * E);
  // The FFN over chunks of at most ffn_chunk tokens (see MemoryPlan::ffn_chunk).
  const SwigluFn glu = model_.arch().ffn == FfnActivation::GeluTanh ? kernels().geglu : kernels().swiglu;
  const int64_t n_ff = hp.n_ff_at(il);
  for (int64_t c0 = 0; c0 < T; c0 += plan_.ffn_chunk) {
    const int64_t nc = std::min(plan_.ffn_chunk, T - c0);
    const MatmulJob gate_up[2] = {{&L.w_gate, b.gate}, {&L.w_up, b.up}};
    matmul_multi(pool_, gate_up, 2, b.xn + c0 * E, nc, b.act);
    // A chunk's SwiGLU is nc * n_ff exponentials (623k per layer for 128
    // tokens on qwen2.5-0.5b): split over the pool like the matmuls.
    const int64_t n_act = nc * n_ff;
    if (n_act >= (1 << 16) && pool_.size() > 1) {
      pool_.run([&](int ith, int nth) {
        int64_t i0, i1;
        split_range(n_act, ith, nth, &i0, &i1);
        glu(b.gate + i0, b.up + i0, i1 - i0);
      });
    } else {
      glu(b.gate, b.up, n_act);
    }
    matmul(pool_, L.w_down, b.gate, nc, b.ffn_out, b.act);
    if (!L.ffn_post_norm.empty())
      for (int64_t t = 0; t < nc; ++t)
        rms_norm(b.ffn_out + t * E, L.ffn_post_norm.data(), E, hp.rms_eps, b.ffn_out + t * E);
    add_inplace(b.x + c0 * E, b.ffn_out, nc * E);
  }

  // Gemma 4: x += post_norm(proj(gelu(inp_gate x) * this layer's input)),
  // then the block's output times layer_output_scale.
  if (hp.n_embd_per_layer > 0) {
    const int64_t P = hp.n_embd_per_layer, LP = hp.n_layer * P;
    matmul(pool_, L.inp_gate, b.x, T, b.per_layer_gate, b.act);
    for (int64_t t = 0; t < T; ++t) kernels().geglu(b.per_layer_gate + t * P, b.per_layer + t * LP + il * P, P);
    matmul(pool_, L.proj, b.per_layer_gate, T, b.xn, b.act);
    for (int64_t t = 0; t < T; ++t) rms_norm(b.xn + t * E, L.pl_post_norm.data(), E, hp.rms_eps, b.xn + t * E);
    add_inplace(b.x, b.xn, T * E);
  }
  if (L.out_scale != 1.0f)
    for (int64_t i = 0; i < T * E; ++i) b.x[i] *= L.out_scale;
}

void Executor::attention(KvCache& kv, int64_t il, int64_t t0, int64_t T) {
  const HParams& hp = model_.hparams();
  AttentionArgs a;
  a.q = b_->q + t0 * hp.q_dim_at(il);
  a.out = b_->att + t0 * hp.n_head * hp.head_dim_v_at(il);
  a.k_cache = kv.k_layer(il);
  a.v_cache = kv.v_layer(il);
  a.k_type = kv.type_k();
  a.v_type = kv.type_v();
  a.k_stride = kv.k_row_bytes(il);
  a.v_stride = kv.v_row_bytes(il);
  a.n_tokens = T;
  a.n_past = kv.size();
  a.n_head = hp.n_head;
  a.n_head_kv = hp.n_head_kv_at(il);
  a.head_dim = hp.head_dim_at(il);
  a.head_dim_v = hp.head_dim_v_at(il);
  // Gemma 4 scores q.k unscaled: its q norm's weights carry the scale.
  a.scale = model_.arch().unit_attn_scale ? 1.0f : 1.0f / std::sqrt(float(a.head_dim));
  a.softcap = hp.attn_softcap;
  // A sliding-window layer: token t (position p) sees p - n_swa + 1 .. p,
  // from its ring when the cache keeps only the window.
  a.window = hp.sliding(il) ? hp.n_swa : 0;
  a.ring = kv.ring(il);
  attention_causal(pool_, a);
}

void Executor::rotate_keys(KvCache& kv, int64_t first, int64_t end, int64_t delta) {
  const HParams& hp = model_.hparams();
  if (first < 0 || end > kv.size() || first > end) fail("rotate_keys: cells ", first, "..", end, " out of range");
  if (delta == 0 || first == end) return;
  if (!arena_) allocate_arena();
  // R(p) then R(delta) = R(p + delta): one rotation by delta for every key,
  // with the angles in double. The f32 row lives in the arena's k buffer
  // (B rows of k_dim floats: one is enough).
  float* cs = b_->rope;  // one row of each table: rotation by delta
  for (int tab = 0; tab < (hp.local_rope() ? 2 : 1); ++tab) {
    const int64_t half = hp.n_rot_of_table(tab) / 2;
    float* row_cs = cs + tab * plan_.n_batch * hp.max_n_rot();
    for (int64_t i = 0; i < half; ++i) {
      const double th = double(delta) * b_->inv_freq[tab * hp.max_n_rot() / 2 + i];
      row_cs[2 * i] = float(std::cos(th));
      row_cs[2 * i + 1] = float(std::sin(th));
    }
  }
  const bool neox = model_.arch().rope == RopeStyle::Neox;
  float* row = b_->k;
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    if (!model_.arch().ropes_layer(il)) continue;  // a NoPE layer's keys carry no position
    if (!kv.owns(il)) continue;                    // its keys are another layer's, rotated there
    const float* layer_cs = rope_table(il);
    const int64_t hd = hp.head_dim_at(il), k_dim = hp.k_dim_at(il), n_rot = hp.n_rot_at(il);
    const int64_t n_head_kv = hp.n_head_kv_at(il);
    for (int64_t c = std::max(first, kv.first_held(il)); c < end; ++c) {  // a ring holds each position once
      uint8_t* k = kv.k_row(il, c);
      dequantize_row(kv.type_k(), k, row, k_dim);
      for (int64_t h = 0; h < n_head_kv; ++h) rope_apply(row + h * hd, layer_cs, n_rot, neox);
      store_kv_row(kv.type_k(), row, k, k_dim);
    }
  }
}

}  // namespace edgellm
