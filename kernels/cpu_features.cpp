#include "kernels/cpu_features.h"

namespace edgellm {

namespace {

CpuFeatures detect() {
  CpuFeatures f;
#if defined(EDGELLM_X86) && (defined(__GNUC__) || defined(__clang__))
  // libgcc/compiler-rt also check XCR0, so a flag is only set when the OS
  // saves the YMM/ZMM state (an AVX-512 CPU under an OS without it reports no).
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.f16c = __builtin_cpu_supports("f16c");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  f.avx512vnni = __builtin_cpu_supports("avx512vnni");
#endif
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

}  // namespace edgellm
