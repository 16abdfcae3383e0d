#!/usr/bin/env python3
"""Runs a program traced (KUPL_TRACE) and checks the trace file it wrote.

Usage: check_trace.py CASE PROGRAM [ARGS...]; the work folder is $KUPL_TRACE_WORK.
Checks common to every trace: the file is valid JSON as written (a JSON array, closed), nothing
was dropped, slices nest on every track, and every flow arrow has one start and one end, each
inside a slice of its track. Then what CASE must contain (see the case functions).
"""
import glob
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "core", "trace"))

WORK = os.environ["KUPL_TRACE_WORK"]
QUEUE_TRACK = 1 << 30


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def run(program, trace, extra_env=None, args=()):
    env = dict(os.environ)
    env.pop("KUPL_LOG_LEVEL", None)
    env["KUPL_TRACE"] = trace
    env.update(extra_env or {})
    result = subprocess.run([program, *args], env=env, capture_output=True, text=True, timeout=100)
    expect(result.returncode == 0, f"{program} exited {result.returncode}: {result.stdout}{result.stderr}")
    return result


def ns(value):
    return round(value * 1000)


def load(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        events = json.loads(text)  # as written: a closed JSON array, as Perfetto reads it
    except json.JSONDecodeError as e:
        fail(f"{path} is not valid JSON: {e}")
    expect(isinstance(events, list) and events, f"{path}: not a non-empty array")
    end = [e for e in events if e["ph"] == "M" and e["name"] == "kupl_trace_end"]
    expect(len(end) == 1 and end[0] is events[-1], f"{path}: not closed by kupl_trace_end")
    expect(end[0]["args"]["dropped_events"] == 0, f"{path}: {end[0]['args']['dropped_events']} events dropped")
    for e in events:
        for key in ("ph", "cat", "name", "pid", "tid", "ts"):
            expect(key in e, f"event without {key}: {e}")
    return events


def slices_by_track(events):
    tracks = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            tracks[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e))
    return tracks


def check_nesting(events):
    for track, slices in slices_by_track(events).items():
        stack = []
        for start, end, e in sorted(slices, key=lambda s: (s[0], -s[1])):
            while stack and start >= stack[-1][1]:
                stack.pop()
            if stack and end > stack[-1][1]:
                fail(f"track {track}: {e['name']} [{start}, {end}] overlaps "
                     f"{stack[-1][2]['name']} [{stack[-1][0]}, {stack[-1][1]}] without nesting")
            stack.append((start, end, e))


def enclosing(tracks, pid, tid, t):
    return [e for start, end, e in tracks.get((pid, tid), []) if start <= t <= end]


def check_flows(events):
    tracks = slices_by_track(events)
    flows = defaultdict(list)
    for e in events:
        if e["ph"] in "sf":
            flows[e["id"]].append(e)
    for fid, ends in flows.items():
        phases = sorted(e["ph"] for e in ends)
        expect(phases == ["f", "s"], f"flow {fid}: ends {phases}, not one start and one finish")
        for e in ends:
            expect(enclosing(tracks, e["pid"], e["tid"], ns(e["ts"])),
                   f"flow {fid}: its {e['ph']} at {e['ts']} on track {e['tid']} is inside no slice")
    return flows


def common_checks(path):
    events = load(path)
    check_nesting(events)
    flows = check_flows(events)
    return events, flows


def track_names(events):
    return {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}


def flow_targets(events, flows, tracks=None):
    """(source slice, target slice) for every arrow."""
    tracks = tracks or slices_by_track(events)
    pairs = []
    for ends in flows.values():
        s = next(e for e in ends if e["ph"] == "s")
        f = next(e for e in ends if e["ph"] == "f")
        src = enclosing(tracks, s["pid"], s["tid"], ns(s["ts"]))
        dst = enclosing(tracks, f["pid"], f["tid"], ns(f["ts"]))
        pairs.append((s, f, src[-1] if src else None, dst[-1] if dst else None))
    return pairs


# ---- cases


