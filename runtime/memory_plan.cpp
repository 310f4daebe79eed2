#include "runtime/memory_plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <cstdio>

#include "base/error.h"
#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "model/model.h"
#include "runtime/sampler.h"

namespace edgellm {

namespace {

size_t align64(size_t n) { return (n + 63) / 64 * 64; }

struct Layout {
  size_t total = 0;
  size_t add(size_t bytes) {
    const size_t at = total;
    total += align64(bytes);
    return at;
  }
};

// What the process holds whatever the model: the C++ runtime's and libc's
// heap arenas, each thread's touched stack and TLS. Measured on Linux x86-64
// (/proc/self/status RssAnon minus every planned buffer, stories260K and the
// synth 0.5B-1B models): 0.2-0.4 MiB, a few tens of KiB per extra thread.
constexpr uint64_t kBaseOverhead = uint64_t(384) << 10;
constexpr uint64_t kPerThreadOverhead = uint64_t(64) << 10;
// The edgellm binary's and the shared libraries' text that a run touches
// (file-backed RSS outside the model file): measured 4.9 MiB (Release, x86-64).
constexpr uint64_t kCodeBytes = uint64_t(5) << 20;

}  // namespace

gguf::Residency resolve_auto_residency(uint64_t tensor_bytes) {
  return tensor_bytes >= gguf::kAutoHugePagesBytes && gguf::transparent_hugepages_available()
             ? gguf::Residency::HugePages
             : gguf::Residency::Mmap;
}

size_t kv_row_bytes(GgmlType t, int64_t n) { return row_size(t, n); }

size_t plan_matmul_scratch(const ModelShape& shape, int64_t B, int n_threads) {
  size_t act = 0;
  for (const ModelShape::Layer& L : shape.layers) {
    const MatmulJob qkv[3] = {{&L.wq, nullptr}, {&L.wk, nullptr}, {&L.wv, nullptr}};
    const MatmulJob gu[2] = {{&L.w_gate, nullptr}, {&L.w_up, nullptr}};
    act = std::max({act, matmul_scratch_bytes(qkv, L.wk.rows > 0 ? 3 : 1, B, n_threads),
                    matmul_scratch_bytes(gu, 2, B, n_threads), matmul_scratch_bytes(L.wo, B, n_threads),
                    matmul_scratch_bytes(L.w_down, B, n_threads)});
    for (const WeightView* w : {&L.inp_gate, &L.proj})
      if (w->rows > 0) act = std::max(act, matmul_scratch_bytes(*w, B, n_threads));
  }
  if (shape.per_layer_model_proj.rows > 0)
    act = std::max(act, matmul_scratch_bytes(shape.per_layer_model_proj, B, n_threads));
  return std::max(act, matmul_scratch_bytes(shape.output, B, n_threads));
}

ModelShape model_shape(const Model& model) {
  ModelShape m;
  m.hp = model.hparams();
  m.layers.reserve(model.layers().size());
  for (const LayerWeights& L : model.layers())
    m.layers.push_back({L.wq, L.wk, L.wv, L.wo, L.w_gate, L.w_up, L.w_down, L.inp_gate, L.proj});
  m.output = model.output();
  m.per_layer_model_proj = model.per_layer_model_proj();
  m.weight_bytes = model.weight_bytes();
  m.header_bytes = model.file().data_offset();
  m.realigned_bytes = model.file().realigned_bytes();
  m.alignment = model.file().alignment();
  m.host_bytes = model.host_bytes();
  m.load_peak_bytes = model.load_peak_bytes();
  return m;
}

MemoryPlan plan_memory(const Model& model, const PlanSettings& s) { return plan_memory(model_shape(model), s); }

MemoryPlan plan_memory(const ModelShape& model, const PlanSettings& s) {
  const HParams& hp = model.hp;
  MemoryPlan p;
  p.settings = s;
  if (s.n_ctx < 0) fail("context size ", s.n_ctx, " is negative");
  p.n_ctx = s.n_ctx > 0 ? s.n_ctx : std::min<int64_t>(hp.n_ctx_train, 4096);
  if (p.n_ctx > hp.n_ctx_train)
    fail("context size ", p.n_ctx, " is larger than the model supports (", hp.n_ctx_train, " tokens); use -c ",
         hp.n_ctx_train, " or less");
  if (s.n_batch < 1) fail("batch size ", s.n_batch, " must be at least 1");
  if (s.n_seq < 1) fail("the number of sequences (", s.n_seq, ") must be at least 1");
  if (s.n_threads < 1) fail("the thread count (", s.n_threads, ") must be at least 1");
  p.n_batch = std::min(s.n_batch, p.n_ctx);
  p.settings.n_ctx = p.n_ctx;
  p.settings.n_batch = p.n_batch;
  for (const auto& [t, flag] : {std::pair{s.type_k, "-ctk"}, std::pair{s.type_v, "-ctv"}}) {
    const int64_t head = t == s.type_k ? std::gcd(hp.head_dim, hp.head_dim_swa) : std::gcd(hp.head_dim_v, hp.head_dim_v_swa);
    if (t != GgmlType::F16 && t != GgmlType::F32 && t != GgmlType::Q8_0 && t != GgmlType::Q4_0)
      fail("KV cache type ", type_name(uint32_t(t)), " is not supported (", flag, " f16, f32, q8_0 or q4_0)");
    const int64_t blck = traits(t).block_size;
    if (head % blck != 0)
      fail("KV cache type ", type_name(uint32_t(t)), " needs a head size divisible by ", blck, "; this model's is ",
           head, ": use ", flag, " f16");
  }

  // Weights.
  p.weights_bytes = model.weight_bytes;
  gguf::Residency mode = s.load_mode;
  if (mode == gguf::Residency::Auto) mode = resolve_auto_residency(p.weights_bytes);
  p.settings.load_mode = mode;
  // The copy is the data section from its first page (File::make_resident).
  const uint64_t header = model.header_bytes;
  p.weights_resident_bytes =
      mode == gguf::Residency::HugePages ? (p.weights_bytes + header % 4096 + 4095) / 4096 * 4096 : 0;
  // Tensors a general.alignment below 8 left at odd addresses live in an
  // anonymous copy whatever the load mode (gguf File::realign_tensors).
  const uint64_t realigned = model.realigned_bytes;
  p.weights_resident_bytes += realigned;

  // KV cache: n_ctx rows of keys and of values per layer and sequence, or
  // swa_cells in a sliding-window layer: the window, plus the batch less one
  // (a batch stores its rows before attending, and its first token still
  // sees the window before it), in whole tiles of 32 (the attention tiles
  // never wrap around the ring).
  // Rows differ in size where sliding layers have their own head size or
  // KV head count (Gemma 4), and KV-sharing layers hold none: the sums below
  // go layer by layer (k_row_bytes / v_row_bytes are the first global
  // layer's rows).
  int64_t first_global = 0;
  while (first_global + 1 < hp.n_layer && hp.sliding(first_global)) ++first_global;
  p.k_row_bytes = kv_row_bytes(s.type_k, hp.n_head_kv_at(first_global) * hp.head_dim);
  p.v_row_bytes = kv_row_bytes(s.type_v, hp.n_head_kv_at(first_global) * hp.head_dim_v);
  p.n_layer = hp.n_layer;
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const uint64_t row = kv_row_bytes(s.type_k, hp.k_dim_at(il)) + kv_row_bytes(s.type_v, hp.v_dim_at(il));
    const bool sliding = hp.sliding(il);
    p.n_swa_layers += sliding ? 1 : 0;
    (sliding ? p.row_bytes_read_swa : p.row_bytes_read_global) += row;
    if (hp.owns_kv(il)) {
      (sliding ? p.row_bytes_swa : p.row_bytes_global) += row;
      p.n_swa_owners += sliding ? 1 : 0;
    } else {
      ++p.n_shared_layers;
    }
  }
  if (p.n_swa_layers > 0) {
    p.n_swa = hp.n_swa;
    const int64_t ring = (hp.n_swa + p.n_batch - 1 + 31) / 32 * 32;
    p.swa_cells = s.swa_full || ring >= p.n_ctx ? p.n_ctx : ring;
  }
  p.kv_bytes_per_seq = p.row_bytes_global * uint64_t(p.n_ctx) + p.row_bytes_swa * uint64_t(p.swa_cells);
  p.kv_bytes = p.kv_bytes_per_seq * uint64_t(s.n_seq);

