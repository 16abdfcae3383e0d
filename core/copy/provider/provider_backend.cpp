#include "copy/provider/provider_backend.h"

#include "support/env_config.h"
#include "support/log.h"

#include <dlfcn.h>

#include <chrono>
#include <cstddef>
#include <new>
#include <set>
#include <system_error>

namespace kupl::copy {
namespace {

constexpr const char *kGenericFailure = "the copy engine provider reported a failure";

// The provider's message, prefixed with its name, as static text: events keep error texts as
// plain pointers for as long as the process lives, beyond the provider's unloading. Distinct
// texts are kept once; past a bound (a provider that puts addresses or counters in its messages)
// or without memory, the generic text stands in.
const char *interned(const std::string &name, const char *message) {
    static std::mutex *mutex = new std::mutex;                       // leaked: used until exit
    static std::set<std::string> *texts = new std::set<std::string>; // likewise
    constexpr std::size_t kMaxTexts = 256;
    try {
        std::string text = "copy engine " + name + ": " + (message != nullptr ? message : "the copy failed");
        std::lock_guard<std::mutex> lock(*mutex);
        auto found = texts->find(text);
        if (found != texts->end())
            return found->c_str();
        if (texts->size() >= kMaxTexts)
            return kGenericFailure;
        return texts->insert(std::move(text)).first->c_str();
    } catch (const std::bad_alloc &) {
        return kGenericFailure;
    }
}

std::string size_text(std::size_t bytes) {
    return env::format_size(bytes);
}

} // namespace

// What the provider's completion callback needs: allocated at submit (a failed allocation is a
// refusal, so an accepted copy needs no memory afterwards).
struct ProviderBackend::Pending {
    ProviderBackend *backend;
    CopyCompletion *done;
};

std::unique_ptr<ProviderBackend> ProviderBackend::load(const std::string &path, support::Counters &counters,
                                                       std::string &why) {
    dlerror();
    void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        const char *error = dlerror();
        why = std::string("cannot load it (") + (error != nullptr ? error : "unknown error") + ")";
        return nullptr;
    }
    // Everything below unloads the library again if the provider cannot be used.
    struct Unload {
        void *library;
        ~Unload() {
            if (library != nullptr)
                dlclose(library);
        }
    } unload{library};
    auto query =
        reinterpret_cast<kupl_backend_provider_query_fn>(dlsym(library, KUPL_BACKEND_PROVIDER_SYMBOL));
    if (query == nullptr) {
        why = "it does not export " KUPL_BACKEND_PROVIDER_SYMBOL "()";
        return nullptr;
    }
    const kupl_backend_provider_t *table = query();
    if (table == nullptr) {
        why = KUPL_BACKEND_PROVIDER_SYMBOL "() returned NULL";
        return nullptr;
    }
    if (table->abi_version != KUPL_BACKEND_ABI_VERSION) {
        why = "it was built for ABI " + std::to_string(table->abi_version);
        return nullptr;
    }
    // Version 1's table ends with progress: a smaller table is not a version 1 table.
    constexpr std::size_t v1_size = offsetof(kupl_backend_provider_t, progress) + sizeof(table->progress);
    if (table->struct_size < v1_size) {
        why = "its provider table has " + std::to_string(table->struct_size) + " bytes, ABI 1 needs " +
              std::to_string(v1_size);
        return nullptr;
    }
    if (table->open == nullptr || table->close == nullptr || table->capabilities == nullptr ||
        table->submit == nullptr) {
        why = "its provider table lacks open, close, capabilities or submit";
        return nullptr;
    }
    void *context = nullptr;
    if (const int status = table->open(&context); status != KUPL_BACKEND_OK) {
        why = "its open() returned " + std::to_string(status);
        return nullptr;
    }
    kupl_backend_caps_t caps{};
    caps.struct_size = sizeof caps;
    if (const int status = table->capabilities(context, &caps); status != KUPL_BACKEND_OK) {
        table->close(context);
        why = "its capabilities() returned " + std::to_string(status);
        return nullptr;
    }
    try {
        std::unique_ptr<ProviderBackend> backend(
            new ProviderBackend(library, table, context, caps, path, counters));
        unload.library = nullptr; // the backend owns it now
        return backend;
    } catch (const std::system_error &) {
        table->close(context);
        why = "no thread could be started for its progress() poller";
        return nullptr;
    }
}

