/*
 * LD_PRELOAD for the vendor-API-only runs of the plugin's tests: where vendor KUPL refuses
 * input our libkupl accepts (a NULL event or a NULL queue for an async copy, a NAME bit with a
 * NULL name), these wrappers refuse it too and say so on stderr; everything else goes on to
 * our libkupl. So a plugin that leaned on one of our deliberate differences fails its tests
 * here, although they run over our libkupl.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "kupl.h"

static int refuse(const char *call, const char *what) {
    fprintf(stderr, "vendor-rules: %s with %s: vendor KUPL returns KUPL_ERROR\n", call, what);
    return KUPL_ERROR;
}

/* Our libkupl's definition of name, looked up on first use. libkupl is usually loaded by
 * the plugin, which libomptarget dlopens locally: then RTLD_NEXT does not see it. */
static void *next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        void *kupl = dlopen("libkupl.so.0", RTLD_LAZY | RTLD_NOLOAD);
        if (kupl)
            f = dlsym(kupl, name);
    }
    if (!f)
        fprintf(stderr, "vendor-rules: %s not found after the preload\n", name);
    return f;
}

/* next(name), cached in *cache; threads may race to fill it (with the same value). */
static void *resolve(void **cache, const char *name) {
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!f) {
        f = next(name);
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    return f;
}

int kupl_memcpy_async(void *dst, const void *src, size_t count, kupl_queue_h queue, kupl_event_h event) {
    typedef int (*fn_t)(void *, const void *, size_t, kupl_queue_h, kupl_event_h);
    static void *cache;
    if (!event)
        return refuse("kupl_memcpy_async", "a NULL event");
    if (!queue) /* accepted only with SDMA hardware */
        return refuse("kupl_memcpy_async", "a NULL queue");
    fn_t real = (fn_t)resolve(&cache, "kupl_memcpy_async");
    return real ? real(dst, src, count, queue, event) : KUPL_ERROR;
}

int kupl_memcpy2d_async(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                        kupl_queue_h queue, kupl_event_h event) {
    typedef int (*fn_t)(void *, size_t, const void *, size_t, size_t, size_t, kupl_queue_h, kupl_event_h);
    static void *cache;
    if (!event)
        return refuse("kupl_memcpy2d_async", "a NULL event");
    if (!queue)
        return refuse("kupl_memcpy2d_async", "a NULL queue");
    fn_t real = (fn_t)resolve(&cache, "kupl_memcpy2d_async");
    return real ? real(dst, dpitch, src, spitch, width, height, queue, event) : KUPL_ERROR;
}

int kupl_queue_submit(kupl_queue_h queue, kupl_queue_item_desc_t *desc) {
    typedef int (*fn_t)(kupl_queue_h, kupl_queue_item_desc_t *);
    static void *cache;
    if (desc && (desc->field_mask & KUPL_QUEUE_ITEM_DESC_FIELD_NAME) && !desc->name)
        return refuse("kupl_queue_submit", "the NAME bit and a NULL name");
    fn_t real = (fn_t)resolve(&cache, "kupl_queue_submit");
    return real ? real(queue, desc) : KUPL_ERROR;
}
