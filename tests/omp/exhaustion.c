// Exhaustion (issue 10): the plugin when address space or threads run out. ctest runs each mode
// through tests/check_tool.sh, which judges the exit status, stdout and every stderr line.
//
//   alloc    After a warm-up offload the address space is capped (RLIMIT_AS) and filled with
//            ballast up to a little headroom. Regions (plain and `nowait` from a `parallel`) and
//            `target update ... nowait` on mapped data keep working; omp_target_alloc of blocks
//            that cannot fit returns NULL with the plugin's one error line each. Once the ballast
//            is freed and the cap lifted, big arrays map and compute correctly again. Exit 0.
//   map      The same cap, then `target enter data` of an array that cannot fit: the plugin
//            refuses the allocation with its error line and libomptarget 14 ends the program as it
//            does for every failed construct under OMP_TARGET_OFFLOAD=MANDATORY ("Libomptarget
//            fatal error 1", abort). Never an exception or a crash inside the plugin.
//   threads  (root only: root ignores RLIMIT_NPROC) The process becomes an otherwise unused uid
//            that may start only a few more threads, then offloads with KUPL_NUM_EXECUTORS and
//            KUPL_NUM_CHANNELS set high: KUPL runs with the threads it got, says so in one stderr
//            line, and the results are right. The program captures its own stderr to count it.
#include "omp_test.h" // first: it sets _GNU_SOURCE

#include "../common/address_space_cap.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

enum {
    SMALL = 1 << 16,      // doubles in the arrays that stay mapped under the cap
    BIG = 8 << 20,        // doubles in an array that cannot fit under the cap: 64 MiB
    HEADROOM = 16 << 20,  // left free under the cap for libomp, libomptarget and KUPL
    CHUNK = 1 << 20,      // ballast granularity
    MAX_CHUNKS = 1 << 15, // 32 GiB of ballast at most
    MAX_ALLOCS = 64       // omp_target_alloc calls under the cap
};

static void *ballast_chunks[MAX_CHUNKS];
static ballast_t ballast = {CHUNK, MAX_CHUNKS, ballast_chunks, 0};

// Caps the address space 256 MiB above its use now and fills it with ballast up to HEADROOM: no
// block of BIG doubles (64 MiB) can fit anywhere after that.
static void exhaust(void) {
    const char *why = cap_address_space(&ballast, 256u << 20, HEADROOM);
    CHECK(why == NULL, "%s (ballast of %d chunks)", why, ballast.count);
}

static void give_back(void) {
    const char *why = lift_address_space_cap(&ballast);
    CHECK(why == NULL, "%s", why);
}

// a[i] = i + round on the host, a[i] += 1 in a region, copied back: every element checked.
// `target parallel for`, not `target teams distribute parallel for`: after a `teams` region with
// a nested `parallel` has run on a thread, libomp 14 hangs that thread's next `parallel` with
// tasks, with either plugin (omp_plugin/README.md, "Known limitations of libomp 14").
static void offload_round(double *a, int n, int round) {
    for (int i = 0; i < n; ++i)
        a[i] = i + round;
#pragma omp target parallel for map(tofrom : a [0:n])
    for (int i = 0; i < n; ++i)
        a[i] += 1;
    for (int i = 0; i < n; ++i)
        CHECK(a[i] == i + round + 1, "round %d: a[%d] = %f", round, i, a[i]);
}

// Under the cap, on mapped data: `target update ... nowait` and `target nowait` regions from a
// host parallel (they run on KUPL executors), then plain ones.
static void mapped_work_under_cap(double *a, double *b) {
#pragma omp target enter data map(alloc : a [0:SMALL], b [0:SMALL])
    for (int round = 0; round < 20; ++round) {
        for (int i = 0; i < SMALL; ++i) {
            a[i] = i * 2.0 + round;
            b[i] = -1;
        }
#pragma omp parallel num_threads(2)
#pragma omp single
        {
#pragma omp target update to(a [0:SMALL]) nowait depend(out : a[0])
#pragma omp target nowait depend(in : a[0]) depend(out : b[0])
            for (int i = 0; i < SMALL; ++i)
                b[i] = a[i] + 1;
#pragma omp target update from(b [0:SMALL]) nowait depend(in : b[0])
#pragma omp taskwait
        }
        for (int i = 0; i < SMALL; ++i)
            CHECK(b[i] == i * 2.0 + round + 1, "under the cap, round %d: b[%d] = %f", round, i, b[i]);
    }
#pragma omp target exit data map(delete : a [0:SMALL], b [0:SMALL])
}

