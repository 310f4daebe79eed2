#include "apps/edgellm/common.h"

#include <sys/resource.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "base/build_info.h"
#include "base/cpu_affinity.h"
#include "base/error.h"
#include "base/input_file.h"
#include "base/mem_stats.h"
#include "base/text_escape.h"
#include "format/file_type.h"
#include "kernels/dispatch.h"
#include "tokenizer/tokenizer.h"

namespace edgellm::cli {

void CpuFlags::add_to(Args& a) {
  a.add({"-C", "--cpu-mask"}, &mask, "hex mask of the CPUs to run on, e.g. 0xF0 = CPUs 4-7 (default: all allowed)");
  a.add({"--cpu-range"}, &range, "CPUs to run on as a range or list, e.g. 4-7 or 0,2-3 (default: all allowed)");
}

void CpuFlags::apply() const {
  if (!mask.empty() && !range.empty()) fail("give only one of -C/--cpu-mask and --cpu-range");
  if (!mask.empty()) restrict_to_cpus(parse_cpu_mask(mask), "--cpu-mask");
  if (!range.empty()) restrict_to_cpus(parse_cpu_range(range), "--cpu-range");
}

void ModelFlags::add_to(Args& a, bool with_prompt, bool with_memory) {
  a.add({"-m", "--model"}, &model, "GGUF model file (required)");
  a.add({"-c", "--ctx-size"}, &n_ctx, "context size in tokens (0 = the model's, at most 4096)", 0, int64_t(1) << 24);
  a.add({"-b", "--batch-size"}, &n_batch,
        "prompt tokens per step (with several sequences: all of them together, their decode tokens included)", 1,
        1 << 16);
  a.add({"-ub", "--ubatch-size"}, &n_ubatch,
        "tokens per forward pass, which sizes the activation buffers (default 0 = -b; a step is one pass, so -b "
        "above -ub runs as -ub)",
        0, 1 << 16);
  a.add({"-t", "--threads"}, &n_threads,
        "threads (default 0 = one per performance core this process may run on: taskset, cpusets and "
        "big.LITTLE respected)",
        0, 512);
  a.add_flag({"--pin"}, &pin, "bind thread i to the i-th fastest CPU this process may run on (Linux, Android)");
  cpu.add_to(a);
  a.add({"--load-mode"}, &load_mode,
        "where the weights live: mmap (file mapping), hugepages (read into 2 MiB pages: fewer TLB misses "
        "when decoding multi-GB models), auto (hugepages from 256 MiB when the kernel allows)");
  if (with_memory) {
    a.add({"-ctk", "--cache-type-k"}, &cache_type_k, "KV cache type for keys: f16 (default), q8_0, q4_0, f32");
    a.add({"-ctv", "--cache-type-v"}, &cache_type_v, "KV cache type for values: f16 (default), q8_0, q4_0, f32");
    a.add({"--mem-limit"}, &mem_limit,
          "most anonymous memory (footprint) the run may hold, e.g. 1.5G or 900M: refused before loading if the "
          "plan does not fit");
    a.add_flag({"--fit"}, &fit, "with --mem-limit: shrink the context (then the batch) until the plan fits");
    a.add_flag({"--swa-full"}, &swa_full,
               "sliding-window layers (gemma2/3/4) keep the whole context, not a ring of window + batch positions: "
               "more memory, but any earlier prefix stays reusable");
  }
  if (with_prompt) {
    a.add({"-p", "--prompt"}, &prompt, "prompt text; escapes \\n \\t \\\\ \\\" \\xHH are processed (as llama.cpp)");
    a.add_flag({"--no-escape"}, &no_escape, "take -p's text literally (no escape processing)");
    a.add({"-f", "--file"}, &prompt_file, "read the prompt from a file ('-': standard input)");
    a.add_custom({"--tokens"}, "IDS", "prompt as token ids, e.g. 1,403,407 (no tokenizer needed)",
                 [this](const std::string&, const std::string& v) { tokens = v, tokens_given = true; });
    a.add_flag({"--no-bos"}, &no_bos, "do not prepend the BOS token to a text prompt");
    a.add_flag({"--parse-special"}, &parse_special,
               "read control-token texts in the prompt (e.g. <|im_start|>) as those tokens (default: on)");
    a.add_flag({"--no-parse-special"}, &no_parse_special, "take control-token texts in the prompt as plain text");
  }
}

SessionConfig ModelFlags::session_config() const {
  SessionConfig c;
  c.n_ctx = n_ctx;
  c.n_batch = pass_tokens();
  c.n_threads = int(n_threads);
  c.pin_threads = pin;
  c.type_k = type_k();
  c.type_v = type_v();
  c.swa_full = swa_full;
  return c;
}

GgmlType parse_kv_type(const std::string& s, const char* flag) {
  for (GgmlType t : {GgmlType::F16, GgmlType::F32, GgmlType::Q8_0, GgmlType::Q4_0})
    if (s == type_name(uint32_t(t))) return t;
  fail(flag, " ", s, ": not a KV cache type (use f16, q8_0, q4_0 or f32)");
}

GgmlType ModelFlags::type_k() const { return parse_kv_type(cache_type_k, "-ctk"); }
GgmlType ModelFlags::type_v() const { return parse_kv_type(cache_type_v, "-ctv"); }
uint64_t ModelFlags::mem_limit_bytes() const {
  if (mem_limit.empty()) {
    if (fit) fail("--fit needs a limit: add --mem-limit SIZE (e.g. --mem-limit 1G)");
    return 0;
  }
  try {
    return parse_size(mem_limit);
  } catch (const Error& e) {
    fail("--mem-limit: ", e.what());
  }
}

PlanSettings ModelFlags::plan_settings(bool logits_all) const {
  PlanSettings s;
  s.n_ctx = n_ctx;
  s.n_batch = pass_tokens();
  s.type_k = type_k();
  s.type_v = type_v();
  s.n_seq = n_seq;
  s.n_threads = n_threads > 0 ? int(n_threads) : default_thread_count();
  s.logits_all = logits_all;
  s.swa_full = swa_full;
  s.load_mode = gguf::parse_residency(load_mode);
  return s;
}

namespace {

std::string fmt_plan_line(const MemoryPlan& p) {
  if (p.load_peak_bytes >= p.footprint_bytes)
    return "footprint " + format_mib(p.footprint_bytes) + " (while loading: the metadata and tokenizer tables)";
  return "footprint " + format_mib(p.footprint_bytes) + " (weights copy " + format_mib(p.weights_resident_bytes) +
         ", KV " + format_mib(p.kv_bytes) + ", buffers " + format_mib(p.buffers_bytes + p.overhead_bytes) + ")";
}

// The largest context (a multiple of 256, or any size below 256) at these
// settings whose footprint fits the limit; 0 if not even 16 tokens fit.
int64_t largest_fitting_ctx(const Model& m, PlanSettings s, uint64_t limit) {
  const int64_t top = std::min<int64_t>(m.hparams().n_ctx_train, s.n_ctx > 0 ? s.n_ctx : int64_t(1) << 40);
  auto fits = [&](int64_t c) {
    s.n_ctx = c;
    return plan_memory(m, s).footprint_bytes <= limit;
  };
  if (!fits(std::min<int64_t>(16, top))) return 0;
  int64_t lo = std::min<int64_t>(16, top), hi = top;  // fits(lo), find the largest
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) lo = mid; else hi = mid - 1;
  }
  return lo >= 256 ? lo / 256 * 256 : lo;
}

}  // namespace

