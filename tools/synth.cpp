#include "tools/synth.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>

#include "base/cpu_affinity.h"
#include "base/error.h"
#include "base/thread_pool.h"
#include "format/gguf.h"
#include "model/arch.h"
#include "tools/quant_mix.h"

namespace edgellm {

namespace {

// Published configurations of the models whose shapes we borrow.
const SynthShape kShapes[] = {
    // name            embd layers heads kv  hd   ff     ctx     rope      eps   tied  llama3
    {"tiny",            256,  2,    4,   2,  64,  512,   2048,   10000.f,  1e-5f, false, false, 32},
    // One layer: its keys and values depend only on token and position, so a
    // context shift is exactly a re-prefill of the kept tokens (tests).
    {"tiny-1l",         256,  1,    4,   2,  64,  512,   2048,   10000.f,  1e-5f, false, false},
    // Four layers: the smallest model with a NoPE layer (smollm3's every 4th).
    {"tiny-4l",         256,  4,    4,   2,  64,  512,   2048,   10000.f,  1e-5f, false, false},
    // Six layers and a 32-token window: five local layers and one global.
    {"tiny-6l",         256,  6,    4,   2,  64,  512,   2048,   10000.f,  1e-6f, true,  false, 32},
    {"smollm2-135m",    576,  30,   9,   3,  64,  1536,  8192,   100000.f, 1e-5f, true,  false},
    {"qwen2.5-0.5b",    896,  24,   14,  2,  64,  4864,  32768,  1e6f,     1e-6f, true,  false},
    {"qwen3-0.6b",      1024, 28,   16,  8,  128, 3072,  40960,  1e6f,     1e-6f, true,  false},
    {"llama3.2-1b",     2048, 16,   32,  8,  64,  8192,  131072, 500000.f, 1e-5f, true,  true},
    {"smollm3-3b",      2048, 36,   16,  4,  128, 11008, 65536,  5e6f,     1e-6f, true,  false},
    {"qwen2.5-3b",      2048, 36,   16,  2,  128, 11008, 32768,  1e6f,     1e-6f, true,  false},
    {"llama3.2-3b",     3072, 28,   24,  8,  128, 8192,  131072, 500000.f, 1e-5f, true,  true},
    {"gemma2-2b",       2304, 26,   8,   4,  256, 9216,  8192,   10000.f,  1e-6f, true,  false, 4096},
    {"gemma3-270m",     640,  18,   4,   1,  256, 2048,  32768,  1e6f,     1e-6f, true,  false, 512},
    {"gemma3-1b",       1152, 26,   4,   1,  256, 6912,  32768,  1e6f,     1e-6f, true,  false, 512},
    {"gemma3-4b",       2560, 34,   8,   4,  256, 10240, 131072, 1e6f,     1e-6f, true,  false, 1024, 8.0f},
    {"qwen2.5-7b",      3584, 28,   28,  4,  128, 18944, 32768,  1e6f,     1e-6f, false, false},
    {"llama3.1-8b",     4096, 32,   32,  8,  128, 14336, 131072, 500000.f, 1e-5f, false, true},
    // phi3 (LongRoPE). The tiny ones: an original context of 32 puts every
    // context above 32 (llama.cpp pads its own to 256) on the long factors,
    // and 256 / 32 gives attn_factor 1.265 (Phi-3.5's 131072 / 4096: 1.19).
    // tiny-phi3: Phi-3.5's MHA; tiny-phi4: Phi-4-mini's GQA, tied head and
    // partial rotary (0.75 of head_dim: 48 of 64 dims rotate).
    //                  embd layers heads kv hd   ff     ctx     rope      eps   tied  llama3 swa lin n_rot orig
    {"tiny-phi3",       256,  2,    4,   4,  64,  512,   256,    10000.f,  1e-5f, false, false, 0, 0, 0,  32},
    {"tiny-phi4",       256,  2,    4,   2,  64,  512,   256,    10000.f,  1e-5f, true,  false, 0, 0, 48, 32},
    {"phi3-mini",       3072, 32,   32,  32, 96,  8192,  131072, 10000.f,  1e-5f, false, false, 0, 0, 0,  4096},
    {"phi4-mini",       3072, 32,   24,  8,  128, 8192,  131072, 10000.f,  1e-5f, true,  false, 0, 0, 96, 4096},
    // Gemma 4. tiny-gemma4: four layers, the smallest with every kind:
    // sliding (head 64, window 32), global (head 128, a quarter of it
    // rotating), and the last two reading layer 0's (sliding) or layer 1's
    // (global) keys and values, as llama.cpp's rule for the real layouts
    // has it (n_layer_kv_from_start - 2 and - 1). E2B / E4B:
    // the published configurations (hidden_size_per_layer_input 256, window
    // 512, 20 / 18 KV-sharing layers, global heads of 512).
    {.name = "tiny-gemma4", .n_embd = 256, .n_layer = 4, .n_head = 4, .n_head_kv = 2, .head_dim = 128, .n_ff = 512,
     .n_ctx = 2048, .rope_base = 1e6f, .rms_eps = 1e-6f, .tied = true, .llama3_rope = false, .n_swa = 32,
     .head_dim_swa = 64, .global_every = 2, .n_kv_shared = 2, .n_embd_per_layer = 64, .double_wide_ffn = true,
     .rot_fraction_global = 0.25f},
    // tiny-gemma4-kv: the same with one KV head on the global layers and two
    // on the sliding ones (a per-layer head_count_kv, as Gemma 4's larger
    // sizes have it).
    {.name = "tiny-gemma4-kv", .n_embd = 256, .n_layer = 4, .n_head = 4, .n_head_kv = 2, .head_dim = 128, .n_ff = 512,
     .n_ctx = 2048, .rope_base = 1e6f, .rms_eps = 1e-6f, .tied = true, .llama3_rope = false, .n_swa = 32,
     .head_dim_swa = 64, .global_every = 2, .n_kv_shared = 2, .n_embd_per_layer = 64, .double_wide_ffn = true,
     .rot_fraction_global = 0.25f, .n_head_kv_global = 1},
    {.name = "gemma4-e2b", .n_embd = 1536, .n_layer = 35, .n_head = 8, .n_head_kv = 1, .head_dim = 512, .n_ff = 6144,
     .n_ctx = 131072, .rope_base = 1e6f, .rms_eps = 1e-6f, .tied = true, .llama3_rope = false, .n_swa = 512,
     .head_dim_swa = 256, .global_every = 5, .n_kv_shared = 20, .n_embd_per_layer = 256, .double_wide_ffn = true,
     .rot_fraction_global = 0.25f},
    {.name = "gemma4-e4b", .n_embd = 2560, .n_layer = 42, .n_head = 8, .n_head_kv = 2, .head_dim = 512, .n_ff = 10240,
     .n_ctx = 131072, .rope_base = 1e6f, .rms_eps = 1e-6f, .tied = true, .llama3_rope = false, .n_swa = 512,
     .head_dim_swa = 256, .global_every = 6, .n_kv_shared = 18, .n_embd_per_layer = 256, .double_wide_ffn = false,
     .rot_fraction_global = 0.25f},
};

// splitmix64: tiny, seedable, identical on every platform.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float uniform() { return float(next() >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f; }  // [-1, 1)
};

uint64_t hash_name(const std::string& s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The tensor types of a --type: exactly the mix llama-quantize gives that
// recipe (tools/quant_mix.h), so a synth q4_0 / q4_k_m file has the bytes and
// the types of the file a user quantizes from the hub's f16, and a plan's
// prediction holds for both (the output head and a tied embedding get q6_K,
// attn_v / ffn_down more bits in some layers of Q4_K_M, rows the block does
// not divide fall back to a 32-element type).
struct TypePlan {
  QuantRecipe recipe;
  int64_t n_layer = 0, n_gqa = 1;
  bool tied = false;
  bool pure = false;  // llama-quantize --pure: no mixture, only the block-size fallback

  static TensorRole role_of(const std::string& name) {
    if (name == "token_embd.weight") return TensorRole::TokenEmbd;
    if (name == "output.weight") return TensorRole::Output;
    // blk.N.<kind>.weight
    static const std::pair<const char*, TensorRole> kLayer[] = {
        {"attn_q", TensorRole::AttnQ},     {"attn_k", TensorRole::AttnK},     {"attn_v", TensorRole::AttnV},
        // llama-quantize counts a fused attn_qkv as attn_v (category_is_attn_v).
        {"attn_qkv", TensorRole::AttnV},
        {"attn_output", TensorRole::AttnOut}, {"ffn_gate", TensorRole::FfnGate}, {"ffn_up", TensorRole::FfnUp},
        {"ffn_down", TensorRole::FfnDown},
        // Gemma 4's per-layer input matrices: llama-quantize's default type.
        {"inp_gate", TensorRole::AttnQ}, {"proj", TensorRole::AttnQ}};
    // Its per-layer embedding table counts as a token embedding there.
    if (name == "per_layer_token_embd.weight") return TensorRole::TokenEmbd;
    const size_t dot = name.find('.', 4);
    if (name.rfind("blk.", 0) == 0 && dot != std::string::npos)
      for (const auto& [kind, role] : kLayer)
        if (name.compare(dot + 1, std::string::npos, std::string(kind) + ".weight") == 0) return role;
    return TensorRole::Vector;
  }

  GgmlType pick(const std::string& name, int64_t cols, int layer) const {
    // Gemma 4's projection into the per-layer inputs: llama-quantize leaves
    // it as converted (f16).
    if (name == "per_layer_model_proj.weight") return recipe.base == GgmlType::F32 ? GgmlType::F32 : GgmlType::F16;
    TensorRole role = role_of(name);
    // Pure: every matrix as attn_q, the one role no recipe gives other bits.
    if (pure && role != TensorRole::Vector) role = TensorRole::AttnQ;
    return quant_tensor_type(recipe, {role, cols, layer, n_layer, n_gqa, tied});
  }
};

TypePlan make_plan(const std::string& type, int64_t n_layer, int64_t n_gqa, bool tied, bool pure) {
  static const char* const kTypes[] = {"f32", "f16", "q8_0", "q4_0", "q4_k_m", "iq4_nl", "iq4_xs"};
  if (std::find(std::begin(kTypes), std::end(kTypes), type) == std::end(kTypes))
    fail("synth: unknown --type '", type, "' (f32, f16, q8_0, q4_0, q4_k_m, iq4_nl, iq4_xs)");
  return {parse_quant(type), n_layer, n_gqa, tied, pure};
}

class Builder {
 public:
  Builder(const SynthOptions& o, const TypePlan& plan, ThreadPool& pool) : o_(o), plan_(plan), pool_(pool) {}

  // A [rows][cols] tensor with uniform values of standard deviation `std`
  // around `mean` (uniform on [-a, a] has std a/sqrt(3)).
  // row_spread > 0 scales each row by exp(row_spread * z), z ~ N(0, 1): used for
  // the output head, whose rows in trained models differ widely in norm
  // (frequent tokens score higher), so the top logit stands out from the
  // bulk as it does in real models instead of a near-tie among 10^5 iid rows.
  void add(const std::string& name, int64_t cols, int64_t rows, float std, float mean = 0, int layer = -1,
           float row_spread = 0) {
    const GgmlType t = rows == 1 ? GgmlType::F32 : plan_.pick(name, cols, layer);
    const size_t row_bytes = row_size(t, cols);
    auto buf = std::make_unique<std::vector<uint8_t>>(row_bytes * size_t(rows));
    const float a = std * std::sqrt(3.0f);
    const uint64_t base = hash_name(name, o_.seed);
    uint8_t* out = buf->data();
    pool_.run([&](int ith, int nth) {
      int64_t r0, r1;
      split_range(rows, ith, nth, &r0, &r1);
      std::vector<float> row(static_cast<size_t>(cols));
      for (int64_t r = r0; r < r1; ++r) {
        Rng rng{base + uint64_t(r) * 0x632be59bd9b4e019ull};
        float scale = a;
        if (row_spread > 0) {  // Irwin-Hall: the sum of 12 uniforms on [-1, 1) has variance 4
          float z = 0;
          for (int i = 0; i < 12; ++i) z += rng.uniform();
          scale *= std::exp(row_spread * 0.5f * z);
        }
        for (float& x : row) x = mean + scale * rng.uniform();
        quantize_row(t, row.data(), out + size_t(r) * row_bytes, cols);
      }
    });
    std::vector<int64_t> ne = rows == 1 ? std::vector<int64_t>{cols} : std::vector<int64_t>{cols, rows};
    w_.add_tensor(name, t, ne, buf->data(), buf->size());
    bytes_.push_back(std::move(buf));
  }
  void add_f32(const std::string& name, std::vector<float> v) {
    auto buf = std::make_unique<std::vector<uint8_t>>(v.size() * sizeof(float));
    std::memcpy(buf->data(), v.data(), buf->size());
    w_.add_tensor(name, GgmlType::F32, {int64_t(v.size())}, buf->data(), buf->size());
    bytes_.push_back(std::move(buf));
  }
  gguf::Writer& writer() { return w_; }

 private:
  const SynthOptions& o_;
  const TypePlan& plan_;
  ThreadPool& pool_;
  gguf::Writer w_;
  std::vector<std::unique_ptr<std::vector<uint8_t>>> bytes_;
};

// llama 3.1-style frequency factors (factor 32, low 1, high 4, original context 8192).
std::vector<float> llama3_rope_factors(int64_t n_rot, float base) {
  std::vector<float> f(size_t(n_rot / 2));
  const double factor = 32, low = 1, high = 4, old_ctx = 8192;
  const double low_wl = old_ctx / low, high_wl = old_ctx / high;
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    const double freq = std::pow(double(base), -2.0 * double(i) / double(n_rot));
    const double wl = 2 * M_PI / freq;
    if (wl < high_wl) f[size_t(i)] = 1;
    else if (wl > low_wl) f[size_t(i)] = float(factor);
    else {
      const double smooth = (old_ctx / wl - low) / (high - low);
      f[size_t(i)] = float(1.0 / ((1 - smooth) / factor + smooth));
    }
  }
  return f;
}

// LongRoPE factors of a plausible form (Phi-3.5's grow with the pair index,
// the long ones to tens, the short ones to a few): smooth ramps with a
// seeded jitter, long from 1 to ~4, short from 1 to ~1.5, all positive.
std::vector<float> longrope_factors(int64_t n_rot, bool long_ones, uint64_t seed) {
  const int64_t half = n_rot / 2;
  std::vector<float> f(static_cast<size_t>(half));
  Rng rng{hash_name(long_ones ? "rope_factors_long" : "rope_factors_short", seed)};
  const float top = long_ones ? 3.0f : 0.5f;
  for (int64_t i = 0; i < half; ++i) {
    const float x = half > 1 ? float(i) / float(half - 1) : 0.0f;
    f[size_t(i)] = 1.0f + top * x * x * (1.0f + 0.1f * rng.uniform());
  }
  return f;
}

}  // namespace

