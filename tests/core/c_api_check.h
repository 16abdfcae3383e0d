/* The C-compiled API walk-through (c_api_check.c). */
#ifndef KUPL_TESTS_CORE_C_API_CHECK_H
#define KUPL_TESTS_CORE_C_API_CHECK_H

#ifdef __cplusplus
extern "C" {
#endif

/** Returns 0 if every step worked, else the source line of the first failed step. */
int kupl_c_api_check(void);

#ifdef __cplusplus
}
#endif

#endif
