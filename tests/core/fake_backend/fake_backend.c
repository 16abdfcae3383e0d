/*
 * A fake copy-engine provider (include/kupl_backend.h) for the tests: a real shared library,
 * plain C, no link dependency on libkupl, that behaves like a hardware engine seen from KUPL.
 * Copies go onto a ring; its own completion thread (a "hardware poller") copies them with
 * memcpy and reports each from that foreign thread. It counts what it took and can misbehave
 * on request, from the environment at open() or at run time through fake_backend_configure():
 *
 *   FAKE_BACKEND_FAIL_NTH=n     the n-th copy accepted from now on fails (writes nothing)
 *   FAKE_BACKEND_FAIL_EVERY=k   every k-th accepted copy fails
 *   FAKE_BACKEND_REFUSE=1       every submit is refused (KUPL copies in software instead)
 *   FAKE_BACKEND_REORDER=k      complete copies in batches of up to k, last submitted first
 *   FAKE_BACKEND_DELAY_US=us    each copy takes at least this long
 *   FAKE_BACKEND_POLL=1         no thread of its own: completions come from progress()
 *   FAKE_BACKEND_ABI=v          claim ABI version v (a mismatch test)
 *   FAKE_BACKEND_OPEN_FAIL=1    open() fails (an engine missing on this machine)
 *
 * Capabilities (what tests/core/backend_provider_test.cpp expects): 1D and 2D copies of
 * 64 KiB .. 8 MiB, pitches up to 1 MiB, addresses and pitches aligned to 64 bytes.
 */
#include "kupl_backend.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

/* What the tests read back (fake_backend_get_stats). */
typedef struct fake_backend_stats {
    uint64_t submits;         /* submit() calls */
    uint64_t taken;           /* accepted */
    uint64_t refused;         /* refused */
    uint64_t completed;       /* completions reported (success or failure) */
    uint64_t failed;          /* of those, failures */
    uint64_t bytes;           /* bytes copied by successful copies */
    uint64_t out_of_order;    /* completions reported before an earlier-accepted copy's */
    uint64_t foreign_thread;  /* completions reported from a thread other than the submitter's */
    uint64_t max_outstanding; /* most copies in flight at once */
    uint64_t opens;           /* open() calls */
    uint64_t closes;          /* close() calls */
} fake_backend_stats_t;

struct job {
    kupl_backend_copy_t copy;
    kupl_backend_complete_fn complete;
    void *cookie;
    uint64_t sequence; /* 1, 2, ... in order of acceptance */
    struct timespec accepted;
    int fail;
    pthread_t submitter;
    struct job *next;
};

struct fake {
    pthread_mutex_t mutex;
    pthread_cond_t wakeup;
    struct job *first, *last; /* accepted, not yet started; guarded by mutex */
    size_t queued;            /* guarded by mutex */
    int stop;                 /* guarded by mutex */
    int has_thread;
    pthread_t thread;
    uint64_t highest_reported;  /* the largest sequence completed so far; guarded by mutex */
    uint64_t outstanding;       /* guarded by mutex */
    fake_backend_stats_t stats; /* guarded by mutex */
};

/* Settings, changed at run time by fake_backend_configure() (atomics: read by the completion
 * thread under the engine's lock). The open engine is found through `current`, guarded by
 * settings_mutex, which is taken before an engine's mutex, never after. */
static _Atomic long fail_at;     /* the value of stats.taken whose copy fails; 0: none */
static _Atomic long fail_every;  /* 0: never */
static _Atomic long refuse;      /* 1: refuse every submit */
static _Atomic long reorder = 1; /* batch size */
static _Atomic long delay_us;
static _Atomic int report_fd = -1; /* close() writes a summary line here */
static pthread_mutex_t settings_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct fake *current; /* guarded by settings_mutex */

static long env_long(const char *name, long fallback) {
    const char *text = getenv(name);
    return text != NULL && *text != '\0' ? strtol(text, NULL, 10) : fallback;
}

/* Applies one setting; "fail_nth" counts from the copies accepted so far. */
FAKE_EXPORT void fake_backend_configure(const char *name, long value) {
    pthread_mutex_lock(&settings_mutex);
    struct fake *fake = current;
    if (strcmp(name, "fail_nth") == 0) {
        uint64_t taken = 0;
        if (fake != NULL) {
            pthread_mutex_lock(&fake->mutex);
            taken = fake->stats.taken;
            pthread_mutex_unlock(&fake->mutex);
        }
        fail_at = value > 0 ? (long)taken + value : 0;
    } else if (strcmp(name, "fail_every") == 0) {
        fail_every = value;
    } else if (strcmp(name, "refuse") == 0) {
        refuse = value;
    } else if (strcmp(name, "reorder") == 0) {
        reorder = value > 1 ? value : 1;
    } else if (strcmp(name, "delay_us") == 0) {
        delay_us = value;
    } else if (strcmp(name, "report_fd") == 0) {
        report_fd = (int)value;
    }
    pthread_mutex_unlock(&settings_mutex);
}

