#include "sched/event.h"

#include "kupl.h"

namespace kupl::sched {

std::uint64_t Event::begin_record() {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uint64_t recorded = recorded_.load(std::memory_order_relaxed);
    if (recorded > completed_.load(std::memory_order_relaxed))
        return 0;
    failed_ = false;
    error_.clear();
    recorded_.store(recorded + 1, std::memory_order_release);
    return recorded + 1;
}

void Event::complete(std::uint64_t generation, const char *error) {
    std::vector<std::function<void()>> ready;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (error != nullptr) {
            failed_ = true;
            error_ = error;
        }
        completed_.store(generation, std::memory_order_seq_cst);
        auto it = continuations_.begin();
        while (it != continuations_.end()) {
            if (it->first <= generation) {
                ready.push_back(std::move(it->second));
                it = continuations_.erase(it);
            } else {
                ++it;
            }
        }
    }
    completions_.notify(true);
    for (auto &fn : ready)
        fn();
}

int Event::status() const {
    const std::uint64_t recorded = recorded_.load(std::memory_order_acquire);
    if (recorded == 0)
        return KUPL_EVENT_STATUS_CREATED;
    return completed_.load(std::memory_order_acquire) >= recorded ? KUPL_EVENT_STATUS_COMPLETE
                                                                  : KUPL_EVENT_STATUS_SUBMITTED;
}

void Event::when_complete(std::uint64_t generation, std::function<void()> fn) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (completed_.load(std::memory_order_relaxed) < generation) {
            continuations_.emplace_back(generation, std::move(fn));
            return;
        }
    }
    fn();
}

void Event::set_record_queue(std::uint64_t generation, const void *queue) {
    std::lock_guard<std::mutex> lock(mutex_);
    record_queue_generation_ = generation;
    record_queue_ = queue;
}

const void *Event::record_queue(std::uint64_t generation) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return record_queue_generation_ == generation ? record_queue_ : nullptr;
}

bool Event::failed(std::string *why) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (why != nullptr)
        *why = error_;
    return failed_;
}

} // namespace kupl::sched
