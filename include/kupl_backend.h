/*
 * kupl_backend.h — the ABI through which an external copy engine (a hardware DMA
 * engine such as Kunpeng's SDMA or Intel DSA) plugs into kupl-interop's libkupl.
 *
 * A provider is a shared library that exports one C function,
 *
 *     const kupl_backend_provider_t *kupl_backend_provider_query(void);
 *
 * returning a table of function pointers (below). libkupl loads it when the
 * runtime starts if KUPL_BACKEND=/path/to/provider.so is set:
 *
 *   - the copies the provider declares eligible (kupl_backend_caps_t) go to it;
 *     every other copy goes to the software engine, which is always present;
 *   - a copy the provider refuses at submit (ring full, no channel) is done by the
 *     software engine instead: the application never sees a refusal;
 *   - a copy the provider accepts is reported exactly once through its completion
 *     callback; a failure there reaches the copy's event (kupl_event_wait and
 *     kupl_queue_wait return KUPL_ERROR, kuplx_event_get_error gives the provider's
 *     message) or the synchronous kupl_memcpy / kupl_memcpy2d call;
 *   - at exit, and whenever the runtime shuts down, libkupl waits until every
 *     accepted copy has completed, then calls close() and unloads the library.
 *
 * The engine's size thresholds apply first: a copy small enough to be done by the
 * calling thread (KUPL_ASYNC_INLINE_THRESHOLD for asynchronous copies,
 * KUPL_MEMCPY_SDMA_THRESHOLD for kupl_memcpy) never reaches any backend.
 *
 * A KUPL_BACKEND that cannot be used (no such file, not a provider, another ABI
 * version, open() failed) is reported in one line on stderr and the software
 * engine runs alone, as for every other bad KUPL_* value:
 *
 *     kupl: ignoring KUPL_BACKEND=/x.so: expected a copy-engine provider library
 *     (kupl_backend.h, ABI 1): <why>; using the software engine
 *
 * This header is plain C99 and needs nothing from kupl.h. A provider is built
 * with no link dependency on libkupl:
 *
 *     cc -shared -fPIC -O2 my_engine.c -o libmy_engine.so -lpthread
 *     KUPL_BACKEND=$PWD/libmy_engine.so kupl-info     # shows the provider and its routing
 *
 * tests/core/fake_backend/ holds a complete provider with its own completion
 * thread, used by the tests.
 *
 * Threads. Any application thread may submit, so submit() is called from many
 * threads at once and must be thread-safe. Completion callbacks may be called
 * from any thread (a provider's poller, a progress() caller, or the submitting
 * thread itself, even before submit() returns), and from several at once.
 *
 * Lifetime. Keep all state in the context made by open(): objects with static
 * storage duration in the provider are destroyed at process exit BEFORE libkupl
 * drains its copies (a library loaded later is finalised earlier). After fork()
 * the child's runtime calls open() again; the parent's context is abandoned there
 * (its threads do not exist in the child) and never closed.
 */
#ifndef KUPL_BACKEND_H
#define KUPL_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The ABI version this header describes. A provider stores the value it was
 * built with in kupl_backend_provider_t.abi_version; libkupl refuses (one
 * warning line, software engine) a provider of another version. Fields are only
 * ever added at the end of the structures, each addition announced by a larger
 * struct_size, not by a new version.
 */
#define KUPL_BACKEND_ABI_VERSION 1u

/** The name of the function a provider exports (for dlsym). */
#define KUPL_BACKEND_PROVIDER_SYMBOL "kupl_backend_provider_query"

/** Status codes of submit() and of the completion callback. */
#define KUPL_BACKEND_OK 0       /**< accepted (submit) / copied (completion) */
#define KUPL_BACKEND_REFUSED 1  /**< submit only: not taken; libkupl copies it in software */
#define KUPL_BACKEND_FAILED (-1) /**< completion only: the copy failed; the bytes of dst are undefined */

/** Capability flags (kupl_backend_caps_t.flags). */
#define KUPL_BACKEND_CAP_2D 0x1u /**< takes strided copies (height > 1); else only contiguous ones */

/**
 * Which copies the provider takes. libkupl zeroes the structure, sets
 * struct_size to the size it knows and calls capabilities() once after open().
 * A limit of 0 means "no limit". A copy is eligible when every condition holds:
 *   - height == 1, or KUPL_BACKEND_CAP_2D is set;
 *   - min_bytes <= width * height <= max_bytes;
 *   - width <= max_row_bytes, height <= max_rows, dpitch and spitch <= max_pitch
 *     (height > 1 only);
 *   - dst and src (and, for height > 1, dpitch and spitch) are multiples of
 *     alignment.
 * For Kunpeng SDMA, for example: max_row_bytes, max_rows and max_pitch UINT32_MAX
 * (the descriptor's 32-bit fields), KUPL_BACKEND_CAP_2D, and a min_bytes below
 * which the CPU is faster.
 */
