// Model::load: metadata -> HParams, tensors -> LayerWeights, every shape
// checked against the hyper-parameters so a file whose metadata and tensors
// disagree is refused with a message naming both.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#if __has_include(<malloc.h>)
#include <malloc.h>
#endif

#include "base/error.h"
#include "base/mem_stats.h"
#include "model/model.h"
#include "model/weight_slice.h"
#include "tokenizer/tokenizer.h"

namespace edgellm {

class ModelLoader {
 public:
  explicit ModelLoader(Model& m) : m_(m), f_(*m.file_) {}

  void run(bool with_tokenizer) {
    planning_ = !with_tokenizer;
    const std::string arch_name = f_.get_string("general.architecture");
    m_.arch_ = find_arch(arch_name);
    if (!m_.arch_) {
      const std::string_view why = unsupported_arch_reason(arch_name);
      fail(f_.source(), ": architecture '", arch_name, "' is not supported", why.empty() ? "" : ": ", why,
           " (supported: ", known_arch_names(), ")");
    }
    read_hparams(arch_name);
    bind_weights();
    if (with_tokenizer) load_tokenizer();
  }

 private:
  Model& m_;
  const gguf::File& f_;
  bool planning_ = false;

  int64_t key_int(const std::string& arch, const char* key, int64_t def, bool required) {
    const std::string k = arch + "." + key;
    return required ? f_.get_int(k) : f_.get_int_or(k, def);
  }

  // feed_forward_length: one value, or one per layer (Gemma 4's wider FFN in
  // its KV-sharing layers); returns the largest, per-layer sizes in hp.
  int64_t read_n_ff(const std::string& a) {
    HParams& hp = m_.hp_;
    const gguf::Value* v = f_.find(a + ".feed_forward_length");
    if (!v || v->type != gguf::ValueType::ARRAY) return key_int(a, "feed_forward_length", 0, true);
    if (int64_t(v->arr.size()) != hp.n_layer)
      fail(f_.source(), ": ", a, ".feed_forward_length lists ", v->arr.size(), " layers, block_count is ", hp.n_layer);
    int64_t mx = 0;
    for (const gguf::Value& x : v->arr) {
      const int64_t n = x.as_int(a + ".feed_forward_length");
      if (n <= 0 || n > (1 << 22))
        fail(f_.source(), ": ", a, ".feed_forward_length holds ", n, ", out of range (1..4194304)");
      hp.n_ff_layers.push_back(n);
      mx = std::max(mx, n);
    }
    return mx;
  }

  // attention.head_count_kv: one value, or one per layer (Gemma 4's larger
  // sizes, written by llama.cpp's converter from num_global_key_value_heads);
  // returns the largest, per-layer counts in hp. An array of one repeated
  // value is kept as the single value.
  int64_t read_n_head_kv(const std::string& a) {
    HParams& hp = m_.hp_;
    const std::string key = a + ".attention.head_count_kv";
    const gguf::Value* v = f_.find(key);
    if (!v || v->type != gguf::ValueType::ARRAY) return key_int(a, "attention.head_count_kv", hp.n_head, false);
    if (int64_t(v->arr.size()) != hp.n_layer)
      fail(f_.source(), ": ", key, " lists ", v->arr.size(), " layers, block_count is ", hp.n_layer);
    std::vector<int64_t> per_layer;
    for (const gguf::Value& x : v->arr) {
      const int64_t n = x.as_int(key);
      if (n <= 0 || n > (1 << 14)) fail(f_.source(), ": ", key, " holds ", n, ", out of range (1..16384)");
      per_layer.push_back(n);
    }
    const int64_t mx = *std::max_element(per_layer.begin(), per_layer.end());
    if (std::any_of(per_layer.begin(), per_layer.end(), [&](int64_t n) { return n != mx; }))
      hp.n_head_kv_layers = std::move(per_layer);
    return mx;
  }

