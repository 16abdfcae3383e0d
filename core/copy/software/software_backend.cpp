#include "copy/software/software_backend.h"

#include "support/trace.h"
#include "support/worker_loop.h"
#include "topo/topology.h"

#include <algorithm>
#include <cstdio>
#include <new>
#include <stdexcept>
#include <type_traits>

#include <pthread.h>

namespace kupl::copy {

// One submitted copy. Its pieces are handed out from a cursor, not listed one by one, so a copy
// that was accepted needs no memory beyond its Job. Laid out by who touches what, a cache line
// each: what a channel reads under the job lists' lock first (one miss while it holds the lock),
// the copy itself, then what the threads copying its parts write as they finish.
struct alignas(64) SoftwareBackend::Job {
    Job(const CopyDescriptor &copy, CopyCompletion *done, RowKernel kernel, bool non_temporal,
        std::size_t units, std::size_t per_piece, std::size_t first_piece, bool halved, std::size_t counted)
        : per_piece(per_piece), first_piece(first_piece), counted(counted), end_unit(units), halved(halved),
          copy(copy), done(done), kernel(kernel), units(units), non_temporal(non_temporal), units_left(units),
          caller_next(units) {}

    // Guarded by mutex_.
    Job *next_job = nullptr;   // the next job of the same priority
    std::size_t per_piece;     // units per piece (a halved copy's: of its caller part, see take_caller_part)
    std::size_t first_piece;   // units of the first piece (a halved copy's: its channel part)
    std::size_t counted;       // its share of its slot's count (pieces not handed out)
    std::size_t next_unit = 0; // the first unit not handed out yet
    std::size_t end_unit;      // the end of the units the list hands out
    std::uint64_t awake_submitted_ns = 0; // see start_delay_; 0: not measured on this copy
    bool halved;                          // two parts: the first a channel's, the second a waiting caller's

    alignas(64) CopyDescriptor copy;
    CopyCompletion *done;
    RowKernel kernel;
    std::size_t units; // bytes of a 1D copy, rows of a 2D one
    bool non_temporal;