typedef struct kupl_backend_caps {
    uint32_t struct_size; /**< set by libkupl: sizeof(kupl_backend_caps_t) as it knows it */
    uint32_t flags;       /**< KUPL_BACKEND_CAP_* */
    size_t min_bytes;     /**< smaller copies stay on the CPU */
    size_t max_bytes;     /**< larger copies stay on the CPU; 0: no limit */
    size_t max_row_bytes; /**< widest row (a 1D copy is one row); 0: no limit */
    size_t max_rows;      /**< most rows of a 2D copy; 0: no limit */
    size_t max_pitch;     /**< largest dpitch / spitch of a 2D copy; 0: no limit */
    size_t alignment;     /**< addresses (and 2D pitches) must be multiples; 0 or 1: any */
} kupl_backend_caps_t;

/**
 * One copy: `height` rows of `width` bytes, row i from src + i * spitch to
 * dst + i * dpitch. A 1D copy (and every contiguous 2D copy) has height 1 and
 * dpitch == spitch == width. libkupl has validated it: width and height are
 * non-zero, source and destination do not overlap, nothing wraps around the
 * address space. The structure is only valid during submit(): copy what you need.
 */
typedef struct kupl_backend_copy {
    void *dst;
    const void *src;
    size_t dpitch;
    size_t spitch;
    size_t width;  /**< bytes per row */
    size_t height; /**< rows */
    int priority;  /**< the queue's priority, 0 (least) .. 3 (greatest); a hint */
} kupl_backend_copy_t;

/**
 * Reports the end of an accepted copy. Call it exactly once per accepted copy,
 * from any thread, with status KUPL_BACKEND_OK or KUPL_BACKEND_FAILED and, on
 * failure, a short reason (copied by libkupl before the call returns; NULL is
 * allowed). It may run application work (event continuations) before it
 * returns, and may submit further copies: do not call it with a lock held that
 * submit() takes.
 */
typedef void (*kupl_backend_complete_fn)(void *cookie, int status, const char *message);

/** The table a provider returns from kupl_backend_provider_query(). */
typedef struct kupl_backend_provider {
    /** KUPL_BACKEND_ABI_VERSION as the provider was built. */
    uint32_t abi_version;
    /** sizeof(kupl_backend_provider_t) as the provider was built: libkupl reads no
     *  field beyond it. */
    uint32_t struct_size;
    /** Short name for kupl-info and logs, e.g. "sdma" (at most 31 characters are shown). */
    const char *name;

    /**
     * Opens the engine (devices, channels, threads) and sets *context, which
     * libkupl passes back to every other call. Returns KUPL_BACKEND_OK, or any
     * other value if the engine is unusable here (libkupl then warns once and
     * uses software only). Called once per runtime, when it starts.
     */
    int (*open)(void **context);

    /**
     * Closes the engine. libkupl calls it only when no accepted copy is
     * outstanding (every completion has returned), then unloads the library.
     * Must stop and join the provider's own threads.
     */
    void (*close)(void *context);

    /** Fills *caps (see kupl_backend_caps_t). Returns KUPL_BACKEND_OK, else the
     *  provider is not used. */
    int (*capabilities)(void *context, kupl_backend_caps_t *caps);

    /**
     * Starts one copy. Returns KUPL_BACKEND_OK once it has taken the copy: then
     * complete(cookie, ...) is called exactly once, later or even before submit
     * returns. Returns KUPL_BACKEND_REFUSED (or any non-zero value) to decline it:
     * complete is then never called for it and libkupl copies it in software.
     * Never blocks for long: refuse instead.
     */
    int (*submit)(void *context, const kupl_backend_copy_t *copy, kupl_backend_complete_fn complete,
                  void *cookie);

    /**
     * Optional: NULL for a provider whose own thread (an interrupt handler or a
     * poller) reports completions. Otherwise libkupl calls progress() from a
     * thread of its own while copies are outstanding, and it reports the
     * completions it finds (polling the completion queue). Returns how many it
     * reported.
     */
    int (*progress)(void *context);
} kupl_backend_provider_t;

/**
 * Exported by the provider library (not by libkupl): returns its table, with
 * static storage duration, or NULL if the provider cannot run here. Must not
 * start threads or touch devices: open() does that.
 */
typedef const kupl_backend_provider_t *(*kupl_backend_provider_query_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KUPL_BACKEND_H */
