/* The C-compiled API walk-through and struct layouts (c_api_check.c). */
#ifndef KUPL_TESTS_CORE_C_API_CHECK_H
#define KUPL_TESTS_CORE_C_API_CHECK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Returns 0 if every step worked, else the source line of the first failed step. */
int kupl_c_api_check(void);

/** Sizes and offsets of the public structs as the C compiler lays them out. */
typedef struct kupl_c_layout {
    size_t desc_size, desc_args_size_offset, version_size, engine_info_size, counters_size, mem_kind_size;
} kupl_c_layout_t;
kupl_c_layout_t kupl_c_layout(void);

#ifdef __cplusplus
}
#endif

#endif
