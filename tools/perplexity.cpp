// Perplexity and KL divergence by llama-perplexity's method and file format
// (see tools/perplexity.h for both). The per-position arithmetic mirrors
// llama.cpp's float/double mix, so identical logits give identical numbers.
#include "tools/perplexity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "base/input_file.h"
#include "base/json.h"
#include "runtime/session.h"

namespace edgellm {

// ---------------------------------------------------------------- file format

double encode_log_prob_row(const float* logits, int64_t n_vocab, int32_t tok, uint16_t* row) {
  float max_logit = logits[0], min_logit = logits[0];
  for (int64_t i = 1; i < n_vocab; ++i) {
    max_logit = std::max(max_logit, logits[i]);
    min_logit = std::min(min_logit, logits[i]);
  }
  min_logit = std::max(min_logit, max_logit - 16);  // log-probs below max - 16 all become the floor
  double sum_exp = 0.0;
  for (int64_t i = 0; i < n_vocab; ++i) sum_exp += std::exp(logits[i] - max_logit);
  const float log_sum_exp = float(std::log(sum_exp));
  const float min_log_prob = min_logit - max_logit - log_sum_exp;
  const float scale = (max_logit - min_logit) / 65535.f;
  std::memcpy(row, &scale, sizeof(float));
  std::memcpy(row + 2, &min_log_prob, sizeof(float));
  uint16_t* q = row + 4;
  if (scale != 0.0f) {
    const float inv_scale = 1 / scale;
    for (int64_t i = 0; i < n_vocab; ++i) {
      // llama.cpp rounds to nearest (even); the clamp only guards the top
      // value against float rounding past 65535.
      q[i] = logits[i] > min_logit ? uint16_t(std::min(65535L, std::lrintf(inv_scale * (logits[i] - min_logit)))) : 0;
    }
  } else {
    std::memset(q, 0, size_t(n_vocab) * sizeof(uint16_t));
  }
  if (n_vocab % 2) q[n_vocab] = 0;  // the padding
  return max_logit + log_sum_exp - logits[tok];
}

void decode_log_prob_row(const uint16_t* row, int64_t n_vocab, float* log_probs) {
  float scale, min_log_prob;
  std::memcpy(&scale, row, sizeof(float));
  std::memcpy(&min_log_prob, row + 2, sizeof(float));
  for (int64_t i = 0; i < n_vocab; ++i) log_probs[i] = scale * row[4 + i] + min_log_prob;
}

namespace {

constexpr char kMagic[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};
constexpr int64_t kHeaderBytes = 8 + 3 * 4;

unsigned __int128 expected_file_bytes(int64_t n_ctx, int64_t n_vocab, int64_t n_chunk) {
  using U = unsigned __int128;
  return U(kHeaderBytes) + U(4) * U(n_ctx) * U(n_chunk) +
         U(2) * U(n_chunk) * U(scored_per_chunk(n_ctx)) * U(kld_row_u16s(n_vocab));
}

void check_header_values(const std::string& what, const KldBaseHeader& h) {
  if (h.n_ctx < 4)
    fail(what, ": context size ", h.n_ctx, " in the header is too small (at least 4: each chunk scores its second half)");
  if (h.n_vocab < 1 || h.n_vocab > (1 << 28)) fail(what, ": vocabulary size ", h.n_vocab, " in the header is not sane");
  if (h.n_chunk < 1) fail(what, ": chunk count ", h.n_chunk, " in the header must be at least 1");
}

}  // namespace

KldBaseWriter::KldBaseWriter(const std::string& path, const KldBaseHeader& h) : path_(path) {
  check_header_values("KL-divergence base " + path, h);
  if (int64_t(h.tokens.size()) != int64_t(h.n_ctx) * h.n_chunk)
    fail("KL-divergence base ", path, ": ", h.tokens.size(), " tokens given for ", h.n_chunk, " chunks of ", h.n_ctx);
  out_ = std::make_unique<DurableFile>(path);
  n_vocab_ = h.n_vocab;
  rows_left_ = int64_t(h.n_chunk) * scored_per_chunk(h.n_ctx);
  out_->write(kMagic, 8);
  out_->write(&h.n_ctx, 4);
  out_->write(&h.n_vocab, 4);
  out_->write(&h.n_chunk, 4);
  out_->write(h.tokens.data(), 4 * h.tokens.size());
}

KldBaseWriter::~KldBaseWriter() = default;  // an unfinished file never appears

void KldBaseWriter::write_rows(const uint16_t* rows, int64_t n_rows) {
  if (!out_) fail("KL-divergence base ", path_, ": already finished");
  if (n_rows > rows_left_) fail("KL-divergence base ", path_, ": more rows than the header describes");
  out_->write(rows, sizeof(uint16_t) * size_t(n_rows * kld_row_u16s(n_vocab_)));
  rows_left_ -= n_rows;
}

void KldBaseWriter::finish() {
  if (!out_) return;
  if (rows_left_ != 0) fail("KL-divergence base ", path_, ": ", rows_left_, " rows were never written");
  out_->commit();
  out_.reset();
}

KldBaseReader::KldBaseReader(const std::string& path) : path_(path) {
  const std::string what = "KL-divergence base " + path;
  const int fd = open_regular_file(path, "KL-divergence base file");
  struct stat st {};
  const uint64_t size = ::fstat(fd, &st) == 0 ? uint64_t(st.st_size) : 0;
  f_ = ::fdopen(fd, "rb");
  if (!f_) {
    ::close(fd);
    fail("cannot open the KL-divergence base file ", path, ": ", std::strerror(errno));
  }
  char magic[8] = {};
  if (size < 8 || std::fread(magic, 1, 8, f_) != 8 || std::memcmp(magic, kMagic, 8) != 0)
    fail(path, " is not a llama-perplexity KL-divergence base file (it does not start with \"_logits_\")");
  if (size < uint64_t(kHeaderBytes) || std::fread(&h_.n_ctx, 4, 1, f_) != 1 || std::fread(&h_.n_vocab, 4, 1, f_) != 1 ||
      std::fread(&h_.n_chunk, 4, 1, f_) != 1)
    fail(what, " is truncated: ", size, " bytes, too short for its header (", kHeaderBytes, " bytes)");
  check_header_values(what, h_);
  const unsigned __int128 want = expected_file_bytes(h_.n_ctx, h_.n_vocab, h_.n_chunk);
  if (want != size) {
    const bool short_file = size < want;
    fail(what, short_file ? " is truncated: " : " is too long: ", size, " bytes, but its header (n_ctx ", h_.n_ctx,
         ", n_vocab ", h_.n_vocab, ", ", h_.n_chunk, " chunks) describes ",
         want > (unsigned __int128)UINT64_MAX ? std::string("more than 2^64") : std::to_string(uint64_t(want)));
  }
  h_.tokens.resize(size_t(h_.n_ctx) * size_t(h_.n_chunk));
  if (std::fread(h_.tokens.data(), 4, h_.tokens.size(), f_) != h_.tokens.size())
    fail(what, ": cannot read its tokens: ", std::strerror(errno));
  for (size_t i = 0; i < h_.tokens.size(); ++i)
    if (h_.tokens[i] < 0 || h_.tokens[i] >= h_.n_vocab)
      fail(what, ": token ", i, " has id ", h_.tokens[i], ", outside its vocabulary of ", h_.n_vocab);
  rows_left_ = int64_t(h_.n_chunk) * scored_per_chunk(h_.n_ctx);
}

KldBaseReader::~KldBaseReader() {
  if (f_) std::fclose(f_);
}

void KldBaseReader::read_rows(uint16_t* rows, int64_t n_rows) {
  if (n_rows > rows_left_) fail("KL-divergence base ", path_, ": reading past its last row");
  const size_t n = size_t(n_rows * kld_row_u16s(h_.n_vocab));
  if (std::fread(rows, sizeof(uint16_t), n, f_) != n)
    fail("KL-divergence base ", path_, ": read failed (", std::strerror(errno), ")");
  rows_left_ -= n_rows;
}

// ------------------------------------------------------------ one position

double token_nll(const float* logits, int64_t n_vocab, int32_t tok) {
  float max_logit = logits[0];
  for (int64_t i = 1; i < n_vocab; ++i) max_logit = std::max(max_logit, logits[i]);
  double sum_exp = 0.0;
  for (int64_t i = 0; i < n_vocab; ++i) sum_exp += std::exp(logits[i] - max_logit);
  return -(logits[tok] - max_logit - std::log(sum_exp));
}

KldTerms kld_terms(const float* logits, int64_t n_vocab, const uint16_t* base_row, int32_t tok) {
  float max_logit = logits[0];
  int64_t imax = 0;
  for (int64_t i = 1; i < n_vocab; ++i)
    if (logits[i] > max_logit) max_logit = logits[i], imax = i;
  double sum_exp = 0.0;
  for (int64_t i = 0; i < n_vocab; ++i) sum_exp += std::exp(logits[i] - max_logit);
  const float log_sum_exp = float(std::log(sum_exp));
  float scale, min_log_prob;
  std::memcpy(&scale, base_row, sizeof(float));
  std::memcpy(&min_log_prob, base_row + 2, sizeof(float));
  const uint16_t* q = base_row + 4;

  KldTerms t;
  const float nll = max_logit + log_sum_exp - logits[tok];
  const float nll_base = -(scale * q[tok] + min_log_prob);
  t.nll = nll;
  t.nll_base = nll_base;
  const float log_norm = max_logit + log_sum_exp;
  double sum = 0;
  int64_t imax_base = -1;
  float p_log_base_max = 0;
  for (int64_t i = 0; i < n_vocab; ++i) {
    const float p_log_base = scale * q[i] + min_log_prob;
    if (i == 0 || p_log_base > p_log_base_max) p_log_base_max = p_log_base, imax_base = i;
    if (p_log_base > -16.f) sum += std::exp(p_log_base) * (p_log_base - logits[i] + log_norm);
  }
  t.kld = sum;
  t.same_top = imax == imax_base;
  t.p_diff = std::exp(-nll) - std::exp(-nll_base);
  return t;
}

// ------------------------------------------------------------ statistics

double PplAccum::ppl() const { return count ? std::exp(nll / double(count)) : 0.0; }

double PplAccum::ppl_err() const {
  if (count < 2) return 0.0;
  const double mean = nll / double(count);
  const double var = nll2 / double(count) - mean * mean;
  return var > 0 ? std::sqrt(var / double(count - 1)) * ppl() : 0.0;
}

void KldAccum::add(const KldTerms& t) {
  sum_nll += t.nll, sum_nll2 += t.nll * t.nll;
  sum_nll_base += t.nll_base, sum_nll_base2 += t.nll_base * t.nll_base;
  sum_nll_nll_base += t.nll * t.nll_base;
  sum_kld += t.kld, sum_kld2 += t.kld * t.kld;
  const double d2 = t.p_diff * t.p_diff;
  sum_p_diff += t.p_diff, sum_p_diff2 += d2, sum_p_diff4 += d2 * d2;
  max_p_diff = std::max(max_p_diff, std::fabs(t.p_diff));
  n_same_top += t.same_top;
  ++count;
  kld_values.push_back(float(t.kld));
  p_diff_values.push_back(float(t.p_diff));
}

namespace {

struct MeanErr {
  double mean = 0, err = 0;
};
// llama-perplexity's mean_and_uncertainty: no uncertainty from 10 values or fewer.
MeanErr mean_and_uncertainty(double sum, double sum2, int64_t count) {
  if (count < 1) return {};
  const double f = sum / double(count);
  double df = sum2 / double(count) - f * f;
  df = df > 0 && count > 10 ? std::sqrt(df / double(count - 1)) : 0.;
  return {f, df};
}
double covariance(double suma, double sumb, double sumab, int64_t count) {
  if (count < 10) return 0.0;
  return (sumab / double(count) - (suma / double(count)) * (sumb / double(count))) / double(count - 1);
}
// llama-perplexity's percentile of sorted values (linear interpolation).
double percentile(const std::vector<float>& v, double fraction) {
  if (v.empty()) return 0;
  if (fraction <= 0) return v.front();
  if (fraction >= 1) return v.back();
  float p = float(fraction * double(v.size() - 1));
  const size_t ip = size_t(p);
  p -= float(ip);
  return (1 - p) * v[ip] + p * v[std::min(ip + 1, v.size() - 1)];
}
double median(const std::vector<float>& v) {
  if (v.empty()) return 0;
  return v.size() % 2 == 0 ? 0.5f * (v[v.size() / 2] + v[v.size() / 2 - 1]) : v[v.size() / 2];
}

}  // namespace

void finish_report(PerplexityReport& r, const PplAccum& a) {
  r.n_scored = a.count;
  r.ppl = a.ppl();
  r.ppl_err = a.ppl_err();
  r.nll_mean = a.count ? a.nll / double(a.count) : 0;
}

void finish_report(PerplexityReport& r, KldAccum& k) {
  r.has_kld = true;
  r.n_scored = k.count;
  const MeanErr lp = mean_and_uncertainty(k.sum_nll, k.sum_nll2, k.count);
  r.ppl = std::exp(lp.mean);
  r.ppl_err = r.ppl * lp.err;
  r.nll_mean = lp.mean;
  const MeanErr lb = mean_and_uncertainty(k.sum_nll_base, k.sum_nll_base2, k.count);
  r.ppl_base = std::exp(lb.mean);
  r.nll_base_mean = lb.mean;
  r.ppl_base_err = r.ppl_base * lb.err;
  const double cov = covariance(k.sum_nll, k.sum_nll_base, k.sum_nll_nll_base, k.count);
  r.cor = lp.err > 0 && lb.err > 0 ? cov / (lp.err * lb.err) : 0;
  r.ln_ratio = lp.mean - lb.mean;
  r.ln_ratio_err = std::sqrt(std::max(0.0, lp.err * lp.err + lb.err * lb.err - 2.0 * cov));
  const MeanErr kl = mean_and_uncertainty(k.sum_kld, k.sum_kld2, k.count);
  r.kld_mean = kl.mean;
  r.kld_err = kl.err;
  const MeanErr dp = mean_and_uncertainty(k.sum_p_diff, k.sum_p_diff2, k.count);
  r.mean_dp = 100.0 * dp.mean;
  r.mean_dp_err = 100.0 * dp.err;
  const MeanErr mse = mean_and_uncertainty(k.sum_p_diff2, k.sum_p_diff4, k.count);
  const double rms = std::sqrt(mse.mean);
  r.rms_dp = 100.0 * rms;
  r.rms_dp_err = rms > 0 ? 100.0 * 0.5 / rms * mse.err : 0;
  const double top = k.count ? double(k.n_same_top) / double(k.count) : 0;
  r.same_top = 100.0 * top;
  r.same_top_err = k.count > 1 ? 100.0 * std::sqrt(top * (1 - top) / double(k.count - 1)) : 0;
  std::vector<float> sorted = k.kld_values;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty()) {
    r.kld_max = sorted.back();
    r.kld_min = sorted.front();
    r.kld_p99 = percentile(sorted, 0.99);
    r.kld_p90 = percentile(sorted, 0.90);
    r.kld_median = median(sorted);
  }
}

