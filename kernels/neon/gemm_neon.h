// The AArch64 prefill GEMM kernels (KernelSet::gemm) by int8 path: what the
// register functions pick from, and what tests/test_kernels_neon.cpp runs
// one by one (the kernel set only ever holds the best path the host has, so
// the others would go untested on a CPU that has them all).
#pragma once
#include "kernels/dispatch.h"

namespace edgellm {

// The three ways AArch64 multiplies int8, in increasing order of speed; each
// needs a CPU feature the previous does not:
//   Widen  ARMv8.0: SMULL to int16 + SADALP into int32, 4 ops per 16 MACs;
//   Sdot   FEAT_DotProd (hwcap ASIMDDP): 16 MACs into 4 int32 lanes, 1 op;
//   Smmla  FEAT_I8MM (hwcap2 I8MM): a 2x8 by 8x2 int8 matrix product into a
//          2x2 int32 tile (two rows x two tokens), 32 MACs, 1 op.
enum class NeonInt8 { Widen, Sdot, Smmla };
const char* neon_int8_name(NeonInt8 p);
// Whether the host can run p (Widen: always), and the best path it can run.
bool neon_can_run(NeonInt8 p);
NeonInt8 neon_int8_best();

// A GEMM and the size of its scratch: the pair of KernelSet entries gemm[t]
// and gemm_scratch[t] (kernels/dispatch.h).
struct NeonGemm {
  GemmFn fn = nullptr;
  GemmScratchFn scratch = nullptr;
  explicit operator bool() const { return fn != nullptr; }
};

// The GEMM for weight type t on path p, or none (fn null). One function per
// file, so that only the *_i8mm_neon.cpp files (compiled with +i8mm, and none
// for any other path) hold SMMLA instructions:
NeonGemm gemm_q_neon(GgmlType t, NeonInt8 p);            // gemm_neon.cpp: q4_0, q8_0 (Widen, Sdot)
NeonGemm gemm_q_i8mm_neon(GgmlType t, NeonInt8 p);       // gemm_i8mm_neon.cpp: q4_0, q8_0 (Smmla)
NeonGemm gemm_kquant_neon(GgmlType t, NeonInt8 p);       // gemm_kquant_neon.cpp: q2_K..q6_K (Widen, Sdot)
NeonGemm gemm_kquant_i8mm_neon(GgmlType t, NeonInt8 p);  // gemm_kquant_i8mm_neon.cpp: q2_K..q6_K (Smmla)
// Any of the above.
NeonGemm neon_gemm(GgmlType t, NeonInt8 p);

// For tests: every GEMM for t that this host can run, with its path's name;
// returns how many (at most max).
int neon_gemm_variants(GgmlType t, NeonGemm* out, const char** names, int max);

}  // namespace edgellm
