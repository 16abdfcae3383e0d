// The interposer's side of the KUPL trace (KUPL_TRACE, e.g. run-%r.json: one file per rank, joined
// by kupl-trace merge): a slice per MPI call with its peer, tag, bytes and datatype verdict
// (accelerated, or why it went to Open MPI), pack/unpack slices, and an arrow from each send to
// its receive across ranks. Written through libkupl_trace only, so it works over any KUPL.
#pragma once

#include "kupl_trace.h"

#include <mpi.h>

#include <cstdint>

namespace kupl_mpi {

/** Called where the verdict of the current call is decided (stats.cc): the call's slice says it. */
void trace_verdict(const char *verdict, const char *reason);

/** A slice for one MPI call on the calling thread, from construction to destruction. */
class CallTrace {
  public:
    explicit CallTrace(const char *name);
    ~CallTrace();
    CallTrace(const CallTrace &) = delete;
    CallTrace &operator=(const CallTrace &) = delete;
    /** This call sends (or receives) count elements of type to (from) peer of comm. */
    void message(bool send, int peer, int tag, int count, MPI_Datatype type, MPI_Comm comm);

  private:
    const char *name_;
    std::uint64_t start_;
    char args_[256];
    int used_ = 0;
    std::uint64_t flow_out_ = 0; // a send: the arrow to its receive starts at this slice's end
};

/** A pack or unpack of `bytes` with KUPL copies, [start, now]. */
void trace_copy_span(const char *name, std::uint64_t start, std::uint64_t bytes);

/** Names this process's trace "rank R" (from MPI_Init). */
void trace_rank_known(int rank);

} // namespace kupl_mpi
