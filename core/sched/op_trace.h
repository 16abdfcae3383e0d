// What an op shows in the trace (KUPL_TRACE): a slice on its queue's track, the arrows that end
// in it, and the completion point of the event it completes. Called only while tracing.
#pragma once

#include "sched/op.h"

namespace kupl::sched {

// Just before op completes its event: remembers where and when, for the arrows of its waiters.
void trace_before_complete(Op &op, std::uint64_t now_ns);
// Once op is settled: its slice (from op.trace_start to now) and the arrows into it.
void trace_settled(const Op &op, const char *record_error, std::uint64_t completed_ns);
// An arrow from where record `generation` of `event` completed to (track, ns), if known.
void trace_flow_from_event(const Event &event, std::uint64_t generation, std::uint64_t track,
                           std::uint64_t ns);

} // namespace kupl::sched
