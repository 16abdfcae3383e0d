// Any other processor: no streaming stores, the C library's memcpy.
#include "copy/kernels/stream_copy.h"

#include <cstring>

namespace kupl::copy::detail {

void copy_streaming(char *dst, const char *src, std::size_t n) {
    std::memcpy(dst, src, n);
}

} // namespace kupl::copy::detail