  // Gemma 4: which layers slide (one bool per layer) and their own sizes.
  void read_swa_layers(const std::string& a) {
    HParams& hp = m_.hp_;
    const std::string key = a + ".attention.sliding_window_pattern";
    const gguf::Value* v = f_.find(key);
    if (!v || v->type != gguf::ValueType::ARRAY || int64_t(v->arr.size()) != hp.n_layer)
      fail(f_.source(), ": ", key, " must list one bool per layer (", hp.n_layer, ")");
    for (const gguf::Value& x : v->arr) hp.swa_layers.push_back(x.type == gguf::ValueType::BOOL ? x.u != 0 : x.as_int(key) != 0);
    hp.head_dim_swa = key_int(a, "attention.key_length_swa", hp.head_dim, false);
    hp.head_dim_v_swa = key_int(a, "attention.value_length_swa", hp.head_dim_swa, false);
    hp.n_rot_swa = key_int(a, "rope.dimension_count_swa", hp.head_dim_swa, false);
    if (hp.head_dim_swa <= 0 || hp.head_dim_swa > (1 << 14) || hp.head_dim_v_swa <= 0 || hp.head_dim_v_swa > (1 << 14))
      fail(f_.source(), ": attention.key_length_swa / value_length_swa ", hp.head_dim_swa, " / ", hp.head_dim_v_swa,
           " are out of range (1..16384)");
    if (hp.n_rot_swa <= 0 || hp.n_rot_swa > hp.head_dim_swa || hp.n_rot_swa % 2 != 0)
      fail(f_.source(), ": rope.dimension_count_swa ", hp.n_rot_swa, " must be even and at most the head size ",
           hp.head_dim_swa);
    hp.rope_base_swa = float(f_.get_float_or(a + ".rope.freq_base_swa", 10000.0));
    if (!(hp.rope_base_swa > 1 && std::isfinite(hp.rope_base_swa)))
      fail(f_.source(), ": rope.freq_base_swa ", hp.rope_base_swa, " is out of range (> 1)");
  }

