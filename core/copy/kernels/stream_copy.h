// The processor-specific part of the copy kernels: one implementation per architecture, chosen
// at build time (core/CMakeLists.txt compiles exactly one of stream_*.cpp). Everything else in
// copy_kernels.cpp is portable C++.
#pragma once

#include <cstddef>

namespace kupl::copy::detail {

// Copies n bytes with stores that bypass the caches where the processor has them (x86-64:
// MOVNTDQ, AArch64: STNP); a plain memcpy elsewhere. Called for copies much larger than the
// last-level cache only. The stores are visible to other threads once it returns and the
// caller publishes completion with a release operation.
void copy_streaming(char *dst, const char *src, std::size_t n);

} // namespace kupl::copy::detail
