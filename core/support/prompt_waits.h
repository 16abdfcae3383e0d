// Which copies a thread waits for at once, told from its last waits per call site of the copy
// (Engine::waits_at_once): a thread's copies waited for at once and those it computes beside
// usually come from different lines of the program (a halo's packing and a prefetch), and a streak
// of one must not be ended by the other.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kupl::support {

// One per thread (not thread-safe); all zeros is the empty record, so a thread_local needs no
// constructor. A copy "probe" is one the prediction looks at (Engine::probes): its call returns,
// and the thread's next wait, prompt or late, extends or ends its site's streak. Up to kSites
// sites, by a hash of the address; a site that takes another's slot starts from nothing.
class PromptWaits {
  public:
    static constexpr unsigned kStreak = 4;        // waits at once in a row that predict the next
    static constexpr std::uint64_t kGapNs = 1000; // a wait this soon after its copy returned is at once
    static constexpr std::size_t kSites = 4;

    // A copy call from `site` (the address it returns to in the program) begins.
    void call_from(const void *site) { call_site_ = site; }
    // True if the copy call in progress is predicted to be waited for at once: its site's last
    // kStreak probes were, and no probe of this thread is still unwaited.
    bool predicts() const { return returned_ns_ == 0 && streak(call_site_) >= kStreak; }
    // The copy call in progress, a probe, returns at `now_ns`. A probe still unwaited was not
    // waited for at once (copies submitted back to back): that ends its site's streak.
    void probe_returned(std::uint64_t now_ns) {
        if (returned_ns_ != 0)
            set_streak(probe_site_, 0);
        probe_site_ = call_site_;
        returned_ns_ = now_ns;
    }
    bool probe_pending() const { return returned_ns_ != 0; }
    // The thread's first wait after a probe begins at `now_ns`: prompt, it extends the probe's
    // site's streak, late (the thread computed meanwhile), it ends it.
    void waited(std::uint64_t now_ns) {
        const bool prompt = now_ns - returned_ns_ < kGapNs;
        returned_ns_ = 0;
        set_streak(probe_site_, prompt ? streak(probe_site_) + 1 : 0);
    }
    // The waits at once in a row of copies from `site`.
    unsigned streak(const void *site) const {
        const Site &entry = slot(site);
        return entry.site == site ? entry.streak : 0;
    }

  private:
    struct Site {
        const void *site;
        unsigned streak;
    };
    static std::size_t index(const void *site) {
        const auto key = reinterpret_cast<std::uintptr_t>(site);
        return (key ^ (key >> 5) ^ (key >> 11)) % kSites;
    }
    Site &slot(const void *site) { return sites_[index(site)]; }
    const Site &slot(const void *site) const { return sites_[index(site)]; }
    void set_streak(const void *site, unsigned streak) { slot(site) = Site{site, streak}; }

    Site sites_[kSites];
    const void *call_site_;
    const void *probe_site_;    // the site of the probe awaiting its wait
    std::uint64_t returned_ns_; // when that probe's call returned; 0: none awaits
};

} // namespace kupl::support
