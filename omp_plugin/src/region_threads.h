// The team size a target region forks on the plugin's executor thread: the one it would get on
// the thread that launched it, as with the stock plugin, which runs regions there. A `nowait`
// region is launched from a hidden-helper thread and one inside a host `parallel` from a team
// thread; there a `parallel` is nested and gets one thread, so those regions fork no team on
// the executor either, and several regions in flight do not oversubscribe the cores (on 2
// cores, 16 nowait `target parallel for` chunks ran at 0.58x of the stock plugin with a full
// team per region, 0.84x with this; the rest is the hand-off to the executor and back).
// A region launched from the initial thread gets the full default team. A num_threads clause
// in the region still wins. The stock plugin cannot be asked for that nesting level instead:
// libomp 14 computes wrong `distribute` loops there and asserts in its task queues
// (llvm/llvm-project#63298), which is why regions run on executors at all.
#pragma once

namespace kupl_omp {

/// On the launching thread: the team a `parallel` would fork here, or 0 if unknown (libomp's
/// API not found; the executor thread then keeps its own default).
int launching_thread_team_size();

/// On the executor thread, before the region runs: sets the default team size (if > 0).
void set_region_team_size(int threads);

} // namespace kupl_omp
