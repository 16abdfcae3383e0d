// kupl_memcpy, kupl_memcpy2d and their asynchronous forms: validate, describe, hand inward.
#include "api/api_support.h"
#include "kupl_ext.h"
#include "support/trace.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <new>

using kupl::api::fail;
using kupl::api::guarded;

namespace {

// Checks a 2D copy and fills a descriptor; contiguous shapes become 1D. Returns KUPL_OK or
// KUPL_ERROR (logged on behalf of `function`): NULL pointers, widths above a pitch, regions that
// wrap around the address space, overlapping source and destination.
[[gnu::hot]] int describe_copy(const char *function, void *dst, std::size_t dpitch, const void *src,
                               std::size_t spitch, std::size_t width, std::size_t height,
                               kupl::copy::CopyDescriptor &out) {
    out = {};
    if (width == 0 || height == 0)
        return KUPL_OK; // nothing to copy; still a valid call
    if (dst == nullptr || src == nullptr)
        return fail(function, "%s is NULL", dst == nullptr ? "dst" : "src");
    if (height > 1 && (width > dpitch || width > spitch))
        return fail(function, "width %zu exceeds the %s pitch %zu", width,
                    width > dpitch ? "destination" : "source", width > dpitch ? dpitch : spitch);
    constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
    const std::size_t pitch = dpitch > spitch ? dpitch : spitch;
    if (height > 1 && (height - 1) > (max - width) / (pitch == 0 ? 1 : pitch))
        return fail(function, "a %zu-row region of pitch %zu overflows the address space", height, pitch);
    const std::size_t span_d = (height - 1) * (height > 1 ? dpitch : 0) + width;
    const std::size_t span_s = (height - 1) * (height > 1 ? spitch : 0) + width;
    if (reinterpret_cast<std::uintptr_t>(dst) > max - span_d ||
        reinterpret_cast<std::uintptr_t>(src) > max - span_s)
        return fail(function, "the region wraps around the end of the address space");
    // Overlapping source and destination are rejected, not copied in some order: the pieces of a
    // copy run on several threads at once, so no order is promised (CUDA and vendor KUPL leave
    // overlap undefined). For 2D copies the footprints [base, base + (h-1)*pitch + w) count, even
    // where the rows themselves interleave without touching.
    const auto d = reinterpret_cast<std::uintptr_t>(dst);
    const auto s = reinterpret_cast<std::uintptr_t>(src);
    if (d < s + span_s && s < d + span_d)
        return fail(function, "source [%p, +%zu) and destination [%p, +%zu) overlap", src, span_s, dst,
                    span_d);
    out.dst = dst;
    out.src = src;
    if (height == 1 || (dpitch == width && spitch == width)) {
        out.width = width * height; // contiguous: one row
        out.height = 1;
        out.dpitch = out.spitch = out.width;
    } else {
        out.width = width;
        out.height = height;
        out.dpitch = dpitch;
        out.spitch = spitch;
    }
    return KUPL_OK;
}

// The copy's number in the trace.
std::uint64_t next_trace_copy() {
    static std::atomic<std::uint64_t> count{0};
    return count.fetch_add(1, std::memory_order_relaxed) + 1;
}

// Where a copy or batch goes and what it completes, resolved before anything is enqueued. The
// queue and the event are borrowed (api_support.h): the call looks up nothing else and runs no
// user code before it is done with them; an op that outlives the call takes references of its own.
struct Destination {
    kupl::Runtime *runtime = nullptr;
    kupl::sched::Queue *ordered = nullptr; // null: no queue orders it
    kupl::sched::Event *signal = nullptr;  // null: no event
    std::uint64_t generation = 0;          // the record of `signal` it completes

