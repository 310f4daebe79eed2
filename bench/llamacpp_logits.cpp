// llamacpp_logits: the llama.cpp side of bench/crosscheck-llamacpp.sh.
//
// Links against the reference engine's libllama.so through its public C API
// (no sampler chain, no common/ library) and does exactly what
// `edgellm eval --dump-logits` and `edgellm run --temp 0 --ids` do, so the two
// engines can be compared on the same token ids:
//
//   llamacpp_logits -m M.gguf --tokens 1,2,3 --dump-logits F
//       decodes the ids in ONE batch with logits for every position and writes
//       float32 [n_tokens][n_vocab], row-major, no header (same layout as
//       edgellm eval).
//   llamacpp_logits -m M.gguf --tokens 1,2,3 --greedy N
//       decodes the prompt, then generates up to N tokens by argmax of the
//       logits (lowest id wins a tie), stopping before an end-of-generation
//       token as edgellm run does; prints the ids comma-separated on stdout.
//
// Options: --ignore-eos to generate all N tokens, -t N threads (default 2), --flash-attn on|off|auto (default auto,
// llama.cpp's own default), --cache-type f16|f32 (KV cache, default f16 like
// edgellm's), --no-repack to keep the weights in their GGUF
// layout (no CPU "extra buffer type" repacking), -v to keep llama.cpp's log.
//
// Build (bench/crosscheck-llamacpp.sh does this):
//   g++ -std=c++17 -O2 bench/llamacpp_logits.cpp -I$LLAMA/include -I$LLAMA/ggml/include
//       -L$LLAMA/build/bin -lllama -lggml -lggml-base -Wl,-rpath,$LLAMA/build/bin -o llamacpp_logits
#include <llama.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "llamacpp_logits: %s\n", msg.c_str());
  std::exit(1);
}

bool g_verbose = false;
void log_cb(ggml_log_level level, const char* text, void*) {
  if (g_verbose || level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

std::vector<llama_token> parse_ids(const std::string& s) {
  std::vector<llama_token> ids;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    const std::string item = s.substr(i, j - i);
    if (item.empty()) die("--tokens: empty entry in '" + s + "'");
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || v < 0 || v > 0x7fffffff) die("--tokens: '" + item + "' is not a token id");
    ids.push_back(llama_token(v));
    i = j + 1;
  }
  if (ids.empty()) die("--tokens: no token ids given");
  return ids;
}

int argmax(const float* x, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

void usage() {
  std::fprintf(stderr,
               "usage: llamacpp_logits -m MODEL.gguf --tokens ID,ID,... (--dump-logits FILE | --greedy N)\n"
               "                       [-t THREADS] [--flash-attn on|off|auto]\n"
               "                       [--cache-type f16|f32] [--no-repack] [--ignore-eos] [-v]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_path, tokens_arg, dump_path, fa = "auto", cache_type = "f16";
  int greedy = -1, n_threads = 2;
  bool repack = true, ignore_eos = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "-m" || a == "--model") model_path = next();
    else if (a == "--tokens") tokens_arg = next();
    else if (a == "--dump-logits") dump_path = next();
    else if (a == "--greedy") greedy = std::atoi(next().c_str());
    else if (a == "-t" || a == "--threads") n_threads = std::atoi(next().c_str());
    else if (a == "--flash-attn") fa = next();
    else if (a == "--no-repack") repack = false;
    else if (a == "--cache-type") cache_type = next();
    else if (a == "--ignore-eos") ignore_eos = true;
    else if (a == "-v") g_verbose = true;
    else usage();
  }
  if (model_path.empty() || tokens_arg.empty() || (dump_path.empty() == (greedy < 0)) || n_threads < 1) usage();
  const std::vector<llama_token> prompt = parse_ids(tokens_arg);
  const int T = int(prompt.size());

  llama_log_set(log_cb, nullptr);
  llama_backend_init();

  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  mp.use_extra_bufts = repack;
  llama_model* model = llama_model_load_from_file(model_path.c_str(), mp);
  if (!model) die("cannot load " + model_path + " (run with -v for llama.cpp's log)");
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const int n_vocab = llama_vocab_n_tokens(vocab);
  for (llama_token id : prompt)
    if (id >= n_vocab) die("--tokens: id " + std::to_string(id) + " is out of range (" + std::to_string(n_vocab) + ")");

  // Context just large enough: the prompt plus what we generate; the whole
  // prompt goes through one llama_decode (n_batch = n_ubatch = T).
  const int n_gen = greedy > 0 ? greedy : 0;
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = uint32_t(T + n_gen);
  cp.n_batch = uint32_t(T);
  cp.n_ubatch = uint32_t(T);
  cp.n_seq_max = 1;
  cp.n_threads = n_threads;
  cp.n_threads_batch = n_threads;
  cp.no_perf = true;
  if (fa == "on") cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_ENABLED;
  else if (fa == "off") cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  else if (fa == "auto") cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_AUTO;
  else usage();
  if (cache_type == "f32") cp.type_k = cp.type_v = GGML_TYPE_F32;
  else if (cache_type != "f16") usage();
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) die("cannot create a context of " + std::to_string(cp.n_ctx) + " tokens");

  llama_batch batch = llama_batch_init(T, 0, 1);
  batch.n_tokens = T;
  for (int i = 0; i < T; ++i) {
    batch.token[i] = prompt[size_t(i)];
    batch.pos[i] = i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = dump_path.empty() ? (i == T - 1) : 1;  // every position when dumping
  }
  if (int rc = llama_decode(ctx, batch); rc != 0) die("llama_decode of the prompt failed (" + std::to_string(rc) + ")");

  int rc = 0;
  if (!dump_path.empty()) {
    std::FILE* f = std::fopen(dump_path.c_str(), "wb");
    if (!f) die("cannot write " + dump_path + ": " + std::strerror(errno));
    for (int i = 0; i < T; ++i) {
      const float* row = llama_get_logits_ith(ctx, i);
      if (!row) die("no logits for position " + std::to_string(i));
      if (std::fwrite(row, sizeof(float), size_t(n_vocab), f) != size_t(n_vocab)) die("short write to " + dump_path);
    }
    if (std::fclose(f) != 0) die("cannot write " + dump_path);
    std::fprintf(stderr, "llamacpp_logits: %d tokens x %d logits -> %s\n", T, n_vocab, dump_path.c_str());
  } else {
    llama_batch one = llama_batch_init(1, 0, 1);
    const float* logits = llama_get_logits_ith(ctx, -1);
    for (int g = 0; g < greedy; ++g) {
      const llama_token id = argmax(logits, n_vocab);
      if (!ignore_eos && llama_vocab_is_eog(vocab, id)) break;
      std::printf(g == 0 ? "%d" : ",%d", id);
      if (g + 1 == greedy) break;
      one.n_tokens = 1;
      one.token[0] = id;
      one.pos[0] = T + g;
      one.n_seq_id[0] = 1;
      one.seq_id[0][0] = 0;
      one.logits[0] = 1;
      if (llama_decode(ctx, one) != 0) {
        rc = 1;
        std::fprintf(stderr, "llamacpp_logits: llama_decode failed at generated token %d\n", g + 1);
        break;
      }
      logits = llama_get_logits_ith(ctx, -1);
    }
    std::printf("\n");
    llama_batch_free(one);
  }
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return rc;
}
