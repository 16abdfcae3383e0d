#include "copy/software/software_backend.h"

#include "support/trace.h"
#include "support/worker_loop.h"
#include "topo/topology.h"

#include <algorithm>
#include <cstdio>
#include <new>
#include <stdexcept>

namespace kupl::copy {

// One submitted copy. Its pieces are handed out from a cursor, not listed one by one, so a copy
// that was accepted needs no memory beyond its Job.
struct SoftwareBackend::Job {
    CopyDescriptor copy;
    CopyCompletion *done;
    RowKernel kernel;
    bool non_temporal;
    std::size_t units;     // bytes of a 1D copy, rows of a 2D one
    std::size_t per_piece; // units per piece
    std::atomic<std::size_t> pieces_left;
    std::size_t next_unit = 0; // the first unit not handed out yet; guarded by mutex_
    Job *next_job = nullptr;   // the next job of the same priority; guarded by mutex_
};

SoftwareBackend::SoftwareBackend(const SoftwareBackendOptions &options, const topo::Topology &topology,
                                 support::Counters &counters)
    : options_(options), counters_(counters) {
    const int wanted = std::max(1, options.num_channels);
    placement_.resize(static_cast<std::size_t>(wanted), "starting");
    const int started = support::start_threads(channels_, wanted, [this, &topology](int index) {
        return [this, index, &topology] { channel_main(index, topology); };
    });
    if (started == 0)
        throw std::runtime_error("no copy channel thread could be started");
    // Wait until every channel is placed, so placement queries and first copies see bound threads.
    std::unique_lock<std::mutex> lock(mutex_);
    placement_.resize(static_cast<std::size_t>(started)); // the channels write only their own
    placed_.wait(lock, [this, started] { return channels_placed_ == started; });
}

SoftwareBackend::~SoftwareBackend() {
    shutdown();
}

void SoftwareBackend::shutdown() {
    support::stop_workers(stopping_, idle_, channels_);
}

void SoftwareBackend::stop_at_exit(std::chrono::milliseconds limit) {
    support::stop_workers(stopping_, idle_, channels_, limit);
}

std::string SoftwareBackend::channel_placement(int index) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return placement_.at(static_cast<std::size_t>(index));
}

void SoftwareBackend::channel_main(int index, const topo::Topology &topology) {
    // Channels take the last cores: application threads usually start from core 0.
    const int core = topology.num_cores() - 1 - (index % topology.num_cores());
    std::string where;
    try {
        where = topology.place_calling_thread(core, options_.binding);
    } catch (const std::bad_alloc &) {
        // Threads may have taken the last of the address space (the start-up of a runtime under
        // ulimit -v): an exception here would end the process.
        where = "unknown"; // short enough to need no memory
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        placement_[static_cast<std::size_t>(index)] = std::move(where); // no copy: no memory needed
        ++channels_placed_;
    }
    placed_.notify_all();
    if (KUPL_TRACING()) {
        char name[48];
        std::snprintf(name, sizeof name, "copy channel %d", index);
        kupl_trace_name_thread(name, 1000 + index);
    }
    support::run_worker_loop([this] { return try_run_one(); },
                             [this] { return pending_count_.load(std::memory_order_relaxed) != 0; },
                             stopping_, idle_, options_.spin_us, counters_);
}

