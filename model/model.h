// A loaded model: the GGUF mapping, the architecture's description, the
// hyper-parameters read from metadata and the weights bound (and shape
// checked) against them. Big matrices stay in the read-only mapping; only the
// small per-layer vectors (norms, biases) are copied out as f32.
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "kernels/matmul.h"
#include "model/arch.h"

namespace edgellm {

class Tokenizer;

struct HParams {
  int64_t n_vocab = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;   // the largest of n_head_kv_layers where the file lists one per layer
  int64_t head_dim = 0;     // per head, for q and k (attention.key_length)
  int64_t head_dim_v = 0;   // per head, for v (attention.value_length)
  int64_t n_ff = 0;
  int64_t n_ctx_train = 0;
  int64_t n_rot = 0;        // rotated dims per head (rope.dimension_count)
  float rms_eps = 1e-5f;
  float rope_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // linear RoPE scaling: positions are multiplied by this
  // rope.scaling.original_context_length (default: the training context):
  // LongRoPE uses its long factors for a context longer than this.
  int64_t n_ctx_orig = 0;
  // rope.scaling.attn_factor: cos and sin are multiplied by it, so q and k's
  // rotated dims grow by it (LongRoPE's sqrt(1 + ln(s) / ln(n_ctx_orig)) for
  // s = n_ctx_train / n_ctx_orig, written by the phi3 converter; llama.cpp
  // applies the key to every architecture, whichever factors are in use).
  float rope_attn_factor = 1.0f;
  // Sliding-window attention (ArchDesc::swa_period, or swa_layers from the
  // file's attention.sliding_window_pattern): local layers see the last n_swa
  // positions; their RoPE base and scale (0: the global ones).
  int64_t n_swa = 0, swa_period = 0;
  std::vector<uint8_t> swa_layers;  // per layer: 1 = sliding (when the file lists them)
  float rope_base_swa = 0.0f, rope_freq_scale_swa = 1.0f;
  bool sliding(int64_t il) const {
    if (n_swa <= 0) return false;
    if (!swa_layers.empty()) return swa_layers[size_t(il)] != 0;
    return swa_period > 0 && (il + 1) % swa_period != 0;
  }
  // The first position token position p may attend to in layer il.
  int64_t first_visible(int64_t il, int64_t p) const { return sliding(il) && p >= n_swa ? p - n_swa + 1 : 0; }
  bool local_rope() const { return n_swa > 0 && rope_base_swa > 0; }
  float attn_softcap = 0.0f, final_softcap = 0.0f;  // c * tanh(x / c) of scores / logits (gemma2); 0: none
  // Gemma 4: sliding layers' own head sizes and rotated dims
  // (attention.key_length_swa, value_length_swa, rope.dimension_count_swa;
  // 0: the global ones), a feed-forward size per layer (feed_forward_length
  // as an array; n_ff is then the largest), the last n_kv_shared layers
  // computing no keys and values of their own (attention.shared_kv_layers),
  // and n_embd_per_layer dims of per-layer input per layer
  // (embedding_length_per_layer_input; 0: none).
  int64_t head_dim_swa = 0, head_dim_v_swa = 0, n_rot_swa = 0;
  std::vector<int64_t> n_ff_layers;
  // KV heads per layer where attention.head_count_kv is an array (Gemma 4's
  // larger sizes: fewer KV heads on global layers than on sliding ones);
  // empty: n_head_kv everywhere.
  std::vector<int64_t> n_head_kv_layers;
  int64_t n_kv_shared = 0;
  int64_t n_embd_per_layer = 0;

