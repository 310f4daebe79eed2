// Qwen3 (dense): no q/k/v biases, per-head RMSNorm on q and k before RoPE,
// NEOX RoPE, head_dim set by attention.key_length (may differ from n_embd/n_head).
#include "model/arch.h"

namespace edgellm {
const ArchDesc& arch_qwen3() {
  static const ArchDesc d{.name = "qwen3", .rope = RopeStyle::Neox, .qk_norm = true};
  return d;
}
}  // namespace edgellm
