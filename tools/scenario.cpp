// The measuring half of `edgellm bench --scenario` (tools/scenario.h); the
// JSON and table writers are in scenario_record.cpp.
#include "tools/scenario.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <memory>

#include "base/build_info.h"
#include "base/cpu_affinity.h"
#include "base/error.h"
#include "base/mem_stats.h"
#include "base/sha256.h"
#include "base/text_escape.h"
#include "format/file_type.h"
#include "kernels/dispatch.h"
#include "model/model.h"
#include "model/model_desc.h"
#include "runtime/chat_prompt.h"
#include "runtime/memory_plan.h"
#include "runtime/scheduler.h"
#include "runtime/session.h"
#include "tokenizer/tokenizer.h"
#include "tools/device_plan.h"
#include "tools/scenario_prompts.h"
#include "tensor/types.h"
#include "template/chat.h"

namespace edgellm {

namespace {

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}


// Text for a JSON string: bytes that are not UTF-8 (a byte token cut in
// half, a random-weight model's output) become U+FFFD.
std::string valid_utf8(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

// The prefix of s at most n bytes long that does not cut a UTF-8 sequence.
std::string utf8_prefix(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  size_t i = 0;
  while (i < s.size()) {
    const size_t len = std::max<size_t>(utf8_sequence_length(s, i), 1);
    if (i + len > n) break;
    i += len;
  }
  return s.substr(0, i);
}

// Touches one byte of every page of every tensor, so that load time includes
// what an app pays before its first token: open, map and first touch.
void touch_weights(const gguf::File& f) {
  volatile uint8_t sink = 0;
  for (const gguf::TensorInfo& t : f.tensors())
    for (uint64_t off = 0; off < t.nbytes; off += 4096) sink = sink + t.data[off];
  (void)sink;
}

// How a conversation becomes ids: the model's chat template when the file has
// one, else plain text (stories260K and other base models): each user message
// a new paragraph, each reply straight after the text it continues; BOS first
// as the vocabulary asks.
class Conversation {
 public:
  Conversation(const Tokenizer& tok, std::string template_text) : tok_(tok), template_(std::move(template_text)) {}

  void add(const std::string& role, const std::string& text) { messages_.push_back({role, text}); }
  void pop() { messages_.pop_back(); }
  void set_last(const std::string& text) { messages_.back().second = text; }

  std::vector<int32_t> render() const {
    if (template_.empty()) {
      // A reply continues the text it was generated after; the next message
      // starts a new paragraph.
      std::string text;
      for (const auto& [role, content] : messages_)
        text += (text.empty() || role == "assistant" ? "" : "\n\n") + content;
      return tok_.encode(text, true);
    }
    std::vector<tmpl::Json> msgs;
    for (const auto& [role, content] : messages_)
      msgs.push_back(tmpl::Json::object({{"role", tmpl::Json::string(role)}, {"content", tmpl::Json::string(content)}}));
    return build_chat_prompt(tok_, template_, tmpl::Json::array(std::move(msgs)), true).tokens;
  }

 private:
  const Tokenizer& tok_;
  std::string template_;
  std::vector<std::pair<std::string, std::string>> messages_;
};

// Where sentences end in `text`, so a message can be shortened whole
// sentences at a time: offsets just past ". ", "? ", "! " and newlines.
std::vector<size_t> sentence_ends(const std::string& text) {
  std::vector<size_t> ends;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    const bool stop = text[i] == '.' || text[i] == '?' || text[i] == '!';
    if ((stop && (text[i + 1] == ' ' || text[i + 1] == '\n')) || (text[i] == '\n' && text[i + 1] != '\n'))
      ends.push_back(i + 1);
  }
  ends.push_back(text.size());
  return ends;
}

// Shortens the conversation's last message (whole sentences from its end)
// until its prompt plus `n_gen` fits `room` tokens. Returns the prompt's ids
// and whether anything was cut; nullopt if not even one sentence fits.
std::optional<std::pair<std::vector<int32_t>, bool>> fit_last_message(Conversation& c, const std::string& text,
                                                                       int64_t n_gen, int64_t room) {
  c.set_last(text);
  std::vector<int32_t> ids = c.render();
  if (int64_t(ids.size()) + n_gen <= room) return std::make_pair(std::move(ids), false);
  const std::vector<size_t> ends = sentence_ends(text);
  // Largest k such that the first k sentences fit (binary search: a
  // document is a few dozen sentences, each try one render).
  size_t lo = 0, hi = ends.size() - 1;  // sentences [0, lo] fit is unknown; hi+1 sentences do not
  std::optional<std::vector<int32_t>> best;
  while (lo <= hi) {
    const size_t mid = (lo + hi) / 2;
    c.set_last(text.substr(0, ends[mid]));
    std::vector<int32_t> try_ids = c.render();
    if (int64_t(try_ids.size()) + n_gen <= room) {
      best = std::move(try_ids);
      lo = mid + 1;
    } else {
      if (mid == 0) break;
      hi = mid - 1;
    }
  }
  if (!best) return std::nullopt;
  c.set_last(text.substr(0, ends[lo - 1]));
  return std::make_pair(std::move(*best), true);
}

// Greedy choice that never ends generation (the end-of-generation ids are
// banned): every run generates its whole token budget, so runs compare the
// same amount of work.
class Greedy {
 public:
  explicit Greedy(const Tokenizer& tok, int64_t n_vocab) {
    for (int32_t id : tok.vocab().eog_ids)
      if (id >= 0 && id < n_vocab) banned_.push_back(id);
  }
  const std::vector<int32_t>& banned() const { return banned_; }

