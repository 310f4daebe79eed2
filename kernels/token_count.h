// A token count known at run time (1..N) as a compile-time constant, for
// kernels that keep one set of accumulators per token in registers:
//   with_token_count<8>(n, [&](auto T) { rows<F, T.value>(...); });
// n outside 1..N runs nothing (callers check).
#pragma once
#include <cstdint>
#include <type_traits>

namespace edgellm {

template <int N, class Fn>
inline void with_token_count(int64_t n, Fn&& fn) {
  if constexpr (N >= 1) {
    if (n == N) return fn(std::integral_constant<int, N>{});
    with_token_count<N - 1>(n, fn);
  }
}

}  // namespace edgellm
