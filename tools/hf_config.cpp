// Hugging Face config.json -> ModelDesc: the fields convert_hf_to_gguf.py
// maps to the GGUF hyper-parameters our loader reads.
#include <cmath>

#include "base/error.h"
#include "base/input_file.h"
#include "template/json.h"
#include "tools/model_desc.h"

namespace edgellm {

namespace {

// architectures[0] (what transformers instantiates) or model_type -> our
// architecture name; SmolLM2 and the other Llama-shaped models are LlamaForCausalLM.
const char* arch_of(const std::string& hf) {
  if (hf == "LlamaForCausalLM" || hf == "llama") return "llama";
  if (hf == "Qwen2ForCausalLM" || hf == "qwen2") return "qwen2";
  if (hf == "Qwen3ForCausalLM" || hf == "qwen3") return "qwen3";
  if (hf == "SmolLM3ForCausalLM" || hf == "smollm3") return "smollm3";
  if (hf == "Gemma3ForCausalLM" || hf == "gemma3_text") return "gemma3";
  if (hf == "Gemma2ForCausalLM" || hf == "gemma2") return "gemma2";
  if (hf == "Phi3ForCausalLM" || hf == "phi3") return "phi3";  // Phi-3, 3.5, Phi-4-mini
  return nullptr;
}

}  // namespace

ModelDesc parse_hf_config(const std::string& text, const std::string& source) {
  const tmpl::Json j = tmpl::Json::parse(text, source);
  if (!j.is_object()) fail(source, ": a Hugging Face config.json is a JSON object");
  std::string hf_arch;
  if (const tmpl::Json* a = j.find("architectures"); a && a->is_array() && !a->items().empty() &&
                                                      a->items()[0].is_string())
    hf_arch = a->items()[0].as_string();
  else if (const tmpl::Json* t = j.find("model_type"); t && t->is_string())
    hf_arch = t->as_string();
  else
    fail(source, ": has neither \"architectures\" nor \"model_type\": is it a Hugging Face config.json?");
  const char* arch = arch_of(hf_arch);
  if (!arch && hf_arch.rfind("Gemma4", 0) == 0)
    fail(source, ": Gemma 4 cannot be planned from its config.json yet (its per-layer head sizes, shared KV "
                 "layers and per-layer embeddings are not read from it): plan the GGUF file instead "
                 "(edgellm plan -m FILE.gguf)");
  if (!arch)
    fail(source, ": architecture '", hf_arch,
         "' is not supported (supported: LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, "
         "SmolLM3ForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM, Phi3ForCausalLM)");

  auto integer = [&](const char* key, int64_t def, bool required) -> int64_t {
    const tmpl::Json* v = j.find(key);
    if (!v || v->is_null()) {
      if (required) fail(source, ": field \"", key, "\" is missing");
      return def;
    }
    const double d = v->is_number() ? v->as_number() : -1;
    if (!(d >= 1 && d <= double(int64_t(1) << 40) && std::floor(d) == d))
      fail(source, ": field \"", key, "\" must be a positive integer");
    return int64_t(d);
  };
  ModelDesc d;
  d.name = source;
  d.arch = arch;
  d.source = source;
  HParams& hp = d.hp;
  hp.n_embd = integer("hidden_size", 0, true);
  hp.n_layer = integer("num_hidden_layers", 0, true);
  hp.n_head = integer("num_attention_heads", 0, true);
  hp.n_head_kv = integer("num_key_value_heads", hp.n_head, false);
  hp.n_ff = integer("intermediate_size", 0, true);
  hp.n_vocab = integer("vocab_size", 0, true);
  hp.n_ctx_train = integer("max_position_embeddings", 0, true);
  if (hp.n_head % hp.n_head_kv != 0)
    fail(source, ": num_attention_heads ", hp.n_head, " is not a multiple of num_key_value_heads ", hp.n_head_kv);
  if (!j.find("head_dim") && hp.n_embd % hp.n_head != 0)
    fail(source, ": hidden_size ", hp.n_embd, " is not a multiple of num_attention_heads ", hp.n_head,
         " and there is no \"head_dim\"");
  hp.head_dim = hp.head_dim_v = hp.n_rot = integer("head_dim", hp.n_embd / hp.n_head, false);
  hp.n_swa = integer("sliding_window", 0, false);  // gemma3's local layers
  // transformers' Llama/Qwen configs default to untied heads.
  if (const tmpl::Json* t = j.find("tie_word_embeddings"); t && t->is_bool()) d.tied = t->as_bool();
  if (const tmpl::Json* r = j.find("rope_scaling"); r && r->is_object()) {
    if (const tmpl::Json* rt = r->find("rope_type"); rt && rt->is_string() && rt->as_string() == "llama3")
      d.llama3_rope = std::string(arch) == "llama";
    // LongRoPE (phi3): the converter writes the factor tensors when there is a long_factor.
    if (const tmpl::Json* lf = r->find("long_factor"); lf && lf->is_array() && !lf->items().empty())
      d.longrope = std::string(arch) == "phi3";
  }
  // Partial rotary (Phi-4-mini 0.75): the converter's int(f * hidden_size) // num_attention_heads.
  if (const tmpl::Json* f = j.find("partial_rotary_factor"); f && f->is_number()) {
    const double rf = f->as_number();
    if (!(rf > 0 && rf <= 1)) fail(source, ": field \"partial_rotary_factor\" must be in (0, 1]");
    hp.n_rot = int64_t(rf * double(hp.n_embd)) / hp.n_head;
  }
  hp.n_ctx_orig = integer("original_max_position_embeddings", hp.n_ctx_train, false);
  return d;
}

ModelDesc read_hf_config(const std::string& path) {
  return parse_hf_config(read_input_file(path, "--config", false, size_t(16) << 20), path);
}

}  // namespace edgellm
