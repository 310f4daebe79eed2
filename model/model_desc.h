// llama.cpp's one-line model description, "llama 7B Q4_K - Medium": the
// architecture, llama.cpp's size label for that shape, and the file type
// (format/file_type.h). llama-bench prints it as model_type; printing the
// same string lets its users group our results with theirs.
#pragma once
#include <string>
#include <string_view>

namespace edgellm {

class Model;
struct HParams;

// llama.cpp's size label for this architecture and shape ("7B", "0.5B");
// "?B" where llama.cpp has none (as it prints).
std::string model_size_label(std::string_view arch, const HParams& hp);

// "<arch> <size label> <file type>", e.g. "qwen2 0.5B Q8_0", "llama ?B (guessed) all F32".
std::string model_desc(const Model& m);

}  // namespace edgellm
