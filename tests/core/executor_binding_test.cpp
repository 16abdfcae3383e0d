// The runtime's threads run on the process's allowed cpus, not on the narrower binding of the
// application thread that happens to start the runtime (an OpenMP master thread bound to one core
// under OMP_PROC_BIND): the placement plan reads the process's cpubind (the union over its
// threads) and the runtime starts its threads there. Its own binary: the runtime must not have
// started before the test binds its thread.
#include "test_support.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace {

using namespace kupl_test;

std::string list(const cpu_set_t &set) {
    std::string out;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set))
            out += (out.empty() ? "" : ",") + std::to_string(cpu);
    return out;
}

TEST(Placement, ExecutorsAndChannelsRunOnTheProcessCpusNotTheStartingThreads) {
    cpu_set_t process;
    ASSERT_EQ(sched_getaffinity(0, sizeof process, &process), 0);
    if (CPU_COUNT(&process) < 2)
        GTEST_SKIP() << "needs a process allowed on two cpus at least";
    // Another thread keeps the process's full set while this one binds itself to one cpu.
    std::mutex mutex;
    std::condition_variable changed;
    bool done = false;
    std::thread keeper([&] {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return done; });
    });
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &process)) {
            CPU_SET(cpu, &one);
            break;
        }
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);

    // The first KUPL call starts the runtime from this one-cpu thread.
    Queue q = make_queue();
    ASSERT_NE(q, nullptr);
    cpu_set_t executor;
    CPU_ZERO(&executor);
    ASSERT_EQ(submit_fn(q.get(), [&executor] { sched_getaffinity(0, sizeof executor, &executor); }), KUPL_OK);
    ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
    EXPECT_EQ(list(executor), list(process)) << "an executor inherited the starting thread's cpus";
    cpu_set_t mine;
    ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
    EXPECT_EQ(list(mine), list(one)) << "the starting thread did not get its own binding back";

    // The channels (this machine: one node) are bound to the node's allowed cpus.
    kuplx_engine_info_t info;
    ASSERT_EQ(kuplx_get_engine_info(&info), KUPL_OK);
    ASSERT_GE(info.num_channels, 1);
    char where[128];
    ASSERT_EQ(kuplx_get_channel_placement(0, where, sizeof where), KUPL_OK);
    if (info.num_numa_nodes == 1) {
        EXPECT_NE(std::string(where).find("numa 0 (cpus "), std::string::npos) << where;
    }
    {
        std::lock_guard<std::mutex> lock(mutex);
        done = true;
    }
    changed.notify_all();
    keeper.join();
}

} // namespace