  // The executor's arena.
  const int64_t B = p.n_batch, E = hp.n_embd;
  const size_t f = sizeof(float);
  Layout l;
  ArenaLayout& a = p.arena;
  a.x = l.add(B * E * f);
  a.xn = l.add(B * E * f);
  p.ffn_chunk = std::min<int64_t>(B, kFfnChunk);
  // q and att are dead once attention and the output projection ran; up and
  // gate live only inside the FFN that follows: each pair shares one region.
  a.q = a.up = l.add(std::max(B * hp.q_dim(), p.ffn_chunk * hp.n_ff) * f);
  a.att = a.gate = l.add(std::max(B * hp.n_head * hp.max_head_dim_v(), p.ffn_chunk * hp.n_ff) * f);
  a.k = l.add(B * hp.k_dim() * f);
  a.v = l.add(B * hp.v_dim() * f);
  a.ffn_out = l.add(p.ffn_chunk * E * f);
  // One row per sequence of a batched decode step (the last token of each),
  // or one per token for logits_all.
  const int64_t logit_rows = s.logits_all ? B : std::min<int64_t>(B, s.n_seq);
  a.logits = l.add(logit_rows * hp.n_vocab * f);
  const int64_t rope_tables = hp.local_rope() ? 2 : 1;  // global, and local layers' own base
  a.rope = l.add(rope_tables * B * hp.max_n_rot() * f);
  a.inv_freq = l.add(rope_tables * hp.max_n_rot() / 2 * sizeof(double));
  // Gemma 4's per-layer inputs: [B][n_layer * P], and one layer's gate [B][P].
  const int64_t P = hp.n_embd_per_layer;
  a.per_layer = P > 0 ? l.add((B + 1) * hp.n_layer * P * f) : 0;  // + a row for one token's embedding
  a.per_layer_gate = P > 0 ? l.add(B * P * f) : 0;
  a.act = l.add(plan_matmul_scratch(model, B, s.n_threads));
  a.total = l.total;