static int mode_alloc(void) {
    double *a = malloc(SMALL * sizeof(double));
    double *b = malloc(SMALL * sizeof(double));
    double *big = malloc((size_t)BIG * sizeof(double));
    CHECK(a && b && big, "host arrays");
    memset(big, 0, (size_t)BIG * sizeof(double)); // allocated before the cap, touched
    // Warm-up: the device, KUPL and libomp's threads (team, hidden helpers) are up: a thread
    // stack does not fit under the cap, and libomp aborts when it cannot start one.
    offload_round(a, SMALL, 0);
    mapped_work_under_cap(a, b);
    const int dev = omp_get_default_device();

    exhaust();
    mapped_work_under_cap(a, b);
    void *blocks[MAX_ALLOCS];
    int made = 0;
    while (made < MAX_ALLOCS && (blocks[made] = omp_target_alloc((size_t)BIG * sizeof(double), dev)) != NULL)
        ++made;
    CHECK(made < MAX_ALLOCS, "omp_target_alloc of 64 MiB was never refused under the cap (%d blocks)", made);
    for (int i = 0; i < made; ++i)
        omp_target_free(blocks[i], dev);
    mapped_work_under_cap(a, b); // still works after the refusals
    offload_round(a, SMALL, 1);

    give_back();
    void *block = omp_target_alloc((size_t)BIG * sizeof(double), dev);
    CHECK(block != NULL, "omp_target_alloc after the cap was lifted");
    omp_target_free(block, dev);
    offload_round(big, BIG, 2); // a 64 MiB array maps, computes and comes back
    mapped_work_under_cap(a, b);
    free(big);
    free(b);
    free(a);
    printf("refused %d of %d omp_target_alloc calls under the cap\n", made < MAX_ALLOCS, made + 1);
    return omp_test_end();
}

static int mode_map(void) {
    double *a = malloc(SMALL * sizeof(double));
    double *big = malloc((size_t)BIG * sizeof(double));
    CHECK(a && big, "host arrays");
    memset(big, 0, (size_t)BIG * sizeof(double));
    offload_round(a, SMALL, 0);
    exhaust();
    printf("capped\n");
    fflush(stdout);
#pragma omp target enter data map(to : big [0:BIG])
    // libomptarget ends the program above; reaching here means the mapping was not refused.
    printf("UNEXPECTED: a 64 MiB array was mapped under the cap\n");
    return 1;
}

// The calling process's thread count, from /proc/self/status.
static int thread_count(void) {
    char text[4096] = {0};
    const int fd = open("/proc/self/status", O_RDONLY);
    const ssize_t got = fd < 0 ? 0 : read(fd, text, sizeof text - 1);
    if (fd >= 0)
        close(fd);
    const char *line = got > 0 ? strstr(text, "\nThreads:") : NULL;
    return line ? atoi(line + 9) : 0;
}

static int count_char(const char *text, char c) {
    int count = 0;
    for (; *text; ++text)
        count += *text == c;
    return count;
}

static int mode_threads(int more) {
    if (getuid() != 0) {
        printf("SKIP: RLIMIT_NPROC binds only a non-root process, and only root can become an unused uid\n");
        return 0;
    }
    // stderr goes to a memory file until the end, so the notice lines can be counted.
    const int saved_stderr = dup(STDERR_FILENO);
    const int captured = memfd_create("stderr", 0);
    CHECK(saved_stderr >= 0 && captured >= 0 && dup2(captured, STDERR_FILENO) >= 0, "capturing stderr");

    double *a = malloc(SMALL * sizeof(double));
    double *b = malloc(SMALL * sizeof(double));
    CHECK(a && b, "host arrays");
#pragma omp parallel num_threads(2) // libomp's worker starts before the limit
    {}
    // RLIMIT_NPROC counts a user's tasks, and root is exempt: become a uid that runs nothing else.
    const uid_t unused_uid = (uid_t)(200000 + getpid());
    struct rlimit lim;
    getrlimit(RLIMIT_NPROC, &lim);
    lim.rlim_cur = (rlim_t)(thread_count() + more);
    CHECK(setrlimit(RLIMIT_NPROC, &lim) == 0, "setrlimit(RLIMIT_NPROC)");
    CHECK(setresgid(unused_uid, unused_uid, unused_uid) == 0 &&
              setresuid(unused_uid, unused_uid, unused_uid) == 0,
          "cannot switch to uid %d", (int)unused_uid);
    prctl(PR_SET_DUMPABLE, 1); // keep /proc/self readable
    omp_test_begin();

    for (int round = 0; round < 3; ++round)
        offload_round(a, SMALL, round); // the first starts the device and KUPL
    mapped_work_under_cap(a, b);        // `nowait` regions on the executors that started
    const int threads = thread_count();
    free(b);
    free(a);

    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    const off_t size = lseek(captured, 0, SEEK_END);
    char *text = calloc((size_t)size + 1, 1);
    CHECK(text && pread(captured, text, (size_t)size, 0) == size, "reading the captured stderr");
    fputs(text, stderr);
    // One line, and it is the notice (check_tool.sh matches its text).
    CHECK(count_char(text, '\n') == 1 && strncmp(text, "kupl: ", 6) == 0, "stderr is not one notice line");
    free(text);
    printf("%d threads in all under the limit\n", threads);
    return omp_test_end();
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "threads") == 0)
        return mode_threads(argc > 2 ? atoi(argv[2]) : 4);
    omp_test_begin();
    if (strcmp(mode, "alloc") == 0)
        return mode_alloc();
    if (strcmp(mode, "map") == 0)
        return mode_map();
    fprintf(stderr, "usage: %s alloc|map|threads [more-threads]\n", argv[0]);
    return 2;
}
