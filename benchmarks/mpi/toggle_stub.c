/* Test stand-in for the interposer's run-time switch, int kupl_mpi_set_enabled(int on), until
 * libkupl_mpi exports it: preloaded in front of libkupl_mpi.so it lets mpi_realcode_bench take its
 * "toggle" path (found with dlsym), so that path is built and its bytes verified. It switches
 * nothing: every variant then runs through the interposer, which changes timings, not bytes. */
int kupl_mpi_set_enabled(int on) {
    static int enabled = 1;
    int was = enabled;
    enabled = on != 0;
    return was;
}
