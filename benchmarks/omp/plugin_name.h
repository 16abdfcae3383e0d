// Says which host offload plugin libomptarget loaded: ours exports __tgt_rtl_synchronize,
// LLVM's stock plugin does not. The comparison driver checks this line.
#ifndef PLUGIN_NAME_H
#define PLUGIN_NAME_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>

// The host offload plugin libomptarget 14 loads on this processor.
#if defined(__aarch64__)
#define KUPL_OMP_TEST_PLUGIN_NAME "libomptarget.rtl.aarch64.so"
#else
#define KUPL_OMP_TEST_PLUGIN_NAME "libomptarget.rtl.x86_64.so"
#endif

static inline void print_plugin_name(void) {
    void *plugin = dlopen(KUPL_OMP_TEST_PLUGIN_NAME, RTLD_LAZY | RTLD_NOLOAD);
    const char *name = !plugin ? "none" : dlsym(plugin, "__tgt_rtl_synchronize") ? "kupl" : "stock";
    printf("plugin %s\n", name);
    if (plugin)
        dlclose(plugin);
}

#endif