 private:
  std::vector<int32_t> banned_;
};

// Called after every decode step with the step's time; the sustained loop
// samples from here.
using StepHook = std::function<void(double step_ms)>;

// One scenario on one session: its turns, timed.
class TurnRunner {
 public:
  TurnRunner(Session& s, const Greedy& greedy, Clock::time_point t0, StepHook hook)
      : s_(s), greedy_(greedy), t0_(t0), hook_(std::move(hook)) {}

  void sample_memory() {
    const MemSample m = mem_now();
    samples.push_back({ms_between(t0_, Clock::now()), m.rss, m.anon});
    record_memory_peak();
  }

  // Prefills what the cache lacks of `prompt`, then generates n_gen tokens
  // (greedy, end-of-generation ids banned) through the generation engine;
  // a decode step's time is the time between two tokens.
  TurnStats run(const std::vector<int32_t>& prompt, int64_t n_gen, Clock::time_point t_request) {
    TurnStats st;
    GenerationRequest r;
    r.prompt = prompt;
    r.reuse_prefix = true;
    r.sampling.temp = 0;
    for (int32_t id : greedy_.banned()) r.sampling.logit_bias.push_back({id, -INFINITY});
    r.max_tokens = n_gen;
    r.evaluate_last = false;
    const auto t_prefill = Clock::now();
    Clock::time_point t_first, t_last;
    double decode_ms = 0;
    bool first = true;
    r.on_token = [&](int32_t tok) {
      const auto now = Clock::now();
      ids.push_back(tok);
      if (first) {
        t_first = now;
        first = false;
      } else {
        const double ms = ms_between(t_last, now);
        decode_ms += ms;
        step_ms.push_back(ms);
        if (step_ms.size() % kWindowTokens == 0) sample_memory();
        if (hook_) hook_(ms);
      }
      t_last = now;
      return true;
    };
    Scheduler one(s_.executor());
    const GenerationResult res = one.run(s_, std::move(r));
    st.n_cached = res.n_cached;
    st.n_prompt = res.n_evaluated;
    st.ttft_ms = ms_between(t_request, t_first);
    st.prefill_tps = double(st.n_prompt) / std::max(ms_between(t_prefill, t_first) / 1e3, 1e-9);
    st.n_gen = n_gen;
    st.decode_tps = n_gen > 1 ? double(n_gen - 1) / std::max(decode_ms / 1e3, 1e-9) : 0;
    st.context_tokens = s_.n_past();
    sample_memory();
    turn_end_ms.push_back(samples.back().t_ms);
    return st;
  }

  std::vector<int32_t> ids;       // generated, all turns
  std::vector<double> step_ms;    // each decode step, all turns
  std::vector<MemPoint> samples;
  std::vector<double> turn_end_ms;  // t_ms of the sample taken as each turn ended

 private:
  Session& s_;
  const Greedy& greedy_;
  Clock::time_point t0_;
  StepHook hook_;
};

std::string read_prompt_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("--prompt-file ", path, ": cannot open it");
  std::ostringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  if (text.empty()) fail("--prompt-file ", path, ": the file is empty; give a text to use as the first message");
  if (text.size() > (size_t(1) << 20))
    fail("--prompt-file ", path, ": ", text.size(), " bytes; a prompt of at most 1 MiB is expected");
  return text;
}

struct Setup {
  ScenarioSpec spec;
  SessionConfig cfg;
  bool limited = false;  // context below the scenario's own
  int64_t n_gen = 0;     // per turn
};

}  // namespace

