// Exhaustion: the runtime when memory or threads run out. Every case runs in a forked child of a
// parent that never starts the runtime (so the fork is safe under ThreadSanitizer too); alarm()
// turns a hang into a failure, and the child reports on a pipe what went wrong.
//
// - OutOfMemory.*: the address space is capped (setrlimit RLIMIT_AS, soft limit) after start-up,
//   then one call is repeated until it is refused. It must return NULL / KUPL_ERROR (it used to
//   end in an uncaught std::bad_alloc, exit 134), every event it touched must complete or report,
//   and the runtime must work again once memory is freed.
// - ThreadLimit.*: thread creation fails part-way through start-up. The runtime must run with the
//   threads that started and say so in one line on stderr, or, when not one thread starts, fail
//   every call cleanly and say so once (it used to abort: "terminate called without an active
//   exception").
//
// Where they skip: ASan and TSan reserve terabytes of address space for their shadow memory, so
// the RLIMIT_AS cases (OutOfMemory.*, ThreadLimit.AddressSpace*) skip under both sanitizers. The
// RLIMIT_NPROC cases (ThreadLimit.ProcessLimit*) run everywhere but need root: root ignores
// RLIMIT_NPROC, so the child switches to a uid no other process uses; without root they skip.
#include "test_support.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

using namespace kupl_test;

