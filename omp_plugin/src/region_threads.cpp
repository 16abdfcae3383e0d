#include "region_threads.h"

#include <dlfcn.h>

namespace kupl_omp {
namespace {

/// libomp is in the process (libomptarget needs it) but the plugin does not link it: its API
/// is found at run time, so that the plugin still loads without it.
struct OpenMpApi {
    int (*get_level)() = nullptr;
    int (*get_active_level)() = nullptr;
    int (*get_max_active_levels)() = nullptr;
    int (*get_max_threads)() = nullptr;
    void (*set_num_threads)(int) = nullptr;

    bool found() const {
        return get_level && get_active_level && get_max_active_levels && get_max_threads && set_num_threads;
    }
};

template <typename Function> void find(Function *function, const char *name) {
    *function = reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

const OpenMpApi &openmp() {
    static const OpenMpApi api = [] {
        OpenMpApi found;
        find(&found.get_level, "omp_get_level");
        find(&found.get_active_level, "omp_get_active_level");
        find(&found.get_max_active_levels, "omp_get_max_active_levels");
        find(&found.get_max_threads, "omp_get_max_threads");
        find(&found.set_num_threads, "omp_set_num_threads");
        return found;
    }();
    return api;
}

} // namespace

int launching_thread_team_size() {
    const OpenMpApi &api = openmp();
    if (!api.found())
        return 0;
    if (api.get_active_level() >= api.get_max_active_levels())
        return 1;
    return api.get_max_threads();
}

bool launching_thread_is_outside_parallel() {
    const OpenMpApi &api = openmp();
    return api.found() && api.get_level() == 0;
}

void set_region_team_size(int threads) {
    const OpenMpApi &api = openmp();
    if (threads > 0 && api.found())
        api.set_num_threads(threads);
}

} // namespace kupl_omp
