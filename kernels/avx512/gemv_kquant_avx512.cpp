// Decode matrix x vector for q4_K, q5_K, q6_K and iq4_xs weights x q8_K activations,
// AVX-512 VNNI (KernelSet::gemv; reference twin: vec_dot per row, the scalar
// set's gemm). q6_K's integer core is the vec_dot's (kquant_avx512.h); q4_K
// and q5_K have their own (row_affine: int16 scale products on activations
// prepared in the weights' nibble order). Around the cores, as in the q4_0
// GEMV (gemv_avx512.cpp):
//   - the activation side of every super-block is prepared once per call:
//     q4_K/q5_K the 8 pair sums of bsums (for the mins), q6_K the 16 bsums as
//     int32 lanes (for the -32 offset);
//   - no horizontal sum per super-block: vec_dot reduces 16 int32 lanes and
//     scales in scalar float every 256 elements; here the lanes are converted
//     and accumulated by one FMA into a float vector (and the mins into a
//     4-lane one), reduced once per row;
//   - rows one after another in memory order, one sequential stream per
//     thread (rows side by side lost ~2x here: the streams are too short for
//     the hardware prefetcher), with a software prefetch 8 KB ahead (synth
//     llama3.2-3b Q4_K_M, 2 threads: 10.2-10.3 tok/s at 2 KB, 11.1-11.2 at 4 KB;
//     Zen 5 host, 2 threads, one half of the rows each, GEMV alone on
//     1024-wide q4_K / q6_K / 4864-wide matrices, configurations interleaved:
//     8 KB = 4 KB +0-3 %, within noise of 12 KB; bytes in flight per thread =
//     ~35 GB/s x ~150-230 ns of loaded latency = 5-8 KB).
// iq4_xs: the grid's values + 128 (one vpshufb per 32) into ONE vpdpbusd per
// 64 elements, against vec_dot's two (its signed-by-signed dot_s8s8): each
// lane's accumulator starts at -128 x the sum of its 4 activation bytes,
// prepared once per call, so the lane ends at the exact signed sum. Per 64
// elements: 32 B of weights, 6 ops to unpack (levels_iq4_64), 1 vpdpbusd, 1 vpmulld by the
// lane-permuted 6-bit scales (ls - 32); int32 exact (|lane| <= 4 * 127 * 128 * 32 * 4).
// Results differ from vec_dot only in the order of the float operations.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/dispatch.h"
#include "kernels/token_count.h"

#include "kernels/avx512/isa_begin.h"  // AVX-512 code from here to kernels/isa_end.h
#include "kernels/avx512/kquant_avx512.h"

namespace edgellm {

namespace {

// The activation side of one super-block, prepared once per call and shared
// by every row (L1-resident with the streamed weights: keep it small; a
// 14336-wide row has 56 super-blocks).
struct alignas(64) AffinePrep {  // q4_K / q5_K
  // The activation bytes in the order of a 64-byte load of qs split into
  // nibbles (see row_affine): yr[2h] = elements 128h + [0, 32) and
  // 128h + [64, 96), yr[2h + 1] = 128h + [32, 64) and 128h + [96, 128).
  __m512i yr[4];
  __m128i bs_pairs;  // bsums[2j] + bsums[2j+1], 8 int16
  float d;           // d_a
};
struct alignas(64) Q6Prep {
  __m512i bsums32;  // bsums as int32 lanes
  float d;          // d_a
};

// Constants of row_affine: which sub-block scale each int16 lane of a
// maddubs result takes, and (q5_K) which qh bit holds each byte's fifth bit.
struct AffineRow {
  __m512i idx16[4];  // vector v = 2h + (0: low nibbles, 1: high): sub-blocks 4h + v % 2 and 4h + 2 + v % 2
  __m512i sel[4];
  AffineRow() {
    for (int v = 0; v < 4; ++v) {
      const int first = 4 * (v / 2) + v % 2;
      alignas(64) int16_t idx[32];
      for (int l = 0; l < 32; ++l) idx[l] = int16_t(first + (l < 16 ? 0 : 2));
      idx16[v] = _mm512_load_si512(idx);
      sel[v] = join(_mm256_set1_epi8(char(1 << first)), _mm256_set1_epi8(char(1 << (first + 2))));
    }
  }
};

struct alignas(64) Iq4Prep {
  __m512i neg_bias[4];  // chunk p: -128 x (sum of each lane's 4 activation bytes)
  float d;              // d_a
};

// The 64 levels (grid value + 128) of sub-blocks 2p and 2p+1 from their 32
// bytes of nibbles (bytes 0..15: sub-block 2p, low nibbles its elements
// 0..15, high 16..31; bytes 16..31 likewise for 2p+1): the nibbles split in
// a ymm each, one two-source qword permute into element order, one 512-bit
// vpshufb against the biased grid in every 128-bit lane. 6 ops per 64.
inline __m512i levels_iq4_64(const uint8_t* qs, __m512i grid, __m512i order) {
  const __m256i q = load256(qs), m4 = _mm256_set1_epi8(0x0F);
  const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
  return _mm512_shuffle_epi8(grid, _mm512_permutex2var_epi64(_mm512_castsi256_si512(lo), order, _mm512_castsi256_si512(hi)));
}

float row_iq4_xs(int64_t nb, const block_iq4_xs* x, const block_q8_K* y, const Iq4Prep* prep, const __m512i* idx) {
  const __m512i grid =
      _mm512_broadcast_i32x4(_mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kvalues_iq4nl)),
                                           _mm_set1_epi8(char(0x80))));
  const __m512i order = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);  // lo q0 q1, hi q0 q1, lo q2 q3, hi q2 q3
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    prefetch_step<sizeof(block_iq4_xs)>(x + i, kGemvPrefetchBytes);
    alignas(32) int32_t sc[8];
    for (int j = 0; j < 8; ++j) sc[j] = iq4xs_scale(x[i], j) - 32;
    const __m512i scales = _mm512_castsi256_si512(_mm256_load_si256(reinterpret_cast<const __m256i*>(sc)));
    __m512i isum = _mm512_setzero_si512();
    for (int p = 0; p < 4; ++p) {  // sub-blocks 2p and 2p+1
      const __m512i u = levels_iq4_64(x[i].qs + 32 * p, grid, order);
      const __m512i dot = _mm512_dpbusd_epi32(prep[i].neg_bias[p], u, load512(y[i].qs + 64 * p));
      isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(dot, _mm512_permutexvar_epi32(idx[p], scales)));
    }
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(half(x[i].d) * prep[i].d), acc);
  }
  return hsum(acc);
}

