#!/usr/bin/env python3
"""What tracing costs, as ratios measured side by side in one run.

usage: run_trace_overhead.py BUILD NOTRACE_BUILD [ROUNDS]
  BUILD          an ordinary build (benchmarks on): benchmarks/trace/trace_overhead, and with the
                 OpenMP plugin benchmarks/omp/bin/omp_bench_region_launch and omp_plugin/kupl-omp-run
  NOTRACE_BUILD  a build configured with -DKUPL_TRACE_COMPILED_OUT=ON (its core/libkupl.so has no
                 trace call at all; the benchmark programs load it through LD_LIBRARY_PATH)
Variants, interleaved in random order each round: "out" (libkupl without trace code), "off" (the
ordinary libkupl, KUPL_TRACE unset) and "on" (KUPL_TRACE set; for OpenMP also the OMPT tool).
Prints the median over rounds of each figure and the ratios off/out and on/out.
"""
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile


def run(command, env):
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"{' '.join(command)} failed: {out.stdout}{out.stderr}")
    return out.stdout


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    build, notrace = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    core_bench = os.path.join(build, "benchmarks", "trace", "trace_overhead")
    omp_bench = os.path.join(build, "benchmarks", "omp", "bin", "omp_bench_region_launch")
    omp_run = os.path.join(build, "omp_plugin", "kupl-omp-run")
    have_omp = os.path.exists(omp_bench) and os.path.exists(omp_run)
    trace_dir = tempfile.mkdtemp(prefix="kupl-trace-bench-")
    results = {}  # (figure, variant) -> [values]
    for r in range(rounds):
        variants = ["out", "off", "on"]
        random.shuffle(variants)
        for variant in variants:
            env = dict(os.environ)
            env.pop("KUPL_TRACE", None)
            if variant == "out":
                env["LD_LIBRARY_PATH"] = os.path.join(notrace, "core") + ":" + env.get("LD_LIBRARY_PATH", "")
            if variant == "on":
                env["KUPL_TRACE"] = os.path.join(trace_dir, f"core-{r}.json")
            for line in run([core_bench, "2000", "7"], env).splitlines():
                name, value = line.split()
                results.setdefault((name, variant), []).append(float(value))
            if have_omp:
                command = [omp_run] + (["--trace", os.path.join(trace_dir, f"omp-{r}.json")] if variant == "on" else [])
                env["OMP_TARGET_OFFLOAD"] = "MANDATORY"
                out = run(command + [omp_bench, "2000", "5"], env)
                for name, value in re.findall(r"metric (\S+) ([0-9.]+) us", out):
                    results.setdefault((name, variant), []).append(float(value) * 1000)
    figures = sorted({name for name, _ in results}, key=lambda n: (n.startswith("region"), n))
    print(f"tracing overhead, medians of {rounds} interleaved rounds (ns per operation)")
    print(f"{'operation':26s} {'no trace code':>14s} {'tracing off':>12s} {'tracing on':>12s} {'off/out':>8s} {'on/out':>8s}")
    for name in figures:
        m = {v: statistics.median(results[(name, v)]) for v in ("out", "off", "on")}
        print(f"{name:26s} {m['out']:14.1f} {m['off']:12.1f} {m['on']:12.1f} {m['off'] / m['out']:8.3f} "
              f"{m['on'] / m['out']:8.3f}")
    print("(copy_4k: 4 KiB async copy + event wait; copy_1m: 1 MiB; item: empty queue item + queue wait;")
    print(" region_launch[_nowait]: an OpenMP target region through the KUPL plugin; 'no trace code' there")
    print(" means libkupl without trace calls, the plugin keeping its one check per entry point)")


if __name__ == "__main__":
    main()