/* Copies the counters; all zero if no engine is open. */
FAKE_EXPORT void fake_backend_get_stats(fake_backend_stats_t *out) {
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&settings_mutex);
    if (current != NULL) {
        pthread_mutex_lock(&current->mutex);
        *out = current->stats;
        pthread_mutex_unlock(&current->mutex);
    }
    pthread_mutex_unlock(&settings_mutex);
}

static void sleep_us(long us) {
    struct timespec t;
    t.tv_sec = us / 1000000;
    t.tv_nsec = (us % 1000000) * 1000;
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

/* Runs one copy and reports it. Called without the lock. */
static void execute(struct fake *fake, struct job *job) {
    static const char failure[] = "injected failure (FAKE_BACKEND_FAIL_NTH / FAIL_EVERY)";
    long delay = delay_us;
    if (delay > 0)
        sleep_us(delay);
    if (!job->fail) {
        size_t row;
        for (row = 0; row < job->copy.height; ++row)
            memcpy((char *)job->copy.dst + row * job->copy.dpitch,
                   (const char *)job->copy.src + row * job->copy.spitch, job->copy.width);
    }
    pthread_mutex_lock(&fake->mutex);
    fake->stats.completed++;
    if (job->fail)
        fake->stats.failed++;
    else
        fake->stats.bytes += job->copy.width * job->copy.height;
    if (job->sequence < fake->highest_reported)
        fake->stats.out_of_order++;
    else
        fake->highest_reported = job->sequence;
    if (!pthread_equal(job->submitter, pthread_self()))
        fake->stats.foreign_thread++;
    fake->outstanding--;
    pthread_mutex_unlock(&fake->mutex);
    job->complete(job->cookie, job->fail ? KUPL_BACKEND_FAILED : KUPL_BACKEND_OK, job->fail ? failure : NULL);
    free(job);
}

/* Takes up to `limit` queued jobs, reversed (the last accepted first); called with the lock. */
static struct job *take_batch(struct fake *fake, long limit) {
    struct job *reversed = NULL;
    while (fake->first != NULL && limit-- > 0) {
        struct job *job = fake->first;
        fake->first = job->next;
        if (fake->first == NULL)
            fake->last = NULL;
        fake->queued--;
        job->next = reversed;
        reversed = job;
    }
    return reversed;
}

static long batch_size(void) {
    return reorder;
}

static void run_batch(struct fake *fake, struct job *batch) {
    while (batch != NULL) {
        struct job *next = batch->next;
        execute(fake, batch);
        batch = next;
    }
}

/* The engine's own completion thread. With reordering it waits up to 2 ms for a full batch, so
 * copies submitted together complete in reverse; fewer copies than a batch still complete. */
static void *completion_thread(void *arg) {
    struct fake *fake = arg;
    pthread_mutex_lock(&fake->mutex);
    for (;;) {
        while (fake->first == NULL && !fake->stop)
            pthread_cond_wait(&fake->wakeup, &fake->mutex);
        if (fake->first == NULL && fake->stop)
            break;
        long size = batch_size();
        if (size > 1 && fake->queued < (size_t)size) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 2000000;
            if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
            }
            while (fake->queued < (size_t)size && !fake->stop &&
                   pthread_cond_timedwait(&fake->wakeup, &fake->mutex, &until) == 0) {
            }
        }
        struct job *batch = take_batch(fake, size);
        pthread_mutex_unlock(&fake->mutex);
        run_batch(fake, batch);
        pthread_mutex_lock(&fake->mutex);
    }
    pthread_mutex_unlock(&fake->mutex);
    return NULL;
}

static int fake_open(void **context) {
    struct fake *fake;
    if (env_long("FAKE_BACKEND_OPEN_FAIL", 0) != 0)
        return -1;
    fake = calloc(1, sizeof *fake);
    if (fake == NULL)
        return -1;
    pthread_mutex_init(&fake->mutex, NULL);
    pthread_cond_init(&fake->wakeup, NULL);
    fake->stats.opens = 1;
    fake_backend_configure("fail_every", env_long("FAKE_BACKEND_FAIL_EVERY", 0));
    fake_backend_configure("refuse", env_long("FAKE_BACKEND_REFUSE", 0));
    fake_backend_configure("reorder", env_long("FAKE_BACKEND_REORDER", 1));
    fake_backend_configure("delay_us", env_long("FAKE_BACKEND_DELAY_US", 0));
    if (env_long("FAKE_BACKEND_POLL", 0) == 0) {
        if (pthread_create(&fake->thread, NULL, completion_thread, fake) != 0) {
            free(fake);
            return -1;
        }
        fake->has_thread = 1;
    }
    pthread_mutex_lock(&settings_mutex);
    current = fake;
    pthread_mutex_unlock(&settings_mutex);
    fake_backend_configure("fail_nth", env_long("FAKE_BACKEND_FAIL_NTH", 0));
    *context = fake;
    return KUPL_BACKEND_OK;
}

