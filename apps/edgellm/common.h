// Pieces several subcommands share: model/session flags, reading the prompt
// (-p, -f or --tokens), and the timings line.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "apps/edgellm/args.h"
#include "model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"

namespace edgellm::cli {

struct ModelFlags {
  std::string model;
  int64_t n_ctx = 0, n_batch = 512, n_threads = 0;
  std::string prompt, prompt_file, tokens;
  bool no_bos = false;
  bool parse_special = false;
  bool pin = false;  // --pin
  std::string load_mode = "auto";  // --load-mode: gguf::Residency  // control-token texts in -p/-f become those tokens
  void add_to(Args& a, bool with_prompt);
  SessionConfig session_config() const;
  // The prompt as token ids: --tokens as given, else -p / -f text tokenized
  // (with BOS unless --no-bos). Fails with a clear message if the model has
  // no usable tokenizer.
  std::vector<int32_t> prompt_tokens(const Model& m) const;
  std::unique_ptr<Model> load_model() const;  // checks -m was given
};

struct SamplerFlags {
  SamplerParams p;
  int64_t top_k = 40, repeat_last_n = 64, seed = -1;  // seed -1: from the clock
  void add_to(Args& a);
  SamplerParams params() const;
};
double peak_rss_mib();
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

}  // namespace edgellm::cli
