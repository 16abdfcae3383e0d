// libkupl_ompt.so: an OMPT tool (OpenMP 5 tools interface, libomp 14) that adds OpenMP's side to
// the KUPL trace (KUPL_TRACE): OpenMP threads, parallel regions, implicit tasks, explicit and
// target tasks with their dependences, the dependences as arrows from the task that satisfied
// one (depend(out)) to the task that waited for it (depend(in)).
//
// Loaded by libomp through OMP_TOOL_LIBRARIES (kupl-omp-run --trace sets it) and registered by
// ompt_start_tool; it declines (returns NULL, costing OpenMP nothing) unless tracing is on. It
// writes through libkupl_trace only: it knows nothing of libkupl, so it works over any KUPL.
#include "kupl_trace.h"

#include <omp-tools.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#define KUPL_OMPT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// An explicit (or target) task: its segments of execution become slices; its predecessors'
// arrows are drawn when it first runs. Freed when it has completed and no successor needs it.
struct Task {
    std::uint64_t id = 0;
    int flags = 0;
    char deps[200] = ""; // "out:0x..,in:0x.." for the slice's args
    std::uint64_t segment_start = 0;
    std::atomic<std::uint64_t> last_track{0}; // where it last ran: the arrow's start
    std::atomic<std::uint64_t> last_end{0};   // just before its last segment's end
    std::atomic<int> refs{1};
    std::mutex mutex;
    std::vector<Task *> predecessors; // guarded by mutex
};

struct Parallel {
    std::uint64_t start;
    unsigned threads;
};

std::atomic<std::uint64_t> next_task{0};
std::atomic<int> next_thread{0};

void release(Task *task) {
    if (task != nullptr && task->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
        delete task;
}

Task *explicit_task(ompt_data_t *data) {
    return data != nullptr ? static_cast<Task *>(data->ptr) : nullptr;
}

void on_thread_begin(ompt_thread_t type, ompt_data_t *) {
    const int n = next_thread.fetch_add(1, std::memory_order_relaxed);
    char name[64];
    std::snprintf(name, sizeof name, "OpenMP %s thread %d",
                  type == ompt_thread_initial  ? "initial"
                  : type == ompt_thread_worker ? "worker"
                                               : "other",
                  n);
    kupl_trace_name_thread(name, 3000 + n);
}

void on_parallel_begin(ompt_data_t *, const ompt_frame_t *, ompt_data_t *parallel, unsigned requested, int,
                       const void *) {
    parallel->ptr = new (std::nothrow) Parallel{kupl_trace_now(), requested};
}

void on_parallel_end(ompt_data_t *parallel, ompt_data_t *, int, const void *) {
    auto *p = static_cast<Parallel *>(parallel->ptr);
    if (p == nullptr)
        return;
    char args[48];
    std::snprintf(args, sizeof args, "\"threads\":%u", p->threads);
    kupl_trace_slice(0, "omp.region", "parallel", p->start, kupl_trace_now(), args);
    parallel->ptr = nullptr;
    delete p;
}

// Implicit tasks begin and end on their own thread and nest (nested parallel regions): their
// start times are kept per thread, and their task data stays empty, so that only explicit
// tasks ever carry a Task.
thread_local std::uint64_t implicit_starts[16];
thread_local unsigned implicit_depth = 0;

void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *, ompt_data_t *, unsigned, unsigned index,
                      int flags) {
    if ((flags & ompt_task_initial) != 0)
        return; // the whole program: not a slice worth drawing
    if (endpoint == ompt_scope_begin) {
        if (implicit_depth < 16)
            implicit_starts[implicit_depth] = kupl_trace_now();
        ++implicit_depth;
        return;
    }
    if (implicit_depth == 0)
        return;
    --implicit_depth;
    if (implicit_depth >= 16)
        return;
    char args[32];
    std::snprintf(args, sizeof args, "\"index\":%u", index);
    kupl_trace_slice(0, "omp.region", "implicit task", implicit_starts[implicit_depth], kupl_trace_now(),
                     args);
}

void on_task_create(ompt_data_t *, const ompt_frame_t *, ompt_data_t *task, int flags, int, const void *) {
    if ((flags & (ompt_task_explicit | ompt_task_target)) == 0) {
        task->ptr = nullptr;
        return;
    }
    auto *t = new (std::nothrow) Task;
    if (t != nullptr) {
        t->id = next_task.fetch_add(1, std::memory_order_relaxed) + 1;
        t->flags = flags;
    }
    task->ptr = t;
}