    // Finds the queue and the event and begins the event's record. From a successful return on,
    // the record must be settled (hand_over() or an op-less copy does it).
    [[gnu::hot]] int resolve(const char *function, kupl_queue_h queue, kupl_event_h event) {
        runtime = kupl::api::runtime_for(function);
        if (runtime == nullptr)
            return KUPL_ERROR;
        if (queue != nullptr && (ordered = kupl::api::borrow_queue(*runtime, queue, function)) == nullptr)
            return KUPL_ERROR;
        if (event == nullptr)
            return KUPL_OK;
        signal = kupl::api::borrow_event(*runtime, event, function);
        if (signal == nullptr)
            return KUPL_ERROR;
        generation = signal->begin_record(ordered != nullptr && !ordered->synchronous() ? ordered : nullptr);
        if (generation == 0)
            return fail(function, "event %p is still SUBMITTED (its previous record is not complete)",
                        static_cast<void *>(event));
        return KUPL_OK;
    }

    // Hands op to its queue (or runs it unordered, or inline on the synchronous queue); op
    // settles the record begun by resolve(), which is then published as placed.
    int hand_over(const char *function, std::unique_ptr<kupl::sched::Op> op) {
        const int status = place(function, std::move(op));
        if (signal != nullptr)
            signal->publish_record(generation); // borrowed, and this thread looks up no other event
        return status;
    }

  private:
    int place(const char *function, std::unique_ptr<kupl::sched::Op> op) {
        if (KUPL_TRACING()) {
            op->copy.trace_id = next_trace_copy();
            op->copy.trace_threads = &op->trace_threads;
            for (kupl::sched::BatchPiece &piece : op->batch)
                piece.copy.trace_threads = &op->trace_threads;
        }
        if (signal != nullptr) {
            op->signal = signal->shared_from_this();
            op->signal_generation = generation;
        }
        if (ordered == nullptr) {
            runtime->engine->run_unordered(std::move(op));
            return KUPL_OK;
        }
        if (ordered->synchronous()) {
            if (const char *error = ordered->run_inline(std::move(op)))
                return fail(function, "the copy failed: %s", error);
            return KUPL_OK;
        }
        ordered->enqueue(std::move(op));
        return KUPL_OK;
    }
};

// A copy that copy_async() could not run at once: an op for its queue, the engine or the
// synchronous queue. Not inlined, so that the copies that run at once keep to few code pages
// (api_support.h).
[[gnu::noinline]] int copy_as_op(const char *function, const kupl::copy::CopyDescriptor &copy,
                                 Destination &to) {
    std::unique_ptr<kupl::sched::Op> op;
    try {
        op = std::make_unique<kupl::sched::Op>(kupl::sched::Op::Kind::copy);
    } catch (const std::bad_alloc &) {
        if (to.signal != nullptr)
            to.signal->complete(to.generation, kupl::sched::Op::kNotAccepted);
        throw;
    }
    op->copy = copy;
    return to.hand_over(function, std::move(op));
}

[[gnu::hot]] int copy_async(const char *function, const kupl::copy::CopyDescriptor &copy, kupl_queue_h queue,
                            kupl_event_h event) {
    Destination to;
    if (to.resolve(function, queue, event) != KUPL_OK)
        return KUPL_ERROR;
    // An idle queue and a copy that runs on this thread anyway: no op to build (an untraced run
    // only, so that a trace shows every copy as an op of its queue).
    const bool at_once = to.ordered != nullptr && !KUPL_TRACING() &&
                         to.ordered->try_copy_at_once(copy, to.signal, to.generation);
    const int status = at_once ? KUPL_OK : copy_as_op(function, copy, to);
    // Whether its wait comes at once predicts where the thread's next copies go (copies_inline).
    if (to.ordered != nullptr && !to.ordered->synchronous())
        to.runtime->engine->copy_returned(copy);
    return status;
}

} // namespace