  void read_hparams(const std::string& a) {
    HParams& hp = m_.hp_;
    hp.n_embd = key_int(a, "embedding_length", 0, true);
    hp.n_layer = key_int(a, "block_count", 0, true);
    hp.n_ff = read_n_ff(a);
    hp.n_head = key_int(a, "attention.head_count", 0, true);
    hp.n_head_kv = read_n_head_kv(a);
    hp.n_ctx_train = key_int(a, "context_length", 2048, false);
    // Mixtral-style files say "llama" with expert tensors: refuse by the key,
    // not by a missing ffn_gate.weight.
    if (const int64_t experts = key_int(a, "expert_count", 0, false); experts > 0)
      fail(f_.source(), ": a mixture-of-experts model (", a, ".expert_count = ", experts,
           ") is not supported: edgellm runs dense models only");
    auto positive = [&](const char* what, int64_t v, int64_t max) {
      if (v <= 0 || v > max)
        fail(f_.source(), ": hyper-parameter ", a, ".", what, " = ", v, " is out of range (1..", max, ")");
    };
    positive("embedding_length", hp.n_embd, 1 << 20);
    positive("block_count", hp.n_layer, 4096);
    positive("feed_forward_length", hp.n_ff, 1 << 22);
    positive("attention.head_count", hp.n_head, 1 << 14);
    positive("attention.head_count_kv", hp.n_head_kv, 1 << 14);
    positive("context_length", hp.n_ctx_train, int64_t(1) << 24);
    for (int64_t il = 0; il < hp.n_layer; ++il)
      if (hp.n_head % hp.n_head_kv_at(il) != 0)
        fail(f_.source(), ": attention.head_count ", hp.n_head, " is not a multiple of head_count_kv ",
             hp.n_head_kv_at(il), hp.n_head_kv_layers.empty() ? "" : " (layer " + std::to_string(il) + ")");
    hp.head_dim = key_int(a, "attention.key_length", hp.n_embd / hp.n_head, false);
    hp.head_dim_v = key_int(a, "attention.value_length", hp.head_dim, false);
    positive("attention.key_length", hp.head_dim, 1 << 14);
    positive("attention.value_length", hp.head_dim_v, 1 << 14);
    hp.n_rot = key_int(a, "rope.dimension_count", hp.head_dim, false);
    if (hp.n_rot <= 0 || hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0)
      fail(f_.source(), ": rope.dimension_count ", hp.n_rot, " must be even and at most the head size ",
           hp.head_dim);
    hp.rms_eps = float(f_.get_float_or(a + ".attention.layer_norm_rms_epsilon", 1e-5));
    hp.rope_base = float(f_.get_float_or(a + ".rope.freq_base", 10000.0));
    if (!(hp.rms_eps > 0 && hp.rms_eps < 1))
      fail(f_.source(), ": layer_norm_rms_epsilon ", hp.rms_eps, " is out of range (0, 1)");
    if (!(hp.rope_base > 1 && std::isfinite(hp.rope_base)))
      fail(f_.source(), ": rope.freq_base ", hp.rope_base, " is out of range (> 1)");
    const std::string scaling = f_.get_string_or(a + ".rope.scaling.type", "none");
    if (scaling == "linear") {
      const double factor = f_.get_float_or(a + ".rope.scaling.factor", 1.0);
      if (!(factor >= 1 && factor < 1e6)) fail(f_.source(), ": rope.scaling.factor ", factor, " is out of range");
      hp.rope_freq_scale = float(1.0 / factor);
    } else if (scaling != "none" && scaling != "llama3") {
      fail(f_.source(), ": rope scaling type '", scaling, "' is not supported (none, linear, llama3)");
    }
    hp.n_ctx_orig = key_int(a, "rope.scaling.original_context_length", hp.n_ctx_train, false);
    positive("rope.scaling.original_context_length", hp.n_ctx_orig, int64_t(1) << 24);
    hp.rope_attn_factor = float(f_.get_float_or(a + ".rope.scaling.attn_factor", 1.0));
    if (!(hp.rope_attn_factor > 0 && hp.rope_attn_factor < 100))
      fail(f_.source(), ": rope.scaling.attn_factor ", hp.rope_attn_factor, " is out of range (0, 100)");
    const ArchDesc& arch = *m_.arch_;
    if (arch.swa_period > 0 || arch.swa_pattern) {
      hp.n_swa = key_int(a, "attention.sliding_window", 0, true);
      positive("attention.sliding_window", hp.n_swa, int64_t(1) << 24);
      hp.swa_period = arch.swa_period;
      hp.rope_base_swa = arch.swa_rope_base;
      hp.rope_freq_scale_swa = 1.0f;  // RoPE scaling (gemma3 4B+: linear x8) is for the global layers only
    }
    if (arch.swa_pattern) read_swa_layers(a);
    if (arch.shared_kv) {
      hp.n_kv_shared = key_int(a, "attention.shared_kv_layers", 0, false);
      if (hp.n_kv_shared < 0 || hp.n_kv_shared >= hp.n_layer)
        fail(f_.source(), ": attention.shared_kv_layers = ", hp.n_kv_shared, " must be below block_count ", hp.n_layer);
      for (int64_t il = hp.n_layer - hp.n_kv_shared; il < hp.n_layer; ++il)
        if (hp.kv_source(il) < 0)
          fail(f_.source(), ": layer ", il, " shares the keys and values of an earlier ",
               hp.sliding(il) ? "sliding" : "global", " layer, but no layer before the shared ones is one");
        else if (hp.n_head_kv_at(il) != hp.n_head_kv_at(hp.kv_source(il)))
          fail(f_.source(), ": layer ", il, " shares the keys and values of layer ", hp.kv_source(il),
               " but attention.head_count_kv gives them ", hp.n_head_kv_at(il), " and ",
               hp.n_head_kv_at(hp.kv_source(il)), " heads");
    }
    if (arch.per_layer_inputs) {
      hp.n_embd_per_layer = key_int(a, "embedding_length_per_layer_input", 0, false);
      if (hp.n_embd_per_layer < 0 || hp.n_embd_per_layer > (1 << 16))
        fail(f_.source(), ": embedding_length_per_layer_input = ", hp.n_embd_per_layer, " is out of range (0..65536)");
    }
    if (arch.final_softcap) {
      hp.final_softcap = float(f_.get_float_or(a + ".final_logit_softcapping", 0.0));
      if (!(hp.final_softcap >= 0 && hp.final_softcap < 1e6))
        fail(f_.source(), ": final_logit_softcapping ", hp.final_softcap, " is out of range [0, 1e6)");
    }
    if (arch.softcaps) {
      hp.attn_softcap = float(f_.get_float_or(a + ".attn_logit_softcapping", 50.0));
      hp.final_softcap = float(f_.get_float_or(a + ".final_logit_softcapping", 30.0));
      if (!(hp.attn_softcap > 0 && hp.attn_softcap < 1e6 && hp.final_softcap > 0 && hp.final_softcap < 1e6))
        fail(f_.source(), ": logit soft-capping values ", hp.attn_softcap, " / ", hp.final_softcap,
             " are out of range (0, 1e6)");
    }
  }