static void fake_close(void *context) {
    struct fake *fake = context;
    int fd;
    uint64_t taken, completed, outstanding; /* when KUPL closes: it must have drained by then */
    pthread_mutex_lock(&fake->mutex);
    taken = fake->stats.taken;
    completed = fake->stats.completed;
    outstanding = fake->outstanding;
    fake->stop = 1;
    fake->stats.closes++;
    pthread_cond_broadcast(&fake->wakeup);
    pthread_mutex_unlock(&fake->mutex);
    if (fake->has_thread)
        pthread_join(fake->thread, NULL);
    pthread_mutex_lock(&settings_mutex);
    if (current == fake)
        current = NULL;
    pthread_mutex_unlock(&settings_mutex);
    fd = report_fd;
    if (fd >= 0) {
        char line[160];
        int n = snprintf(line, sizeof line, "fake closed: taken=%llu completed=%llu outstanding=%llu;",
                         (unsigned long long)taken, (unsigned long long)completed,
                         (unsigned long long)outstanding);
        if (n > 0 && write(fd, line, (size_t)n) < 0) {
        }
    }
    pthread_cond_destroy(&fake->wakeup);
    pthread_mutex_destroy(&fake->mutex);
    free(fake);
}

static int fake_capabilities(void *context, kupl_backend_caps_t *caps) {
    (void)context;
    caps->flags = KUPL_BACKEND_CAP_2D;
    caps->min_bytes = 64 << 10;
    caps->max_bytes = 8 << 20;
    caps->max_row_bytes = 0;
    caps->max_rows = 0;
    caps->max_pitch = 1 << 20;
    caps->alignment = 64;
    return KUPL_BACKEND_OK;
}

static int fake_submit(void *context, const kupl_backend_copy_t *copy, kupl_backend_complete_fn complete,
                       void *cookie) {
    struct fake *fake = context;
    struct job *job;
    const long refusing = refuse, fail_nth_at = fail_at, every = fail_every;
    pthread_mutex_lock(&fake->mutex);
    fake->stats.submits++;
    job = refusing ? NULL : malloc(sizeof *job);
    if (job == NULL) {
        fake->stats.refused++;
        pthread_mutex_unlock(&fake->mutex);
        return KUPL_BACKEND_REFUSED;
    }
    job->copy = *copy;
    job->complete = complete;
    job->cookie = cookie;
    job->sequence = ++fake->stats.taken;
    job->fail = (fail_nth_at > 0 && job->sequence == (uint64_t)fail_nth_at) ||
                (every > 0 && job->sequence % (uint64_t)every == 0);
    job->submitter = pthread_self();
    clock_gettime(CLOCK_MONOTONIC, &job->accepted);
    job->next = NULL;
    if (fake->last != NULL)
        fake->last->next = job;
    else
        fake->first = job;
    fake->last = job;
    fake->queued++;
    if (++fake->outstanding > fake->stats.max_outstanding)
        fake->stats.max_outstanding = fake->outstanding;
    pthread_cond_signal(&fake->wakeup);
    pthread_mutex_unlock(&fake->mutex);
    return KUPL_BACKEND_OK;
}

/* FAKE_BACKEND_POLL=1: KUPL's poller calls this while copies are outstanding. */
static int fake_progress(void *context) {
    struct fake *fake = context;
    struct job *batch, *job;
    int done = 0;
    const long size = batch_size();
    pthread_mutex_lock(&fake->mutex);
    /* Reordering: wait (across calls) for a full batch, but not more than 2 ms for the oldest. */
    if (size > 1 && fake->queued < (size_t)size && fake->first != NULL) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        const long long waited_ns = (now.tv_sec - fake->first->accepted.tv_sec) * 1000000000LL +
                                    (now.tv_nsec - fake->first->accepted.tv_nsec);
        if (waited_ns < 2000000) {
            pthread_mutex_unlock(&fake->mutex);
            return 0;
        }
    }
    batch = take_batch(fake, size);
    pthread_mutex_unlock(&fake->mutex);
    for (job = batch; job != NULL; job = job->next)
        ++done;
    run_batch(fake, batch);
    return done;
}

static kupl_backend_provider_t table = {KUPL_BACKEND_ABI_VERSION,
                                        sizeof(kupl_backend_provider_t),
                                        "fake",
                                        fake_open,
                                        fake_close,
                                        fake_capabilities,
                                        fake_submit,
                                        NULL};

FAKE_EXPORT const kupl_backend_provider_t *kupl_backend_provider_query(void) {
    table.abi_version = (uint32_t)env_long("FAKE_BACKEND_ABI", KUPL_BACKEND_ABI_VERSION);
    table.progress = env_long("FAKE_BACKEND_POLL", 0) != 0 ? fake_progress : NULL;
    return &table;
}