// ------------------------------------------------------------ the driver

namespace {

// Positions scored per group of rows handed to the thread pool: bounds the
// row buffers (a 152k vocabulary stores 300 KB a row).
constexpr int64_t kRowGroup = 32;

// Evaluates n_chunk chunks of n_ctx tokens from an empty cache each and
// hands the scored rows over: on_rows(logits [n][n_vocab], next tokens [n], n),
// in order; chunk_done() after each chunk.
void run_chunks(Session& s, const std::vector<int32_t>& tokens, int64_t n_ctx, int64_t n_chunk, int32_t bos,
                const std::function<void(const float*, const int32_t*, int64_t)>& on_rows,
                const std::function<void()>& chunk_done) {
  if (s.n_ctx() < n_ctx) fail("perplexity: the session's context of ", s.n_ctx(), " cannot hold chunks of ", n_ctx);
  const int64_t n_vocab = s.model().hparams().n_vocab, first = n_ctx / 2, nb = s.n_batch();
  std::vector<int32_t> chunk(static_cast<size_t>(n_ctx));
  for (int64_t c = 0; c < n_chunk; ++c) {
    const int32_t* orig = tokens.data() + c * n_ctx;
    std::copy(orig, orig + n_ctx, chunk.begin());
    if (bos >= 0) chunk[0] = bos;
    s.truncate(0);
    for (int64_t b = 0; b < n_ctx; b += nb) {
      const int64_t n = std::min(nb, n_ctx - b);
      // Rows [lo, hi) of this batch predict a token of the chunk's second half.
      const int64_t lo = std::max(b, first), hi = std::min(b + n, n_ctx - 1);
      if (lo >= hi) {
        s.decode(chunk.data() + b, n, false);
        continue;
      }
      const float* out = s.decode(chunk.data() + b, n, true);
      on_rows(out + (lo - b) * n_vocab, orig + lo + 1, hi - lo);
    }
    chunk_done();
  }
}

// f(i) for i in [0, n) over the session's threads.
template <class F>
void parallel_rows(Session& s, int64_t n, F&& f) {
  s.pool().run([&](int ith, int nth) {
    for (int64_t i = ith; i < n; i += nth) f(i);
  });
}

}  // namespace

