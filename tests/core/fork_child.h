// Runs a test step in a forked child, for the fork suites: the child's exit status is the
// verdict, and alarm() turns a hang in the child into a failure instead of a ctest timeout.
#ifndef KUPL_TESTS_CORE_FORK_CHILD_H
#define KUPL_TESTS_CORE_FORK_CHILD_H

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>

namespace kupl_test {

// Forks; the child runs `work` and exits with its result: 0 when it passed, else the number of
// the step that failed (`steps` says what the numbers mean, e.g. " (1 create, 2 copy)"). The
// child exits through std::exit, so the library's destructor runs, except under ASan, where
// LeakSanitizer would report the parent's threads' memory as leaked.
inline ::testing::AssertionResult run_in_child(const std::function<int()> &work, unsigned hang_seconds,
                                               const char *steps = "") {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0)
        return ::testing::AssertionFailure() << "fork failed";
    if (pid == 0) {
        alarm(hang_seconds);
        const int step = work();
#ifdef KUPL_TEST_ASAN
        _exit(step);
#else
        std::exit(step);
#endif
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        return ::testing::AssertionFailure() << "waitpid failed";
    if (WIFSIGNALED(status))
        return ::testing::AssertionFailure() << "child died of signal " << WTERMSIG(status)
                                             << (WTERMSIG(status) == SIGALRM ? " (it hung)" : "");
    if (WEXITSTATUS(status) != 0)
        return ::testing::AssertionFailure() << "child failed at step " << WEXITSTATUS(status) << steps;
    return ::testing::AssertionSuccess();
}

} // namespace kupl_test

#endif
