#!/usr/bin/env python3
"""Compares two libraries' quick sweeps run in alternation (ab_sweep.sh): DIR/a.N.json against
DIR/b.N.json, pair N. Per case: the median over the pairs of each side's ratio (the caller's own
copy / async + wait) and gain (async + equal compute + wait against both serially), and in how
many pairs b's ratio was the higher (pairs of equal ratios count for neither side).

A case is called moved only when a two-sided sign test over its pairs gives p below
0.05 / (number of cases): on this kind of VM an A/A of one library against a copy of itself moved
single cases' medians by up to 0.2 and put 9 of 10 pairs on one side in some case of 54
(benchmarks/core/results/awake_count_2026-12-07.txt). For the quick sweep's 54 cases it takes 12
pairs or more, and with 12 only 12 of 12 (or 0 of 12) passes. That bounds the chance of calling
any case moved at 5% for independent pairs, but runs on a shared host are not quite that: an A/A
of 12 pairs here called one case moved (same file). So confirm a move in a second sitting; and
one not called may still be real if it repeats there.

Usage: compare_sweeps.py DIR [--all]   (--all: every case, not only those that moved)
Exit status 2 on a bad argument, or if DIR holds no complete pair or its pairs no common case."""
import glob
import json
import math
import re
import statistics
import sys

from plot_sweep import key, misses_target


def load_pairs(folder):
    """[(a_run, b_run)] for every N with both DIR/a.N.json and DIR/b.N.json."""
    runs = {}
    for path in glob.glob(f"{folder}/[ab].*.json"):
        match = re.search(r"/([ab])\.(\d+)\.json$", path)
        if match:
            with open(path) as f:
                runs[(match.group(1), int(match.group(2)))] = json.load(f)
    numbers = sorted(n for side, n in runs if side == "a" and ("b", n) in runs)
    return [(runs[("a", n)], runs[("b", n)]) for n in numbers]


def sign_test_p(higher, lower):
    """Two-sided p of `higher` pairs against `lower` (ties left out) when each side is equally
    likely."""
    pairs = higher + lower
    if pairs == 0:
        return 1.0
    tail = min(higher, lower)
    p = 2 * sum(math.comb(pairs, k) for k in range(tail + 1)) / 2**pairs
    return min(1.0, p)


def misses(run):
    """The run's cases that miss the issue's target (plot_sweep.misses_target)."""
    return sum(1 for c in run["cases"] if misses_target(c))


def main(argv):
    if len(argv) < 2 or any(arg != "--all" for arg in argv[2:]):
        print(__doc__, file=sys.stderr)
        return 2
    pairs = load_pairs(argv[1])
    show_all = "--all" in argv[2:]
    if not pairs:
        print(f"compare_sweeps: no pair of a.N.json and b.N.json in {argv[1]}", file=sys.stderr)
        return 2
    per_case = {}
    for a, b in pairs:
        b_cases = {key(c): c for c in b["cases"]}
        for c in a["cases"]:
            if key(c) in b_cases:
                per_case.setdefault(key(c), []).append((c, b_cases[key(c)]))
    if not per_case:
        print(f"compare_sweeps: the runs in {argv[1]} have no case in common", file=sys.stderr)
        return 2
    bar = 0.05 / len(per_case)
    print(f"{len(pairs)} pairs, {len(per_case)} cases; moved: sign test p < {bar:.4f}")
    if sign_test_p(len(pairs), 0) >= bar:
        print(f"(with {len(pairs)} pairs no case can be called moved: run more pairs)")
    print(f"{'case':<22} {'temp':<5} {'threads':<7} {'ratio a -> b':>13} {'b higher':>9} "
          f"{'gain a -> b':>12}  p")
    moved = 0
    for runs in per_case.values():
        first = runs[0][0]
        ratio_a = statistics.median(a["ratio"] for a, _ in runs)
        ratio_b = statistics.median(b["ratio"] for _, b in runs)
        higher = sum(1 for a, b in runs if b["ratio"] > a["ratio"])
        lower = sum(1 for a, b in runs if b["ratio"] < a["ratio"])
        p = sign_test_p(higher, lower)
        is_moved = p < bar
        moved += is_moved
        if show_all or is_moved:
            gain_a = statistics.median(a["gain"] for a, _ in runs)
            gain_b = statistics.median(b["gain"] for _, b in runs)
            print(f"{first['name']:<22} {first['temp']:<5} {first['threads']:<7} {ratio_a:5.2f} -> {ratio_b:4.2f} "
                  f"{higher:4d}/{len(runs):<4d} {gain_a:5.2f} -> {gain_b:4.2f}  {p:.4f}"
                  + ("  moved" if is_moved else ""))
    print(f"cases moved: {moved} of {len(per_case)}")
    a_misses = statistics.median(misses(a) for a, _ in pairs)
    b_misses = statistics.median(misses(b) for _, b in pairs)
    print(f"cases of 2 us or more below 0.95x, median per run: a {a_misses:g}, b {b_misses:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
