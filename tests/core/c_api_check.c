/*
 * Proves the public headers are C11: this translation unit is compiled as C
 * (no extensions) and drives the API the way a C program does, including the old
 * designated-initialiser form of kupl_queue_item_desc_t. Called from c_api_test.cpp.
 */
#include "kupl.h"
#include "kupl_ext.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "c_api_check.h"

static void add_args(void *args) {
    int *p = args;
    p[0] += p[1];
}

#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        if (!(cond))                                                                                         \
            return __LINE__;                                                                                 \
    } while (0)

int kupl_c_api_check(void) {
    kupl_version_t version;
    CHECK(kupl_get_version(&version) == KUPL_OK && version.component_name != NULL);
    CHECK(kupl_get_wtime() > 0.0);

    int least = -1, greatest = -1;
    CHECK(kupl_get_queue_priority_range(&least, &greatest) == KUPL_OK);
    kupl_queue_h q = kupl_queue_create_with_priority(greatest);
    kupl_queue_h q2 = kupl_queue_create();
    kupl_event_h ev = kupl_event_create();
    CHECK(q != NULL && q2 != NULL && ev != NULL);
    CHECK(kupl_event_query(ev) == KUPL_EVENT_STATUS_CREATED);

    enum { N = 1 << 20 };
    unsigned char *src = kupl_malloc(KUPL_MEM_DEFAULT, N);
    unsigned char *dst = kupl_malloc(KUPL_MEM_DEFAULT, N);
    CHECK(src != NULL && dst != NULL);
    for (int i = 0; i < N; ++i)
        src[i] = (unsigned char)(i * 7 + 1);
    memset(dst, 0, N);
    CHECK(kupl_memcpy_async(dst, src, N, q, ev) == KUPL_OK);
    CHECK(kupl_event_wait(ev) == KUPL_OK);
    CHECK(kupl_event_query(ev) == KUPL_EVENT_STATUS_COMPLETE);
    CHECK(memcmp(dst, src, N) == 0);

    memset(dst, 0, N);
    CHECK(kupl_memcpy2d(dst, 512, src, 1024, 256, 64) == KUPL_OK);
    CHECK(memcmp(dst + 63 * 512, src + 63 * 1024, 256) == 0 && dst[63 * 512 + 256] == 0);
    CHECK(kupl_memcpy2d_async(dst, 512, src, 1024, 512, 64, q2, NULL) == KUPL_OK);
    CHECK(kupl_queue_wait(q2) == KUPL_OK);
    CHECK(memcmp(dst + 10 * 512, src + 10 * 1024, 512) == 0);

    /* The vendor samples' form: no field_mask, designated initialisers. */
    int sum[2] = {1, 41};
    kupl_queue_item_desc_t desc = {.func = add_args, .args = sum};
    CHECK(kupl_queue_submit(q2, &desc) == KUPL_OK);
    CHECK(kupl_event_record(ev, q2) == KUPL_OK);
    CHECK(kupl_queue_wait_event(q, ev) == KUPL_OK);
    CHECK(sum[0] == 42);

    int by_value[2] = {10, 5};
    kupl_queue_item_desc_t copied = {.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_ARGS_SIZE |
                                                   KUPL_QUEUE_ITEM_DESC_FIELD_NAME,
                                     .func = add_args,
                                     .args = by_value,
                                     .name = "c item",
                                     .args_size = sizeof by_value};
    CHECK(kupl_queue_submit(q, &copied) == KUPL_OK);
    CHECK(kuplx_queue_wait_event_async(q, ev) == KUPL_OK);
    CHECK(kupl_queue_wait(q) == KUPL_OK);
    CHECK(by_value[0] == 10); /* the item added into its own copy */

    kupl_queue_h sync = kupl_queue_acquire(KUPL_ASYNC_SYNC);
    CHECK(sync != NULL && kupl_queue_acquire(0) != NULL);
    CHECK(kupl_queue_submit(sync, &desc) == KUPL_OK);
    CHECK(sum[0] == 83);
    CHECK(kupl_queue_wait_all() == KUPL_OK);

    kuplx_counters_t counters;
    kuplx_engine_info_t info;
    char why[64];
    CHECK(kuplx_get_counters(&counters) == KUPL_OK && counters.copies_submitted >= 2);
    CHECK(kuplx_get_engine_info(&info) == KUPL_OK && info.num_channels >= 1);
    CHECK(kuplx_event_get_error(ev, why, sizeof why) == KUPL_OK);

    CHECK(kupl_mlock(src, N) == KUPL_OK && kupl_munlock(src, N) == KUPL_OK);
    kupl_free(KUPL_MEM_DEFAULT, src);
    kupl_free(KUPL_MEM_DEFAULT, dst);
    kupl_event_destroy(ev);
    kupl_queue_destroy(q);
    kupl_queue_destroy(q2);
    bool ok = kupl_memcpy(NULL, NULL, 0) == KUPL_OK;
    CHECK(ok);
    return 0;
}

kupl_c_layout_t kupl_c_layout(void) {
    kupl_c_layout_t layout = {sizeof(kupl_queue_item_desc_t), offsetof(kupl_queue_item_desc_t, args_size),
                              sizeof(kupl_version_t),         sizeof(kuplx_engine_info_t),
                              sizeof(kuplx_counters_t),       sizeof(kupl_mem_kind_t)};
    return layout;
}