void print_kv_per_token(const MemoryPlan& p) {
  std::printf("KV per token           %10.1f KiB", double(p.kv_bytes_per_position()) / 1024.0);
  if (p.swa_ring())
    std::printf("   in %lld full-context layers; %lld sliding layers hold a fixed %lld (--swa-full: all)",
                (long long)(p.n_layer - p.n_shared_layers - p.n_swa_owners),
                (long long)p.n_swa_owners, (long long)p.swa_cells);
  if (p.n_shared_layers > 0)
    std::printf("; %lld other layers read earlier layers' keys and values (no rows of their own)",
                (long long)p.n_shared_layers);
  std::printf("\n");
}

MemoryPlan plan_within_limit(const Model& m, PlanSettings s, uint64_t limit, bool fit, std::string* note) {
  // Footprint first: with a limit, auto copies the weights only when the plan
  // with the copy stays within 3/4 of the limit.
  if (limit > 0 && s.load_mode == gguf::Residency::Auto) {
    PlanSettings copy = s;
    copy.load_mode = resolve_auto_residency(m.weight_bytes());
    if (copy.load_mode == gguf::Residency::HugePages && plan_memory(m, copy).footprint_bytes > limit / 4 * 3) {
      s.load_mode = gguf::Residency::Mmap;
      if (note) *note += "weights stay file-backed (mmap): a resident copy would not fit --mem-limit comfortably; ";
    }
  }
  MemoryPlan p = plan_memory(m, s);
  if (limit == 0 || p.footprint_bytes <= limit) return p;
  if (p.load_peak_bytes > limit)
    fail("loading this model needs ", format_mib(p.load_peak_bytes),
         " of anonymous memory for its metadata and tokenizer tables alone (before any KV cache), over the "
         "--mem-limit of ", format_mib(limit), " by ", format_mib(p.load_peak_bytes - limit),
         "; raise --mem-limit or use a smaller model");
  const std::string over = "the plan needs " + fmt_plan_line(p) + ", over the --mem-limit of " + format_mib(limit) +
                           " by " + format_mib(p.footprint_bytes - limit);
  if (fit) {
    const int64_t c = largest_fitting_ctx(m, s, limit);
    if (c >= 16) {
      s.n_ctx = c;
      p = plan_memory(m, s);
      if (note) *note += "--fit: context " + std::to_string(c) + " tokens, " + fmt_plan_line(p);
      return p;
    }
    // Not even a tiny context: shrink the batch too.
    for (int64_t b = std::min<int64_t>(s.n_batch, 256); b >= 1; b /= 2) {
      PlanSettings t = s;
      t.n_batch = b;
      const int64_t cb = largest_fitting_ctx(m, t, limit);
      if (cb >= 16) {
        t.n_ctx = cb;
        p = plan_memory(m, t);
        if (note)
          *note += "--fit: context " + std::to_string(cb) + " tokens, batch " + std::to_string(b) + ", " +
                   fmt_plan_line(p);
        return p;
      }
    }
    fail(over, "; nothing fits, even 16 tokens of context with batch 1: raise --mem-limit or use a smaller model");
  }
  // Say what would fit.
  std::string hint;
  const int64_t c = largest_fitting_ctx(m, s, limit);
  if (c > 0) hint += "-c " + std::to_string(c) + " fits at these settings";
  PlanSettings q8 = s;
  q8.type_k = q8.type_v = GgmlType::Q8_0;
  try {
    const int64_t cq = largest_fitting_ctx(m, q8, limit);
    if (cq > c) hint += std::string(hint.empty() ? "" : "; ") + "-c " + std::to_string(cq) + " with -ctk q8_0 -ctv q8_0";
  } catch (const Error&) {  // this head size cannot hold q8_0 blocks
  }
  if (p.weights_resident_bytes > 0) {
    PlanSettings mm = s;
    mm.load_mode = gguf::Residency::Mmap;
    const MemoryPlan pm = plan_memory(m, mm);
    hint += std::string(hint.empty() ? "" : "; ") + "--load-mode mmap needs " + format_mib(pm.footprint_bytes) +
            (pm.footprint_bytes <= limit ? " (fits)" : "");
  }
  if (hint.empty()) hint = "nothing fits at this limit, even 16 tokens of context: raise --mem-limit";
  fail(over, ". What would fit: ", hint, "; or add --fit to shrink the context automatically");
}

