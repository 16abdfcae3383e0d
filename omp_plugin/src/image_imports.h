// What a device image's code can call outside itself, read from its dynamic section and dynamic
// symbol table. The plugin uses it to tell regions that may run on any thread from regions that
// need a thread of their own: only a region that enters libomp (teams, parallel, worksharing,
// tasks, atomics, locks, omp_get_*) depends on the OpenMP context of the thread that runs it.
#pragma once

#include <cstddef>

namespace kupl_omp {

/// True if the image may enter the OpenMP runtime: it imports a function from libomp's
/// namespaces (__kmpc_*, omp_*, kmp_*, __kmp*, ompt_*, GOMP_*, ...), or it needs a library
/// beyond libomp and the C/C++ runtime (which could call libomp itself), or its tables cannot
/// be read. Only false for an image whose code provably calls nothing but the C/C++ runtime.
/// Never reads outside [bytes, bytes + size).
bool image_may_enter_openmp(const char *bytes, size_t size);

} // namespace kupl_omp
