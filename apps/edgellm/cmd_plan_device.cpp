#include "apps/edgellm/cmd_plan_device.h"

#include <cinttypes>
#include <cstdio>
#include <map>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "base/json.h"
#include "model/model.h"
#include "tools/device_plan.h"
#include "tools/plan_shape.h"

namespace edgellm::cli {

void DescribedFlags::add_to(Args& a) {
  a.add({"--preset"}, &preset, "plan a model by name, without its file: " + preset_names());
  a.add({"--config"}, &config, "plan a model from its Hugging Face config.json, without its weights");
  a.add({"--quant"}, &quant, "with --preset/--config: the llama-quantize recipe the file would have (default Q4_K_M): " +
                                 quant_names());
  a.add({"--ctx"}, &ctx, "context size in tokens (same as -c)", 0, int64_t(1) << 24);
  a.add({"--device"}, &device,
        "the device to plan for (default host): a built-in profile (devices/*.json: " +
            [] {
              std::string s;
              for (const std::string& n : device_names()) s += (s.empty() ? "" : ", ") + n;
              return s.empty() ? std::string("none found") : s;
            }() +
            "), host (probe this machine) or a profile.json (edgellm probe -o json writes one)");
}

namespace {

double mib(uint64_t b) { return double(b) / 1048576.0; }
double mib(int64_t b) { return double(b) / 1048576.0; }

// "q4_K 70.1 %, q6_K 20.3 %, ..." by bytes.
std::string type_mix(const std::vector<PlannedTensor>& ts) {
  std::map<std::string, uint64_t> by;
  uint64_t total = 0;
  for (const PlannedTensor& t : ts) by[type_name(uint32_t(t.type))] += t.bytes, total += t.bytes;
  std::vector<std::pair<uint64_t, std::string>> v;
  for (const auto& [k, b] : by) v.push_back({b, k});
  std::sort(v.rbegin(), v.rend());
  std::string s;
  char buf[64];
  for (const auto& [b, k] : v) {
    std::snprintf(buf, sizeof buf, "%s%s %.1f %%", s.empty() ? "" : ", ", k.c_str(), 100.0 * double(b) / double(total));
    s += buf;
  }
  return s;
}

std::string estimated_note(const DeviceProfile& d) {
  std::string s;
  for (const std::string& e : d.estimated) s += (s.empty() ? "" : ", ") + e;
  return s.empty() ? "" : " (estimated: " + s + ")";
}

void print_json(const DevicePlan& d) {
  const MemoryPlan& p = d.memory;
  std::printf(
      "{\"model\":%s,\"arch\":%s,\"quant\":%s,\"n_ctx\":%lld,\"n_batch\":%lld,\"n_parallel\":%d,\"n_threads\":%d,"
      "\"cache_type_k\":%s,\"cache_type_v\":%s,\"load_mode\":%s,\"weights_bytes\":%llu,\"weights_resident_bytes\":%llu,"
      "\"kv_bytes\":%llu,\"kv_bytes_per_token\":%llu,\"buffers_bytes\":%llu,\"overhead_bytes\":%llu,"
      "\"load_peak_bytes\":%llu,\"footprint_bytes\":%llu,\"total_bytes\":%llu",
      json_quote(d.model.name).c_str(), json_quote(d.model.arch).c_str(), json_quote(d.quant.name).c_str(),
      (long long)p.n_ctx, (long long)p.n_batch, p.settings.n_seq, p.settings.n_threads,
      json_quote(type_name(uint32_t(p.settings.type_k))).c_str(), json_quote(type_name(uint32_t(p.settings.type_v))).c_str(),
      json_quote(gguf::residency_name(p.settings.load_mode)).c_str(), (unsigned long long)p.weights_bytes,
      (unsigned long long)p.weights_resident_bytes, (unsigned long long)p.kv_bytes,
      (unsigned long long)p.kv_bytes_per_position(),
      (unsigned long long)p.buffers_bytes, (unsigned long long)p.overhead_bytes, (unsigned long long)p.load_peak_bytes,
      (unsigned long long)p.footprint_bytes, (unsigned long long)p.total_bytes);
  std::printf(",\"device\":%s,\"budget_bytes\":%llu,\"bandwidth_gbs\":%.2f,\"int8_gops\":%.2f", json_quote(d.device.name).c_str(),
                (unsigned long long)d.budget_bytes, d.device.bandwidth_gbs, d.device.int8_gops);
  std::printf(",\"fits\":%s,\"margin_bytes\":%lld,\"max_ctx\":%lld", d.fits ? "true" : "false",
              (long long)d.margin_bytes, (long long)d.max_ctx);
  std::printf(",\"weight_bytes_per_token\":%llu,\"decode_ceiling_tps\":%.3f,\"decode_ceiling_at_ctx_tps\":%.3f,"
              "\"decode_band_tps\":[%.3f,%.3f],\"prefill_estimate_tps\":%.3f,\"prefill_flops_per_token\":%.0f",
              (unsigned long long)d.decode.weight_bytes_per_token, d.decode.ceiling_tps, d.decode.ceiling_at_ctx_tps,
              d.decode.band_low_tps, d.decode.band_high_tps, d.prefill_estimate_tps, d.prefill_flops_per_token);
  std::printf(",\"alternatives\":[");
  for (size_t i = 0; i < d.alternatives.size(); ++i) {
    const PlanVariant& v = d.alternatives[i];
    std::printf("%s{\"what\":%s,\"weights_bytes\":%llu,\"total_bytes\":%llu,\"fits\":%s,\"max_ctx\":%lld,"
                "\"decode_ceiling_tps\":%.3f}",
                i ? "," : "", json_quote(v.what).c_str(), (unsigned long long)v.memory.weights_bytes,
                (unsigned long long)v.memory.total_bytes, v.fits ? "true" : "false", (long long)v.max_ctx,
                v.decode_ceiling_tps);
  }
  std::printf("],\"lines\":[");
  for (size_t i = 0; i < p.lines.size(); ++i)
    std::printf("%s{\"what\":%s,\"bytes\":%llu,\"anonymous\":%s}", i ? "," : "", json_quote(p.lines[i].what).c_str(),
                (unsigned long long)p.lines[i].bytes, p.lines[i].anonymous ? "true" : "false");
  std::printf("]}\n");
}

// weights_from: "as llama-quantize makes it" (a recipe's estimate) or "in the file".
void print_table(const DevicePlan& d, const std::vector<PlannedTensor>& ts, const char* weights_from) {
  const MemoryPlan& p = d.memory;
  const HParams& hp = d.model.hp;
  std::printf("model    %s (%s, %lld layers, n_embd %lld, %lld KV heads x %lld, context %lld)\n", d.model.name.c_str(),
              d.model.arch.c_str(), (long long)hp.n_layer, (long long)hp.n_embd, (long long)hp.n_head_kv,
              (long long)hp.head_dim, (long long)hp.n_ctx_train);
  std::printf("         shape from %s\n", d.model.source.c_str());
  std::printf("weights  %s %s: %.1f MiB (%s)\n", d.quant.name.c_str(), weights_from, mib(p.weights_bytes),
              type_mix(ts).c_str());
  std::printf("device   %s: %s; %.1f GiB RAM, app budget %.1f GiB, %.1f GB/s, %.0f int8 GOP/s, %d big + %d little cores%s\n"
                "         source: %s\n",
                d.device.name.c_str(), d.device.description.c_str(), d.device.ram_gib, d.device.app_budget_gib,
                d.device.bandwidth_gbs, d.device.int8_gops, d.device.big_cores, d.device.little_cores,
                estimated_note(d.device).c_str(), d.device.source.c_str());
  std::printf("settings -c %lld -b %lld -t %d --parallel %d -ctk %s -ctv %s --load-mode %s\n\n", (long long)p.n_ctx,
              (long long)p.n_batch, p.settings.n_threads, p.settings.n_seq, type_name(uint32_t(p.settings.type_k)).c_str(),
              type_name(uint32_t(p.settings.type_v)).c_str(), gguf::residency_name(p.settings.load_mode));
  std::printf("| %-48s | %12s | %-11s |\n", "what", "MiB", "kind");
  std::printf("| %s | %s | %s |\n", std::string(48, '-').c_str(), std::string(12, '-').c_str(), std::string(11, '-').c_str());
  for (const PlanLine& l : p.lines)
    std::printf("| %-48s | %12.1f | %-11s |\n", l.what.c_str(), mib(l.bytes), l.anonymous ? "anonymous" : "file-backed");
  std::printf("\nfootprint (anonymous)  %10.1f MiB   what the OS's memory killer counts\n", mib(p.footprint_bytes));
  std::printf("total (peak RSS)       %10.1f MiB   footprint + weights + program text: all resident while decoding\n",
              mib(p.total_bytes));
  print_kv_per_token(p);
  const char* budget_name = "app budget";
  if (d.fits)
    std::printf("%-22s %10.1f MiB   fits, %.1f MiB to spare\n", budget_name, mib(d.budget_bytes), mib(d.margin_bytes));
  else
    std::printf("%-22s %10.1f MiB   DOES NOT FIT: over by %.1f MiB\n", budget_name, mib(d.budget_bytes), mib(-d.margin_bytes));
  if (d.max_ctx > 0)
    std::printf("largest context that fits  %lld tokens%s\n", (long long)d.max_ctx,
                d.max_ctx == hp.n_ctx_train ? " (the model's limit)" : "");
  else
    std::printf("largest context that fits  none: the weights and buffers alone exceed the budget\n");
  std::printf("decode ceiling         %10.1f tok/s  %.1f GB/s / %.1f MiB of weights per token (empty context)\n",
              d.decode.ceiling_tps, d.device.bandwidth_gbs, mib(d.decode.weight_bytes_per_token));
  std::printf("  with %lld tokens      %10.1f tok/s  + %.1f MiB of KV read per token\n", (long long)p.n_ctx,
              d.decode.ceiling_at_ctx_tps, mib(d.decode.kv_bytes_per_token_at_ctx));
  std::printf("  realistic            %4.0f-%.0f tok/s  %.0f %% of the full-context ceiling to %.0f %% of the empty one\n",
              d.decode.band_low_tps, d.decode.band_high_tps, 100 * kDecodeShareLow, 100 * kDecodeShareHigh);
  std::printf("prefill estimate       %10.1f tok/s  %.2f GFLOP per token (%lld-token prompt) at %.0f int8 GOP/s\n",
              d.prefill_estimate_tps, d.prefill_flops_per_token / 1e9, (long long)d.prefill_tokens, d.device.int8_gops);
  if (!d.alternatives.empty()) std::printf("\ncheaper alternatives:\n");
  for (const PlanVariant& v : d.alternatives)
    std::printf("  %-40s total %9.1f MiB  %-12s largest context %7lld  decode ceiling %7.1f tok/s\n", v.what.c_str(),
                mib(v.memory.total_bytes), v.fits ? "fits" : "does not fit", (long long)v.max_ctx, v.decode_ceiling_tps);
}

}  // namespace

int plan_described(const ModelFlags& mf, const DescribedFlags& df, bool json) {
  if (!df.preset.empty() && !df.config.empty()) fail("--preset and --config both describe the model: give one");
  ModelDesc desc;
  if (!df.preset.empty()) {
    const ModelDesc* p = find_preset(df.preset);
    if (!p) fail("--preset '", df.preset, "' is not a known model (", preset_names(), ")");
    desc = *p;
  } else {
    desc = read_hf_config(df.config);
  }
  const QuantRecipe quant = parse_quant(df.quant.empty() ? "Q4_K_M" : df.quant);
  PlanSettings s = mf.plan_settings();
  if (df.ctx > 0) s.n_ctx = df.ctx;
  // Without --device: this machine, probed (a few seconds).
  const std::string device = df.device.empty() ? "host" : df.device;
  const DeviceProfile dev = load_device(device, int(mf.n_threads));
  // A phone runs decode on its big cores: one thread each.
  if (mf.n_threads == 0 && device != "host") s.n_threads = std::max(1, dev.big_cores);
  const DevicePlan plan = plan_on_device(desc, quant, s, dev);
  if (json) print_json(plan);
  else print_table(plan, plan_tensors(desc, quant), "as llama-quantize makes it");
  return 0;
}

int plan_file_device(const ModelFlags& mf, const DescribedFlags& df, bool json) {
  PlanSettings s = mf.plan_settings();
  if (df.ctx > 0) s.n_ctx = df.ctx;
  const DeviceProfile dev = load_device(df.device, int(mf.n_threads));
  if (mf.n_threads == 0 && df.device != "host") s.n_threads = std::max(1, dev.big_cores);
  // The full load (the tokenizer's tables measured, not estimated) maps the
  // weights but reads none of their pages.
  auto model = Model::load(mf.model, gguf::Residency::Mmap);
  const DevicePlan plan = plan_file_on_device(*model, mf.model, s, dev);
  if (json) {
    print_json(plan);
  } else {
    std::vector<PlannedTensor> ts;
    for (const gguf::TensorInfo& t : model->file().tensors()) ts.push_back({t.name, t.type, t.ne[0], t.ne[1], t.nbytes});
    print_table(plan, ts, "in the file");
  }
  return 0;
}

}  // namespace edgellm::cli