namespace {
PeakSampler& process_sampler() {
  static PeakSampler s;
  return s;
}
}  // namespace

namespace {
// On a terminal, a load that takes longer than half a second (a multi-GB copy
// into huge pages, a cold page cache) shows it is alive: "loading M ... 1.4 s"
// rewritten in place, erased when the load ends. Nothing on a pipe or file.
class LoadProgress {
 public:
  explicit LoadProgress(std::string name) : name_(std::move(name)) {
    if (isatty(2)) thread_ = std::thread([this] { run(); });
  }
  ~LoadProgress() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lk(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void run() {
    const auto t0 = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lk(mu_);
    if (cv_.wait_for(lk, std::chrono::milliseconds(500), [&] { return done_; })) return;
    do {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "\rloading %s ... %.1f s", name_.c_str(), s);
      std::fflush(stderr);
    } while (!cv_.wait_for(lk, std::chrono::milliseconds(200), [&] { return done_; }));
    std::fprintf(stderr, "\r\033[K");  // erase the line
    std::fflush(stderr);
  }
  std::string name_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};
}  // namespace

ModelFlags::Planned ModelFlags::load_planned(bool logits_all) const {
  if (model.empty()) fail("no model given; pass one with -m FILE.gguf");
  cpu.apply();
  process_sampler();  // peaks from here on
  LoadProgress progress(escape_control(model));
  const uint64_t limit = mem_limit_bytes();
  Planned out;
  PlanSettings s = plan_settings(logits_all);
  {
    // Header, hyper-parameters and shapes only: no weight page is read.
    auto probe = Model::load(model, gguf::Residency::Mmap, false);
    out.plan = plan_within_limit(*probe, s, limit, fit, &out.note);
  }
  out.model = Model::load(model, gguf::Residency::Mmap);
  if (out.plan.settings.load_mode == gguf::Residency::HugePages) out.model->make_resident();
  // Re-plan on the full model (the tokenizer now measured, not estimated),
  // with the settings chosen above.
  std::string again;  // the same choices made again: keep the first note
  out.plan = plan_within_limit(*out.model, out.plan.settings, limit, fit, out.note.empty() ? &out.note : &again);
  return out;
}

