// Pins the public ABI: constants and struct layouts that vendor-compiled programs
// and the C compiler (c_api_check.c) rely on. A change here breaks binaries.
#include "c_api_check.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <cstddef>

// Vendor values: programs built against vendor kupl.h pass these numbers.
static_assert(KUPL_OK == 0 && KUPL_ERROR == -1, "status codes");
static_assert(KUPL_ASYNC_SYNC == -1, "sync queue index");
static_assert(KUPL_EVENT_STATUS_CREATED == 0 && KUPL_EVENT_STATUS_SUBMITTED == 1 &&
                  KUPL_EVENT_STATUS_COMPLETE == 2,
              "event states");
static_assert(KUPL_MEM_DEFAULT == 0 && KUPL_MEM_LARGE_CAP == 1 && KUPL_MEM_HIGH_BW == 2, "memory kinds");
static_assert(KUPL_QUEUE_ITEM_DESC_FIELD_NAME == 1 && KUPL_QUEUE_ITEM_DESC_FIELD_EGROUP == 2 &&
                  KUPL_QUEUE_ITEM_DESC_FIELD_ARGS_SIZE == 4,
              "descriptor field bits");

#if defined(__LP64__)
static_assert(sizeof(kupl_queue_item_desc_t) == 48, "descriptor size");
static_assert(offsetof(kupl_queue_item_desc_t, field_mask) == 0 &&
                  offsetof(kupl_queue_item_desc_t, func) == 8 &&
                  offsetof(kupl_queue_item_desc_t, args) == 16 &&
                  offsetof(kupl_queue_item_desc_t, name) == 24 &&
                  offsetof(kupl_queue_item_desc_t, egroup) == 32 &&
                  offsetof(kupl_queue_item_desc_t, args_size) == 40,
              "descriptor layout");
static_assert(sizeof(kupl_version_t) == 6 * sizeof(const char *), "version struct");
#endif

TEST(Abi, CAndCppAgreeOnStructLayouts) {
    kupl_c_layout_t c = kupl_c_layout();
    EXPECT_EQ(c.desc_size, sizeof(kupl_queue_item_desc_t));
    EXPECT_EQ(c.desc_args_size_offset, offsetof(kupl_queue_item_desc_t, args_size));
    EXPECT_EQ(c.version_size, sizeof(kupl_version_t));
    EXPECT_EQ(c.engine_info_size, sizeof(kuplx_engine_info_t));
    EXPECT_EQ(c.counters_size, sizeof(kuplx_counters_t));
    EXPECT_EQ(c.mem_kind_size, sizeof(kupl_mem_kind_t));
}