  const gguf::TensorInfo& tensor(const std::string& name) {
    const gguf::TensorInfo* t = f_.find_tensor(name);
    if (!t) fail(f_.source(), ": required tensor '", name, "' is missing");
    return *t;
  }

  void expect_shape(const gguf::TensorInfo& t, std::initializer_list<int64_t> shape) {
    bool ok = t.n_dims == shape.size();
    uint32_t d = 0;
    for (int64_t s : shape) ok = ok && d < 4 && t.ne[d++] == s;
    if (!ok) {
      std::string want = "[";
      for (int64_t s : shape) want += (want.size() > 1 ? ", " : "") + std::to_string(s);
      fail(f_.source(), ": tensor '", t.name, "' has shape ", t.shape_string(), " but the hyper-parameters ",
           "say ", want, "]");
    }
  }

  WeightView matrix(const std::string& name, int64_t cols, int64_t rows) {
    const gguf::TensorInfo& t = tensor(name);
    expect_shape(t, {cols, rows});
    check_supported(t);
    return WeightView{t.type, cols, rows, t.data};
  }

  void check_supported(const gguf::TensorInfo& t) {
    const TypeTraits* tr = type_traits(uint32_t(t.type));
    if (!tr || !tr->supported)
      fail(f_.source(), ": tensor '", t.name, "' has type ", type_name(uint32_t(t.type)),
           ", which edgellm does not support yet");
  }

  std::vector<float> vector_f32(const std::string& name, int64_t n, bool optional = false) {
    const gguf::TensorInfo* t = f_.find_tensor(name);
    if (!t) {
      if (optional) return {};
      fail(f_.source(), ": required tensor '", name, "' is missing");
    }
    expect_shape(*t, {n});
    check_supported(*t);
    std::vector<float> v(static_cast<size_t>(n));
    // A model loaded for planning never runs: its vectors keep their size
    // (they count in the plan) but no weight page is read (a touched page
    // maps a whole large folio: ~50 MiB of RSS for a 0.5B file's norms).
    if (!planning_) dequantize_row(t->type, t->data, v.data(), n);
    return v;
  }

