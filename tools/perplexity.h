// Perplexity and KL divergence, by llama-perplexity's method and in its
// --kl-divergence-base file format, so one engine's logits can be scored
// against another's (tools/perplexity.cpp; the CLI is apps/edgellm/cmd_perplexity.cpp).
//
// Method (llama.cpp tools/perplexity/perplexity.cpp, perplexity() and
// kl_divergence()):
//   - the text is tokenized once, with BOS if the vocabulary adds one, and cut
//     into n_chunk = n_tokens / n_ctx chunks of n_ctx tokens (at least two
//     chunks' worth of tokens, 2 x n_ctx, are required, as llama.cpp does);
//   - each chunk is evaluated from an empty cache, its first token replaced by
//     BOS when the vocabulary adds BOS;
//   - only the second half is scored: the logits at positions
//     first = n_ctx/2 .. n_ctx-2 predict tokens first+1 .. n_ctx-1, so each
//     chunk contributes n_ctx - 1 - n_ctx/2 negative log-likelihoods;
//   - PPL = exp(mean nll), its error = PPL * sqrt(var(nll) / (count - 1)).
//
// KL-divergence base file (native little-endian, exactly what
// llama-perplexity --kl-divergence-base FILE writes and --kl-divergence reads):
//   char    magic[8] = "_logits_"
//   int32   n_ctx
//   int32   n_vocab
//   int32   n_chunk
//   int32   tokens[n_chunk * n_ctx]     the evaluated tokens as tokenized (before
//                                       the BOS substitution)
//   then, chunk by chunk, one row per scored position (n_ctx - 1 - n_ctx/2
//   rows a chunk) of kld_row_u16s(n_vocab) = 2*((n_vocab+1)/2) + 4 uint16:
//     float   scale          (uint16 0..1)
//     float   min_log_prob   (uint16 2..3)
//     uint16  q[n_vocab]     (then one uint16 of padding if n_vocab is odd)
//   where log p_i = scale * q_i + min_log_prob. With m = max logit, the
//   quantization floor is lo = max(min logit, m - 16), scale = (m - lo) / 65535,
//   q_i = round((logit_i - lo) / scale) for logit_i > lo, else 0, and
//   min_log_prob = lo - m - log(sum exp(logit - m)).
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <functional>
#include <string>
#include <vector>

#include "base/durable_file.h"

namespace edgellm {

class Session;

// ---------------------------------------------------------------- file format

// uint16 values per stored row: 2 floats + n_vocab values, padded to even.
inline int64_t kld_row_u16s(int64_t n_vocab) { return 2 * ((n_vocab + 1) / 2) + 4; }
// Positions scored in each chunk of n_ctx tokens.
inline int64_t scored_per_chunk(int64_t n_ctx) { return n_ctx - 1 - n_ctx / 2; }

// Stores one logits row as llama-perplexity does; returns the negative
// log-likelihood of token tok under those logits.
double encode_log_prob_row(const float* logits, int64_t n_vocab, int32_t tok, uint16_t* row);
// The stored log-probabilities back: log_probs[i] = scale * q_i + min_log_prob.
void decode_log_prob_row(const uint16_t* row, int64_t n_vocab, float* log_probs);

struct KldBaseHeader {
  int32_t n_ctx = 0, n_vocab = 0, n_chunk = 0;
  std::vector<int32_t> tokens;  // n_chunk * n_ctx
};

// Writes PATH.tmp and renames it over PATH on finish(), so a failed run never
// leaves a partial base file behind.
class KldBaseWriter {
 public:
  KldBaseWriter(const std::string& path, const KldBaseHeader& header);
  ~KldBaseWriter();
  KldBaseWriter(const KldBaseWriter&) = delete;
  KldBaseWriter& operator=(const KldBaseWriter&) = delete;
  // n_rows rows of kld_row_u16s(n_vocab) uint16 each.
  void write_rows(const uint16_t* rows, int64_t n_rows);
  void finish();  // checks that every row was written

