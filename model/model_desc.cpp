#include "model/model_desc.h"

#include <string_view>

#include "format/file_type.h"
#include "model/model.h"

namespace edgellm {

// llama.cpp's tables (src/models/<arch>.cpp, load_arch_hparams): the label is
// picked from the layer count, with the width or vocabulary to tell apart
// shapes that share it. Copied for naming only; nothing here affects a run.
std::string model_size_label(std::string_view arch, const HParams& hp) {
  const int64_t L = hp.n_layer, E = hp.n_embd;
  if (arch == "llama") {
    switch (L) {
      case 16: case 22: return "1B";
      case 26: case 28: return "3B";
      case 30: return "256M";
      case 32: return hp.n_vocab == 49152 ? "3B" : hp.n_vocab < 40000 ? "7B" : "8B";
      case 36: return "8B";
      case 40: return "13B";
      case 48: return "34B";
      case 60: return "30B";
      case 80: return hp.n_head == hp.n_head_kv ? "65B" : "70B";
    }
  } else if (arch == "qwen2") {
    switch (L) {
      case 24: return E == 1024 ? "0.5B" : "1B";
      case 28: return E == 1536 ? "1.5B" : "7B";
      case 32: return "7B";
      case 36: return "3B";
      case 40: return hp.n_head == 20 ? "4B" : "13B";
      case 48: return "14B";
      case 64: return "32B";
      case 80: return "70B";
    }
  } else if (arch == "qwen3") {
    switch (L) {
      case 28: return E == 1024 ? "0.6B" : "1.7B";
      case 36: return E == 2560 ? "4B" : "8B";
      case 40: return "14B";
      case 64: return "32B";
    }
  } else if (arch == "smollm3") {
    if (L == 36) return "3B";
  } else if (arch == "gemma2") {
    switch (L) {
      case 26: return "2B";
      case 42: return "9B";
      case 46: return "27B";
    }
  } else if (arch == "phi3") {
    switch (L) {
      case 24: return "1B";
      case 32: return "3B";
      case 40: return "14B";
    }
  } else if (arch == "gemma4") {
    switch (L) {
      case 35: return "E2B";
      case 42: return "E4B";
    }
  } else if (arch == "gemma3") {
    switch (L) {
      case 18: return "270M";
      case 26: return "1B";
      case 34: return "4B";
      case 48: return "12B";
      case 62: return "27B";
    }
  }
  return "?B";
}

std::string model_desc(const Model& m) {
  const std::string_view arch = m.arch().name;
  return std::string(arch) + " " + model_size_label(arch, m.hparams()) + " " + gguf::file_type_label(m.file());
}

}  // namespace edgellm