PerplexityReport evaluate_perplexity(Session& s, const std::vector<int32_t>& tokens, const PerplexityRun& run) {
  const int64_t n_ctx = run.n_ctx, n_vocab = s.model().hparams().n_vocab;
  if (n_ctx < 4) fail("perplexity: a context of ", n_ctx, " is too small (at least 4)");
  const int64_t n_tokens = int64_t(tokens.size());
  if (n_tokens < 2 * n_ctx)
    fail("perplexity: the text tokenizes to only ", n_tokens, " tokens; a context of ", n_ctx, " needs at least ",
         2 * n_ctx, " (2 x -c): give a longer text or a smaller -c");
  for (int32_t t : tokens)
    if (t < 0 || t >= n_vocab) fail("perplexity: token id ", t, " is outside the model's vocabulary of ", n_vocab);
  int64_t n_chunk = n_tokens / n_ctx;
  if (run.n_chunks > 0) n_chunk = std::min(n_chunk, run.n_chunks);

  PerplexityReport r;
  r.n_ctx = n_ctx, r.n_vocab = n_vocab, r.n_tokens = n_tokens;
  std::unique_ptr<KldBaseWriter> writer;
  const int64_t row_u16s = kld_row_u16s(n_vocab);
  std::vector<uint16_t> rows;
  if (!run.write_base.empty()) {
    KldBaseHeader h;
    h.n_ctx = int32_t(n_ctx), h.n_vocab = int32_t(n_vocab), h.n_chunk = int32_t(n_chunk);
    h.tokens.assign(tokens.begin(), tokens.begin() + n_chunk * n_ctx);
    writer = std::make_unique<KldBaseWriter>(run.write_base, h);
    rows.resize(size_t(kRowGroup * row_u16s));
  }
  PplAccum acc;
  std::vector<double> nll(static_cast<size_t>(kRowGroup));
  auto on_rows = [&](const float* logits, const int32_t* next, int64_t n) {
    for (int64_t g = 0; g < n; g += kRowGroup) {
      const int64_t m = std::min(kRowGroup, n - g);
      parallel_rows(s, m, [&](int64_t i) {
        const float* row = logits + (g + i) * n_vocab;
        nll[size_t(i)] = writer ? encode_log_prob_row(row, n_vocab, next[g + i], rows.data() + i * row_u16s)
                                : token_nll(row, n_vocab, next[g + i]);
      });
      for (int64_t i = 0; i < m; ++i) acc.add(nll[size_t(i)]);
      if (writer) writer->write_rows(rows.data(), m);
    }
  };
  auto chunk_done = [&] {
    r.n_chunks = int64_t(r.chunk_ppl.size()) + 1;
    finish_report(r, acc);
    r.chunk_ppl.push_back(r.ppl);
    if (run.on_chunk) run.on_chunk(r);
  };
  run_chunks(s, tokens, n_ctx, n_chunk, run.bos, on_rows, chunk_done);
  if (writer) writer->finish();
  return r;
}

