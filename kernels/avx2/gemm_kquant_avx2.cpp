// Prefill GEMM for the K-quants (q2_K, q3_K, q4_K, q5_K, q6_K) and iq4_xs x q8_K
// activations, AVX2 (KernelSet::gemm; the AVX2 target region).
// Reference twin: the scalar set's gemm; tests/test_kernels_gemm.cpp.
//
// One tile for all five formats: a 4-row tile's super-blocks are first
// rewritten as plain integers by tensor/kquant_unpack (x = d*sc*q - dmin*mn,
// q unsigned 0..63, one scale and min per 16 elements), once per call, then
// every token tile reads that form from L1/L2. Per super-block and
// (row, token) pair:
//
//   isum = sum over 8 chunks of 32 bytes: vpmaddwd(vpmaddubsw(q, a), sc)
//          (u8 x s8 pairs <= 2*63*128 < 2^15: no saturation; vpmaddwd applies
//          the two sub-block scales of the chunk, int16 lanes [sc_2k x8 | sc_2k+1 x8])
//   acc += float(isum) * (d * d_a) - float(vpmaddwd(mn, bsums)) * (dmin * d_a)
//
// Micro-tile kR = 4 rows x kC = 2 tokens: 8 int32 accumulators + 2 activation
// registers + one weight and one scale register; the 8 float accumulators
// are touched once per super-block. Per 32-element chunk: 4 x (32 B of q +
// 32 B of scales) + 2 x 32 B of activations = 320 B from L1/L2 for 8 x 32 =
// 256 MACs, 3 vector ops per 32 MACs (against ~8 for the per-row vec_dot,
// which also unpacks the weights for every token).
//
// iq4_xs rides the same tile with signed weights: q holds the grid values
// (-127..113, looked up once per row tile), sc the sub-block's ls - 32 on all
// 16 lanes, no mins; vpmaddubsw then takes |q| and the activations with q's
// sign (vpsignb), one more op per (row, token) and chunk: pairs <= 2 * 127 *
// 128 < 2^15, still no saturation.
//
// Results differ from vec_dot only in the order of the float operations
// (the integer sums are exact): KernelSet::gemm_reordered.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "kernels/tile_table.h"
#include "tensor/blocks.h"
#include "tensor/kquant_unpack.h"

#include "kernels/avx2/isa_begin.h"  // AVX2 code from here to kernels/isa_end.h
#include "kernels/avx2/simd_avx2.h"

namespace edgellm {

namespace {

constexpr int kR = 4, kC = 2;

// One row's super-block in the tile's layout.
struct alignas(32) SbRow {
  uint8_t q[256];
  int16_t sc[8][16];  // chunk k: sc_2k x8, sc_2k+1 x8 (the lanes of vpmaddubsw's output)
  int16_t mn[16];
  float d, dmin;
};

inline __m256i load(const void* p) { return _mm256_load_si256(static_cast<const __m256i*>(p)); }

// iq4_xs super-block in the tile's layout: signed grid values, one scale per
// 32-element chunk, no mins.
void pack_iq4_xs(const block_iq4_xs& b, SbRow* o) {
  for (int k = 0; k < 8; ++k) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(o->q + 32 * k), values_iq4(b.qs + 16 * k));
    for (int l = 0; l < 16; ++l) o->sc[k][l] = int16_t(iq4xs_scale(b, k) - 32);
  }
  std::memset(o->mn, 0, sizeof o->mn);
  o->d = half(b.d);
  o->dmin = 0;
}

// Super-block i of row r at out[i * kR + r].
void pack_rows(GgmlType t, int64_t nb, const uint8_t* w, size_t ws, int R, SbRow* out) {
  const size_t bsz = traits(t).type_size;
  if (t == GgmlType::IQ4_XS) {
    for (int r = 0; r < R; ++r)
      for (int64_t i = 0; i < nb; ++i)
        pack_iq4_xs(reinterpret_cast<const block_iq4_xs*>(w + size_t(r) * ws)[i], &out[i * kR + r]);
    return;
  }
  KBlockInt u;
  for (int r = 0; r < R; ++r)
    for (int64_t i = 0; i < nb; ++i) {
      unpack_k_block(t, w + size_t(r) * ws + size_t(i) * bsz, &u);
      SbRow& o = out[i * kR + r];
      std::memcpy(o.q, u.q, 256);
      for (int k = 0; k < 8; ++k)
        for (int l = 0; l < 8; ++l) o.sc[k][l] = u.sc[2 * k], o.sc[k][8 + l] = u.sc[2 * k + 1];
      std::memcpy(o.mn, u.mn, sizeof o.mn);
      o.d = u.d;
      o.dmin = u.dmin;
    }
}

