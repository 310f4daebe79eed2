// edgellm eval: run a prompt through the model and dump float32 logits for
// every position, row-major [n_tokens][n_vocab] with no header, so any
// engine's output can be compared with ours byte for byte or by cosine.
#include <chrono>
#include <cstdio>
#include <vector>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "base/file_util.h"
#include "model/reference_forward.h"

namespace edgellm::cli {

int cmd_eval(int argc, char** argv) {
  Args args("eval", "Evaluate a prompt; write per-position logits (float32 [n_tokens][n_vocab]).");
  ModelFlags mf;
  std::string dump;
  bool reference = false;
  mf.add_to(args, true);
  args.add({"--dump-logits"}, &dump, "output file for the logits");
  args.add_flag({"--reference"}, &reference, "use the double-precision reference forward pass (slow; the oracle)");
  if (!args.parse(argc, argv)) return 0;
  if (dump.empty()) fail("eval: --dump-logits FILE is required");
  auto model = mf.load_model();
  const std::vector<int32_t> tokens = mf.prompt_tokens(*model);
  const int64_t n_vocab = model->hparams().n_vocab, T = int64_t(tokens.size());

  std::vector<float> logits(size_t(T * n_vocab));
  const auto t0 = std::chrono::steady_clock::now();
  SessionConfig cfg = mf.session_config();
  if (cfg.n_ctx == 0) cfg.n_ctx = std::min<int64_t>(std::max<int64_t>(T, 1), model->hparams().n_ctx_train);
  if (reference) {
    // The same context as the optimized run would plan (LongRoPE picks its factors by it).
    const std::vector<double> ref = reference_forward(*model, tokens, cfg.n_ctx);
    for (size_t i = 0; i < ref.size(); ++i) logits[i] = float(ref[i]);
  } else {
    cfg.logits_all = true;
    Session s(*model, cfg);
    if (T > s.n_ctx()) fail("eval: ", T, " tokens do not fit the context of ", s.n_ctx(), " (use -c)");
    for (int64_t i = 0; i < T; i += s.n_batch()) {
      const int64_t n = std::min(s.n_batch(), T - i);
      const float* out = s.decode(tokens.data() + i, n, true);
      std::copy(out, out + n * n_vocab, logits.begin() + i * n_vocab);
    }
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  write_file_atomic(dump, logits.data(), logits.size() * sizeof(float));
  std::fprintf(stderr, "eval: %lld tokens x %lld logits -> %s (%.1f ms%s)\n", (long long)T, (long long)n_vocab,
               dump.c_str(), ms, reference ? ", reference pass" : "");
  return 0;
}

}  // namespace edgellm::cli