namespace {

// ---- The child side ------------------------------------------------------------------------

int g_report_fd = -1;

// Ends the child: the first line written to the report pipe is the verdict ("ok" or why not).
[[noreturn]] void child_exit(int code) {
#ifdef KUPL_TEST_ASAN
    _exit(code); // LeakSanitizer's tracer thread cannot start under a thread limit
#else
    std::exit(code); // through the library's exit drain, under the same limits
#endif
}

[[noreturn]] __attribute__((format(printf, 2, 3))) void child_fail(int line, const char *format, ...) {
    char text[512];
    int used = std::snprintf(text, sizeof text, "line %d: ", line);
    va_list args;
    va_start(args, format);
    std::vsnprintf(text + used, sizeof text - static_cast<size_t>(used), format, args);
    va_end(args);
    ssize_t ignored = write(g_report_fd, text, strlen(text));
    (void)ignored;
    _exit(1);
}

#define CHILD_CHECK(condition, ...)                                                                          \
    do {                                                                                                     \
        if (!(condition))                                                                                    \
            child_fail(__LINE__, __VA_ARGS__);                                                               \
    } while (0)

[[noreturn]] void child_ok() {
    ssize_t ignored = write(g_report_fd, "ok", 2);
    (void)ignored;
    child_exit(0);
}

// The process's address-space size now, from /proc/self/statm (no allocation).
size_t address_space_bytes() {
    char text[128] = {};
    const int fd = open("/proc/self/statm", O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0)
        return 0;
    return std::strtoull(text, nullptr, 10) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// Lets the address space grow by `headroom` bytes from now on (soft limit: can be lifted again).
void cap_address_space(size_t headroom) {
    rlimit limit{};
    getrlimit(RLIMIT_AS, &limit);
    limit.rlim_cur = address_space_bytes() + headroom;
    CHILD_CHECK(setrlimit(RLIMIT_AS, &limit) == 0, "setrlimit(RLIMIT_AS) failed");
}

void lift_address_space_cap() {
    rlimit limit{};
    getrlimit(RLIMIT_AS, &limit);
    limit.rlim_cur = limit.rlim_max;
    CHILD_CHECK(setrlimit(RLIMIT_AS, &limit) == 0, "lifting RLIMIT_AS failed");
}

// The buffers every copy uses: allocated before any limit.
constexpr size_t kCopyBytes = 64u << 10; // above the inline threshold: goes through the channels
unsigned char *g_src = nullptr;
unsigned char *g_dst = nullptr;

// Starts the runtime and runs a copy and a host item through it.
void warm_up() {
    g_src = static_cast<unsigned char *>(std::malloc(kCopyBytes));
    g_dst = static_cast<unsigned char *>(std::malloc(kCopyBytes));
    CHILD_CHECK(g_src != nullptr && g_dst != nullptr, "no memory for the buffers");
    fill_pattern(g_src, kCopyBytes, 11);
    kupl_queue_h queue = kupl_queue_create();
    CHILD_CHECK(queue != nullptr, "kupl_queue_create failed before any limit");
    CHILD_CHECK(kupl_memcpy_async(g_dst, g_src, kCopyBytes, queue, nullptr) == KUPL_OK,
                "warm-up copy refused");
    CHILD_CHECK(submit_fn(queue, [] {}) == KUPL_OK, "warm-up item refused");
    CHILD_CHECK(kupl_queue_wait(queue) == KUPL_OK, "warm-up wait failed");
    kupl_queue_destroy(queue);
}

// A fresh queue, event, copy, 2D copy and host item all work, and the bytes land.
void expect_runtime_works(const char *when) {
    kupl_queue_h queue = kupl_queue_create();
    kupl_event_h event = kupl_event_create();
    CHILD_CHECK(queue != nullptr && event != nullptr, "%s: cannot create a queue and an event", when);
    std::memset(g_dst, 0, kCopyBytes);
    CHILD_CHECK(kupl_memcpy_async(g_dst, g_src, kCopyBytes / 2, queue, nullptr) == KUPL_OK, "%s: copy", when);
    CHILD_CHECK(kupl_memcpy2d_async(g_dst + kCopyBytes / 2, 64, g_src + kCopyBytes / 2, 64, 64,
                                    kCopyBytes / 128, queue, event) == KUPL_OK,
                "%s: 2D copy", when);
    std::atomic<int> ran{0};
    CHILD_CHECK(submit_fn(queue, [&ran] { ran = 1; }) == KUPL_OK, "%s: host item", when);
    CHILD_CHECK(kupl_event_wait(event) == KUPL_OK && kupl_queue_wait(queue) == KUPL_OK, "%s: waits", when);
    CHILD_CHECK(ran.load() == 1, "%s: the host item did not run", when);
    CHILD_CHECK(std::memcmp(g_dst, g_src, kCopyBytes) == 0, "%s: wrong bytes", when);
    kupl_event_destroy(event);
    kupl_queue_destroy(queue);
}

// A handle array that never allocates while memory is capped.
template <typename Handle> struct HandleList {
    explicit HandleList(size_t capacity)
        : items(static_cast<Handle *>(std::calloc(capacity, sizeof(Handle)))), room(capacity) {
        CHILD_CHECK(items != nullptr, "no memory for the handle list");
    }
    Handle *items;
    size_t room;
    size_t size = 0;
};

// The headroom left under the cap: small, so that the queue a case fills drains fast even on a
// loaded machine; every op or handle takes well over 100 bytes, so kMaxCalls never all fit.
constexpr size_t kHeadroom = 4u << 20;
constexpr size_t kMaxCalls = 400000;

// Repeats create() under the cap until it returns NULL; then frees everything and checks the
// runtime works again.
template <typename Handle, typename Create, typename Destroy>
void create_until_refused(const char *what, Create create, Destroy destroy) {
    warm_up();
    HandleList<Handle> made(kMaxCalls);
    cap_address_space(kHeadroom);
    bool refused = false;
    while (made.size < made.room) {
        Handle handle = create();
        if (handle == nullptr) {
            refused = true;
            break;
        }
        made.items[made.size++] = handle;
    }
    CHILD_CHECK(refused, "%s never returned NULL in %zu calls", what, made.size);
    CHILD_CHECK(made.size > 0, "%s refused at once", what);
    for (size_t i = 0; i < made.size; ++i)
        destroy(made.items[i]);
    expect_runtime_works("after freeing, still capped");
    lift_address_space_cap();
    expect_runtime_works("after lifting the cap");
    child_ok();
}

// Holds a queue with a gate item, and repeats submit(queue, i, event i) under the cap until it
// is refused; then opens the gate and checks that every accepted op's event completes (or reports
// running out of memory) and that the refused call left its event complete or never recorded.
template <typename Submit> void submit_until_refused(const char *what, Submit submit) {
    warm_up();
    kupl_queue_h queue = kupl_queue_create();
    CHILD_CHECK(queue != nullptr, "kupl_queue_create");
    // An event recorded and complete, for the calls that wait for one.
    kupl_event_h done = kupl_event_create();
    CHILD_CHECK(done != nullptr && kupl_event_record(done, queue) == KUPL_OK &&
                    kupl_event_wait(done) == KUPL_OK,
                "a complete event");
    HandleList<kupl_event_h> events(kMaxCalls / 4); // > 4 MiB / 100 B: the cap comes first
    for (; events.size < events.room; ++events.size) {
        events.items[events.size] = kupl_event_create();
        CHILD_CHECK(events.items[events.size] != nullptr, "kupl_event_create before the cap");
    }
    auto *gate = new Gate(std::chrono::seconds(30));
    CHILD_CHECK(gate->block(queue) == KUPL_OK, "gate");
    gate->wait_entered();

    cap_address_space(kHeadroom);
    size_t accepted = 0;
    int rc = KUPL_OK;
    while (accepted < events.size && (rc = submit(queue, done, events.items[accepted])) == KUPL_OK)
        ++accepted;
    CHILD_CHECK(rc == KUPL_ERROR, "%s returned %d, not KUPL_ERROR", what, rc);
    CHILD_CHECK(accepted < events.size, "%s was never refused in %zu calls", what, accepted);
    CHILD_CHECK(accepted > 0, "%s refused at once", what);

    gate->open();
    const int waited = kupl_queue_wait(queue); // KUPL_ERROR if an accepted op ran out of memory
    CHILD_CHECK(!gate->timed_out(), "the gate timed out");
    size_t failed = 0;
    for (size_t i = 0; i < events.size; ++i) {
        const int status = kupl_event_query(events.items[i]);
        if (i > accepted) {
            CHILD_CHECK(status == KUPL_EVENT_STATUS_CREATED, "event %zu, never used, has status %d", i,
                        status);
            continue;
        }
        if (status == KUPL_EVENT_STATUS_CREATED) {
            // Only a call that was refused, or that records no event, leaves its event unrecorded.
            CHILD_CHECK(i == accepted || !submit.records, "accepted event %zu was never recorded", i);
            continue;
        }
        CHILD_CHECK(status == KUPL_EVENT_STATUS_COMPLETE,
                    "event %zu is still SUBMITTED after the queue drained", i);
        if (kupl_event_wait(events.items[i]) != KUPL_OK) {
            char why[256] = {};
            kuplx_event_get_error(events.items[i], why, sizeof why);
            CHILD_CHECK(std::strstr(why, "memory") != nullptr, "event %zu failed for another reason: %s", i,
                        why);
            ++failed;
        }
    }
    CHILD_CHECK(waited == KUPL_OK || failed > 0 || !submit.records,
                "the queue reported a failure no event shows");
    for (size_t i = 0; i < events.size; ++i)
        kupl_event_destroy(events.items[i]);
    kupl_event_destroy(done);
    kupl_queue_destroy(queue);
    delete gate;
    expect_runtime_works("after the queue drained, still capped");
    lift_address_space_cap();
    expect_runtime_works("after lifting the cap");
    child_ok();
}

// The calls that submit work, as submit_until_refused wants them: `records` says whether the
// call records its event (so an accepted call must leave it COMPLETE).
// Copies just above the inline threshold (16 KiB), so they go through the channels' bookkeeping
// yet thousands of them copy little.
struct CopyCall {
    static constexpr bool records = true;
    int operator()(kupl_queue_h q, kupl_event_h, kupl_event_h e) const {
        return kupl_memcpy_async(g_dst, g_src, 20u << 10, q, e);
    }
};
struct Copy2dCall {
    static constexpr bool records = true;
    int operator()(kupl_queue_h q, kupl_event_h, kupl_event_h e) const {
        return kupl_memcpy2d_async(g_dst, 128, g_src, 128, 64, 160, q, e); // costs 20 KiB
    }
};
struct RecordCall {
    static constexpr bool records = true;
    int operator()(kupl_queue_h q, kupl_event_h, kupl_event_h e) const { return kupl_event_record(e, q); }
};
struct SubmitCall {
    static constexpr bool records = false;
    static void item(void *) {}
    int operator()(kupl_queue_h q, kupl_event_h, kupl_event_h) const {
        kupl_queue_item_desc_t desc{};
        desc.func = &item;
        desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_ARGS_SIZE;
        static const std::uint64_t args[4] = {1, 2, 3, 4};
        desc.args = const_cast<std::uint64_t *>(args);
        desc.args_size = sizeof args; // copied by value: one more allocation per call
        return kupl_queue_submit(q, &desc);
    }
};
struct WaitEventCall {
    static constexpr bool records = false;
    int operator()(kupl_queue_h q, kupl_event_h done, kupl_event_h) const {
        return kuplx_queue_wait_event_async(q, done);
    }
};

// A thread whose first call into the runtime comes once memory has run out (every malloc, down to
// 16 bytes, refused in that very thread) gets errors or results, never an end of the process: the
// per-thread state the API keeps (the handle tables' caches) used to be a thread_local with a
// destructor, and glibc aborts when it cannot allocate the record of such a destructor ("failed
// to register TLS destructor: out of memory").
void first_call_after_memory_ran_out() {
    warm_up();
    kupl_queue_h queue = kupl_queue_create();
    kupl_event_h event = kupl_event_create();
    CHILD_CHECK(queue != nullptr && event != nullptr, "a queue and an event before the cap");
    std::atomic<int> phase{0}; // 1: capped, go
    int copy_rc = 0, record_rc = 0, wait_rc = 0, event_wait_rc = 0;
    std::thread late([&] {
        std::free(std::malloc(64)); // this thread's malloc arena, made before the cap
        while (phase.load() != 1)
            std::this_thread::yield();
        void *held = nullptr; // every block refused memory heads a list of them, in the blocks
        size_t blocks = 0;
        for (size_t size = size_t{1} << 20; size >= 16; size /= 2)
            for (void *block; (block = std::malloc(size)) != nullptr; ++blocks) {
                *static_cast<void **>(block) = held;
                held = block;
            }
        CHILD_CHECK(std::malloc(16) == nullptr, "memory did not run out");
        std::memset(g_dst, 0, kCopyBytes);
        copy_rc = kupl_memcpy_async(g_dst, g_src, 4096, queue, nullptr);
        record_rc = kupl_event_record(event, queue);
        wait_rc = kupl_queue_wait(queue);
        event_wait_rc = record_rc == KUPL_OK ? kupl_event_wait(event) : KUPL_OK;
        while (held != nullptr) {
            void *next = *static_cast<void **>(held);
            std::free(held);
            held = next;
        }
        CHILD_CHECK(blocks > 0, "no memory was left to take");
    });
    cap_address_space(kHeadroom);
    phase.store(1);
    late.join();
    CHILD_CHECK(copy_rc == KUPL_OK || copy_rc == KUPL_ERROR, "kupl_memcpy_async returned %d", copy_rc);
    CHILD_CHECK(record_rc == KUPL_OK || record_rc == KUPL_ERROR, "kupl_event_record returned %d", record_rc);
    CHILD_CHECK(wait_rc == KUPL_OK && event_wait_rc == KUPL_OK, "waits returned %d and %d", wait_rc,
                event_wait_rc);
    CHILD_CHECK(copy_rc != KUPL_OK || std::memcmp(g_dst, g_src, 4096) == 0, "an accepted copy is wrong");
    kupl_event_destroy(event);
    kupl_queue_destroy(queue);
    expect_runtime_works("after the thread freed its memory, still capped");
    lift_address_space_cap();
    expect_runtime_works("after lifting the cap");
    child_ok();
}

// ---- Thread limits ---------------------------------------------------------------------------

// The calling process's thread count, from /proc/self/status.
int thread_count() {
    char text[4096] = {};
    const int fd = open("/proc/self/status", O_RDONLY);
    ssize_t got = fd < 0 ? 0 : read(fd, text, sizeof text - 1);
    if (fd >= 0)
        close(fd);
    const char *line = got > 0 ? std::strstr(text, "\nThreads:") : nullptr;
    return line == nullptr ? 0 : std::atoi(line + 9);
}

// Lets this process start at most `more` threads from now on: RLIMIT_NPROC counts the tasks of
// a user, and root is exempt, so the child becomes a user that runs nothing else (one per child:
// two cases running at once under ctest -j must not share a count).
void limit_threads(int more) {
    const uid_t unused_uid = static_cast<uid_t>(200000 + getpid());
    rlimit limit{};
    getrlimit(RLIMIT_NPROC, &limit);
    limit.rlim_cur = static_cast<rlim_t>(thread_count() + more);
    CHILD_CHECK(setrlimit(RLIMIT_NPROC, &limit) == 0, "setrlimit(RLIMIT_NPROC) failed");
    CHILD_CHECK(setresgid(unused_uid, unused_uid, unused_uid) == 0 &&
                    setresuid(unused_uid, unused_uid, unused_uid) == 0,
                "cannot switch to uid %d", static_cast<int>(unused_uid));
    prctl(PR_SET_DUMPABLE, 1); // keep /proc/self readable as before
}

void lift_thread_limit() {
    rlimit limit{};
    getrlimit(RLIMIT_NPROC, &limit);
    limit.rlim_cur = limit.rlim_max;
    CHILD_CHECK(setrlimit(RLIMIT_NPROC, &limit) == 0, "lifting RLIMIT_NPROC failed");
}

// With part of its threads refused, the runtime runs with those it got: at least one channel and
// one executor, fewer than asked for, and copies and host items work.
constexpr size_t kBigCopyBytes = 8u << 20;
unsigned char *g_big_src = nullptr;
unsigned char *g_big_dst = nullptr;

// The buffers of the thread-limit cases, allocated before the limit (threads may take all the
// address space there is).
void allocate_buffers() {
    g_src = static_cast<unsigned char *>(std::malloc(kCopyBytes));
    g_dst = static_cast<unsigned char *>(std::malloc(kCopyBytes));
    g_big_src = static_cast<unsigned char *>(std::malloc(kBigCopyBytes));
    g_big_dst = static_cast<unsigned char *>(std::calloc(kBigCopyBytes, 1));
    CHILD_CHECK(g_src && g_dst && g_big_src && g_big_dst, "no memory for the buffers");
    fill_pattern(g_src, kCopyBytes, 12);
    fill_pattern(g_big_src, kBigCopyBytes, 13);
}

// The stack std::thread gives a new thread (glibc: ulimit -s at process start). Address-space
// caps are counted in these, so the cases mean the same under any ulimit -s.
size_t thread_stack_bytes() {
    pthread_attr_t attr;
    size_t bytes = 0;
    if (pthread_getattr_default_np(&attr) == 0) {
        pthread_attr_getstacksize(&attr, &bytes);
        pthread_attr_destroy(&attr);
    }
    CHILD_CHECK(bytes != 0, "cannot read the default thread stack size");
    return bytes;
}

// Room for about 16 runtime threads besides what start-up allocates: fewer than either case asks for.
size_t room_for_some_threads() {
    return 16 * thread_stack_bytes() + (32u << 20);
}

void expect_partial_start(int wanted_channels, int wanted_executors) {
    kuplx_engine_info_t info{};
    CHILD_CHECK(kuplx_get_engine_info(&info) == KUPL_OK, "the runtime did not start at all");
    // The runtime leaves room: its threads did not take the address space up to the limit.
    void *room = std::malloc(thread_stack_bytes() / 2);
    CHILD_CHECK(room != nullptr, "no room left for half a thread stack after start-up");
    std::free(room);
    CHILD_CHECK(info.num_channels >= 1 && info.num_executors >= 1, "%d channels and %d executors",
                info.num_channels, info.num_executors);
    CHILD_CHECK(info.num_channels < wanted_channels || info.num_executors < wanted_executors,
                "every thread started (%d channels, %d executors): the limit did not bite", info.num_channels,
                info.num_executors);
    expect_runtime_works("with the threads that started");
    // A large copy is cut into pieces for every channel there is.
    CHILD_CHECK(kupl_memcpy(g_big_dst, g_big_src, kBigCopyBytes) == KUPL_OK &&
                    std::memcmp(g_big_dst, g_big_src, kBigCopyBytes) == 0,
                "8 MiB copy");
}

// Not one thread can start: every call fails cleanly, and once threads are allowed again the
// runtime starts on the next call.
template <typename Lift> void expect_no_start(Lift lift) {
    CHILD_CHECK(kupl_queue_create() == nullptr, "kupl_queue_create succeeded without threads");
    CHILD_CHECK(kupl_event_create() == nullptr, "kupl_event_create succeeded without threads");
    char a[64] = {1}, b[64] = {};
    CHILD_CHECK(kupl_memcpy(b, a, sizeof a) == KUPL_ERROR, "kupl_memcpy succeeded without threads");
    CHILD_CHECK(kupl_memcpy_async(b, a, sizeof a, nullptr, nullptr) == KUPL_ERROR,
                "async copy without threads");
    lift();
    expect_runtime_works("once threads are allowed again");
}

// ---- The parent side -----------------------------------------------------------------------

struct ChildOutcome {
    int status = 0;
    std::string report; // the child's verdict
    std::string stderr_text;
};

std::string read_all(int fd) {
    std::string text;
    char buffer[4096];
    ssize_t got;
    while ((got = read(fd, buffer, sizeof buffer)) > 0)
        text.append(buffer, static_cast<size_t>(got));
    close(fd);
    return text;
}

// Runs child() in a forked child with its stderr captured.
ChildOutcome run_child(void (*child)()) {
    ChildOutcome outcome;
    int report[2], errors[2];
    if (pipe(report) != 0 || pipe(errors) != 0) {
        outcome.report = "pipe failed";
        return outcome;
    }
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        close(report[0]);
        close(errors[0]);
        dup2(errors[1], STDERR_FILENO);
        close(errors[1]);
        g_report_fd = report[1];
        alarm(60);
        try {
            child();
        } catch (...) {
            // Never run on into the parent's test program (gtest would catch it and go on).
            child_fail(0, "a C++ exception escaped from the library");
        }
        _exit(100); // child() ends the process itself
    }
    close(report[1]);
    close(errors[1]);
    outcome.report = read_all(report[0]); // the child's stderr is a few lines: it fits the pipe
    outcome.stderr_text = read_all(errors[0]);
    waitpid(pid, &outcome.status, 0);
    return outcome;
}

// The child must end normally, with exit code 0 and the verdict "ok".
void expect_ok(const ChildOutcome &outcome) {
    if (WIFSIGNALED(outcome.status)) {
        ADD_FAILURE() << "child died of signal " << WTERMSIG(outcome.status)
                      << (WTERMSIG(outcome.status) == SIGALRM   ? " (it hung)"
                          : WTERMSIG(outcome.status) == SIGABRT ? " (abort: an uncaught exception?)"
                                                                : "")
                      << "; its stderr: " << outcome.stderr_text;
        return;
    }
    EXPECT_EQ(WEXITSTATUS(outcome.status), 0) << "stderr: " << outcome.stderr_text;
    EXPECT_EQ(outcome.report, "ok") << "stderr: " << outcome.stderr_text;
}

// How many lines of `text` contain `needle`.
size_t count_lines(const std::string &text, const char *needle) {
    size_t count = 0, start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos)
            end = text.size();
        if (text.substr(start, end - start).find(needle) != std::string::npos)
            ++count;
        start = end + 1;
    }
    return count;
}