    alignas(64) std::atomic<std::size_t> units_left; // not copied yet
    // A halved copy's caller part is [caller_next, units), claimed without the lock: whole by the
    // thread that submitted it when it waits (run_own_part), else piece by piece by whoever ran
    // the channel part (take_caller_part). The job list holds only the channel part.
    std::atomic<std::size_t> caller_next;
    // Holders, the last deletes it (release): the completion; of a halved copy also whoever runs
    // its channel part, and the submitting thread's ThreadJobs.
    std::atomic<int> refs{1};
    // Who completes it: the thread that copies its last units (open), or, once it claimed its
    // caller part, the submitting thread, which waits for it anyway (run_own_part).
    enum Finish : int { open, caller_completes, finished };
    std::atomic<int> finish{open};
};

thread_local SoftwareBackend::ThreadJobs SoftwareBackend::thread_jobs_;
thread_local bool SoftwareBackend::on_channel_thread_ = false;

namespace {
// Null if no key could be made (all taken): then no thread keeps jobs.
const pthread_key_t *thread_jobs_key(void (*end_thread)(void *)) {
    static pthread_key_t key;
    static const bool made = pthread_key_create(&key, end_thread) == 0;
    return made ? &key : nullptr;
}
} // namespace

bool SoftwareBackend::thread_keeps_jobs() {
    static_assert(std::is_trivially_destructible_v<ThreadJobs>, "see ThreadJobs");
    ThreadJobs &mine = thread_jobs_;
    if (mine.registered || mine.gone || on_channel_thread_)
        return mine.registered;
    const pthread_key_t *key = thread_jobs_key(end_thread_jobs);
    mine.registered = key != nullptr && pthread_setspecific(*key, &mine) == 0;
    return mine.registered;
}

void SoftwareBackend::end_thread_jobs(void *jobs) {
    auto &mine = *static_cast<ThreadJobs *>(jobs);
    mine.gone = true; // what the thread still runs (other keys' destructors) keeps no job
    mine.registered = false;
    if (mine.own_part != nullptr)
        release(mine.own_part);
    mine.own_part = nullptr;
    ::operator delete (mine.spare, std::align_val_t{alignof(Job)});
    mine.spare = nullptr;
}

SoftwareBackend::Job *SoftwareBackend::new_job() {
    void *memory = thread_jobs_.spare;
    thread_jobs_.spare = nullptr;
    if (memory == nullptr)
        memory = ::operator new (sizeof(Job), std::align_val_t{alignof(Job)}, std::nothrow);
    return static_cast<Job *>(memory);
}

void SoftwareBackend::release(Job *job) {
    if (job->refs.fetch_sub(1, std::memory_order_acq_rel) != 1)
        return;
    job->~Job();
    if (thread_jobs_.spare == nullptr && thread_keeps_jobs())
        thread_jobs_.spare = job;
    else
        ::operator delete (job, std::align_val_t{alignof(Job)});
}

namespace {

// Pieces at least this costly give the copy speed worth_waking() assumes.
constexpr std::size_t kTimedPieceBytes = 64 << 10;
// worth_waking(): copies of this many split thresholds or more always wake a channel, and a
// wake-up cost measured longer ago than this is measured again.
constexpr std::size_t kAlwaysWakeSplits = 8;
constexpr std::uint64_t kRemeasureNs = 50'000'000;
// A copy is worth waking a channel for when it takes this many whole wake-ups (call + latency).
constexpr double kWakeUpsPerCopy = 1.5;
// A thread that finished the channel part of a halved copy before the waiting caller came takes the
// caller's part in this many pieces, so that a caller who comes meanwhile (from compute) takes
// the rest instead of waiting for a channel that may copy slower than it.
constexpr std::size_t kCallerPartPieces = 4;

// Channels on several nodes: split copies can go to the channels of their destination's node.
bool plans_routing(const topo::PlacementPlan &plan) {
    int nodes_with_channels = 0;
    for (const topo::NodePlacement &node : plan.nodes)
        nodes_with_channels += plan.channels_on_node(node.index) > 0 ? 1 : 0;
    return nodes_with_channels > 1;
}

} // namespace

SoftwareBackend::SoftwareBackend(const SoftwareBackendOptions &options, const topo::Topology &topology,
                                 support::Counters &counters)
    : options_(options), counters_(counters), slots_(1 + options.plan.nodes.size()),
      idle_(1 + options.plan.nodes.size()) {
    const int wanted = std::max(1, options.num_channels);
    placement_.resize(static_cast<std::size_t>(wanted), "starting");
    const int started = support::start_threads(channels_, wanted, [this, &topology](int index) {
        return [this, index, &topology] { channel_main(index, topology); };
    });
    if (started == 0)
        throw std::runtime_error("no copy channel thread could be started");
    // Route only to nodes whose channels did start (a copy routed to a node without any would wait
    // for a caller to help).
    plan_ = options.plan;
    if (plan_.channels.size() > static_cast<std::size_t>(started))
        plan_.channels.resize(static_cast<std::size_t>(started));
    routing_ = options.locate != nullptr && plans_routing(plan_);
    // Wait until every channel is placed, so placement queries and first copies see bound threads.
    std::unique_lock<std::mutex> lock(placement_mutex_);
    placement_.resize(static_cast<std::size_t>(started)); // the channels write only their own
    placed_.wait(lock, [this, started] { return channels_placed_ == started; });
}

SoftwareBackend::~SoftwareBackend() {
    shutdown();
}

void SoftwareBackend::shutdown() {
    stopping_.store(true, std::memory_order_release);
    for (std::size_t slot = 1; slot < idle_.size(); ++slot)
        idle_[slot].notify(true);
    support::stop_workers(stopping_, idle_[0], channels_);
}

void SoftwareBackend::stop_at_exit(std::chrono::milliseconds limit) {
    stopping_.store(true, std::memory_order_release);
    for (std::size_t slot = 1; slot < idle_.size(); ++slot)
        idle_[slot].notify(true);
    support::stop_workers(stopping_, idle_[0], channels_, limit);
}

std::string SoftwareBackend::channel_placement(int index) const {
    std::lock_guard<std::mutex> lock(placement_mutex_);
    return placement_.at(static_cast<std::size_t>(index));
}

int SoftwareBackend::channel_node(int index) const {
    const auto &channels = options_.plan.channels;
    return static_cast<std::size_t>(index) < channels.size() ? channels[static_cast<std::size_t>(index)].node
                                                             : -1;
}

void SoftwareBackend::channel_main(int index, const topo::Topology &topology) {
    std::string where;
    try {
        if (static_cast<std::size_t>(index) < options_.plan.channels.size())
            where = topology.bind_calling_thread(options_.plan.channels[static_cast<std::size_t>(index)],
                                                 options_.binding);
        else
            where = "unbound (not in the placement plan)";
    } catch (const std::bad_alloc &) {
        // Threads may have taken the last of the address space (the start-up of a runtime under
        // ulimit -v): an exception here would end the process.
        where = "unknown"; // short enough to need no memory
    }
    {
        std::lock_guard<std::mutex> lock(placement_mutex_);
        placement_[static_cast<std::size_t>(index)] = std::move(where); // no copy: no memory needed
        ++channels_placed_;
    }
    placed_.notify_all();
    on_channel_thread_ = true;
    if (KUPL_TRACING()) {
        char name[48];
        std::snprintf(name, sizeof name, "copy channel %d", index);
        kupl_trace_name_thread(name, 1000 + index);
    }
    // Where routing may send copies, a channel serves its own node's slot besides slot 0, and
    // parks with its node's channels (decided from the full plan: the constructor routes only to
    // nodes with a started channel, so a narrower routing_ never strands a copy).
    const int node = options_.locate != nullptr && plans_routing(options_.plan) ? channel_node(index) : -1;
    support::IdleWorkers &idle = idle_[node >= 0 ? 1 + static_cast<std::size_t>(node) : 0];
    support::run_worker_loop([this, node] { return try_run_one(node); },
                             [this, node] { return has_work(node); }, stopping_, idle, options_.spin_us,
                             counters_);
}

bool SoftwareBackend::wake(std::size_t slot, bool all) {
    if (slot != 0 || idle_.size() == 1)
        return idle_[slot].notify(all);
    // Slot 0 is served by every channel, whatever group it parks in.
    if (all) {
        bool woke = false;
        for (support::IdleWorkers &group : idle_)
            woke = group.notify(true) || woke;
        return woke;
    }
    for (support::IdleWorkers &group : idle_)
        if (group.spinning.fetch_add(0, std::memory_order_seq_cst) > 0)
            return false; // a spinning channel takes it
    for (support::IdleWorkers &group : idle_)
        if (group.wake_parked(false))
            return true;
    return false;
}

const char *SoftwareBackend::submit(const CopyDescriptor &copy, CopyCompletion *done) {
    // The lines taken under the lock come in while the copy is cut (see prefetch_for_pieces).
    __builtin_prefetch(&mutex_, 1);
    __builtin_prefetch(&slots_[0].pending, 1);
    __builtin_prefetch(&slots_[0].count, 1);
    const bool one_d = copy.height == 1;
    const std::size_t units = one_d ? copy.width : copy.height;
    const std::size_t bytes = copy.cost_bytes();
    const bool split = copy.fail_with == nullptr && bytes >= options_.split_threshold;
    const bool halved = halves(copy) && units >= 2;
    // A halved copy's channel part taken by a channel that was awake (spinning or busy) when the
    // copy came measures start_delay_ (a parked one's wake-up is measured apart, in wake_cost).
    const std::uint64_t awake_since = halved && ready() ? support::now_ns() : 0;
    std::size_t pieces = 1, per_piece = units, first_piece = units;
    if (halved) {
        // Two parts: the channel takes the first, a caller who waits at once the other; cut where
        // they end together at the speeds measured on such parts. Only the first is a piece of
        // the job list: the waiting caller takes its part without the list's lock, which the
        // channel holds just then (measured on hot 256 KiB copies: the caller waited 0.6 us).
        first_piece = std::clamp<std::size_t>(
            static_cast<std::size_t>(static_cast<double>(units) * channel_share(copy, awake_since != 0)), 1,
            units - 1);
        if (one_d)
            first_piece = std::min((first_piece + 63) & ~std::size_t{63}, units - 1);
        per_piece = (units - first_piece + kCallerPartPieces - 1) / kCallerPartPieces;
        if (one_d)
            per_piece = (per_piece + 63) & ~std::size_t{63};
        pieces = 1;
    } else {
        if (split) {
            // Several pieces per thread so a channel that is slowed down does not hold up the copy,
            // but pieces large enough (>= 128 KiB) that taking one costs nothing in comparison.
            const std::size_t threads = static_cast<std::size_t>(num_channels() + options_.helpers);
            const std::size_t piece_bytes =
                std::clamp<std::size_t>(bytes / (threads * 4), 128 << 10, 4 << 20);
            pieces = std::min(units, (bytes + piece_bytes - 1) / piece_bytes);
        }
        per_piece = (units + pieces - 1) / pieces;
        if (one_d)
            per_piece = (per_piece + 63) & ~std::size_t{63}; // whole cache lines per piece
        pieces = (units + per_piece - 1) / per_piece;
        first_piece = per_piece;
    }
    // A split copy goes to the channels of the node that holds its destination (one page asked:
    // a system call, worth it only for copies this large), else to any channel.
    std::size_t slot = 0;
    if (routing_ && split && pieces > 1) {
        const int node = topo::route_copy(plan_, options_.locate(copy.dst));
        if (node >= 0)
            slot = 1 + static_cast<std::size_t>(node);
    }
    Job *const memory = new_job();
    if (memory == nullptr)
        return "out of memory for the copy's bookkeeping";
    Job *const job = new (memory)
        Job(copy, done, select_row_kernel(copy.width, true), copy.bytes() >= options_.nt_threshold, units,
            per_piece, first_piece, halved, pieces);
    job->awake_submitted_ns = awake_since;
    // A channel never waits: a halved copy it submits (the next op of a queue) leaves its caller
    // part to whoever runs the channel part.
    const bool own_part = halved && thread_keeps_jobs();
    if (halved) {
        job->end_unit = first_piece;
        job->caller_next.store(first_piece, std::memory_order_relaxed);
        job->refs.store(own_part ? 3 : 2, std::memory_order_relaxed);
    }
    unfinished_jobs_.fetch_add(1, std::memory_order_seq_cst);
    {
        std::lock_guard<support::ShortMutex> lock(mutex_);
        JobList &list = slots_[slot].pending[std::clamp(copy.priority, 0, 3)];
        (list.last != nullptr ? list.last->next_job : list.first) = job;
        list.last = job;
        slots_[slot].newest.store(job, std::memory_order_relaxed);
        slots_[slot].count.fetch_add(pieces, std::memory_order_relaxed);
    }
    // A halved copy wakes no more than one copy would: its second half is the waiting caller's.
    if (wake(slot, split && pieces > 1))
        counters_.bump(support::Counter::worker_wakes);
    if (own_part) {
        Job *older = thread_jobs_.own_part; // not waited for: its channel part's runner takes it
        thread_jobs_.own_part = job;
        thread_jobs_.own_part_backend = this;
        if (older != nullptr)
            release(older);
    }
    return nullptr;
}

[[gnu::hot]] bool SoftwareBackend::halves(const CopyDescriptor &copy) const {
    const std::size_t bytes = copy.cost_bytes();
    return copy.fail_with == nullptr && // a failing copy is one piece
           options_.halve_threshold != 0 && bytes >= options_.halve_threshold &&
           bytes < options_.split_threshold && options_.helpers > 0;
}

[[gnu::hot]] double SoftwareBackend::channel_share(const CopyDescriptor &copy, bool channel_awake) const {
    const bool two_d = copy.height != 1;
    return support::share_to_end_together(channel_speed_.ns_per_kib(copy.cost_bytes(), two_d),
                                          helper_speed_.ns_per_kib(copy.cost_bytes(), two_d),
                                          static_cast<double>(copy.cost_bytes()) / 1024.0,
                                          channel_awake ? start_delay_.get() : 0);
}

[[gnu::hot]] double SoftwareBackend::hand_off_slowdown(const CopyDescriptor &copy,
                                                       std::uint64_t caller_ns_per_kib) const {
    const std::uint64_t channel_ns_per_kib = channel_speed_.ns_per_kib(copy.cost_bytes(), copy.height != 1);
    if (channel_ns_per_kib == 0 || caller_ns_per_kib == 0)
        return 0;
    const double channel = static_cast<double>(channel_ns_per_kib),
                 caller = static_cast<double>(caller_ns_per_kib);
    // A whole copy must be copied as fast as the caller would. A halved one is cut where the
    // channel and a caller who waits at once end together (channel_share): it takes
    // caller * channel / (caller + channel) of the caller's time per KiB, so it always keeps up.
    // (A channel that comes late leaves the caller a larger part (channel_share), and the caller
    // takes the channel's part too when the channel has not started it by the end of its own; a
    // channel that starts late and copies slowly can still end after the caller alone would
    // have (measured: hot 1D 256 KiB). It is not counted here: judged slower, the copy would run
    // on the caller and a copy beside compute would lose its overlap.)
    return halves(copy) ? channel / (caller + channel) : channel / caller;
}

[[gnu::hot]] SoftwareBackend::MeasuredWakeUp SoftwareBackend::measured_wake_up() const {
    MeasuredWakeUp m;
    for (const support::IdleWorkers &group : idle_) {
        m.latency_ns = std::max(m.latency_ns, group.wake_cost.latency_ns());
        m.call_ns = std::max(m.call_ns, group.wake_cost.call_ns());
        m.measured_at = std::max(m.measured_at, group.wake_cost.measured_at());
    }
    m.ns_per_kib = ns_per_kib_.get();
    if (m.latency_ns != 0 && m.ns_per_kib != 0) {
        // Waited for at once, the caller pays the call, copies alone until a channel runs, then
        // shares the rest; with two threads not quite doubling the speed, that wins only when
        // the copy takes well over the wake-up's whole cost. Measured on a VM (wake-up 45-65 us
        // in all): waking for a 1 MiB copy (40 us) after a pause gave 0.8x of a memcpy waited
        // for at once, inline 0.98x; for 2 MiB (145 us) 1.02-1.08x (inline 0.98x), and beside
        // compute it hid most of the copy (1.5x gain, inline none), so the bar sits between.
        m.bar_bytes = kWakeUpsPerCopy * static_cast<double>(m.latency_ns + m.call_ns) /
                      static_cast<double>(m.ns_per_kib) * 1024.0;
    }
    return m;
}

[[gnu::hot]] bool SoftwareBackend::worth_waking(std::size_t cost_bytes) const {
    // Long copies always: a hand-off waited for at once costs the caller the wake-up call and
    // little else even if no channel comes soon, a few percent of a copy this long.
    if (cost_bytes >= kAlwaysWakeSplits * options_.split_threshold)
        return true;
    const MeasuredWakeUp wake_up = measured_wake_up();
    // Not measured yet, or not lately: hand it off, which measures. The estimate must not stay
    // stuck where a busy moment left it, keeping these copies off the channels for good.
    if (wake_up.bar_bytes == 0 || support::now_ns() - wake_up.measured_at > kRemeasureNs)
        return true;
    return static_cast<double>(cost_bytes) > wake_up.bar_bytes;
}

std::string SoftwareBackend::wake_cost_summary() const {
    const MeasuredWakeUp wake_up = measured_wake_up();
    if (wake_up.bar_bytes == 0)
        return "channel wake-up: not measured (no channel was woken for pieces)";
    // Below the split threshold no copy wakes a channel by itself, from 8 of them every copy does.
    const double bar_bytes = std::clamp(wake_up.bar_bytes, static_cast<double>(options_.split_threshold),
                                        static_cast<double>(kAlwaysWakeSplits * options_.split_threshold));
    char line[200];
    std::snprintf(line, sizeof line,
                  "channel wake-up: call %.1f us, channel running after %.1f us, copy speed %.2f GB/s: "
                  "while parked, copies below %.0f KiB stay on the caller",
                  static_cast<double>(wake_up.call_ns) / 1e3, static_cast<double>(wake_up.latency_ns) / 1e3,
                  1024.0 / static_cast<double>(wake_up.ns_per_kib), bar_bytes / 1024.0);
    std::string summary = line;
    if (const std::uint64_t delay = start_delay_.get(); delay != 0) {
        std::snprintf(line, sizeof line,
                      "; halved copies: a channel on its part %.1f us after the submission",
                      static_cast<double>(delay) / 1e3);
        summary += line;
    }
    return summary;
}

bool SoftwareBackend::has_work(int node) const {
    if (node == -2) {
        for (const Slot &slot : slots_)
            if (slot.count.load(std::memory_order_relaxed) != 0)
                return true;
        return false;
    }
    return slots_[0].count.load(std::memory_order_relaxed) != 0 ||
           (node >= 0 &&
            slots_[1 + static_cast<std::size_t>(node)].count.load(std::memory_order_relaxed) != 0);
}

void SoftwareBackend::prefetch_for_pieces() const {
    __builtin_prefetch(&mutex_, 1);
    __builtin_prefetch(&slots_[0].pending, 1);
    if (const Job *newest = slots_[0].newest.load(std::memory_order_relaxed)) {
        const auto *line = reinterpret_cast<const char *>(newest);
        __builtin_prefetch(line, 1);      // what the list hands out
        __builtin_prefetch(line + 64, 0); // the copy
        __builtin_prefetch(line + 128, 0);
    }
}

bool SoftwareBackend::try_run_one(int node) {
    if (!has_work(node))
        return false;
    prefetch_for_pieces();
    Piece piece{};
    bool more, channel_part;
    std::size_t slot = 0;
    {
        std::lock_guard<support::ShortMutex> lock(mutex_);
        // The slots this thread serves, its own node's first.
        std::size_t order[2];
        std::size_t served = 0;
        if (node >= 0)
            order[served++] = 1 + static_cast<std::size_t>(node);
        order[served++] = 0;
        JobList *list = nullptr;
        for (int priority = 3; priority >= 0 && list == nullptr; --priority) {
            for (std::size_t i = 0; i < served && list == nullptr; ++i)
                if (slots_[order[i]].pending[priority].first != nullptr)
                    list = &slots_[slot = order[i]].pending[priority];
            for (std::size_t s = 1; node == -2 && s < slots_.size() && list == nullptr; ++s)
                if (slots_[s].pending[priority].first != nullptr)
                    list = &slots_[slot = s].pending[priority];
        }
        if (list == nullptr)
            return false;
        Job *job = list->first;
        // A halved copy's channel part taken: how long after the submission a channel came (or,
        // a waiting caller taking it, at least how long the channel stayed away).
        if (job->awake_submitted_ns != 0 && job->next_unit == 0)
            start_delay_.add(support::now_ns() - job->awake_submitted_ns);
        const std::size_t size = job->next_unit == 0 ? job->first_piece : job->per_piece;
        piece = Piece{job, job->next_unit, std::min(job->end_unit, job->next_unit + size)};
        job->next_unit = piece.last;
        channel_part = job->halved;
        const bool last = job->next_unit == job->end_unit;
        if (last) { // its last piece: the job leaves the list
            list->first = job->next_job;
            if (list->first == nullptr)
                list->last = nullptr;
        }
        // One piece less, but a job keeps one count until it leaves.
        const std::size_t taken = last ? job->counted : job->counted > 1 ? 1 : 0;
        job->counted -= taken;
        more = slots_[slot].count.fetch_sub(taken, std::memory_order_relaxed) > taken;
    }
    // A channel that took work a spinner was counted on for passes the wake-up on, so the rest
    // does not wait for it. A helper (a waiting caller) never does: the spinning channel the
    // submitter counted on still finds the rest, and a split copy woke every channel when it was
    // submitted. A helper's wake-up would only repeat that one while the channel is still waking
    // (a system call each piece, ~10 us on a virtual machine).
    if (more && node != -2 && wake(slot, false))
        counters_.bump(support::Counter::worker_wakes);
    busy_.fetch_add(1, std::memory_order_relaxed);
    if (channel_part) { // of a halved copy: this thread holds a reference
        run_piece(piece, node != -2);
        take_caller_part(*piece.job, node != -2);
        release(piece.job);
    } else {
        run_piece(piece, node != -2);
    }
    busy_.fetch_sub(1, std::memory_order_relaxed);
    return true;
}

bool SoftwareBackend::help_one() {
    return run_own_part() || try_run_one(-2);
}

bool SoftwareBackend::run_own_part() {
    Job *job = thread_jobs_.own_part;
    if (job == nullptr)
        return false;
    // A job of another backend (one ended since) is only released: its channel part's runner
    // took its caller part before that backend ended.
    const bool mine = thread_jobs_.own_part_backend == this;
    thread_jobs_.own_part = nullptr;
    if (!mine) {
        release(job);
        return false;
    }
    // This thread completes the copy, not a channel that ends after it: the completion settles
    // the op, its event and its queue, which this thread touches next (a channel doing it
    // beside the caller's next submission slowed that 0.6 -> 1.0 us on hot 256 KiB copies).
    int open = Job::open; // else it is finished: completed by the thread that copied its last unit
    const bool completes =
        job->finish.compare_exchange_strong(open, Job::caller_completes, std::memory_order_acq_rel);
    const std::size_t first = job->caller_next.exchange(job->units, std::memory_order_acq_rel);
    const bool ran = first < job->units;
    if (ran) // not counted in busy_: this thread's own copy, as one it runs inline
        run_piece(Piece{job, first, job->units}, false);
    if (completes && finish_or_hand_back(*job))
        complete(*job);
    release(job);
    return completes || ran;
}

bool SoftwareBackend::finish_or_hand_back(Job &job) {
    if (job.finish.load(std::memory_order_acquire) == Job::finished)
        return true;
    // The rest is being copied, or waits for a channel: wait for its last unit as a waiting
    // caller does, helping with what is in the job list (the channel part itself, when no channel
    // has taken it yet: a parked one takes ~100 us to come here, and a queue's next copy waits
    // for this one; the halo example's 2D copies took twice as long without this), then leave
    // the completion to whoever copies that unit (a preempted channel must not keep this thread
    // spinning; it goes on to sleep in its wait).
    const std::uint64_t began = support::now_ns(), deadline = began + std::uint64_t{options_.spin_us} * 1000;
    support::SpinWait spin(began);
    for (std::uint64_t now = began; now < deadline; now = support::now_ns()) {
        if (!try_run_one(-2))
            spin.pause(now);
        if (job.finish.load(std::memory_order_acquire) == Job::finished)
            return true;
    }
    int state = Job::caller_completes;
    return !job.finish.compare_exchange_strong(state, Job::open, std::memory_order_acq_rel);
}

void SoftwareBackend::take_caller_part(Job &job, bool by_channel) {
    std::size_t first = job.caller_next.load(std::memory_order_relaxed);
    while (first < job.units) {
        const std::size_t last = std::min(job.units, first + job.per_piece);
        if (!job.caller_next.compare_exchange_weak(first, last, std::memory_order_acq_rel,
                                                   std::memory_order_relaxed))
            continue;
        run_piece(Piece{&job, first, last}, by_channel);
        first = job.caller_next.load(std::memory_order_relaxed);
    }
}

void SoftwareBackend::run_piece(const Piece &piece, bool by_channel) {
    Job &job = *piece.job;
    const CopyDescriptor &c = job.copy;
    const std::uint64_t trace_start = KUPL_TRACING() ? kupl_trace_now() : 0;
    const std::size_t units = piece.last - piece.first;
    const std::size_t cost = c.height == 1 ? units : units * (c.cost_bytes() / c.height);
    const std::uint64_t began = support::now_ns();
    if (c.fail_with != nullptr) {
        // Fault injection: nothing is written, and the failure is reported as a real one would be.
    } else if (c.height == 1) {
        copy_bytes(static_cast<char *>(c.dst) + piece.first, static_cast<const char *>(c.src) + piece.first,
                   units, job.non_temporal);
    } else {
        job.kernel(static_cast<char *>(c.dst) + piece.first * c.dpitch, c.dpitch,
                   static_cast<const char *>(c.src) + piece.first * c.spitch, c.spitch, c.width, units);
    }
    if (c.fail_with == nullptr && cost != 0) {
        const std::uint64_t ns_per_kib = (support::now_ns() - began) * 1024 / cost;
        if (cost >= kTimedPieceBytes)
            ns_per_kib_.add(ns_per_kib);
        // Split copies always go to the channels: only the speeds on the others decide anything.
        // Of a halved copy, the channel's speed on its own part, which the cut is for (copying
        // beside a waiting caller), not on the pieces of the caller's part it takes when no
        // caller came: as many as four a copy, they would outweigh it.
        const bool channel_part = !job.halved || piece.first == 0;
        if (c.cost_bytes() < options_.split_threshold && (!by_channel || channel_part))
            (by_channel ? channel_speed_ : helper_speed_).add(c.cost_bytes(), c.height != 1, ns_per_kib);
    }
    counters_.bump(support::Counter::pieces_executed);
    if (trace_start != 0 && KUPL_TRACING()) {
        if (c.trace_threads != nullptr)
            c.trace_threads->fetch_or(std::uint64_t{1} << kupl_trace_thread_index(),
                                      std::memory_order_relaxed);
        const std::size_t bytes = units * (c.height == 1 ? 1 : c.width);
        char args[96];
        std::snprintf(args, sizeof args, "\"copy\":%llu,\"bytes\":%zu",
                      static_cast<unsigned long long>(c.trace_id), bytes);
        kupl_trace_slice(0, "copy", "copy piece", trace_start, kupl_trace_now(), args);
    }
    if (job.units_left.fetch_sub(units, std::memory_order_acq_rel) == units &&
        job.finish.exchange(Job::finished, std::memory_order_acq_rel) == Job::open)
        complete(job);
}

void SoftwareBackend::complete(Job &job) {
    job.done->copy_done(job.copy.fail_with);
    release(&job);
    unfinished_jobs_.fetch_sub(1, std::memory_order_seq_cst);
}

} // namespace kupl::copy
