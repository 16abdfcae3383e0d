// The copy-engine interface. A backend executes copy descriptors and reports each one's
// completion exactly once. The software backend (worker-thread channels) ships today; a hardware
// engine (Kunpeng SDMA through libsdma_dk, Intel DSA) fits the same shape: its submit() writes a
// descriptor to the device ring, and a poller reports completions.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace kupl::copy {

// A 1D copy is a 2D copy of one row.
struct CopyDescriptor {
    void *dst = nullptr;
    const void *src = nullptr;
    std::size_t dpitch = 0;
    std::size_t spitch = 0;
    std::size_t width = 0;  // bytes per row
    std::size_t height = 1; // rows
    int priority = 0;       // 0 (least) .. 3 (greatest), from the queue
    // Fault injection (kuplx_inject_copy_faults): the backend completes the copy with this error
    // without writing, through its ordinary completion path. Only the software backend gets these.
    const char *fail_with = nullptr;
    // Tracing (KUPL_TRACE): the copy's number in the trace (0: not traced) and where the threads
    // that execute its pieces set their bit (kupl_trace_thread_index), so the trace says who copied.
    std::uint64_t trace_id = 0;
    std::atomic<std::uint64_t> *trace_threads = nullptr;

    std::size_t bytes() const { return width * height; }
    // What the copy costs, in bytes of memory traffic: every row touches whole cache lines and
    // pays about one line more for starting a new row (often a new page). Used to decide
    // inline / split / prefetch.
    std::size_t cost_bytes() const {
        return height == 1 ? width : height * (((width + 63) & ~std::size_t{63}) + 64);
    }
};

// Told once when a submitted copy is done. `error` is nullptr on success, else why it failed.
class CopyCompletion {
  public:
    virtual void copy_done(const char *error) = 0;

  protected:
    ~CopyCompletion() = default;
};

class CopyBackend {
  public:
    virtual ~CopyBackend() = default;

    virtual const char *name() const = 0;
    virtual int num_channels() const = 0;
    // Where channel `index` runs, for kupl-info.
    virtual std::string channel_placement(int index) const = 0;
    // Copies at least this large bypass the caches (0 if the backend has no such mode).
    virtual std::size_t nt_threshold() const { return 0; }

    // Starts the copy and returns nullptr; `done` is then called exactly once, from any thread
    // (possibly before submit returns). Or refuses it and returns why (static text; e.g. out of
    // memory), and never calls `done`. The descriptor has been validated; width and height are
    // non-zero.
    virtual const char *submit(const CopyDescriptor &copy, CopyCompletion *done) = 0;

    // Lets a thread that is about to block in a wait do queued copy work itself. Returns true if
    // it did some. A hardware backend returns false.
    virtual bool help_one() { return false; }
    // Threads (channels and helpers) copying right now; 0 for a hardware engine.
    virtual int busy_threads() const { return 0; }

    // True when every submitted copy has called its completion (exact: used to drain at exit).
    virtual bool idle() const = 0;

    // True if a copy submitted now would start within about a microsecond: a thread is copying or
    // polling for work. False when every channel sleeps and a submission would have to wake one
    // (a system call, and tens of microseconds before it runs). A hardware engine is always ready.
    virtual bool ready() const { return true; }
    // For a copy submitted while the backend is not ready: true if waking it pays, i.e. the copy
    // (cost_bytes(), see CopyDescriptor) should finish sooner on woken channels, with a waiting
    // caller helping, than on the caller alone. Judged from measured wake-up and copy times.
    virtual bool worth_waking(std::size_t /*cost_bytes*/) const { return true; }
    // How fast the backend's own threads ran copies of about this cost and shape (ns per KiB of
    // CopyDescriptor::cost_bytes(), from start to end of their work, without the hand-off), or 0
    // if it has not measured any. The engine compares it with the caller's own speed on such
    // copies. A hardware engine returns 0: its copies are always handed off when it is ready.
    virtual std::uint64_t ns_per_kib(std::size_t /*cost_bytes*/, bool /*two_d*/) const { return 0; }
    // For a copy submitted while the backend is ready, and the caller's own measured speed on
    // copies like it (ns per KiB of cost): how its speed on the copy compares with what a
    // hand-off must reach to finish it about as soon as the caller copying it would, even when
    // the caller waits for it at once. At most 1: it keeps up (2: it is twice too slow); 0: the
    // backend cannot tell (it has measured nothing), hand it off.
    virtual double hand_off_slowdown(const CopyDescriptor & /*copy*/,
                                     std::uint64_t /*caller_ns_per_kib*/) const {
        return 0;
    }
    // For KUPL_STATS: what worth_waking() judged from, one line without its end, or "" if the
    // backend never needs waking.
    virtual std::string wake_cost_summary() const { return {}; }

    // Stops the channels after the copies submitted so far are done.
    virtual void shutdown() = 0;
    // At process exit, once idle: stops the channels, waiting at most `limit` for each.
    virtual void stop_at_exit(std::chrono::milliseconds /*limit*/) { shutdown(); }

    // For kupl-info: the external provider (include/kupl_backend.h) loaded, or "" if none, and
    // which copies go where.
    virtual std::string provider_description() const { return {}; }
    virtual std::string routing_rule() const { return "every copy: software"; }
};

} // namespace kupl::copy
