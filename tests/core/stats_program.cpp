// A known amount of work for the KUPL_STATS test (tests/core/CMakeLists.txt): three copies, of
// 100 B (async, done inline: the queue is idle), 1 MiB (async, by the engine) and 1000 B
// (kupl_memcpy below the sync threshold, inline too), one host item and a queue wait. ctest
// compares the counters printed at exit with exactly these.
#include "kupl.h"

#include <cstdio>
#include <cstring>
#include <vector>

int main() {
    std::vector<char> src(1 << 20), dst(1 << 20, 0);
    for (std::size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<char>(i * 7 + 1);
    kupl_queue_h queue = kupl_queue_create();
    bool ran = false;
    if (queue == nullptr || kupl_memcpy_async(dst.data(), src.data(), 100, queue, nullptr) != KUPL_OK ||
        kupl_memcpy_async(dst.data(), src.data(), src.size(), queue, nullptr) != KUPL_OK ||
        kupl::queue_submit(queue, nullptr, [&ran] { ran = true; }) != KUPL_OK ||
        kupl_queue_wait(queue) != KUPL_OK || kupl_memcpy(dst.data(), src.data(), 1000) != KUPL_OK) {
        std::printf("FAIL: a KUPL call failed\n");
        return 1;
    }
    kupl_queue_destroy(queue);
    if (!ran || std::memcmp(dst.data(), src.data(), src.size()) != 0) {
        std::printf("FAIL: the work was not done\n");
        return 1;
    }
    std::printf("work done\n");
    return 0;
}
