#!/usr/bin/env python3
"""Draws the "never slower" sweep (core_sweep_bench --json) as one figure.

Usage: plot_sweep.py SWEEP.json OUT.(png|svg) [--before OLD.json] [--table]

Panels: (a) 1D async + wait / the caller's memcpy, by size; (b) 2D async + wait / one memcpy per
row, by shape; (c) every case by how long the caller's own copy takes, with the A/A noise of
the pair and the 0.95x line that applies from 2 us on; (d) async + compute + wait: the gain
over copy-then-compute on the caller, and the perfect-overlap gain. With --table, prints a
markdown table (and before/after ratios when --before is given) on stdout.
"""
import argparse
import json

STATES = [("hot", "awake"), ("hot", "parked"), ("cold", "awake"), ("cold", "parked")]
STYLE = {
    ("hot", "awake"): dict(color="tab:red", marker="o"),
    ("hot", "parked"): dict(color="tab:orange", marker="s"),
    ("cold", "awake"): dict(color="tab:blue", marker="^"),
    ("cold", "parked"): dict(color="tab:purple", marker="v"),
}


def load(path):
    with open(path) as f:
        return json.load(f)


def key(c):
    return (c["kind"], c["width"], c["height"], c["pitch"], c["temp"], c["threads"])


def misses_target(c):
    """The issue's criterion: from 2 us of the caller's own copy on, at least 0.95x."""
    return c["caller_ns"] >= 2000 and c["ratio"] < 0.95


