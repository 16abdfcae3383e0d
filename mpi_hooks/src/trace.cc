#include "trace.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <utility>

namespace kupl_mpi {
namespace {

// Initial-exec TLS: see t_fallbacks in planner.cc.
__attribute__((tls_model("initial-exec"))) thread_local const char *current_verdict = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local const char *current_reason = nullptr;
int world_rank = -1; // set once in MPI_Init, before any message

// Arrows between ranks need an id both ends compute alone: the n-th message from rank s to rank d
// with tag t (MPI keeps such messages in order when receives name their source and tag). Ids
// with bit 62 set are shared between processes; kupl-trace merge leaves them as they are.
std::uint64_t message_id(int source, int dest, int tag, std::uint64_t sequence) {
    return (std::uint64_t{1} << 62) | (std::uint64_t(source & 0x3ff) << 48) |
           (std::uint64_t(dest & 0x3ff) << 38) | (std::uint64_t(tag & 0xfff) << 26) | (sequence & 0x3ffffff);
}

std::uint64_t next_sequence(bool send, int peer, int tag) {
    static std::mutex mutex;
    static std::map<std::pair<int, int>, std::uint64_t> sent, received;
    std::lock_guard<std::mutex> lock(mutex);
    return ++(send ? sent : received)[{peer, tag}];
}

} // namespace

void trace_verdict(const char *verdict, const char *reason) {
    current_verdict = verdict;
    current_reason = reason;
}

void trace_rank_known(int rank) {
    world_rank = rank;
    if (!kupl_trace_on())
        return;
    char name[32];
    std::snprintf(name, sizeof name, "rank %d", rank);
    kupl_trace_name_process(name);
}

CallTrace::CallTrace(const char *name) : name_(name), start_(kupl_trace_on() ? kupl_trace_now() : 0) {
    args_[0] = '\0';
    if (start_ != 0)
        current_verdict = current_reason = nullptr;
}

void CallTrace::message(bool send, int peer, int tag, int count, MPI_Datatype type, MPI_Comm comm) {
    if (start_ == 0)
        return;
    int size = 0;
    if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS)
        size = 0;
    used_ += std::snprintf(args_ + used_, sizeof args_ - static_cast<std::size_t>(used_),
                           "%s\"%s\":%d,\"%s_tag\":%d,\"%s_bytes\":%lld", used_ ? "," : "",
                           send ? "dest" : "source", peer, send ? "send" : "recv", tag,
                           send ? "send" : "recv", static_cast<long long>(size) * count);
    // Arrows only for MPI_COMM_WORLD, a named peer and a named tag: then both ends agree on the id.
    if (comm != MPI_COMM_WORLD || world_rank < 0 || peer < 0 || tag < 0)
        return;
    if (send) {
        flow_out_ = message_id(world_rank, peer, tag, next_sequence(true, peer, tag));
    } else {
        const std::uint64_t id = message_id(peer, world_rank, tag, next_sequence(false, peer, tag));
        kupl_trace_flow_end("mpi", "message", id, kupl_trace_thread_track(), start_ + 1);
    }
}

CallTrace::~CallTrace() {
    if (start_ == 0 || !kupl_trace_on())
        return;
    const std::uint64_t end = kupl_trace_now();
    // No verdict: the call never reached the planner (a predefined type, a call passed through).
    const char *verdict = current_verdict != nullptr ? current_verdict : "open mpi";
    used_ += std::snprintf(args_ + used_, sizeof args_ - static_cast<std::size_t>(used_),
                           "%s\"verdict\":\"%s\"", used_ ? "," : "", verdict);
    if (current_reason != nullptr && used_ < static_cast<int>(sizeof args_))
        std::snprintf(args_ + used_, sizeof args_ - static_cast<std::size_t>(used_), ",\"reason\":\"%s\"",
                      current_reason);
    kupl_trace_slice(0, "mpi", name_, start_, end, args_);
    if (flow_out_ != 0)
        kupl_trace_flow_start("mpi", "message", flow_out_, kupl_trace_thread_track(),
                              end > start_ ? end - 1 : end);
    current_verdict = current_reason = nullptr;
}

void trace_copy_span(const char *name, std::uint64_t start, std::uint64_t bytes) {
    if (start == 0 || !kupl_trace_on())
        return;
    char args[48];
    std::snprintf(args, sizeof args, "\"bytes\":%llu", static_cast<unsigned long long>(bytes));
    kupl_trace_slice(0, "mpi.pack", name, start, kupl_trace_now(), args);
}

} // namespace kupl_mpi