#ifdef KUPL_TEST_SANITIZED
#define SKIP_UNDER_SANITIZERS()                                                                              \
    GTEST_SKIP() << "RLIMIT_AS: the sanitizers reserve terabytes of address space for their shadow memory"
#else
#define SKIP_UNDER_SANITIZERS() (void)0
#endif

TEST(OutOfMemory, EventCreateReturnsNull) {
    SKIP_UNDER_SANITIZERS();
    expect_ok(run_child([] {
        create_until_refused<kupl_event_h>("kupl_event_create", kupl_event_create, kupl_event_destroy);
    }));
}

TEST(OutOfMemory, QueueCreateReturnsNull) {
    SKIP_UNDER_SANITIZERS();
    expect_ok(run_child([] {
        create_until_refused<kupl_queue_h>("kupl_queue_create", kupl_queue_create, kupl_queue_destroy);
    }));
}

TEST(OutOfMemory, MemcpyAsyncReturnsErrorAndEveryEventSettles) {
    SKIP_UNDER_SANITIZERS();
    expect_ok(run_child([] { submit_until_refused("kupl_memcpy_async", CopyCall{}); }));
}

TEST(OutOfMemory, Memcpy2dAsyncReturnsErrorAndEveryEventSettles) {
    SKIP_UNDER_SANITIZERS();
    expect_ok(run_child([] { submit_until_refused("kupl_memcpy2d_async", Copy2dCall{}); }));
}