size_t gemv_iq4_xs_scratch(int64_t n, int64_t, int64_t) { return scratch_round64(size_t(n / QK_K) * sizeof(Iq4Prep)); }

void gemv_iq4_xs(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok,
                 float* y, size_t ldy, void* scratch) {
  const int64_t nb = n / QK_K;
  const auto* wb = static_cast<const uint8_t*>(w);
  Iq4Prep* prep = static_cast<Iq4Prep*>(scratch);  // gemv_iq4_xs_scratch(n, n_rows, n_tok) bytes
  __m512i idx[4];
  for (int p = 0; p < 4; ++p) idx[p] = lane_groups(2 * p, 8);
  const __m512i c128 = _mm512_set1_epi8(char(0x80));
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* act = reinterpret_cast<const block_q8_K*>(static_cast<const uint8_t*>(a) + size_t(t) * as);
    for (int64_t i = 0; i < nb; ++i) {
      for (int p = 0; p < 4; ++p)
        prep[i].neg_bias[p] = _mm512_sub_epi32(_mm512_setzero_si512(),
                                               _mm512_dpbusd_epi32(_mm512_setzero_si512(), c128, load512(act[i].qs + 64 * p)));
      prep[i].d = act[i].d;
    }
    float* yt = y + size_t(t) * ldy;
    for (int64_t r = 0; r < n_rows; ++r)
      yt[r] = row_iq4_xs(nb, reinterpret_cast<const block_iq4_xs*>(wb + size_t(r) * ws), act, prep, idx);
  }
}