// kSigned: q holds signed weights (iq4_xs), multiplied through |q| and the
// activations' sign-adjusted copy.
template <int R, int C, bool kSigned>
struct TileBody {
  static void run(int64_t nb, const SbRow* w, const uint8_t* a, size_t as, float* y, size_t ldy) {
    const block_q8_K* act[C];
    for (int c = 0; c < C; ++c) act[c] = reinterpret_cast<const block_q8_K*>(a + size_t(c) * as);
    __m256 acc[R][C];
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
      const SbRow* rows = w + i * kR;
      __m256i isum[R][C];
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) isum[r][c] = _mm256_setzero_si256();
      for (int k = 0; k < 8; ++k) {
        __m256i av[C];
        for (int c = 0; c < C; ++c) av[c] = load256(act[c][i].qs + 32 * k);
        for (int r = 0; r < R; ++r) {
          const __m256i q = load(rows[r].q + 32 * k), sc = load(rows[r].sc[k]);
          if constexpr (kSigned) {
            const __m256i aq = _mm256_sign_epi8(q, q);
            for (int c = 0; c < C; ++c)
              isum[r][c] = _mm256_add_epi32(isum[r][c],
                                            _mm256_madd_epi16(_mm256_maddubs_epi16(aq, _mm256_sign_epi8(av[c], q)), sc));
          } else {
            for (int c = 0; c < C; ++c)
              isum[r][c] = _mm256_add_epi32(isum[r][c], _mm256_madd_epi16(_mm256_maddubs_epi16(q, av[c]), sc));
          }
        }
      }
      for (int c = 0; c < C; ++c) {
        const __m256i bsums = load256(act[c][i].bsums);
        const float da = act[c][i].d;
        for (int r = 0; r < R; ++r) {
          const __m256i msum = _mm256_madd_epi16(load(rows[r].mn), bsums);
          // q3_K / q6_K: the mins are an offset under the same scale; the
          // difference in int32 is the exact signed sum, where two float
          // terms would cancel (see gemm_kquant_neon.h).
          if (rows[r].d == rows[r].dmin) {
            acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(isum[r][c], msum)),
                                        _mm256_set1_ps(rows[r].d * da), acc[r][c]);
          } else {
            acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r][c]), _mm256_set1_ps(rows[r].d * da), acc[r][c]);
            acc[r][c] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(rows[r].dmin * da), acc[r][c]);
          }
        }
      }
    }
    const __m256 z = _mm256_setzero_ps();
    for (int c = 0; c < C; ++c) {
      alignas(16) float s[4];
      _mm_store_ps(s, reduce4(acc[0][c], R > 1 ? acc[R > 1 ? 1 : 0][c] : z, R > 2 ? acc[R > 2 ? 2 : 0][c] : z,
                              R > 3 ? acc[R > 3 ? 3 : 0][c] : z));
      for (int r = 0; r < R; ++r) y[size_t(c) * ldy + size_t(r)] = s[r];
    }
  }
};
template <int R, int C>
struct Tile : TileBody<R, C, false> {};
template <int R, int C>
struct TileSigned : TileBody<R, C, true> {};
using Tiles = TileTable<Tile, kR, kC>;
using TilesSigned = TileTable<TileSigned, kR, kC>;

// Scratch (GemmScratchFn): one row tile's super-blocks in the tile's layout,
//   SbRow[nb * kR]     (super-block i of row r at i * kR + r; 576 B each)
// with nb = n / 256, whatever n_rows and n_tok: e.g. a 4864-wide row tile
// 19 * 4 * 576 = 43.8 KB.
size_t gemm_scratch(int64_t n, int64_t, int64_t) { return scratch_round64(size_t(n / QK_K) * kR * sizeof(SbRow)); }

// Rows outer (a 4-row tile unpacked once, then read from L1/L2 by every token
// tile), tokens inner (the activation rows stream from L2: matmul hands over
// blocks that fit).
template <GgmlType T>
void gemm(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok, float* y,
          size_t ldy, void* scratch) {
  const int64_t nb = n / QK_K;
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* ab = static_cast<const uint8_t*>(a);
  SbRow* packed = static_cast<SbRow*>(scratch);  // gemm_scratch(n, n_rows, n_tok) bytes
  for (int64_t r0 = 0; r0 < n_rows; r0 += kR) {
    const int R = int(std::min<int64_t>(kR, n_rows - r0));
    pack_rows(T, nb, wb + size_t(r0) * ws, ws, R, packed);
    float* yr = y + size_t(r0);
    auto tile = [](int rows, int toks) {
      return T == GgmlType::IQ4_XS ? TilesSigned::get(rows, toks) : Tiles::get(rows, toks);
    };
    int64_t t0 = 0;
    for (const auto full = tile(R, kC); t0 + kC <= n_tok; t0 += kC)
      full(nb, packed, ab + size_t(t0) * as, as, yr + size_t(t0) * ldy, ldy);
    if (t0 < n_tok) tile(R, int(n_tok - t0))(nb, packed, ab + size_t(t0) * as, as, yr + size_t(t0) * ldy, ldy);
  }
}

}  // namespace

void register_gemm_kquant_avx2(KernelSet& k, bool only_missing) {
  const GemmFn fns[] = {gemm<GgmlType::Q2_K>, gemm<GgmlType::Q3_K>, gemm<GgmlType::Q4_K>, gemm<GgmlType::Q5_K>,
                        gemm<GgmlType::Q6_K>, gemm<GgmlType::IQ4_XS>};
  const GgmlType types[] = {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K,
                            GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS};
  for (int i = 0; i < 6; ++i) {
    if (only_missing && k.gemm[int(types[i])]) continue;
    k.gemm[int(types[i])] = fns[i];
    k.gemm_scratch[int(types[i])] = gemm_scratch;
    k.gemm_reordered[int(types[i])] = true;
  }
}

}  // namespace edgellm

#include "kernels/isa_end.h"