  // Host tables: what the loaded model holds on the heap (measured while it
  // loaded: f32 norms and biases, tokenizer tables), the sampler's candidate
  // and penalty arrays, and the generation loop's logits copy and history.
  // One sampler, logits copy and history per sequence (each generation of
  // the batch has its own).
  const uint64_t sampler = Sampler::buffer_bytes(int32_t(hp.n_vocab)) * uint64_t(s.n_seq);
  const uint64_t loop = (uint64_t(hp.n_vocab) * f + uint64_t(p.n_ctx) * sizeof(int32_t)) * uint64_t(s.n_seq);
  const uint64_t token_ids = uint64_t(p.n_ctx) * sizeof(int32_t) * uint64_t(s.n_seq);  // ids each cache holds
  p.host_bytes = model.host_bytes + sampler + loop + token_ids;
  p.buffers_bytes = a.total + p.host_bytes;
  p.overhead_bytes = kBaseOverhead + kPerThreadOverhead * uint64_t(s.n_threads - 1);
  // Program text, and the file's header pages (metadata: read while
  // loading, file-backed, a few MiB for a 150k vocabulary).
  p.code_bytes = kCodeBytes + (header + 4095) / 4096 * 4096;

  p.load_peak_bytes = p.weights_resident_bytes + model.load_peak_bytes + p.overhead_bytes;
  p.footprint_bytes =
      std::max(p.weights_resident_bytes + p.kv_bytes + p.buffers_bytes + p.overhead_bytes, p.load_peak_bytes);
  // A forward pass touches every tensor byte: file-backed pages all come into
  // RSS when the weights are mapped.
  const uint64_t mapped = mode == gguf::Residency::HugePages ? 0 : p.weights_bytes;
  p.total_bytes = p.footprint_bytes + mapped + p.code_bytes;

