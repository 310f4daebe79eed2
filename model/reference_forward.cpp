#include "model/reference_forward.h"

#include <cmath>

#include "base/error.h"

namespace edgellm {

namespace {

using Mat = std::vector<double>;  // [rows][cols]

Mat dequant(const WeightView& w) {
  Mat out(size_t(w.rows * w.cols));
  std::vector<float> row(size_t(w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, w.data + size_t(r) * w.row_bytes(), row.data(), w.cols);
    for (int64_t c = 0; c < w.cols; ++c) out[size_t(r * w.cols + c)] = row[size_t(c)];
  }
  return out;
}

// y[T][rows] = x[T][cols] * W^T
std::vector<double> apply(const WeightView& w, const std::vector<double>& x, size_t T) {
  const Mat W = dequant(w);
  std::vector<double> y(T * size_t(w.rows));
  for (size_t t = 0; t < T; ++t)
    for (int64_t r = 0; r < w.rows; ++r) {
      double s = 0;
      for (int64_t c = 0; c < w.cols; ++c) s += W[size_t(r * w.cols + c)] * x[t * size_t(w.cols) + size_t(c)];
      y[t * size_t(w.rows) + size_t(r)] = s;
    }
  return y;
}

// w empty: no weight (Gemma 4's value norm).
void rmsnorm(double* x, const std::vector<float>& w, int64_t n, double eps) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const double s = 1.0 / std::sqrt(ss / double(n) + eps);
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * s * (w.empty() ? 1.0 : double(w[size_t(i)]));
}

double gelu(double a) { return 0.5 * a * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (a + 0.044715 * a * a * a))); }

// local: a sliding-window layer's own base (and no scaling, and no
// frequency factors), where it has one; n_rot: the layer's rotated dims.
void rope(double* x, int64_t pos, const HParams& hp, const std::vector<float>& factors, bool neox, bool local,
          int64_t n_rot) {
  const int64_t half = n_rot / 2;
  const double base = local ? hp.rope_base_swa : hp.rope_base, scale = local ? hp.rope_freq_scale_swa : hp.rope_freq_scale;
  for (int64_t i = 0; i < half; ++i) {
    double freq = std::pow(base, -2.0 * double(i) / double(n_rot)) * scale;
    if (!factors.empty() && !local) freq /= factors[size_t(i)];
    // attn_factor scales the rotated dims of q and k (cos and sin both).
    const double th = double(pos) * freq, c = std::cos(th) * hp.rope_attn_factor, s = std::sin(th) * hp.rope_attn_factor;
    const int64_t ia = neox ? i : 2 * i, ib = neox ? i + half : 2 * i + 1;
    const double a = x[ia], b = x[ib];
    x[ia] = a * c - b * s;
    x[ib] = a * s + b * c;
  }
}

}  // namespace

