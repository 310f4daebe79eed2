// Closes the target region kernels/<isa>/isa_begin.h opened: code after this
// line is compiled for the baseline again. No include guard: one per region.
#ifndef EDGELLM_ISA_REGION
#error "kernels/isa_end.h without an open region (kernels/<isa>/isa_begin.h)"
#endif
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#pragma GCC diagnostic pop
#endif
#undef EDGELLM_ISA_REGION
