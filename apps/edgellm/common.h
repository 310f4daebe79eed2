// Pieces several subcommands share: model/session flags, reading the prompt
// (-p, -f or --tokens), and the timings line.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "apps/edgellm/args.h"
#include "model/model.h"
#include "runtime/context_policy.h"
#include "runtime/sampler.h"
#include "runtime/session.h"

namespace edgellm::cli {

// -C/--cpu-mask and --cpu-range as in llama.cpp: restrict the process to
// those CPUs before any thread starts (the default thread count and --pin
// then choose among them).
struct CpuFlags {
  std::string mask, range;
  void add_to(Args& a);
  void apply() const;  // no-op when neither was given
};

struct ModelFlags {
  std::string model;
  int64_t n_ctx = 0, n_batch = 512, n_threads = 0;
  int64_t n_ubatch = 0;  // -ub: tokens per forward pass (the buffers); 0: -b
  // The forward pass's size (-ub, else -b) and a step's token budget (-b, at most that).
  int64_t pass_tokens() const { return n_ubatch > 0 ? n_ubatch : n_batch; }
  std::string prompt, prompt_file, tokens;
  bool tokens_given = false;  // --tokens, even with an empty list (refused)
  bool no_bos = false;
  bool parse_special = true;  // as llama-completion: <|im_start|> in a prompt is that token
  bool no_parse_special = false;
  bool no_escape = false;     // -p "a\nb" is two lines unless --no-escape
  bool pin = false;  // --pin
  CpuFlags cpu;      // -C / --cpu-range, applied by load_planned / load_model
  std::string load_mode = "auto";  // --load-mode: gguf::Residency
  std::string cache_type_k = "f16", cache_type_v = "f16";  // -ctk / -ctv
  bool swa_full = false;                                   // --swa-full
  std::string mem_limit;  // --mem-limit SIZE: the footprint the run may hold
  bool fit = false;       // --fit: shrink the context (then the batch) to the limit
  int n_seq = 1;          // KV caches planned (serve --parallel: one per slot)
  // with_memory: -ctk/-ctv, --mem-limit, --fit (run, chat, bench, plan).
  void add_to(Args& a, bool with_prompt, bool with_memory = true);
  SessionConfig session_config() const;
  PlanSettings plan_settings(bool logits_all = false) const;
  GgmlType type_k() const;
  GgmlType type_v() const;
  uint64_t mem_limit_bytes() const;  // 0: no limit
  // The prompt as token ids: --tokens as given, else -p / -f text tokenized
  // (with BOS unless --no-bos; -p's escapes processed unless --no-escape).
  // Fails with a clear message if the model has no usable tokenizer, or if
  // nothing at all would be evaluated; says on stderr when generation starts
  // from BOS alone.
  std::vector<int32_t> prompt_tokens(const Model& m) const;
  std::unique_ptr<Model> load_model() const;  // checks -m was given

  // Footprint-first loading: the header and small tensors are read first
  // (file-backed, no tokenizer), the memory plan is made and checked against
  // --mem-limit (or shrunk to it with --fit) before any weight is read; then
  // the full model loads, copied into huge pages only where the plan says so.
  struct Planned {
    std::unique_ptr<Model> model;
    MemoryPlan plan;
    std::string note;  // what --fit or auto chose, for stderr ("" if nothing)
  };
  Planned load_planned(bool logits_all = false) const;
};

// The plan for these settings, checked against a limit: fails with how much
// it is over and what would fit; with fit, shrinks the context then the
// batch until the footprint fits and says so in *note.
MemoryPlan plan_within_limit(const Model& m, PlanSettings s, uint64_t limit, bool fit, std::string* note);
// The plan table's "KV per token" line: what one more position of context
// costs, and what the sliding layers' rings hold instead.
void print_kv_per_token(const MemoryPlan& p);
// "kv 48.0 MiB | peak RSS 480.1 MiB | peak anon 139.2 MiB" parts of timings lines.
std::string memory_summary();

// Flushes stdout and fails (Error) if anything written to it was lost (a full
// disk, /dev/full, a closed pipe): streaming loops call it per token so a
// generation into a dead stdout stops, and main calls it before exit 0.
void flush_stdout_or_fail();

// 292.8K, 494.0M, 7.24B: parameter counts as people say them.
std::string params_label(uint64_t n);

// The one stderr line a command prints when its model is ready: architecture,
// parameters, file type, context, KV bytes and type, load mode, load time.
std::string model_ready_line(const Model& m, Session& s, double load_ms);

// "2", or "2 pinned to CPUs 5,4" for a pinned pool: the timings lines' thread note.
std::string threads_summary(const ThreadPool& pool);

// llama.cpp's -p escapes: \n \r \t \' \" \\ \xHH (others kept as typed).
std::string process_escapes(const std::string& s);

// Context policy and session persistence (run, chat).
struct ContextFlags {
  std::string overflow;  // --ctx-overflow ("" = the command's default)
  int64_t keep = 0, window = 0;
  std::string session;   // --session FILE
  bool session_private = false;
  void add_to(Args& a, const char* default_overflow);
  ContextPolicy policy(const char* default_overflow) const;
};

struct SamplerFlags {
  SamplerParams p;
  int64_t top_k = 40, repeat_last_n = 64, seed = -1;  // seed -1: from the clock
  void add_to(Args& a);
  SamplerParams params() const;
};
double peak_rss_mib();
GgmlType parse_kv_type(const std::string& s, const char* flag);
// Parses "1,2,3" (spaces allowed) into ids; checks each is within [0, n_vocab).
std::vector<int32_t> parse_token_list(const std::string& s, int64_t n_vocab);

int cmd_run(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_eval(int argc, char** argv);
int cmd_synth(int argc, char** argv);
int cmd_template(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_chat(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_probe(int argc, char** argv);
int cmd_perplexity(int argc, char** argv);
int cmd_plan(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_serve(int argc, char** argv);

}  // namespace edgellm::cli
