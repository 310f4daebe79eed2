#include "tools/plan_shape.h"

#include "base/error.h"
#include "model/arch.h"
#include "model/weight_slice.h"

namespace edgellm {

namespace {

// What a file would have measured, per vocabulary entry, from the plans of
// synth files (edgellm plan -m): qwen2 vocabulary (151,936 tokens, 151k
// merges) / llama-bpe (128,256 tokens, 280k merges). Between the two; the
// merges a config.json does not tell make the difference.
//   GGUF header (token strings, types, merges): 39 / 61 bytes per token;
//   file-backed, it only enters the plan as pages of program text.
//   tokenizer tables after loading: 162 / 198;
//   heap while loading (metadata arrays and tables together): 485 / 682.
constexpr uint64_t kHeaderBytesPerToken = 50;
constexpr uint64_t kHeaderBytesPerTensor = 64;  // name, dims, type, offset
constexpr uint64_t kTokenizerBytesPerToken = 180;
constexpr uint64_t kLoadPeakBytesPerToken = 580;

}  // namespace

std::vector<PlannedTensor> plan_tensors(const ModelDesc& d, const QuantRecipe& q) {
  const ArchDesc* arch = find_arch(d.arch);
  if (!arch) fail(d.name, ": architecture '", d.arch, "' is not supported (supported: ", known_arch_names(), ")");
  const HParams& hp = d.hp;
  const int64_t E = hp.n_embd, gqa = hp.n_head / hp.n_head_kv;
  std::vector<PlannedTensor> out;
  auto add = [&](std::string name, TensorRole role, int64_t cols, int64_t rows, int64_t layer) {
    const GgmlType t = quant_tensor_type(q, {role, cols, layer, hp.n_layer, gqa, d.tied});
    if (cols % traits(t).block_size != 0)
      fail(d.name, ": tensor ", name, " has rows of ", cols, " values, which no type of ", q.name, " can hold");
    out.push_back({std::move(name), t, cols, rows, uint64_t(row_size(t, cols)) * uint64_t(rows)});
  };
  const auto V = TensorRole::Vector;
  add("token_embd.weight", TensorRole::TokenEmbd, E, hp.n_vocab, -1);
  add("output_norm.weight", V, E, 1, -1);
  if (!d.tied) add("output.weight", TensorRole::Output, E, hp.n_vocab, -1);
  if (arch->rope_freqs && d.llama3_rope) add("rope_freqs.weight", V, hp.n_rot / 2, 1, -1);
  if (arch->longrope && d.longrope) {
    add("rope_factors_long.weight", V, hp.n_rot / 2, 1, -1);
    add("rope_factors_short.weight", V, hp.n_rot / 2, 1, -1);
  }
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    add(p + "attn_norm.weight", V, E, 1, il);
    if (arch->fused_qkv) {  // what converters write for these (llama-quantize: an attn_v)
      add(p + "attn_qkv.weight", TensorRole::AttnV, E, hp.q_dim() + hp.k_dim() + hp.v_dim(), il);
    } else {
      add(p + "attn_q.weight", TensorRole::AttnQ, E, hp.q_dim(), il);
      add(p + "attn_k.weight", TensorRole::AttnK, E, hp.k_dim(), il);
      add(p + "attn_v.weight", TensorRole::AttnV, E, hp.v_dim(), il);
    }
    add(p + "attn_output.weight", TensorRole::AttnOut, hp.n_head * hp.head_dim_v, E, il);
    if (arch->qkv_bias) {
      add(p + "attn_q.bias", V, hp.q_dim(), 1, il);
      add(p + "attn_k.bias", V, hp.k_dim(), 1, il);
      add(p + "attn_v.bias", V, hp.v_dim(), 1, il);
    }
    if (arch->qk_norm) {
      add(p + "attn_q_norm.weight", V, hp.head_dim, 1, il);
      add(p + "attn_k_norm.weight", V, hp.head_dim, 1, il);
    }
    if (arch->post_norms) add(p + "post_attention_norm.weight", V, E, 1, il);
    add(p + "ffn_norm.weight", V, E, 1, il);
    if (!arch->fused_gate_up) add(p + "ffn_gate.weight", TensorRole::FfnGate, E, hp.n_ff, il);
    add(p + "ffn_up.weight", TensorRole::FfnUp, E, arch->fused_gate_up ? 2 * hp.n_ff : hp.n_ff, il);
    add(p + "ffn_down.weight", TensorRole::FfnDown, hp.n_ff, E, il);
    if (arch->post_norms) add(p + "post_ffw_norm.weight", V, E, 1, il);
  }
  return out;
}

