/*
 * kupl_trace.h: the trace writer shared by libkupl, the OpenMP plugin, its OMPT tool and the MPI
 * interposer (libkupl_trace.so). One process writes one file, in the Chrome/Perfetto JSON trace
 * format (an array of events, one per line), named by KUPL_TRACE: `%p` becomes the pid, `%r` the
 * MPI rank (OMPI_COMM_WORLD_RANK, PMIX_RANK or PMI_RANK; 0 when none is set).
 *
 * It is a library of its own, not part of libkupl, so that the plugin and the interposer can
 * trace over the vendor's libkupl too, into the same file as everything else in the process.
 *
 * Cost: with tracing off, kupl_trace_on() is one relaxed load and a predictable branch. With it on,
 * each event is formatted into the calling thread's own bounded buffer, without a lock; a full
 * buffer is written out by its thread (one lock per few thousand events), and all buffers are
 * written out at exit and by kupl_trace_flush(). An event that finds no room (memory exhausted,
 * file unwritable) is dropped and counted, never blocking or failing the caller.
 *
 * Times are CLOCK_MONOTONIC nanoseconds (kupl_trace_now): the same clock for every process of a
 * node, so per-rank files line up when merged. A "track" is a timeline: 0 means the calling
 * thread's own; kupl_trace_new_track() makes a named one (a queue, a copy channel's view, ...).
 * Strings are copied; names and args may come from anywhere. `args` is the body of a JSON object
 * (`"bytes":4096,"shape":"1D"`), or NULL.
 */
#ifndef KUPL_TRACE_H
#define KUPL_TRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KUPL_TRACE_API __attribute__((visibility("default")))

/* Non-zero while tracing: read it through kupl_trace_on(). */
extern KUPL_TRACE_API int kupl_trace_state;

static inline int kupl_trace_on(void) {
    return __builtin_expect(__atomic_load_n(&kupl_trace_state, __ATOMIC_RELAXED), 0);
}

KUPL_TRACE_API uint64_t kupl_trace_now(void);
/* The calling thread's track (its Linux thread id). */
KUPL_TRACE_API uint64_t kupl_trace_thread_track(void);
/* A small number for the calling thread, < 64 for the first 63 threads that trace (63 for the
 * rest): copies record which threads executed them as a bit mask of these. */
KUPL_TRACE_API unsigned kupl_trace_thread_index(void);
/* The track of thread index `index` (see above), 0 if unknown. */
KUPL_TRACE_API uint64_t kupl_trace_thread_of_index(unsigned index);

/* Names the calling thread's track ("copy channel 2"); sort_index orders tracks (lower first). */
KUPL_TRACE_API void kupl_trace_name_thread(const char *name, int sort_index);
/* A new named track; 0 when tracing is off. */
KUPL_TRACE_API uint64_t kupl_trace_new_track(const char *name, int sort_index);
/* Names the process ("rank 1"); the last call wins. */
KUPL_TRACE_API void kupl_trace_name_process(const char *name);

/* A slice [start_ns, end_ns] on `track`. */
KUPL_TRACE_API void kupl_trace_slice(uint64_t track, const char *category, const char *name,
                                     uint64_t start_ns, uint64_t end_ns, const char *args);
/* A point in time on `track`. */
KUPL_TRACE_API void kupl_trace_instant(uint64_t track, const char *category, const char *name, uint64_t ts_ns,
                                       const char *args);
/* An arrow from the slice enclosing (from_track, from_ns) to the one enclosing (to_track, to_ns). */
KUPL_TRACE_API void kupl_trace_flow(const char *category, const char *name, uint64_t from_track,
                                    uint64_t from_ns, uint64_t to_track, uint64_t to_ns);
/* Half of an arrow, for when the two ends are known at different places: the same id joins them
 * (kupl_trace_new_id). */
KUPL_TRACE_API uint64_t kupl_trace_new_id(void);
KUPL_TRACE_API void kupl_trace_flow_start(const char *category, const char *name, uint64_t id, uint64_t track,
                                          uint64_t ts_ns);
KUPL_TRACE_API void kupl_trace_flow_end(const char *category, const char *name, uint64_t id, uint64_t track,
                                        uint64_t ts_ns);
/* An asynchronous span (may overlap others): begin and end with the same id. */
KUPL_TRACE_API void kupl_trace_async_begin(const char *category, const char *name, uint64_t id,
                                           uint64_t ts_ns, const char *args);
KUPL_TRACE_API void kupl_trace_async_end(const char *category, const char *name, uint64_t id, uint64_t ts_ns,
                                         const char *args);

/* Writes every thread's buffered events to the file now. */
KUPL_TRACE_API void kupl_trace_flush(void);

/* Escapes `text` into a JSON string body (no quotes) of at most size-1 bytes; returns out. */
KUPL_TRACE_API char *kupl_trace_escape(char *out, size_t size, const char *text);

#ifdef __cplusplus
}
#endif

#endif /* KUPL_TRACE_H */
