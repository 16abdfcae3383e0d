// The software copy engine: channels are worker threads pinned to cores with hwloc. A large
// copy is cut into pieces that all channels (and waiting callers, see help_one) take in turn.
#pragma once

#include "copy/backend.h"
#include "copy/kernels/copy_kernels.h"
#include "support/counters.h"
#include "support/parking.h"
#include "support/short_mutex.h"
#include "support/speed_by_size.h"
#include "support/worker_loop.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "topo/placement.h"
#include "topo/topology.h"

namespace kupl::copy {

struct SoftwareBackendOptions {
    int num_channels = 1;
    std::size_t split_threshold = 512 * 1024; // copies at least this large are split
    // Copies at least this large but below split_threshold are cut in two, so that a caller who
    // waits for one at once takes the part no channel has started, and a copy beside compute
    // still goes to the channels whole (one after the other). Halves until the speeds of both
    // parts were measured, then cut where both end together. 0: never; needs helpers.
    std::size_t halve_threshold = 0;
    std::size_t nt_threshold = 64 << 20; // copies at least this large use streaming stores
    unsigned spin_us = 50;
    int helpers = 1; // threads besides the channels that take pieces (waiting callers)
    topo::ThreadBinding binding = topo::ThreadBinding::numa_node;
    // Where each channel goes (topo/placement.h); channel i takes plan.channels[i] (unbound where
    // the plan has fewer). A split copy is routed by topo::route_copy(plan, locate(dst)).
    topo::PlacementPlan plan;
    // The NUMA node holding an address (logical index), -1 if unknown; unset: never routed.
    std::function<int(const void *)> locate;
};

class SoftwareBackend final : public CopyBackend {
  public:
    SoftwareBackend(const SoftwareBackendOptions &options, const topo::Topology &topology,
                    support::Counters &counters);
    ~SoftwareBackend() override;

    const char *name() const override { return "software"; }
    int num_channels() const override { return static_cast<int>(channels_.size()); }
    std::string channel_placement(int index) const override;
    std::size_t nt_threshold() const override { return options_.nt_threshold; }
    const char *submit(const CopyDescriptor &copy, CopyCompletion *done) override;
    bool help_one() override;
    int busy_threads() const override { return busy_.load(std::memory_order_relaxed); }
    bool idle() const override { return unfinished_jobs_.load(std::memory_order_seq_cst) == 0; }
    // A channel is spinning (in any node's group) or copying: a hand-off costs no wake-up.
    [[gnu::hot]] bool ready() const override {
        if (busy_.load(std::memory_order_relaxed) > 0)
            return true;
        for (const support::IdleWorkers &group : idle_)
            if (group.spinning.load(std::memory_order_relaxed) > 0)
                return true;
        return false;
    }
    bool worth_waking(std::size_t cost_bytes) const override;
    std::uint64_t ns_per_kib(std::size_t cost_bytes, bool two_d) const override {
        return channel_speed_.ns_per_kib(cost_bytes, two_d);
    }
    double hand_off_slowdown(const CopyDescriptor &copy, std::uint64_t caller_ns_per_kib) const override;
    std::string wake_cost_summary() const override;
    void shutdown() override;
    void stop_at_exit(std::chrono::milliseconds limit) override;

  private:
    struct Job;
    // Jobs of one priority with pieces not yet handed out, oldest first.
    struct JobList {
        Job *first = nullptr;
        Job *last = nullptr;
    };
    // Rows [first, last) of a 2D job, or bytes [first, last) of a 1D job (height == 1).
    struct Piece {
        Job *job;
        std::size_t first;
        std::size_t last;
    };

    // Jobs waiting for channels: slot 0 for any channel, slot 1 + n for the channels of node n.
    struct Slot {
        JobList pending[4];                // by priority; guarded by mutex_
        std::atomic<std::size_t> count{0}; // pieces not yet handed out
        // The job added last: only read to prefetch its lines (it may be gone) before the lock.
        std::atomic<const Job *> newest{nullptr};
    };
    // Brings in the lines a thread taking a piece reads under the lock, all at once, before it
    // takes the lock: one after the other, each a miss, they held a channel 0.2-0.4 us.
    void prefetch_for_pieces() const;