PerplexityReport evaluate_kl_divergence(Session& s, KldBaseReader& base, const PerplexityRun& run) {
  const KldBaseHeader& h = base.header();
  const int64_t n_vocab = s.model().hparams().n_vocab;
  if (h.n_vocab != n_vocab)
    fail("the KL-divergence base file was written with a vocabulary of ", h.n_vocab, " tokens; this model has ",
         n_vocab, " (score a model of the same vocabulary)");
  PerplexityReport r;
  r.n_ctx = h.n_ctx, r.n_vocab = n_vocab, r.n_tokens = int64_t(h.tokens.size());
  const int64_t row_u16s = kld_row_u16s(n_vocab);
  std::vector<uint16_t> rows(size_t(kRowGroup * row_u16s));
  std::vector<KldTerms> terms(static_cast<size_t>(kRowGroup));
  KldAccum acc;
  auto on_rows = [&](const float* logits, const int32_t* next, int64_t n) {
    for (int64_t g = 0; g < n; g += kRowGroup) {
      const int64_t m = std::min(kRowGroup, n - g);
      base.read_rows(rows.data(), m);
      parallel_rows(s, m, [&](int64_t i) {
        terms[size_t(i)] = kld_terms(logits + (g + i) * n_vocab, n_vocab, rows.data() + i * row_u16s, next[g + i]);
      });
      for (int64_t i = 0; i < m; ++i) acc.add(terms[size_t(i)]);
    }
  };
  auto chunk_done = [&] {
    r.n_chunks = int64_t(r.chunk_ppl.size()) + 1;
    finish_report(r, acc);
    r.chunk_ppl.push_back(r.ppl);
    if (run.on_chunk) run.on_chunk(r);
  };
  run_chunks(s, h.tokens, h.n_ctx, h.n_chunk, run.bos, on_rows, chunk_done);
  return r;
}