ProviderBackend::ProviderBackend(void *library, const kupl_backend_provider_t *table, void *context,
                                 const kupl_backend_caps_t &caps, std::string path,
                                 support::Counters &counters)
    : library_(library), table_(table), context_(context), caps_(caps), path_(std::move(path)),
      name_(table->name != nullptr && *table->name != '\0' ? std::string(table->name).substr(0, 31)
                                                           : "provider"),
      polled_(table->progress != nullptr), counters_(counters) {
    if (polled_)
        poller_ = std::thread([this] { poller_main(); });
}

ProviderBackend::~ProviderBackend() {
    shutdown();
}

bool ProviderBackend::eligible(const CopyDescriptor &copy) const {
    const std::size_t bytes = copy.bytes();
    if (bytes < caps_.min_bytes || (caps_.max_bytes != 0 && bytes > caps_.max_bytes))
        return false;
    if (caps_.max_row_bytes != 0 && copy.width > caps_.max_row_bytes)
        return false;
    const std::size_t alignment = caps_.alignment > 1 ? caps_.alignment : 1;
    if (reinterpret_cast<std::uintptr_t>(copy.dst) % alignment != 0 ||
        reinterpret_cast<std::uintptr_t>(copy.src) % alignment != 0)
        return false;
    if (copy.height == 1)
        return true;
    if ((caps_.flags & KUPL_BACKEND_CAP_2D) == 0)
        return false;
    if (caps_.max_rows != 0 && copy.height > caps_.max_rows)
        return false;
    if (caps_.max_pitch != 0 && (copy.dpitch > caps_.max_pitch || copy.spitch > caps_.max_pitch))
        return false;
    return copy.dpitch % alignment == 0 && copy.spitch % alignment == 0;
}

const char *ProviderBackend::submit(const CopyDescriptor &copy, CopyCompletion *done) {
    // Counted before the closed check, so shutdown() either sees this copy or this call sees it
    // closing (both sequentially consistent).
    const std::size_t before = outstanding_.fetch_add(1, std::memory_order_seq_cst);
    auto refuse = [this](const char *why) {
        outstanding_.fetch_sub(1, std::memory_order_seq_cst);
        return why;
    };
    if (closed_.load(std::memory_order_seq_cst))
        return refuse("the copy engine provider is closed");
    auto *pending = new (std::nothrow) Pending{this, done};
    if (pending == nullptr)
        return refuse("out of memory for the copy's bookkeeping");
    if (before == 0 && polled_) {
        std::lock_guard<std::mutex> lock(poll_mutex_); // the poller checks under this lock
        poll_wakeup_.notify_one();
    }
    kupl_backend_copy_t request{};
    request.dst = copy.dst;
    request.src = copy.src;
    request.dpitch = copy.dpitch;
    request.spitch = copy.spitch;
    request.width = copy.width;
    request.height = copy.height;
    request.priority = copy.priority;
    if (table_->submit(context_, &request, &ProviderBackend::complete, pending) != KUPL_BACKEND_OK) {
        delete pending; // complete() is never called for a refused copy
        counters_.bump(support::Counter::provider_refusals);
        return refuse("the copy engine provider refused the copy");
    }
    counters_.bump(support::Counter::provider_copies);
    return nullptr;
}

void ProviderBackend::complete(void *cookie, int status, const char *message) {
    auto *pending = static_cast<Pending *>(cookie);
    ProviderBackend *self = pending->backend;
    CopyCompletion *done = pending->done;
    delete pending;
    done->copy_done(status == KUPL_BACKEND_OK ? nullptr : self->error_text(message));
    // Only now: shutdown() may unload the library once nothing is outstanding, and the engine
    // counts a copy as in flight until its completion has returned.
    self->outstanding_.fetch_sub(1, std::memory_order_seq_cst);
}

const char *ProviderBackend::error_text(const char *message) const {
    return interned(name_, message);
}

