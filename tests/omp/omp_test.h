// Shared helpers of the OpenMP test programs: checks that stop the program with a message,
// and a check that the plugin libomptarget loaded is the one the test expects
// (OMP_TEST_EXPECT_PLUGIN=kupl|stock), so a test cannot pass on the wrong plugin.
#ifndef OMP_TEST_H
#define OMP_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The host offload plugin libomptarget 14 loads on this processor.
#if defined(__aarch64__)
#define KUPL_OMP_TEST_PLUGIN_NAME "libomptarget.rtl.aarch64.so"
#else
#define KUPL_OMP_TEST_PLUGIN_NAME "libomptarget.rtl.x86_64.so"
#endif

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                  \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fprintf(stderr, "\n");                                                                           \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

/// 1 if the loaded host plugin is ours (it exports __tgt_rtl_synchronize; LLVM's does not).
static inline int omp_test_plugin_is_kupl(void) {
    void *plugin = dlopen(KUPL_OMP_TEST_PLUGIN_NAME, RTLD_LAZY | RTLD_NOLOAD);
    CHECK(plugin != NULL, "no %s is loaded", KUPL_OMP_TEST_PLUGIN_NAME);
    int ours = dlsym(plugin, "__tgt_rtl_synchronize") != NULL;
    dlclose(plugin);
    return ours;
}

/// Which plugin the run expects: 1 for ours (the default), 0 for LLVM's stock plugin.
static inline int omp_test_expect_kupl(void) {
    const char *expect = getenv("OMP_TEST_EXPECT_PLUGIN");
    return !expect || strcmp(expect, "stock") != 0;
}

/// Starts a test: devices exist and the expected plugin serves them.
static inline void omp_test_begin(void) {
    CHECK(omp_get_num_devices() > 0, "no offload device");
    CHECK(omp_test_plugin_is_kupl() == omp_test_expect_kupl(), "the %s plugin was expected",
          omp_test_expect_kupl() ? "kupl" : "stock");
}

static inline int omp_test_end(void) {
    printf("PASS (%s plugin)\n", omp_test_plugin_is_kupl() ? "kupl" : "stock");
    return 0;
}

#endif
