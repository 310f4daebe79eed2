// A model described without its file: the shape a Hugging Face config.json
// or a built-in preset gives, enough to plan memory and speed before any
// download (tools/plan_shape.h turns it into the plan's ModelShape).
#pragma once
#include <string>
#include <vector>

#include "model/model.h"

namespace edgellm {

struct ModelDesc {
  std::string name;     // "qwen2.5-0.5b", or the config file's path
  std::string arch;     // general.architecture: llama | qwen2 | qwen3
  std::string family;   // "qwen2.5": the smaller-model alternatives come from the same family
  HParams hp;           // n_vocab .. n_ctx_train (rope and eps do not affect bytes)
  bool tied = false;    // output head shares token_embd (tie_word_embeddings)
  bool llama3_rope = false;  // llama 3.1+ frequency factors: the file carries rope_freqs.weight
  bool longrope = false;     // phi3 LongRoPE: the file carries rope_factors_long / _short.weight
  std::string source;   // where the numbers come from
};

// Built-in shapes of the families people deploy, each from its published
// config.json. nullptr when unknown.
const ModelDesc* find_preset(const std::string& name);
const std::vector<ModelDesc>& presets();
std::string preset_names();  // "qwen2.5-0.5b, ..." for messages

// Reads a Hugging Face config.json (LlamaForCausalLM, Qwen2ForCausalLM,
// Qwen3ForCausalLM). Throws Error naming the file and the missing or bad
// field, or the unsupported architecture.
ModelDesc read_hf_config(const std::string& path);
ModelDesc parse_hf_config(const std::string& text, const std::string& source);

}  // namespace edgellm
