// Run with KUPL_FAULT_INJECT=1 in the environment (see CMakeLists.txt): the very
// first copy of the process fails, the second succeeds.
#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace kupl_test;

TEST(FaultInjectEnvironment, FirstCopyOfTheProcessFails) {
    ASSERT_STREQ(std::getenv("KUPL_FAULT_INJECT"), "1") << "this test must run with KUPL_FAULT_INJECT=1";
    Queue q = make_queue();
    const size_t n = 1u << 20;
    auto src = pattern(n, 1);
    std::vector<unsigned char> dst(n, 0);
    Event e = make_event();
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_ERROR);
    EXPECT_TRUE(all_zero(dst)) << "the failed copy wrote";
    ASSERT_EQ(kupl_memcpy_async(dst.data(), src.data(), n, q.get(), e.get()), KUPL_OK);
    EXPECT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_EQ(dst, src);
    EXPECT_EQ(counters().copies_failed, 1u);
}
