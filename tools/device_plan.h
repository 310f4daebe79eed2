// `edgellm plan --device`: a model described without its file (preset or
// config.json), a quantization recipe and settings, against a device: the
// memory plan and its margin under the app budget, the longest context that
// fits, the decode ceiling (bandwidth / bytes read per token) with a
// realistic band, a prefill estimate, and cheaper alternatives.
#pragma once
#include <string>
#include <vector>

#include "runtime/memory_plan.h"
#include "tools/device_profile.h"
#include "tools/model_desc.h"
#include "tools/quant_mix.h"

namespace edgellm {

// Decode reaches a share of the ceiling: 56-88 % on the x86 host of
// BENCHMARKS.md (issue 5, Q4_0 0.5B, against the probe); phones' kernels
// and shared buses do worse. The band: 50 % at the planned context's KV
// traffic to 85 % at an empty context.
constexpr double kDecodeShareLow = 0.50, kDecodeShareHigh = 0.85;

struct DecodeSpeed {
  uint64_t weight_bytes_per_token = 0;  // weights read per generated token
  uint64_t kv_bytes_per_token_at_ctx = 0;  // KV read per token with the context full
  double ceiling_tps = 0;         // bandwidth / weights per token (empty context)
  double ceiling_at_ctx_tps = 0;  // bandwidth / (weights + full KV) per token
  double band_low_tps = 0, band_high_tps = 0;
};

struct PlanVariant {
  std::string what;    // "q8_0 KV cache", "Q4_0 weights", "qwen2.5-0.5b"
  MemoryPlan memory;
  bool fits = false;
  int64_t max_ctx = 0;
  double decode_ceiling_tps = 0;
};

struct DevicePlan {
  ModelDesc model;
  QuantRecipe quant;
  DeviceProfile device;
  MemoryPlan memory;
  uint64_t budget_bytes = 0;
  bool fits = false;               // memory.total_bytes <= budget: weights resident, nothing paged
  int64_t margin_bytes = 0;        // budget - total (negative: over by that much)
  int64_t max_ctx = 0;             // largest context whose plan fits (0: none)
  DecodeSpeed decode;
  int64_t prefill_tokens = 0;      // prompt length the estimate is for
  double prefill_flops_per_token = 0;
  double prefill_estimate_tps = 0;
  std::vector<PlanVariant> alternatives;
};

DecodeSpeed decode_speed(uint64_t weight_bytes_per_token, uint64_t kv_bytes_at_ctx, double bandwidth_gbs);
// The same count for a loaded file (bench compares achieved decode with the
// ceiling): every tensor's bytes, but one row of an untied token embedding.
uint64_t weight_bytes_read_per_token(const Model& m);

// Largest context (<= the model's) whose plan's total fits in budget; 0 if
// none does. The plans are the allocator's own arithmetic (plan_memory).
int64_t max_context(const ModelShape& shape, PlanSettings s, uint64_t budget);

// Throws Error for settings the model cannot run (context beyond its limit,
// a KV type its head size cannot hold, a shape the loader would refuse).
DevicePlan plan_on_device(const ModelDesc& model, const QuantRecipe& quant, const PlanSettings& s,
                          const DeviceProfile& device);

// The same for a file on disk (loaded without reading its weights): its own
// tensors' bytes and types instead of a recipe's estimate. The alternatives
// (smaller recipes) are estimated for a model of the file's shape.
DevicePlan plan_file_on_device(const Model& m, const std::string& path, const PlanSettings& s,
                               const DeviceProfile& device);

}  // namespace edgellm