ModelShape shape_from_desc(const ModelDesc& d, const QuantRecipe& q) {
  const std::vector<PlannedTensor> ts = plan_tensors(d, q);
  ModelShape m;
  m.hp = d.hp;
  // What the loader derives from the architecture (model_loader.cpp), so the
  // plan's arena (a second RoPE table for local layers) is the file's.
  if (const ArchDesc* arch = find_arch(d.arch); arch && arch->swa_period > 0) {
    m.hp.swa_period = arch->swa_period;
    m.hp.rope_base_swa = arch->swa_rope_base;
    if (m.hp.n_swa <= 0) m.hp.n_swa = m.hp.n_ctx_train;  // no window given: plan as if it spans the context
  }
  m.layers.resize(size_t(d.hp.n_layer));
  uint64_t vectors = 0;
  for (const PlannedTensor& t : ts) {
    m.weight_bytes += t.bytes;
    const WeightView w{t.type, t.cols, t.rows, nullptr};
    if (t.rows == 1) vectors += uint64_t(t.cols) * sizeof(float);  // the loader's f32 copies
    if (t.name == "output.weight" || (d.tied && t.name == "token_embd.weight")) m.output = w;
    if (t.name.rfind("blk.", 0) != 0) continue;
    const size_t il = size_t(std::stoll(t.name.substr(4)));
    ModelShape::Layer& L = m.layers[il];
    const std::string role = t.name.substr(t.name.find('.', 4) + 1);
    if (role == "attn_q.weight") L.wq = w;
    else if (role == "attn_k.weight") L.wk = w;
    else if (role == "attn_v.weight") L.wv = w;
    else if (role == "attn_output.weight") L.wo = w;
    else if (role == "attn_qkv.weight") {  // fused: the loader's row views
      L.wq = row_slice(w, 0, d.hp.q_dim());
      L.wk = row_slice(w, d.hp.q_dim(), d.hp.k_dim());
      L.wv = row_slice(w, d.hp.q_dim() + d.hp.k_dim(), d.hp.v_dim());
    } else if (role == "ffn_gate.weight") L.w_gate = w;
    else if (role == "ffn_up.weight" && t.rows == 2 * d.hp.n_ff) {  // fused gate, up
      L.w_gate = row_slice(w, 0, d.hp.n_ff);
      L.w_up = row_slice(w, d.hp.n_ff, d.hp.n_ff);
    } else if (role == "ffn_up.weight") L.w_up = w;
    else if (role == "ffn_down.weight") L.w_down = w;
  }
  const uint64_t nv = uint64_t(d.hp.n_vocab);
  m.header_bytes = kHeaderBytesPerToken * nv + kHeaderBytesPerTensor * ts.size();
  m.alignment = 32;  // what converters write: no realigned copies
  // Whole 64 KiB, as Model::load rounds its measurements.
  auto grain = [](uint64_t n) { return (n + 65535) / 65536 * 65536; };
  m.host_bytes = grain(vectors + kTokenizerBytesPerToken * nv);
  m.load_peak_bytes = grain(std::max(m.host_bytes, vectors + kLoadPeakBytesPerToken * nv));
  return m;
}

uint64_t weight_bytes_read_per_token(const ModelDesc& d, const QuantRecipe& q) {
  uint64_t n = 0;
  for (const PlannedTensor& t : plan_tensors(d, q))
    n += t.name == "token_embd.weight" && !d.tied ? t.bytes / uint64_t(t.rows) : t.bytes;
  return n;
}

uint64_t matmul_params(const ModelDesc& d) {
  const HParams& hp = d.hp;
  const uint64_t E = uint64_t(hp.n_embd);
  const uint64_t per_layer = E * uint64_t(hp.q_dim() + hp.k_dim() + hp.v_dim()) +
                             uint64_t(hp.n_head * hp.head_dim_v) * E + 3 * E * uint64_t(hp.n_ff);
  return per_layer * uint64_t(hp.n_layer) + E * uint64_t(hp.n_vocab);
}

}  // namespace edgellm
