// A libFuzzer driver that reads its input as a program of KUPL API calls over a small pool of
// handles and buffers, runs it, and checks the runtime against a model:
//
//  - every accepted op settles exactly once: host items run exactly once per accepted submit
//    (never for a rejected one), and every recorded event is COMPLETE once the work is waited for;
//  - handles never alias: a destroyed, wrong-kind or made-up handle gets KUPL_ERROR, and a new
//    handle never equals one destroyed before;
//  - no wrong copy: a shadow copy of every buffer is updated as each accepted copy would, and the
//    buffers are compared byte for byte after the waits (a rejected or failed copy writes nothing);
//    a host item also checks, when it runs, that the copy before it on its queue has landed;
//  - exact error codes: each call's result is what the header documents for its arguments.
//
// The program never does what C leaves undefined: it copies only within buffers it owns, and two
// copies that are not ordered with each other never touch the same bytes (a copy that would is
// skipped). Source and destination overlap only when KUPL_FUZZ_OVERLAP=1, and then the call must
// return KUPL_ERROR (the behaviour another change defines; off until it lands).
//
// Fault injection makes copies fail in an order that depends on timing; while faults are armed
// the driver therefore waits for each op before the next, so it knows which copy failed.
//
// Any violation prints what was expected and aborts, so libFuzzer keeps the input as a crash.
#include "kupl.h"
#include "kupl_ext.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_set>
#include <vector>

namespace {

// ----------------------------------------------------------------------------- switches

// Each switch turns on a generator or check of a finding fixed since (tests/fuzz/README.md);
// KUPL_FUZZ_<NAME>=0 turns it off, =1 on.
// Overlapping source and destination: expected KUPL_ERROR (KUPL_FUZZ_OVERLAP).
bool g_overlap = true;
// Host items that block on another queue (they starved the executor pool; KUPL_FUZZ_ITEM_WAITS).
bool g_item_waits = true;
// Items on the KUPL_ASYNC_SYNC queue that wait on, destroy or submit to that queue (finding F1:
// they deadlocked; KUPL_FUZZ_SYNC_SELF_CALLS).
bool g_sync_self_calls = true;
// Checks that items on the KUPL_ASYNC_SYNC queue run on the submitting thread (finding F2: after
// kuplx_queue_wait_event_async on that queue they ran on whichever thread completed the event;
// KUPL_FUZZ_SYNC_THREAD_CHECK).
bool g_sync_thread_check = true;
// fork() ops: the child checks that the parent's handles are invalid there and never equal a
// handle it creates (they aliased; KUPL_FUZZ_FORK). Off by default in sanitized builds: a fork
// from a multi-threaded process can hang the child on a lock of the sanitizer's allocator.
#ifdef KUPL_FUZZ_SANITIZED
bool g_fork = false;
#else
bool g_fork = true;
#endif
// Log every call (KUPL_FUZZ_TRACE=1), to read a reproducer.
bool g_trace = false;

// ----------------------------------------------------------------------------- input reader

// Takes bytes from the front of the input; past the end it yields zeros, and done() is true.
class Reader {
  public:
    Reader(const uint8_t *data, size_t size) : p_(data), end_(data + size) {}
    bool done() const { return p_ >= end_; }
    uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
    uint16_t u16() { return static_cast<uint16_t>(byte() | (byte() << 8)); }
    uint32_t u32() { return u16() | (static_cast<uint32_t>(u16()) << 16); }

