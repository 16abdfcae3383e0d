#include "event_pool.h"

#include <mutex>
#include <new>
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
    try {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (!pool().empty()) {
            kupl_event_h ev = pool().back();
            pool().pop_back();
            return ev;
        }
    } catch (const std::bad_alloc &) {
        // the pool itself could not be made: create one
    }
    return kupl_event_create(); // NULL when KUPL is out of memory: the caller copies on its own thread
}

void event_pool_put(kupl_event_h event) {
    try {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (pool().size() < kMaxPooled) {
            pool().push_back(event);
            return;
        }
    } catch (const std::bad_alloc &) {
        // no room to keep it: destroy it below
    }
    kupl_event_destroy(event);
}

} // namespace kupl_mpi
