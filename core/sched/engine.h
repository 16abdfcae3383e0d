// Executes ops: copies go to the copy backend (or run on the calling thread when small), host
// functions to the executor, waits become continuations on events. The one place that starts an
// op of any kind (start(), one switch over the kinds), settles it (settle(): completes its event,
// counts it, frees it) and counts what happened; queues only decide when their ops start.
#pragma once

#include "copy/backend.h"
#include "exec/executor.h"
#include "sched/op.h"
#include "support/config.h"
#include "support/counters.h"
#include "support/fault_injection.h"
#include "support/parking.h"
#include "support/prompt_waits.h"
#include "support/speed_by_size.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace kupl::sched {

class Engine {
  public:
    Engine(const support::Config &config, std::unique_ptr<copy::CopyBackend> backend,
           std::unique_ptr<exec::Executor> executor, int num_cores, support::Counters &counters,
           support::FaultInjector &faults);

    copy::CopyBackend &backend() { return *backend_; }
    const copy::CopyBackend &backend() const { return *backend_; }
    exec::Executor &executor() { return *executor_; }
    const support::Config &config() const { return config_; }

    // How an op runs: asynchronously (a queue's head, or an op no queue orders: started here and
    // finished from any thread) or to its end on the calling thread (the synchronous queue).
    enum class Run { asynchronously, to_its_end };
    // Starts op. Asynchronously: returns true if it finished during the call (its owner settles
    // it), false if finish() will be called later, from any thread. To its end: returns true once
    // it has finished (op.error says how).
    bool start(Op &op, Run how = Run::asynchronously);
    // Called once when an op started asynchronously finishes: hands it back to its queue (which
    // settles it and starts the next), or settles an op that no queue orders.
    void finish(Op &op);
    // Ends op: completes its event (with its error, or record_error for a record), counts it and
    // frees it. Every admitted op passes here exactly once (KUPL_STATS reports the balance).
    void settle(std::unique_ptr<Op> op, const char *record_error);
    // Counts an op its queue admitted: from here on only settle() ends it.
    void count_admitted() { counters_.bump(support::Counter::ops_admitted); }
    // Runs an op that no queue orders (queue == NULL): it starts now and settles on its own.
    void run_unordered(std::unique_ptr<Op> op);
    // Runs a host item's function, marked as an item of its queue: on an executor thread, or on
    // the calling thread for the synchronous queue.
    void run_item(Op &op);
    // Why a copy runs on the calling thread, as copy_at_once() needs to know.
    struct InlineCopy {
        // The bytes of the stream of copies it joins when it runs there because every channel
        // sleeps, else 0.
        std::size_t parked_stream = 0;
        // It runs there because the awake channels copy slower: timed (see channels_keep_up()).
        bool timed = false;
    };
    // A copy op without the op (Queue::try_copy_at_once, on the submitting thread): true if
    // `copy` would run on the calling thread when started now, as start() decides it (the caller
    // then calls copy_at_once), and sets *how. A copy the thread is predicted to wait for at once
    // (see waits_at_once()) is placed as one.
    bool copies_inline(const copy::CopyDescriptor &copy, InlineCopy *how) const;
    // Called by kupl_memcpy*_async before anything else, with the address its call returns to in
    // the program: waits at once are predicted per call site (see waits_at_once()).
    static void copy_called_from(const void *site) { prompt_waits.call_from(site); }
    // Called by the submitting thread when its asynchronous copy call returns: a copy that
    // waits_at_once() judges by becomes this thread's probe (the clock is read once), and the
    // thread's next wait says whether it came at once. A probe still not waited for when the
    // next one returns was not (copies submitted back to back): that ends its site's streak.
    void copy_returned(const copy::CopyDescriptor &copy) {
        if (probes(copy))
            prompt_waits.probe_returned(support::now_ns());
    }
    // Runs such a copy on this thread (how: as copies_inline() set it), counts it and completes
    // record `generation` of `signal` (if any), as start() + settle() do for a copy op. Returns
    // nullptr or why it failed.
    const char *copy_at_once(const copy::CopyDescriptor &copy, const InlineCopy &how, Event *signal,
                             std::uint64_t generation);
    // Copies synchronously; large copies use the channels while the caller helps.
    // Returns nullptr or why it failed.
    const char *copy_and_wait(const copy::CopyDescriptor &copy);

