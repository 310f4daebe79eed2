#include "kernels/cpu_features.h"

#if defined(EDGELLM_X86)
#include <cpuid.h>
#endif

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
  // clang 14 does not know "f16c" as a feature string: read CPUID leaf 1,
  // ECX bit 29 (its YMM-state requirement is covered by the avx2 check).
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  f.f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
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
