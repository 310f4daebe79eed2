// Test models made on demand: `edgellm synth` output for each architecture and
// weight type, written once per test run into a temporary folder.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "tools/synth.h"

namespace edgellm::test {

inline std::string shared_dir() { return EDGELLM_SHARED_DIR; }
inline std::string stories260k() { return shared_dir() + "/testdata/models/stories260K.gguf"; }

// A folder for this test process, removed when the process exits.
inline const std::string& temp_dir() {
  struct Dir {
    std::string path;
    Dir() {
      const char* t = std::getenv("TMPDIR");
      path = std::string(t && *t ? t : "/tmp") + "/edgellm_test_XXXXXX";
      if (!mkdtemp(path.data())) std::abort();
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

// A `tiny`-shaped random model (2 layers, n_embd 256; 4 for smollm3; phi3's
// own tiny shapes carry LongRoPE factors) with stories260K's
// 512-token SPM vocabulary (small and fast), or the 32000-token Llama 2
// vocabulary with big_vocab. Every matrix of a q4_0 file is q4_0 (pure, so
// kernel and forward tests exercise that type), unless mixed: then the
// types are llama-quantize's (q6_K head); q4_k_m is always its mixture.
inline std::string synth_tiny(const std::string& arch, const std::string& type, uint64_t seed = 7,
                              bool big_vocab = false, bool mixed = false) {
  static std::map<std::string, std::string> made;
  const bool pure = !mixed && type != "q4_k_m";
  const std::string key =
      arch + "-" + type + "-" + std::to_string(seed) + (big_vocab ? "-32k" : "") + (pure ? "-pure" : "");
  if (auto it = made.find(key); it != made.end()) return it->second;
  SynthOptions o;
  // "phi4": the phi3 architecture in Phi-4-mini's form (GQA, tied head,
  // partial rotary), the tiny-phi4 shape.
  // "gemma4-kv": gemma4 with fewer KV heads on its global layers (a
  // per-layer head_count_kv), the tiny-gemma4-kv shape.
  o.arch = arch == "phi4" ? "phi3" : arch == "gemma4-kv" ? "gemma4" : arch;
  // smollm3's NoPE layer is its 4th: two layers would never reach one.
  // gemma3's one global layer in six needs six layers (a 32-token window in
  // both shapes). Random weights amplify rounding with depth: at six layers
  // q8_0 activations alone give cosine ~0.999 for llama and qwen3 too (edgellm
  // eval --dump-logits [--reference]), so quantized gemma3 files keep the
  // two-layer depth the 0.9999 bar was set at; f32/f16 run all six.
  const bool float_type = type == "f32" || type == "f16";
  o.shape = arch == "smollm3"                ? "tiny-4l"
            : arch == "gemma3" && float_type ? "tiny-6l"
            : arch == "phi3" || arch == "phi4" ? "tiny-" + arch
            : arch == "gemma4"                 ? "tiny-gemma4"  // its four layer kinds need four layers
            : arch == "gemma4-kv"              ? "tiny-gemma4-kv"
                                               : "tiny";
  // (gemma2 alternates local and global layers: two layers hold both.)
  o.type = type;
  o.seed = seed;
  o.pure = pure;
  o.vocab_from = big_vocab ? shared_dir() + "/testdata/vocab/ggml-vocab-llama-spm.gguf" : stories260k();
  const std::string path = temp_dir() + "/" + key + ".gguf";
  synth_model(o, path);
  return made[key] = path;
}

}  // namespace edgellm::test