    // Waits until done() is true: helps the copy engine, spins briefly, then sleeps on `wakeups`
    // (whoever makes done() true must notify it). announce() runs before each sleep, after the
    // sleep is prepared, so a notifier that only wakes announced waiters cannot miss this one.
    template <typename Done> void block_until(Done done, support::EventCount &wakeups) {
        block_until(done, wakeups, [] {});
    }
    template <typename Done, typename Announce>
    void block_until(Done done, support::EventCount &wakeups, Announce announce) {
        waited_since_copy = true; // this thread's next copy starts a new stream (parked_stream_with)
        if (prompt_waits.probe_pending())
            prompt_waits.waited(support::now_ns());
        if (!done())
            wait_unfinished(done, wakeups, announce);
    }

    // True if no copy and no host item is in flight (the calling item, if any, excepted).
    bool quiescent() const {
        // A copy's completion may post a host item and a host item may submit a copy, each counted
        // before the other is uncounted: executor, backend, executor again sees every hand-off.
        return executor_->idle() && backend_->idle() && executor_->idle();
    }
    // For KUPL_STATS: the caller's and the channels' measured speeds by copy size, one line
    // without its end, or "" if none was measured.
    std::string speed_summary() const;
    // At process exit: returns once no copy and no host item is in flight, then stops the
    // threads, abandoning one that has not ended after `limit` (see support/join_within.h).
    void drain_and_stop(std::chrono::milliseconds limit);

  private:
    // copy_and_wait() for a copy the backend copies: submits it (failing with an injected fault
    // if `fail`) and waits, helping. Returns nullptr or why it failed. Apart from copy_and_wait(),
    // so that a copy that runs at once keeps to few code pages (api/api_support.h).
    [[gnu::noinline]] const char *hand_off_and_wait(const copy::CopyDescriptor &copy, bool fail);
    // block_until() for work not done yet. Not inlined: a wait for work that is done (a copy that
    // ran inline) keeps to few code pages (api/api_support.h).
    template <typename Done, typename Announce>
    [[gnu::noinline]] void wait_unfinished(Done done, support::EventCount &wakeups, Announce announce) {
        counters_.bump(support::Counter::caller_waits);
        // An executor thread that sleeps here lends its slot to other host items (the item it
        // waits for may be one of them) until the wait is over; a short wait does not.
        struct LentSlot {
            exec::Executor &executor;
            bool lent = false;
            void lend() {
                if (!lent)
                    executor.begin_wait();
                lent = true;
            }
            ~LentSlot() {
                if (lent)
                    executor.end_wait();
            }
        } slot{*executor_};
        const std::uint64_t began = support::now_ns(),
                            deadline = began + std::uint64_t{config_.spin_us} * 1000;
        support::SpinWait spin(began);
        while (!done()) {
            if (may_help() && backend_->help_one())
                continue;
            if (const std::uint64_t now = support::now_ns(); now < deadline) {
                spin.pause(now);
                continue;
            }
            slot.lend();
            const std::uint32_t key = wakeups.prepare_wait();
            announce();
            if (done()) {
                wakeups.cancel_wait();
                return;
            }
            counters_.bump(support::Counter::caller_sleeps);
            wakeups.commit_wait(key);
        }
    }