TEST(OutOfMemory, EventRecordReturnsErrorAndEveryEventSettles) {
    SKIP_UNDER_SANITIZERS();
    expect_ok(run_child([] { submit_until_refused("kupl_event_record", RecordCall{}); }));
}

TEST(OutOfMemory, QueueSubmitReturnsError) {
    SKIP_UNDER_SANITIZERS();
    expect_ok(run_child([] { submit_until_refused("kupl_queue_submit", SubmitCall{}); }));
}

TEST(OutOfMemory, WaitEventAsyncReturnsError) {
    SKIP_UNDER_SANITIZERS();
    expect_ok(run_child([] { submit_until_refused("kuplx_queue_wait_event_async", WaitEventCall{}); }));
}

TEST(OutOfMemory, AThreadWhoseFirstCallComesAfterMemoryRanOutGetsErrorsNotAnAbort) {
    SKIP_UNDER_SANITIZERS();
    expect_ok(run_child(first_call_after_memory_ran_out));
}

} // namespace

namespace {

bool is_root() {
    return geteuid() == 0;
}

#define SKIP_UNLESS_ROOT()                                                                                   \
    if (!is_root())                                                                                          \
    GTEST_SKIP() << "RLIMIT_NPROC does not bind root, and only root can switch to an unused uid"

// The lines the runtime prints on stderr about threads.
constexpr const char *kPartialLine = "the system refused some threads";
constexpr const char *kNoStartLine = "the runtime could not start";

TEST(ThreadLimit, AddressSpaceRefusesSomeChannels) {
    SKIP_UNDER_SANITIZERS();
    // ulimit -v with 64 channels: stacks for all of them do not fit.
    const ChildOutcome outcome = run_child([] {
        setenv("KUPL_NUM_CHANNELS", "64", 1);
        allocate_buffers();
        cap_address_space(room_for_some_threads());
        expect_partial_start(64, 1 << 30);
        child_ok();
    });
    expect_ok(outcome);
    EXPECT_EQ(count_lines(outcome.stderr_text, kPartialLine), 1u) << outcome.stderr_text;
    EXPECT_EQ(std::count(outcome.stderr_text.begin(), outcome.stderr_text.end(), '\n'), 1)
        << "one line only: " << outcome.stderr_text;
}

TEST(ThreadLimit, AddressSpaceRefusesSomeExecutors) {
    SKIP_UNDER_SANITIZERS();
    const ChildOutcome outcome = run_child([] {
        setenv("KUPL_NUM_EXECUTORS", "64", 1);
        setenv("KUPL_NUM_CHANNELS", "64", 1);
        allocate_buffers();
        cap_address_space(room_for_some_threads());
        expect_partial_start(64, 64);
        child_ok();
    });
    expect_ok(outcome);
    EXPECT_EQ(count_lines(outcome.stderr_text, kPartialLine), 1u) << outcome.stderr_text;
}

TEST(ThreadLimit, AddressSpaceForNoThreadFailsCleanly) {
    SKIP_UNDER_SANITIZERS();
    const ChildOutcome outcome = run_child([] {
        allocate_buffers();
        cap_address_space(thread_stack_bytes() / 4); // not even one thread stack
        expect_no_start(lift_address_space_cap);
        child_ok();
    });
    expect_ok(outcome);
    EXPECT_EQ(count_lines(outcome.stderr_text, kNoStartLine), 1u) << "said once: " << outcome.stderr_text;
}

TEST(ThreadLimit, ProcessLimitRefusesSomeChannels) {
    SKIP_UNLESS_ROOT();
    // ulimit -u with an absurd channel count: capped, then started as far as the limit allows.
    const ChildOutcome outcome = run_child([] {
        setenv("KUPL_NUM_CHANNELS", "100000", 1);
        setenv("KUPL_NUM_EXECUTORS", "8", 1);
        allocate_buffers();
        limit_threads(4);
        expect_partial_start(1024, 8);
        child_ok();
    });
    expect_ok(outcome);
    EXPECT_EQ(count_lines(outcome.stderr_text, "KUPL_NUM_CHANNELS=100000"), 1u) << outcome.stderr_text;
    EXPECT_EQ(count_lines(outcome.stderr_text, kPartialLine), 1u) << outcome.stderr_text;
}

TEST(ThreadLimit, ProcessLimitForNoThreadFailsCleanly) {
    SKIP_UNLESS_ROOT();
    const ChildOutcome outcome = run_child([] {
        allocate_buffers();
        limit_threads(0);
        expect_no_start(lift_thread_limit);
        child_ok();
    });
    expect_ok(outcome);
    EXPECT_EQ(count_lines(outcome.stderr_text, kNoStartLine), 1u) << "said once: " << outcome.stderr_text;
}

} // namespace
