#include "support/counters.h"

#include <atomic>
#include <mutex>
#include <pthread.h>

namespace kupl::support::detail {
namespace {

// Slots of exited threads, handed to the next threads that bump. The mutex also orders an exited
// owner's last plain store before its successor's first load. Nothing here has a destructor:
// threads still exit (and hand their slots back) after the process's static destructors ran.
std::mutex free_slots_mutex;
unsigned free_slots[kThreadSlots];
unsigned free_count = 0;
std::atomic<unsigned> next_slot{0}; // slots ever handed out: changed under the mutex
// Slots free or never handed out (changed under the mutex): with none, a thread takes the shared
// slot without the lock, however many threads bump.
std::atomic<unsigned> available{kThreadSlots};

// Runs on the exiting thread, after its thread_local destructors; a bump after this claims anew.
void release_slot(void *plus_one) {
    thread_slot_plus_one = 0;
    std::lock_guard<std::mutex> lock(free_slots_mutex);
    free_slots[free_count++] = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(plus_one)) - 1;
    available.fetch_add(1, std::memory_order_relaxed);
}

// fork(): the child has only the forking thread, which holds the lock across it; every other
// thread's slot is free there.
void before_fork() {
    free_slots_mutex.lock();
}
void after_fork_in_parent() {
    free_slots_mutex.unlock();
}
void after_fork_in_child() {
    free_count = 0;
    for (unsigned slot = 0; slot < next_slot.load(std::memory_order_relaxed); ++slot)
        if (slot + 1 != thread_slot_plus_one)
            free_slots[free_count++] = slot;
    available.store(free_count + (kThreadSlots - next_slot.load(std::memory_order_relaxed)),
                    std::memory_order_relaxed);
    free_slots_mutex.unlock();
}

// A key only for its destructor, which runs when a thread other than the main one exits (the main
// thread keeps its slot to the end: bumps from exit handlers still find it). Null if there is none
// (all keys taken): then every thread bumps the shared slot.
const pthread_key_t *slot_key() {
    static pthread_key_t key;
    static const bool made = [] {
        if (pthread_key_create(&key, release_slot) != 0)
            return false;
        pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
        return true;
    }();
    return made ? &key : nullptr;
}

} // namespace

unsigned slots_handed_out() {
    // A bump the caller must see came after its thread claimed the slot: so did this store.
    return next_slot.load(std::memory_order_relaxed);
}

unsigned claim_thread_slot() {
    const pthread_key_t *key = slot_key();
    if (key == nullptr || available.load(std::memory_order_relaxed) == 0)
        return kThreadSlots;
    unsigned slot;
    {
        std::lock_guard<std::mutex> lock(free_slots_mutex);
        if (free_count != 0) {
            slot = free_slots[--free_count];
        } else if (next_slot.load(std::memory_order_relaxed) < kThreadSlots) {
            slot = next_slot.fetch_add(1, std::memory_order_relaxed);
        } else {
            return kThreadSlots; // shared; asked again next time, in case one came free
        }
        available.fetch_sub(1, std::memory_order_relaxed);
    }
    if (pthread_setspecific(*key, reinterpret_cast<void *>(std::uintptr_t{slot} + 1)) != 0) {
        std::lock_guard<std::mutex> lock(free_slots_mutex); // no way to hand it back at exit
        free_slots[free_count++] = slot;
        available.fetch_add(1, std::memory_order_relaxed);
        return kThreadSlots;
    }
    thread_slot_plus_one = slot + 1;
    return slot;
}

} // namespace kupl::support::detail
