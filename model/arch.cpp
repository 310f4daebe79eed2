#include "model/arch.h"

#include <string>

namespace edgellm {

namespace {
const ArchDesc* const* all_archs() {
  static const ArchDesc* const list[] = {&arch_llama(), &arch_qwen2(), &arch_qwen3(), &arch_smollm3(), &arch_gemma2(), &arch_gemma3(), &arch_gemma4(),
                                         &arch_phi3(),
                                         nullptr};
  return list;
}
}  // namespace

const ArchDesc* find_arch(std::string_view name) {
  for (const ArchDesc* const* d = all_archs(); *d; ++d)
    if ((*d)->name == name) return *d;
  return nullptr;
}

std::string known_arch_names() {
  std::string names;
  for (const ArchDesc* const* d = all_archs(); *d; ++d) names += (names.empty() ? "" : ", ") + std::string((*d)->name);
  return names;
}

}  // namespace edgellm