std::string version_string() {
  return std::string("edgellm ") + build_describe() + " (build " + std::to_string(build_number()) + ", " +
         build_type() + ", isa " + kernels().isa + ")";
}

std::string params_label(uint64_t n) {
  char buf[32];
  if (n >= 1000000000ull) std::snprintf(buf, sizeof buf, "%.2fB", double(n) / 1e9);
  else if (n >= 1000000ull) std::snprintf(buf, sizeof buf, "%.1fM", double(n) / 1e6);
  else std::snprintf(buf, sizeof buf, "%.1fK", double(n) / 1e3);
  return buf;
}

std::string model_ready_line(const Model& m, Session& s, double load_ms) {
  uint64_t params = 0;
  for (const auto& t : m.file().tensors()) params += uint64_t(t.n_elements());
  char buf[96];
  std::snprintf(buf, sizeof buf, " | %s | load %.0f ms", gguf::residency_name(m.file().residency()), load_ms);
  return "ready: " + escape_control(m.arch().name) + " | " + params_label(params) + " params | " +
         gguf::file_type_label(m.file()) + " | ctx " + std::to_string(s.n_ctx()) + " | KV " +
         format_mib(s.kv_bytes()) + " " + type_name(uint32_t(s.kv().type_k())) + buf;
}

std::string threads_summary(const ThreadPool& pool) {
  std::string s = std::to_string(pool.size());
  if (!pool.pinned()) return s;
  s += " pinned to CPUs ";
  for (int i = 0; i < pool.size(); ++i) s += (i ? "," : "") + std::to_string(pool.cpu_of(i));
  return s;
}

void flush_stdout_or_fail() {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int e = errno;
  if (flushed && !std::ferror(stdout)) return;
  std::clearerr(stdout);
  fail("cannot write to standard output", e ? std::string(": ") + std::strerror(e) : std::string(),
       " (a full disk or a closed pipe?); the output is incomplete");
}

std::string memory_summary() {
  PeakSampler& ps = process_sampler();
  ps.sample();
  char buf[160];
  std::snprintf(buf, sizeof buf, "peak RSS %.1f MiB | peak anon %.1f MiB",
                double(std::max(ps.peak_rss(), peak_rss_bytes())) / 1048576.0, double(ps.peak_anon()) / 1048576.0);
  return buf;
}