    // A waiting caller takes copy pieces only while that leaves every busy runtime thread a core:
    // while a host function computes, helping would slow it more than it speeds up the copy.
    bool may_help() const {
        return config_.wait_helps && executor_->busy() + backend_->busy_threads() < num_cores_;
    }
    // True if copies of this cost (one copy, or a stream of them) are worth waking sleeping
    // channels for: large enough to be split, and long enough, by the backend's measurements,
    // that channels woken now still finish sooner than the caller alone. On a VM a wake-up held
    // the caller 10-20 us and the channel ran 25-40 us later: 16-256 KiB after a pause ran at
    // 0.06-0.34x of a memcpy when they woke a channel, 1 MiB at 0.8x.
    bool worth_waking(std::size_t cost_bytes) const;
    // True if the backend, ready, finishes this copy about as soon as the caller copying it
    // itself (both speeds measured on copies of its size class and shape; see
    // CopyBackend::hand_off_slowdown): then a hand-off loses nothing even when the copy is waited
    // for at once, and overlaps any compute. Not measured yet: each side once (the caller's not
    // at all where no caller speed would turn the judgement). A judgement goes the other way, to
    // measure that side again, when the speed of the side it would choose has moved by kMoved
    // either way since the last such one, and otherwise every kExploreEvery-th of a thread
    // (kExploreCloseEvery-th when the slowdown is within kCloseCall of 1).
    bool channels_keep_up(const copy::CopyDescriptor &copy) const;
    // channels_keep_up()'s judgement from the speeds measured so far, without its exploration:
    // false only when both speeds are measured for copies like this one and the channels, awake,
    // would be slower than the caller.
    bool awake_channels_take(const copy::CopyDescriptor &copy) const;
    static constexpr unsigned kExploreEvery = 32, kExploreCloseEvery = 8;
    static constexpr double kCloseCall = 1.25, kMoved = 2.0;
    // Both speeds when the side not chosen was last measured, by size class and shape.
    struct Explored {
        std::atomic<std::uint64_t> ours{0}, theirs{0};
    };
    mutable std::array<Explored, support::SpeedBySize::kSlots> explored_;
    // Where a copy runs: on the caller (small; with the channels awake but slower on copies like
    // it; or while every channel sleeps, when the stream of copies it belongs to is not yet worth
    // a wake-up) or on the backend (waking it, or not).
    enum class Placement { small, slower_channels, parked_inline, parked_hand_off, hand_off };
    static bool on_caller(Placement where) {
        return where == Placement::small || where == Placement::slower_channels ||
               where == Placement::parked_inline;
    }
    // A copy placed on the caller because the channels were slower is timed, which keeps the
    // caller's speed on such copies measured (channels_keep_up): one in kTimeEvery of a thread's,
    // as two clock reads cost ~55 ns on a VM, a tenth of a hot 64 KiB copy, and every one that
    // measures the caller's side again while the channels are chosen.
    static bool timed(Placement where) {
        static thread_local unsigned count = 0;
        if (where != Placement::slower_channels)
            return false;
        const bool explored = time_next_inline;
        time_next_inline = false;
        return explored || ++count % kTimeEvery == 0;
    }
    static constexpr unsigned kTimeEvery = 8;
    // Set by channels_keep_up() when it places a copy on the caller to measure that side again;
    // read by the timed() that follows on the same thread.
    static inline thread_local bool time_next_inline = false;
    // The one placement decision, for every copy: asynchronous ones (start(), copies_inline())
    // and those waited for at once (copy_and_wait(): the synchronous calls and queue). For an
    // asynchronous copy placed while every channel sleeps, sets *stream_bytes to
    // parked_stream_with(copy); a copy waited for at once is no part of a stream (nor is one
    // parked_stream_with() leaves out: 0).
    Placement place(const copy::CopyDescriptor &copy, bool waited_at_once, std::size_t *stream_bytes) const;
    // The bytes of the current stream of copies placed while every channel slept (each submitted
    // less than kStreamWindowNs after the previous one was done, and not after a wait of its
    // thread unless the awake channels would take it), `copy` included; 0 for a copy after its
    // thread's wait that the awake channels would not take: no part of any stream, a copy of its
    // own (then the clock is not read).
    std::size_t parked_stream_with(const copy::CopyDescriptor &copy) const;
    // Set by every wait of a thread (block_until()), cleared by its next parked_stream_with().
    static inline thread_local bool waited_since_copy = false;
    // Copies a thread waits for at once, predicted from its last waits. Between the inline
    // threshold and the synchronous one, a copy waited for at once runs fastest on the caller (a
    // hand-off adds its cost and overlaps nothing: hot 256 KiB copies, halved, ran at 0.84x of
    // the caller's memcpy), and one beside compute on the channels (its overlap). So an
    // asynchronous copy there, submitted to an idle queue, is placed as if waited for at once
    // when the last PromptWaits::kStreak such copies from its call site were waited for within
    // PromptWaits::kGapNs of their call's return (less than a hand-off costs: nothing to overlap);
    // one wait that comes later (the thread computed meanwhile) ends the streak, and the site's
    // next copy hands off again. Per call site (support/prompt_waits.h): the sweep's copies
    // waited for at once and those beside compute come from two lines of one thread, and counted
    // per thread, neither ever reached the streak. Copies from one site that alternate the two
    // still never do: as without the prediction.
    // Rows narrower than a cache line are left out: bound by a miss per row, they go faster on
    // two threads even waited for at once (hot 8 B x 1024 rows at a 32 KiB pitch: 0.87x of the
    // caller's copy on the caller, 1.05-1.08x halved).
    bool probes(const copy::CopyDescriptor &copy) const {
        return copy.cost_bytes() >= 4 * config_.inline_threshold &&
               copy.cost_bytes() < config_.sync_threshold && (copy.height == 1 || copy.width >= 64);
    }
    bool waits_at_once(const copy::CopyDescriptor &copy) const {
        return probes(copy) && prompt_waits.predicts();
    }
    static inline thread_local support::PromptWaits prompt_waits; // zeros: no site, no probe
    // Called when a copy placed while every channel slept is done inline (with the stream's bytes
    // it was placed with, if it is part of one) or handed off (0: the channels wake, the stream is
    // over).
    void end_parked_copy(std::size_t stream_bytes);
    static constexpr std::uint64_t kStreamWindowNs = 100000;
    // Executes a copy on the calling thread; timed: adds its speed to caller_speed_.
    void copy_now(const copy::CopyDescriptor &copy, bool timed = false);
    // A copy that copies_inline() kept on this thread: fails it when `fail` (fault injection),
    // else executes it. Returns nullptr or the injected fault.
    const char *copy_inline(const copy::CopyDescriptor &copy, bool fail, bool timed);
    // Counts a settled copy: its bytes, or its failure.
    void count_copy(const copy::CopyDescriptor &copy, const char *error);
    // Starts one copy (an op's, or a batch's piece): true if it finished during the call (with
    // *error set if it failed), false if the backend will tell `done`.
    bool start_copy(copy::CopyDescriptor &copy, copy::CopyCompletion &done, const char **error);
    // Counts a settled op by its kind (the synchronous queue's copies were counted as they ran).
    void count_settled(const Op &op);

    support::Config config_;
    std::unique_ptr<copy::CopyBackend> backend_;
    std::unique_ptr<exec::Executor> executor_;
    const int num_cores_;
    support::Counters &counters_;
    support::FaultInjector &faults_;
    // The caller's own copy speed on copies channels_keep_up() kept on it, for its next
    // judgements.
    support::SpeedBySize caller_speed_;
    // The stream of copies placed while every channel slept (see parked_stream_with()).
    std::atomic<std::uint64_t> last_parked_copy_ns_{0};
    std::atomic<std::size_t> parked_stream_bytes_{0};
};

} // namespace kupl::sched
