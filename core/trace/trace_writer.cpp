// libkupl_trace: the trace file, the per-thread buffers, the clock and the tracks (kupl_trace.h).
//
// Each thread formats its events into a ring of fixed-size text slots that only it writes; the
// file side (a flush, under one mutex) copies committed slots out and advances the ring's tail.
// So emitting takes no lock; a thread whose ring is full flushes it itself, once per ring.
// The file is written with write(2), never stdio: a child after fork() must not inherit and
// re-emit half-written stdio buffers.
#include "kupl_trace.h"

#include "support/env_config.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>

extern "C" {
KUPL_TRACE_API int kupl_trace_state = 0;
}

namespace {

constexpr std::size_t kSlotBytes = 512; // one formatted event; longer args are cut (see format_event)
constexpr unsigned kMaxIndexedThreads = 63;

struct ThreadBuffer {
    std::atomic<std::uint64_t> head{0}; // slots committed; written by the owner only
    std::atomic<std::uint64_t> tail{0}; // slots written out; written under file_mutex only
    std::atomic<bool> in_use{true};
    std::size_t slots = 0;
    char *text = nullptr; // slots * kSlotBytes
    ThreadBuffer *next = nullptr;
};

// Placement storage: a child after fork() re-creates the mutex instead of inheriting its state.
alignas(std::mutex) unsigned char file_mutex_storage[sizeof(std::mutex)];
std::mutex *file_mutex = new (file_mutex_storage) std::mutex;
int file_fd = -1;                             // guarded by file_mutex
std::string file_path;                        // guarded by file_mutex
std::string path_template;                    // KUPL_TRACE, set once at load
std::atomic<ThreadBuffer *> buffers{nullptr}; // every buffer ever made (a push-only list)
std::atomic<std::uint64_t> generation{1};     // bumped in a forked child: old buffers are dropped
std::atomic<std::uint64_t> dropped{0};        // events that found no room
std::atomic<std::uint64_t> next_track{0};
std::atomic<std::uint64_t> next_id{0};
std::atomic<unsigned> next_index{0};
std::atomic<std::uint64_t> index_tids[kMaxIndexedThreads + 1];
std::size_t slots_per_thread = 2048; // from KUPL_TRACE_BUFFER
int process_id = 0;

bool enabled() {
    return kupl_trace_on() != 0;
}

std::uint64_t linux_tid() {
    return static_cast<std::uint64_t>(syscall(SYS_gettid));
}

// The calling thread's buffer, made (or taken over from an exited thread) on first use.
// Trivially destructible: for a thread_local with a destructor glibc allocates at the thread's
// first use and aborts the process when it cannot. A pthread key's destructor gives the buffer
// back when the thread exits; a thread that could not set the key, and the main thread (no key
// destructor runs for it), keep theirs, written out when the process ends (Lifetime).
struct ThreadState {
    ThreadBuffer *buffer = nullptr;
    std::uint64_t generation = 0;
    std::uint64_t tid = 0;
    unsigned index = ~0u;
};
static_assert(std::is_trivially_destructible_v<ThreadState>, "see ThreadState");
thread_local ThreadState self;

void give_back_buffer(void *state);

// Null if no key could be made (all taken): then no thread gives its buffer back at exit.
const pthread_key_t *buffer_key() {
    static pthread_key_t key;
    static const bool made = pthread_key_create(&key, give_back_buffer) == 0;
    return made ? &key : nullptr;
}

std::uint64_t my_tid() {
    if (self.tid == 0 || self.generation != generation.load(std::memory_order_acquire))
        self.tid = linux_tid();
    return self.tid;
}

// Makes b this thread's buffer, given back when the thread exits.
ThreadBuffer *take_buffer(ThreadBuffer *b) {
    self.buffer = b;
    if (const pthread_key_t *key = buffer_key())
        pthread_setspecific(*key, &self); // without memory for it: b is written out at the end
    return b;
}

ThreadBuffer *my_buffer() {
    const std::uint64_t current = generation.load(std::memory_order_acquire);
    if (self.buffer != nullptr && self.generation == current)
        return self.buffer;
    self.buffer = nullptr;
    self.generation = current;
    self.tid = linux_tid();
    // A buffer an exited thread left (it flushed it when it ended) is taken over first.
    for (ThreadBuffer *b = buffers.load(std::memory_order_acquire); b != nullptr; b = b->next) {
        bool free = false;
        if (b->in_use.compare_exchange_strong(free, true, std::memory_order_acq_rel))
            return take_buffer(b);
    }
    auto *b = new (std::nothrow) ThreadBuffer;
    char *text = b != nullptr ? new (std::nothrow) char[slots_per_thread * kSlotBytes] : nullptr;
    if (text == nullptr) {
        delete b;
        return nullptr; // no memory: this event is dropped, the next call tries again
    }
    b->slots = slots_per_thread;
    b->text = text;
    ThreadBuffer *first = buffers.load(std::memory_order_relaxed);
    do
        b->next = first;
    while (!buffers.compare_exchange_weak(first, b, std::memory_order_acq_rel));
    return take_buffer(b);
}

void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
void say(const char *format, ...) {
    if (!kupl::env::warnings_enabled())
        return;
    char line[700];
    va_list args;
    va_start(args, format);
    std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    std::fprintf(stderr, "kupl: %s\n", line);
}

// Writes all of [data, data + size) or stops tracing, said once. Under file_mutex.
void write_out(const char *data, std::size_t size) {
    while (size > 0 && file_fd >= 0) {
        const ssize_t n = ::write(file_fd, data, size);
        if (n > 0) {
            data += n;
            size -= static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        const int error = n < 0 ? errno : EIO;
        __atomic_store_n(&kupl_trace_state, 0, __ATOMIC_RELAXED);
        say("cannot write the trace to %s (KUPL_TRACE): %s; tracing stops here", file_path.c_str(),
            std::strerror(error));
        ::close(file_fd);
        file_fd = -1;
    }
}

// Writes the committed slots of b. Under file_mutex.
void flush_locked(ThreadBuffer *b) {
    static char chunk[64 * 1024]; // under file_mutex
    std::size_t used = 0;
    const std::uint64_t tail = b->tail.load(std::memory_order_relaxed);
    const std::uint64_t head = b->head.load(std::memory_order_acquire);
    for (std::uint64_t i = tail; i < head; ++i) {
        const char *slot = b->text + (i % b->slots) * kSlotBytes;
        const std::size_t length = strnlen(slot, kSlotBytes);
        if (used + length > sizeof chunk) {
            write_out(chunk, used);
            used = 0;
        }
        std::memcpy(chunk + used, slot, length);
        used += length;
    }
    if (used > 0)
        write_out(chunk, used);
    b->tail.store(head, std::memory_order_release);
}

// The key's destructor: the thread ends, its events go out and its buffer is free for a thread
// that starts later. An event the thread emits after it takes a buffer (and sets the key) again.
void give_back_buffer(void *state) {
    auto &mine = *static_cast<ThreadState *>(state);
    if (mine.buffer == nullptr || mine.generation != generation.load(std::memory_order_acquire))
        return;
    {
        std::lock_guard<std::mutex> lock(*file_mutex);
        flush_locked(mine.buffer);
    }
    mine.buffer->in_use.store(false, std::memory_order_release);
    mine.buffer = nullptr;
}

// Appends to a slot, never past its end; `fits` turns false once something did not fit.
struct Appender {
    char *out;
    std::size_t size;
    std::size_t used = 0;
    bool fits = true;
    void add(const char *format, ...) __attribute__((format(printf, 2, 3))) {
        if (!fits)
            return;
        va_list args;
        va_start(args, format);
        const int n = std::vsnprintf(out + used, size - used, format, args);
        va_end(args);
        if (n < 0 || static_cast<std::size_t>(n) >= size - used) {
            fits = false;
            out[used] = '\0';
            return;
        }
        used += static_cast<std::size_t>(n);
    }
};

struct Fields {
    char phase;
    const char *category;
    const char *name;
    std::uint64_t track;
    std::uint64_t ts_ns;
    std::uint64_t dur_ns = 0;
    bool has_dur = false;
    std::uint64_t id = 0;
    bool has_id = false;
    bool bind_enclosing = false;
    const char *args = nullptr;
};

// Formats one event into the calling thread's buffer. Never blocks but to flush its own full ring.
void emit(const Fields &f) {
    if (!enabled())
        return;
    ThreadBuffer *b = my_buffer();
    if (b == nullptr) {
        dropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    const std::uint64_t head = b->head.load(std::memory_order_relaxed);
    if (head - b->tail.load(std::memory_order_acquire) >= b->slots) {
        std::lock_guard<std::mutex> lock(*file_mutex);
        flush_locked(b);
        if (head - b->tail.load(std::memory_order_acquire) >= b->slots) {
            dropped.fetch_add(1, std::memory_order_relaxed);
            return;
        }
    }
    char *slot = b->text + (head % b->slots) * kSlotBytes;
    char name[160];
    kupl_trace_escape(name, sizeof name, f.name != nullptr ? f.name : "");
    const std::uint64_t track = f.track != 0 ? f.track : my_tid();
    // The end "},\n" (3 bytes) is always kept free.
    Appender a{slot, kSlotBytes - 3};
    a.add("{\"ph\":\"%c\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%llu,\"ts\":%llu.%03u", f.phase,
          f.category, name, process_id, static_cast<unsigned long long>(track),
          static_cast<unsigned long long>(f.ts_ns / 1000), static_cast<unsigned>(f.ts_ns % 1000));
    if (f.has_dur)
        a.add(",\"dur\":%llu.%03u", static_cast<unsigned long long>(f.dur_ns / 1000),
              static_cast<unsigned>(f.dur_ns % 1000));
    if (f.has_id)
        a.add(",\"id\":%llu", static_cast<unsigned long long>(f.id));
    if (f.bind_enclosing)
        a.add(",\"bp\":\"e\"");
    if (f.phase == 'i')
        a.add(",\"s\":\"t\"");
    if (!a.fits) { // only a malformed category could do this: the event is not written
        dropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    if (f.args != nullptr && *f.args != '\0') {
        const std::size_t before = a.used;
        a.add(",\"args\":{%s}", f.args);
        if (!a.fits) { // too long for a slot: said instead of cut mid-JSON
            a.used = before;
            a.fits = true;
            a.add(",\"args\":{\"truncated\":true}");
        }
    }
    std::memcpy(slot + a.used, "},\n", 4);
    b->head.store(head + 1, std::memory_order_release);
}

void metadata(std::uint64_t track, const char *what, const char *args) {
    Fields f{'M', "__metadata", what, track, 0};
    f.args = args;
    emit(f);
}

// KUPL_TRACE with %p (pid) and %r (MPI rank) expanded; %% is a percent sign.
std::string expand_path(const std::string &pattern) {
    const char *rank = nullptr;
    for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
        if ((rank = kupl::env::value_of(name)) != nullptr)
            break;
    std::string out;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != '%' || i + 1 == pattern.size()) {
            out += pattern[i];
            continue;
        }
        const char c = pattern[++i];
        if (c == 'p')
            out += std::to_string(getpid());
        else if (c == 'r')
            out += rank != nullptr ? rank : "0";
        else if (c == '%')
            out += '%';
        else
            (out += '%') += c;
    }
    return out;
}

std::string program_name() {
    char name[64] = "process";
    if (FILE *comm = std::fopen("/proc/self/comm", "r")) {
        if (std::fgets(name, sizeof name, comm) != nullptr)
            name[strcspn(name, "\n")] = '\0';
        std::fclose(comm);
    }
    return name;
}

// Opens the file and starts tracing; says why not otherwise. Under file_mutex (or at load).
void open_trace() {
    file_path = expand_path(path_template);
    process_id = static_cast<int>(getpid());
    file_fd = ::open(file_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (file_fd < 0) {
        say("cannot write the trace to %s (KUPL_TRACE): %s; tracing is off", file_path.c_str(),
            std::strerror(errno));
        return;
    }
    write_out("[\n", 2);
    __atomic_store_n(&kupl_trace_state, 1, __ATOMIC_RELAXED);
    char args[200], name[128];
    std::snprintf(args, sizeof args, "\"name\":\"%s (pid %d)\"",
                  kupl_trace_escape(name, sizeof name, program_name().c_str()), process_id);
    metadata(1, "process_name", args);
}

void after_fork_in_child() {
    // The parent's buffers and lock mean nothing here; its events are the parent's to write.
    file_mutex = new (file_mutex_storage) std::mutex;
    generation.fetch_add(1, std::memory_order_acq_rel);
    buffers.store(nullptr, std::memory_order_release); // leaked: other threads' memory is gone anyway
    next_index.store(0, std::memory_order_relaxed);
    if (file_fd < 0)
        return;
    ::close(file_fd);
    file_fd = -1;
    __atomic_store_n(&kupl_trace_state, 0, __ATOMIC_RELAXED);
    // Only a name with %p gives the child a file of its own; otherwise it would write into the
    // parent's file, so it does not trace.
    if (path_template.find("%p") != std::string::npos)
        open_trace();
}

// Starts tracing when the library is loaded (before libkupl, which depends on it, starts
// anything) and finishes the file when the process ends (after libkupl's exit drain).
struct Lifetime {
    Lifetime() {
        const char *value = kupl::env::value_of("KUPL_TRACE");
        if (value == nullptr)
            return;
        path_template = value;
        slots_per_thread = kupl::env::read_size("KUPL_TRACE_BUFFER", slots_per_thread * kSlotBytes,
                                                64 * kSlotBytes, std::uint64_t{1} << 30) /
                           kSlotBytes;
        open_trace();
        pthread_atfork(nullptr, nullptr, after_fork_in_child);
    }
    ~Lifetime() {
        if (!enabled())
            return;
        kupl_trace_flush();
        std::lock_guard<std::mutex> lock(*file_mutex);
        __atomic_store_n(&kupl_trace_state, 0, __ATOMIC_RELAXED);
        if (file_fd < 0)
            return;
        // Events emitted from here on (threads still running at exit) are not written.
        for (ThreadBuffer *b = buffers.load(std::memory_order_acquire); b != nullptr; b = b->next)
            flush_locked(b);
        const unsigned long long lost = dropped.load(std::memory_order_relaxed);
        char end[200];
        const int n =
            std::snprintf(end, sizeof end,
                          "{\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":\"kupl_trace_end\",\"pid\":%d,"
                          "\"tid\":1,\"ts\":0,\"args\":{\"dropped_events\":%llu}}\n]\n",
                          process_id, lost);
        write_out(end, static_cast<std::size_t>(n));
        if (file_fd >= 0)
            ::close(file_fd);
        file_fd = -1;
        if (lost != 0)
            say("the trace %s lost %llu events (buffers full or out of memory; KUPL_TRACE_BUFFER)",
                file_path.c_str(), lost);
    }
} lifetime;

} // namespace

extern "C" {

uint64_t kupl_trace_now(void) {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<std::uint64_t>(t.tv_sec) * 1000000000u + static_cast<std::uint64_t>(t.tv_nsec);
}

uint64_t kupl_trace_thread_track(void) {
    return my_tid();
}

unsigned kupl_trace_thread_index(void) {
    if (self.index == ~0u || self.generation != generation.load(std::memory_order_acquire)) {
        my_buffer(); // sets self.generation
        const unsigned index = next_index.fetch_add(1, std::memory_order_relaxed);
        self.index = index < kMaxIndexedThreads ? index : kMaxIndexedThreads;
        if (index < kMaxIndexedThreads)
            index_tids[index].store(my_tid(), std::memory_order_relaxed);
    }
    return self.index;
}

uint64_t kupl_trace_thread_of_index(unsigned index) {
    return index < kMaxIndexedThreads ? index_tids[index].load(std::memory_order_relaxed) : 0;
}

void kupl_trace_name_thread(const char *name, int sort_index) {
    if (!enabled())
        return;
    char args[200], escaped[160];
    std::snprintf(args, sizeof args, "\"name\":\"%s\"", kupl_trace_escape(escaped, sizeof escaped, name));
    metadata(0, "thread_name", args);
    std::snprintf(args, sizeof args, "\"sort_index\":%d", sort_index);
    metadata(0, "thread_sort_index", args);
}

uint64_t kupl_trace_new_track(const char *name, int sort_index) {
    if (!enabled())
        return 0;
    // Above every Linux thread id (at most 2^22), so never a real thread's.
    const std::uint64_t track = (std::uint64_t{1} << 30) + next_track.fetch_add(1, std::memory_order_relaxed);
    char args[200], escaped[160];
    std::snprintf(args, sizeof args, "\"name\":\"%s\"", kupl_trace_escape(escaped, sizeof escaped, name));
    metadata(track, "thread_name", args);
    std::snprintf(args, sizeof args, "\"sort_index\":%d", sort_index);
    metadata(track, "thread_sort_index", args);
    return track;
}

void kupl_trace_name_process(const char *name) {
    if (!enabled())
        return;
    char args[200], escaped[160];
    std::snprintf(args, sizeof args, "\"name\":\"%s\"", kupl_trace_escape(escaped, sizeof escaped, name));
    metadata(1, "process_name", args);
}

void kupl_trace_slice(uint64_t track, const char *category, const char *name, uint64_t start_ns,
                      uint64_t end_ns, const char *args) {
    Fields f{'X', category, name, track, start_ns};
    f.dur_ns = end_ns > start_ns ? end_ns - start_ns : 0;
    f.has_dur = true;
    f.args = args;
    emit(f);
}

void kupl_trace_instant(uint64_t track, const char *category, const char *name, uint64_t ts_ns,
                        const char *args) {
    Fields f{'i', category, name, track, ts_ns};
    f.args = args;
    emit(f);
}

uint64_t kupl_trace_new_id(void) {
    return next_id.fetch_add(1, std::memory_order_relaxed) + 1;
}

void kupl_trace_flow_start(const char *category, const char *name, uint64_t id, uint64_t track,
                           uint64_t ts_ns) {
    Fields f{'s', category, name, track, ts_ns};
    f.id = id;
    f.has_id = true;
    emit(f);
}

void kupl_trace_flow_end(const char *category, const char *name, uint64_t id, uint64_t track,
                         uint64_t ts_ns) {
    Fields f{'f', category, name, track, ts_ns};
    f.id = id;
    f.has_id = true;
    f.bind_enclosing = true;
    emit(f);
}

void kupl_trace_flow(const char *category, const char *name, uint64_t from_track, uint64_t from_ns,
                     uint64_t to_track, uint64_t to_ns) {
    if (!enabled())
        return;
    const std::uint64_t id = kupl_trace_new_id();
    kupl_trace_flow_start(category, name, id, from_track, from_ns);
    kupl_trace_flow_end(category, name, id, to_track, to_ns);
}

void kupl_trace_async_begin(const char *category, const char *name, uint64_t id, uint64_t ts_ns,
                            const char *args) {
    Fields f{'b', category, name, 0, ts_ns};
    f.id = id;
    f.has_id = true;
    f.args = args;
    emit(f);
}

void kupl_trace_async_end(const char *category, const char *name, uint64_t id, uint64_t ts_ns,
                          const char *args) {
    Fields f{'e', category, name, 0, ts_ns};
    f.id = id;
    f.has_id = true;
    f.args = args;
    emit(f);
}

void kupl_trace_flush(void) {
    if (!enabled())
        return;
    std::lock_guard<std::mutex> lock(*file_mutex);
    for (ThreadBuffer *b = buffers.load(std::memory_order_acquire); b != nullptr; b = b->next)
        flush_locked(b);
}

char *kupl_trace_escape(char *out, size_t size, const char *text) {
    if (size == 0)
        return out;
    std::size_t used = 0;
    for (const unsigned char *p = reinterpret_cast<const unsigned char *>(text != nullptr ? text : "");
         *p != '\0'; ++p) {
        char piece[8];
        std::size_t n;
        if (*p == '"' || *p == '\\') {
            piece[0] = '\\';
            piece[1] = static_cast<char>(*p);
            n = 2;
        } else if (*p < 0x20) {
            n = static_cast<std::size_t>(std::snprintf(piece, sizeof piece, "\\u%04x", *p));
        } else {
            piece[0] = static_cast<char>(*p);
            n = 1;
        }
        if (used + n >= size) {
            // Cut at a character boundary: a partial UTF-8 sequence would make the file invalid.
            while (used > 0 && (static_cast<unsigned char>(out[used - 1]) & 0xC0) == 0x80)
                --used;
            if (used > 0 && (static_cast<unsigned char>(out[used - 1]) & 0xC0) == 0xC0)
                --used;
            break;
        }
        std::memcpy(out + used, piece, n);
        used += n;
    }
    out[used] = '\0';
    return out;
}

} // extern "C"
