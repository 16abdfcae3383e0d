// libkupl's side of tracing (KUPL_TRACE): the one branch every trace point costs when tracing is off,
// and nothing at all when built with KUPL_TRACE_COMPILED_OUT (the overhead benchmark's baseline).
// The writer itself is libkupl_trace (core/trace/kupl_trace.h), shared with the plugin and the
// interposer.
#pragma once

#include "kupl_trace.h"

#ifdef KUPL_TRACE_COMPILED_OUT
#define KUPL_TRACING() false
#else
#define KUPL_TRACING() (kupl_trace_on() != 0)
#endif

namespace kupl::support {

// A slice on the calling thread's track from construction to destruction (waits, synchronous
// copies), when tracing. `args` is filled in before the end, if wanted.
class TraceScope {
  public:
    [[gnu::hot]] TraceScope(const char *category, const char *name)
        : category_(category), name_(name), start_(KUPL_TRACING() ? kupl_trace_now() : 0) {}
    ~TraceScope() {
        if (start_ != 0 && KUPL_TRACING())
            kupl_trace_slice(0, category_, name_, start_, kupl_trace_now(), args);
    }
    TraceScope(const TraceScope &) = delete;
    TraceScope &operator=(const TraceScope &) = delete;
    bool active() const { return start_ != 0; }
    std::uint64_t start() const { return start_; }

    char args[200] = "";

  private:
    const char *category_;
    const char *name_;
    std::uint64_t start_;
};

} // namespace kupl::support