def case_seed(program):
    mib = 8
    path = os.path.join(WORK, "seed.json")
    run(program, path, args=[str(mib)])
    events, flows = common_checks(path)
    names = track_names(events)
    expect(sorted(n for t, n in names.items() if t >= QUEUE_TRACK) == ["queue 1 (priority 0)", "queue 2 (priority 0)"],
           f"queue tracks: {names}")
    expect(any(n.startswith("copy channel") for n in names.values()), "no copy channel track")
    expect(any(n.startswith("executor") for n in names.values()), "no executor track")
    # Every copy: 3 calibration copies and 7 x (alone + together), each 8 MiB, each on queue 1,
    # each with the threads that did it and pieces (or an inline run) adding up to its bytes.
    copies = [e for e in events if e["ph"] == "X" and e["cat"] == "copy" and e["tid"] >= QUEUE_TRACK]
    expect(len(copies) == 17, f"{len(copies)} copies on queue tracks, expected 17")
    q1 = next(t for t, n in names.items() if n.startswith("queue 1 "))
    pieces = defaultdict(int)
    for e in events:
        if e["ph"] == "X" and e["cat"] == "copy" and e["tid"] < QUEUE_TRACK:
            pieces[e["args"]["copy"]] += e["args"]["bytes"]
    for c in copies:
        a = c["args"]
        expect(c["tid"] == q1 and a["bytes"] == mib << 20 and a["shape"] == "1D", f"copy {a}")
        expect(a["threads"] and a["gbps"] > 0, f"copy without threads or rate: {a}")
        expect(pieces[a["copy"]] == a["bytes"], f"copy {a['copy']}: pieces add up to {pieces[a['copy']]}")
        expect("error" not in a, f"copy failed: {a}")
    items = [e for e in events if e["ph"] == "X" and e["cat"] == "item"]
    expect(sum(e["tid"] >= QUEUE_TRACK for e in items) == 14, "14 host items on queue 2 expected")
    expect(sum(e["tid"] < QUEUE_TRACK for e in items) == 14, "14 host items on executor threads expected")
    # Each kupl_event_wait has an arrow from the copy that completed its event.
    waits = [e for e in events if e["ph"] == "X" and e["name"] == "kupl_event_wait"]
    expect(len(waits) == 17, f"{len(waits)} kupl_event_wait slices, expected 17")
    into = {id(dst) for s, f, src, dst in flow_targets(events, flows) if src is not None and src["cat"] == "copy"}
    expect(all(id(w) in into for w in waits), "a kupl_event_wait without an arrow from its copy")
    expect(sum(e["name"] == "kupl_queue_wait" for e in events if e["ph"] == "X") == 14, "kupl_queue_wait slices")
    print(f"seed: {len(events)} events, 17 copies, 28 item slices, {len(flows)} arrows: ok")


