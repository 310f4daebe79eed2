// `edgellm plan --preset NAME | --config config.json [--quant Q] [--device D]`:
// the plan for a model not yet downloaded, against a device's budget.
#pragma once
#include <cstdint>
#include <string>

#include "apps/edgellm/args.h"
#include "apps/edgellm/common.h"

namespace edgellm::cli {

struct DescribedFlags {
  std::string preset, config, quant, device;
  int64_t ctx = 0;  // --ctx: the spelling of -c
  void add_to(Args& a);
  bool described() const { return !preset.empty() || !config.empty(); }
};

// Prints the plan (table or JSON); returns the exit status.
int plan_described(const ModelFlags& mf, const DescribedFlags& df, bool json);
// `plan -m FILE --device D`: the file's own tensors against the device.
int plan_file_device(const ModelFlags& mf, const DescribedFlags& df, bool json);

}  // namespace edgellm::cli
