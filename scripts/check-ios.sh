#!/usr/bin/env bash
# What an iOS build of the library would hit: every library source (the
# C API's included; the CLI is not for iOS) compiled syntax-only by clang
# for -target arm64-apple-ios15.0, with the NEON kernels' flags.
#
# No iOS SDK exists on Linux, so the C and C++ headers are stand-ins: the
# arm64 glibc and libstdc++ headers of Debian's cross toolchain
# (g++-aarch64-linux-gnu), which declare the POSIX functions iOS has too.
# Headers that exist on Linux alone (and Android) are taken out: an
# unguarded #include of <sys/auxv.h>, <asm/hwcap.h>, <malloc.h>,
# <linux/perf_event.h>, <sys/prctl.h> or <sys/sysinfo.h> fails the file. The
# target itself leaves __linux__ undefined and defines __APPLE__, so code
# behind those #ifs is checked the way Xcode would see it. One artifact of
# the stand-in: glibc's headers define __GLIBC__, so code behind
# #if defined(__GLIBC__) is compiled here though iOS would skip it
# (model/model_loader.cpp's mallinfo2 fails for that reason alone).
#   scripts/check-ios.sh            prints one line per file and a summary
# Exit status 0 when every file compiles.
set -uo pipefail
cd "$(dirname "$0")/.."
for p in clang g++-aarch64-linux-gnu; do
  command -v "${p%% *}" > /dev/null || dpkg -s "$p" > /dev/null 2>&1 || {
    echo "check-ios: installing $p" >&2
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get install -y -qq "$p" > /dev/null
  }
done
cross=/usr/aarch64-linux-gnu/include
gxx=$(ls -d $cross/c++/* | sort -V | tail -n 1)
clang_inc=$(clang -print-resource-dir)/include
# The stand-in C headers without the Linux-only ones (a tree of symlinks), so
# an unguarded include fails as on iOS and __has_include answers as there.
shadow=$(mktemp -d)
trap 'rm -rf "$shadow"' EXIT
cp -rs "$cross/." "$shadow/"
for h in sys/auxv.h malloc.h sys/prctl.h sys/sysinfo.h asm/hwcap.h linux/perf_event.h; do rm -f "$shadow/$h"; done
# And one the other way: Apple's <sys/sysctl.h> (sysctlbyname, which
# kernels/cpu_features.cpp reads the CPU's FEAT_DotProd / FEAT_I8MM with),
# gone from glibc since 2.32; its declaration as in the macOS/iOS SDK.
mkdir -p "$shadow/sys"
rm -f "$shadow/sys/sysctl.h"
printf '%s\n' '#pragma once' '#include <stddef.h>' \
  'extern "C" int sysctlbyname(const char*, void*, size_t*, void*, size_t);' > "$shadow/sys/sysctl.h"
base=(-target arm64-apple-ios15.0 -std=c++20 -fsyntax-only -nostdinc -nostdinc++
      -isystem "$gxx" -isystem "$gxx/aarch64-linux-gnu" -isystem "$clang_inc")
flags=(-isystem "$shadow"
       -U__nonnull -U__nullable -D_GNU_SOURCE -DEDGELLM_ARM=1 -DEDGELLM_BUILDING_LIBRARY=1
       -DEDGELLM_VERSION_STRING=\"0.1.0\" -I. -Iinclude -Wno-everything)
# PCRE2 is a dependency an iOS build compiles too; its header from the arm64
# sysroot scripts/test-arm64.sh unpacks, when there.
pcre2=build-arm64/sysroot/usr/include
[ -f "$pcre2/pcre2.h" ] && flags+=(-isystem "$pcre2")
ok=0 bad=0
for f in base/*.cpp format/*.cpp tensor/*.cpp kernels/*.cpp kernels/neon/*.cpp model/*.cpp tokenizer/*.cpp \
         template/*.cpp runtime/*.cpp tools/*.cpp capi/*.cpp; do
  extra=()
  case "$f" in
    kernels/neon/*_i8mm_neon.cpp) extra=(-march=armv8.2-a+dotprod+fp16+i8mm) ;;
    kernels/neon/*) extra=(-march=armv8.2-a+dotprod+fp16) ;;
  esac
  if out=$(clang++ "${base[@]}" "${flags[@]}" "${extra[@]}" "$f" 2>&1); then
    ok=$((ok + 1))
  else
    bad=$((bad + 1))
    echo "FAIL $f: $(echo "$out" | grep -m1 'error:' | sed 's/^[^ ]* //')"
    # Whether that header is all: the same file with the Linux headers allowed.
    if rest=$(clang++ "${base[@]}" "${flags[@]/#$shadow/$cross}" "${extra[@]}" "$f" 2>&1); then
      echo "     (with the Linux header allowed it compiles: guarding that include and its use is the whole fix)"
    else
      echo "     (and then: $(echo "$rest" | grep -m1 'error:' | sed 's/^[^ ]* //'))"
    fi
  fi
done
echo "check-ios: $ok files compile for arm64-apple-ios15.0, $bad do not"
[ $bad -eq 0 ]
