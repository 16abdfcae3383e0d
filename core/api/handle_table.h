// Maps opaque API handles to live objects. A handle is an id, never an address, so a destroyed
// or foreign handle is recognised without dereferencing it, and ids are never reused.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace kupl::api {

template <typename T> class HandleTable {
  public:
    // `tag` (1..15) marks the kind, so a queue handle passed as an event is rejected too.
    explicit HandleTable(std::uintptr_t tag) : tag_(tag) {}

    void *add(std::shared_ptr<T> object) {
        std::lock_guard<std::mutex> lock(mutex_);
        const std::uintptr_t handle = (next_id_++ << 4) | tag_;
        objects_.emplace(handle, std::move(object));
        return reinterpret_cast<void *>(handle);
    }
    std::shared_ptr<T> find(const void *handle) const {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = objects_.find(reinterpret_cast<std::uintptr_t>(handle));
        return it == objects_.end() ? nullptr : it->second;
    }
    std::shared_ptr<T> remove(const void *handle) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = objects_.find(reinterpret_cast<std::uintptr_t>(handle));
        if (it == objects_.end())
            return nullptr;
        std::shared_ptr<T> object = std::move(it->second);
        objects_.erase(it);
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
    const std::uintptr_t tag_;
    mutable std::mutex mutex_;
    std::uintptr_t next_id_ = 0x100; // guarded by mutex_
    std::unordered_map<std::uintptr_t, std::shared_ptr<T>> objects_;
};

} // namespace kupl::api