std::unique_ptr<Model> ModelFlags::load_model() const {
  if (model.empty()) fail("no model given; pass one with -m FILE.gguf");
  cpu.apply();
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

// llama.cpp's escapes in -p: \n \r \t \' \" \\ and \xHH; any other
// backslash sequence stays as it is.
std::string process_escapes(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      o += s[i];
      continue;
    }
    const char c = s[i + 1];
    const auto hex = [](char h) { return std::isxdigit(static_cast<unsigned char>(h)) != 0; };
    switch (c) {
      case 'n': o += '\n'; ++i; break;
      case 'r': o += '\r'; ++i; break;
      case 't': o += '\t'; ++i; break;
      case '\'': case '"': case '\\': o += c; ++i; break;
      case 'x':
        if (i + 3 < s.size() && hex(s[i + 2]) && hex(s[i + 3])) {
          o += char(std::stoi(s.substr(i + 2, 2), nullptr, 16));
          i += 3;
          break;
        }
        [[fallthrough]];
      default: o += '\\';
    }
  }
  return o;
}

std::vector<int32_t> ModelFlags::prompt_tokens(const Model& m) const {
  const int sources = int(!prompt.empty()) + int(!prompt_file.empty()) + int(tokens_given);
  if (sources > 1) fail("give only one of -p, -f and --tokens");
  if (tokens_given) {
    if (tokens.find_first_not_of(" \t,") == std::string::npos)
      fail("--tokens: the list is empty; give token ids, e.g. --tokens 1,403,407");
    return parse_token_list(tokens, m.hparams().n_vocab);
  }
  std::string text = no_escape ? prompt : process_escapes(prompt);
  if (!prompt_file.empty()) text = read_input_file(prompt_file, "-f");
  if (!m.tokenizer()) fail(m.tokenizer_error());
  std::vector<int32_t> ids = m.tokenizer()->encode(text, !no_bos, parse_special && !no_parse_special);
  if (ids.empty())
    fail(no_bos ? "the prompt is empty and --no-bos leaves nothing to evaluate; give a prompt with -p, -f or --tokens"
                : "the prompt is empty and the model has no BOS token to start from; give a prompt with -p, -f or "
                  "--tokens");
  if (text.empty()) std::fprintf(stderr, "note: no prompt given (-p, -f or --tokens): generating from BOS alone\n");
  return ids;
}

void ContextFlags::add_to(Args& a, const char* default_overflow) {
  // chat's default, turns, works on the conversation (apps/edgellm/chat_turn.h).
  const bool turns = std::string(default_overflow) == "turns";
  a.add({"--ctx-overflow"}, &overflow,
        std::string("when the context fills: ") +
            (turns ? "turns (drop the oldest whole turns after the system prompt and go on), " : "") +
            std::string("stop, shift (keep --keep N, drop the oldest half of the rest, "
                    "re-rotate in place) or window (4 attention sinks + the last --ctx-window W) (default ") +
            default_overflow + ")");
  a.add({"--keep"}, &keep, "shift: tokens at the start never dropped (default 0)", 0, int64_t(1) << 24);
  a.add({"--ctx-window"}, &window, "window: recent tokens kept (default 3/4 of the context)", 0, int64_t(1) << 24);
  a.add({"--session"}, &session,
        "session file: restore the cached tokens and KV from it (the shared prefix is not prefilled again) "
        "and save them back at the end (crash-safe)");
  a.add_flag({"--session-private"}, &session_private,
             "keep the KV cache only in memory (spilled, if ever, to an unlinked temporary file) and zero it "
             "on exit; not with --session");
}

ContextPolicy ContextFlags::policy(const char* default_overflow) const {
  ContextPolicy p;
  p.mode = parse_ctx_overflow(overflow.empty() ? default_overflow : overflow);
  p.keep = keep;
  p.window = window;
  if (session_private && !session.empty()) fail("--session-private keeps nothing on disk: drop --session FILE");
  return p;
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
