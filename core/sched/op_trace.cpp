#include "sched/op_trace.h"

#include "sched/event.h"
#include "sched/queue.h"
#include "support/trace.h"

#include <cinttypes>
#include <cstdio>

namespace kupl::sched {
namespace {

// Appends `"threads":[tid,...]` for a copy's thread mask.
int thread_list(char *out, std::size_t size, std::uint64_t mask) {
    int used = std::snprintf(out, size, "\"threads\":[");
    bool first = true;
    for (unsigned i = 0; i < 64 && used < static_cast<int>(size); ++i) {
        if ((mask >> i & 1) == 0)
            continue;
        used += std::snprintf(out + used, size - static_cast<std::size_t>(used), "%s%" PRIu64,
                              first ? "" : ",", kupl_trace_thread_of_index(i));
        first = false;
    }
    if (used < static_cast<int>(size))
        used += std::snprintf(out + used, size - static_cast<std::size_t>(used), "]");
    return used;
}

void describe_size(char *out, std::size_t size, std::size_t bytes) {
    if (bytes >= (std::size_t{1} << 20))
        std::snprintf(out, size, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
    else if (bytes >= 1024)
        std::snprintf(out, size, "%.1f KiB", static_cast<double>(bytes) / 1024);
    else
        std::snprintf(out, size, "%zu B", bytes);
}

// Appends a copy's rate and the threads that executed it (,"gbps":..,"threads":..) at args + used.
void append_rate_and_threads(char *args, std::size_t size, int used, std::size_t bytes, std::uint64_t ns,
                             const Op &op) {
    if (used >= static_cast<int>(size))
        return;
    used += std::snprintf(args + used, size - static_cast<std::size_t>(used), ",\"gbps\":%.3f,",
                          ns > 0 ? static_cast<double>(bytes) / static_cast<double>(ns) : 0.0);
    if (used < static_cast<int>(size))
        thread_list(args + used, size - static_cast<std::size_t>(used),
                    op.trace_threads.load(std::memory_order_relaxed));
}

} // namespace

void trace_before_complete(Op &op, std::uint64_t now_ns) {
    if (op.signal == nullptr)
        return;
    op.signal_event_id = op.signal->trace_id();
    // A copy no queue orders shows as an asynchronous span, which no arrow can start from.
    if (op.trace_track != Op::kTraceAsync)
        op.signal->set_trace_completion(op.signal_generation, now_ns,
                                        op.trace_track != 0 ? op.trace_track : kupl_trace_thread_track());
}

void trace_flow_from_event(const Event &event, std::uint64_t generation, std::uint64_t track,
                           std::uint64_t ns) {
    std::uint64_t from_ns = 0, from_track = 0;
    if (event.trace_completion(generation, from_ns, from_track))
        kupl_trace_flow("event", "event", from_track == 0 ? track : from_track, from_ns, track, ns);
}

void trace_settled(const Op &op, const char *record_error, std::uint64_t completed_ns) {
    const std::uint64_t end = kupl_trace_now();
    const std::uint64_t start = op.trace_start != 0 ? op.trace_start : completed_ns;
    const std::uint64_t track = op.trace_track == Op::kTraceAsync ? 0 : op.trace_track;
    const unsigned long long queue = op.queue != nullptr ? op.queue->trace_number() : 0;
    const unsigned long long event = op.signal_event_id;
    char args[480], name[96];
    int used = std::snprintf(args, sizeof args, "\"queue\":%llu", queue);
    if (event != 0)
        used += std::snprintf(args + used, sizeof args - static_cast<std::size_t>(used),
                              ",\"event\":%llu,\"generation\":%llu", event,
                              static_cast<unsigned long long>(op.signal_generation));
    const char *error = op.kind == Op::Kind::record ? record_error : op.error;
    if (error != nullptr) {
        char escaped[200];
        used += std::snprintf(args + used, sizeof args - static_cast<std::size_t>(used), ",\"error\":\"%s\"",
                              kupl_trace_escape(escaped, sizeof escaped, error));
    }
    const char *category = "op";
    switch (op.kind) {
    case Op::Kind::copy: {
        category = "copy";
        const copy::CopyDescriptor &c = op.copy;
        const std::size_t bytes = c.bytes();
        char size[32];
        describe_size(size, sizeof size, bytes);
        if (c.height == 1)
            std::snprintf(name, sizeof name, "copy %s", size);
        else
            std::snprintf(name, sizeof name, "copy 2D %zu x %zu B (%s)", c.height, c.width, size);
        used += std::snprintf(args + used, sizeof args - static_cast<std::size_t>(used),
                              ",\"copy\":%llu,\"bytes\":%zu,\"shape\":\"%s\",\"width\":%zu,\"height\":%zu,"
                              "\"dpitch\":%zu,\"spitch\":%zu",
                              static_cast<unsigned long long>(c.trace_id), bytes, c.height == 1 ? "1D" : "2D",
                              c.width, c.height, c.dpitch, c.spitch);
        append_rate_and_threads(args, sizeof args, used, bytes, end - start, op);
        break;
    }
    case Op::Kind::batch: {
        category = "copy";
        const std::size_t bytes = op.batch_bytes();
        char size[32];
        describe_size(size, sizeof size, bytes);
        std::snprintf(name, sizeof name, "batch of %zu copies (%s)", op.batch.size(), size);
        used += std::snprintf(args + used, sizeof args - static_cast<std::size_t>(used),
                              ",\"copy\":%llu,\"bytes\":%zu,\"shape\":\"batch\",\"pieces\":%zu",
                              static_cast<unsigned long long>(op.copy.trace_id), bytes, op.batch.size());
        append_rate_and_threads(args, sizeof args, used, bytes, end - start, op);
        break;
    }
    case Op::Kind::host_function:
        category = "item";
        std::snprintf(name, sizeof name, "%s", op.trace_name[0] != '\0' ? op.trace_name : "host item");
        break;
    case Op::Kind::record:
        std::snprintf(name, sizeof name, "record e%llu", event);
        break;
    case Op::Kind::wait_event:
        category = "wait";
        std::snprintf(name, sizeof name, "wait e%llu",
                      static_cast<unsigned long long>(op.awaited->trace_id()));
        std::snprintf(args + used, sizeof args - static_cast<std::size_t>(used),
                      ",\"awaited_event\":%llu,\"awaited_generation\":%llu",
                      static_cast<unsigned long long>(op.awaited->trace_id()),
                      static_cast<unsigned long long>(op.awaited_generation));
        break;
    }
    if (op.trace_track == Op::kTraceAsync) {
        const std::uint64_t id = kupl_trace_new_id();
        kupl_trace_async_begin(category, name, id, start, args);
        kupl_trace_async_end(category, name, id, end, nullptr);
    } else {
        kupl_trace_slice(track, category, name, start, end, args);
    }
    if (error != nullptr)
        kupl_trace_instant(track, "error", "error", end, args);
    if (op.kind == Op::Kind::wait_event)
        trace_flow_from_event(*op.awaited, op.awaited_generation,
                              track == 0 ? kupl_trace_thread_track() : track, start + (end - start) / 2);
    if (op.trace_record_flow != 0)
        kupl_trace_flow_end("event", "record", op.trace_record_flow,
                            track == 0 ? kupl_trace_thread_track() : track, completed_ns);
}

} // namespace kupl::sched