  void bind_weights() {
    HParams& hp = m_.hp_;
    const gguf::TensorInfo& emb = tensor("token_embd.weight");
    if (emb.n_dims != 2 || emb.ne[0] != hp.n_embd)
      fail(f_.source(), ": tensor 'token_embd.weight' has shape ", emb.shape_string(),
           " but embedding_length is ", hp.n_embd);
    hp.n_vocab = emb.ne[1];
    m_.tok_embd_ = matrix("token_embd.weight", hp.n_embd, hp.n_vocab);
    m_.output_norm_ = vector_f32("output_norm.weight", hp.n_embd);
    if (f_.find_tensor("output.weight")) {
      m_.output_ = matrix("output.weight", hp.n_embd, hp.n_vocab);
    } else {
      m_.output_ = m_.tok_embd_;
      m_.tied_ = true;
    }
    const ArchDesc& a = *m_.arch_;
    if (a.rope_freqs) m_.rope_freqs_ = vector_f32("rope_freqs.weight", hp.n_rot / 2, true);
    // Each optional on its own, as in llama.cpp (the converter writes both or neither).
    if (a.longrope) {
      m_.rope_long_ = vector_f32("rope_factors_long.weight", hp.n_rot / 2, true);
      m_.rope_short_ = vector_f32("rope_factors_short.weight", hp.n_rot / 2, true);
    }
    // (A planning load reads no weight page: its factors are zeros, unchecked.)
    if (!planning_)
      for (const auto& [name, v] : {std::pair{"rope_freqs.weight", &m_.rope_freqs_},
                                    std::pair{"rope_factors_long.weight", &m_.rope_long_},
                                    std::pair{"rope_factors_short.weight", &m_.rope_short_}})
        for (float x : *v)
          if (!(x > 0 && std::isfinite(x))) fail(f_.source(), ": ", name, " holds a non-positive factor");

    const int64_t P = hp.n_embd_per_layer, LP = hp.n_layer * P;
    if (P > 0) {
      m_.pl_tok_embd_ = matrix("per_layer_token_embd.weight", LP, hp.n_vocab);
      m_.pl_model_proj_ = matrix("per_layer_model_proj.weight", hp.n_embd, LP);
      m_.pl_proj_norm_ = vector_f32("per_layer_proj_norm.weight", P);
    }

    m_.layers_.resize(size_t(hp.n_layer));
    for (int64_t i = 0; i < hp.n_layer; ++i) {
      LayerWeights& L = m_.layers_[size_t(i)];
      const std::string p = "blk." + std::to_string(i) + ".";
      const bool owns_kv = hp.owns_kv(i);
      L.attn_norm = vector_f32(p + "attn_norm.weight", hp.n_embd);
      L.ffn_norm = vector_f32(p + "ffn_norm.weight", hp.n_embd);
      bind_qkv(L, p, i);
      L.wo = matrix(p + "attn_output.weight", hp.n_head * hp.head_dim_v_at(i), hp.n_embd);
      bind_gate_up(L, p, i);
      L.w_down = matrix(p + "ffn_down.weight", hp.n_ff_at(i), hp.n_embd);
      // Biases: required by the description, but accepted wherever present.
      L.bq = vector_f32(p + "attn_q.bias", hp.q_dim_at(i), !a.qkv_bias);
      if (owns_kv) {
        L.bk = vector_f32(p + "attn_k.bias", hp.k_dim_at(i), !a.qkv_bias);
        L.bv = vector_f32(p + "attn_v.bias", hp.v_dim_at(i), !a.qkv_bias);
      }
      if (a.qk_norm) {
        L.q_norm = vector_f32(p + "attn_q_norm.weight", hp.head_dim_at(i));
        if (owns_kv) L.k_norm = vector_f32(p + "attn_k_norm.weight", hp.head_dim_at(i));
      }
      if (a.post_norms) {
        L.attn_post_norm = vector_f32(p + "post_attention_norm.weight", hp.n_embd);
        L.ffn_post_norm = vector_f32(p + "post_ffw_norm.weight", hp.n_embd);
      }
      if (P > 0) {
        L.inp_gate = matrix(p + "inp_gate.weight", hp.n_embd, P);
        L.proj = matrix(p + "proj.weight", P, hp.n_embd);
        L.pl_post_norm = vector_f32(p + "post_norm.weight", hp.n_embd);
      }
      if (a.per_layer_inputs) {  // layer_output_scale: one value, optional
        const std::vector<float> s = vector_f32(p + "layer_output_scale.weight", 1, true);
        if (!s.empty()) L.out_scale = s[0];
        if (!planning_ && !std::isfinite(L.out_scale))
          fail(f_.source(), ": ", p, "layer_output_scale.weight is not finite");
      }
    }
  }

  // q, k and v: separate tensors, or (fused_qkv) the rows of attn_qkv where
  // the file has it: q_dim rows of q, then k_dim of k, then v_dim of v.
  void bind_qkv(LayerWeights& L, const std::string& p, int64_t il) {
    const HParams& hp = m_.hp_;
    const int64_t q_dim = hp.q_dim_at(il), k_dim = hp.k_dim_at(il), v_dim = hp.v_dim_at(il);
    if (!hp.owns_kv(il)) {  // a KV-sharing layer computes only its queries (k and v, if the file has them, go unused)
      L.wq = matrix(p + "attn_q.weight", hp.n_embd, q_dim);
      return;
    }
    const std::string fused = p + "attn_qkv.weight";
    if (m_.arch_->fused_qkv && f_.find_tensor(fused)) {
      // (llama.cpp would add one; no phi3 checkpoint has it, and dropping it silently would be wrong.)
      if (f_.find_tensor(p + "attn_qkv.bias"))
        fail(f_.source(), ": tensor '", p, "attn_qkv.bias' (a fused q/k/v bias) is not supported");
      const WeightView qkv = matrix(fused, hp.n_embd, q_dim + k_dim + v_dim);
      L.wq = row_slice(qkv, 0, q_dim);
      L.wk = row_slice(qkv, q_dim, k_dim);
      L.wv = row_slice(qkv, q_dim + k_dim, v_dim);
      return;
    }
    if (m_.arch_->fused_qkv && !f_.find_tensor(p + "attn_q.weight"))
      fail(f_.source(), ": required tensor '", fused, "' (or separate '", p, "attn_q.weight', 'attn_k', 'attn_v') is missing");
    L.wq = matrix(p + "attn_q.weight", hp.n_embd, q_dim);
    L.wk = matrix(p + "attn_k.weight", hp.n_embd, k_dim);
    // Gemma 4's larger models may leave out v_proj: values are then the keys'
    // projection (normed and unrotated), as llama.cpp and Hugging Face do.
    if (m_.arch_->v_norm && !f_.find_tensor(p + "attn_v.weight") && v_dim == k_dim) {
      L.wv = L.wk;
      return;
    }
    L.wv = matrix(p + "attn_v.weight", hp.n_embd, v_dim);
  }

