// Process exit: work submitted and never waited for still completes before the process ends
// (nothing submitted is lost), and a host item may itself end the process with exit() without
// a hang or an abort. Each case runs in a forked child of a parent that never starts the
// runtime (so the fork is safe under ThreadSanitizer too); alarm() turns a hang into a failure.
#include "test_support.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

using namespace kupl_test;

namespace {

/// Runs child(write_fd) in a child process, returns its wait status; the child's writes to the
/// pipe are returned in `heard`.
int run_child(void (*child)(int), std::string *heard) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0)
        return -1;
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(pipe_fds[0]);
        alarm(20);
        child(pipe_fds[1]);
        _exit(100); // child() must end the process itself
    }
    close(pipe_fds[1]);
    char buffer[256];
    ssize_t got;
    while ((got = read(pipe_fds[0], buffer, sizeof buffer)) > 0)
        heard->append(buffer, static_cast<size_t>(got));
    close(pipe_fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

// The buffers of the copy in flight at exit: never freed (the program's own static objects are
// destroyed before the library drains), and reachable, for LeakSanitizer.
std::vector<unsigned char> *g_src = nullptr;
std::vector<unsigned char> *g_dst = nullptr;

void write_text(int fd, const char *text) {
    ssize_t ignored = write(fd, text, strlen(text));
    (void)ignored;
}

// Submits a slow host item and a copy behind it, then exits without waiting.
void exit_with_work_in_flight(int fd) {
    g_src = new std::vector<unsigned char>(pattern(8u << 20, 3));
    g_dst = new std::vector<unsigned char>(g_src->size(), 0);
    kupl_queue_h queue = kupl_queue_create();
    submit_fn(queue, [fd] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        write_text(fd, "item ran;");
    });
    kupl_memcpy_async(g_dst->data(), g_src->data(), g_dst->size(), queue, nullptr);
    submit_fn(queue, [fd] { write_text(fd, *g_dst == *g_src ? "copy landed;" : "copy wrong;"); });
    std::exit(0);
}

// A host item ends the process while another queue still has work.
void host_item_calls_exit(int fd) {
    kupl_queue_h busy = kupl_queue_create();
    submit_fn(busy, [fd] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        write_text(fd, "other item ran;");
    });
    kupl_queue_h queue = kupl_queue_create();
    submit_fn(queue, [] { std::exit(7); });
    kupl_queue_wait(queue); // never returns: the process ends inside the item
    _exit(101);
}

// Set by an atexit handler of the child: registered after libkupl's exit hook, it runs before
// the drain, on the thread calling exit().
std::atomic<bool> g_exit_started{false};
std::atomic<bool> g_main_done{false};
void note_exit_started() {
    g_exit_started.store(true);
}

/// Sleeps in short steps until flag is set or `limit` passes; true if it was set.
bool wait_for_flag(const std::atomic<bool> &flag, std::chrono::seconds limit = std::chrono::seconds(10)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!flag.load()) {
        if (std::chrono::steady_clock::now() > end)
            return false;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
}

// Issue 9: while a host item's exit() drains, other threads still call in. The exit drain waits
// for `busy`'s item, which waits until the main thread — started by the atexit handler — has
// copied and waited on a queue of its own: its calls land inside the drain every time, and must
// be served. Then it waits on the queue whose item is exiting: that wait never returns.
void calls_during_the_exit_drain(int fd) {
    g_src = new std::vector<unsigned char>(pattern(1u << 20, 5));
    g_dst = new std::vector<unsigned char>(g_src->size(), 0);
    std::atexit(note_exit_started);
    kupl_queue_h busy = kupl_queue_create();
    kupl_queue_h queue = kupl_queue_create();
    kupl_queue_h other = kupl_queue_create();
    std::atomic<bool> busy_entered{false};
    submit_fn(busy, [fd, &busy_entered] {
        busy_entered.store(true);
        write_text(fd, wait_for_flag(g_main_done) ? "busy item saw main;" : "busy item timed out;");
    });
    submit_fn(queue, [&busy_entered] {
        wait_for_flag(busy_entered);
        std::exit(7);
    });
    if (!wait_for_flag(g_exit_started))
        _exit(102);
    const bool copied =
        kupl_memcpy_async(g_dst->data(), g_src->data(), g_dst->size(), other, nullptr) == KUPL_OK &&
        kupl_queue_wait(other) == KUPL_OK && *g_dst == *g_src;
    write_text(fd, copied ? "main copied;" : "main's calls failed;");
    g_main_done.store(true);
    kupl_queue_wait(queue); // never returns: the process ends inside queue's item
    _exit(101);
}

