#!/usr/bin/env python3
"""Combines runs of mpi_realcode_bench (its --json files) into one summary.

For every case (pattern x size) and every paired ratio the value is the median over runs of each
run's median (each run's median is itself over rounds in which the variants ran side by side).
The A/A ratio (plain Open MPI against itself) gives the noise band: per case, the median over
runs of the per-run 95% interval of the A/A median. The interposer counts as slower (faster) than
plain Open MPI in a case only if a majority of runs say so (each run judges against its own
A/A). Writes OUT/summary.json, OUT/table.md and, with matplotlib, OUT/ratios.png and .svg.

usage: realcode_report.py --out DIR run1.json [run2.json ...]
"""
import argparse
import json
import math
import os
import statistics
import sys

RATIOS = ["kupl/hand", "plain/hand", "kupl/plain", "plain2/plain"]


def median(values):
    values = [v for v in values if v is not None and not math.isnan(v)]
    return statistics.median(values) if values else None


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def combine(runs):
    cases = {}
    order = []
    for run in runs:
        for c in run["cases"]:
            key = (c["pattern"], c["size"])
            if key not in cases:
                cases[key] = []
                order.append(key)
            cases[key].append(c)
    out = []
    for key in order:
        per_run = cases[key]
        row = {
            "pattern": key[0],
            "size": key[1],
            "payload_bytes": per_run[0]["payload_bytes"],
            "runs": len(per_run),
            "verified": all(v is not False for c in per_run for v in c["verified"].values()),
            "time_us": {},
            "ratio": {},
            "ratio_range": {},
        }
        for variant in ["hand", "plain", "kupl", "plain2"]:
            row["time_us"][variant] = median(
                [c["time_us"][variant]["median"] for c in per_run if c["time_us"][variant]])
        for name in RATIOS:
            meds = [c["ratio"][name]["median"] for c in per_run if c["ratio"][name]]
            row["ratio"][name] = median(meds)
            row["ratio_range"][name] = [min(meds), max(meds)] if meds else None
        aa = [c["ratio"]["plain2/plain"] for c in per_run if c["ratio"]["plain2/plain"]]
        row["aa_band"] = [median([a["lo"] for a in aa]), median([a["hi"] for a in aa])] if aa else None
        verdicts = [c["verdict"] for c in per_run]
        row["verdicts"] = verdicts
        majority = len(per_run) // 2 + 1
        row["verdict"] = ("slower" if verdicts.count("slower") >= majority else
                          "faster" if verdicts.count("faster") >= majority else "same")
        out.append(row)
    return out


