#include "kernels/cpu_features.h"

#if defined(EDGELLM_X86)
#include <cpuid.h>
#endif
#if defined(EDGELLM_ARM) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1 << 13)
#endif
#elif defined(EDGELLM_ARM) && defined(__APPLE__)
#include <sys/sysctl.h>
#endif

namespace edgellm {

namespace {

#if defined(EDGELLM_ARM) && defined(__APPLE__)
bool sysctl_flag(const char* name) {
  int v = 0;
  size_t len = sizeof v;
  return sysctlbyname(name, &v, &len, nullptr, 0) == 0 && v != 0;
}
#endif

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
#elif defined(EDGELLM_ARM) && defined(__linux__)  // Android too
  f.dotprod = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  f.i8mm = (getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0;
#elif defined(EDGELLM_ARM) && defined(__APPLE__)
  f.dotprod = sysctl_flag("hw.optional.arm.FEAT_DotProd");
  f.i8mm = sysctl_flag("hw.optional.arm.FEAT_I8MM");
#endif
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

}  // namespace edgellm