extern "C" {

[[gnu::hot]] int kupl_memcpy_async(void *dst, const void *src, size_t count, kupl_queue_h queue,
                                   kupl_event_h event) {
    kupl::sched::Engine::copy_called_from(__builtin_return_address(0));
    return guarded(__func__, KUPL_ERROR, [&] [[gnu::hot]] (const char *function) {
        kupl::copy::CopyDescriptor copy;
        if (describe_copy(function, dst, count, src, count, count, 1, copy) != KUPL_OK)
            return KUPL_ERROR;
        return copy_async(function, copy, queue, event);
    });
}

[[gnu::hot]] int kupl_memcpy2d_async(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                     size_t height, kupl_queue_h queue, kupl_event_h event) {
    kupl::sched::Engine::copy_called_from(__builtin_return_address(0));
    return guarded(__func__, KUPL_ERROR, [&] [[gnu::hot]] (const char *function) {
        kupl::copy::CopyDescriptor copy;
        if (describe_copy(function, dst, dpitch, src, spitch, width, height, copy) != KUPL_OK)
            return KUPL_ERROR;
        return copy_async(function, copy, queue, event);
    });
}

} // extern "C"

// The synchronous copies come after the asynchronous ones: libkupl is built with
// -fno-toplevel-reorder, so its functions lie in the order of the source, and a copy that runs at
// once on an idle queue, with its wait, keeps to few code pages (api_support.h).
namespace {

[[gnu::hot]] int copy_sync(const char *function, const kupl::copy::CopyDescriptor &copy) {
    kupl::Runtime *runtime = kupl::api::runtime_for(function);
    if (runtime == nullptr)
        return KUPL_ERROR;
    kupl::support::TraceScope trace("copy", function);
    if (trace.active())
        std::snprintf(
            trace.args, sizeof trace.args,
            "\"copy\":%llu,\"bytes\":%zu,\"shape\":\"%s\",\"width\":%zu,\"height\":%zu,\"dpitch\":%zu,"
            "\"spitch\":%zu",
            static_cast<unsigned long long>(next_trace_copy()), copy.bytes(), copy.height == 1 ? "1D" : "2D",
            copy.width, copy.height, copy.dpitch, copy.spitch);
    if (const char *error = runtime->engine->copy_and_wait(copy))
        return fail(function, "%s", error);
    return KUPL_OK;
}

} // namespace

extern "C" {

[[gnu::hot]] int kupl_memcpy(void *dst, const void *src, size_t count) {
    return guarded(__func__, KUPL_ERROR, [&] [[gnu::hot]] (const char *function) {
        kupl::copy::CopyDescriptor copy;
        if (describe_copy(function, dst, count, src, count, count, 1, copy) != KUPL_OK)
            return KUPL_ERROR;
        return copy_sync(function, copy);
    });
}

[[gnu::hot]] int kupl_memcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                               size_t height) {
    return guarded(__func__, KUPL_ERROR, [&] [[gnu::hot]] (const char *function) {
        kupl::copy::CopyDescriptor copy;
        if (describe_copy(function, dst, dpitch, src, spitch, width, height, copy) != KUPL_OK)
            return KUPL_ERROR;
        return copy_sync(function, copy);
    });
}

int kuplx_memcpy_batch_async(const kuplx_copy_piece_t *pieces, size_t count, kupl_queue_h queue,
                             kupl_event_h event) {
    return guarded(__func__, KUPL_ERROR, [&](const char *function) {
        if (pieces == nullptr && count > 0)
            return fail(function, "pieces is NULL with count %zu", count);
        auto op = std::make_unique<kupl::sched::Op>(kupl::sched::Op::Kind::batch);
        op->batch.reserve(count);
        for (size_t i = 0; i < count; ++i) {
            const kuplx_copy_piece_t &p = pieces[i];
            kupl::copy::CopyDescriptor copy; // (describe_copy ignores the pitches of a one-row piece)
            if (describe_copy(function, p.dst, p.dpitch, p.src, p.spitch, p.width, p.height, copy) != KUPL_OK)
                return fail(function, "piece %zu of %zu is invalid (see above); nothing was enqueued", i,
                            count);
            if (copy.bytes() == 0)
                continue;
            op->batch.emplace_back();
            op->batch.back().copy = copy;
        }
        Destination to;
        if (to.resolve(function, queue, event) != KUPL_OK)
            return KUPL_ERROR;
        return to.hand_over(function, std::move(op));
    });
}

} // extern "C"