  // Per-layer shapes: the global values unless layer il slides and the file
  // gives sliding layers their own.
  int64_t head_dim_at(int64_t il) const { return sliding(il) && head_dim_swa > 0 ? head_dim_swa : head_dim; }
  int64_t head_dim_v_at(int64_t il) const { return sliding(il) && head_dim_v_swa > 0 ? head_dim_v_swa : head_dim_v; }
  int64_t n_rot_at(int64_t il) const { return sliding(il) && n_rot_swa > 0 ? n_rot_swa : n_rot; }
  int64_t n_ff_at(int64_t il) const { return n_ff_layers.empty() ? n_ff : n_ff_layers[size_t(il)]; }
  int64_t q_dim_at(int64_t il) const { return n_head * head_dim_at(il); }
  int64_t n_head_kv_at(int64_t il) const { return n_head_kv_layers.empty() ? n_head_kv : n_head_kv_layers[size_t(il)]; }
  int64_t k_dim_at(int64_t il) const { return n_head_kv_at(il) * head_dim_at(il); }
  int64_t v_dim_at(int64_t il) const { return n_head_kv_at(il) * head_dim_v_at(il); }
  // The layer whose keys and values layer il attends to: itself, or for a
  // KV-sharing layer the last layer of its kind (sliding or global) before
  // the shared ones (Hugging Face's kv_shared_layer_index; llama.cpp's
  // n_layer_kv_from_start - 1 or - 2 for Gemma 4's layouts). -1 if none.
  int64_t kv_source(int64_t il) const {
    const int64_t first_shared = n_layer - n_kv_shared;
    if (il < first_shared) return il;
    for (int64_t j = first_shared - 1; j >= 0; --j)
      if (sliding(j) == sliding(il)) return j;
    return -1;
  }
  bool owns_kv(int64_t il) const { return il < n_layer - n_kv_shared; }
  // The largest of the per-layer sizes (buffers are sized by them; n_head_kv
  // is already the largest).
  int64_t max_head_dim() const { return std::max(head_dim, head_dim_swa); }
  int64_t max_head_dim_v() const { return std::max(head_dim_v, head_dim_v_swa); }
  int64_t max_n_rot() const { return std::max(n_rot, n_rot_swa); }
  // Rotated dims of RoPE table tab: 0 the global one, 1 the sliding layers'
  // (their own n_rot where the file gives one).
  int64_t n_rot_of_table(int tab) const { return tab == 0 || n_rot_swa == 0 ? n_rot : n_rot_swa; }
  int64_t q_dim() const { return n_head * max_head_dim(); }
  int64_t k_dim() const { return n_head_kv * max_head_dim(); }
  int64_t v_dim() const { return n_head_kv * max_head_dim_v(); }
};

struct LayerWeights {
  std::vector<float> attn_norm, ffn_norm;   // [n_embd]
  std::vector<float> bq, bk, bv;            // [q_dim], [k_dim], [v_dim] or empty
  std::vector<float> q_norm, k_norm;        // [head_dim] or empty
  std::vector<float> attn_post_norm, ffn_post_norm;  // [n_embd] or empty (gemma)
  WeightView wq, wk, wv, wo;                // [q_dim x n_embd], ..., wo: [n_embd x q_dim]
  WeightView w_gate, w_up, w_down;          // [n_ff x n_embd], [n_ff x n_embd], [n_embd x n_ff]
  // Gemma 4's per-layer input (HParams::n_embd_per_layer > 0): after the
  // FFN, x += post_norm(proj(gelu(inp_gate x) * this layer's input)).
  WeightView inp_gate, proj;                // [P x n_embd], [n_embd x P]
  std::vector<float> pl_post_norm;          // [n_embd] or empty
  float out_scale = 1.0f;                   // layer_output_scale: the block's output times this
};

// The tokenizer's heap tables, estimated from the vocabulary in the file (for
// a plan made without building it).
uint64_t estimate_tokenizer_bytes(const gguf::File& f);

class Model {
 public:
  // Opens, validates and binds. Throws edgellm::Error with an actionable message.
  // residency: where the weights live (gguf::Residency; Auto picks huge
  // pages for multi-GB files).
  // with_tokenizer = false skips building the tokenizer (for planning before a
  // full load: host_bytes() then includes an estimate of its tables).
  static std::unique_ptr<Model> load(const std::string& path, gguf::Residency residency = gguf::Residency::Auto,
                                     bool with_tokenizer = true);
  ~Model();

  const gguf::File& file() const { return *file_; }
  const ArchDesc& arch() const { return *arch_; }
  const HParams& hparams() const { return hp_; }
  const std::vector<LayerWeights>& layers() const { return layers_; }
  const WeightView& token_embd() const { return tok_embd_; }
  const WeightView& output() const { return output_; }
  bool tied_output() const { return tied_; }
  const std::vector<float>& output_norm() const { return output_norm_; }
  // Gemma 4's per-layer inputs: per_layer_token_embd ([n_layer * P] per
  // token), per_layer_model_proj ([n_layer * P x n_embd]) and its norm ([P]).
  const WeightView& per_layer_token_embd() const { return pl_tok_embd_; }
  const WeightView& per_layer_model_proj() const { return pl_model_proj_; }
  const std::vector<float>& per_layer_proj_norm() const { return pl_proj_norm_; }
  const std::vector<float>& rope_freqs() const { return rope_freqs_; }  // [n_rot/2] or empty
  // The per-pair frequency divisors a context of n_ctx tokens uses:
  // rope_freqs.weight where the file has it, else LongRoPE's long factors when
  // n_ctx exceeds n_ctx_orig and its short ones otherwise (llama.cpp's
  // get_rope_factors; Hugging Face switches by the current sequence length
  // instead). Empty: no factors.
  const std::vector<float>& rope_factors(int64_t n_ctx) const;
  bool longrope_factors() const { return !rope_long_.empty() || !rope_short_.empty(); }
  // nullptr when the file carries no tokenizer we support (use token ids then);
  // tokenizer_error() says why.
  const Tokenizer* tokenizer() const { return tokenizer_.get(); }
  const std::string& tokenizer_error() const { return tokenizer_error_; }

  // Copies the tensor data into anonymous huge pages (gguf::File::make_resident)
  // and moves every bound weight there. No-op when already resident.
  void make_resident();
  // Heap bytes this model holds outside the weights (f32 norms and biases,
  // tokenizer tables), measured while it loaded (glibc's allocator counters;
  // elsewhere an estimate from the vocabulary and the copied vectors).
  uint64_t host_bytes() const { return host_bytes_; }
  // The heap high-water mark while loading (metadata arrays and tokenizer
  // tables alive together), >= host_bytes(): the footprint before any KV
  // cache or buffer exists.
  uint64_t load_peak_bytes() const { return load_peak_bytes_; }
  // Loaded without its tokenizer, for a plan: shapes and sizes only, the
  // norm vectors unread. Cannot run (Executor refuses it).
  bool planning_only() const { return planning_only_; }

  // Bytes of weights (all tensors), and parameter count.
  uint64_t weight_bytes() const;
  uint64_t n_params() const;
  // Copies the embedding of token id into out[n_embd].
  void embed(int32_t id, float* out) const;

 private:
  Model() = default;
  std::unique_ptr<gguf::File> file_;
  const ArchDesc* arch_ = nullptr;
  HParams hp_;
  std::vector<LayerWeights> layers_;
  WeightView tok_embd_, output_, pl_tok_embd_, pl_model_proj_;
  std::vector<float> pl_proj_norm_;
  bool tied_ = false;
  std::vector<float> output_norm_, rope_freqs_, rope_long_, rope_short_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::string tokenizer_error_;
  uint64_t host_bytes_ = 0, load_peak_bytes_ = 0;
  bool planning_only_ = false;
  friend class ModelLoader;
};

}  // namespace edgellm