std::vector<double> reference_forward(const Model& m, const std::vector<int32_t>& tokens, int64_t n_ctx) {
  const HParams& hp = m.hparams();
  const size_t T = tokens.size();
  const std::vector<float>& factors = m.rope_factors(n_ctx > 0 ? n_ctx : int64_t(T));
  const int64_t E = hp.n_embd;
  const bool neox = m.arch().rope == RopeStyle::Neox;
  std::vector<double> x(T * size_t(E));
  std::vector<float> row(static_cast<size_t>(E));
  for (size_t t = 0; t < T; ++t) {
    m.embed(tokens[t], row.data());
    for (int64_t i = 0; i < E; ++i) x[t * size_t(E) + size_t(i)] = row[size_t(i)];
  }
  if (m.arch().embed_scale)
    for (double& v : x) v *= std::sqrt(double(E));

  // Gemma 4's per-layer inputs [T][n_layer * P], written out from the model
  // card's formula: (rmsnorm(W x / sqrt(E)) + embd_pl(token) * sqrt(P)) / sqrt(2).
  const int64_t P = hp.n_embd_per_layer, LP = hp.n_layer * P;
  std::vector<double> pl;
  if (P > 0) {
    pl = apply(m.per_layer_model_proj(), x, T);
    std::vector<float> tok(static_cast<size_t>(LP));
    const WeightView& emb = m.per_layer_token_embd();
    for (size_t t = 0; t < T; ++t) {
      dequantize_row(emb.type, emb.data + size_t(tokens[t]) * emb.row_bytes(), tok.data(), LP);
      double* r = &pl[t * size_t(LP)];
      for (int64_t i = 0; i < LP; ++i) r[i] /= std::sqrt(double(E));
      for (int64_t l = 0; l < hp.n_layer; ++l) rmsnorm(r + l * P, m.per_layer_proj_norm(), P, hp.rms_eps);
      for (int64_t i = 0; i < LP; ++i) r[i] = (r[i] + tok[size_t(i)] * std::sqrt(double(P))) / std::sqrt(2.0);
    }
  }

  // Each layer's keys and values, kept for the layers that share them.
  std::vector<std::vector<double>> keys(m.layers().size()), values(m.layers().size());
  for (size_t il = 0; il < m.layers().size(); ++il) {
    const LayerWeights& L = m.layers()[il];
    const int64_t l = int64_t(il), hd = hp.head_dim_at(l), hdv = hp.head_dim_v_at(l), n_rot = hp.n_rot_at(l);
    const int64_t q_dim = hp.q_dim_at(l), k_dim = hp.k_dim_at(l), v_dim = hp.v_dim_at(l);
    const bool ropes = m.arch().ropes_layer(l);
    const bool local = hp.local_rope() && hp.sliding(l);
    std::vector<double> xn = x;
    for (size_t t = 0; t < T; ++t) rmsnorm(&xn[t * size_t(E)], L.attn_norm, E, hp.rms_eps);
    std::vector<double> q = apply(L.wq, xn, T);
    for (size_t t = 0; t < T; ++t) {
      double* qt = &q[t * size_t(q_dim)];
      for (int64_t i = 0; i < q_dim && !L.bq.empty(); ++i) qt[i] += L.bq[size_t(i)];
      for (int64_t h = 0; h < hp.n_head; ++h) {
        if (!L.q_norm.empty()) rmsnorm(qt + h * hd, L.q_norm, hd, hp.rms_eps);
        if (ropes) rope(qt + h * hd, int64_t(t), hp, factors, neox, local, n_rot);
      }
    }
    if (hp.owns_kv(l)) {
      std::vector<double> k = apply(L.wk, xn, T), v = apply(L.wv, xn, T);
      for (size_t t = 0; t < T; ++t) {
        double* kt = &k[t * size_t(k_dim)];
        double* vt = &v[t * size_t(v_dim)];
        for (int64_t i = 0; i < k_dim && !L.bk.empty(); ++i) kt[i] += L.bk[size_t(i)];
        for (int64_t i = 0; i < v_dim && !L.bv.empty(); ++i) vt[i] += L.bv[size_t(i)];
        for (int64_t h = 0; h < hp.n_head_kv_at(l); ++h) {
          if (!L.k_norm.empty()) rmsnorm(kt + h * hd, L.k_norm, hd, hp.rms_eps);
          if (m.arch().v_norm) rmsnorm(vt + h * hdv, {}, hdv, hp.rms_eps);
          if (ropes) rope(kt + h * hd, int64_t(t), hp, factors, neox, local, n_rot);
        }
      }
      keys[il] = std::move(k);
      values[il] = std::move(v);
    }
    const size_t src = size_t(hp.kv_source(l));
    const std::vector<double>& k = keys[src];
    const std::vector<double>& v = values[src];
    const double scale = m.arch().unit_attn_scale ? 1.0 : 1.0 / std::sqrt(double(hd));
    std::vector<double> att(T * size_t(hp.n_head * hdv), 0.0), p(T);
    for (size_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < hp.n_head; ++h) {
        const int64_t kvh = h / (hp.n_head / hp.n_head_kv_at(l));
        double mx = -1e300;
        const size_t s0 = size_t(hp.first_visible(l, int64_t(t)));  // sliding window, else 0
        for (size_t s = s0; s <= t; ++s) {
          double d = 0;
          for (int64_t i = 0; i < hd; ++i)
            d += q[t * size_t(q_dim) + size_t(h * hd + i)] * k[s * size_t(k_dim) + size_t(kvh * hd + i)];
          p[s] = d * scale;
          if (hp.attn_softcap > 0) p[s] = hp.attn_softcap * std::tanh(p[s] / hp.attn_softcap);
          mx = std::max(mx, p[s]);
        }
        double sum = 0;
        for (size_t s = s0; s <= t; ++s) sum += (p[s] = std::exp(p[s] - mx));
        for (size_t s = s0; s <= t; ++s)
          for (int64_t i = 0; i < hdv; ++i)
            att[t * size_t(hp.n_head * hdv) + size_t(h * hdv + i)] +=
                p[s] / sum * v[s * size_t(v_dim) + size_t(kvh * hdv + i)];
      }
    std::vector<double> o = apply(L.wo, att, T);
    if (!L.attn_post_norm.empty())
      for (size_t t = 0; t < T; ++t) rmsnorm(&o[t * size_t(E)], L.attn_post_norm, E, hp.rms_eps);
    for (size_t i = 0; i < x.size(); ++i) x[i] += o[i];
    xn = x;
    for (size_t t = 0; t < T; ++t) rmsnorm(&xn[t * size_t(E)], L.ffn_norm, E, hp.rms_eps);
    std::vector<double> g = apply(L.w_gate, xn, T), u = apply(L.w_up, xn, T);
    const bool is_gelu = m.arch().ffn == FfnActivation::GeluTanh;
    for (size_t i = 0; i < g.size(); ++i) {
      const double a = g[i];
      g[i] = (is_gelu ? gelu(a) : a / (1.0 + std::exp(-a))) * u[i];
    }
    std::vector<double> d = apply(L.w_down, g, T);
    if (!L.ffn_post_norm.empty())
      for (size_t t = 0; t < T; ++t) rmsnorm(&d[t * size_t(E)], L.ffn_post_norm, E, hp.rms_eps);
    for (size_t i = 0; i < x.size(); ++i) x[i] += d[i];
    if (P > 0) {  // x += post_norm(proj(gelu(inp_gate x) * this layer's input))
      std::vector<double> gp = apply(L.inp_gate, x, T);
      for (size_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < P; ++i) {
          double& a = gp[t * size_t(P) + size_t(i)];
          a = gelu(a) * pl[t * size_t(LP) + size_t(l * P + i)];
        }
      std::vector<double> y = apply(L.proj, gp, T);
      for (size_t t = 0; t < T; ++t) rmsnorm(&y[t * size_t(E)], L.pl_post_norm, E, hp.rms_eps);
      for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
    }
    for (double& xi : x) xi *= L.out_scale;
  }
  for (size_t t = 0; t < T; ++t) rmsnorm(&x[t * size_t(E)], m.output_norm(), E, hp.rms_eps);
  std::vector<double> logits = apply(m.output(), x, T);
  if (hp.final_softcap > 0)
    for (double& v : logits) v = hp.final_softcap * std::tanh(v / hp.final_softcap);
  return logits;
}

}  // namespace edgellm