def noise_counts(runs):
    """Per run: how many cases' A/A medians lie outside +-3% and +-15%."""
    counts = []
    for run in runs:
        aa = [c["ratio"]["plain2/plain"]["median"] for c in run["cases"] if c["ratio"]["plain2/plain"]]
        counts.append({
            "cases": len(aa),
            "outside_3pct": sum(abs(a - 1) > 0.03 for a in aa),
            "outside_15pct": sum(abs(a - 1) > 0.15 for a in aa),
        })
    return counts


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def table(rows, summary):
    lines = [
        "| case | payload B | hand µs | plain µs | kupl µs | kupl/hand | plain/hand | kupl/plain | A/A "
        "(95% band) | kupl vs plain |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        t, q = r["time_us"], r["ratio"]
        band = r["aa_band"]
        lines.append(
            f"| {r['pattern']} {r['size']} | {r['payload_bytes']} | {fmt(t['hand'], 1)} | {fmt(t['plain'], 1)} | "
            f"{fmt(t['kupl'], 1)} | {fmt(q['kupl/hand'])} | {fmt(q['plain/hand'])} | {fmt(q['kupl/plain'])} | "
            f"{fmt(q['plain2/plain'])} ({fmt(band[0]) if band else '-'}–{fmt(band[1]) if band else '-'}) | "
            f"{r['verdict']} ({''.join({'slower': '+', 'faster': '-'}.get(v, '=') for v in r['verdicts'])}){'' if r['verified'] else ' VERIFY-FAILED'} |")
    g = summary["geomean"]
    lines.append("")
    lines.append(f"Geometric means over {len(rows)} cases: " +
                 ", ".join(f"{k} {fmt(g[k], 3)}" for k in RATIOS) + ".")
    lines.append(f"Interposer vs plain Open MPI (majority of {summary['runs']} runs, each judged against its own "
                 f"A/A): {summary['verdicts']['slower']} slower, {summary['verdicts']['faster']} faster, "
                 f"{summary['verdicts']['same']} within noise.")
    lines.append("A/A noise per run (cases whose plain2/plain median is off by more than 3% / 15%): " +
                 ", ".join(f"{n['outside_3pct']}/{n['outside_15pct']} of {n['cases']}" for n in summary["noise"]) +
                 ".")
    return "\n".join(lines) + "\n"


def plot(rows, path_base):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("realcode_report.py: no matplotlib (apt-get install python3-matplotlib): no plot", file=sys.stderr)
        return False
    n = len(rows)
    fig, ax = plt.subplots(figsize=(max(8, 0.28 * n + 2), 6))
    xs = list(range(n))
    for x, r in zip(xs, rows):
        if r["aa_band"] and r["aa_band"][0]:
            lo, hi = r["aa_band"]
            ax.add_patch(matplotlib.patches.Rectangle((x - 0.4, lo), 0.8, hi - lo, color="0.85", zorder=0,
                                                      label="A/A 95% band (plain vs plain)" if x == 0 else None))
    styles = [("kupl/hand", "o", "tab:blue"), ("plain/hand", "s", "tab:orange"), ("kupl/plain", "^", "tab:green")]
    for i, (name, marker, color) in enumerate(styles):
        pts = [(x + (i - 1) * 0.22, r["ratio"][name], r["ratio_range"][name]) for x, r in zip(xs, rows)
               if r["ratio"][name]]
        if not pts:
            continue
        ax.errorbar([p[0] for p in pts], [p[1] for p in pts],
                    yerr=[[p[1] - p[2][0] for p in pts], [p[2][1] - p[1] for p in pts]],
                    fmt=marker, color=color, markersize=4, elinewidth=0.8, capsize=0, label=name, zorder=3)
    # The axis follows the ratios, not the noise bands: a band can reach 0.001x when a sample
    # of plain caught a stall; it is then clipped (and the table gives its numbers).
    values = [v for r in rows for name, _, _ in styles for v in [r["ratio"][name]] + (r["ratio_range"][name] or [])
              if v]
    if values:
        ax.set_ylim(max(0.05, min(values) / 1.5), min(50, max(values) * 1.5))
    # A thin line between pattern families.
    for x in range(1, n):
        if rows[x]["pattern"].split("_")[0] != rows[x - 1]["pattern"].split("_")[0]:
            ax.axvline(x - 0.5, color="0.6", linewidth=0.5)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(1.1, color="tab:red", linewidth=0.8, linestyle="--", label="1.1x target")
    ax.set_yscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{r['pattern']} {r['size']}" for r in rows], rotation=90, fontsize=7)
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylabel("time ratio, paired per round (median over runs; bars: range)")
    ax.set_title("Real-code patterns, 2 ranks: interposer (kupl), plain Open MPI and hand-packing")
    ax.legend(fontsize=8, loc="upper left", framealpha=0.9)
    ax.grid(axis="y", which="both", linewidth=0.3)
    fig.tight_layout()
    fig.savefig(path_base + ".png", dpi=120)
    fig.savefig(path_base + ".svg")
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    runs = []
    for f in args.runs:
        with open(f) as fh:
            runs.append(json.load(fh))
    rows = combine(runs)
    summary = {
        "runs": len(runs),
        "path": sorted({r["path"] for r in runs}),
        "geomean": {k: geomean([r["ratio"][k] for r in rows]) for k in RATIOS},
        "verdicts": {v: sum(r["verdict"] == v for r in rows) for v in ["slower", "faster", "same"]},
        "noise": noise_counts(runs),
        "all_verified": all(r["verified"] for r in rows),
        "cases": rows,
    }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1)
    text = table(rows, summary)
    with open(os.path.join(args.out, "table.md"), "w") as fh:
        fh.write(text)
    print(text)
    if plot(rows, os.path.join(args.out, "ratios")):
        print(f"plot: {os.path.join(args.out, 'ratios.png')} and .svg")
    return 0 if summary["all_verified"] else 1


if __name__ == "__main__":
    sys.exit(main())
