// Handles are ids that are never reused: not within a process, and not across fork(). A child's
// new runtime used to hand out the same ids as its parent's, so the parent's queue handle named
// the child's own first queue: waiting, recording and destroying through it hit that queue. Now
// every handle from before the fork is KUPL_ERROR in the child (as the README promises), and the
// child's queues are untouched by them. alarm() turns a hang into a failure.
// The fork cases skip under both sanitizers. TSan cannot follow threads created after the fork
// of a parent whose runtime threads run (see fork_test.cpp). gcc 12's ASan allocator takes no
// lock around fork(): a fork while a runtime thread is inside malloc or free (one still starting
// up, say, in pthread_getattr_np) leaves an allocator lock held in the child for good, and the
// child's own threads then hang in their first allocation (seen here 2 runs in 30 under load).
#include "fork_child.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <set>

using namespace kupl_test;

namespace {

// The parent's handles, made before the fork.
struct Inherited {
    kupl_queue_h queue;
    kupl_event_h event; // recorded and complete
};

// Runs child() in a forked child; its exit status is the number of the failed step. Generous
// hang limit: a loaded machine is slow, a hang is not.
::testing::AssertionResult run_child(int (*child)(const Inherited &), const Inherited &inherited) {
    return kupl_test::run_in_child([&] { return child(inherited); }, 60);
}

// In the child: the parent's handles are refused, whatever the child has created since, and
// using them does not touch the child's own queue and event.
int parent_handles_are_invalid(const Inherited &parent) {
    kupl_queue_h own = kupl_queue_create();
    kupl_event_h own_event = kupl_event_create();
    if (own == nullptr || own_event == nullptr)
        return 1;
    if (static_cast<void *>(own) == static_cast<void *>(parent.queue) ||
        static_cast<void *>(own_event) == static_cast<void *>(parent.event))
        return 2; // the child's first handles alias the parent's
    // Hold the child's queue with an item, so anything that reached it would be visible.
    Gate gate(std::chrono::seconds(50)); // opened by the test, long before that
    if (gate.block(own) != KUPL_OK)
        return 3;
    gate.wait_entered();
    std::vector<unsigned char> src(4096, 7), dst(4096, 0);
    if (kupl_queue_wait(parent.queue) != KUPL_ERROR)
        return 4;
    if (kupl_memcpy_async(dst.data(), src.data(), src.size(), parent.queue, nullptr) != KUPL_ERROR)
        return 5;
    if (kupl_event_record(own_event, parent.queue) != KUPL_ERROR)
        return 6;
    if (kupl_event_record(parent.event, own) != KUPL_ERROR)
        return 7;
    if (kupl_event_query(parent.event) != KUPL_ERROR || kupl_event_wait(parent.event) != KUPL_ERROR)
        return 8;
    if (kupl_queue_wait_event(own, parent.event) != KUPL_ERROR)
        return 9;
    kupl_queue_destroy(parent.queue); // must not wait for, or destroy, the child's queue
    kupl_event_destroy(parent.event);
    if (gate.finished())
        return 10; // a destroy through the parent's handle waited for the child's queue
    if (kupl_event_query(own_event) != KUPL_EVENT_STATUS_CREATED)
        return 11;
    gate.open();
    if (kupl_memcpy_async(dst.data(), src.data(), src.size(), own, own_event) != KUPL_OK ||
        kupl_event_wait(own_event) != KUPL_OK || kupl_queue_wait(own) != KUPL_OK || dst != src)
        return 12; // the child's own queue and event still work
    kupl_event_destroy(own_event);
    kupl_queue_destroy(own);
    return 0;
}

// In the grandchild: neither the parent's handles nor the child's are valid.
int grandchild_refuses_both(const Inherited &parent) {
    kupl_queue_h child_queue = kupl_queue_create();
    if (child_queue == nullptr || kupl_queue_wait(child_queue) != KUPL_OK)
        return 20;
    Inherited from_child{child_queue, parent.event};
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        alarm(60); // generous: a loaded machine is slow, a hang is not
        kupl_queue_h own = kupl_queue_create();
        const bool fine = own != nullptr && own != parent.queue && own != from_child.queue &&
                          kupl_queue_wait(parent.queue) == KUPL_ERROR &&
                          kupl_queue_wait(from_child.queue) == KUPL_ERROR && kupl_queue_wait(own) == KUPL_OK;
        _exit(fine ? 0 : 21);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return WIFEXITED(status) ? WEXITSTATUS(status) : 22;
    return kupl_queue_wait(child_queue) == KUPL_OK ? 0 : 23;
}

Inherited make_inherited() {
    Inherited made{kupl_queue_create(), kupl_event_create()};
    EXPECT_NE(made.queue, nullptr);
    EXPECT_NE(made.event, nullptr);
    EXPECT_EQ(kupl_event_record(made.event, made.queue), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(made.event), KUPL_OK);
    // The event completes before its op is freed; the queue counts the op done only after. Fork
    // only then: under ASan (gcc 12) a fork while a runtime thread is inside free() leaves the
    // sanitizer's allocator locked in the child for good.
    EXPECT_EQ(kupl_queue_wait(made.queue), KUPL_OK);
    return made;
}

TEST(ForkHandles, ParentHandlesAreInvalidInTheChild) {
    KUPL_SKIP_MULTITHREADED_FORK_UNDER_SANITIZERS();
    const Inherited parent = make_inherited();
    EXPECT_TRUE(run_child(parent_handles_are_invalid, parent));
    // The parent's own handles are unaffected by what the child did with its copies.
    EXPECT_EQ(kupl_queue_wait(parent.queue), KUPL_OK);
    EXPECT_EQ(kupl_event_query(parent.event), KUPL_EVENT_STATUS_COMPLETE);
    kupl_event_destroy(parent.event);
    kupl_queue_destroy(parent.queue);
}

TEST(ForkHandles, GrandchildRefusesParentAndChildHandles) {
    KUPL_SKIP_MULTITHREADED_FORK_UNDER_SANITIZERS();
    const Inherited parent = make_inherited();
    EXPECT_TRUE(run_child(grandchild_refuses_both, parent));
    kupl_event_destroy(parent.event);
    kupl_queue_destroy(parent.queue);
}

TEST(Handles, NeverReusedWithinAProcess) {
    std::set<void *> seen;
    for (int i = 0; i < scaled(20000); ++i) {
        kupl_queue_h q = kupl_queue_create();
        kupl_event_h e = kupl_event_create();
        ASSERT_NE(q, nullptr);
        ASSERT_NE(e, nullptr);
        ASSERT_TRUE(seen.insert(q).second) << "queue handle reused after " << i << " creations";
        ASSERT_TRUE(seen.insert(e).second) << "event handle reused after " << i << " creations";
        kupl_event_destroy(e);
        kupl_queue_destroy(q);
        ASSERT_EQ(kupl_queue_wait(q), KUPL_ERROR) << "a destroyed handle is still valid";
    }
}

} // namespace
