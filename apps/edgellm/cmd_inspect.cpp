// edgellm inspect: everything a user needs to know about a GGUF before running
// it: metadata, tensors (name, type, shape, bytes), totals, and what the
// architecture resolved to (or why it does not load).
#include <cmath>
#include <cstdio>
#include <map>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "base/json.h"
#include "base/text_escape.h"
#include "format/file_type.h"
#include "tokenizer/tokenizer.h"

namespace edgellm::cli {

namespace {

std::string value_json(const gguf::Value& v) {
  using gguf::ValueType;
  switch (v.type) {
    case ValueType::STRING: return json_quote(v.str);
    case ValueType::BOOL: return v.u ? "true" : "false";
    case ValueType::FLOAT32: case ValueType::FLOAT64: {
      if (!std::isfinite(v.f)) return "null";
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.9g", v.f);
      return buf;
    }
    case ValueType::ARRAY: {
      std::string o = "[";
      for (size_t i = 0; i < v.arr.size(); ++i) {
        if (i) o += ',';
        o += value_json(v.arr[i]);
      }
      return o + "]";
    }
    default: return v.to_display();
  }
}

void print_hparams_text(const Model& m) {
  const HParams& h = m.hparams();
  const std::string nope =
      m.arch().no_rope_every > 0 ? ", no RoPE every " + std::to_string(m.arch().no_rope_every) + "th layer" : "";
  std::printf("architecture: %s (rope %s%s%s%s)\n", escape_control(m.arch().name).c_str(),
              m.arch().rope == RopeStyle::Neox ? "neox" : "adjacent-pairs", m.arch().qkv_bias ? ", qkv bias" : "",
              m.arch().qk_norm ? ", q/k norm" : "", nope.c_str());
  std::printf("  vocab %lld | embd %lld | layers %lld | heads %lld (kv %lld, head_dim %lld) | ff %lld | ctx_train %lld\n",
              (long long)h.n_vocab, (long long)h.n_embd, (long long)h.n_layer, (long long)h.n_head,
              (long long)h.n_head_kv, (long long)h.head_dim, (long long)h.n_ff, (long long)h.n_ctx_train);
  // LongRoPE (phi3): long factors above the original context, and the attn_factor.
  const std::string longrope = m.longrope_factors() ? ", LongRoPE factors (long above ctx " +
                                                          std::to_string(h.n_ctx_orig) + ")" : "";
  std::printf("  rope base %g, dims %lld, freq scale %g%s%s, attn factor %g | rms eps %g | output %s\n", h.rope_base,
              (long long)h.n_rot, h.rope_freq_scale, m.rope_freqs().empty() ? "" : ", rope_freqs factors",
              longrope.c_str(), h.rope_attn_factor, h.rms_eps, m.tied_output() ? "tied to token_embd" : "separate");
  std::printf("  tokenizer: %s\n", escape_control(m.tokenizer() ? m.tokenizer()->vocab().model : m.tokenizer_error()).c_str());
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  Args args("inspect", "Show a GGUF file's summary, metadata, tensor table and resolved architecture.");
  std::string path, model_flag;
  bool json = false, no_tensors = false;
  int64_t max_items = 8;
  args.positional("MODEL", &path, "the GGUF file (or -m MODEL)");
  args.add({"-m", "--model"}, &model_flag, "the GGUF file (instead of the positional MODEL)");
  args.add_flag({"--json"}, &json, "machine-readable output");
  args.add_flag({"--no-tensors"}, &no_tensors, "leave out the tensor table");
  args.add({"--array-items"}, &max_items, "array elements shown per metadata key (text output)", 0, 1 << 20);
  if (!args.parse(argc, argv)) return 0;
  if (!path.empty() && !model_flag.empty() && path != model_flag)
    fail("inspect: give the file once (as -m MODEL or as MODEL, not both)");
  if (path.empty()) path = model_flag;
  if (path.empty()) fail("inspect: no file given (usage: edgellm inspect MODEL.gguf, or -m MODEL.gguf)");

  auto file = gguf::File::open(path);
  uint64_t total_bytes = 0, total_elems = 0;
  std::map<std::string, uint64_t> bytes_by_type;
  for (const auto& t : file->tensors()) {
    total_bytes += t.nbytes;
    total_elems += uint64_t(t.n_elements());
    bytes_by_type[type_name(uint32_t(t.type))] += t.nbytes;
  }
  // Resolve the architecture only for files that carry weights.
  std::unique_ptr<Model> model;
  std::string load_error;
  if (!file->tensors().empty()) {
    try {
      model = Model::load(path);
    } catch (const Error& e) {
      load_error = e.what();
    }
  }

  if (json) {
    std::printf("{\"file\":%s,\"version\":%u,\"alignment\":%zu,\"data_offset\":%zu,\"metadata\":{", json_quote(path).c_str(),
                file->version(), file->alignment(), file->data_offset());
    bool first = true;
    for (const auto& [k, v] : file->metadata()) {
      std::printf("%s%s:%s", first ? "" : ",", json_quote(k).c_str(), value_json(v).c_str());
      first = false;
    }
    std::printf("},\"file_type\":%s,\"tensors\":[", json_quote(gguf::file_type_label(*file)).c_str());
    first = true;
    for (const auto& t : file->tensors()) {
      if (no_tensors) break;
      std::printf("%s{\"name\":%s,\"type\":\"%s\",\"shape\":[", first ? "" : ",", json_quote(t.name).c_str(),
                  type_name(uint32_t(t.type)).c_str());
      for (uint32_t d = 0; d < t.n_dims; ++d) std::printf("%s%lld", d ? "," : "", (long long)t.ne[d]);
      std::printf("],\"offset\":%llu,\"bytes\":%llu}", (unsigned long long)t.offset, (unsigned long long)t.nbytes);
      first = false;
    }
    std::printf("],\"total_bytes\":%llu,\"total_params\":%llu", (unsigned long long)total_bytes,
                (unsigned long long)total_elems);
    if (model) {
      const HParams& h = model->hparams();
      std::printf(",\"arch\":{\"name\":%s,\"n_vocab\":%lld,\"n_embd\":%lld,\"n_layer\":%lld,\"n_head\":%lld,"
                  "\"n_head_kv\":%lld,\"head_dim\":%lld,\"n_ff\":%lld,\"n_ctx_train\":%lld,\"rope\":\"%s\",\"tied_output\":%s}",
                  json_quote(model->arch().name).c_str(), (long long)h.n_vocab, (long long)h.n_embd,
                  (long long)h.n_layer, (long long)h.n_head, (long long)h.n_head_kv, (long long)h.head_dim,
                  (long long)h.n_ff, (long long)h.n_ctx_train,
                  model->arch().rope == RopeStyle::Neox ? "neox" : "adjacent", model->tied_output() ? "true" : "false");
    }
    if (!load_error.empty()) std::printf(",\"load_error\":%s", json_quote(load_error).c_str());
    std::printf("}\n");
  } else {
    std::printf("%s: GGUF v%u, %zu metadata keys, %zu tensors, alignment %zu, data at byte %zu\n",
                escape_control(path).c_str(), file->version(), file->metadata().size(), file->tensors().size(), file->alignment(),
                file->data_offset());
    // The summary first: what most people run inspect for.
    std::printf("type: %s | %s parameters | %.2f MiB of tensors\n", gguf::file_type_label(*file).c_str(),
                params_label(total_elems).c_str(), double(total_bytes) / (1 << 20));
    if (model) print_hparams_text(*model);
    std::printf("\nmetadata:\n");
    for (const auto& [k, v] : file->metadata())
      std::printf("  %-44s %s\n", escape_control(k).c_str(), escape_control(v.to_display(size_t(max_items))).c_str());
    if (!no_tensors) std::printf("\ntensors:\n  %-36s %-8s %-22s %12s\n", "name", "type", "shape", "bytes");
    for (const auto& t : file->tensors()) {
      if (no_tensors) break;
      std::printf("  %-36s %-8s %-22s %12llu\n", escape_control(t.name).c_str(), type_name(uint32_t(t.type)).c_str(),
                  t.shape_string().c_str(), (unsigned long long)t.nbytes);
    }
    std::printf("\ntotal: %zu tensors, %llu parameters, %.2f MiB\n", file->tensors().size(),
                (unsigned long long)total_elems, double(total_bytes) / (1 << 20));
    for (const auto& [name, b] : bytes_by_type) std::printf("  %-8s %.2f MiB\n", name.c_str(), double(b) / (1 << 20));
  }
  std::fflush(stdout);
  if (!load_error.empty()) fail(load_error);
  return 0;
}

}  // namespace edgellm::cli
