#include "tools/device_plan.h"

#include <algorithm>

#include "base/error.h"
#include "format/file_type.h"
#include "model/model.h"
#include "tools/plan_shape.h"

namespace edgellm {

namespace {

// The weights stay file-backed unless asked otherwise: a copy into
// anonymous memory is what a phone's memory killer counts, and it only pays
// (fewer TLB misses) where the budget leaves room for it.
PlanSettings device_settings(PlanSettings s) {
  if (s.load_mode == gguf::Residency::Auto) s.load_mode = gguf::Residency::Mmap;
  return s;
}

bool fits_budget(const MemoryPlan& p, uint64_t budget) { return p.total_bytes <= budget; }

PlanVariant variant(std::string what, const ModelDesc& d, const QuantRecipe& q, const PlanSettings& s,
                    const DeviceProfile& dev) {
  PlanVariant v;
  v.what = std::move(what);
  const ModelShape shape = shape_from_desc(d, q);
  PlanSettings t = s;
  t.n_ctx = std::min(s.n_ctx, d.hp.n_ctx_train);
  v.memory = plan_memory(shape, t);
  v.fits = fits_budget(v.memory, dev.budget_bytes());
  v.max_ctx = max_context(shape, t, dev.budget_bytes());
  v.decode_ceiling_tps = decode_speed(weight_bytes_read_per_token(d, q), 0, dev.bandwidth_gbs).ceiling_tps;
  return v;
}

}  // namespace

DecodeSpeed decode_speed(uint64_t weight_bytes_per_token, uint64_t kv_bytes_at_ctx, double bandwidth_gbs) {
  DecodeSpeed s;
  s.weight_bytes_per_token = weight_bytes_per_token;
  s.kv_bytes_per_token_at_ctx = kv_bytes_at_ctx;
  const double bw = bandwidth_gbs * 1e9;
  s.ceiling_tps = weight_bytes_per_token > 0 ? bw / double(weight_bytes_per_token) : 0;
  s.ceiling_at_ctx_tps = bw / double(weight_bytes_per_token + kv_bytes_at_ctx);
  s.band_low_tps = kDecodeShareLow * s.ceiling_at_ctx_tps;
  s.band_high_tps = kDecodeShareHigh * s.ceiling_tps;
  return s;
}

uint64_t weight_bytes_read_per_token(const Model& m) {
  uint64_t n = m.weight_bytes();
  if (!m.tied_output()) {
    const WeightView& e = m.token_embd();
    n -= e.row_bytes() * uint64_t(e.rows) - e.row_bytes();
  }
  return n;
}

int64_t max_context(const ModelShape& shape, PlanSettings s, uint64_t budget) {
  auto fits_at = [&](int64_t n) {
    s.n_ctx = n;
    return fits_budget(plan_memory(shape, s), budget);
  };
  int64_t lo = 0, hi = shape.hp.n_ctx_train;  // fits(lo) or lo == 0; the answer is in [lo, hi]
  if (fits_at(hi)) return hi;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits_at(mid) ? lo : hi) = mid;
  }
  return lo;
}

