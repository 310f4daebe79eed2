#include "model/arch.h"

namespace edgellm {

namespace {
const ArchDesc* const* all_archs() {
  static const ArchDesc* const list[] = {&arch_llama(), &arch_qwen2(), &arch_qwen3(), nullptr};
  return list;
}
}  // namespace

const ArchDesc* find_arch(std::string_view name) {
  for (const ArchDesc* const* d = all_archs(); *d; ++d)
    if ((*d)->name == name) return *d;
  return nullptr;
}

std::string_view known_arch_names() { return "llama, qwen2, qwen3"; }

}  // namespace edgellm
