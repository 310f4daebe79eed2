// Models: load (footprint first, as `edgellm run` does), free, metadata and
// the memory plan.
#include <chrono>
#include <cstring>

#include "base/cpu_affinity.h"
#include "capi/handles.h"
#include "capi/model_plan.h"
#include "format/file_type.h"
#include "tokenizer/tokenizer.h"

using namespace edgellm;
using namespace edgellm::capi;

extern "C" EDGELLM_API void edgellm_model_options_init(edgellm_model_options* o) {
  if (!o) return;
  std::memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->n_threads = 0;
  o->load_mode = EDGELLM_LOAD_AUTO;
  o->pin_threads = 0;
  o->memory_limit = 0;
}

namespace {

gguf::Residency residency_of(int32_t mode) {
  switch (mode) {
    case EDGELLM_LOAD_AUTO: return gguf::Residency::Auto;
    case EDGELLM_LOAD_MMAP: return gguf::Residency::Mmap;
    case EDGELLM_LOAD_HUGEPAGES: return gguf::Residency::HugePages;
  }
  refuse(EDGELLM_ERR_INVALID_ARGUMENT, "load_mode ", mode,
         " is not one of EDGELLM_LOAD_AUTO (0), EDGELLM_LOAD_MMAP (1), EDGELLM_LOAD_HUGEPAGES (2)");
}

std::unique_ptr<edgellm_model> load(const char* path, const edgellm_model_options& o) {
  auto h = std::make_unique<edgellm_model>();
  h->n_threads = o.n_threads > 0 ? o.n_threads : default_thread_count();
  h->pin_threads = o.pin_threads != 0;
  h->memory_limit = uint64_t(o.memory_limit);
  const auto t0 = std::chrono::steady_clock::now();
  // Footprint first: the header and shapes alone (no weight page read, no
  // tokenizer built) decide where the weights go and whether loading fits.
  PlanSettings s = default_plan_settings(*h);
  s.load_mode = residency_of(o.load_mode);
  {
    std::unique_ptr<Model> probe;
    try {
      probe = Model::load(path, gguf::Residency::Mmap, false);
    } catch (const Error& e) {
      refuse(EDGELLM_ERR_LOAD, e.what());
    }
    s.load_mode = choose_residency(*probe, s, h->memory_limit);
    const MemoryPlan p = plan_memory(*probe, s);
    if (h->memory_limit > 0 && p.load_peak_bytes > h->memory_limit)
      refuse(EDGELLM_ERR_OUT_OF_MEMORY, "loading ", path, " needs ", format_mib(p.load_peak_bytes),
             " of anonymous memory for its metadata and tokenizer tables alone, over the memory_limit of ",
             format_mib(h->memory_limit));
  }
  try {
    h->model = std::shared_ptr<Model>(Model::load(path, gguf::Residency::Mmap).release());
  } catch (const Error& e) {
    refuse(EDGELLM_ERR_LOAD, e.what());
  }
  if (s.load_mode == gguf::Residency::HugePages) h->model->make_resident();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const Model& m = *h->model;
  log(EDGELLM_LOG_INFO, std::string("loaded ") + path + ": " + std::string(m.arch().name) + ", " + std::to_string(m.n_params()) +
                            " params, " + gguf::file_type_label(m.file()) + ", weights " +
                            gguf::residency_name(m.file().residency()) + ", " + std::to_string(int64_t(ms)) +
                            " ms" + (m.tokenizer() ? "" : "; no tokenizer: " + m.tokenizer_error()));
  return h;
}

}  // namespace

extern "C" EDGELLM_API edgellm_status edgellm_model_load(const char* path, const edgellm_model_options* options,
                                                        edgellm_model** model) {
  return guarded("edgellm_model_load", nullptr, EDGELLM_ERR_LOAD, [&] {
    need(model, "model");
    *model = nullptr;
    need(path, "path");
    check_utf8(path, "path");
    edgellm_model_options o;
    edgellm_model_options_init(&o);
    if (options) {
      check_struct(options->struct_size, sizeof o, "edgellm_model_options");
      o = *options;
    }
    need_size(o.n_threads, "n_threads");
    need_size(o.memory_limit, "memory_limit");
    std::unique_ptr<edgellm_model> h = load(path, o);
    register_handle(h.get(), Kind::Model);
    *model = h.release();
  });
}

