// Architectures llama.cpp runs that edgellm does not (yet), each with what is
// missing, so that a user learns why rather than only "not supported".
#include <string_view>
#include <utility>

#include "model/arch.h"

namespace edgellm {

std::string_view unsupported_arch_reason(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kReasons[] = {
      {"gemma3n", "Gemma 3n needs AltUp, LAuReL and per-layer embeddings, not implemented"},
      {"qwen2moe", "a mixture-of-experts model: edgellm runs dense models only"},
      {"qwen3moe", "a mixture-of-experts model: edgellm runs dense models only"},
      {"mixtral", "a mixture-of-experts model: edgellm runs dense models only"},
      {"phimoe", "a mixture-of-experts model: edgellm runs dense models only"},
      {"deepseek2", "a mixture-of-experts model with latent attention: edgellm runs dense models only"},
      {"mllama", "a vision-language model: edgellm runs text models only"},
      {"clip", "a vision encoder: edgellm runs text decoders only"},
      {"bert", "an encoder (embeddings) model: edgellm runs text decoders only"},
      {"nomic-bert", "an encoder (embeddings) model: edgellm runs text decoders only"},
  };
  for (const auto& [arch, why] : kReasons)
    if (arch == name) return why;
  return {};
}

}  // namespace edgellm
