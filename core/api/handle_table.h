// Maps opaque API handles to live objects. A handle is an id, never an address, so a destroyed
// or foreign handle is recognised without dereferencing it.
//
// A handle is 64 bits: | generation (12) | id (48) | kind tag (4) |. The generation is the
// runtime's: a child after fork() starts a new runtime with a generation greater than any of its
// ancestors', so a handle the parent created before the fork is never found in the child, even
// though the child's ids start from the same number. Ids are never reused within a runtime: after
// 2^48 - 256 creations (a year at ten million creations a second) the table refuses new handles.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace kupl::api {

static_assert(sizeof(void *) == 8, "handles pack a generation, an id and a tag into 64 bits");

template <typename T> class HandleTable {
  public:
    static constexpr unsigned kTagBits = 4;
    static constexpr unsigned kIdBits = 48;
    static constexpr std::uint64_t kGenerationMask = (std::uint64_t{1} << (64 - kIdBits - kTagBits)) - 1;
    static constexpr std::uint64_t kFirstId = 0x100;
    static constexpr std::uint64_t kLastId = (std::uint64_t{1} << kIdBits) - 1;

    // `tag` (1..15) marks the kind, so a queue handle passed as an event is rejected too.
    // `generation` is the runtime's (see runtime.cpp); only its low 12 bits are used.
    HandleTable(std::uintptr_t tag, std::uint64_t generation)
        : tag_(tag), generation_bits_((generation & kGenerationMask) << (kIdBits + kTagBits)) {}

    // A new handle for object, or nullptr when the ids are exhausted. May throw std::bad_alloc
    // (then nothing is added).
    void *add(std::shared_ptr<T> object) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (next_id_ > kLastId)
            return nullptr;
        const std::uintptr_t handle = generation_bits_ | (next_id_ << kTagBits) | tag_;
        objects_.emplace(handle, std::move(object));
        ++next_id_; // only once the object is in: a failed add wastes no id
        return reinterpret_cast<void *>(handle);
    }
    // The object behind handle, or nullptr. A thread that looks up the handle it looked up last
    // (a loop of copies on one queue with one event) takes it from its own cache, without the
    // table's lock: valid while no handle of this table has been removed since (removals_).
    std::shared_ptr<T> find(const void *handle) const {
        return borrow(handle) != nullptr ? last_found().object() : nullptr;
    }
    // As find(), without a reference count changed on the cached path (each change is a locked
    // instruction: a hot 4 KiB copy and its wait took ~195 ns counted, ~140 ns borrowed). The
    // pointer stays valid until this thread's next look-up in a table of this type, because this
    // thread's cache holds the object until then, even if another thread destroys the handle
    // meanwhile. For calls that look up each handle once and run no user code while they use it.
    [[gnu::hot]] T *borrow(const void *handle) const {
        const auto key = reinterpret_cast<std::uintptr_t>(handle);
        LastFound &last = last_found();
        const std::uint64_t removals = removals_.load(std::memory_order_acquire);
        if (last.table == this && last.handle == key && last.removals == removals && last.found != nullptr)
            return last.found;
        return look_up(key, removals, last);
    }
    std::shared_ptr<T> remove(const void *handle) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = objects_.find(reinterpret_cast<std::uintptr_t>(handle));
        if (it == objects_.end())
            return nullptr;
        std::shared_ptr<T> object = std::move(it->second);
        objects_.erase(it);
        // Before the call returns, so that no thread finds the handle in its cache afterwards.
        removals_.fetch_add(1, std::memory_order_acq_rel);
        return object;
    }
    std::vector<std::shared_ptr<T>> all() const {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<std::shared_ptr<T>> result;
        result.reserve(objects_.size());
        for (const auto &entry : objects_)
            result.push_back(entry.second);
        return result;
    }

  private:
    // One per thread and table type. It holds its object (what makes borrow() safe): a destroyed
    // object lives on until the thread's next look-up in a table of its type, or its exit.
    // Trivially destructible, the reference kept in raw storage: for a thread_local with a
    // destructor glibc allocates at the thread's first use and aborts the process when it cannot
    // (a thread whose first call comes once memory has run out). A pthread key's destructor drops
    // the reference when the thread exits; a thread that could not set the key, and the main
    // thread (no key destructor runs for it), keep theirs to the end of the process.
    struct LastFound {
        const HandleTable *table = nullptr;
        std::uintptr_t handle = 0;
        std::uint64_t removals = 0;
        T *found = nullptr;   // object().get(), read without touching the shared_ptr
        bool holding = false; // `storage` holds a constructed shared_ptr
        alignas(std::shared_ptr<T>) unsigned char storage[sizeof(std::shared_ptr<T>)] = {};
        std::shared_ptr<T> &object() {
            return *std::launder(reinterpret_cast<std::shared_ptr<T> *>(storage));
        }
    };
    static_assert(std::is_trivially_destructible_v<LastFound>, "see LastFound");
    static LastFound &last_found() {
        thread_local LastFound last;
        return last;
    }
    // Null if no key could be made (all taken): then no thread drops its reference at exit.
    static const pthread_key_t *last_found_key() {
        static pthread_key_t key;
        static const bool made = pthread_key_create(&key, &forget_last_found) == 0;
        return made ? &key : nullptr;
    }
    static void start_holding(LastFound &last) {
        new (last.storage) std::shared_ptr<T>();
        last.holding = true;
        const pthread_key_t *key = last_found_key();
        if (key != nullptr)
            pthread_setspecific(*key, &last); // without memory for it: kept to the process's end
    }
    // The key's destructor, at the thread's exit. A call the thread makes after it (another key's
    // destructor) holds again and sets the key again.
    static void forget_last_found(void *cache) {
        auto &last = *static_cast<LastFound *>(cache);
        std::shared_ptr<T> object = std::move(last.object());
        last.object().~shared_ptr();
        last.holding = false;
        last.found = nullptr;
        last.table = nullptr;
        // `object` goes last: destroying it may run code that looks up handles again.
    }
    // borrow() past this thread's cache: the table, under its lock. Not inlined, so that a copy's
    // path keeps to few code pages (api_support.h).
    [[gnu::noinline]] T *look_up(std::uintptr_t key, std::uint64_t removals, LastFound &last) const {
        std::shared_ptr<T> object;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = objects_.find(key);
            if (it != objects_.end())
                object = it->second;
        }
        if (!last.holding)
            start_holding(last);
        // `removals` was read before the lookup: a removal since then makes this entry stale.
        last.table = this;
        last.handle = key;
        last.removals = removals;
        last.object() = std::move(object); // a miss empties the cache: nothing stays pinned by it
        last.found = last.object().get();
        return last.found;
    }

    const std::uintptr_t tag_;
    const std::uintptr_t generation_bits_;
    mutable std::mutex mutex_;
    std::uint64_t next_id_ = kFirstId; // guarded by mutex_
    std::unordered_map<std::uintptr_t, std::shared_ptr<T>> objects_;
    std::atomic<std::uint64_t> removals_{0}; // bumped by every remove()
};

} // namespace kupl::api