// Issue 10 item 6: an item of q1 calls exit(0) while an item of q2 waits for q1. The exit must
// not wait for q2's item (it can never return); work ordered behind the exiting item never
// runs: an event recorded there fails, and a queue ordered after that event goes on.
void exit_while_an_item_waits_for_the_exiting_queue(int fd) {
    kupl_queue_h q1 = kupl_queue_create();
    kupl_queue_h q2 = kupl_queue_create();
    kupl_queue_h q3 = kupl_queue_create();
    kupl_event_h behind = kupl_event_create();
    std::atomic<bool> exiting_item_runs{false};
    std::atomic<bool> waiting{false};
    submit_fn(q2, [fd, q1, &exiting_item_runs, &waiting] {
        wait_for_flag(exiting_item_runs); // so the wait below covers it
        waiting.store(true);
        kupl_queue_wait(q1);
        write_text(fd, "q2's wait returned;"); // never: q1's item ends the process
    });
    submit_fn(q1, [&exiting_item_runs, &waiting] {
        exiting_item_runs.store(true);
        wait_for_flag(waiting);
        std::this_thread::sleep_for(std::chrono::milliseconds(20)); // q2's item is inside its wait
        std::exit(0);
    });
    submit_fn(q1, [fd] { write_text(fd, "item behind exit ran;"); });
    kupl_event_record(behind, q1);
    kuplx_queue_wait_event_async(q3, behind);
    submit_fn(q3, [fd] {
        wait_for_flag(g_main_done);
        write_text(fd, "q3 went on;");
    });
    const int rc = kupl_event_wait(behind);
    write_text(fd, rc == KUPL_ERROR ? "event failed;" : "event completed;");
    g_main_done.store(true);
    for (;;)
        pause(); // the process ends in q1's item
}

// Issue 10 item 6: an item still running when main returns may submit and wait; its work is
// drained too.
void item_submits_after_main_returns(int fd) {
    g_src = new std::vector<unsigned char>(pattern(4u << 20, 9));
    g_dst = new std::vector<unsigned char>(g_src->size(), 0);
    kupl_queue_h queue = kupl_queue_create();
    submit_fn(queue, [fd] {
        wait_for_flag(g_exit_started);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        kupl_queue_h copies = kupl_queue_create();
        if (copies == nullptr ||
            kupl_memcpy_async(g_dst->data(), g_src->data(), g_dst->size(), copies, nullptr) != KUPL_OK)
            write_text(fd, "submit failed;");
        else if (kupl_queue_wait(copies) != KUPL_OK)
            write_text(fd, "wait failed;");
        else
            write_text(fd, *g_dst == *g_src ? "copy landed;" : "copy wrong;");
        submit_fn(copies, [fd] { write_text(fd, "nested item ran;"); }); // never waited for
    });
    std::atexit(note_exit_started);
    std::exit(0); // as when main returns
}

// Issue 10 item 5: an item of the synchronous queue runs on the submitting thread, here main,
// and may end the process.
void sync_queue_item_calls_exit(int fd) {
    kupl_queue_h busy = kupl_queue_create();
    submit_fn(busy, [fd] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        write_text(fd, "other item ran;");
    });
    submit_fn(kupl_queue_acquire(KUPL_ASYNC_SYNC), [] { std::exit(7); });
    _exit(101);
}

/// Runs child() in a child process; it must end by itself with exit code `code` (not hang, not
/// crash), having written exactly `expected` to the pipe.
void expect_child_exit(void (*child)(int), int code, const std::string &expected) {
    std::string heard;
    const int status = run_child(child, &heard);
    ASSERT_TRUE(WIFEXITED(status)) << "child died of signal " << WTERMSIG(status)
                                   << (WTERMSIG(status) == SIGALRM ? " (it hung at exit)" : "");
    EXPECT_EQ(WEXITSTATUS(status), code);
    EXPECT_EQ(heard, expected);
}

TEST(ExitDrain, WorkInFlightAtExitCompletes) {
    expect_child_exit(exit_with_work_in_flight, 0, "item ran;copy landed;");
}

TEST(ExitDrain, HostItemMayCallExit) {
    expect_child_exit(host_item_calls_exit, 7, "other item ran;");
}

} // namespace

TEST(ExitDrain, CallsDuringTheExitDrainAreServed) {
    expect_child_exit(calls_during_the_exit_drain, 7, "main copied;busy item saw main;");
}

TEST(ExitDrain, ExitWhileAnItemWaitsForTheExitingQueue) {
    expect_child_exit(exit_while_an_item_waits_for_the_exiting_queue, 0, "event failed;q3 went on;");
}

TEST(ExitDrain, ItemMaySubmitAndWaitAfterMainReturns) {
    expect_child_exit(item_submits_after_main_returns, 0, "copy landed;nested item ran;");
}

TEST(ExitDrain, SyncQueueItemMayCallExit) {
    expect_child_exit(sync_queue_item_calls_exit, 7, "other item ran;");
}
