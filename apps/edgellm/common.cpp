#include "apps/edgellm/common.h"

#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <limits>
#include <sstream>

#include "base/error.h"
#include "tokenizer/tokenizer.h"

namespace edgellm::cli {

void ModelFlags::add_to(Args& a, bool with_prompt) {
  a.add({"-m", "--model"}, &model, "GGUF model file (default: ../shared/testdata/models/stories260K.gguf)");
  a.add({"-c", "--ctx-size"}, &n_ctx, "context size in tokens (0 = the model's, at most 4096)", 0, int64_t(1) << 24);
  a.add({"-b", "--batch-size"}, &n_batch, "prompt tokens per forward pass", 1, 1 << 16);
  a.add({"-t", "--threads"}, &n_threads, "threads (0 = all cores)", 0, 512);
  a.add_flag({"--pin"}, &pin, "bind thread i to the i-th CPU this process may run on (Linux, Android)");
  a.add({"--load-mode"}, &load_mode,
        "where the weights live: mmap (file mapping), hugepages (read into 2 MiB pages: fewer TLB misses "
        "when decoding multi-GB models), auto (hugepages from 256 MiB when the kernel allows)");
  if (with_prompt) {
    a.add({"-p", "--prompt"}, &prompt, "prompt text");
    a.add({"-f", "--file"}, &prompt_file, "read the prompt from a file");
    a.add({"--tokens"}, &tokens, "prompt as token ids, e.g. 1,403,407 (no tokenizer needed)");
    a.add_flag({"--no-bos"}, &no_bos, "do not prepend the BOS token to a text prompt");
    a.add_flag({"--parse-special"}, &parse_special,
               "read control-token texts in the prompt (e.g. <|im_start|>) as those tokens");
  }
}

SessionConfig ModelFlags::session_config() const {
  SessionConfig c;
  c.n_ctx = n_ctx;
  c.n_batch = n_batch;
  c.n_threads = int(n_threads);
  c.pin_threads = pin;
  return c;
}

std::unique_ptr<Model> ModelFlags::load_model() const {
  if (model.empty()) fail("no model given; pass one with -m FILE.gguf");
  return Model::load(model, gguf::parse_residency(load_mode));
}

std::vector<int32_t> parse_token_list(const std::string& s, int64_t n_vocab) {
  std::vector<int32_t> ids;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    if (b == std::string::npos) fail("--tokens: empty entry in '", s, "'");
    item = item.substr(b, e - b + 1);
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (*end != '\0') fail("--tokens: '", item, "' is not a token id");
    if (v < 0 || v >= n_vocab) fail("--tokens: id ", v, " is out of range (the vocabulary has ", n_vocab, " tokens)");
    ids.push_back(int32_t(v));
  }
  if (ids.empty()) fail("--tokens: no token ids given");
  return ids;
}

std::vector<int32_t> ModelFlags::prompt_tokens(const Model& m) const {
  const int sources = int(!prompt.empty()) + int(!prompt_file.empty()) + int(!tokens.empty());
  if (sources > 1) fail("give only one of -p, -f and --tokens");
  if (!tokens.empty()) return parse_token_list(tokens, m.hparams().n_vocab);
  std::string text = prompt;
  if (!prompt_file.empty()) {
    std::ifstream in(prompt_file, std::ios::binary);
    if (!in) fail("-f ", prompt_file, ": cannot open the prompt file");
    std::ostringstream os;
    os << in.rdbuf();
    text = os.str();
  }
  if (!m.tokenizer()) fail(m.tokenizer_error());
  return m.tokenizer()->encode(text, !no_bos, parse_special);
}

void SamplerFlags::add_to(Args& a) {
  a.add({"--temp"}, &p.temp, "temperature (0 = greedy)", 0.0f, 100.0f);
  a.add({"--top-k"}, &top_k, "keep the k most likely tokens (0 = off)", 0, 1 << 30);
  a.add({"--top-p"}, &p.top_p, "nucleus sampling threshold (1 = off)", 0.0f, 1.0f);
  a.add({"--min-p"}, &p.min_p, "drop tokens below min-p x the top probability (0 = off)", 0.0f, 1.0f);
  a.add({"--repeat-penalty"}, &p.repeat_penalty, "penalty for recently seen tokens (1 = off)", 0.0f, 100.0f);
  a.add({"--repeat-last-n"}, &repeat_last_n, "tokens the penalty looks back over (-1 = all)", -1, 1 << 30);
  a.add({"-s", "--seed"}, &seed, "random seed (-1 = from the clock)", -1, std::numeric_limits<int64_t>::max());
}

SamplerParams SamplerFlags::params() const {
  SamplerParams out = p;
  out.top_k = int32_t(top_k);
  out.repeat_last_n = int32_t(repeat_last_n);
  out.seed = seed >= 0 ? uint64_t(seed)
                       : uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  return out;
}

double peak_rss_mib() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace edgellm::cli