void on_dependences(ompt_data_t *task, const ompt_dependence_t *deps, int count) {
    Task *t = explicit_task(task);
    if (t == nullptr)
        return;
    std::size_t used = 0;
    for (int i = 0; i < count && used + 40 < sizeof t->deps; ++i) {
        const char *kind = deps[i].dependence_type == ompt_dependence_type_in      ? "in"
                           : deps[i].dependence_type == ompt_dependence_type_out   ? "out"
                           : deps[i].dependence_type == ompt_dependence_type_inout ? "inout"
                                                                                   : "other";
        used += static_cast<std::size_t>(std::snprintf(t->deps + used, sizeof t->deps - used, "%s%s:%p",
                                                       i ? " " : "", kind, deps[i].variable.ptr));
    }
}

void on_task_dependence(ompt_data_t *src, ompt_data_t *sink) {
    Task *from = explicit_task(src), *to = explicit_task(sink);
    if (from == nullptr || to == nullptr)
        return;
    from->refs.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(to->mutex);
    try {
        to->predecessors.push_back(from);
    } catch (const std::bad_alloc &) {
        // libomp called us from C: nothing may unwind into it. Out of memory costs one arrow.
        release(from);
    }
}

// A task stops running on this thread (finished, or switched out at a taskwait/yield).
void end_segment(Task *t, ompt_task_status_t status, std::uint64_t now) {
    const std::uint64_t track = kupl_trace_thread_track();
    // Arrows bind to the innermost slice around their ends: just inside this segment's edges, where
    // nothing nested in it (the plugin's constructs, KUPL waits) has begun or is still open.
    const std::uint64_t first = t->segment_start + 1, last = now > first ? now - 1 : first;
    char args[300], name[48];
    std::snprintf(args, sizeof args, "\"task\":%" PRIu64 ",\"flags\":%d,\"depend\":\"%s\",\"status\":%d",
                  t->id, t->flags, t->deps, static_cast<int>(status));
    std::snprintf(name, sizeof name, "%s %" PRIu64, (t->flags & ompt_task_target) ? "target task" : "task",
                  t->id);
    kupl_trace_slice(0, "omp.task", name, t->segment_start, now, args);
    std::vector<Task *> predecessors;
    {
        std::lock_guard<std::mutex> lock(t->mutex);
        predecessors.swap(t->predecessors);
    }
    for (Task *from : predecessors) { // depend(out) -> depend(in): the arrow ends in this segment
        const std::uint64_t from_track = from->last_track.load(std::memory_order_acquire);
        if (from_track != 0)
            kupl_trace_flow("omp.depend", "depend", from_track,
                            from->last_end.load(std::memory_order_relaxed), track, first);
        release(from);
    }
    t->last_end.store(last, std::memory_order_relaxed);
    t->last_track.store(track, std::memory_order_release);
}

void on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next) {
    const std::uint64_t now = kupl_trace_now();
    if (Task *t = explicit_task(prior); t != nullptr && t->segment_start != 0) {
        end_segment(t, status, now);
        t->segment_start = 0;
        if (status == ompt_task_complete || status == ompt_task_cancel) {
            prior->ptr = nullptr;
            release(t);
        }
    }
    if (Task *t = explicit_task(next))
        t->segment_start = now;
}

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t *) {
    auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
    if (set_callback == nullptr)
        return 0;
    set_callback(ompt_callback_thread_begin, reinterpret_cast<ompt_callback_t>(on_thread_begin));
    set_callback(ompt_callback_parallel_begin, reinterpret_cast<ompt_callback_t>(on_parallel_begin));
    set_callback(ompt_callback_parallel_end, reinterpret_cast<ompt_callback_t>(on_parallel_end));
    set_callback(ompt_callback_implicit_task, reinterpret_cast<ompt_callback_t>(on_implicit_task));
    set_callback(ompt_callback_task_create, reinterpret_cast<ompt_callback_t>(on_task_create));
    set_callback(ompt_callback_task_schedule, reinterpret_cast<ompt_callback_t>(on_task_schedule));
    set_callback(ompt_callback_dependences, reinterpret_cast<ompt_callback_t>(on_dependences));
    set_callback(ompt_callback_task_dependence, reinterpret_cast<ompt_callback_t>(on_task_dependence));
    return 1;
}

void finalize(ompt_data_t *) {
    kupl_trace_flush();
}

ompt_start_tool_result_t tool = {initialize, finalize, {0}};

} // namespace

KUPL_OMPT_EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int, const char *) {
    return kupl_trace_on() ? &tool : nullptr;
}