// ------------------------------------------------------------ output

namespace {
std::string fmt(const char* f, auto... v) {
  char buf[512];
  std::snprintf(buf, sizeof buf, f, v...);
  return buf;
}
std::string num(double v) { return std::isfinite(v) ? fmt("%.9g", v) : "null"; }
}  // namespace

std::string format_kld_table_header() {
  return "chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              "
         "\xce\x94p RMS            Same top p\n";
}

std::string format_chunk_line(const PerplexityReport& r) {
  const int n = int(r.chunk_ppl.size());
  if (!r.has_kld) return fmt("[%d]%.4lf,", n, r.chunk_ppl.back());
  return fmt("%4d    %9.4lf \xc2\xb1 %9.4lf    %10.5lf \xc2\xb1 %10.5lf    %10.5lf \xc2\xb1 %10.5lf    %6.3lf \xc2\xb1 %6.3lf %%"
             "    %6.3lf \xc2\xb1 %6.3lf %%\n",
             n, r.ppl, r.ppl_err, r.ln_ratio, r.ln_ratio_err, r.kld_mean, r.kld_err, r.rms_dp, r.rms_dp_err,
             r.same_top, r.same_top_err);
}

std::string format_summary(const PerplexityReport& r) {
  if (!r.has_kld) return fmt("Final estimate: PPL = %.4lf +/- %.5lf\n", r.ppl, r.ppl_err);
  std::string o = "====== Perplexity statistics ======\n";
  o += fmt("Mean PPL(Q)                   : %10.6lf \xc2\xb1 %10.6lf\n", r.ppl, r.ppl_err);
  o += fmt("Mean PPL(base)                : %10.6lf \xc2\xb1 %10.6lf\n", r.ppl_base, r.ppl_base_err);
  o += fmt("Cor(ln(PPL(Q)), ln(PPL(base))): %6.2lf%%\n", 100.0 * r.cor);
  o += fmt("Mean ln(PPL(Q)/PPL(base))     : %10.6lf \xc2\xb1 %10.6lf\n", r.ln_ratio, r.ln_ratio_err);
  o += "\n====== KL divergence statistics ======\n";
  o += fmt("Mean    KLD: %10.6lf \xc2\xb1 %10.6lf\n", r.kld_mean, r.kld_err);
  o += fmt("Maximum KLD: %10.6f\n", r.kld_max);
  o += fmt("99.0%%   KLD: %10.6f\n", r.kld_p99);
  o += fmt("90.0%%   KLD: %10.6f\n", r.kld_p90);
  o += fmt("Median  KLD: %10.6f\n", r.kld_median);
  o += fmt("Minimum KLD: %10.6f\n", r.kld_min);
  o += "\n====== Token probability statistics ======\n";
  o += fmt("Mean    \xce\x94p: %6.3lf \xc2\xb1 %5.3lf %%\n", r.mean_dp, r.mean_dp_err);
  o += fmt("RMS \xce\x94p    : %6.3lf \xc2\xb1 %5.3lf %%\n", r.rms_dp, r.rms_dp_err);
  o += fmt("Same top p: %6.3lf \xc2\xb1 %5.3lf %%\n", r.same_top, r.same_top_err);
  return o;
}

