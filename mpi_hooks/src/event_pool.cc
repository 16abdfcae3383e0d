#include "event_pool.h"

#include <mutex>
#include <vector>

namespace kupl_mpi {
namespace {

constexpr size_t kMaxPooled = 256;
std::mutex g_mutex;
std::vector<kupl_event_h> &pool() {
    static auto *p = new std::vector<kupl_event_h>; // never destroyed: used until process exit
    return *p;
}

} // namespace

kupl_event_h event_pool_get() {
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (!pool().empty()) {
            kupl_event_h ev = pool().back();
            pool().pop_back();
            return ev;
        }
    }
    return kupl_event_create();
}

void event_pool_put(kupl_event_h event) {
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (pool().size() < kMaxPooled) {
            pool().push_back(event);
            return;
        }
    }
    kupl_event_destroy(event);
}

} // namespace kupl_mpi
