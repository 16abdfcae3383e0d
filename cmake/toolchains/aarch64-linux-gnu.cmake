# Cross-building for 64-bit Arm Linux (e.g. Kunpeng 920) on a Debian/Ubuntu x86-64 host with
# crossbuild-essential-arm64 and multiarch :arm64 libraries (libhwloc-dev:arm64,
# libgtest-dev:arm64, libffi-dev:arm64, ...). Tests run through qemu-aarch64, also from ctest
# and gtest_discover_tests, via CMAKE_CROSSCOMPILING_EMULATOR (needs libc6:arm64,
# libstdc++6:arm64, qemu-user). See tests/cross/aarch64.sh.
#
#   cmake -S . -B build-aarch64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(KUPL_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${KUPL_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${KUPL_CROSS_TRIPLE}-g++)
# Multiarch: the target's libraries live in /usr/lib/aarch64-linux-gnu of this very root, so there
# is no sysroot; this makes find_package / find_library look in that folder (GTest's config too).
set(CMAKE_LIBRARY_ARCHITECTURE ${KUPL_CROSS_TRIPLE})

# pkg-config must see only the target's .pc files, never the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${KUPL_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# Run target binaries (tests, gtest discovery) through user-mode qemu, with the multiarch loader
# /lib/ld-linux-aarch64.so.1 of libc6:arm64 and no `-L /usr/aarch64-linux-gnu`: that prefix holds
# the cross toolchain's own ld.so (libc6-arm64-cross), which is not the same glibc build as the
# libc.so.6 of libc6:arm64 that the loader then finds through ld.so.cache (hwloc and gtest come
# from there). Loader and libc share the private layout of _rtld_global, so the mixed pair breaks
# in odd places: the first pthread_create walks the thread-stack cache list forever at 100% CPU.
# Everything must come from the multiarch root, libstdc++6:arm64 and libgcc-s1:arm64 included.
find_program(KUPL_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
if(KUPL_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${KUPL_QEMU_AARCH64})
endif()
