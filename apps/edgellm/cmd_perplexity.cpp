// edgellm perplexity: llama-perplexity's method, output and KL-divergence base
// file (tools/perplexity.h), so one engine's logits can be scored against
// another's:
//   edgellm perplexity -m M.gguf -f text.txt -c 512                          PPL
//   edgellm perplexity -m F16.gguf -f text.txt --kl-divergence-base base.kld  PPL, and write the base
//   edgellm perplexity -m Q4.gguf --kl-divergence-base base.kld --kl-divergence   KLD vs the base
#include <cstdio>
#include <fstream>
#include <sstream>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "base/input_file.h"
#include "tensor/types.h"
#include "tokenizer/tokenizer.h"
#include "tools/perplexity.h"

namespace edgellm::cli {

namespace {

// -ctk / -ctv value, by its ggml type name (tensor/types.h).
GgmlType parse_cache_type(const std::string& flag, const std::string& value) {
  for (GgmlType t : {GgmlType::F16, GgmlType::F32, GgmlType::Q8_0, GgmlType::Q4_0})
    if (value == type_name(uint32_t(t))) return t;
  fail(flag, " ", value, ": not a KV cache type (use f16, q8_0, q4_0 or f32)");
}

// SessionConfig is gaining separate K and V cache types (type_k, type_v);
// until it has them, both must agree and go to the single kv_type.
template <class Cfg>
void set_cache_types(Cfg& cfg, GgmlType k, GgmlType v) {
  if constexpr (requires { cfg.type_k; cfg.type_v; }) {
    cfg.type_k = k;
    cfg.type_v = v;
  } else {
    if (k != v) fail("perplexity: different K and V cache types are not supported yet (give -ctk and -ctv the same)");
    cfg.kv_type = k;
  }
}

std::string read_text(const std::string& path) {
  std::string text = read_input_file(path, "-f");
  if (!text.empty() && text.back() == '\n') text.pop_back();  // as llama.cpp's -f does
  return text;
}

}  // namespace

int cmd_perplexity(int argc, char** argv) {
  Args args("perplexity",
            "Perplexity of a text, llama-perplexity's method; write or score against a KL-divergence base file.");
  ModelFlags mf;
  mf.n_ctx = 512;
  std::string text_file, base_file, output = "text", ctk = "f16", ctv = "f16";
  bool kld = false;
  int64_t n_chunks = -1;
  args.add({"-m", "--model"}, &mf.model, "GGUF model file");
  args.add({"-f", "--file"}, &text_file, "the text to score (not needed with --kl-divergence)");
  args.add({"-c", "--ctx-size"}, &mf.n_ctx, "tokens per chunk (default 512; only its second half is scored)", 4,
           int64_t(1) << 24);
  args.add({"-b", "--batch-size"}, &mf.n_batch, "tokens per forward pass (default 512)", 1, 1 << 16);
  args.add({"-t", "--threads"}, &mf.n_threads, "threads (0 = all cores)", 0, 512);
  args.add({"--chunks"}, &n_chunks, "score at most this many chunks (-1 = all)", -1, int64_t(1) << 30);
  args.add({"-ctk", "--cache-type-k"}, &ctk, "KV cache type for K: f16 (default), f32, q8_0, q4_0");
  args.add({"-ctv", "--cache-type-v"}, &ctv, "KV cache type for V: f16 (default), f32, q8_0, q4_0");
  args.add({"--kl-divergence-base"}, &base_file,
           "llama-perplexity log-probability file: written (from this model) unless --kl-divergence is given");
  args.add_flag({"--kl-divergence"}, &kld, "score this model against --kl-divergence-base (tokens come from that file)");
  args.add({"-o", "--output"}, &output, "text (llama-perplexity's lines) | json");
  args.add({"--load-mode"}, &mf.load_mode, "where the weights live: mmap, hugepages, auto");
  if (!args.parse(argc, argv)) return 0;
  if (output != "text" && output != "json") fail("perplexity: unknown output format '", output, "' (text, json)");
  if (kld && base_file.empty()) fail("perplexity: --kl-divergence needs --kl-divergence-base FILE");
  if (!kld && text_file.empty()) fail("perplexity: no text given; pass one with -f FILE");
  const GgmlType type_k = parse_cache_type("-ctk", ctk), type_v = parse_cache_type("-ctv", ctv);
  const bool json = output == "json";

  // Open the base file before loading the model, so a bad file fails fast.
  std::unique_ptr<KldBaseReader> base;
  if (kld) {
    base = std::make_unique<KldBaseReader>(base_file);
    if (args.given("-c") && mf.n_ctx != base->header().n_ctx)
      fail("perplexity: -c ", mf.n_ctx, " differs from the base file's context of ", base->header().n_ctx,
           " (omit -c; chunks come from the base file)");
    mf.n_ctx = base->header().n_ctx;
    if (!text_file.empty()) std::fprintf(stderr, "perplexity: with --kl-divergence the tokens come from %s; -f is ignored\n", base_file.c_str());
  }
  auto model = mf.load_model();
  const Tokenizer* tok = model->tokenizer();
  std::vector<int32_t> tokens;
  if (!kld) {
    if (!tok) fail(model->tokenizer_error());
    tokens = tok->encode(read_text(text_file), /*add_bos=*/true, /*parse_special=*/false);
    if (int64_t(tokens.size()) < 2 * mf.n_ctx)
      fail("perplexity: ", text_file, " tokenizes to only ", tokens.size(), " tokens; a context of ", mf.n_ctx,
           " needs at least ", 2 * mf.n_ctx, " (2 x -c): give a longer text or a smaller -c");
  }

  if (kld && base->header().n_vocab != model->hparams().n_vocab)
    fail("perplexity: ", base_file, " was written with a vocabulary of ", base->header().n_vocab,
         " tokens; this model has ", model->hparams().n_vocab, " (score a model of the same vocabulary)");

  SessionConfig cfg = mf.session_config();
  cfg.n_batch = std::min(mf.n_batch, mf.n_ctx);
  cfg.logits_all = true;
  set_cache_types(cfg, type_k, type_v);
  Session s(*model, cfg);

  PerplexityRun run;
  run.n_ctx = mf.n_ctx;
  run.n_chunks = n_chunks;
  // Each chunk starts with BOS when the vocabulary adds one (llama_vocab_get_add_bos).
  if (tok && tok->vocab().add_bos && tok->vocab().bos >= 0) run.bos = tok->vocab().bos;
  if (!kld) run.write_base = base_file;
  bool header_done = false;
  run.on_chunk = [&](const PerplexityReport& r) {
    FILE* out = json ? stderr : stdout;
    if (r.has_kld && !header_done) std::fputs(format_kld_table_header().c_str(), out);
    header_done = true;
    std::fputs(format_chunk_line(r).c_str(), out);
    std::fflush(out);
  };
  std::fprintf(stderr, "perplexity: %s, n_ctx %lld, n_batch %lld, cache %s/%s%s%s\n", mf.model.c_str(),
               (long long)mf.n_ctx, (long long)s.n_batch(), ctk.c_str(), ctv.c_str(),
               kld ? ", scoring against " : base_file.empty() ? "" : ", writing the base ", base_file.c_str());
  const PerplexityReport r = kld ? evaluate_kl_divergence(s, *base, run) : evaluate_perplexity(s, tokens, run);
  if (json) {
    std::fputc('\n', stderr);
    std::printf("%s\n", format_json(r).c_str());
  } else {
    std::printf("\n%s", format_summary(r).c_str());
  }
  return 0;
}

}  // namespace edgellm::cli
