/*
 * kupl.h — the queue, event, copy and memory part of the KUPL API
 * (Kunpeng Unified Parallel Library, HPCKit 26.x), implemented by kupl-interop.
 *
 * Names, signatures, types and constants match the vendor header so that a KUPL
 * program compiles against this file and links against our libkupl unchanged.
 * Behaviour that deliberately differs from vendor KUPL is marked "kupl-interop:".
 *
 * Conventions: every call that can fail returns KUPL_OK or KUPL_ERROR; calls that
 * return a handle return NULL on failure. With KUPL_LOG_LEVEL >= 1 every failure
 * also prints one line on stderr saying why. Every function is thread-safe: any
 * thread may submit to, wait on or destroy any queue or event. There is no init or
 * finalize call: the runtime starts on first use and stops at process exit.
 *
 * Language: C89/C90 and C++98 with -pedantic, given a C library with <stdint.h> (glibc,
 * musl; ISO C guarantees it from C99, which is the strict minimum). kupl::queue_submit
 * needs C++11.
 */
#ifndef KUPL_H
#define KUPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes. */
#define KUPL_OK 0
#define KUPL_ERROR (-1)

/** Marks the library's exported symbols (vendor spelling). */
#define kupl_export __attribute__((visibility("default")))

/** Opaque handles. */
typedef struct kupl_queue *kupl_queue_h;   /**< an in-order stream of work */
typedef struct kupl_event *kupl_event_h;   /**< a point in a queue that can be waited on */
typedef struct kupl_egroup *kupl_egroup_h; /**< executor group (accepted, not used) */

/* ------------------------------------------------------------------ version */

/** Version strings; all point to static storage. */
typedef struct kupl_version {
    const char *product_name;
    const char *product_version;
    const char *component_name;
    const char *component_abi_version;
    const char *component_version;
    const char *component_appendinfo;
} kupl_version_t;

/** Fills *version. KUPL_ERROR if version is NULL. */
kupl_export int kupl_get_version(kupl_version_t *version);

/** Wall-clock time in seconds from a monotonic clock (for measuring intervals). */
kupl_export double kupl_get_wtime(void);

/** Index for kupl_queue_acquire() that yields the synchronous queue (items run inline). */
#define KUPL_ASYNC_SYNC (-1)

/* ------------------------------------------------------------------- memory */

/** Where kupl_malloc() places memory. */
typedef enum kupl_mem_kind {
    KUPL_MEM_DEFAULT,   /**< ordinary memory, bound to the caller's NUMA node */
    KUPL_MEM_LARGE_CAP, /**< the largest-capacity memory tier (hwloc attribute), else default */
    KUPL_MEM_HIGH_BW    /**< the highest-bandwidth memory tier (hwloc attribute), else default */
} kupl_mem_kind_t;

/**
 * Allocates size bytes of page-aligned memory of the given kind.
 * Returns NULL if size is 0, kind is unknown or memory is exhausted.
 */
kupl_export void *kupl_malloc(kupl_mem_kind_t kind, size_t size);

/** Frees memory from kupl_malloc(); kind must be the kind it was allocated with. NULL is ignored. */
kupl_export void kupl_free(kupl_mem_kind_t kind, void *ptr);

/** Pins the pages of [buffer, buffer+count) in memory (mlock). KUPL_ERROR on failure, and for
 *  buffer NULL, count 0, or a range whose end (rounded up to a page) wraps around the address
 *  space. */
kupl_export int kupl_mlock(void *buffer, size_t count);

/** Unpins pages pinned with kupl_mlock(). KUPL_ERROR on failure and for the ranges kupl_mlock()
 *  refuses. */
kupl_export int kupl_munlock(void *buffer, size_t count);

/* -------------------------------------------------------------------- copies */

/**
 * Copies count bytes from src to dst and returns when they are copied.
 * Copies of at least KUPL_MEMCPY_SDMA_THRESHOLD bytes (default 512 KiB) run on the
 * copy engine's channels; smaller ones on the caller.
 * KUPL_ERROR for NULL pointers (with count > 0) and for overlapping src and dst ranges.
 */
kupl_export int kupl_memcpy(void *dst, const void *src, size_t count);

/**
 * Copies a 2D region: height rows of width bytes, rows dpitch/spitch bytes apart.
 * KUPL_ERROR for NULL pointers, width > dpitch or width > spitch (with height > 1),
 * a region whose size overflows size_t, or source and destination footprints
 * [base, base + (height-1)*pitch + width) that overlap (even where the rows interleave).
 */
kupl_export int kupl_memcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height);

/**
 * Enqueues a copy of count bytes on queue and returns at once.
 * If event is not NULL it is recorded by the copy: it becomes SUBMITTED now and
 * COMPLETE when the bytes have landed (KUPL_ERROR if event is still SUBMITTED).
 * kupl-interop: queue may be NULL — the copy is then ordered behind nothing, and
 * only its event (if any) tells when it is done. A failure of the copy itself is
 * reported by the wait that observes it (kupl_event_wait / kupl_queue_wait).
 */
kupl_export int kupl_memcpy_async(void *dst, const void *src, size_t count, kupl_queue_h queue,
                                  kupl_event_h event);

/** The asynchronous form of kupl_memcpy2d(); queue and event as for kupl_memcpy_async(). */
kupl_export int kupl_memcpy2d_async(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                    size_t height, kupl_queue_h queue, kupl_event_h event);

/* -------------------------------------------------------------------- queues */

/** Creates a queue of default priority (0). NULL on failure. */
kupl_export kupl_queue_h kupl_queue_create(void);

/** Priorities run from *least_priority (0) to *greatest_priority (3). KUPL_ERROR for NULL. */
kupl_export int kupl_get_queue_priority_range(int *least_priority, int *greatest_priority);

