// An external copy engine (include/kupl_backend.h) as a CopyBackend, and the routing that puts
// it beside the software engine: copies the provider declares eligible go to it, the rest, and
// any it refuses, to the software engine, which is always there.
#pragma once

#include "copy/backend.h"
#include "kupl_backend.h"
#include "support/counters.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace kupl::copy {

// A loaded provider library and its open context. Each accepted copy is counted until its
// completion has returned; shutdown() waits for none to be left before it closes the provider and
// unloads the library (never while copies fly).
class ProviderBackend final : public CopyBackend {
  public:
    // Loads `path`, checks the ABI, opens the engine and reads its capabilities. Returns nullptr
    // and sets `why` if any step fails (nothing is left loaded then).
    static std::unique_ptr<ProviderBackend> load(const std::string &path, support::Counters &counters,
                                                 std::string &why);
    ~ProviderBackend() override;

    const char *name() const override { return name_.c_str(); }
    int num_channels() const override { return 0; }
    std::string channel_placement(int) const override { return "provider"; }
    // True if the provider's capabilities admit this copy.
    bool eligible(const CopyDescriptor &copy) const;
    // nullptr if the provider took the copy; else the provider refused it (`done` is not called).
    const char *submit(const CopyDescriptor &copy, CopyCompletion *done) override;
    bool idle() const override { return outstanding_.load(std::memory_order_seq_cst) == 0; }
    // Waits for the outstanding copies, closes the provider and unloads the library.
    void shutdown() override;

    // "fake (/path/libfake.so, ABI 1)" and the routing rule in words, for kupl-info.
    std::string provider_description() const override;
    std::string routing_rule() const override;

  private:
    struct Pending;
    ProviderBackend(void *library, const kupl_backend_provider_t *table, void *context,
                    const kupl_backend_caps_t &caps, std::string path, support::Counters &counters);
    static void complete(void *cookie, int status, const char *message);
    const char *error_text(const char *message) const;
    void poller_main();

    void *library_;
    const kupl_backend_provider_t *table_;
    void *context_;
    const kupl_backend_caps_t caps_;
    const std::string path_;
    const std::string name_;
    const bool polled_; // the provider has a progress() hook: our poller reports its completions
    support::Counters &counters_;
    std::atomic<std::size_t> outstanding_{0}; // accepted, completion not yet returned
    std::atomic<bool> closed_{false};
    // The poller of a provider with a progress() hook: runs while copies are outstanding.
    std::mutex poll_mutex_;
    std::condition_variable poll_wakeup_;
    bool poll_stop_ = false; // guarded by poll_mutex_
    std::thread poller_;
};

// The engine's backend when a provider is loaded: eligible copies to the provider, the rest (and
// the ones it refuses, and injected faults) to the software engine.
class RoutingBackend final : public CopyBackend {
  public:
    RoutingBackend(std::unique_ptr<ProviderBackend> provider, std::unique_ptr<CopyBackend> software);
    ~RoutingBackend() override;

    const char *name() const override { return name_.c_str(); }
    int num_channels() const override { return software_->num_channels(); }
    std::string channel_placement(int index) const override { return software_->channel_placement(index); }
    std::size_t nt_threshold() const override { return software_->nt_threshold(); }
    const char *submit(const CopyDescriptor &copy, CopyCompletion *done) override;
    bool help_one() override { return software_->help_one(); }
    int busy_threads() const override { return software_->busy_threads(); }
    bool idle() const override { return provider_->idle() && software_->idle(); }
    void shutdown() override;
    void stop_at_exit(std::chrono::milliseconds limit) override;
    std::string provider_description() const override { return provider_->provider_description(); }
    std::string routing_rule() const override { return provider_->routing_rule(); }

  private:
    std::unique_ptr<ProviderBackend> provider_;
    std::unique_ptr<CopyBackend> software_;
    const std::string name_;
};

// The engine's backend: `software` alone when `path` is empty or the provider there cannot be
// used (one warning line saying why), else a RoutingBackend over both.
std::unique_ptr<CopyBackend> attach_provider(const std::string &path, std::unique_ptr<CopyBackend> software,
                                             support::Counters &counters);

} // namespace kupl::copy
