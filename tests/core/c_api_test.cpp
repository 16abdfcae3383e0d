// Runs the API walk-through compiled as C11 (c_api_check.c).
#include "c_api_check.h"

#include <gtest/gtest.h>

TEST(CApi, C11TranslationUnitUsesTheWholeApi) {
    EXPECT_EQ(kupl_c_api_check(), 0) << "the check at this line of c_api_check.c failed";
}
