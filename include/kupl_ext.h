/*
 * kupl_ext.h — kupl-interop extensions to the KUPL API (prefix kuplx_).
 *
 * What vendor KUPL lacks and users of CUDA streams expect: a non-blocking
 * cross-queue dependency, the error detail of a failed event, and a look inside
 * the copy engine. Code that must also run over vendor KUPL should test
 * KUPLX_AVAILABLE before using anything here.
 */
#ifndef KUPL_EXT_H
#define KUPL_EXT_H

#include "kupl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KUPLX_AVAILABLE 1

/**
 * Makes all work enqueued on queue after this call wait until event's latest
 * record is complete, and returns at once (like cudaStreamWaitEvent). Nothing
 * waits for it while it waits: no thread is held. Later records of event do not
 * affect the dependency. A record of event that another thread is making at the same time
 * (its call has not returned) may be left out: the wait is then for the record before it, as if
 * this call came first. KUPL_ERROR if event was never recorded or a handle is invalid.
 */
kupl_export int kuplx_queue_wait_event_async(kupl_queue_h queue, kupl_event_h event);

/**
 * Says why the work covered by event's latest record failed.
 * Returns KUPL_OK (and an empty message) if it succeeded or is not complete yet,
 * KUPL_ERROR if it failed or the handle is invalid; the reason is written to
 * message (at most size bytes, NUL-terminated) when message is not NULL.
 */
kupl_export int kuplx_event_get_error(kupl_event_h event, char *message, size_t size);

/** One copy of a batch: height rows of width bytes, rows dpitch/spitch bytes apart (height 1:
 *  a 1D copy of width bytes; the pitches are then ignored). */
typedef struct kuplx_copy_piece {
    void *dst;
    size_t dpitch;
    const void *src;
    size_t spitch;
    size_t width;
    size_t height;
} kuplx_copy_piece_t;

/**
 * Enqueues count copies on queue as one operation and returns at once: the shape copy engines
 * take as a descriptor chain (a packed message's pieces, a mapper's members). The pieces run in
 * no set order, possibly at the same time; the operation is complete when every piece is, and
 * event (if not NULL) is recorded by it as by kupl_memcpy_async(). The array is read during the
 * call only. Each piece is checked as kupl_memcpy2d() checks its arguments; KUPL_ERROR for an
 * invalid piece (nothing is enqueued then), for pieces == NULL with count > 0, or as
 * kupl_memcpy_async() for the queue and event. Pieces whose destinations overlap each other, or
 * one piece's source with another's destination, are not detected and leave those bytes
 * undefined. count == 0 enqueues an empty operation (its event completes in queue order).
 * If a piece fails in the engine, the other pieces still run, and the wait that observes the
 * operation returns KUPL_ERROR (kuplx_event_get_error() says why).
 */
kupl_export int kuplx_memcpy_batch_async(const kuplx_copy_piece_t *pieces, size_t count, kupl_queue_h queue,
                                         kupl_event_h event);

/** Static facts about the copy engine. */
typedef struct kuplx_engine_info {
    char backend[32];          /**< backend name, e.g. "software" */
    int num_channels;          /**< copy channels (worker threads for the software backend) */
    int num_executors;         /**< threads that run host-function queue items */
    int num_numa_nodes;        /**< NUMA nodes hwloc reports */
    int num_cores;             /**< cores hwloc reports */
    size_t inline_threshold;   /**< async copies below this with nothing ahead run on the caller */
    size_t mt_threshold;       /**< copies at least this large are split across channels */
    size_t sync_threshold;     /**< kupl_memcpy() uses the engine from this size on */
    size_t nt_threshold;       /**< copies at least this large use non-temporal stores */
    unsigned spin_us;          /**< how long an idle copy channel spins before it parks */
    unsigned executor_spin_us; /**< how long an idle executor spins before it parks */
} kuplx_engine_info_t;

/** Fills *info (starting the runtime if needed). KUPL_ERROR for NULL. */
kupl_export int kuplx_get_engine_info(kuplx_engine_info_t *info);

/**
 * Writes where channel number channel runs (an hwloc cpuset list such as "0" or
 * "0-3", and the NUMA node) into buf. KUPL_ERROR for a bad channel number.
 */
kupl_export int kuplx_get_channel_placement(int channel, char *buf, size_t size);

/**
 * Describes the copy-engine provider loaded from KUPL_BACKEND (kupl_backend.h)
 * and which copies go to it. Writes into provider (at most provider_size bytes,
 * NUL-terminated) its name, library path and ABI, or "" when none is loaded; and
 * into rule the routing in words, e.g. "to sdma: 1D and 2D copies of 64K..any;
 * the rest, and what it refuses: software" ("every copy: software" without a
 * provider). Either buffer may be NULL. Starts the runtime if needed.
 */
kupl_export int kuplx_get_copy_routing(char *provider, size_t provider_size, char *rule, size_t rule_size);

/** Counters since the runtime started; all monotonic. */
typedef struct kuplx_counters {
    uint64_t copies_submitted; /**< async and sync copies accepted */
    uint64_t copies_inline;    /**< of those, done on the calling thread */
    uint64_t copies_failed;    /**< copies that completed with an error */
    uint64_t bytes_copied;     /**< payload bytes of successful copies */
    uint64_t pieces_executed;  /**< pieces run by copy channels (a split copy has several) */
    uint64_t host_items;       /**< host-function items run */
    uint64_t worker_parks;     /**< times an idle worker went to sleep */
    uint64_t worker_wakes;     /**< times a submitter had to wake a sleeping worker */
} kuplx_counters_t;

/** Fills *counters. KUPL_ERROR for NULL. */
kupl_export int kuplx_get_counters(kuplx_counters_t *counters);

/**
 * Fault injection for tests: the next count copies the engine executes (inline or
 * on a channel) fail without writing; their waiters get KUPL_ERROR. 0 disarms.
 * Also settable at start-up with KUPL_FAULT_INJECT=count.
 */
kupl_export int kuplx_inject_copy_faults(unsigned count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KUPL_EXT_H */