namespace {

// Plans each scenario's session: its own context (or -c), capped at the
// model's; a context below the scenario's also shortens the replies to a
// quarter of it, so a small model (stories260K: 512) still runs every turn
// it can.
std::vector<Setup> plan_setups(const ScenarioParams& p, const Model& m, const std::string& prompt_text) {
  std::vector<Setup> out;
  for (const std::string& name : p.scenarios) {
    Setup s;
    s.spec = builtin_scenario(name);
    if (!prompt_text.empty()) s.spec.turns[0] = prompt_text;
    const int64_t want = p.n_ctx > 0 ? p.n_ctx : s.spec.default_ctx;
    s.cfg.n_ctx = std::min<int64_t>(want, m.hparams().n_ctx_train);
    s.limited = s.cfg.n_ctx < s.spec.default_ctx;
    s.n_gen = s.limited ? std::min<int64_t>(s.spec.n_gen_per_turn, s.cfg.n_ctx / 4) : s.spec.n_gen_per_turn;
    s.cfg.n_batch = std::min<int64_t>(p.n_batch, s.cfg.n_ctx);
    s.cfg.n_threads = p.n_threads;
    s.cfg.pin_threads = p.pin;
    s.cfg.type_k = p.type_k;
    s.cfg.type_v = p.type_v;
    s.cfg.swa_full = p.swa_full;
    if (p.mem_limit > 0) {
      const MemoryPlan plan = plan_memory(m, s.cfg.plan_settings(m));
      if (plan.footprint_bytes > p.mem_limit)
        fail("bench: scenario ", name, " needs a footprint of ", format_mib(plan.footprint_bytes), " (context ",
             s.cfg.n_ctx, "), over the --mem-limit of ", format_mib(p.mem_limit), " (see edgellm plan -m ",
             p.model, ")");
    }
    out.push_back(std::move(s));
  }
  return out;
}

ScenarioRecord run_one(const Setup& su, int run, Session& s, const Tokenizer& tok, const std::string& template_text,
                       const BenchRun& br, PeakSampler& mem, const StepHook& hook) {
  ScenarioRecord r;
  r.scenario = su.spec.name;
  r.run = run;
  r.n_ctx = s.n_ctx();
  r.kv_bytes = s.kv_bytes();
  r.context_limited = su.limited;
  s.truncate(0);
  mem.reset();
  const Greedy greedy(tok, s.model().hparams().n_vocab);
  const auto t0 = Clock::now();
  TurnRunner runner(s, greedy, t0, hook);
  runner.sample_memory();
  Conversation conv(tok, template_text);
  std::string first_reply;
  for (size_t t = 0; t < su.spec.turns.size(); ++t) {
    const auto t_request = Clock::now();
    conv.add("user", su.spec.turns[t]);
    // The first turn of several gets at most half the context, so later
    // turns have room; the last turn may use all of it.
    const bool several = su.spec.turns.size() > 1;
    const int64_t room = several && t == 0 ? r.n_ctx / 2 : r.n_ctx;
    auto fitted = fit_last_message(conv, su.spec.turns[t], su.n_gen, room);
    if (!fitted) {
      if (t == 0)
        fail("bench: scenario ", su.spec.name, " cannot fit even one sentence of its prompt and ", su.n_gen,
             " generated tokens in a context of ", r.n_ctx, " tokens (-c)");
      r.context_limited = true;  // no room for this turn: the conversation ends here
      conv.pop();
      break;
    }
    if (fitted->second) r.context_limited = true;
    const size_t before = runner.ids.size();
    TurnStats st = runner.run(fitted->first, su.n_gen, t_request);
    st.turn = int(t) + 1;
    r.turns.push_back(st);
    const std::vector<int32_t> reply(runner.ids.begin() + std::ptrdiff_t(before), runner.ids.end());
    const std::string text = detokenize(tok, reply);
    if (t == 0) first_reply = text;
    conv.add("assistant", text);
  }
  // Totals over turns.
  double prefill_s = 0, decode_s = 0;
  int64_t decode_steps = 0;
  for (const TurnStats& st : r.turns) {
    r.n_prompt += st.n_prompt;
    r.n_gen += st.n_gen;
    prefill_s += st.prefill_tps > 0 ? double(st.n_prompt) / st.prefill_tps : 0;
    decode_steps += std::max<int64_t>(st.n_gen - 1, 0);
  }
  for (double ms : runner.step_ms) decode_s += ms / 1e3;
  r.n_turns = int64_t(r.turns.size());
  r.context_tokens = r.turns.back().context_tokens;
  r.ttft_ms = r.turns.front().ttft_ms;
  r.prefill_tps = prefill_s > 0 ? double(r.n_prompt) / prefill_s : 0;
  r.decode_tps = decode_s > 0 ? double(decode_steps) / decode_s : 0;
  for (size_t w = 0; w + kWindowTokens <= runner.step_ms.size(); w += kWindowTokens) {
    double ms = 0;
    for (size_t i = w; i < w + kWindowTokens; ++i) ms += runner.step_ms[i];
    r.window_tps.push_back(kWindowTokens / std::max(ms / 1e3, 1e-9));
  }
  // The speed of light here: the measured read bandwidth over the bytes a
  // step reads, weights plus the K and V rows of the positions so far
  // (averaged over the steps; per position, kv_bytes / n_ctx).
  if (br.probe && br.probe->read_gbs_all > 0 && decode_steps > 0) {
    const double kv_row = double(r.kv_bytes) / double(r.n_ctx);
    double kv_mean = 0;
    int64_t n = 0;
    for (const TurnStats& st : r.turns)
      for (int64_t i = 1; i < st.n_gen; ++i, ++n)
        kv_mean += double(st.context_tokens - st.n_gen + i) * kv_row;  // positions cached at that step
    kv_mean /= double(std::max<int64_t>(n, 1));
    r.ceiling_tps = br.probe->read_gbs_all * 1e9 / (double(br.weight_bytes_per_token) + kv_mean);
    r.ceiling_share = r.decode_tps / *r.ceiling_tps;
  }
  record_memory_peak();
  r.peak_rss = mem.peak_rss();
  r.peak_anon = mem.peak_anon();
  r.rss_samples = runner.samples;
  // RSS swing after the first turn: what a long conversation adds once the
  // weights are in and the first answer is out (0 when that was all).
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const MemPoint& m : r.rss_samples)
    if (m.t_ms >= runner.turn_end_ms.front()) lo = std::min(lo, m.rss), hi = std::max(hi, m.rss);
  r.rss_swing = hi >= lo ? hi - lo : 0;
  Sha256 h;
  for (int32_t id : runner.ids) {
    const uint8_t le[4] = {uint8_t(id), uint8_t(id >> 8), uint8_t(id >> 16), uint8_t(uint32_t(id) >> 24)};
    h.update(le, 4);
  }
  r.output_sha256 = h.hex();
  r.output_preview = valid_utf8(utf8_prefix(first_reply, 120));
  return r;
}