// q4_K / q5_K, one row against T prepared tokens (T = 1: decode; more: a
// batched decode step). Per 128 elements, one 64-byte load of qs gives the
// low nibbles of sub-blocks 4h, 4h+2 and the high nibbles of 4h+1, 4h+3 by
// one and, one shift and one and (the activation is prepared in that order,
// AffinePrep::yr), then per 64 of them one vpmaddubsw (levels 0..31 x int8: pair
// sums |s| <= 2 * 31 * 128, no saturation) and one vpdpwssd against the
// lane-permuted int16 scales: the exact int32 sub-block sums, each lane
// below 2^24 (4 x 2 x 7936 x 63), so its float conversion is exact. This is
// ~46 vector ops per super-block where the shared core (affine_isum: a
// 32-byte load, shift, insert and and per 64, vpdpbusd + vpmulld + add) with
// its own loads of the activation took ~68. Zen 5 host, one thread (the bus
// gives one thread ~41 GB/s, two ~50 or ~84 by the minute), GEMV alone:
// 30.2-30.9 -> 34.1-35.2 GB/s; with every line prefetched as well
// (stream_prefetch.h) 40.6-41.4, the bus.
//
// With T tokens each super-block's weight side (scales, nibbles, fifth
// bits, the permuted scales) is unpacked once for all of them, so the row
// streams from memory once; per token the operations and their order do not
// depend on T, so each result is bit for bit its own alone. (q6_K's integer
// sums are exact whatever the grouping.)
template <class Block, int T>
void row_affine(const AffineRow& k, int64_t nb, const Block* x, const AffinePrep* const* prep, float* out) {
  constexpr bool kFifthBit = std::is_same_v<Block, block_q5_K>;
  const __m512i m4 = _mm512_set1_epi8(0x0F), c16 = _mm512_set1_epi8(16);
  __m512 acc[T];
  __m128 mins[T];
  for (int t = 0; t < T; ++t) {
    acc[t] = _mm512_setzero_ps();
    mins[t] = _mm_setzero_ps();
  }
  for (int64_t i = 0; i < nb; ++i) {
    prefetch_step<sizeof(Block)>(x + i, kGemvPrefetchBytes);
    const __m128i sm = scales_mins_k4(x[i].scales);
    const __m512i sc16 = _mm512_castsi128_si512(_mm_cvtepu8_epi16(sm));
    __m512i hb = _mm512_setzero_si512();
    if constexpr (kFifthBit) hb = join(load256(x[i].qh), load256(x[i].qh));
    __m512i isum[T];
    for (int t = 0; t < T; ++t) isum[t] = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      const __m512i b = load512(x[i].qs + 64 * h);
      __m512i q[2] = {_mm512_and_si512(b, m4), _mm512_and_si512(_mm512_srli_epi16(b, 4), m4)};
      for (int v = 0; v < 2; ++v) {
        if constexpr (kFifthBit)
          q[v] = _mm512_mask_add_epi8(q[v], _mm512_test_epi8_mask(hb, k.sel[2 * h + v]), q[v], c16);
        const __m512i scv = _mm512_permutexvar_epi16(k.idx16[2 * h + v], sc16);
        for (int t = 0; t < T; ++t)
          isum[t] = _mm512_dpwssd_epi32(isum[t], _mm512_maddubs_epi16(q[v], prep[t][i].yr[2 * h + v]), scv);
      }
    }
    uint32_t dd;
    std::memcpy(&dd, &x[i].d, 4);
    const __m128 dw = _mm_cvtph_ps(_mm_cvtsi32_si128(int(dd)));
    const __m128i m = _mm_cvtepu8_epi16(_mm_unpackhi_epi64(sm, sm));
    for (int t = 0; t < T; ++t) {
      const AffinePrep& pr = prep[t][i];
      const __m128 ds = _mm_mul_ps(dw, _mm_set1_ps(pr.d));
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_broadcastss_ps(ds), acc[t]);
      mins[t] = _mm_fmadd_ps(_mm_cvtepi32_ps(_mm_madd_epi16(m, pr.bs_pairs)), _mm_shuffle_ps(ds, ds, 0x55), mins[t]);
    }
  }
  for (int t = 0; t < T; ++t) {
    __m128 mn = _mm_add_ps(mins[t], _mm_movehl_ps(mins[t], mins[t]));
    mn = _mm_add_ss(mn, _mm_movehdup_ps(mn));
    out[t] = hsum(acc[t]) - _mm_cvtss_f32(mn);
  }
}

template <int T>
void row_q6(const Q6K& k, int64_t nb, const block_q6_K* x, const block_q8_K* const* y, const Q6Prep* const* prep,
                  float* out) {
  __m512 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    prefetch_step<sizeof(block_q6_K)>(x + i, kGemvPrefetchBytes);
    const block_q6_K& w = x[i];
    const __m512i sc = q6_scales(w);
    __m512i isum[T];
    for (int t = 0; t < T; ++t) isum[t] = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      __m512i q0, q1;
      q6_levels(w, h, q0, q1);
      const __m512i s0 = _mm512_permutexvar_epi32(k.idx[2 * h], sc), s1 = _mm512_permutexvar_epi32(k.idx[2 * h + 1], sc);
      for (int t = 0; t < T; ++t) {
        const __m512i d0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q0, load512(y[t][i].qs + 64 * (2 * h)));
        const __m512i d1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q1, load512(y[t][i].qs + 64 * (2 * h + 1)));
        isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(d0, s0));
        isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(d1, s1));
      }
    }
    const float dw = half(w.d);
    for (int t = 0; t < T; ++t) {
      const __m512i is = _mm512_sub_epi32(isum[t], _mm512_slli_epi32(_mm512_mullo_epi32(sc, prep[t][i].bsums32), 5));
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), _mm512_set1_ps(dw * prep[t][i].d), acc[t]);
    }
  }
  for (int t = 0; t < T; ++t) out[t] = hsum(acc[t]);
}