std::string format_json(const PerplexityReport& r) {
  std::string o = "{";
  o += "\"n_ctx\":" + std::to_string(r.n_ctx) + ",\"n_vocab\":" + std::to_string(r.n_vocab) +
       ",\"n_tokens\":" + std::to_string(r.n_tokens) + ",\"n_chunks\":" + std::to_string(r.n_chunks) +
       ",\"n_scored\":" + std::to_string(r.n_scored);
  o += ",\"ppl\":" + num(r.ppl) + ",\"ppl_err\":" + num(r.ppl_err) + ",\"ln_ppl\":" + num(r.nll_mean) +
       ",\"chunk_ppl\":[";
  for (size_t i = 0; i < r.chunk_ppl.size(); ++i) {
    if (i) o += ',';
    o += num(r.chunk_ppl[i]);
  }
  o += "]";
  auto kv = [&](const char* k, double v) { o += std::string(",\"") + k + "\":" + (r.has_kld ? num(v) : "null"); };
  kv("kld_mean", r.kld_mean);
  kv("kld_err", r.kld_err);
  kv("kld_median", r.kld_median);
  kv("kld_p99", r.kld_p99);
  kv("kld_max", r.kld_max);
  kv("same_top", r.same_top);  // percent
  kv("same_top_err", r.same_top_err);
  kv("ppl_base", r.ppl_base);
  kv("ppl_base_err", r.ppl_base_err);
  kv("ln_ppl_base", r.nll_base_mean);
  kv("ln_ppl_ratio", r.ln_ratio);
  kv("ln_ppl_ratio_err", r.ln_ratio_err);
  kv("rms_dp", r.rms_dp);  // percent
  kv("mean_dp", r.mean_dp);  // percent
  return o + "}";
}

}  // namespace edgellm