def case_program(program):
    path = os.path.join(WORK, "program.json")
    run(program, path)
    events, flows = common_checks(path)
    names = track_names(events)
    queue = {n.split(" (")[0]: t for t, n in names.items() if t >= QUEUE_TRACK}
    x = [e for e in events if e["ph"] == "X"]
    copies = [e for e in x if e["cat"] == "copy" and e["name"].startswith("copy ") and "queue" in e["args"]]
    by_bytes = Counter((e["args"]["bytes"], e["args"]["shape"], e["tid"]) for e in copies)
    expect(by_bytes[(4 << 20, "1D", queue["queue 1"])] == 1, f"4 MiB copy on queue 1: {by_bytes}")
    two_d = [e for e in copies if e["args"]["shape"] == "2D"]
    expect(len(two_d) == 1 and two_d[0]["args"]["bytes"] == 512 * 64 and two_d[0]["args"]["height"] == 512
           and two_d[0]["args"]["width"] == 64 and two_d[0]["args"]["dpitch"] == 256, f"2D copy: {two_d}")
    failed = [e for e in copies if "error" in e["args"]]
    expect(len(failed) == 1 and failed[0]["args"]["bytes"] == 64 and "injected" in failed[0]["args"]["error"],
           f"failed copy: {failed}")
    expect(by_bytes[(64 << 10, "1D", queue["queue 4"])] == 1, f"acquired-queue copy: {by_bytes} {queue}")
    sync = [e for e in copies if e["args"]["bytes"] == 1000]
    expect(len(sync) == 1 and sync[0]["tid"] < QUEUE_TRACK, f"synchronous-queue copy on its caller: {sync}")
    unordered = [e for e in events if e["ph"] == "b" and e["cat"] == "copy"]
    expect(len(unordered) == 1 and unordered[0]["args"]["bytes"] == 100000, f"unordered copy: {unordered}")
    expect(sum(e["ph"] == "e" and e["id"] == unordered[0]["id"] for e in events) == 1, "unordered copy's end")
    memcpy = [e for e in x if e["name"] == "kupl_memcpy"]
    expect(len(memcpy) == 1 and memcpy[0]["args"]["bytes"] == 1 << 20, f"kupl_memcpy: {memcpy}")
    items = [e for e in x if e["cat"] == "item"]
    expect(Counter(e["name"] for e in items) == {'stencil "A"': 2, "host item": 2}, f"items: {items}")
    # The cross-queue wait: queue 2's "wait e1" slice has an arrow from queue 1's record of e1.
    pairs = flow_targets(events, flows)
    cross = [(src, dst) for s, f, src, dst in pairs
             if dst is not None and dst["cat"] == "wait" and dst["tid"] == queue["queue 2"]]
    expect(len(cross) == 1 and cross[0][0] is not None and cross[0][0]["tid"] == queue["queue 1"]
           and cross[0][0]["name"].startswith("record e"), f"cross-queue arrow: {cross}")
    # Each kupl_event_record call has an arrow to the record's completion on its queue.
    records = [(src, dst) for s, f, src, dst in pairs if src is not None and src["name"] == "kupl_event_record"]
    expect(len(records) == 2 and all(d is not None and d["name"].startswith("record e") for _, d in records),
           f"record arrows: {records}")
    errors = [e for e in events if e["ph"] == "i" and e["cat"] == "error"]
    calls = Counter(e["args"].get("call") for e in errors)
    expect(calls["kupl_memcpy"] == 1 and calls["kupl_event_wait"] == 1 and calls["kupl_queue_wait"] == 1,
           f"error instants: {calls}")
    expect(any(e["args"].get("error", "").startswith("injected") for e in errors), "failed copy's error instant")
    print(f"program: {len(events)} events, {len(copies)} copies, {len(flows)} arrows: ok")


def case_unwritable(program):
    path = os.path.join(WORK, "no", "such", "folder", "t.json")
    result = run(program, path)
    expect(result.stdout.strip() == "trace_program: ok", f"stdout: {result.stdout}")
    expected = f"kupl: cannot write the trace to {path} (KUPL_TRACE): No such file or directory; tracing is off"
    expect(result.stderr.splitlines() == [expected], f"stderr: {result.stderr!r}")
    quiet = run(program, path, {"KUPL_LOG_LEVEL": "0"})
    expect(quiet.stderr == "", f"KUPL_LOG_LEVEL=0 still printed: {quiet.stderr!r}")
    print("unwritable: one line, the program unaffected: ok")


def case_pid_in_name(program):
    for old in glob.glob(os.path.join(WORK, "t-*.json")):
        os.remove(old)
    run(program, os.path.join(WORK, "t-%p.json"))
    files = glob.glob(os.path.join(WORK, "t-*.json"))
    expect(len(files) == 1, f"files: {files}")
    pid = int(re.search(r"t-(\d+)\.json$", files[0]).group(1))
    events, _ = common_checks(files[0])
    expect(all(e["pid"] == pid for e in events), "events of another pid")
    print(f"pid_in_name: {os.path.basename(files[0])}: ok")


def main():
    case, program, *rest = sys.argv[1:]
    os.makedirs(WORK, exist_ok=True)
    globals()["case_" + case](program, *rest)


if __name__ == "__main__":
    main()