const SynthShape* find_synth_shape(const std::string& name) {
  for (const SynthShape& s : kShapes)
    if (name == s.name) return &s;
  return nullptr;
}

std::string synth_shape_names() {
  std::string n;
  for (const SynthShape& s : kShapes) n += (n.empty() ? "" : ", ") + std::string(s.name);
  return n;
}

void synth_model(const SynthOptions& o, const std::string& path) {
  const ArchDesc* arch = find_arch(o.arch);
  if (!arch) fail("synth: unknown --arch '", o.arch, "' (", known_arch_names(), ")");
  const SynthShape* sh = find_synth_shape(o.shape);
  if (!sh) fail("synth: unknown --shape '", o.shape, "' (", synth_shape_names(), ")");
  // gemma2's head is always the embedding, whatever the shape says.
  const bool tied = sh->tied || arch->head_is_embedding;
  const TypePlan plan = make_plan(o.type, sh->n_layer, sh->n_head / std::max<int64_t>(sh->n_head_kv, 1), tied,
                                 o.pure);
  if (o.vocab_from.empty()) fail("synth: --vocab-from VOCAB.gguf is required (the tokenizer to copy)");
  auto vocab = gguf::File::open(o.vocab_from);
  const gguf::Value* tokens = vocab->find("tokenizer.ggml.tokens");
  if (!tokens || tokens->type != gguf::ValueType::ARRAY || tokens->arr.empty())
    fail("synth: ", o.vocab_from, " has no tokenizer.ggml.tokens array");
  const int64_t n_vocab = int64_t(tokens->arr.size());

  ThreadPool pool(o.n_threads > 0 ? o.n_threads : default_thread_count());
  Builder b(o, plan, pool);
  gguf::Writer& w = b.writer();
  const std::string a(arch->name);
  w.set("general.architecture", gguf::Value::of_string(a));
  w.set("general.name", gguf::Value::of_string("edgellm synth " + a + " " + sh->name + " " + o.type));
  w.set("general.file_type", gguf::Value::of_u32(plan.recipe.ftype));
  w.set("general.quantization_version", gguf::Value::of_u32(2));
  w.set(a + ".context_length", gguf::Value::of_u32(uint32_t(sh->n_ctx)));
  w.set(a + ".embedding_length", gguf::Value::of_u32(uint32_t(sh->n_embd)));
  w.set(a + ".block_count", gguf::Value::of_u32(uint32_t(sh->n_layer)));
  // Gemma 4's layer kinds (see SynthShape); other shapes: every layer alike.
  const bool g4 = arch->swa_pattern;
  if (g4 && sh->global_every <= 0)
    fail("synth: --arch ", a, " needs a shape with its layer layout (tiny-gemma4, tiny-gemma4-kv, gemma4-e2b, gemma4-e4b)");
  auto sliding = [&](int64_t il) { return g4 && (il + 1) % sh->global_every != 0; };
  const int64_t first_shared = sh->n_layer - (g4 ? sh->n_kv_shared : 0);
  auto n_ff_at = [&](int64_t il) { return sh->double_wide_ffn && il >= first_shared ? 2 * sh->n_ff : sh->n_ff; };
  auto head_dim_at = [&](int64_t il) { return sliding(il) ? sh->head_dim_swa : sh->head_dim; };
  const bool kv_per_layer = g4 && sh->n_head_kv_global > 0;
  auto n_head_kv_at = [&](int64_t il) { return kv_per_layer && !sliding(il) ? sh->n_head_kv_global : sh->n_head_kv; };
  if (sh->double_wide_ffn && g4) {
    std::vector<gguf::Value> ff;
    for (int64_t il = 0; il < sh->n_layer; ++il) ff.push_back(gguf::Value::of_u32(uint32_t(n_ff_at(il))));
    w.set(a + ".feed_forward_length", gguf::Value::of_array(gguf::ValueType::UINT32, std::move(ff)));
  } else {
    w.set(a + ".feed_forward_length", gguf::Value::of_u32(uint32_t(sh->n_ff)));
  }
  if (g4) {  // as convert_hf_to_gguf.py's Gemma4Model writes them
    std::vector<gguf::Value> pattern;
    for (int64_t il = 0; il < sh->n_layer; ++il) pattern.push_back(gguf::Value::of_bool(sliding(il)));
    w.set(a + ".attention.sliding_window_pattern", gguf::Value::of_array(gguf::ValueType::BOOL, std::move(pattern)));
    w.set(a + ".attention.key_length_swa", gguf::Value::of_u32(uint32_t(sh->head_dim_swa)));
    w.set(a + ".attention.value_length_swa", gguf::Value::of_u32(uint32_t(sh->head_dim_swa)));
    w.set(a + ".rope.dimension_count_swa", gguf::Value::of_u32(uint32_t(sh->head_dim_swa)));
    w.set(a + ".rope.freq_base_swa", gguf::Value::of_f32(10000.0f));
    w.set(a + ".attention.shared_kv_layers", gguf::Value::of_u32(uint32_t(sh->n_kv_shared)));
    w.set(a + ".embedding_length_per_layer_input", gguf::Value::of_u32(uint32_t(sh->n_embd_per_layer)));
    w.set(a + ".final_logit_softcapping", gguf::Value::of_f32(30.0f));
  }
  w.set(a + ".attention.head_count", gguf::Value::of_u32(uint32_t(sh->n_head)));
  if (kv_per_layer) {
    std::vector<gguf::Value> kv;
    for (int64_t il = 0; il < sh->n_layer; ++il) kv.push_back(gguf::Value::of_u32(uint32_t(n_head_kv_at(il))));
    w.set(a + ".attention.head_count_kv", gguf::Value::of_array(gguf::ValueType::UINT32, std::move(kv)));
  } else {
    w.set(a + ".attention.head_count_kv", gguf::Value::of_u32(uint32_t(sh->n_head_kv)));
  }
  w.set(a + ".attention.key_length", gguf::Value::of_u32(uint32_t(sh->head_dim)));
  w.set(a + ".attention.value_length", gguf::Value::of_u32(uint32_t(sh->head_dim)));
  const int64_t n_rot = sh->n_rot > 0 ? sh->n_rot : sh->head_dim;
  w.set(a + ".rope.dimension_count", gguf::Value::of_u32(uint32_t(n_rot)));
  const bool longrope = arch->longrope && sh->n_ctx_orig > 0;
  if (longrope) {  // as convert_hf_to_gguf.py's Phi3MiniModel writes them
    const double s = double(sh->n_ctx) / double(sh->n_ctx_orig);
    w.set(a + ".rope.scaling.original_context_length", gguf::Value::of_u32(uint32_t(sh->n_ctx_orig)));
    w.set(a + ".rope.scaling.attn_factor",
          gguf::Value::of_f32(s > 1 ? float(std::sqrt(1 + std::log(s) / std::log(double(sh->n_ctx_orig)))) : 1.0f));
  }
  w.set(a + ".rope.freq_base", gguf::Value::of_f32(sh->rope_base));
  if (sh->rope_linear > 0) {
    w.set(a + ".rope.scaling.type", gguf::Value::of_string("linear"));
    w.set(a + ".rope.scaling.factor", gguf::Value::of_f32(sh->rope_linear));
  }
  if (arch->swa_period > 0 || arch->swa_pattern) {
    const int64_t n_swa = o.n_swa > 0 ? o.n_swa : sh->n_swa;
    if (n_swa <= 0)
      fail("synth: --arch ", a, " has sliding-window layers; shape '", sh->name,
           "' has no window (use tiny-6l or a ", a, " shape)");
    w.set(a + ".attention.sliding_window", gguf::Value::of_u32(uint32_t(n_swa)));
  }
  if (arch->softcaps) {  // gemma2's published values
    w.set(a + ".attn_logit_softcapping", gguf::Value::of_f32(50.0f));
    w.set(a + ".final_logit_softcapping", gguf::Value::of_f32(30.0f));
  }
  w.set(a + ".attention.layer_norm_rms_epsilon", gguf::Value::of_f32(sh->rms_eps));
  w.set(a + ".vocab_size", gguf::Value::of_u32(uint32_t(n_vocab)));
  for (const auto& [k, v] : vocab->metadata())
    if (k.rfind("tokenizer.", 0) == 0) w.set(k, v);

  // Scales keep activations in a realistic range: projections from a unit-RMS
  // input get std 1/sqrt(fan_in), residual branches are damped by 0.5, and the
  // head's std 2/sqrt(n_embd) with a log-normal spread of row norms gives
  // logits of std ~2-3 whose top stands out, peaked but not one-hot.
  const int64_t E = sh->n_embd;
  const float in_std = 1.0f / std::sqrt(float(E));
  // A soft-capped head (gemma2: 30 tanh(x / 30)) would flatten that spread's
  // top logits (hundreds) into ties at 30; a narrower spread keeps a top.
  const float spread = arch->softcaps || arch->final_softcap ? 0.5f : 2.0f;
  b.add("token_embd.weight", E, n_vocab, tied ? 2.0f * in_std : 1.0f, 0, -1, tied ? spread : 0.0f);
  b.add("output_norm.weight", E, 1, 0.05f, 1.0f);
  if (!tied) b.add("output.weight", E, n_vocab, 2.0f * in_std, 0, -1, spread);
  if (arch->rope_freqs && sh->llama3_rope) b.add_f32("rope_freqs.weight", llama3_rope_factors(sh->head_dim, sh->rope_base));
  if (longrope) {
    b.add_f32("rope_factors_long.weight", longrope_factors(n_rot, true, o.seed));
    b.add_f32("rope_factors_short.weight", longrope_factors(n_rot, false, o.seed));
  }
  const int64_t P = g4 ? sh->n_embd_per_layer : 0, LP = sh->n_layer * P;
  if (g4) {
    // The global layers' "proportional" RoPE: the first rot_fraction of the
    // pairs rotate, the others get a factor of 1e30 (no rotation).
    const int64_t half = sh->head_dim / 2, rotating = int64_t(float(sh->head_dim) * sh->rot_fraction_global / 2);
    std::vector<float> f(static_cast<size_t>(half), 1e30f);
    std::fill(f.begin(), f.begin() + rotating, 1.0f);
    b.add_f32("rope_freqs.weight", std::move(f));
  }
  if (P > 0) {
    b.add("per_layer_token_embd.weight", LP, n_vocab, 1.0f);
    b.add("per_layer_model_proj.weight", E, LP, in_std);
    b.add("per_layer_proj_norm.weight", P, 1, 0.05f, 1.0f);
  }
  for (int64_t il = 0; il < sh->n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    const int l = int(il);
    const int64_t hd = head_dim_at(il), q_dim = sh->n_head * hd, kv_dim = n_head_kv_at(il) * hd, n_ff = n_ff_at(il);
    const bool owns_kv = il < first_shared;
    b.add(p + "attn_norm.weight", E, 1, 0.05f, 1.0f);
    if (!owns_kv) {  // a KV-sharing layer: queries only (llama.cpp needs no k/v tensors there)
      b.add(p + "attn_q.weight", E, q_dim, in_std, 0, l);
    } else if (arch->fused_qkv) {  // phi3's converter keeps the checkpoint's qkv_proj: q, k, v rows
      b.add(p + "attn_qkv.weight", E, q_dim + 2 * kv_dim, in_std, 0, l);
    } else {
      b.add(p + "attn_q.weight", E, q_dim, in_std, 0, l);
      b.add(p + "attn_k.weight", E, kv_dim, in_std, 0, l);
      b.add(p + "attn_v.weight", E, kv_dim, in_std, 0, l);
    }
    b.add(p + "attn_output.weight", q_dim, E, 0.5f / std::sqrt(float(q_dim)), 0, l);
    if (arch->qkv_bias) {
      b.add(p + "attn_q.bias", q_dim, 1, 0.1f);
      b.add(p + "attn_k.bias", kv_dim, 1, 0.1f);
      b.add(p + "attn_v.bias", kv_dim, 1, 0.1f);
    }
    if (arch->qk_norm) {
      // Gemma 4 scores q.k unscaled: its q norm's weights are ~1/sqrt(head dim).
      const float q_mean = arch->unit_attn_scale ? 1.0f / std::sqrt(float(hd)) : 1.0f;
      b.add(p + "attn_q_norm.weight", hd, 1, 0.05f * q_mean, q_mean);
      if (owns_kv) b.add(p + "attn_k_norm.weight", hd, 1, 0.05f, 1.0f);
    }
    if (arch->post_norms) b.add(p + "post_attention_norm.weight", E, 1, 0.05f, 0.5f);
    b.add(p + "ffn_norm.weight", E, 1, 0.05f, 1.0f);
    if (arch->fused_gate_up) {  // gate_up_proj: gate rows, then up rows
      b.add(p + "ffn_up.weight", E, 2 * n_ff, in_std, 0, l);
    } else {
      b.add(p + "ffn_gate.weight", E, n_ff, in_std, 0, l);
      b.add(p + "ffn_up.weight", E, n_ff, in_std, 0, l);
    }
    b.add(p + "ffn_down.weight", n_ff, E, 0.5f / std::sqrt(float(n_ff)), 0, l);
    if (arch->post_norms) b.add(p + "post_ffw_norm.weight", E, 1, 0.05f, 0.5f);
    if (P > 0) {
      b.add(p + "inp_gate.weight", E, P, in_std, 0, l);
      b.add(p + "proj.weight", P, E, 0.5f / std::sqrt(float(P)), 0, l);
      b.add(p + "post_norm.weight", E, 1, 0.05f, 0.5f);
    }
    if (g4) b.add(p + "layer_output_scale.weight", 1, 1, 0.1f, 0.8f);
  }
  w.write(path);
}

}  // namespace edgellm