  // gate and up: separate tensors, or (fused_gate_up) ffn_up's 2 * n_ff rows,
  // gate first (llama.cpp reads phi3 files only so, and so do we).
  void bind_gate_up(LayerWeights& L, const std::string& p, int64_t il) {
    const HParams& hp = m_.hp_;
    const int64_t n_ff = hp.n_ff_at(il);
    if (m_.arch_->fused_gate_up) {
      const WeightView gate_up = matrix(p + "ffn_up.weight", hp.n_embd, 2 * n_ff);
      L.w_gate = row_slice(gate_up, 0, n_ff);
      L.w_up = row_slice(gate_up, n_ff, n_ff);
      return;
    }
    L.w_gate = matrix(p + "ffn_gate.weight", hp.n_embd, n_ff);
    L.w_up = matrix(p + "ffn_up.weight", hp.n_embd, n_ff);
  }

  void load_tokenizer() {
    if (!f_.find("tokenizer.ggml.model")) {
      m_.tokenizer_error_ = f_.source() + " carries no tokenizer (tokenizer.ggml.model is missing); pass token ids with --tokens";
      return;
    }
    try {
      m_.tokenizer_ = make_tokenizer(f_);
    } catch (const Error& e) {
      // A tokenizer we cannot build yet (e.g. BPE) still leaves the model
      // usable on token ids; a malformed vocabulary is a load error.
      const std::string msg = e.what();
      if (msg.find("not supported yet") == std::string::npos) throw;
      m_.tokenizer_error_ = msg;
      return;
    }
    const int64_t nv = m_.tokenizer_->vocab().n_tokens();
    if (nv != m_.hp_.n_vocab)
      fail(f_.source(), ": the tokenizer has ", nv, " tokens but token_embd.weight has ", m_.hp_.n_vocab,
           " rows");
  }
};

namespace {
// Heap bytes in use now (glibc); 0 where the allocator cannot tell.
uint64_t heap_in_use() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  const struct mallinfo2 mi = mallinfo2();
  return uint64_t(mi.uordblks) + uint64_t(mi.hblkhd);
#else
  return 0;
#endif
}
}  // namespace

// The tokenizer's heap tables, estimated from the vocabulary in the file:
// per token ~120 bytes (its string, score and type, a hash-map node and
// bucket, its piece) plus the text's heap block past 15 characters; per
// merge ~30 bytes (a slot of the rank table at half load). Fitted to the
// measured tables of the qwen2 (151k tokens, 151k merges) and llama-bpe
// (128k, 280k) vocabularies: within 3 % of both.
uint64_t estimate_tokenizer_bytes(const gguf::File& f) {
  uint64_t n = 0;
  if (const gguf::Value* t = f.find("tokenizer.ggml.tokens"); t && t->type == gguf::ValueType::ARRAY) {
    if (t->summarized) n += 120 * t->u + uint64_t(t->i);
    for (const gguf::Value& v : t->arr) n += 120 + (v.str.size() > 15 ? (v.str.size() + 16) / 16 * 16 : 0);
  }
  if (const gguf::Value* m = f.find("tokenizer.ggml.merges"); m && m->type == gguf::ValueType::ARRAY)
    n += 30 * (m->summarized ? m->u : m->arr.size());
  return n;
}

namespace {
// What the summarized arrays take once built as Values (a full load holds
// them until the tokenizer has its tables).
uint64_t summarized_array_bytes(const gguf::File& f) {
  uint64_t n = 0;
  for (const auto& [key, v] : f.metadata())
    if (v.type == gguf::ValueType::ARRAY && v.summarized) n += v.u * sizeof(gguf::Value) + uint64_t(v.i);
  return n;
}
}  // namespace

