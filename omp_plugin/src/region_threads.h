// Where a target region runs, and with what team. A region launched from a thread outside any
// `parallel` (the initial thread, or a thread the program started) runs right there, as with the
// stock plugin: libomp runs every region shape correctly at that level, and a hand-off to an
// executor and back cost ~3 us of a 0.37 us empty region. So does a region whose image never
// enters libomp (image_imports.h): no thread's OpenMP context can matter to it. Every other
// region -- `nowait` ones,
// launched from hidden-helper threads, and those launched inside a host `parallel` -- runs on a
// KUPL executor thread, which is not an OpenMP thread: on the launching thread the region's
// `teams` would run nested inside an OpenMP team, which libomp does not support (the cause
// given in llvm/llvm-project#63298, which reports it as "OMP: Error #132"); there libomp 14
// computes wrong `distribute` loops and asserts in its task queues (tests/omp).
// There the region forks the team it would fork on its launching thread: one thread, as a
// `parallel` is nested there, so several regions in flight do not oversubscribe the cores (on 2
// cores, 16 nowait `target parallel for` chunks ran at 0.58x of the stock plugin with a full
// team per region, 0.84x with this; the rest is the hand-off to the executor and back). A
// num_threads clause in the region still wins.
#pragma once

namespace kupl_omp {

/// On the launching thread: the team a `parallel` would fork here, or 0 if unknown (libomp's
/// API not found; the executor thread then keeps its own default).
int launching_thread_team_size();

/// True on a thread outside any OpenMP `parallel` (nesting level 0): the initial thread, or a
/// thread the program started itself. Not true on hidden-helper threads (which run `nowait`
/// constructs) nor in a team. There libomp runs every region shape right, so a region may run
/// on the launching thread as it does with the stock plugin, without a hand-off; false if
/// libomp's API is not found.
bool launching_thread_is_outside_parallel();

/// On the executor thread, before the region runs: sets the default team size (if > 0).
void set_region_team_size(int threads);

} // namespace kupl_omp