SustainedSample sustained_sample(double t_s, std::optional<double> tps, int64_t tokens) {
  SustainedSample x;
  x.t_s = t_s;
  x.decode_tps = tps;
  x.tokens = tokens;
  const MemSample m = mem_now();
  x.rss = m.rss;
  x.anon = m.anon;
  x.thermal = read_thermal();
  x.freq = read_cpu_freq();
  return x;
}

// The chat scenario back to back for `minutes`, a sample every interval:
// decode speed over the interval (decode steps only, as decode_tps), memory,
// temperatures and clocks, so "fast for how long" is a number.
SustainedRun run_sustained(const ScenarioParams& p, const Setup& chat, Session& s, const Tokenizer& tok,
                           const std::string& template_text, const BenchRun& br, PeakSampler& mem) {
  SustainedRun sr;
  sr.minutes = p.sustained_minutes;
  sr.interval_s = p.sustained_interval_s;
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(sr.minutes * 60));
  const auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(sr.interval_s));
  auto next = t0 + interval;
  int64_t tokens = 0;
  double decode_ms = 0;
  auto take = [&](bool first) {
    const double t_s = ms_between(t0, Clock::now()) / 1e3;
    std::optional<double> tps;
    if (!first && decode_ms > 0) tps = double(tokens) / (decode_ms / 1e3);
    sr.samples.push_back(sustained_sample(t_s, tps, tokens));
    tokens = 0;
    decode_ms = 0;
  };
  take(true);
  const StepHook hook = [&](double ms) {
    ++tokens;
    decode_ms += ms;
    if (Clock::now() >= next) {
      take(false);
      while (next <= Clock::now()) next += interval;
    }
  };
  while (Clock::now() < deadline) {
    run_one(chat, sr.chat_runs, s, tok, template_text, br, mem, hook);
    ++sr.chat_runs;
  }
  if (tokens > 0) take(false);
  for (const SustainedSample& x : sr.samples) sr.thermal_available = sr.thermal_available || x.thermal.available;
  sr.note = sr.thermal_available ? sr.samples.front().thermal.note
                                 : sr.samples.front().thermal.note + "; temperatures are null, not guessed";
  return sr;
}

}  // namespace