void ProviderBackend::poller_main() {
    std::unique_lock<std::mutex> lock(poll_mutex_);
    for (;;) {
        poll_wakeup_.wait(lock,
                          [this] { return poll_stop_ || outstanding_.load(std::memory_order_seq_cst) != 0; });
        if (poll_stop_)
            return;
        lock.unlock();
        while (outstanding_.load(std::memory_order_seq_cst) != 0)
            if (table_->progress(context_) <= 0)
                std::this_thread::yield(); // nothing completed yet: leave the core to others
        lock.lock();
    }
}

void ProviderBackend::shutdown() {
    if (closed_.exchange(true, std::memory_order_seq_cst))
        return;
    // Never close or unload while copies fly: their completions run provider code and ours.
    while (outstanding_.load(std::memory_order_seq_cst) != 0)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (poller_.joinable()) {
        {
            std::lock_guard<std::mutex> lock(poll_mutex_);
            poll_stop_ = true;
        }
        poll_wakeup_.notify_one();
        poller_.join();
    }
    table_->close(context_); // joins the provider's own threads
    dlclose(library_);
}

std::string ProviderBackend::provider_description() const {
    return name_ + " (" + path_ + ", ABI " + std::to_string(KUPL_BACKEND_ABI_VERSION) + ", completions " +
           (polled_ ? "polled by KUPL" : "from its own thread") + ")";
}

std::string ProviderBackend::routing_rule() const {
    std::string rule = "to " + name_ + ": ";
    rule += (caps_.flags & KUPL_BACKEND_CAP_2D) != 0 ? "1D and 2D copies" : "1D copies";
    rule += " of " + size_text(caps_.min_bytes) + ".." +
            (caps_.max_bytes != 0 ? size_text(caps_.max_bytes) : "any");
    if (caps_.max_row_bytes != 0)
        rule += ", rows up to " + size_text(caps_.max_row_bytes);
    if ((caps_.flags & KUPL_BACKEND_CAP_2D) != 0 && caps_.max_rows != 0)
        rule += ", up to " + std::to_string(caps_.max_rows) + " rows";
    if ((caps_.flags & KUPL_BACKEND_CAP_2D) != 0 && caps_.max_pitch != 0)
        rule += ", pitches up to " + size_text(caps_.max_pitch);
    if (caps_.alignment > 1)
        rule += ", aligned to " + std::to_string(caps_.alignment) + " B";
    rule += "; the rest, and what it refuses: software";
    return rule;
}

RoutingBackend::RoutingBackend(std::unique_ptr<ProviderBackend> provider,
                               std::unique_ptr<CopyBackend> software)
    : provider_(std::move(provider)), software_(std::move(software)),
      name_(std::string(provider_->name()) + "+" + software_->name()) {}

RoutingBackend::~RoutingBackend() {
    shutdown();
}

const char *RoutingBackend::submit(const CopyDescriptor &copy, CopyCompletion *done) {
    // A refused copy is not an error: the software engine is always there to take it.
    if (copy.fail_with == nullptr && provider_->eligible(copy) && provider_->submit(copy, done) == nullptr)
        return nullptr;
    return software_->submit(copy, done);
}

void RoutingBackend::shutdown() {
    provider_->shutdown();
    software_->shutdown();
}

void RoutingBackend::stop_at_exit(std::chrono::milliseconds limit) {
    provider_->shutdown(); // idle by now: closes and unloads at once
    software_->stop_at_exit(limit);
}

std::unique_ptr<CopyBackend> attach_provider(const std::string &path, std::unique_ptr<CopyBackend> software,
                                             support::Counters &counters) {
    if (path.empty())
        return software;
    std::string why;
    std::unique_ptr<ProviderBackend> provider = ProviderBackend::load(path, counters, why);
    if (provider == nullptr) {
        env::warn_ignored("KUPL_BACKEND", path.c_str(),
                          "a copy-engine provider library (kupl_backend.h, ABI " +
                              std::to_string(KUPL_BACKEND_ABI_VERSION) + "): " + why,
                          "the software engine");
        return software;
    }
    support::log(support::LogLevel::info, "copy engine provider %s loaded from %s", provider->name(),
                 path.c_str());
    return std::make_unique<RoutingBackend>(std::move(provider), std::move(software));
}

} // namespace kupl::copy