 private:
  std::string path_;
  std::unique_ptr<DurableFile> out_;  // a temporary until finish() renames it into place
  int64_t n_vocab_ = 0, rows_left_ = 0;
};

// Opens a base file and checks it whole before anything is evaluated: the
// magic, sane header values, token ids within the vocabulary, and a file size
// that matches the header exactly (so a truncated file is refused up front).
class KldBaseReader {
 public:
  explicit KldBaseReader(const std::string& path);
  ~KldBaseReader();
  KldBaseReader(const KldBaseReader&) = delete;
  KldBaseReader& operator=(const KldBaseReader&) = delete;
  const KldBaseHeader& header() const { return h_; }
  // The next n_rows rows (kld_row_u16s(n_vocab) uint16 each).
  void read_rows(uint16_t* rows, int64_t n_rows);

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  KldBaseHeader h_;
  int64_t rows_left_ = 0;
};

// ------------------------------------------------------------ one position

// -log softmax(logits)[tok], as llama-perplexity computes it.
double token_nll(const float* logits, int64_t n_vocab, int32_t tok);

struct KldTerms {
  double nll = 0, nll_base = 0;  // -log p(tok) under ours and under the base
  double kld = 0;                // KL(base || ours), summed where log p_base > -16
  double p_diff = 0;             // p(tok) - p_base(tok)
  bool same_top = false;         // the argmax of ours equals the base's
};
KldTerms kld_terms(const float* logits, int64_t n_vocab, const uint16_t* base_row, int32_t tok);

// ------------------------------------------------------------ statistics

struct PplAccum {
  double nll = 0, nll2 = 0;
  int64_t count = 0;
  void add(double v) { nll += v, nll2 += v * v, ++count; }
  double ppl() const;
  double ppl_err() const;  // llama's "Final estimate: PPL = x +/- err"; 0 if undefined
};

struct KldAccum {
  double sum_nll = 0, sum_nll2 = 0, sum_nll_base = 0, sum_nll_base2 = 0, sum_nll_nll_base = 0;
  double sum_kld = 0, sum_kld2 = 0, sum_p_diff = 0, sum_p_diff2 = 0, sum_p_diff4 = 0, max_p_diff = 0;
  int64_t n_same_top = 0, count = 0;
  std::vector<float> kld_values, p_diff_values;  // per position, for the percentiles
  void add(const KldTerms& t);
};

struct PerplexityReport {
  int64_t n_ctx = 0, n_vocab = 0, n_chunks = 0, n_scored = 0, n_tokens = 0;
  std::vector<double> chunk_ppl;  // the running estimate after each chunk ([1]x,[2]y,...)
  double ppl = 0, ppl_err = 0;
  double nll_mean = 0;  // ln PPL: finite where PPL overflows (random-weight models)
  bool has_kld = false;
  // With a base file (llama-perplexity --kl-divergence's statistics):
  double ppl_base = 0, ppl_base_err = 0, nll_base_mean = 0, ln_ratio = 0, ln_ratio_err = 0, cor = 0;
  double kld_mean = 0, kld_err = 0, kld_max = 0, kld_p99 = 0, kld_p90 = 0, kld_median = 0, kld_min = 0;
  double same_top = 0, same_top_err = 0;        // percent
  double mean_dp = 0, mean_dp_err = 0, rms_dp = 0, rms_dp_err = 0;  // percent
};

// Fills the report's statistics from accumulated sums (the running values
// printed per chunk come from the same function).
void finish_report(PerplexityReport& r, const PplAccum& ppl);
void finish_report(PerplexityReport& r, KldAccum& kld);

// ------------------------------------------------------------ the driver

struct PerplexityRun {
  int64_t n_ctx = 512;
  int64_t n_chunks = -1;     // -1: all the text gives (llama's --chunks)
  int32_t bos = -1;          // >= 0: substituted for each chunk's first token
  std::string write_base;    // non-empty: write llama's KLD base file here
  // Called after each chunk with the running report (chunk_ppl grows by one).
  std::function<void(const PerplexityReport&)> on_chunk;
};

// Scores tokens (the whole tokenized text) chunk by chunk. The session's
// context must hold n_ctx tokens and it must have been made with logits_all.
// Too few tokens for two chunks is an Error saying how many are needed.
PerplexityReport evaluate_perplexity(Session& s, const std::vector<int32_t>& tokens, const PerplexityRun& run);
// Scores the base file's tokens against its stored log-probabilities
// (run.n_ctx and run.n_chunks are taken from the file; write_base is ignored).
PerplexityReport evaluate_kl_divergence(Session& s, KldBaseReader& base, const PerplexityRun& run);

// Text output shaped like llama-perplexity's: the per-chunk line for a
// chunk (KLD mode: one table row), and the closing summary.
std::string format_chunk_line(const PerplexityReport& r);  // "[3]12.3456," or a KLD table row
std::string format_kld_table_header();
std::string format_summary(const PerplexityReport& r);
std::string format_json(const PerplexityReport& r);

}  // namespace edgellm
