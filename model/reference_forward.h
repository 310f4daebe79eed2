// The oracle: a plain double-precision forward pass over the same dequantized
// weights, sharing no code with the optimized path beyond dequantize_row. It
// recomputes the whole sequence (no KV cache), uses an ordinary two-pass
// softmax and keeps K/V in double. Slow by design; for tests and `eval --reference`.
#pragma once
#include <cstdint>
#include <vector>

#include "model/model.h"

namespace edgellm {

// Logits for every position, row-major [tokens.size()][n_vocab]. n_ctx: the
// context the run being checked was planned for, which picks LongRoPE's long
// or short factors (Model::rope_factors) as the optimized pass does from its
// plan; 0: tokens.size(), the smallest context holding the text.
std::vector<double> reference_forward(const Model& m, const std::vector<int32_t>& tokens, int64_t n_ctx = 0);

}  // namespace edgellm
