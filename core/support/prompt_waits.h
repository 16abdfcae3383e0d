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
// and the thread's next wait, prompt or late, extends or ends its site's streak. The last kSites
// sites waited for are kept, most recent first; a new site takes the place of the one waited for
// longest ago and starts from nothing. (A place chosen by a hash of the address, as until
// 2026-12-07, gave two sites one place in about one program of four, by where the compiler put
// them, and then neither ever reached its streak: the sweep's two 2D copy lines did.)
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
            streak_at_front(probe_site_) = 0;
        probe_site_ = call_site_;
        returned_ns_ = now_ns;
    }
    bool probe_pending() const { return returned_ns_ != 0; }
    // The thread's first wait after a probe begins at `now_ns`: prompt, it extends the probe's
    // site's streak, late (the thread computed meanwhile), it ends it.
    void waited(std::uint64_t now_ns) {
        const bool prompt = now_ns - returned_ns_ < kGapNs;
        returned_ns_ = 0;
        unsigned &in_a_row = streak_at_front(probe_site_);
        in_a_row = prompt ? in_a_row + 1 : 0;
    }
    // The waits at once in a row of copies from `site`.
    unsigned streak(const void *site) const {
        for (const Site &entry : sites_)
            if (entry.site == site)
                return entry.streak;
        return 0;
    }

  private:
    struct Site {
        const void *site;
        unsigned streak;
    };
    // Moves `site` to the front, with its streak if it was kept (else 0: it replaces the last,
    // the least recent), and returns that streak: one lookup for reading and writing it.
    unsigned &streak_at_front(const void *site) {
        std::size_t at = 0;
        while (at + 1 < kSites && sites_[at].site != site)
            ++at;
        const Site moved = sites_[at].site == site ? sites_[at] : Site{site, 0};
        for (; at > 0; --at)
            sites_[at] = sites_[at - 1];
        sites_[0] = moved;
        return sites_[0].streak;
    }

    Site sites_[kSites];
    const void *call_site_;
    const void *probe_site_;    // the site of the probe awaiting its wait
    std::uint64_t returned_ns_; // when that probe's call returned; 0: none awaits
};

} // namespace kupl::support
