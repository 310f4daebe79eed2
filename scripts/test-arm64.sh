#!/usr/bin/env bash
# The arm64 build, tested on an x86-64 host: cross-compiles with Debian's
# g++-aarch64-linux-gnu into build-arm64/ (cmake/aarch64-linux-gnu.cmake) and
# runs the kernel tests and the stories260K golden test under qemu-aarch64:
#   -cpu max         every extension QEMU has (dotprod, i8mm): SDOT dots, SMMLA GEMMs
#   -cpu cortex-a72  plain ARMv8.0 NEON: the widening fallback path
# Tests that spawn the CLI are left out (no binfmt for arm64 binaries needed).
#   scripts/test-arm64.sh [extra gtest filter patterns, ':'-separated]
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
bash scripts/setup.sh  # cmake, ninja, libgtest-dev (its sources build gtest for arm64), pkg-config

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
PACKAGES="g++-aarch64-linux-gnu qemu-user"
missing=""
for p in $PACKAGES; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "test-arm64: installing$missing" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

# Target libraries the cross toolchain lacks (PCRE2), unpacked from Debian's
# arm64 .debs into build-arm64/sysroot: nothing arm64 gets installed on the host.
dir=build-arm64
sysroot=$PWD/$dir/sysroot
if [ ! -f "$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig/libpcre2-8.pc" ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
    $SUDO apt-get update -qq
  fi
  mkdir -p "$dir/debs" "$sysroot"
  (cd "$dir/debs" && apt-get download -qq libpcre2-dev:arm64 libpcre2-8-0:arm64 2>/dev/null ||
     { $SUDO apt-get update -qq && apt-get download -qq libpcre2-dev:arm64 libpcre2-8-0:arm64; })
  for deb in "$dir"/debs/*.deb; do dpkg -x "$deb" "$sysroot"; done
fi

cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" -DEDGELLM_ARM64_SYSROOT="$sysroot" >/dev/null
cmake --build "$dir" -j"$(nproc)" --target edgellm_tests
echo "test-arm64: built in $((SECONDS - start)) s"

# The SDOT path gets the kernel tests and the stories260K golden and reference
# tests; the ARMv8.0 path the kernel tests. Emulation is ~20x slower than
# native, so not the whole suite: ForwardVsReference takes 1-2 min per type
# here (scalar and neon, against a float64 reference); add a couple with
#   scripts/test-arm64.sh 'AllArchsAndTypes/ForwardVsReference.LogitsAgree/qwen2_q4_0'
kernels="Quant*:Kernels*:KernelsNeon*:Gemm*:Gemv*:AttentionKernels*"
full="$kernels:Golden.Stories260kGreedyIdsMatchProvenance:Forward.Stories260kMatchesReference"
if [ -n "${1:-}" ]; then full="$full:$1"; fi
for cpu in max cortex-a72; do
  filter=$full
  [ "$cpu" = max ] || filter=$kernels
  t=$SECONDS
  echo "== qemu-aarch64 -cpu $cpu"
  set +e
  qemu-aarch64 -cpu "$cpu" -L /usr/aarch64-linux-gnu "$dir/tests/edgellm_tests" \
    --gtest_filter="$filter" > "$dir/test-$cpu.log" 2>&1
  rc=$?
  set -e
  grep -E '^\[ neon \]|^kernel sets|min cos|^\[  (PASSED|FAILED|SKIPPED) |Failure' "$dir/test-$cpu.log" || true
  echo "   -cpu $cpu: gtest exit $rc, $((SECONDS - t)) s (log: $dir/test-$cpu.log)"
  isa=$(sed -n 's/.*kernel ISA active: \([a-z0-9]*\).*/\1/p' "$dir/test-$cpu.log" | head -n 1)
  echo "   -cpu $cpu: active kernel set: ${isa:-?}$([ "$cpu" = max ] && echo ' (the golden test ran with it)')"
  if [ $rc -ne 0 ]; then
    tail -n 40 "$dir/test-$cpu.log" >&2
    exit $rc
  fi
done
echo "test-arm64: done in $((SECONDS - start)) s"