  private:
    const uint8_t *p_;
    const uint8_t *end_;
};

// ----------------------------------------------------------------------------- failures

int g_op_number = 0;
const char *g_op_name = "";

[[noreturn]] void violation(const char *format, ...) __attribute__((format(printf, 1, 2)));
void violation(const char *format, ...) {
    std::fprintf(stderr, "\n*** kupl_api_fuzzer: invariant violated at op #%d (%s): ", g_op_number,
                 g_op_name);
    va_list args;
    va_start(args, format);
    std::vfprintf(stderr, format, args);
    va_end(args);
    std::fprintf(stderr, "\n");
    std::abort();
}

void trace(const char *format, ...) __attribute__((format(printf, 1, 2)));
void trace(const char *format, ...) {
    if (!g_trace)
        return;
    va_list args;
    va_start(args, format);
    std::fprintf(stderr, "  #%d ", g_op_number);
    std::vfprintf(stderr, format, args);
    std::fprintf(stderr, "\n");
    va_end(args);
}

// Expected result of a call: one code, or either (timing decides, e.g. a record racing the work).
struct Expect {
    int code;
    bool either = false;
};
constexpr Expect kOk{KUPL_OK};
constexpr Expect kErr{KUPL_ERROR};
constexpr Expect kEither{KUPL_OK, true};

void check(const char *call, int got, Expect want) {
    if (want.either ? (got != KUPL_OK && got != KUPL_ERROR) : got != want.code)
        violation("%s returned %d, expected %s", call, got,
                  want.either ? "KUPL_OK or KUPL_ERROR" : (want.code == KUPL_OK ? "KUPL_OK" : "KUPL_ERROR"));
}

// ----------------------------------------------------------------------------- memory

constexpr int kBuffers = 4;
constexpr size_t kBufferBytes = 512 << 10; // big enough that the largest copies are split

unsigned char *g_buf[kBuffers];
unsigned char *g_shadow[kBuffers];
unsigned char *g_pristine; // what every buffer holds at the start of an input

struct Span {
    const unsigned char *lo = nullptr;
    const unsigned char *hi = nullptr; // [lo, hi); empty if lo == hi
    bool empty() const { return lo == hi; }
    bool intersects(const Span &o) const { return !empty() && !o.empty() && lo < o.hi && o.lo < hi; }
};

uint64_t fnv(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

unsigned char *shadow_of(const unsigned char *real) {
    for (int b = 0; b < kBuffers; ++b)
        if (real >= g_buf[b] && real < g_buf[b] + kBufferBytes)
            return g_shadow[b] + (real - g_buf[b]);
    violation("internal: %p is not in a buffer", static_cast<const void *>(real));
}

// ----------------------------------------------------------------------------- lanes

// Something that runs ops in order: a queue, or one copy with queue == NULL.
struct Pending {
    uint64_t index; // the op's position on its lane (1, 2, ...)
    Span writes;
    Span reads;
};
struct Lane {
    uint64_t enqueued = 0;            // ops enqueued so far
    uint64_t done = 0;                // ops known to be complete (a prefix)
    std::vector<Pending> pending;     // ops that may still touch memory
    unsigned failures_since_wait = 0; // copies that failed since the last kupl_queue_wait
    bool failed_since_record = false; // the next record on this queue completes with an error
    bool synchronous = false;         // the KUPL_ASYNC_SYNC queue
    // The latest op that waits for another lane's work (an item's kupl_queue_wait of another
    // queue, kuplx_queue_wait_event_async of another queue's event); 0 if none.
    uint64_t last_cross_wait = 0;

    void complete_through(uint64_t index) {
        if (index <= done)
            return;
        done = std::min(index, enqueued);
        pending.erase(std::remove_if(pending.begin(), pending.end(),
                                     [this](const Pending &p) { return p.index <= done; }),
                      pending.end());
    }
    bool idle() const { return done == enqueued; }
    // Work on this lane may still wait for another lane. A lane that waits for this one could
    // then close a cycle of waits: an application deadlock, so such a wait is not generated.
    bool may_wait_for_others() const { return last_cross_wait > done; }
};

constexpr int kQueues = 4;
// Acquired queues: lanes kQueues.. for indices KUPL_ASYNC_SYNC, 0, 1, 2.
constexpr int kAcquired = 4;
constexpr int kAcquiredIndex[kAcquired] = {KUPL_ASYNC_SYNC, 0, 1, 2};
constexpr int kEvents = 4;

std::deque<Lane> g_lanes; // [0, kQueues): owned queues; then acquired; then one per NULL-queue copy

enum class Slot { empty, live, dead };

struct QueueSlot {
    Slot state = Slot::empty;
    kupl_queue_h handle = nullptr; // when dead: the stale handle
    int lane = -1;
};
QueueSlot g_queues[kQueues];
kupl_queue_h g_acquired[kAcquired]; // stable for the whole process
bool g_acquired_used[kAcquired];

struct EventSlot {
    Slot state = Slot::empty;
    kupl_event_h handle = nullptr;
    bool recorded = false; // ever recorded (else waits are errors)
    int lane = -1;         // the latest record: lane and index
    uint64_t index = 0;
    bool expect_failed = false; // the latest record's work failed
    bool failure_known = true;  // false when timing decides (not used while faults are unarmed)
};
EventSlot g_events[kEvents];

// Events the driver uses for itself: a NULL-queue copy the program gave no event.
struct HiddenEvent {
    kupl_event_h handle;
    int lane;
    bool expect_failed;
};
std::vector<HiddenEvent> g_hidden;

std::vector<uintptr_t> g_graveyard;       // handles destroyed by this input
std::unordered_set<uintptr_t> g_all_dead; // every handle destroyed in this process (capped)
std::deque<uintptr_t> g_all_dead_order;

void bury(const void *handle) {
    const auto h = reinterpret_cast<uintptr_t>(handle);
    g_graveyard.push_back(h);
    if (g_all_dead.insert(h).second) {
        g_all_dead_order.push_back(h);
        if (g_all_dead_order.size() > 65536) {
            g_all_dead.erase(g_all_dead_order.front());
            g_all_dead_order.pop_front();
        }
    }
}
void check_new_handle(const void *handle, const char *what) {
    if (g_all_dead.count(reinterpret_cast<uintptr_t>(handle)) != 0)
        violation("%s returned %p, a handle destroyed before (aliasing)", what, handle);
}

unsigned g_faults_armed = 0; // copies still to fail; > 0 means ops are serialized

// ----------------------------------------------------------------------------- host items

constexpr int kItems = 96;
struct ItemArgs {
    int id;
    const unsigned char *check; // bytes that must hold check_hash when the item runs
    size_t check_len;
    uint64_t check_hash;
    int self_call; // 0 none, 1 wait own queue, 2 destroy own queue, 3 wait_event on own queue,
                   // 4 wait another queue, 5/6 sleep 0.2/2 ms, 7 submit a no-op item onto own queue
    kupl_queue_h own;
    kupl_event_h some_event;
    kupl_queue_h other; // g_item_waits: a queue to kupl_queue_wait on
};
struct ItemState {
    std::atomic<int> runs{0};
    std::atomic<int> mismatch{0};
    std::atomic<int> self_result{12345};
    std::atomic<bool> wrong_thread{false};
    bool accepted = false;
    bool synchronous = false;
    int self_call = 0;
    ItemArgs by_reference; // args when ARGS_SIZE is not set (must live until the item ran)
};
ItemState g_items[kItems];
int g_num_items = 0;
pthread_t g_driver_thread;

void item_body(void *raw) {
    const ItemArgs &a = *static_cast<const ItemArgs *>(raw);
    if (a.id < 0 || a.id >= kItems) // the by-value copy was not taken: the caller's poison shows
        violation("a host item saw args id %d: ARGS_SIZE args were not copied at submit", a.id);
    ItemState &s = g_items[a.id];
    s.runs.fetch_add(1);
    if (a.check_len != 0 && fnv(a.check, a.check_len) != a.check_hash)
        s.mismatch.store(1);
    if (g_sync_thread_check && s.synchronous && !pthread_equal(pthread_self(), g_driver_thread))
        s.wrong_thread.store(true);
    switch (a.self_call) {
    case 1:
        s.self_result.store(kupl_queue_wait(a.own));
        break;
    case 2:
        kupl_queue_destroy(a.own);
        s.self_result.store(KUPL_ERROR);
        break;
    case 3:
        s.self_result.store(a.some_event ? kupl_queue_wait_event(a.own, a.some_event) : KUPL_ERROR);
        break;
    case 4:
        kupl_queue_wait(a.other);
        s.self_result.store(KUPL_ERROR);
        break;
    case 7: {
        // Work submitted from an item onto its own queue lands behind the item: the submit must
        // not wait for it. A no-op item: it takes no armed fault and leaves the buffers alone.
        kupl_queue_item_desc_t nested{};
        nested.func = [](void *) {};
        s.self_result.store(kupl_queue_submit(a.own, &nested));
        break;
    }
    case 5:
    case 6: {
        // A slow item widens the windows in which other work races with it.
        timespec pause{0, a.self_call == 5 ? 200000 : 2000000};
        nanosleep(&pause, nullptr);
        break;
    }
    default:
        break;
    }
}

// ----------------------------------------------------------------------------- handle arguments

// A queue argument: one of the owned or acquired queues, NULL, or something that is not a queue.
struct QueueArg {
    kupl_queue_h handle = nullptr;
    int lane = -1;      // the lane it orders on (valid queues only)
    bool valid = false; // a live queue
    bool is_null = false;
    bool acquired = false;
    int slot = -1; // owned slot or acquired slot
};

// Handle values that are not handles: never dereferenced by the runtime (README), so safe.
const uintptr_t kMadeUp[] = {0x1, 0x10, 0x1001, 0x7ffffff0, 0xdeadbeef0, UINTPTR_MAX & ~uintptr_t{0xf}};

QueueArg pick_queue(Reader &in, bool allow_null = true) {
    QueueArg q;
    const uint8_t b = in.byte();
    const int sel = b % 16;
    const int sub = (b / 16) % 4;
    if (sel < 8) { // owned slots, twice as likely
        const QueueSlot &s = g_queues[sel % kQueues];
        q.slot = sel % kQueues;
        if (s.state == Slot::live) {
            q.handle = s.handle;
            q.valid = true;
            q.lane = s.lane;
        } else if (s.state == Slot::dead) {
            q.handle = s.handle;
        } else {
            q.is_null = allow_null;
        }
    } else if (sel < 12) {
        q.slot = sel - 8;
        q.handle = g_acquired[q.slot];
        q.valid = true;
        q.acquired = true;
        q.lane = kQueues + q.slot;
        g_acquired_used[q.slot] = true;
    } else if (sel == 12 && allow_null) {
        q.is_null = true;
    } else if (sel == 13 && g_events[sub].handle != nullptr) {
        q.handle = reinterpret_cast<kupl_queue_h>(g_events[sub].handle); // wrong kind
    } else if (sel == 14 && !g_graveyard.empty()) {
        q.handle = reinterpret_cast<kupl_queue_h>(g_graveyard[b % g_graveyard.size()]);
    } else {
        q.handle = reinterpret_cast<kupl_queue_h>(kMadeUp[b % (sizeof kMadeUp / sizeof kMadeUp[0])]);
    }
    if (q.is_null)
        q.handle = nullptr;
    return q;
}

struct EventArg {
    kupl_event_h handle = nullptr;
    int slot = -1; // live slot
    bool valid = false;
    bool is_null = false;
};

EventArg pick_event(Reader &in, bool allow_null) {
    EventArg e;
    const uint8_t b = in.byte();
    const int sel = b % 8;
    if (sel < 4) {
        const EventSlot &s = g_events[sel];
        if (s.state == Slot::live) {
            e.handle = s.handle;
            e.slot = sel;
            e.valid = true;
        } else if (s.state == Slot::dead) {
            e.handle = s.handle;
        } else {
            e.is_null = allow_null;
        }
    } else if (sel == 4 && allow_null) {
        e.is_null = true;
    } else if (sel == 5 && g_queues[b / 8 % kQueues].handle != nullptr) {
        e.handle = reinterpret_cast<kupl_event_h>(g_queues[b / 8 % kQueues].handle); // wrong kind
    } else if (sel == 6 && !g_graveyard.empty()) {
        e.handle = reinterpret_cast<kupl_event_h>(g_graveyard[b % g_graveyard.size()]);
    } else if (sel == 7) {
        e.handle = reinterpret_cast<kupl_event_h>(kMadeUp[b % (sizeof kMadeUp / sizeof kMadeUp[0])]);
    } else {
        e.is_null = allow_null;
    }
    if (e.is_null)
        e.handle = nullptr;
    return e;
}

// ----------------------------------------------------------------------------- model updates

// Work covered by event slot `e`'s latest record is done (a wait returned, a query said so, or
// the event could be recorded again).
void observe_complete(const EventSlot &e) {
    if (e.recorded && e.lane >= 0)
        g_lanes[e.lane].complete_through(e.index);
}

// Whether an op with these spans on `lane` may run alongside every other lane's pending work
// (unordered ops must not touch the same bytes unless both only read).
bool conflicts(int lane, Span writes, Span reads) {
    for (size_t l = 0; l < g_lanes.size(); ++l) {
        if (static_cast<int>(l) == lane)
            continue;
        for (const Pending &p : g_lanes[l].pending)
            if (writes.intersects(p.writes) || writes.intersects(p.reads) || reads.intersects(p.writes))
                return true;
    }
    return false;
}

// Waits for lane to finish everything enqueued (used while faults are armed and at the end).
void settle_lane_after_wait(int lane) {
    g_lanes[lane].complete_through(g_lanes[lane].enqueued);
}

int new_null_lane() {
    g_lanes.emplace_back();
    return static_cast<int>(g_lanes.size()) - 1;
}

// ----------------------------------------------------------------------------- copies

struct CopyShape {
    unsigned char *dst = nullptr;
    const unsigned char *src = nullptr;
    size_t dpitch = 0, spitch = 0, width = 0, height = 1;
    bool two_d = false;
    Expect validity = kOk;      // KUPL_ERROR: the arguments alone make the call fail
    bool overlapping = false;   // source and destination spans intersect
    bool overlap_exact = false; // ... and share bytes
    Span writes, reads;         // bounding spans when valid and non-empty
};

size_t pick_size(Reader &in, size_t limit) {
    const uint8_t cls = in.byte() % 8;
    size_t n;
    switch (cls) {
    case 0:
        n = 0;
        break;
    case 1:
    case 2:
        n = in.byte() % 65;
        break; // a few bytes
    case 3:
    case 4:
        n = in.u16() % 4097;
        break; // around the inline threshold
    case 5:
        n = in.u32() % (64 << 10);
        break; // channel copies
    case 6:
        n = in.u32() % (kBufferBytes + 1);
        break; // up to a whole buffer: split
    default:
        n = size_t{1} << (in.byte() % 20);
        break; // powers of two
    }
    return std::min(n, limit);
}

// True if the byte sets of two 2D regions (rows of width at pitch) intersect.
bool regions_intersect(const unsigned char *a, size_t apitch, const unsigned char *b, size_t bpitch,
                       size_t width, size_t height) {
    for (size_t i = 0; i < height; ++i) {
        const unsigned char *alo = a + i * apitch;
        for (size_t j = 0; j < height; ++j) {
            const unsigned char *blo = b + j * bpitch;
            if (alo < blo + width && blo < alo + width)
                return true;
        }
    }
    return false;
}

// Builds a copy from the input: usually valid and inside owned buffers, sometimes invalid in
// one documented way (NULL pointer, width above a pitch, a region that wraps the address space).
CopyShape pick_copy(Reader &in, bool two_d) {
    CopyShape c;
    c.two_d = two_d;
    const uint8_t mode = in.byte();
    const int db = mode % kBuffers, sb = (mode / 4) % kBuffers;
    const int bad = (mode / 16) % 16; // 0..11 valid, 12 NULL dst, 13 NULL src, 14 pitch, 15 wraps
    if (!two_d) {
        const size_t n = pick_size(in, kBufferBytes);
        const size_t doff = in.u32() % (kBufferBytes - n + 1);
        const size_t soff = in.u32() % (kBufferBytes - n + 1);
        c.dst = g_buf[db] + doff;
        c.src = g_buf[sb] + soff;
        c.width = c.dpitch = c.spitch = n;
    } else {
        c.width = pick_size(in, 4096);
        c.height = in.byte() % 130;
        const size_t extra_d = in.byte() % 4 == 0 ? 0 : in.u16() % 8192;
        const size_t extra_s = in.byte() % 4 == 0 ? 0 : in.u16() % 8192;
        c.dpitch = c.width + extra_d;
        c.spitch = c.width + extra_s;
        if (c.height > 1 && (c.height - 1) * std::max(c.dpitch, c.spitch) + c.width > kBufferBytes)
            c.height = 1 + (kBufferBytes - c.width) / std::max<size_t>(1, std::max(c.dpitch, c.spitch));
        const size_t dspan = c.height == 0 || c.width == 0 ? 0 : (c.height - 1) * c.dpitch + c.width;
        const size_t sspan = c.height == 0 || c.width == 0 ? 0 : (c.height - 1) * c.spitch + c.width;
        c.dst = g_buf[db] + in.u32() % (kBufferBytes - dspan + 1);
        c.src = g_buf[sb] + in.u32() % (kBufferBytes - sspan + 1);
    }
    const bool empty = c.width == 0 || c.height == 0;
    if (!empty) {
        const size_t dspan = (c.height - 1) * (c.height > 1 ? c.dpitch : 0) + c.width;
        const size_t sspan = (c.height - 1) * (c.height > 1 ? c.spitch : 0) + c.width;
        c.writes = {c.dst, c.dst + dspan};
        c.reads = {c.src, c.src + sspan};
    }
    switch (bad) {
    case 12:
        c.dst = nullptr;
        c.validity = empty ? kOk : kErr; // NULL is fine when nothing is copied
        break;
    case 13:
        c.src = nullptr;
        c.validity = empty ? kOk : kErr;
        break;
    case 14:
        if (two_d && c.height > 1 && c.width > 1) {
            (in.byte() & 1 ? c.dpitch : c.spitch) = c.width - 1 - in.u16() % (c.width - 1);
            c.validity = kErr;
        }
        break;
    case 15:
        // So large that dst + size wraps around the end of the address space: rejected
        // before any byte is touched (a smaller "huge" size would be a copy out of our buffer).
        if (!two_d) {
            c.width = c.dpitch = c.spitch = SIZE_MAX - (in.byte() % 64) * 4096;
        } else {
            c.height = SIZE_MAX / 2 + in.byte();
            c.dpitch = c.spitch = std::max<size_t>(c.width, 16);
            if (c.width == 0)
                c.width = 1;
        }
        c.validity = kErr;
        break;
    default:
        break;
    }
    if (c.validity.code == KUPL_OK && !empty && c.dst && c.src && c.writes.intersects(c.reads)) {
        c.overlapping = true;
        // Strided regions whose spans interleave without sharing a byte are not generated either.
        c.overlap_exact =
            c.height == 1 || regions_intersect(c.dst, c.dpitch, c.src, c.spitch, c.width, c.height);
        if (c.overlap_exact && g_overlap)
            c.validity = kErr;
    }
    return c;
}

// Applies a copy to the shadow buffers.
void shadow_copy(const CopyShape &c) {
    if (c.width == 0 || c.height == 0)
        return;
    for (size_t r = 0; r < c.height; ++r)
        std::memmove(shadow_of(c.dst + r * c.dpitch), shadow_of(c.src + r * c.spitch), c.width);
}

const char *describe(const CopyShape &c, char *buf, size_t size) {
    auto where = [](const void *p) -> std::string {
        if (p == nullptr)
            return "NULL";
        for (int b = 0; b < kBuffers; ++b)
            if (p >= g_buf[b] && p < g_buf[b] + kBufferBytes)
                return "buf" + std::to_string(b) + "+" +
                       std::to_string(static_cast<const unsigned char *>(p) - g_buf[b]);
        return "?";
    };
    std::snprintf(buf, size, "dst=%s dpitch=%zu src=%s spitch=%zu width=%zu height=%zu", where(c.dst).c_str(),
                  c.dpitch, where(c.src).c_str(), c.spitch, c.width, c.height);
    return buf;
}

// While faults are armed: does this accepted copy fail?
bool consume_fault() {
    if (g_faults_armed == 0)
        return false;
    --g_faults_armed;
    return true;
}

// ----------------------------------------------------------------------------- ops

void op_queue_create(Reader &in) {
    const int s = in.byte() % kQueues;
    QueueSlot &slot = g_queues[s];
    if (slot.state == Slot::live)
        return;
    const int p = static_cast<int>(in.byte() % 7) - 1; // -1..5: 0..3 valid
    kupl_queue_h h = (p == 0 && in.byte() % 2) ? kupl_queue_create() : kupl_queue_create_with_priority(p);
    trace("queue_create(priority %d) -> %p", p, static_cast<void *>(h));
    const bool valid = p >= 0 && p <= 3;
    if (!valid) {
        if (h != nullptr)
            violation("kupl_queue_create_with_priority(%d) returned a queue", p);
        return;
    }
    if (h == nullptr)
        violation("kupl_queue_create failed");
    check_new_handle(h, "kupl_queue_create");
    slot.state = Slot::live;
    slot.handle = h;
    g_lanes.emplace_back();
    slot.lane = static_cast<int>(g_lanes.size()) - 1;
}

void op_queue_destroy(Reader &in) {
    QueueArg q = pick_queue(in);
    trace("queue_destroy(%p)", static_cast<void *>(q.handle));
    kupl_queue_destroy(q.handle);
    if (!q.valid)
        return;
    Lane &lane = g_lanes[q.lane];
    if (q.acquired) {
        // Refused before waiting for anything: still a working queue, its work still pending.
        check("kupl_queue_wait(acquired after destroy)", kupl_queue_wait(q.handle),
              lane.failures_since_wait ? kErr : kOk);
        lane.failures_since_wait = 0;
        settle_lane_after_wait(q.lane);
        return;
    }
    settle_lane_after_wait(q.lane); // destroy waits for the pending work
    lane.failures_since_wait = 0;
    g_queues[q.slot].state = Slot::dead;
    bury(q.handle);
    check("kupl_queue_wait(destroyed)", kupl_queue_wait(q.handle), kErr);
}

void op_event_create(Reader &in) {
    EventSlot &slot = g_events[in.byte() % kEvents];
    if (slot.state == Slot::live)
        return;
    kupl_event_h h = kupl_event_create();
    trace("event_create -> %p", static_cast<void *>(h));
    if (h == nullptr)
        violation("kupl_event_create failed");
    check_new_handle(h, "kupl_event_create");
    slot = EventSlot{};
    slot.state = Slot::live;
    slot.handle = h;
    check("kupl_event_query(new)", kupl_event_query(h), Expect{KUPL_EVENT_STATUS_CREATED});
}

// Is any NULL-queue copy still tracked only through this event?
bool event_tracks_unordered_copy(const EventSlot &e) {
    return e.recorded && e.lane >= kQueues + kAcquired && !g_lanes[e.lane].idle();
}

void op_event_destroy(Reader &in) {
    EventArg e = pick_event(in, true);
    if (e.valid && event_tracks_unordered_copy(g_events[e.slot])) {
        // The only way to know when that copy lands: wait before letting it go.
        EventSlot &s = g_events[e.slot];
        check("kupl_event_wait(before destroy)", kupl_event_wait(s.handle), s.expect_failed ? kErr : kOk);
        observe_complete(s);
    }
    trace("event_destroy(%p)", static_cast<void *>(e.handle));
    kupl_event_destroy(e.handle);
    if (!e.valid)
        return;
    g_events[e.slot].state = Slot::dead;
    bury(e.handle);
    check("kupl_event_query(destroyed)", kupl_event_query(e.handle), kErr);
}

// Starts a new record of event slot `e` on lane; call after the runtime accepted it.
void model_record(EventSlot &e, int lane, uint64_t index, bool fails) {
    e.recorded = true;
    e.lane = lane;
    e.index = index;
    e.expect_failed = fails;
}

// The result an event argument that is valid gives when recorded again: an error if its last
// record may still be pending.
Expect rerecord_expectation(const EventSlot &e) {
    if (!e.recorded || g_lanes[e.lane].done >= e.index)
        return kOk;
    return kEither;
}

void op_event_record(Reader &in) {
    EventArg e = pick_event(in, false);
    QueueArg q = pick_queue(in, false);
    trace("event_record(%p, %p)", static_cast<void *>(e.handle), static_cast<void *>(q.handle));
    Expect want = (e.valid && q.valid) ? rerecord_expectation(g_events[e.slot]) : kErr;
    const int rc = kupl_event_record(e.handle, q.handle);
    check("kupl_event_record", rc, want);
    if (rc != KUPL_OK)
        return;
    EventSlot &s = g_events[e.slot];
    observe_complete(s); // it could be recorded again: the previous record is complete
    Lane &lane = g_lanes[q.lane];
    const uint64_t index = ++lane.enqueued;
    model_record(s, q.lane, index, lane.failed_since_record);
    lane.failed_since_record = false;
    if (g_faults_armed > 0) {
        check("kupl_event_wait(serialized record)", kupl_event_wait(s.handle), s.expect_failed ? kErr : kOk);
        observe_complete(s);
    }
}

void op_event_wait(Reader &in) {
    EventArg e = pick_event(in, false);
    trace("event_wait(%p)", static_cast<void *>(e.handle));
    if (!e.valid || !g_events[e.slot].recorded) {
        check("kupl_event_wait(invalid or never recorded)", kupl_event_wait(e.handle), kErr);
        return;
    }
    EventSlot &s = g_events[e.slot];
    check("kupl_event_wait", kupl_event_wait(s.handle), s.expect_failed ? kErr : kOk);
    observe_complete(s);
    check("kupl_event_query(after wait)", kupl_event_query(s.handle), Expect{KUPL_EVENT_STATUS_COMPLETE});
}

void op_event_query(Reader &in) {
    EventArg e = pick_event(in, false);
    const int rc = kupl_event_query(e.handle);
    trace("event_query(%p) -> %d", static_cast<void *>(e.handle), rc);
    if (!e.valid) {
        check("kupl_event_query(invalid)", rc, kErr);
        return;
    }
    EventSlot &s = g_events[e.slot];
    if (!s.recorded) {
        check("kupl_event_query(never recorded)", rc, Expect{KUPL_EVENT_STATUS_CREATED});
    } else if (g_lanes[s.lane].done >= s.index) {
        check("kupl_event_query(known complete)", rc, Expect{KUPL_EVENT_STATUS_COMPLETE});
    } else if (rc == KUPL_EVENT_STATUS_COMPLETE) {
        observe_complete(s);
    } else if (rc != KUPL_EVENT_STATUS_SUBMITTED) {
        violation("kupl_event_query of a recorded event returned %d", rc);
    }
}

void op_event_get_error(Reader &in) {
    EventArg e = pick_event(in, false);
    const uint8_t b = in.byte();
    const size_t sizes[] = {0, 1, 8, 256};
    const size_t size = sizes[b % 4];
    char message[256];
    std::memset(message, 'X', sizeof message);
    char *msg = (b / 4) % 4 == 0 ? nullptr : message;
    const int rc = kuplx_event_get_error(e.handle, msg, size);
    trace("event_get_error(%p, size %zu) -> %d", static_cast<void *>(e.handle), size, rc);
    if (msg != nullptr && size > 0 && std::memchr(message, 0, size) == nullptr)
        violation("kuplx_event_get_error did not NUL-terminate within %zu bytes", size);
    if (msg != nullptr && size < sizeof message && message[size] != 'X')
        violation("kuplx_event_get_error wrote past %zu bytes", size);
    if (!e.valid) {
        check("kuplx_event_get_error(invalid)", rc, kErr);
        return;
    }
    EventSlot &s = g_events[e.slot];
    if (!s.recorded) {
        check("kuplx_event_get_error(never recorded)", rc, kOk);
    } else if (g_lanes[s.lane].done >= s.index) {
        check("kuplx_event_get_error(complete)", rc, s.expect_failed ? kErr : kOk);
        if (s.expect_failed && msg != nullptr && size > 1 && message[0] == '\0')
            violation("kuplx_event_get_error of a failed event gave an empty reason");
    } else {
        check("kuplx_event_get_error(pending)", rc, s.expect_failed ? kEither : kOk);
    }
}

void op_queue_wait(Reader &in) {
    QueueArg q = pick_queue(in, false);
    trace("queue_wait(%p)", static_cast<void *>(q.handle));
    if (!q.valid) {
        check("kupl_queue_wait(invalid)", kupl_queue_wait(q.handle), kErr);
        return;
    }
    Lane &lane = g_lanes[q.lane];
    check("kupl_queue_wait", kupl_queue_wait(q.handle), lane.failures_since_wait ? kErr : kOk);
    lane.failures_since_wait = 0;
    settle_lane_after_wait(q.lane);
}

void op_queue_wait_event(Reader &in, bool async) {
    QueueArg q = pick_queue(in, false);
    EventArg e = pick_event(in, false);
    trace("queue_wait_event%s(%p, %p)", async ? "_async" : "", static_cast<void *>(q.handle),
          static_cast<void *>(e.handle));
    const bool valid = q.valid && e.valid && g_events[e.slot].recorded;
    if (!valid) {
        const int rc = async ? kuplx_queue_wait_event_async(q.handle, e.handle)
                             : kupl_queue_wait_event(q.handle, e.handle);
        check(async ? "kuplx_queue_wait_event_async(invalid)" : "kupl_queue_wait_event(invalid)", rc, kErr);
        return;
    }
    EventSlot &s = g_events[e.slot];
    Lane &lane = g_lanes[q.lane];
    const bool cross = s.lane != q.lane && g_lanes[s.lane].done < s.index;
    if (async && cross && g_lanes[s.lane].may_wait_for_others())
        return; // could close a cycle of waits (see Lane::may_wait_for_others): not generated
    if (async) {
        check("kuplx_queue_wait_event_async", kuplx_queue_wait_event_async(q.handle, e.handle), kOk);
        lane.pending.push_back({++lane.enqueued, {}, {}});
        if (cross)
            lane.last_cross_wait = lane.enqueued;
        if (g_faults_armed > 0) {
            // Serialized: wait for the queue now (the event's work is complete then too).
            check("kupl_queue_wait(serialized)", kupl_queue_wait(q.handle),
                  lane.failures_since_wait ? kErr : kOk);
            lane.failures_since_wait = 0;
            settle_lane_after_wait(q.lane);
            observe_complete(s);
        }
        return;
    }
    check("kupl_queue_wait_event", kupl_queue_wait_event(q.handle, e.handle), s.expect_failed ? kErr : kOk);
    ++lane.enqueued;
    settle_lane_after_wait(q.lane);
    observe_complete(s);
}

// A NULL-queue op without an event would be invisible to the model: it gets a hidden one (only
// when it is expected to be accepted).
kupl_event_h hidden_event_for(const QueueArg &q, const EventArg &e, Expect want) {
    if (!q.is_null || !e.is_null || want.code != KUPL_OK || want.either)
        return nullptr;
    kupl_event_h hidden = kupl_event_create();
    if (hidden == nullptr)
        violation("kupl_event_create (hidden) failed");
    return hidden;
}

// Models what an accepted op at `index` of `lane` records: its event (or hidden event), and on
// the synchronous queue that everything there is done. True if the lane is that queue.
bool model_accepted(int lane, uint64_t index, const EventArg &e, kupl_event_h hidden, bool fails) {
    if (e.valid)
        model_record(g_events[e.slot], lane, index, fails);
    if (hidden)
        g_hidden.push_back({hidden, lane, fails});
    Lane &l = g_lanes[lane];
    if (!l.synchronous)
        return false;
    // The submit waited for the queue: everything on it is done, failures reported.
    l.failures_since_wait = 0;
    settle_lane_after_wait(lane);
    return true;
}

void op_copy(Reader &in, bool two_d, bool sync) {
    CopyShape c = pick_copy(in, two_d);
    QueueArg q;
    EventArg e;
    if (!sync) {
        q = pick_queue(in, true);
        e = pick_event(in, true);
    }
    char what[200];
    describe(c, what, sizeof what);
    if (c.overlapping && !(g_overlap && c.overlap_exact))
        return; // overlap is not defined yet (or only interleaved): not generated
    // Which lane would order it, and may it run alongside the other lanes' pending work?
    const bool queue_ok = sync || q.valid || q.is_null;
    const bool event_ok = sync || e.valid || e.is_null;
    const bool will_enqueue = c.validity.code == KUPL_OK && !c.validity.either && queue_ok && event_ok;
    int lane = -1;
    if (!sync && q.valid)
        lane = q.lane;
    const bool runs_now = sync || (q.valid && g_lanes[q.lane].synchronous);
    if (will_enqueue && conflicts(runs_now && lane < 0 ? -2 : lane, c.writes, c.reads))
        return; // would race with unordered work: not generated

    Expect want = c.validity;
    if (!queue_ok || !event_ok)
        want = kErr;
    if (want.code == KUPL_OK && !want.either && e.valid)
        want = rerecord_expectation(g_events[e.slot]);

    int rc;
    const kupl_event_h hidden = hidden_event_for(q, e, want); // none for synchronous copies
    const kupl_event_h ev = hidden ? hidden : e.handle;
    if (sync) {
        trace("memcpy%s(%s)", two_d ? "2d" : "", what);
        rc = two_d ? kupl_memcpy2d(c.dst, c.dpitch, c.src, c.spitch, c.width, c.height)
                   : kupl_memcpy(c.dst, c.src, c.width);
    } else {
        trace("memcpy%s_async(%s, q=%p, e=%p)", two_d ? "2d" : "", what, static_cast<void *>(q.handle),
              static_cast<void *>(ev));
        rc = two_d ? kupl_memcpy2d_async(c.dst, c.dpitch, c.src, c.spitch, c.width, c.height, q.handle, ev)
                   : kupl_memcpy_async(c.dst, c.src, c.width, q.handle, ev);
    }

    // Accepted copies consume an armed fault; on a synchronous path the failure is the result.
    const bool accepted_if_ok = want.code == KUPL_OK;
    if (runs_now && accepted_if_ok && !want.either && g_faults_armed > 0) {
        const bool fails = consume_fault();
        check(sync ? "kupl_memcpy (fault armed)" : "kupl_memcpy_async on the sync queue (fault armed)", rc,
              fails ? kErr : kOk);
        if (!sync) {
            Lane &l = g_lanes[q.lane];
            ++l.enqueued;
            settle_lane_after_wait(q.lane);
            // The failure is reported by this call and its event only: a later record or wait
            // on the synchronous queue does not report it again.
            if (e.valid)
                model_record(g_events[e.slot], q.lane, l.enqueued, fails);
        }
        if (!fails)
            shadow_copy(c);
        return;
    }
    check(sync ? (two_d ? "kupl_memcpy2d" : "kupl_memcpy")
               : (two_d ? "kupl_memcpy2d_async" : "kupl_memcpy_async"),
          rc, want);
    if (rc != KUPL_OK)
        return; // rejected: nothing may change (checked at the end against the shadow)
    if (sync) {
        shadow_copy(c);
        return;
    }
    if (e.valid)
        observe_complete(g_events[e.slot]);
    const bool fails = consume_fault();
    if (!fails)
        shadow_copy(c);
    if (q.is_null)
        lane = new_null_lane();
    Lane &l = g_lanes[lane];
    const uint64_t index = ++l.enqueued;
    l.pending.push_back({index, c.writes, c.reads});
    if (fails) {
        l.failed_since_record = true;
        ++l.failures_since_wait;
    }
    if (model_accepted(lane, index, e, hidden, fails))
        return;
    if (g_faults_armed > 0 || fails) {
        // Serialized: learn now whether it failed.
        if (q.valid) {
            check("kupl_queue_wait(serialized copy)", kupl_queue_wait(q.handle),
                  l.failures_since_wait ? kErr : kOk);
            l.failures_since_wait = 0;
            settle_lane_after_wait(lane);
        } else {
            check("kupl_event_wait(serialized unordered copy)", kupl_event_wait(ev), fails ? kErr : kOk);
            settle_lane_after_wait(lane);
        }
    }
}

// kuplx_memcpy_batch_async: up to four pieces, 1D or 2D, on a queue or none. The batch is one op of
// its lane (each piece pending on it); any invalid piece, or pieces == NULL with count > 0, makes
// the call fail with nothing enqueued. Not generated: pieces that touch each other's bytes
// (undefined by the header), and batches while faults are armed (which pieces fail is up to the
// engine's order of pieces).
void op_batch(Reader &in) {
    const size_t count = in.byte() % 5;
    const bool null_array = count > 0 && in.byte() % 16 == 0;
    CopyShape shapes[4];
    kuplx_copy_piece_t pieces[4] = {};
    Expect want = kOk;
    for (size_t i = 0; i < count; ++i) {
        CopyShape &c = shapes[i];
        c = pick_copy(in, in.byte() & 1);
        if (c.overlapping && !(g_overlap && c.overlap_exact))
            return; // as op_copy: not generated
        if (c.validity.code != KUPL_OK)
            want = kErr;
        pieces[i] = {c.dst, c.dpitch, c.src, c.spitch, c.width, c.height};
    }
    if (null_array)
        want = kErr;
    const QueueArg q = pick_queue(in, true);
    const EventArg e = pick_event(in, true);
    if (g_faults_armed > 0)
        return;
    if (!(q.valid || q.is_null) || !(e.valid || e.is_null))
        want = kErr;
    const bool accepted_if_ok = want.code == KUPL_OK;
    for (size_t i = 0; accepted_if_ok && i < count; ++i)
        for (size_t j = 0; j < count; ++j)
            if (i != j && (shapes[i].writes.intersects(shapes[j].writes) ||
                           shapes[i].writes.intersects(shapes[j].reads)))
                return; // pieces that touch each other's bytes: undefined
    const int lane_of_queue = q.valid ? q.lane : -1;
    for (size_t i = 0; accepted_if_ok && i < count; ++i)
        if (conflicts(lane_of_queue, shapes[i].writes, shapes[i].reads))
            return; // would race with unordered work: not generated
    if (accepted_if_ok && e.valid)
        want = rerecord_expectation(g_events[e.slot]);

    const kupl_event_h hidden = hidden_event_for(q, e, want);
    const kupl_event_h ev = hidden ? hidden : e.handle;
    trace("memcpy_batch_async(%zu pieces%s, q=%p, e=%p)", count, null_array ? " (NULL array)" : "",
          static_cast<void *>(q.handle), static_cast<void *>(ev));
    const int rc = kuplx_memcpy_batch_async(null_array ? nullptr : pieces, count, q.handle, ev);
    check("kuplx_memcpy_batch_async", rc, want);
    if (rc != KUPL_OK) {
        if (hidden)
            kupl_event_destroy(hidden);
        return; // rejected: nothing may change (checked at the end against the shadow)
    }
    if (e.valid)
        observe_complete(g_events[e.slot]);
    for (size_t i = 0; i < count; ++i)
        shadow_copy(shapes[i]);
    const int lane = q.is_null ? new_null_lane() : q.lane;
    Lane &l = g_lanes[lane];
    const uint64_t index = ++l.enqueued;
    for (size_t i = 0; i < count; ++i)
        l.pending.push_back({index, shapes[i].writes, shapes[i].reads});
    model_accepted(lane, index, e, hidden, false);
}

void op_submit(Reader &in) {
    QueueArg q = pick_queue(in, true);
    const uint8_t b = in.byte();
    const bool by_value = b & 1;
    int self_call = (b / 2) % 8; // see ItemArgs::self_call
    if (self_call == 4 && !g_item_waits)
        self_call = 0;
    const bool null_desc = (b / 16) % 16 == 0;
    const bool null_func = (b / 16) % 16 == 1;
    const bool null_args_with_size = (b / 16) % 16 == 2;
    if (g_num_items >= kItems)
        return;
    const int id = g_num_items;
    ItemState &s = g_items[id];
    ItemArgs args{};
    args.id = id;
    args.self_call = q.valid ? self_call : 0;
    args.own = q.handle;
    for (const EventSlot &ev : g_events)
        if (ev.state == Slot::live && ev.recorded && g_lanes[ev.lane].done >= ev.index)
            args.some_event = ev.handle;
    if (args.self_call == 3 && args.some_event == nullptr)
        args.self_call = 0;
    if (args.self_call == 4) {
        args.other =
            g_queues[(b / 16) % kQueues].state == Slot::live ? g_queues[(b / 16) % kQueues].handle : nullptr;
        if (args.other == nullptr || args.other == q.handle ||
            g_lanes[g_queues[(b / 16) % kQueues].lane].may_wait_for_others())
            args.self_call = 0;
    }
    if (args.self_call == 2 && q.acquired)
        args.self_call = 0; // an acquired queue must not be destroyed: not generated
    if ((args.self_call == 7 || (args.self_call >= 1 && args.self_call <= 4)) && q.valid &&
        g_lanes[q.lane].synchronous && !g_sync_self_calls)
        args.self_call = 0;
    // The item checks that the last copy before it on this queue has landed.
    if (q.valid) {
        const Lane &l = g_lanes[q.lane];
        for (auto it = l.pending.rbegin(); it != l.pending.rend(); ++it) {
            if (!it->writes.empty()) {
                args.check = it->writes.lo;
                args.check_len = static_cast<size_t>(it->writes.hi - it->writes.lo);
                args.check_hash = fnv(shadow_of(args.check), args.check_len);
                break;
            }
        }
    }
    Span reads{args.check, args.check + args.check_len};
    if (q.valid && conflicts(q.lane, {}, reads))
        args.check_len = 0, args.check = nullptr;
    s.runs = 0;
    s.mismatch = 0;
    s.wrong_thread = false;
    s.self_result = 12345;
    s.self_call = args.self_call;
    s.synchronous = q.valid && g_lanes[q.lane].synchronous;
    s.by_reference = args;

    kupl_queue_item_desc_t desc{};
    desc.func = item_body;
    desc.name = "fuzz item";
    desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_NAME;
    ItemArgs local = args;
    if (by_value) {
        desc.field_mask |= KUPL_QUEUE_ITEM_DESC_FIELD_ARGS_SIZE;
        desc.args = null_args_with_size ? nullptr : &local;
        desc.args_size = sizeof local;
    } else {
        desc.args = &s.by_reference;
    }
    if (null_func)
        desc.func = nullptr;
    Expect want = q.valid ? kOk : kErr;
    if (null_desc || null_func || (by_value && null_args_with_size))
        want = kErr;
    trace("queue_submit(%p, item %d%s%s, self_call %d, other %p)", static_cast<void *>(q.handle), id,
          by_value ? ", by value" : "",
          null_desc   ? ", NULL desc"
          : null_func ? ", NULL func"
                      : "",
          args.self_call, static_cast<void *>(args.other));
    const int rc = kupl_queue_submit(q.handle, null_desc ? nullptr : &desc);
    // The caller may reuse its args at once: poison them, the item must have its own copy.
    std::memset(&local, 0xA5, sizeof local);
    check("kupl_queue_submit", rc, want);
    ++g_num_items;
    s.accepted = rc == KUPL_OK;
    if (!s.accepted)
        return;
    Lane &l = g_lanes[q.lane];
    const uint64_t index = ++l.enqueued;
    l.pending.push_back({index, {}, reads});
    if (args.self_call == 4)
        l.last_cross_wait = index;
    if (l.synchronous) {
        l.failures_since_wait = 0;
        settle_lane_after_wait(q.lane);
    } else if (g_faults_armed > 0) {
        check("kupl_queue_wait(serialized item)", kupl_queue_wait(q.handle),
              l.failures_since_wait ? kErr : kOk);
        l.failures_since_wait = 0;
        settle_lane_after_wait(q.lane);
    }
}

void op_acquire(Reader &in) {
    const uint8_t b = in.byte();
    const int index = static_cast<int>(b % 8) - 3; // -3..4
    kupl_queue_h h = kupl_queue_acquire(index);
    trace("queue_acquire(%d) -> %p", index, static_cast<void *>(h));
    if (index < KUPL_ASYNC_SYNC) {
        if (h != nullptr)
            violation("kupl_queue_acquire(%d) returned a queue", index);
        return;
    }
    if (h == nullptr)
        violation("kupl_queue_acquire(%d) returned NULL", index);
    for (int a = 0; a < kAcquired; ++a)
        if (kAcquiredIndex[a] == index && h != g_acquired[a])
            violation("kupl_queue_acquire(%d) returned %p, earlier %p", index, static_cast<void *>(h),
                      static_cast<void *>(g_acquired[a]));
}

void op_wait_all() {
    trace("queue_wait_all()");
    bool any_failed = false;
    for (int a = 0; a < kAcquired; ++a)
        any_failed |= g_lanes[kQueues + a].failures_since_wait != 0;
    check("kupl_queue_wait_all", kupl_queue_wait_all(), any_failed ? kErr : kOk);
    for (int a = 0; a < kAcquired; ++a) {
        g_lanes[kQueues + a].failures_since_wait = 0;
        settle_lane_after_wait(kQueues + a);
    }
}

// Waits for everything in flight (every lane idle), checking the results.
void quiesce() {
    // Two rounds: an item that runs during the first wait may submit another onto its own queue
    // (ItemArgs::self_call 7), behind that wait's ticket; the second wait covers it.
    for (int round = 0; round < 2; ++round) {
        for (int s = 0; s < kQueues; ++s) {
            QueueSlot &slot = g_queues[s];
            if (slot.state != Slot::live)
                continue;
            Lane &l = g_lanes[slot.lane];
            check("kupl_queue_wait(quiesce)", kupl_queue_wait(slot.handle),
                  l.failures_since_wait ? kErr : kOk);
            l.failures_since_wait = 0;
            settle_lane_after_wait(slot.lane);
        }
        for (int a = 0; a < kAcquired; ++a) { // all of them: they outlive the input
            Lane &l = g_lanes[kQueues + a];
            check("kupl_queue_wait(acquired, quiesce)", kupl_queue_wait(g_acquired[a]),
                  l.failures_since_wait ? kErr : kOk);
            l.failures_since_wait = 0;
            settle_lane_after_wait(kQueues + a);
        }
    }
    for (EventSlot &e : g_events) {
        if (e.state == Slot::live && event_tracks_unordered_copy(e)) {
            check("kupl_event_wait(unordered, quiesce)", kupl_event_wait(e.handle),
                  e.expect_failed ? kErr : kOk);
            observe_complete(e);
        }
    }
    for (HiddenEvent &h : g_hidden) {
        if (!g_lanes[h.lane].idle()) {
            check("kupl_event_wait(hidden)", kupl_event_wait(h.handle), h.expect_failed ? kErr : kOk);
            settle_lane_after_wait(h.lane);
        }
    }
    // NULL-queue copies whose event was destroyed were waited for before the destroy: every
    // lane is idle now, or the model lost track of something.
    for (size_t l = 0; l < g_lanes.size(); ++l)
        if (!g_lanes[l].pending.empty())
            violation("internal: lane %zu still has %zu pending ops after quiesce", l,
                      g_lanes[l].pending.size());
}

// In a forked child: the parent's handles (live ones included) must be invalid, and the child's
// fresh runtime must work and never hand out one of them. Returns the failing step, 0 if none.
int fork_child(const std::vector<uintptr_t> &parent_handles) {
    alarm(10); // a hang is reported as a signal
    auto parent_handles_invalid = [&] {
        for (uintptr_t h : parent_handles)
            if (kupl_queue_wait(reinterpret_cast<kupl_queue_h>(h)) != KUPL_ERROR ||
                kupl_event_query(reinterpret_cast<kupl_event_h>(h)) != KUPL_ERROR)
                return false;
        return true;
    };
    if (!parent_handles_invalid())
        return 10;
    kupl_queue_h q = kupl_queue_create();
    kupl_event_h e = kupl_event_create();
    if (q == nullptr || e == nullptr)
        return 11;
    for (uintptr_t h : parent_handles)
        if (h == reinterpret_cast<uintptr_t>(q) || h == reinterpret_cast<uintptr_t>(e))
            return 12;
    if (kupl_memcpy_async(g_buf[0], g_buf[1], 20000, q, e) != KUPL_OK || kupl_event_wait(e) != KUPL_OK ||
        std::memcmp(g_buf[0], g_buf[1], 20000) != 0)
        return 13;
    if (!parent_handles_invalid())
        return 14;
    return 0;
}

void op_fork() {
    std::vector<uintptr_t> handles;
    for (const QueueSlot &q : g_queues)
        if (q.handle != nullptr)
            handles.push_back(reinterpret_cast<uintptr_t>(q.handle));
    for (const EventSlot &e : g_events)
        if (e.handle != nullptr)
            handles.push_back(reinterpret_cast<uintptr_t>(e.handle));
    for (kupl_queue_h a : g_acquired)
        handles.push_back(reinterpret_cast<uintptr_t>(a));
    trace("fork() with %zu parent handles", handles.size());
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0)
        violation("fork failed");
    if (pid == 0)
        _exit(fork_child(handles));
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        violation("waitpid failed");
    if (WIFSIGNALED(status))
        violation("the forked child died of signal %d (SIGALRM: it hung)", WTERMSIG(status));
    if (WEXITSTATUS(status) != 0)
        violation("the forked child failed at step %d (10/14: a parent handle was valid there, 12: a child "
                  "handle equals a parent handle, 11/13: the child's runtime does not work)",
                  WEXITSTATUS(status));
}

void op_inject_faults(Reader &in) {
    const uint8_t b = in.byte();
    if (g_fork && (b & 0x80) != 0) {
        g_op_name = "fork";
        op_fork();
        return;
    }
    const unsigned n = 1 + b % 3;
    trace("inject_copy_faults(%u)", n);
    quiesce();
    for (Lane &l : g_lanes)
        l.pending.clear(), l.done = l.enqueued;
    check("kuplx_inject_copy_faults", kuplx_inject_copy_faults(n), kOk);
    g_faults_armed = n;
}

// ----------------------------------------------------------------------------- one input

void reset_for_input() {
    for (int b = 0; b < kBuffers; ++b) {
        std::memcpy(g_buf[b], g_pristine + b * kBufferBytes, kBufferBytes);
        std::memcpy(g_shadow[b], g_buf[b], kBufferBytes);
    }
    g_lanes.clear();
    g_lanes.resize(kQueues + kAcquired);
    g_lanes[kQueues].synchronous = true; // KUPL_ASYNC_SYNC
    for (QueueSlot &q : g_queues)
        q = QueueSlot{};
    for (EventSlot &e : g_events)
        e = EventSlot{};
    for (bool &u : g_acquired_used)
        u = false;
    g_hidden.clear();
    g_graveyard.clear();
    g_num_items = 0;
    g_faults_armed = 0;
}

void finish_input() {
    quiesce();
    g_op_name = "end of input";
    // Bytes: every buffer equals its shadow.
    for (int b = 0; b < kBuffers; ++b) {
        if (std::memcmp(g_buf[b], g_shadow[b], kBufferBytes) != 0) {
            size_t i = 0;
            while (g_buf[b][i] == g_shadow[b][i])
                ++i;
            size_t j = kBufferBytes;
            while (g_buf[b][j - 1] == g_shadow[b][j - 1])
                --j;
            violation("buffer %d differs from the model at bytes %zu..%zu (got 0x%02x, expected 0x%02x)", b,
                      i, j - 1, g_buf[b][i], g_shadow[b][i]);
        }
    }
    // Host items: exactly once if accepted, never if rejected; the checks inside them held.
    for (int i = 0; i < g_num_items; ++i) {
        const ItemState &s = g_items[i];
        const int runs = s.runs.load();
        if (runs != (s.accepted ? 1 : 0))
            violation("host item %d (%s) ran %d times", i, s.accepted ? "accepted" : "rejected", runs);
        if (s.mismatch.load())
            violation("host item %d ran before the copy ahead of it on its queue had landed", i);
        if (s.wrong_thread.load())
            violation("host item %d on the KUPL_ASYNC_SYNC queue ran on another thread", i);
        if (s.accepted && s.self_call == 7 && s.self_result.load() != KUPL_OK)
            violation("host item %d: a submit onto its own queue returned %d", i, s.self_result.load());
        if (s.accepted && (s.self_call == 1 || s.self_call == 3) && s.self_result.load() != KUPL_ERROR)
            violation("host item %d: waiting on its own queue returned %d, expected KUPL_ERROR", i,
                      s.self_result.load());
    }
    // Events: every recorded one is COMPLETE, with the expected error state.
    for (EventSlot &e : g_events) {
        if (e.state != Slot::live || !e.recorded)
            continue;
        check("kupl_event_query(end)", kupl_event_query(e.handle), Expect{KUPL_EVENT_STATUS_COMPLETE});
        check("kuplx_event_get_error(end)", kuplx_event_get_error(e.handle, nullptr, 0),
              e.expect_failed ? kErr : kOk);
    }
    // A queue destroyed by its own item (ignored) is still usable.
    // Tear down; stale handles answer KUPL_ERROR.
    for (QueueSlot &q : g_queues)
        if (q.state == Slot::live) {
            kupl_queue_destroy(q.handle);
            bury(q.handle);
        }
    for (EventSlot &e : g_events)
        if (e.state == Slot::live) {
            kupl_event_destroy(e.handle);
            bury(e.handle);
        }
    for (HiddenEvent &h : g_hidden)
        kupl_event_destroy(h.handle);
    for (uintptr_t h : g_graveyard) {
        check("kupl_queue_wait(stale)", kupl_queue_wait(reinterpret_cast<kupl_queue_h>(h)), kErr);
        check("kupl_event_query(stale)", kupl_event_query(reinterpret_cast<kupl_event_h>(h)), kErr);
    }
    // Acquired queues live on: leave them without a pending failure for the next input.
    for (int a = 0; a < kAcquired; ++a) {
        Lane &l = g_lanes[kQueues + a];
        if (!l.failed_since_record)
            continue;
        kupl_event_h e = kupl_event_create();
        check("kupl_event_record(clear)", kupl_event_record(e, g_acquired[a]), kOk);
        check("kupl_event_wait(clear)", kupl_event_wait(e), kErr);
        kupl_event_destroy(e);
    }
    check("kupl_queue_wait_all(end)", kupl_queue_wait_all(), kOk);
    kuplx_inject_copy_faults(0);
}

// KUPL_FUZZ_<NAME>: "1" on, "0" off, anything else (or unset) keeps `fallback`.
bool env_switch(const char *name, bool fallback) {
    const char *v = std::getenv(name);
    if (v == nullptr || (v[0] != '0' && v[0] != '1') || v[1] != '\0')
        return fallback;
    return v[0] == '1';
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    // Small engine thresholds put small buffers through every path: inline, channel, split.
    setenv("KUPL_ASYNC_INLINE_THRESHOLD", "1K", 0);
    setenv("KUPL_MEMCPY_MT_THRESHOLD", "8K", 0);
    setenv("KUPL_MEMCPY_SDMA_THRESHOLD", "4K", 0);
    setenv("KUPL_NUM_CHANNELS", "2", 0);
    g_overlap = env_switch("KUPL_FUZZ_OVERLAP", g_overlap);
    g_item_waits = env_switch("KUPL_FUZZ_ITEM_WAITS", g_item_waits);
    g_sync_self_calls = env_switch("KUPL_FUZZ_SYNC_SELF_CALLS", g_sync_self_calls);
    g_sync_thread_check = env_switch("KUPL_FUZZ_SYNC_THREAD_CHECK", g_sync_thread_check);
    g_fork = env_switch("KUPL_FUZZ_FORK", g_fork);
    g_trace = env_switch("KUPL_FUZZ_TRACE", g_trace);
    g_driver_thread = pthread_self();
    g_pristine = static_cast<unsigned char *>(std::malloc(kBuffers * kBufferBytes));
    uint64_t state = 0x9e3779b97f4a7c15ull; // splitmix64: distinct bytes everywhere
    for (size_t i = 0; i < kBuffers * kBufferBytes; i += 8) {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        std::memcpy(g_pristine + i, &z, 8);
    }
    for (int b = 0; b < kBuffers; ++b) {
        g_buf[b] = static_cast<unsigned char *>(std::malloc(kBufferBytes));
        g_shadow[b] = static_cast<unsigned char *>(std::malloc(kBufferBytes));
    }
    for (int a = 0; a < kAcquired; ++a) {
        g_acquired[a] = kupl_queue_acquire(kAcquiredIndex[a]);
        if (g_acquired[a] == nullptr)
            violation("kupl_queue_acquire(%d) failed", kAcquiredIndex[a]);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static bool initialized = false;
    if (!initialized) { // the replay driver calls LLVMFuzzerInitialize itself; this is a fallback
        initialized = true;
        if (g_buf[0] == nullptr)
            LLVMFuzzerInitialize(nullptr, nullptr);
    }
    Reader in(data, size);
    in.byte(); // (format version byte, unused)
    reset_for_input();
    g_op_number = 0;
    static const char *const names[] = {"queue_create",
                                        "queue_destroy",
                                        "event_create",
                                        "event_destroy",
                                        "event_record",
                                        "event_wait",
                                        "event_query",
                                        "event_get_error",
                                        "queue_wait",
                                        "queue_wait_event",
                                        "queue_wait_event_async",
                                        "memcpy_async",
                                        "memcpy2d_async",
                                        "memcpy",
                                        "memcpy2d",
                                        "queue_submit",
                                        "queue_acquire",
                                        "queue_wait_all",
                                        "inject_faults",
                                        "memcpy_batch_async"};
    constexpr int kOps = sizeof names / sizeof names[0];
    while (!in.done() && g_op_number < 256) {
        ++g_op_number;
        // 2D async, synchronous copies and submits twice as often. The modulus and the codes of
        // the older ops stay as they were before the batch op (19, which was a second code for
        // 1D async copies), so the saved findings in corpus/ still decode to the same programs.
        int op = in.byte() % (kOps + 4);
        if (op >= kOps)
            op = 12 + (op - kOps);
        g_op_name = names[op];
        switch (op) {
        case 0:
            op_queue_create(in);
            break;
        case 1:
            op_queue_destroy(in);
            break;
        case 2:
            op_event_create(in);
            break;
        case 3:
            op_event_destroy(in);
            break;
        case 4:
            op_event_record(in);
            break;
        case 5:
            op_event_wait(in);
            break;
        case 6:
            op_event_query(in);
            break;
        case 7:
            op_event_get_error(in);
            break;
        case 8:
            op_queue_wait(in);
            break;
        case 9:
            op_queue_wait_event(in, false);
            break;
        case 10:
            op_queue_wait_event(in, true);
            break;
        case 11:
            op_copy(in, false, false);
            break;
        case 12:
            op_copy(in, true, false);
            break;
        case 13:
            op_copy(in, false, true);
            break;
        case 14:
            op_copy(in, true, true);
            break;
        case 15:
            op_submit(in);
            break;
        case 16:
            op_acquire(in);
            break;
        case 17:
            op_wait_all();
            break;
        case 18:
            op_inject_faults(in);
            break;
        case 19:
            op_batch(in);
            break;
        default:
            break;
        }
    }
    finish_input();
    return 0;
}
