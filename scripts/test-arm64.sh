#!/usr/bin/env bash
# The arm64 build, tested on an x86-64 host: cross-compiles with Debian's
# g++-aarch64-linux-gnu into build-arm64/ (cmake/aarch64-linux-gnu.cmake) and
# runs the kernel tests and the stories260K golden test under qemu-aarch64:
#   -cpu max         every extension QEMU has (dotprod, i8mm): SDOT dots, SMMLA GEMMs
#   -cpu cortex-a72  plain ARMv8.0 NEON: the widening fallback path
# Tests that spawn the CLI are left out (no binfmt for arm64 binaries needed).
# Then the C API: installed, examples/c cross-built against the install and
# run under qemu-aarch64 (it must print the golden story), and the ABI check.
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
cmake --build "$dir" -j"$(nproc)" --target edgellm_tests edgellm_shared edgellm_header_c99
echo "test-arm64: built in $((SECONDS - start)) s"
export NM=aarch64-linux-gnu-nm OBJDUMP=aarch64-linux-gnu-objdump
bash scripts/check-isa-symbols.sh "$dir"
bash scripts/check-isa-symbols.sh --O0 build-arm64-isa-O0 \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" -DEDGELLM_ARM64_SYSROOT="$sysroot"
unset NM OBJDUMP

# The SDOT path gets the kernel tests and the stories260K golden and reference
# tests; the ARMv8.0 path the kernel tests. Emulation is ~20x slower than
# native, so not the whole suite: ForwardVsReference takes 1-2 min per type
# here (scalar and neon, against a float64 reference); add a couple with
#   scripts/test-arm64.sh 'AllArchsAndTypes/ForwardVsReference.LogitsAgree/qwen2_q4_0'
kernels="Quant*:Kernels*:KernelsNeon*:Gemm*:Gemv*:AttentionKernels*"
full="$kernels:Golden.Stories260kGreedyIdsMatchProvenance:Forward.Stories260kMatchesReference"
# The C API's golden, continuation and refusal tests (none spawns the CLI).
full="$full:CApi.Stories260kGreedyMatchesGolden:CApi.CallbackStopsAndGenerationContinuesExactly:CApiErrors.*"
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
# The C API as an arm64 app gets it: installed, the C example cross-built
# against the install with pkg-config, run under qemu-aarch64 (-cpu max), and
# its text compared with the golden story as the arm64 `edgellm run` prints
# it; then the exported symbols and struct layout (scripts/check-abi.sh).
echo "== C API: examples/c against the installed arm64 library, under qemu-aarch64"
t=$SECONDS
prefix=$PWD/$dir/capi-install
rm -rf "$prefix"
cmake --install "$dir" --prefix "$prefix" > "$dir/capi-install.log"
example=$dir/capi-example
# shellcheck disable=SC2046
aarch64-linux-gnu-gcc -std=c99 -Wall -Wextra -pedantic -Werror examples/c/edgellm_example.c \
  $(PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig pkg-config --cflags --libs edgellm) \
  -Wl,-rpath-link,"$sysroot/usr/lib/aarch64-linux-gnu" -o "$example"  # where the linker finds libpcre2-8.so.0
model=../shared/testdata/models/stories260K.gguf
qemu_run=(qemu-aarch64 -cpu max -L /usr/aarch64-linux-gnu -E "LD_LIBRARY_PATH=$prefix/lib:$sysroot/usr/lib/aarch64-linux-gnu")
"${qemu_run[@]}" "$example" "$model" -t 1 > "$dir/capi-example.out" 2> "$dir/capi-example.err" ||
  { cat "$dir/capi-example.err" >&2; exit 1; }
"${qemu_run[@]}" "$dir/edgellm" run -m "$model" -p "" -n 256 --temp 0 -t 1 > "$dir/capi-cli.out" 2> /dev/null
case "$(cat "$dir/capi-example.out")" in
  "Once upon a time, there was a little girl named Lily. She loved to play outside in the park."*) ;;
  *) echo "test-arm64: the C example did not print the golden story:" >&2; cat "$dir/capi-example.out" >&2; exit 1 ;;
esac
if ! cmp -s "$dir/capi-example.out" "$dir/capi-cli.out"; then
  echo "test-arm64: the C example's text differs from edgellm run's:" >&2
  diff "$dir/capi-cli.out" "$dir/capi-example.out" >&2 || true
  exit 1
fi
echo "   the C example printed the golden story, as edgellm run does ($(wc -c < "$dir/capi-example.out") bytes); $(sed -n 's/.*\(generated [0-9]* tokens\).*/\1/p' "$dir/capi-example.err")"
CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ RUN="qemu-aarch64 -L /usr/aarch64-linux-gnu" \
  bash scripts/check-abi.sh "$dir" | sed 's/^/   /'
echo "   C API: $((SECONDS - t)) s"
echo "test-arm64: done in $((SECONDS - start)) s"
