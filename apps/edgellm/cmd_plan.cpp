// edgellm plan: the memory plan for a model at given settings, before
// anything runs: weights (file-backed or a resident copy), KV cache, every
// buffer, the footprint (anonymous memory) and the predicted peak RSS, and
// with --mem-limit whether it fits. Reads only the file's header and small
// tensors (no weight page, no tokenizer tables are built).
//
// Without the file (--preset NAME or --config config.json, with --quant and
// --device), the same plan is made from the shape alone and set against a
// device: see plan_described (cmd_plan_device.cpp).
#include <cstdio>
#include <string>

#include "apps/edgellm/cmd_plan_device.h"
#include "apps/edgellm/common.h"
#include "base/error.h"
#include "base/json.h"

namespace edgellm::cli {

int cmd_plan(int argc, char** argv) {
  Args args("plan", "Show the memory a model will hold at these settings, before loading it (or downloading it: "
                    "--preset / --config with --quant and --device).");
  ModelFlags mf;
  DescribedFlags df;
  int64_t n_parallel = 1;
  std::string format = "table";
  mf.add_to(args, false);
  df.add_to(args);
  args.add({"--parallel", "-np"}, &n_parallel, "sequences (sessions) sharing the model, each with its own KV cache",
           1, 1024);
  args.add({"-o", "--output"}, &format, "table or json");
  if (!args.parse(argc, argv)) return 0;
  if (format != "table" && format != "json") fail("-o ", format, ": use table or json");
  mf.n_seq = int(n_parallel);
  if (df.described()) {
    if (!mf.model.empty()) fail("-m plans a file; --preset / --config plan without one: give one or the other");
    return plan_described(mf, df, format == "json");
  }
  if (mf.model.empty()) fail("no model given; pass one with -m FILE.gguf (or describe one with --preset or --config)");
  if (!df.quant.empty())
    fail("--quant describes the recipe of a model planned without its file (--preset / --config); -m plans the file "
         "as it is");
  if (!df.device.empty()) return plan_file_device(mf, df, format == "json");
  const uint64_t limit = mf.mem_limit_bytes();
  PlanSettings s = mf.plan_settings();
  s.n_seq = int(n_parallel);
  // The full load (tokenizer included, so its tables are measured, not
  // estimated) maps the weights but reads none of their pages.
  auto model = Model::load(mf.model, gguf::Residency::Mmap);
  std::string note;
  MemoryPlan p;
  bool fits = true;
  std::string why;
  try {
    p = plan_within_limit(*model, s, limit, mf.fit, &note);
  } catch (const Error& e) {
    if (limit == 0) throw;
    // Over the limit: still print the plan, with fits = false and why.
    fits = false;
    why = e.what();
    PlanSettings t = s;
    if (t.load_mode == gguf::Residency::Auto) t.load_mode = resolve_auto_residency(model->weight_bytes());
    p = plan_memory(*model, t);
  }
  const auto& hp = model->hparams();
  if (format == "json") {
    std::printf(
        "{\"model\":%s,\"n_ctx\":%lld,\"n_batch\":%lld,\"n_parallel\":%d,\"n_threads\":%d,\"cache_type_k\":%s,"
        "\"cache_type_v\":%s,\"load_mode\":%s,\"weights_bytes\":%llu,\"weights_resident_bytes\":%llu,"
        "\"kv_bytes\":%llu,\"buffers_bytes\":%llu,\"overhead_bytes\":%llu,\"load_peak_bytes\":%llu,\"footprint_bytes\":%llu,"
        "\"total_bytes\":%llu",
        json_quote(mf.model).c_str(), (long long)p.n_ctx, (long long)p.n_batch, p.settings.n_seq,
        p.settings.n_threads, json_quote(type_name(uint32_t(p.settings.type_k))).c_str(),
        json_quote(type_name(uint32_t(p.settings.type_v))).c_str(),
        json_quote(gguf::residency_name(p.settings.load_mode)).c_str(), (unsigned long long)p.weights_bytes,
        (unsigned long long)p.weights_resident_bytes, (unsigned long long)p.kv_bytes,
        (unsigned long long)p.buffers_bytes, (unsigned long long)p.overhead_bytes,
        (unsigned long long)p.load_peak_bytes, (unsigned long long)p.footprint_bytes, (unsigned long long)p.total_bytes);
    if (limit > 0) {
      std::printf(",\"mem_limit_bytes\":%llu,\"fits\":%s", (unsigned long long)limit, fits ? "true" : "false");
      if (!note.empty()) std::printf(",\"note\":%s", json_quote(note).c_str());
      if (!fits) std::printf(",\"reason\":%s", json_quote(why).c_str());
    }
    std::printf(",\"lines\":[");
    for (size_t i = 0; i < p.lines.size(); ++i)
      std::printf("%s{\"what\":%s,\"bytes\":%llu,\"anonymous\":%s}", i ? "," : "", json_quote(p.lines[i].what).c_str(),
                  (unsigned long long)p.lines[i].bytes, p.lines[i].anonymous ? "true" : "false");
    std::printf("]}\n");
    return 0;
  }
  std::printf("model    %s (%s, %lld layers, n_embd %lld, %lld KV heads x %lld)\n", mf.model.c_str(),
              std::string(model->arch().name).c_str(), (long long)hp.n_layer, (long long)hp.n_embd, (long long)hp.n_head_kv,
              (long long)hp.head_dim);
  std::printf("settings -c %lld -b %lld -t %d --parallel %d -ctk %s -ctv %s --load-mode %s\n\n", (long long)p.n_ctx,
              (long long)p.n_batch, p.settings.n_threads, p.settings.n_seq, type_name(uint32_t(p.settings.type_k)).c_str(),
              type_name(uint32_t(p.settings.type_v)).c_str(), gguf::residency_name(p.settings.load_mode));
  std::printf("| %-48s | %12s | %-11s |\n", "what", "MiB", "kind");
  std::printf("| %s | %s | %s |\n", std::string(48, '-').c_str(), std::string(12, '-').c_str(),
              std::string(11, '-').c_str());
  for (const PlanLine& l : p.lines)
    std::printf("| %-48s | %12.1f | %-11s |\n", l.what.c_str(), double(l.bytes) / 1048576.0,
                l.anonymous ? "anonymous" : "file-backed");
  std::printf("\nfootprint (anonymous)  %10.1f MiB   what the OS's memory killer counts (the larger of running and loading)\n",
              double(p.footprint_bytes) / 1048576.0);
  std::printf("total (peak RSS)       %10.1f MiB   footprint + file-backed weights + program text\n",
              double(p.total_bytes) / 1048576.0);
  print_kv_per_token(p);
  if (limit > 0) {
    std::printf("mem-limit              %10.1f MiB   %s\n", double(limit) / 1048576.0, fits ? "fits" : "DOES NOT FIT");
    if (!note.empty()) std::printf("note: %s\n", note.c_str());
    if (!fits) std::printf("%s\n", why.c_str());
  }
  return 0;
}

}  // namespace edgellm::cli