/**
 * Creates a queue whose copies are taken by the engine before those of lower
 * priority. NULL if priority is outside kupl_get_queue_priority_range().
 */
kupl_export kupl_queue_h kupl_queue_create_with_priority(int priority);

/**
 * Waits for all work on queue, then destroys it. Events recorded on it stay valid.
 * A NULL, destroyed or foreign handle is ignored (and logged).
 */
kupl_export void kupl_queue_destroy(kupl_queue_h queue);

/**
 * Blocks until all work enqueued on queue so far is done.
 * KUPL_ERROR for an invalid queue, or if work on it failed since the previous wait.
 */
kupl_export int kupl_queue_wait(kupl_queue_h queue);

/**
 * Makes later work on queue wait for event's latest record, and blocks the caller
 * until that record is complete and queue's earlier work is done. A record another thread
 * is making at the same time may be left out, as if this call came first.
 * KUPL_ERROR if event was never recorded, or either handle is invalid.
 * (kuplx_queue_wait_event_async() in kupl_ext.h is the non-blocking form.)
 */
kupl_export int kupl_queue_wait_event(kupl_queue_h queue, kupl_event_h event);

/** A host function run as a queue item. */
typedef void (*kupl_queue_item_func_t)(void *args);

/** Which optional members of kupl_queue_item_desc_t are set. */
enum kupl_queue_item_desc_field {
    KUPL_QUEUE_ITEM_DESC_FIELD_NAME = 1uL << 0,     /**< name is set */
    KUPL_QUEUE_ITEM_DESC_FIELD_EGROUP = 1uL << 1,   /**< egroup is set (ignored) */
    KUPL_QUEUE_ITEM_DESC_FIELD_ARGS_SIZE = 1uL << 2 /**< args_size is set: args is copied by value */
};

/** Describes a host function to run in order on a queue. */
typedef struct kupl_queue_item_desc {
    uint64_t field_mask;         /**< bits of enum kupl_queue_item_desc_field */
    kupl_queue_item_func_t func; /**< the function; required */
    void *args;                  /**< its argument (copied at submit when ARGS_SIZE is set) */
    const char *name;            /**< a name for logs */
    kupl_egroup_h egroup;        /**< executor group; accepted and ignored */
    size_t args_size;            /**< bytes of *args to copy */
} kupl_queue_item_desc_t;

/**
 * Enqueues desc->func(desc->args) on queue. It runs on the runtime's executor
 * threads (never on a copy channel) after the queue's earlier work, and later work
 * waits for it. KUPL_ERROR for an invalid queue, a NULL desc or func, or ARGS_SIZE
 * with NULL args.
 */
kupl_export int kupl_queue_submit(kupl_queue_h queue, kupl_queue_item_desc_t *desc);

/**
 * Returns the runtime-owned queue number index (created on first use, index >= 0),
 * or for KUPL_ASYNC_SYNC a queue whose work runs inline in the submitting call.
 * Acquired queues must not be destroyed. NULL for another negative index.
 */
kupl_export kupl_queue_h kupl_queue_acquire(int index);

/** Blocks until every queue returned by kupl_queue_acquire() is idle. */
kupl_export int kupl_queue_wait_all(void);

/* -------------------------------------------------------------------- events */

/** What kupl_event_query() returns for a valid event. Note KUPL_OK == CREATED. */
typedef enum kupl_event_status {
    KUPL_EVENT_STATUS_CREATED,   /**< never recorded */
    KUPL_EVENT_STATUS_SUBMITTED, /**< recorded; the work before it is not done yet */
    KUPL_EVENT_STATUS_COMPLETE   /**< the work before its latest record is done */
} kupl_event_status_t;

/** Creates an event in state CREATED. NULL on failure. */
kupl_export kupl_event_h kupl_event_create(void);

/**
 * Destroys event. Safe while it is SUBMITTED: work in flight completes normally.
 * A NULL, destroyed or foreign handle is ignored (and logged).
 */
kupl_export void kupl_event_destroy(kupl_event_h event);

/**
 * Records event at the current end of queue: it becomes SUBMITTED and turns
 * COMPLETE when all work enqueued on queue before it is done. An event that is
 * COMPLETE may be recorded again, on any queue. KUPL_ERROR if event is SUBMITTED.
 */
kupl_export int kupl_event_record(kupl_event_h event, kupl_queue_h queue);

/**
 * Blocks until event is COMPLETE. KUPL_ERROR if it was never recorded, is invalid,
 * or the work it covers failed (kuplx_event_get_error() says why).
 */
kupl_export int kupl_event_wait(kupl_event_h event);

/** Returns the event's kupl_event_status_t, or KUPL_ERROR for an invalid event. */
kupl_export int kupl_event_query(kupl_event_h event);

#ifdef __cplusplus
} /* extern "C" */

/** Old samples call kupl_malloc(size): same as kupl_malloc(KUPL_MEM_DEFAULT, size). */
inline void *kupl_malloc(size_t size) {
    return kupl_malloc(KUPL_MEM_DEFAULT, size);
}

/* kupl::queue_submit takes a std::function: C++11 on (the rest of this header is C89/C++98). */
#if __cplusplus >= 201103L
#include <functional>

namespace kupl {
/**
 * Enqueues a C++ callable on queue, like kupl_queue_submit(); desc may be NULL or
 * give a name. The callable is copied. KUPL_ERROR for an invalid queue or empty func.
 */
kupl_export int queue_submit(kupl_queue_h queue, kupl_queue_item_desc_t *desc,
                             const std::function<void(void)> &func);
} // namespace kupl
#endif /* __cplusplus >= 201103L */
#endif /* __cplusplus */

#endif /* KUPL_H */
