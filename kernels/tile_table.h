// Picks the R x C instantiation of a register-blocked GEMM micro-tile at run
// time, for the edge tiles of a matrix (rows % kR, tokens % kC):
//
//   template <int R, int C> struct MyTile { static void run(Args...); };
//   auto fn = TileTable<MyTile, kR, kC>::get(r, c);   // 1 <= r <= kR, 1 <= c <= kC
//
// Internal linkage (like every kernels/ header included by the files of
// several instruction sets): each ISA file gets its own copy.
#pragma once
#include <array>
#include <utility>

namespace edgellm {
namespace {

template <template <int, int> class Tile, int kR, int kC>
struct TileTable {
  using Fn = decltype(&Tile<1, 1>::run);
  static Fn get(int r, int c) { return table()[size_t((r - 1) * kC + (c - 1))]; }

 private:
  template <size_t... I>
  static constexpr std::array<Fn, sizeof...(I)> make(std::index_sequence<I...>) {
    return {&Tile<int(I) / kC + 1, int(I) % kC + 1>::run...};
  }
  static const std::array<Fn, size_t(kR * kC)>& table() {
    static constexpr std::array<Fn, size_t(kR * kC)> t = make(std::make_index_sequence<size_t(kR * kC)>{});
    return t;
  }
};

}  // namespace
}  // namespace edgellm