def size_label(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def shape_label(c):
    return f"{size_label(c['width'])}B×{c['height']}\n@{size_label(c['pitch'])}"


def plot(data, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = data["cases"]
    ctx = data["context"]
    fig, ax = plt.subplots(2, 2, figsize=(15, 10))
    (a, b), (c, d) = ax

    for st in STATES:
        one = sorted((x for x in cases if x["kind"] == "1d" and (x["temp"], x["threads"]) == st),
                     key=lambda x: x["bytes"])
        if one:
            a.plot([x["bytes"] for x in one], [x["ratio"] for x in one], label=f"{st[0]}, threads {st[1]}",
                   **STYLE[st])
    a.set_xscale("log", base=2)
    a.set_yscale("log")
    a.axhline(0.95, color="k", ls="--", lw=1)
    a.axhline(1.0, color="gray", lw=0.5)
    a.set_xlabel("bytes")
    a.set_ylabel("caller memcpy time / (kupl_memcpy_async + wait)")
    a.set_title("(a) 1D: async + wait vs the caller's memcpy (>1: KUPL faster)")
    a.legend(fontsize=8)

    shapes = []
    for x in cases:
        if x["kind"] == "2d":
            s = (x["width"], x["height"], x["pitch"])
            if s not in shapes:
                shapes.append(s)
    shapes.sort()
    for i, st in enumerate(STATES):
        xs, ys = [], []
        for x in cases:
            if x["kind"] == "2d" and (x["temp"], x["threads"]) == st:
                xs.append(shapes.index((x["width"], x["height"], x["pitch"])) + (i - 1.5) * 0.15)
                ys.append(x["ratio"])
        if xs:
            b.scatter(xs, ys, label=f"{st[0]}, threads {st[1]}", **STYLE[st])
    b.set_xticks(range(len(shapes)))
    b.set_xticklabels([shape_label(dict(width=w, height=h, pitch=p)) for w, h, p in shapes], fontsize=7,
                      rotation=60)
    b.set_yscale("log")
    b.axhline(0.95, color="k", ls="--", lw=1)
    b.axhline(1.0, color="gray", lw=0.5)
    b.set_ylabel("memcpy per row / (kupl_memcpy2d_async + wait)")
    b.set_title("(b) 2D (width × rows @ source pitch)")
    b.legend(fontsize=8)

    for st in STATES:
        sel = [x for x in cases if (x["temp"], x["threads"]) == st]
        c.scatter([x["caller_ns"] / 1e3 for x in sel], [x["ratio"] for x in sel], s=18,
                  label=f"{st[0]}, threads {st[1]}", **STYLE[st])
    c.scatter([x["caller_ns"] / 1e3 for x in cases], [x["aa"] for x in cases], s=8, color="gray", marker="x",
              label="A/A: caller copy vs itself (noise)")
    c.set_xscale("log")
    c.set_yscale("log")
    c.axhline(0.95, color="k", ls="--", lw=1)
    c.axvline(2.0, color="k", ls=":", lw=1)
    c.set_xlabel("the caller's own copy, µs (median)")
    c.set_ylabel("ratio (>1: KUPL faster)")
    c.set_title("(c) every case by copy time; target ≥ 0.95× right of 2 µs")
    c.legend(fontsize=8)

    for st in STATES:
        one = sorted((x for x in cases if x["kind"] == "1d" and (x["temp"], x["threads"]) == st),
                     key=lambda x: x["bytes"])
        if one:
            d.plot([x["bytes"] for x in one], [x["gain"] for x in one], label=f"gain, {st[0]}/{st[1]}",
                   **STYLE[st])
            d.plot([x["bytes"] for x in one], [x["ideal_gain"] for x in one], ls=":", color=STYLE[st]["color"],
                   lw=1)
    d.set_xscale("log", base=2)
    d.axhline(1.0, color="gray", lw=0.5)
    d.set_xlabel("bytes (1D)")
    d.set_ylabel("(memcpy; compute) / (async; compute; wait)")
    d.set_title("(d) copy beside equal compute: gain over doing both on the caller (dotted: perfect)")
    d.legend(fontsize=8)

    load = ctx.get("load_after", [])
    runs = f" (then the median of {ctx['runs']} runs)" if ctx.get("runs") else ""
    fig.suptitle(f"kupl sweep: medians of {ctx['reps']} paired repetitions{runs}; {ctx['cores']} cores, "
                 f"{ctx['channels']} channel(s); load average after the run {load}", fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def table(data, before=None):
    old = {key(c): c for c in before["cases"]} if before else {}
    if before:
        print("| case | state | caller µs | before | after | A/A | gain (perfect) |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
    else:
        print("| case | state | caller µs | ratio | A/A | gain (perfect) | hidden |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
    for c in data["cases"]:
        state = f"{c['temp']}/{c['threads']}"
        if before:
            o = old.get(key(c))
            was = f"{o['ratio']:.2f}" if o else "–"
            print(f"| {c['name']} | {state} | {c['caller_ns'] / 1e3:.2f} | {was} | {c['ratio']:.2f} | "
                  f"{c['aa']:.2f} | {c['gain']:.2f} ({c['ideal_gain']:.2f}) |")
        else:
            print(f"| {c['name']} | {state} | {c['caller_ns'] / 1e3:.2f} | {c['ratio']:.2f} | {c['aa']:.2f} | "
                  f"{c['gain']:.2f} ({c['ideal_gain']:.2f}) | {100 * c['hidden']:.0f}% |")
    big = [c for c in data["cases"] if c["caller_ns"] >= 2000]
    short = [c for c in big if misses_target(c)]
    print(f"\ncases with the caller's copy >= 2 us: {len(big)}, below 0.95x: {len(short)}")
    small = [c for c in data["cases"] if c["caller_ns"] < 2000]
    for st in ("hot", "cold"):
        over = sorted(c["overhead_ns"] for c in small if c["temp"] == st)
        if over:
            print(f"below 2 us, {st}: API overhead median {over[len(over) // 2]:.0f} ns, worst {over[-1]:.0f} ns")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("json")
    p.add_argument("out", nargs="?")
    p.add_argument("--before")
    p.add_argument("--table", action="store_true")
    args = p.parse_args()
    data = load(args.json)
    if args.out:
        plot(data, args.out)
    if args.table:
        table(data, load(args.before) if args.before else None)


if __name__ == "__main__":
    main()
