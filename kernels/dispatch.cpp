#include "kernels/dispatch.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "base/error.h"
#include "base/fp16.h"
#include "kernels/cpu_features.h"
#include "kernels/nn_ops.h"

namespace edgellm {

namespace {

template <GgmlType T>
float ref_vec_dot(int64_t n, const void* w, const void* a) { return vec_dot(T, n, w, a); }
// The GEMM reference twin: one scalar vec_dot per (row, token). No scratch
// (gemm_scratch stays null).
template <GgmlType T>
void ref_gemm(int64_t n, const void* w, size_t w_stride, int64_t n_rows, const void* a, size_t a_stride,
              int64_t n_tok, float* y, size_t ldy, void*) {
  for (int64_t t = 0; t < n_tok; ++t)
    for (int64_t r = 0; r < n_rows; ++r)
      y[size_t(t) * ldy + size_t(r)] = vec_dot(T, n, static_cast<const uint8_t*>(w) + size_t(r) * w_stride,
                                               static_cast<const uint8_t*>(a) + size_t(t) * a_stride);
}
template <GgmlType T>
void ref_quantize(const float* src, void* dst, int64_t n) { quantize_row(T, src, dst, n); }

KernelSet make_scalar() {
  KernelSet k;
  k.isa = "scalar";
#define EDGELLM_REF(T) k.vec_dot[int(GgmlType::T)] = ref_vec_dot<GgmlType::T>;
  EDGELLM_REF(F32) EDGELLM_REF(F16) EDGELLM_REF(BF16) EDGELLM_REF(Q4_0) EDGELLM_REF(Q4_1)
  EDGELLM_REF(Q5_0) EDGELLM_REF(Q5_1) EDGELLM_REF(Q8_0) EDGELLM_REF(Q2_K) EDGELLM_REF(Q3_K)
  EDGELLM_REF(Q4_K) EDGELLM_REF(Q5_K) EDGELLM_REF(Q6_K) EDGELLM_REF(IQ4_NL) EDGELLM_REF(IQ4_XS)
#undef EDGELLM_REF
#define EDGELLM_REF_GEMM(T) k.gemm[int(GgmlType::T)] = ref_gemm<GgmlType::T>;
  EDGELLM_REF_GEMM(F32) EDGELLM_REF_GEMM(F16) EDGELLM_REF_GEMM(BF16) EDGELLM_REF_GEMM(Q4_0)
  EDGELLM_REF_GEMM(Q5_0) EDGELLM_REF_GEMM(Q8_0) EDGELLM_REF_GEMM(Q2_K) EDGELLM_REF_GEMM(Q3_K)
  EDGELLM_REF_GEMM(Q4_K) EDGELLM_REF_GEMM(Q5_K) EDGELLM_REF_GEMM(Q6_K) EDGELLM_REF_GEMM(IQ4_NL)
  EDGELLM_REF_GEMM(IQ4_XS)
#undef EDGELLM_REF_GEMM
  k.quantize_act[int(GgmlType::F32)] = ref_quantize<GgmlType::F32>;
  k.quantize_act[int(GgmlType::Q8_0)] = ref_quantize<GgmlType::Q8_0>;
  k.quantize_act[int(GgmlType::Q8_1)] = ref_quantize<GgmlType::Q8_1>;
  k.quantize_act[int(GgmlType::Q8_K)] = ref_quantize<GgmlType::Q8_K>;
  k.kv_dot_f16 = [](const float* q, const uint16_t* kr, int64_t n) {
    float sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += q[i] * fp16_to_f32(kr[i]);
    return sum;
  };
  k.kv_axpy_f16 = [](float* acc, float w, const uint16_t* v, int64_t n) {
    for (int64_t i = 0; i < n; ++i) acc[i] += w * fp16_to_f32(v[i]);
  };
  k.swiglu = swiglu_inplace;
  k.geglu = geglu_inplace;
  return k;
}

// A SIMD set starts as a copy of the scalar set, minus the gemm entries
// (see KernelSet::gemm): it registers the ones it has.
KernelSet simd_base(const KernelSet& scalar) {
  KernelSet k = scalar;
  for (auto& g : k.gemm) g = nullptr;
  for (auto& g : k.gemm_scratch) g = nullptr;
  return k;
}

using RegisterFn = void (*)(KernelSet&);

// One table per SIMD set: its name and the parts that fill it (see
// dispatch.h), called in order on a copy of the scalar set. Order matters
// only where two parts fill the same entry: the later one wins (AVX2's
// rows-in-lanes K-quant GEMMs replace the generic tile's for their types;
// AVX-512 takes q2_K / q3_K GEMMs from the AVX2 tile, which every AVX-512 CPU
// runs, only where it has none of its own).
struct SetTable {
  const char* isa;
  const RegisterFn* parts;
  int n_parts;
};

#if defined(EDGELLM_X86)
constexpr RegisterFn kAvx2Parts[] = {
    register_dot_avx2,       register_q5_avx2,   register_kquant_avx2,      register_iq4_avx2,
    register_float_avx2,     register_attention_avx2,
    register_gemm_avx2,      [](KernelSet& k) { register_gemm_kquant_avx2(k); },
    register_gemm_kquant_lanes_avx2,
    register_gemv_avx2,      register_gemv_kquant_avx2,
};
constexpr RegisterFn kAvx512Parts[] = {
    register_dot_avx512,     register_q5_avx512, register_kquant_avx512,    register_iq4_avx512,
    register_float_avx512,   register_attention_avx512,
    register_gemm_avx512,    register_gemm_kquant_avx512,
    [](KernelSet& k) { register_gemm_kquant_avx2(k, /*only_missing=*/true); },
    register_gemv_avx512,    register_gemv_kquant_avx512,
};
#endif
#if defined(EDGELLM_ARM)
constexpr RegisterFn kNeonParts[] = {
    register_dot_neon,       register_q5_neon,   register_kquant_neon,      register_iq4_neon,
    register_float_neon,     register_attention_neon,
    register_gemm_neon,      register_gemm_kquant_neon,
    register_gemv_neon,
};
#endif

template <int N>
constexpr SetTable table(const char* isa, const RegisterFn (&parts)[N]) {
  return SetTable{isa, parts, N};
}

KernelSet build_set(const KernelSet& scalar, const SetTable& t) {
  KernelSet k = simd_base(scalar);
  k.isa = t.isa;
  for (int i = 0; i < t.n_parts; ++i) t.parts[i](k);
  return k;
}

struct Registry {
  KernelSet sets[4];
  int n = 0;
  int active = 0;  // an index, not a pointer: the Registry is returned by value below
};

Registry& registry() {
  static Registry r = [] {
    Registry reg;
    reg.sets[reg.n++] = make_scalar();
    // SIMD sets, in increasing order of preference; each starts from the
    // scalar set so that types it has no kernel for fall back to the reference.
#if defined(EDGELLM_X86)
    const CpuFeatures& cpu = cpu_features();
    if (cpu.can_run_avx2()) reg.sets[reg.n++] = build_set(reg.sets[0], table("avx2", kAvx2Parts));
    if (cpu.can_run_avx512()) reg.sets[reg.n++] = build_set(reg.sets[0], table("avx512", kAvx512Parts));
#endif
#if defined(EDGELLM_ARM)
    // Advanced SIMD: every AArch64 CPU has it.
    reg.sets[reg.n++] = build_set(reg.sets[0], table("neon", kNeonParts));
#endif
    reg.active = reg.n - 1;  // the best this host can run
    if (const char* want = std::getenv("EDGELLM_ISA"); want && *want) {
      reg.active = -1;
      for (int i = 0; i < reg.n; ++i)
        if (std::strcmp(reg.sets[i].isa, want) == 0) reg.active = i;
      if (reg.active < 0) fail("EDGELLM_ISA=", want, " is not available on this CPU (try scalar)");
    }
    return reg;
  }();
  return r;
}

}  // namespace

const KernelSet& kernels() {
  Registry& r = registry();
  return r.sets[r.active];
}

int available_kernel_sets(const KernelSet** out, int max) {
  Registry& r = registry();
  int n = 0;
  for (int i = 0; i < r.n && n < max; ++i) out[n++] = &r.sets[i];
  return n;
}

void select_kernels(const char* isa) {
  Registry& r = registry();
  for (int i = 0; i < r.n; ++i)
    if (std::strcmp(r.sets[i].isa, isa) == 0) {
      r.active = i;
      return;
    }
  fail("kernel set '", isa, "' is not available on this CPU");
}

void set_gemvs(KernelSet& k, const GemvQ8_0Family& f) {
  k.gemv[int(GgmlType::Q4_0)] = f.q4_0;
  k.gemv[int(GgmlType::Q5_0)] = f.q5_0;
  k.gemv[int(GgmlType::Q8_0)] = f.q8_0;
  k.gemv[int(GgmlType::IQ4_NL)] = f.iq4_nl;
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::Q8_0, GgmlType::IQ4_NL}) {
    k.gemv_scratch[int(t)] = f.scratch;
    k.gemv_batch[int(t)] = f.batch;
  }
}

}  // namespace edgellm