    // Per thread: the halved copy it submitted last, whose caller part it takes when it waits (one
    // reference; a newer one replaces it, and the older one's caller part is then taken by
    // whoever runs its channel part), and the memory of a job it can reuse: a Job freed here and
    // allocated again by malloc went through the arena's lock while channels freed jobs too.
    // Trivially destructible: for a thread_local with a destructor glibc allocates at the
    // thread's first use and aborts the process when it cannot (the out-of-memory tests). A
    // thread's jobs are given back at its exit by a pthread key's destructor instead; a thread
    // that could not set the key keeps none, and the main thread (no key destructor runs for it)
    // keeps its own to the end of the process.
    struct ThreadJobs {
        const SoftwareBackend *own_part_backend = nullptr;
        Job *own_part = nullptr;
        void *spare = nullptr;
        bool registered = false; // the key's destructor will run for this thread
        bool gone = false;       // that destructor ran: the thread is ending, it keeps no job
    };
    static thread_local ThreadJobs thread_jobs_;
    static thread_local bool on_channel_thread_;
    // True if this thread may keep jobs (registers it for its exit the first time).
    static bool thread_keeps_jobs();
    static void end_thread_jobs(void *jobs); // the key's destructor
    static Job *new_job();         // raw memory for a Job: this thread's spare, else allocated; null if none
    static void release(Job *job); // drops a reference; the last deletes the job

    // True if `copy` goes in two parts: one for a channel, one for a waiting caller.
    bool halves(const CopyDescriptor &copy) const;
    // The channel's share of a halved copy: where it and a waiting caller end together at the
    // speeds measured on such parts (channel_speed_, helper_speed_), a channel that is awake
    // coming start_delay_ after the submission and the caller at once; one half until both speeds
    // are measured.
    double channel_share(const CopyDescriptor &copy, bool channel_awake) const;
    // A channel of node `node` takes pieces of its node's slot and of slot 0; a helper (node -2)
    // takes any. Whoever takes the channel part of a halved copy then takes what no one took of
    // its caller part.
    bool try_run_one(int node);
    // A waiting caller: runs what no one took yet of its own halved copy's caller part (ThreadJobs).
    bool run_own_part();
    // For run_own_part, which claimed the completion of `job`: true once its last unit is copied
    // (then the caller completes it), false if it handed the completion back to whoever copies
    // that unit, after spinning as long as a channel spins.
    bool finish_or_hand_back(Job &job);
    // After a halved copy's channel part: what no one took of its caller part, a piece at a time.
    void take_caller_part(Job &job, bool by_channel);
    bool has_work(int node) const;
    // Runs a piece; by_channel: on a channel (not a helping caller).
    void run_piece(const Piece &piece, bool by_channel);
    // Reports a copied job done and drops the completion's reference.
    void complete(Job &job);
    void channel_main(int index, const topo::Topology &topology);
    // Wakes channels for new pieces in `slot` (all of them when `all`).
    bool wake(std::size_t slot, bool all);
    int channel_node(int index) const;
    // The wake-up costs measured so far (the largest of the node groups'): latency and call, ns;
    // when the latency was last measured; the channels' copy speed (ns per KiB); and from them
    // the copy cost (bytes) above which a copy is worth a wake-up, 0 until measured.
    struct MeasuredWakeUp {
        std::uint64_t latency_ns = 0, call_ns = 0, measured_at = 0, ns_per_kib = 0;
        double bar_bytes = 0;
    };
    MeasuredWakeUp measured_wake_up() const;

    const SoftwareBackendOptions options_;
    support::Counters &counters_;
    // Guards the job lists and their jobs' cursors: taken by the submitter, every channel and
    // every waiting caller for each piece.
    mutable support::ShortMutex mutex_;
    // Guards the channels' start-up: placement_ and channels_placed_.
    mutable std::mutex placement_mutex_;
    std::condition_variable placed_;
    int channels_placed_ = 0;  // guarded by placement_mutex_
    std::vector<Slot> slots_;  // sized once, in the constructor
    topo::PlacementPlan plan_; // its channels trimmed to those that started
    bool routing_ = false;     // channels on several nodes and a way to locate memory
    std::atomic<bool> stopping_{false};
    std::atomic<int> busy_{0};
    std::atomic<std::size_t> unfinished_jobs_{0}; // submitted, completion not yet returned
    std::vector<support::IdleWorkers> idle_;      // one per slot: channels park on their node's
    support::RunningEstimate ns_per_kib_;         // a channel's copy speed, measured on pieces
    support::SpeedBySize channel_speed_;          // the same by the size of unsplit copies
    support::SpeedBySize helper_speed_;           // and a helping caller's on their pieces
    // From a halved copy's submission, channels awake, until a channel takes its part (ns): on a
    // 2-vCPU VM ~0.8 us from a spinning channel (2.4 us while spin-waits yielded at every poll),
    // a sixth of a hot 2D copy of 1024 rows.
    support::RunningEstimate start_delay_;
    std::vector<std::thread> channels_;
    std::vector<std::string> placement_; // written by each channel at start, guarded by placement_mutex_
};

} // namespace kupl::copy
