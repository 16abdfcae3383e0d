#!/usr/bin/env python3
"""Prints the core benchmark figures as ratios against memcpy on the calling thread.

Reads copy_bandwidth.json and copy2d.json (Google Benchmark, run with repetitions; the
"median" aggregates are used) and overlap.json (core_overlap_bench) from one folder.
Usage: report_core_benchmarks.py RESULTS_DIR
"""
import json
import os
import sys

UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def load_medians(path):
    """run_name -> median entry (real_time converted to ns)."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        data = json.load(f)
    medians = {}
    for b in data.get("benchmarks", []):
        if b.get("error_occurred"):
            medians[b["run_name"]] = {"error": b.get("error_message", "error")}
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median":
            entry = dict(b)
            entry["ns"] = b["real_time"] * UNIT_NS[b.get("time_unit", "ns")]
            medians[b["run_name"]] = entry
    return medians


def get(medians, name):
    entry = medians.get(name)
    return entry if entry and "ns" in entry else None


def fmt_size(n):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div} {unit}"
    return f"{n} B"


def verdict(value, target, higher_is_better=True):
    if value is None:
        return "n/a"
    ok = value >= target if higher_is_better else value <= target
    return "met" if ok else "MISSED"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    bw = load_medians(os.path.join(folder, "copy_bandwidth.json"))
    c2d = load_medians(os.path.join(folder, "copy2d.json"))
    overlap = []
    overlap_path = os.path.join(folder, "overlap.json")
    if os.path.exists(overlap_path):
        with open(overlap_path) as f:
            overlap = json.load(f)["results"]

    if not (bw or c2d or overlap):
        sys.exit(f"no benchmark results (copy_bandwidth.json, copy2d.json, overlap.json) in {folder}")

    def ratio(peer, ours):  # speed of ours relative to peer (>1: ours faster)
        return peer["ns"] / ours["ns"] if peer and ours else None

    rows = []  # (figure, measured text, value, target text, vendor, verdict)

    def one_d(variant, n):
        return get(bw, f"{variant}/{n}/real_time")

    m64, a64 = one_d("memcpy_on_caller", 64 << 20), one_d("kupl_memcpy_async_wait", 64 << 20)
    r = ratio(m64, a64)
    rows.append(("1. async 64 MiB copy+wait, bandwidth vs memcpy", r, "x", ">= 1.8x", "2.0x", verdict(r, 1.8)))
    c64 = one_d("ceiling_two_thread_stream", 64 << 20)
    rows.append(("   ... reference: plain 2-thread streaming copy vs memcpy", ratio(m64, c64), "x",
                 "reference", "", ""))

    for res in overlap:
        label = f"2. overlap {fmt_size(res['bytes'])}: (memcpy + compute) / together"
        if res["bytes"] >= 64 << 20:
            rows.append((label, res["speedup"], "x", ">= 1.8x", "2.0x", verdict(res["speedup"], 1.8)))
        else:  # small copies: the wake-up of a parked channel is part of the cost (info only)
            rows.append((label, res["speedup"], "x", "(info)", "", ""))
        rows.append(("   ... (KUPL copy alone + compute) / together", (res["kupl_copy_ns"] + res["compute_ns"])
                     / res["together_ns"], "x", "", "", ""))
        rows.append(("   ... ideal (a+b)/max(a,b) for this calibration; compute slowdown", res["ideal_speedup"], "x",
                     f"slowdown {res['compute_slowdown']:.2f}x", "1.22x", ""))

    m4, a4 = one_d("memcpy_on_caller", 4096), one_d("kupl_memcpy_async_wait", 4096)
    lat = a4["ns"] if a4 else None
    rows.append(("3. 4 KiB async copy+wait latency (ns)", lat, "ns", "<= 1000 ns", "1030 ns",
                 verdict(lat, 1000, higher_is_better=False)))
    if a4 and m4:
        rows.append(("   ... its time / memcpy 4 KiB time", a4["ns"] / m4["ns"], "x",
                     f"memcpy {m4['ns']:.0f} ns", "", ""))

    for fig, (w, p, h), target, vendor in (("4.", (64, 4160, 4096), 1.5, "1.45x"),
                                           ("5.", (8, 32768, 4096), 2.0, "0.93x"),
                                           ("  ", (512, 4160, 4096), None, "")):
        for cold in (0, 1):
            shape = f"width:{w}/pitch:{p}/rows:{h}/cold:{cold}/real_time"
            peer = get(c2d, f"memcpy_per_row/{shape}")
            asy = get(c2d, f"kupl_memcpy2d_async_wait/{shape}")
            syn = get(c2d, f"kupl_memcpy2d_sync/{shape}")
            where = "cold" if cold else "hot"
            r = ratio(peer, asy)
            tgt = f">= {target}x" if target else "(info)"
            rows.append((f"{fig} 2D {w} B x {h} rows @ pitch {p}, {where}: async+wait vs memcpy/row", r, "x",
                         tgt, vendor, verdict(r, target) if target else ""))
            r = ratio(peer, syn)
            peer_gbs = f"memcpy/row {w * h / peer['ns']:.2f} GB/s" if peer else ""
            rows.append(("   ... kupl_memcpy2d (sync) vs memcpy/row", r, "x", peer_gbs, "", ""))

    print("Core figures (medians of repetitions; ratios: memcpy time / KUPL time, same run)")
    print(f"{'figure':<72} {'measured':>10} {'target':>24} {'vendor':>8}  verdict")
    for label, value, unit, target, vendor, v in rows:
        shown = "n/a" if value is None else (f"{value:.0f} {unit}" if unit == "ns" else f"{value:.2f} {unit}")
        print(f"{label:<72} {shown:>10} {target:>24} {vendor:>8}  {v}")

    print()
    print("1D size sweep (GB/s are payload bytes per second; x = speed vs memcpy; 2thr-NT = a plain"
          " two-thread streaming copy, the large-copy reference; counters per copy of the async variant)")
    print(f"{'size':>8} {'memcpy':>8} {'async+wait':>11} {'x':>6} {'kupl_memcpy':>12} {'x':>6}"
          f" {'2thr-NT':>8} {'x':>6} {'inline':>7} {'pieces':>7} {'wakes':>6}")
    sizes = sorted({int(name.split("/")[1]) for name in bw if name.startswith("memcpy_on_caller/")})
    for n in sizes:
        m, a, s = one_d("memcpy_on_caller", n), one_d("kupl_memcpy_async_wait", n), one_d("kupl_memcpy_sync", n)
        c = one_d("ceiling_two_thread_stream", n)

        def gbs(e):
            return f"{n / e['ns']:.1f}" if e else "n/a"

        def x(e):
            return f"{m['ns'] / e['ns']:.2f}" if e and m else "n/a"

        def counter(key):
            return f"{a[key]:.2f}" if a and key in a else "-"

        print(f"{fmt_size(n):>8} {gbs(m):>8} {gbs(a):>11} {x(a):>6} {gbs(s):>12} {x(s):>6}"
              f" {gbs(c) if c else '-':>8} {x(c) if c else '-':>6} {counter('inline/op'):>7} {counter('pieces/op'):>7} {counter('wakes/op'):>6}")

    if overlap:
        print()
        print("Overlap detail (ms, medians): memcpy alone, kupl copy alone, compute alone, together,"
              " of which submit call, compute during copy, wait left after compute")
        for res in overlap:
            ms = [res.get(k, float("nan")) / 1e6
                  for k in ("memcpy_ns", "kupl_copy_ns", "compute_ns", "together_ns", "submit_ns",
                            "compute_during_copy_ns", "wait_after_compute_ns")]
            print(f"{fmt_size(res['bytes']):>8} " + " ".join(f"{v:8.3f}" for v in ms)
                  + f"   wakes/copy {res['wakes_per_copy']:.2f} pieces/copy {res['pieces_per_copy']:.2f}"
                  + f" submitted on {res.get('caller_cpus', '?')}")
        with open(overlap_path) as f:
            context = json.load(f)["context"]
        print(f"copy channels placed on: {context.get('kupl_channel_placement', '?')}")

    cpus = sorted({int(e["caller_cpu"]) for d in (bw, c2d) for e in d.values() if "caller_cpu" in e})
    if cpus:
        print(f"Google Benchmark thread ran on CPU {', '.join(map(str, cpus))} (median per benchmark)")

    errors = [n for d in (bw, c2d) for n, e in d.items() if "error" in e]
    for name in errors:
        print(f"ERROR in {name}: {(bw.get(name) or c2d.get(name))['error']}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