BenchRun run_scenarios(const ScenarioParams& p_in,
                       const std::function<void(const BenchRun&, const ScenarioRecord&)>& on_record) {
  ScenarioParams p = p_in;
  if (p.scenarios.empty() && p.sustained_minutes <= 0) fail("bench: --scenario NAME or --sustained MINUTES is needed");
  if (p.runs < 1) fail("bench: --runs must be at least 1");
  if (p.n_threads <= 0) p.n_threads = default_thread_count();
  if (p.pin && p.n_threads > allowed_cpu_count())
    fail("--pin: ", p.n_threads, " threads but this process may run on only ", allowed_cpu_count(), " CPUs");
  if (p.sustained_minutes > 0 && p.sustained_interval_s <= 0) fail("bench: the sustained interval must be positive");
  const std::string prompt_text = p.prompt_file.empty() ? "" : read_prompt_file(p.prompt_file);
  if (!p.chat_template.empty() && !tmpl::builtin_chat_template(p.chat_template)) {
    std::string names;
    for (const std::string& n : tmpl::builtin_chat_template_names()) names += (names.empty() ? "" : ", ") + n;
    fail("--chat-template: no built-in template '", p.chat_template, "' (available: ", names, ")");
  }

  // Everything that can refuse, before anything is measured.
  std::vector<Setup> setups;
  Setup sustained_setup;
  {
    auto header = Model::load(p.model, gguf::Residency::Mmap, false);
    setups = plan_setups(p, *header, prompt_text);
    if (p.sustained_minutes > 0) {
      ScenarioParams q = p;
      q.scenarios = {"chat"};
      sustained_setup = plan_setups(q, *header, prompt_text).front();
    }
  }

  BenchRun br;
  br.created = utc_now_rfc3339();
  br.version = build_describe();
  br.build_commit = build_commit();
  br.build_number = build_number();
  br.build_type = build_type();
  br.cpu_model = cpu_model_name();
  br.kernel = kernel_release();
  br.machine = machine_name();
  br.cores = allowed_cpu_count();
  br.isa = kernels().isa;
  br.thermal = read_thermal();
  br.freq = read_cpu_freq();
  br.threads = p.n_threads;
  br.runs = p.runs;
  br.type_k = type_name(uint32_t(p.type_k));
  br.type_v = type_name(uint32_t(p.type_v));
  br.prompt_file = p.prompt_file;
  br.n_batch = p.n_batch;
  br.model_path = p.model;
  // Hashing reads the whole file, so every load below starts from a warm
  // page cache: load_ms is open + map + first touch, not the disk.
  br.model_sha256 = sha256_file_hex(p.model);
  if (p.probe) br.probe = probe_host(p.n_threads, 256);

  PeakSampler mem;
  const auto t_load = Clock::now();
  auto m = Model::load(p.model, p.residency);
  touch_weights(m->file());
  br.load_ms = ms_between(t_load, Clock::now());
  const Tokenizer* tok = m->tokenizer();
  if (!tok)
    fail("bench: --scenario needs the model's tokenizer to render its prompts, and ", p.model, " has none we can use (",
         m->tokenizer_error(), ")");
  std::string template_text;
  if (const gguf::Value* t = m->file().find("tokenizer.chat_template")) template_text = t->as_string("tokenizer.chat_template");
  if (!p.chat_template.empty()) template_text = tmpl::builtin_chat_template(p.chat_template);
  br.arch = std::string(m->arch().name);
  br.model_type = model_desc(*m);
  br.quant = gguf::file_type_label(m->file());
  br.params = m->n_params();
  br.file_bytes = m->file().file_size();
  br.n_ctx_train = m->hparams().n_ctx_train;
  br.weight_bytes_per_token = weight_bytes_read_per_token(*m);
  br.load_mode = gguf::residency_name(m->file().residency());
  br.chat_template = !p.chat_template.empty() ? "built-in " + p.chat_template
                     : template_text.empty()   ? "none: plain text, each message a new paragraph"
                                               : "gguf";

  for (const Setup& su : setups) {
    Session s(*m, su.cfg);
    for (int run = 0; run < p.runs; ++run) {
      br.records.push_back(run_one(su, run, s, *tok, template_text, br, mem, nullptr));
      if (on_record) on_record(br, br.records.back());
    }
  }
  if (p.sustained_minutes > 0) {
    Session s(*m, sustained_setup.cfg);
    br.sustained = run_sustained(p, sustained_setup, s, *tok, template_text, br, mem);
  }
  return br;
}

}  // namespace edgellm