namespace {

// The plan of `shape` (a recipe's estimate or a file's own tensors) against
// the device, and the cheaper alternatives of a model described by `model`.
DevicePlan plan_shape_on_device(const ModelDesc& model, const QuantRecipe& quant, const ModelShape& shape,
                                uint64_t weight_bytes_per_token, const PlanSettings& settings,
                                const DeviceProfile& device) {
  DevicePlan p;
  p.model = model;
  p.quant = quant;
  p.device = device;
  const PlanSettings s = device_settings(settings);
  p.memory = plan_memory(shape, s);  // throws for a context beyond the model's, a bad KV type
  p.budget_bytes = device.budget_bytes();
  p.fits = fits_budget(p.memory, p.budget_bytes);
  p.margin_bytes = int64_t(p.budget_bytes) - int64_t(p.memory.total_bytes);
  p.max_ctx = max_context(shape, p.memory.settings, p.budget_bytes);

  // Decode: every weight byte once per token, plus the keys and values of
  // every position so far at a full context (a sliding layer's: its window).
  p.decode = decode_speed(weight_bytes_per_token, p.memory.kv_bytes_read_at(p.memory.n_ctx), device.bandwidth_gbs);

  // Prefill: compute-bound. 2 FLOPs per weight per token through the
  // matrices, plus attention's QK^T and AV: 4 x n_layer x (heads x head_dim)
  // per pair of positions, at the prompt's mean position. Priced at the
  // device's int8 dot throughput (the prefill kernels' path).
  const HParams& hp = model.hp;
  p.prefill_tokens = std::min<int64_t>(512, p.memory.n_ctx);
  const double attn = 4.0 * double(hp.n_layer) * double(hp.n_head * hp.head_dim) * double(p.prefill_tokens) / 2;
  p.prefill_flops_per_token = 2.0 * double(matmul_params(model)) + attn;
  p.prefill_estimate_tps = device.int8_gops * 1e9 / p.prefill_flops_per_token;

  // Cheaper alternatives: a quantized KV cache, the next smaller recipe
  // (and the largest that fits, if that is another), the next smaller model.
  const PlanSettings& rs = p.memory.settings;
  if ((rs.type_k != GgmlType::Q8_0 || rs.type_v != GgmlType::Q8_0) && hp.head_dim % 32 == 0 &&
      hp.head_dim_v % 32 == 0) {
    PlanSettings t = rs;
    t.type_k = t.type_v = GgmlType::Q8_0;
    p.alternatives.push_back(variant("q8_0 KV cache (-ctk q8_0 -ctv q8_0)", model, quant, t, device));
  }
  const uint64_t weights = p.memory.weights_bytes;
  bool next_added = false;
  for (const char* const* q = quant_ladder(); *q; ++q) {
    const QuantRecipe r = parse_quant(*q);
    PlanVariant v = variant(std::string(*q) + " weights", model, r, rs, device);
    if (v.memory.weights_bytes >= weights) continue;
    if (!next_added) {
      next_added = true;
      const bool fits = v.fits;
      p.alternatives.push_back(std::move(v));
      if (fits || p.fits) break;
      continue;
    }
    if (v.fits) {
      p.alternatives.push_back(std::move(v));
      break;
    }
  }
  // The next smaller model of the family (presets list families smallest
  // first), and when neither fits, the largest smaller one that does.
  if (!model.family.empty()) {
    std::vector<const ModelDesc*> smaller;
    for (const ModelDesc& d : presets()) {
      if (d.name == model.name) break;
      if (d.family == model.family) smaller.insert(smaller.begin(), &d);
    }
    for (size_t i = 0; i < smaller.size(); ++i) {
      PlanVariant v = variant(smaller[i]->name + " (" + quant.name + ")", *smaller[i], quant, rs, device);
      const bool fits = v.fits;
      if (i == 0 || fits) p.alternatives.push_back(std::move(v));
      if (fits || p.fits) break;
    }
  }
  return p;
}

}  // namespace

DevicePlan plan_on_device(const ModelDesc& model, const QuantRecipe& quant, const PlanSettings& settings,
                          const DeviceProfile& device) {
  return plan_shape_on_device(model, quant, shape_from_desc(model, quant), weight_bytes_read_per_token(model, quant),
                              settings, device);
}

DevicePlan plan_file_on_device(const Model& m, const std::string& path, const PlanSettings& settings,
                               const DeviceProfile& device) {
  ModelDesc d;
  d.name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  d.arch = std::string(m.arch().name);
  d.hp = m.hparams();
  d.tied = m.tied_output();
  d.llama3_rope = m.file().find_tensor("rope_freqs.weight") != nullptr;
  d.longrope = m.file().find_tensor("rope_factors_long.weight") != nullptr;
  d.source = path;
  // A preset of the very same shape lends its name and family (the
  // smaller-model alternatives are the presets before it in its family).
  for (const ModelDesc& pr : presets())
    if (pr.arch == d.arch && pr.hp.n_layer == d.hp.n_layer && pr.hp.n_embd == d.hp.n_embd &&
        pr.hp.n_ff == d.hp.n_ff && pr.hp.n_vocab == d.hp.n_vocab && pr.hp.n_head_kv == d.hp.n_head_kv)
      d.family = pr.family, d.name = pr.name, d.source = path + " (the shape of the " + pr.name + " preset)";
  const gguf::FileType ft = gguf::file_type_of(m.file());
  QuantRecipe q = quant_of_file_type(ft.ftype).value_or(QuantRecipe{gguf::file_type_label(m.file()), ft.ftype, GgmlType::F16});
  return plan_shape_on_device(d, q, model_shape(m), weight_bytes_read_per_token(m), settings, device);
}

}  // namespace edgellm