extern "C" EDGELLM_API edgellm_status edgellm_model_free(edgellm_model* model) {
  if (!model) return report("edgellm_model_free", nullptr, EDGELLM_ERR_INVALID_HANDLE, "the model is NULL");
  if (!unregister_model(model))
    return report("edgellm_model_free", nullptr, EDGELLM_ERR_INVALID_HANDLE,
                  "not a live model (freed already, or not a model handle)");
  delete model;  // contexts hold the weights through their own shared_ptr
  return EDGELLM_OK;
}

extern "C" EDGELLM_API void edgellm_model_info_init(edgellm_model_info* info) {
  if (!info) return;
  std::memset(info, 0, sizeof *info);
  info->struct_size = sizeof *info;
}

extern "C" EDGELLM_API edgellm_status edgellm_model_info_get(edgellm_model* model, edgellm_model_info* info) {
  return with_model("edgellm_model_info_get", model, [&](edgellm_model& h) {
    need(info, "info");
    check_struct(info->struct_size, sizeof *info, "edgellm_model_info");
    const Model& m = *h.model;
    const HParams& hp = m.hparams();
    info->n_vocab = int32_t(hp.n_vocab);
    info->n_ctx_train = hp.n_ctx_train;
    info->n_layer = int32_t(hp.n_layer);
    info->n_embd = int32_t(hp.n_embd);
    info->n_head = int32_t(hp.n_head);
    info->n_head_kv = int32_t(hp.n_head_kv);
    info->n_params = int64_t(m.n_params());
    info->weights_bytes = int64_t(m.weight_bytes());
    info->bos = m.tokenizer() ? m.tokenizer()->vocab().bos : -1;
    info->eos = m.tokenizer() ? m.tokenizer()->vocab().eos : -1;
    info->has_tokenizer = m.tokenizer() != nullptr;
    info->has_chat_template = m.file().find("tokenizer.chat_template") != nullptr;
  });
}

extern "C" EDGELLM_API edgellm_status edgellm_model_metadata(edgellm_model* model, const char* key, char* buffer,
                                                            int32_t capacity, int32_t* length) {
  return with_model("edgellm_model_metadata", model, [&](edgellm_model& h) {
    need(key, "key");
    check_utf8(key, "key");
    const gguf::Value* v = h.model->file().find(key);
    if (!v) refuse(EDGELLM_ERR_INVALID_ARGUMENT, "the model has no metadata key '", key, "'");
    copy_out(v->type == gguf::ValueType::STRING ? v->str : v->to_display(), buffer, capacity, length);
  });
}

extern "C" EDGELLM_API void edgellm_memory_plan_init(edgellm_memory_plan* plan) {
  if (!plan) return;
  std::memset(plan, 0, sizeof *plan);
  plan->struct_size = sizeof *plan;
}

extern "C" EDGELLM_API edgellm_status edgellm_model_plan(edgellm_model* model, const edgellm_context_options* options,
                                                        edgellm_memory_plan* plan) {
  return with_model("edgellm_model_plan", model, [&](edgellm_model& h) {
    need(plan, "plan");
    check_struct(plan->struct_size, sizeof *plan, "edgellm_memory_plan");
    const MemoryPlan p = plan_or_refuse(*h.model, context_plan_settings(h, options));
    plan->n_ctx = p.n_ctx;
    plan->n_batch = p.n_batch;
    plan->weights_bytes = int64_t(p.weights_bytes);
    plan->weights_resident_bytes = int64_t(p.weights_resident_bytes);
    plan->kv_bytes = int64_t(p.kv_bytes);
    plan->buffers_bytes = int64_t(p.buffers_bytes);
    plan->overhead_bytes = int64_t(p.overhead_bytes);
    plan->footprint_bytes = int64_t(p.footprint_bytes);
    plan->total_bytes = int64_t(p.total_bytes);
    plan->memory_limit = int64_t(h.memory_limit);
    plan->fits = h.memory_limit == 0 || p.footprint_bytes <= h.memory_limit;
  });
}