const char *SoftwareBackend::submit(const CopyDescriptor &copy, CopyCompletion *done) {
    const bool one_d = copy.height == 1;
    const std::size_t units = one_d ? copy.width : copy.height;
    const std::size_t bytes = copy.cost_bytes();
    std::size_t pieces = 1;
    if (bytes >= options_.split_threshold) {
        // Several pieces per thread so a channel that is slowed down does not hold up the copy,
        // but pieces large enough (>= 128 KiB) that taking one costs nothing in comparison.
        const std::size_t threads = static_cast<std::size_t>(num_channels() + options_.helpers);
        const std::size_t piece_bytes = std::clamp<std::size_t>(bytes / (threads * 4), 128 << 10, 4 << 20);
        pieces = std::min(units, (bytes + piece_bytes - 1) / piece_bytes);
    }
    std::size_t per_piece = (units + pieces - 1) / pieces;
    if (one_d)
        per_piece = (per_piece + 63) & ~std::size_t{63}; // whole cache lines per piece
    pieces = (units + per_piece - 1) / per_piece;
    auto *job = new (std::nothrow) Job{
        copy,      done,    select_row_kernel(copy.width, true), copy.bytes() >= options_.nt_threshold, units,
        per_piece, {pieces}};
    if (job == nullptr)
        return "out of memory for the copy's bookkeeping";
    unfinished_jobs_.fetch_add(1, std::memory_order_seq_cst);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        JobList &list = pending_[std::clamp(copy.priority, 0, 3)];
        (list.last != nullptr ? list.last->next_job : list.first) = job;
        list.last = job;
        pending_count_.fetch_add(pieces, std::memory_order_relaxed);
    }
    if (idle_.notify(pieces > 1))
        support::bump(counters_.worker_wakes);
    return nullptr;
}

bool SoftwareBackend::try_run_one() {
    if (pending_count_.load(std::memory_order_relaxed) == 0)
        return false;
    Piece piece{};
    bool more;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        int priority = 3;
        while (priority >= 0 && pending_[priority].first == nullptr)
            --priority;
        if (priority < 0)
            return false;
        JobList &list = pending_[priority];
        Job *job = list.first;
        piece = Piece{job, job->next_unit, std::min(job->units, job->next_unit + job->per_piece)};
        job->next_unit = piece.last;
        if (job->next_unit == job->units) { // its last piece: the job leaves the list
            list.first = job->next_job;
            if (list.first == nullptr)
                list.last = nullptr;
        }
        more = pending_count_.fetch_sub(1, std::memory_order_relaxed) > 1;
    }
    if (more && idle_.notify(false)) // a spinner skipped the wake-up for it: pass it on
        support::bump(counters_.worker_wakes);
    busy_.fetch_add(1, std::memory_order_relaxed);
    run_piece(piece);
    busy_.fetch_sub(1, std::memory_order_relaxed);
    return true;
}

bool SoftwareBackend::help_one() {
    return try_run_one();
}

void SoftwareBackend::run_piece(const Piece &piece) {
    Job &job = *piece.job;
    const CopyDescriptor &c = job.copy;
    const std::uint64_t trace_start = KUPL_TRACING() ? kupl_trace_now() : 0;
    if (c.height == 1) {
        copy_bytes(static_cast<char *>(c.dst) + piece.first, static_cast<const char *>(c.src) + piece.first,
                   piece.last - piece.first, job.non_temporal);
    } else {
        job.kernel(static_cast<char *>(c.dst) + piece.first * c.dpitch, c.dpitch,
                   static_cast<const char *>(c.src) + piece.first * c.spitch, c.spitch, c.width,
                   piece.last - piece.first);
    }
    support::bump(counters_.pieces_executed);
    if (trace_start != 0 && KUPL_TRACING()) {
        if (c.trace_threads != nullptr)
            c.trace_threads->fetch_or(std::uint64_t{1} << kupl_trace_thread_index(),
                                      std::memory_order_relaxed);
        const std::size_t bytes = (piece.last - piece.first) * (c.height == 1 ? 1 : c.width);
        char args[96];
        std::snprintf(args, sizeof args, "\"copy\":%llu,\"bytes\":%zu",
                      static_cast<unsigned long long>(c.trace_id), bytes);
        kupl_trace_slice(0, "copy", "copy piece", trace_start, kupl_trace_now(), args);
    }
    if (job.pieces_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        CopyCompletion *done = job.done;
        delete piece.job;
        done->copy_done(nullptr);
        unfinished_jobs_.fetch_sub(1, std::memory_order_seq_cst);
    }
}

} // namespace kupl::copy
