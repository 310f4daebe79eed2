// compare_logits: compare two float32 logit dumps [n_tokens][n_vocab] (no
// header; the layout of `edgellm eval --dump-logits` and bench/llamacpp_logits).
//
//   compare_logits OURS.f32 REF.f32 N_VOCAB [--min-cos 0.999] [--min-argmax 0.98]
//
// Per position: cosine similarity of the two logit rows (in double) and
// whether their argmax agrees. Prints one line of key=value pairs:
//
//   n=64 min_cos=0.999912 mean_cos=0.999987 argmax=64/64 argmax_pct=100.00
//   rel_rms=0.0051 max_abs=0.0213 worst_pos=17 mismatch_gap=... PASS
//
// rel_rms = ||ours - ref|| / ||ref|| over the whole dump; max_abs = largest
// |ours - ref|; mismatch_gap lists, for each position whose argmax differs,
// the reference's top-1 minus top-2 margin, absolute and as a share of the
// top-1 logit (pos:gap=X%; a near tie explains a flip).
// Exit status 0 when min_cos >= --min-cos and the argmax agreement fraction
// >= --min-argmax, 1 when a threshold fails, 2 on bad input.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool read_all(const char* path, std::vector<float>& out) {
  std::FILE* f = std::fopen(path, "rb");
  if (!f) return false;
  std::fseek(f, 0, SEEK_END);
  const long n = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  if (n < 0 || n % 4 != 0) {
    std::fclose(f);
    return false;
  }
  out.resize(size_t(n) / 4);
  const size_t got = std::fread(out.data(), 4, out.size(), f);
  std::fclose(f);
  return got == out.size();
}

size_t argmax(const float* x, size_t n) {
  size_t b = 0;
  for (size_t i = 1; i < n; ++i)
    if (x[i] > x[b]) b = i;
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: compare_logits OURS.f32 REF.f32 N_VOCAB [--min-cos C] [--min-argmax F]\n");
    return 2;
  }
  double min_cos_req = 0.999, min_argmax_req = 0.98;
  for (int i = 4; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--min-cos")) min_cos_req = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--min-argmax")) min_argmax_req = std::atof(argv[i + 1]);
    else {
      std::fprintf(stderr, "compare_logits: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  const long nv = std::atol(argv[3]);
  std::vector<float> a, b;
  if (!read_all(argv[1], a)) return std::fprintf(stderr, "compare_logits: cannot read %s\n", argv[1]), 2;
  if (!read_all(argv[2], b)) return std::fprintf(stderr, "compare_logits: cannot read %s\n", argv[2]), 2;
  if (nv <= 0 || a.size() != b.size() || a.empty() || a.size() % size_t(nv) != 0) {
    std::fprintf(stderr, "compare_logits: sizes differ or do not divide by n_vocab %ld (%zu vs %zu floats)\n", nv,
                 a.size(), b.size());
    return 2;
  }
  const size_t V = size_t(nv), T = a.size() / V;
  double min_cos = 2, sum_cos = 0, diff2 = 0, ref2 = 0, max_abs = 0;
  size_t agree = 0, worst = 0;
  bool finite = true;
  std::string gaps;
  for (size_t t = 0; t < T; ++t) {
    const float* x = a.data() + t * V;
    const float* y = b.data() + t * V;
    double xy = 0, xx = 0, yy = 0;
    for (size_t i = 0; i < V; ++i) {
      if (!std::isfinite(x[i]) || !std::isfinite(y[i])) finite = false;
      xy += double(x[i]) * y[i];
      xx += double(x[i]) * x[i];
      yy += double(y[i]) * y[i];
      const double d = double(x[i]) - y[i];
      diff2 += d * d;
      if (std::fabs(d) > max_abs) max_abs = std::fabs(d);
    }
    ref2 += yy;
    const double c = xx > 0 && yy > 0 ? xy / std::sqrt(xx * yy) : 0;
    sum_cos += c;
    if (c < min_cos) min_cos = c, worst = t;
    const size_t ax = argmax(x, V), ay = argmax(y, V);
    if (ax == ay) {
      ++agree;
    } else {
      float second = -INFINITY;
      for (size_t i = 0; i < V; ++i)
        if (i != ay && y[i] > second) second = y[i];
      const double gap = double(y[ay]) - second, top = std::fabs(double(y[ay]));
      char buf[80];
      std::snprintf(buf, sizeof buf, "%s%zu:%.4g=%.2g%%", gaps.empty() ? "" : ",", t, gap,
                    top > 0 ? 100.0 * gap / top : 0.0);
      gaps += buf;
    }
  }
  if (!finite) min_cos = 0;  // NaN/Inf anywhere fails the check
  const double frac = double(agree) / double(T);
  const bool pass = finite && min_cos >= min_cos_req && frac >= min_argmax_req;
  std::printf("n=%zu min_cos=%.6f mean_cos=%.6f argmax=%zu/%zu argmax_pct=%.2f rel_rms=%.3g max_abs=%.3g worst_pos=%zu "
              "mismatch_gap=%s finite=%s %s\n",
              T, min_cos, sum_cos / double(T), agree, T, 100.0 * frac, std::sqrt(diff2 / std::max(ref2, 1e-300)),
              max_abs, worst, gaps.empty() ? "-" : gaps.c_str(), finite ? "yes" : "no", pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
