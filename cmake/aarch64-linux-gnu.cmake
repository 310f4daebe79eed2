# Cross-compiling for 64-bit ARM Linux with Debian's g++-aarch64-linux-gnu:
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# (scripts/test-arm64.sh does this and runs the tests under qemu-aarch64).
# Target libraries come from the cross toolchain's /usr/aarch64-linux-gnu and,
# for what it lacks (PCRE2), from EDGELLM_ARM64_SYSROOT: a folder the arm64
# .deb files were unpacked into (dpkg -x), so the host needs no multiarch
# packages installed.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# try_compile projects re-read this file: hand them the sysroot too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EDGELLM_ARM64_SYSROOT)
if(NOT EDGELLM_ARM64_SYSROOT AND DEFINED ENV{EDGELLM_ARM64_SYSROOT})
  set(EDGELLM_ARM64_SYSROOT "$ENV{EDGELLM_ARM64_SYSROOT}")
endif()

set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu ${EDGELLM_ARM64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config must see only the target's .pc files, with their /usr paths
# moved under the sysroot.
if(EDGELLM_ARM64_SYSROOT)
  set(ENV{PKG_CONFIG_LIBDIR}
      "${EDGELLM_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${EDGELLM_ARM64_SYSROOT}/usr/share/pkgconfig")
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "${EDGELLM_ARM64_SYSROOT}")
else()
  set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
endif()

# Lets CTest and gtest discovery run target binaries on an x86 host; -cpu max
# turns on every extension QEMU emulates (dotprod, i8mm, fp16, SVE, ...).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-cpu;max;-L;/usr/aarch64-linux-gnu)
