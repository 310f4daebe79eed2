// Phi-3 / Phi-3.5 / Phi-4-mini (general.architecture "phi3"): llama's block
// without biases, NEOX RoPE (partial on Phi-4-mini: rope.dimension_count 96
// of head_dim 128), fused qkv and gate/up projections, and LongRoPE. Phi-3's
// sliding_window key is read by no one: llama.cpp disables SWA for phi3 (its
// converter writes the key, Phi-3.5's 262144 spans the whole context anyway),
// and we match llama.cpp.
#include "model/arch.h"

namespace edgellm {
const ArchDesc& arch_phi3() {
  static const ArchDesc d{.name = "phi3",
                          .rope = RopeStyle::Neox,
                          .fused_qkv = true,
                          .fused_gate_up = true,
                          .longrope = true};
  return d;
}
}  // namespace edgellm
