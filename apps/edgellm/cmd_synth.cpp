// edgellm synth: write a random-weight GGUF of a real model's shape.
#include <cstdio>
#include <limits>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "model/arch.h"
#include "tools/synth.h"

namespace edgellm::cli {

int cmd_synth(int argc, char** argv) {
  Args args("synth", "Write a random-weight model of a real architecture's shape (loads in llama.cpp too).");
  SynthOptions o;
  std::string out;
  int64_t seed = 1, threads = 0;
  args.add({"--arch"}, &o.arch, known_arch_names());
  args.add({"--shape"}, &o.shape, synth_shape_names());
  args.add({"--type"}, &o.type, "f32 | f16 | q8_0 | q4_0 | q4_k_m | iq4_nl | iq4_xs");
  args.add_flag({"--pure"}, &o.pure, "every matrix the --type's own type, no llama-quantize mixture (as its --pure)");
  args.add({"--vocab-from"}, &o.vocab_from, "GGUF whose tokenizer is copied (e.g. a ggml-vocab-*.gguf)");
  args.add({"--seed"}, &seed, "random seed", 0, std::numeric_limits<int64_t>::max());
  args.add({"-t", "--threads"}, &threads, "threads (0 = all cores)", 0, 512);
  args.add({"-o", "--output"}, &out, "output GGUF file");
  if (!args.parse(argc, argv)) return 0;
  if (out.empty()) fail("synth: -o OUT.gguf is required");
  o.seed = uint64_t(seed);
  o.n_threads = int(threads);
  synth_model(o, out);
  std::fprintf(stderr, "synth: wrote %s (%s, %s, %s)\n", out.c_str(), o.arch.c_str(), o.shape.c_str(), o.type.c_str());
  return 0;
}

}  // namespace edgellm::cli
