// A loaded model: the GGUF mapping, the architecture's description, the
// hyper-parameters read from metadata and the weights bound (and shape
// checked) against them. Big matrices stay in the read-only mapping; only the
// small per-layer vectors (norms, biases) are copied out as f32.
#pragma once
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
  int64_t n_head_kv = 0;
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
  // Sliding-window attention (ArchDesc::swa_period): local layers see the
  // last n_swa positions; their RoPE base and scale (0: the global ones).
  int64_t n_swa = 0, swa_period = 0;
  float rope_base_swa = 0.0f, rope_freq_scale_swa = 1.0f;
  bool sliding(int64_t il) const { return n_swa > 0 && swa_period > 0 && (il + 1) % swa_period != 0; }
  // The first position token position p may attend to in layer il.
  int64_t first_visible(int64_t il, int64_t p) const { return sliding(il) && p >= n_swa ? p - n_swa + 1 : 0; }
  bool local_rope() const { return n_swa > 0 && rope_base_swa > 0; }
  float attn_softcap = 0.0f, final_softcap = 0.0f;  // c * tanh(x / c) of scores / logits (gemma2); 0: none
  int64_t q_dim() const { return n_head * head_dim; }
  int64_t k_dim() const { return n_head_kv * head_dim; }
  int64_t v_dim() const { return n_head_kv * head_dim_v; }
};

struct LayerWeights {
  std::vector<float> attn_norm, ffn_norm;   // [n_embd]
  std::vector<float> bq, bk, bv;            // [q_dim], [k_dim], [v_dim] or empty
  std::vector<float> q_norm, k_norm;        // [head_dim] or empty
  std::vector<float> attn_post_norm, ffn_post_norm;  // [n_embd] or empty (gemma)
  WeightView wq, wk, wv, wo;                // [q_dim x n_embd], ..., wo: [n_embd x q_dim]
  WeightView w_gate, w_up, w_down;          // [n_ff x n_embd], [n_ff x n_embd], [n_embd x n_ff]
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
  WeightView tok_embd_, output_;
  bool tied_ = false;
  std::vector<float> output_norm_, rope_freqs_, rope_long_, rope_short_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::string tokenizer_error_;
  uint64_t host_bytes_ = 0, load_peak_bytes_ = 0;
  bool planning_only_ = false;
  friend class ModelLoader;
};

}  // namespace edgellm