  auto line = [&](std::string what, uint64_t bytes, bool anon) { p.lines.push_back({std::move(what), bytes, anon}); };
  line(mode == gguf::Residency::HugePages ? "weights (resident copy, huge pages)" : "weights (file-backed mmap)",
       mode == gguf::Residency::HugePages ? p.weights_resident_bytes - realigned : p.weights_bytes,
       mode == gguf::Residency::HugePages);
  if (realigned > 0)
    line("weights copied to aligned memory (general.alignment " + std::to_string(model.alignment) + ")",
         realigned, true);
  const std::string window =
      p.swa_cells > 0 && p.swa_cells < p.n_ctx
          ? "; " + std::to_string(p.n_swa_owners) + " of " + std::to_string(hp.n_layer) + " layers hold " +
                std::to_string(p.swa_cells) + " (window " + std::to_string(p.n_swa) + " + batch)" +
                (p.n_shared_layers > 0 ? ", " + std::to_string(p.n_shared_layers) + " share earlier layers' rows" : "")
          : "";
  line("KV cache (" + std::to_string(s.n_seq) + " x " + std::to_string(p.n_ctx) + " tokens" + window + ", K " +
           type_name(uint32_t(s.type_k)) + ", V " + type_name(uint32_t(s.type_v)) + ")",
       p.kv_bytes, true);
  const uint64_t logits = uint64_t(logit_rows) * uint64_t(hp.n_vocab) * f;
  const uint64_t scratch = a.total - a.act;
  line("activations (batch " + std::to_string(B) + ")", a.total - scratch - logits, true);
  line("matmul scratch (" + std::to_string(s.n_threads) + " threads)", scratch, true);
  line("logits", logits, true);
  line("model tables (norms, tokenizer)", model.host_bytes, true);
  line("sampler and generation loop", sampler + loop + token_ids, true);
  line("runtime overhead (heap, stacks)", p.overhead_bytes, true);
  line("program text and the file's header", p.code_bytes, false);
  line("(while loading: metadata + tokenizer, transient)", model.load_peak_bytes, true);
  return p;
}

uint64_t MemoryPlan::kv_bytes_read_at(int64_t depth) const {
  const uint64_t d = uint64_t(std::max<int64_t>(depth, 0));
  const uint64_t d_swa = n_swa > 0 ? std::min(d, uint64_t(n_swa)) : d;
  return row_bytes_read_global * d + row_bytes_read_swa * d_swa;
}

uint64_t parse_size(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  const std::string num = s.substr(0, i), unit = s.substr(i);
  char* end = nullptr;
  const double v = num.empty() ? -1 : std::strtod(num.c_str(), &end);
  double mul = 0;
  if (unit.empty() || unit == "B" || unit == "b") mul = 1;
  else if (unit == "K" || unit == "k" || unit == "KB" || unit == "KiB") mul = 1024.0;
  else if (unit == "M" || unit == "m" || unit == "MB" || unit == "MiB") mul = 1024.0 * 1024;
  else if (unit == "G" || unit == "g" || unit == "GB" || unit == "GiB") mul = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "t" || unit == "TB" || unit == "TiB") mul = 1024.0 * 1024 * 1024 * 1024;
  if (num.empty() || end != num.c_str() + num.size() || mul == 0 || !(v > 0) || v * mul > 1e18)
    fail("'", s, "' is not a memory size; use a number with an optional unit K, M, G or T (e.g. 1.5G, 900M)");
  return uint64_t(std::llround(v * mul));
}

std::string format_mib(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace edgellm
