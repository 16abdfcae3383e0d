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

// For tests that fork while runtime threads run: neither sanitizer supports that here. Under
// gcc 12's ASan a fork while another thread is inside the allocator leaves the child deadlocked
// (seen as a hung child in the CI repeat of core.Fork.ChildOfARunningRuntimeCanCopy).
#if defined(KUPL_TEST_TSAN)
#define KUPL_SKIP_MULTITHREADED_FORK_UNDER_SANITIZERS()                                                      \
    GTEST_SKIP() << "TSan cannot follow threads created after a multi-threaded fork"
#elif defined(KUPL_TEST_ASAN)
#define KUPL_SKIP_MULTITHREADED_FORK_UNDER_SANITIZERS()                                                      \
    GTEST_SKIP()                                                                                             \
        << "gcc 12's ASan allocator is not fork-safe: a fork while a runtime thread allocates deadlocks"
#else
#define KUPL_SKIP_MULTITHREADED_FORK_UNDER_SANITIZERS() (void)0
#endif

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