// Scratch (GemmScratchFn): each token's prepared super-blocks (one, or
// n_tok <= kGemvBatch served at once), AffinePrep[nb] (q4_K / q5_K, 320 B
// each) or Q6Prep[nb] (128 B) with nb = n / 256, whatever n_rows; e.g.
// 14336 wide: 17.5 / 7 KB per token.
constexpr int kGemvBatch = 8;
size_t gemv_scratch_one(int64_t n) { return scratch_round64(size_t(n / QK_K) * sizeof(AffinePrep)); }
size_t gemv_scratch(int64_t n, int64_t, int64_t n_tok) {
  return gemv_scratch_one(n) * size_t(n_tok > 1 && n_tok <= kGemvBatch ? n_tok : 1);
}

template <class Prep>
void prepare(int64_t nb, const block_q8_K* act, Prep* prep) {
  for (int64_t i = 0; i < nb; ++i) {
    Prep& pr = prep[size_t(i)];
    const __m256i bs = load256(act[i].bsums);
    pr.d = act[i].d;
    if constexpr (std::is_same_v<Prep, Q6Prep>) {
      pr.bsums32 = _mm512_cvtepi16_epi32(bs);
    } else {
      pr.bs_pairs = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
      for (int v = 0; v < 4; ++v) {  // v = 2h + nibble: elements 128h + 32 * nibble + [0, 32) and + 64
        const int8_t* q = act[i].qs + 128 * (v / 2) + 32 * (v % 2);
        pr.yr[v] = join(load256(q), load256(q + 64));
      }
    }
  }
}

template <class Block, int T>
void rows(int64_t nb, const uint8_t* wb, size_t ws, int64_t n_rows, const block_q8_K* const* act,
                uint8_t* scratch, size_t per_tok, float* y, size_t ldy) {
  constexpr bool kQ6 = std::is_same_v<Block, block_q6_K>;
  using Prep = std::conditional_t<kQ6, Q6Prep, AffinePrep>;
  const Prep* prep[T];
  for (int t = 0; t < T; ++t) prep[t] = reinterpret_cast<const Prep*>(scratch + size_t(t) * per_tok);
  float out[T];
  if constexpr (kQ6) {
    const Q6K k;
    for (int64_t r = 0; r < n_rows; ++r) {
      row_q6<T>(k, nb, reinterpret_cast<const block_q6_K*>(wb + size_t(r) * ws), act, prep, out);
      for (int t = 0; t < T; ++t) y[size_t(t) * ldy + size_t(r)] = out[t];
    }
  } else {
    const AffineRow k;
    for (int64_t r = 0; r < n_rows; ++r) {
      row_affine<Block, T>(k, nb, reinterpret_cast<const Block*>(wb + size_t(r) * ws), prep, out);
      for (int t = 0; t < T; ++t) y[size_t(t) * ldy + size_t(r)] = out[t];
    }
  }
}

template <class Block>
void gemv(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok, float* y,
          size_t ldy, void* scratch) {
  constexpr bool kQ6 = std::is_same_v<Block, block_q6_K>;
  const int64_t nb = n / QK_K;
  const auto* wb = static_cast<const uint8_t*>(w);
  using Prep = std::conditional_t<kQ6, Q6Prep, AffinePrep>;
  auto* sc = static_cast<uint8_t*>(scratch);  // gemv_scratch(n, n_rows, n_tok) bytes
  const size_t per_tok = gemv_scratch_one(n);
  // Up to kGemvBatch tokens in one pass over the rows; more, one at a time.
  const int64_t group = n_tok <= kGemvBatch ? n_tok : 1;
  for (int64_t t0 = 0; t0 < n_tok; t0 += group) {
    const block_q8_K* act[kGemvBatch];
    for (int64_t t = 0; t < group; ++t) {
      act[t] = reinterpret_cast<const block_q8_K*>(static_cast<const uint8_t*>(a) + size_t(t0 + t) * as);
      prepare(nb, act[t], reinterpret_cast<Prep*>(sc + size_t(t) * per_tok));
    }
    with_token_count<kGemvBatch>(group, [&](auto T) {
      rows<Block, T.value>(nb, wb, ws, n_rows, act, sc, per_tok, y + size_t(t0) * ldy, ldy);
    });
  }
}

}  // namespace

void register_gemv_kquant_avx512(KernelSet& k) {
  k.gemv[int(GgmlType::Q4_K)] = gemv<block_q4_K>;
  k.gemv[int(GgmlType::Q5_K)] = gemv<block_q5_K>;
  k.gemv[int(GgmlType::Q6_K)] = gemv<block_q6_K>;
  for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
    k.gemv_scratch[int(t)] = gemv_scratch;
    k.gemv_batch[int(t)] = kGemvBatch;
  }
  k.gemv[int(GgmlType::IQ4_XS)] = gemv_iq4_xs;
  k.gemv_scratch[int(GgmlType::IQ4_XS)] = gemv_iq4_xs_scratch;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