std::unique_ptr<Model> Model::load(const std::string& path, gguf::Residency residency, bool with_tokenizer) {
  const uint64_t heap0 = heap_in_use(), anon0 = mem_now().anon;
  std::unique_ptr<Model> m(new Model());
  // Without the tokenizer (planning), the vocabulary's arrays are only
  // summarized: the pages of the header are read, no Values are built.
  gguf::Limits lim;
  if (!with_tokenizer) lim.summarize_arrays_over = 4096;
  m->file_ = gguf::File::open(path, lim, residency);
  const uint64_t tokenizer_estimate = with_tokenizer ? 0 : estimate_tokenizer_bytes(*m->file_);
  const uint64_t arrays_estimate = with_tokenizer ? 0 : summarized_array_bytes(*m->file_);
  ModelLoader(*m).run(with_tokenizer);
  m->planning_only_ = !with_tokenizer;
  // The high-water mark of loading: the metadata's arrays and the tokenizer
  // built from them are alive together, just before the arrays go.
  // The kernel's count of anonymous pages is the truer one here: the
  // allocator's in-use bytes miss the pages freed blocks leave behind.
  const uint64_t heap_mid = heap_in_use(), anon_mid = mem_now().anon;
  record_memory_peak();
  m->load_peak_bytes_ = std::max(heap_mid > heap0 ? heap_mid - heap0 : 0, anon_mid > anon0 ? anon_mid - anon0 : 0) +
                        tokenizer_estimate + arrays_estimate;
  // The tokenizer holds its own tables: the metadata's copies would be
  // dead weight for the model's lifetime.
  for (const char* key : {"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type",
                          "tokenizer.ggml.merges"})
    m->file_->drop_array(key);
#if defined(__GLIBC__)
  malloc_trim(0);  // hand the freed pages back: otherwise they stay in the footprint
#endif
  const uint64_t heap1 = heap_in_use();
  if (heap1 > heap0) {
    m->host_bytes_ = heap1 - heap0;
    m->host_bytes_ += tokenizer_estimate;
  } else {  // no allocator counters: what the big tables hold
    uint64_t n = 0;
    for (const LayerWeights& L : m->layers_)
      n += (L.attn_norm.size() + L.ffn_norm.size() + L.bq.size() + L.bk.size() + L.bv.size() + L.q_norm.size() +
            L.k_norm.size()) * sizeof(float);
    n += tokenizer_estimate;
    for (const auto& t : m->file_->tensors()) n += sizeof(t) + t.name.size();
    m->host_bytes_ = n;
  }
  // Whole 64 KiB: the same file measures tens of KiB apart in different
  // process states (the allocator's thresholds and free lists), and a plan
  // must not change with them.
  constexpr uint64_t kGrain = uint64_t(64) << 10;
  m->host_bytes_ = (m->host_bytes_ + kGrain - 1) / kGrain * kGrain;
  m->load_peak_bytes_ = (std::max(m->load_peak_bytes_, m->host_bytes_) + kGrain - 1) / kGrain * kGrain;
  return m;
}

void Model::make_resident() {
  const gguf::File::Relocation r = file_->make_resident();
  if (!r.new_begin) return;
  auto move = [&](WeightView& w) { w.data = r.relocate(w.data); };
  move(tok_embd_);
  move(output_);
  move(pl_tok_embd_);
  move(pl_model_proj_);
  for (LayerWeights& L : layers_)
    for (WeightView* w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down, &L.inp_gate, &L.proj})
      if (w->data) move(*w);
}

Model::~Model() = default;

const std::vector<float>& Model::rope_factors(int64_t n_ctx) const {
  if (!rope_freqs_.empty()) return rope_freqs_;
  return n_ctx > hp_.n_ctx_orig ? rope_long_ : rope_short_;
}

uint64_t Model::weight_bytes() const {
  uint64_t n = 0;
  for (const auto& t : file_->tensors()) n += t.nbytes;
  return n;
}

uint64_t Model::n_params() const {
  uint64_t n = 0;
  for (const auto& t : file_->tensors()) n += uint64_t(t.n_elements());
  return n;
}

void Model::embed(int32_t id, float* out) const {
  if (id < 0 || id >= hp_.n_vocab) fail("token id ", id, " is out of range (vocabulary has ", hp_.n_vocab, " tokens)");
  dequantize_row(tok_embd_.type, tok_embd_.data + size_t(id) * tok_embd_.row_bytes(), out, hp_.n_embd);
}

}  // namespace edgellm
