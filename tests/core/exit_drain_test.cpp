// Process exit: work submitted and never waited for still completes before the process ends
// (nothing submitted is lost), and a host item may itself end the process with exit() without
// a hang or an abort. Each case runs in a forked child of a parent that never starts the
// runtime (so the fork is safe under ThreadSanitizer too); alarm() turns a hang into a failure.
#include "test_support.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

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
