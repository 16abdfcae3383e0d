/*
 * Compiled, not run: kupl_backend.h compiles without a warning as C89/C90 and C99 with
 * -pedantic -Werror (and, as backend_header_check.cpp, as C++98), so a provider can be
 * written in any of them. This file is C89 itself.
 */
#include "kupl_backend.h"

#include <string.h>

static int check_submit(void *context, const kupl_backend_copy_t *copy, kupl_backend_complete_fn complete,
                        void *cookie) {
    (void)context;
    complete(cookie, copy->width != 0 ? KUPL_BACKEND_OK : KUPL_BACKEND_FAILED, 0);
    return KUPL_BACKEND_OK;
}

int kupl_backend_header_check(void);

int kupl_backend_header_check(void) {
    kupl_backend_provider_t provider;
    kupl_backend_caps_t caps;
    memset(&provider, 0, sizeof provider);
    provider.abi_version = KUPL_BACKEND_ABI_VERSION;
    provider.struct_size = (uint32_t)sizeof provider;
    provider.submit = check_submit;
    caps.flags = KUPL_BACKEND_CAP_2D;
    return (int)provider.struct_size + (int)caps.flags + KUPL_BACKEND_REFUSED;
}
