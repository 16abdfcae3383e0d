#!/usr/bin/env python3
"""Writes the API fuzzer's seed corpus (corpus/seed-*): short programs in the driver's input
format (see api_fuzzer.cpp: one byte per op code, then that op's argument bytes), each aimed at
one area, so the fuzzer starts from inputs that already reach deep into the runtime."""
import os
import random
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")

# Op codes (LLVMFuzzerTestOneInput's switch).
QC, QD, EC, ED, ER, EW, EQ, EGE, QW, QWE, QWEA, CPY, CPY2, SCPY, SCPY2, SUB, ACQ, WALL, FAULT, BATCH = range(20)

def q_slot(i): return bytes([i])          # owned queue slot 0..3
def q_acq(i): return bytes([8 + i])       # acquired: 0 = KUPL_ASYNC_SYNC, 1..3 = indices 0..2
Q_NULL = bytes([12])
def e_slot(i): return bytes([i])          # event slot 0..3
E_NULL = bytes([4])
E_WRONG_KIND = bytes([5])
E_MADE_UP = bytes([7])
def u16(v): return struct.pack("<H", v)
def u32(v): return struct.pack("<I", v)

def size(n):
    """pick_size: class 5 takes a u32 (mod 64 KiB); class 6 a u32 mod (512 KiB + 1)."""
    if n == 0: return bytes([0])
    if n <= 64: return bytes([1, n])
    if n <= 4096: return bytes([3]) + u16(n)
    if n < 65536: return bytes([5]) + u32(n)
    return bytes([6]) + u32(n)

def mode(dst_buf, src_buf, bad=0): return bytes([dst_buf | (src_buf << 2) | (bad << 4)])

def copy1d(n, doff, soff, q, e, dst_buf=0, src_buf=1, bad=0):
    return bytes([CPY]) + mode(dst_buf, src_buf, bad) + size(n) + u32(doff) + u32(soff) + (bytes([1]) if bad == 15 else b"") + q + e

def copy2d(width, height, dextra, sextra, doff, soff, q, e, dst_buf=2, src_buf=3, bad=0, sync=False):
    body = mode(dst_buf, src_buf, bad) + size(width) + bytes([height])
    body += (bytes([1]) + u16(dextra)) if dextra else bytes([0])
    body += (bytes([1]) + u16(sextra)) if sextra else bytes([0])
    body += u32(doff) + u32(soff)
    if bad == 14: body += bytes([0])
    if bad == 15: body += bytes([3])
    return bytes([SCPY2 if sync else CPY2]) + body + (b"" if sync else q + e)

def queue_create(slot, prio=1): return bytes([QC, slot, prio + 1])
def submit(q, by_value=False, self_call=0, bad=3): return bytes([SUB]) + q + bytes([int(by_value) | (self_call << 1) | (bad << 4)])

seeds = {
    "basic-copy-event": queue_create(0) + bytes([EC, 0]) + copy1d(1000, 0, 0, q_slot(0), e_slot(0))
        + bytes([EW]) + e_slot(0) + bytes([QW]) + q_slot(0) + bytes([EQ]) + e_slot(0),
    "large-split-copy": queue_create(1, 3) + copy1d(400000, 4096, 100, q_slot(1), E_NULL)
        + copy1d(70000, 1, 3, q_slot(1), E_NULL, 1, 0) + bytes([QW]) + q_slot(1),
    "copy2d-narrow-rows": queue_create(0) + bytes([EC, 1]) + copy2d(7, 120, 100, 33, 10, 20, q_slot(0), e_slot(1))
        + copy2d(64, 100, 4096, 0, 0, 0, q_slot(0), E_NULL, 0, 1) + bytes([EW]) + e_slot(1),
    "sync-copies": bytes([SCPY]) + mode(0, 1) + size(5000) + u32(3) + u32(7)
        + copy2d(33, 50, 17, 1000, 0, 0, b"", b"", 1, 2, sync=True),
    "cross-queue-wait": queue_create(0) + queue_create(1) + bytes([EC, 0])
        + copy1d(50000, 0, 0, q_slot(0), E_NULL) + bytes([ER]) + e_slot(0) + q_slot(0)
        + bytes([QWEA]) + q_slot(1) + e_slot(0) + submit(q_slot(1)) + bytes([QWE]) + q_slot(1) + e_slot(0),
    "host-items-by-value": queue_create(2) + copy1d(3000, 0, 0, q_slot(2), E_NULL)
        + submit(q_slot(2), by_value=True) + submit(q_slot(2), self_call=1) + submit(q_slot(2), self_call=2)
        + bytes([QW]) + q_slot(2),
    "null-queue-copies": bytes([EC, 2]) + copy1d(20000, 0, 0, Q_NULL, e_slot(2)) + copy1d(100, 50000, 0, Q_NULL, E_NULL)
        + bytes([ED]) + e_slot(2),
    "acquired-queues": bytes([ACQ, 2, ACQ, 3, ACQ, 0]) + copy1d(2000, 0, 0, q_acq(1), E_NULL)
        + copy1d(2000, 4000, 4000, q_acq(0), E_NULL) + submit(q_acq(0)) + submit(q_acq(2)) + bytes([WALL]),
    "bad-handles": queue_create(0) + bytes([QD]) + q_slot(0) + copy1d(10, 0, 0, q_slot(0), E_NULL)
        + bytes([EC, 0, ED]) + e_slot(0) + bytes([EW]) + e_slot(0) + bytes([QW, 13, QW, 15])
        + copy1d(10, 0, 0, Q_NULL, E_WRONG_KIND) + copy1d(10, 0, 0, Q_NULL, E_MADE_UP)
        + bytes([EGE]) + E_MADE_UP + bytes([7]),
    "bad-copies": queue_create(0) + copy1d(100, 0, 0, q_slot(0), E_NULL, bad=12)
        + copy1d(100, 0, 0, q_slot(0), E_NULL, bad=13) + copy1d(100, 0, 0, q_slot(0), E_NULL, bad=15)
        + copy2d(100, 10, 10, 10, 0, 0, q_slot(0), E_NULL, bad=14) + copy2d(100, 10, 10, 10, 0, 0, q_slot(0), E_NULL, bad=15)
        + copy1d(0, 0, 0, q_slot(0), E_NULL, bad=12) + bytes([QW]) + q_slot(0),
    "faults": queue_create(0) + bytes([EC, 0, FAULT, 1]) + copy1d(100, 0, 0, q_slot(0), e_slot(0))
        + copy1d(30000, 0, 0, q_slot(0), E_NULL) + copy1d(100, 0, 0, Q_NULL, E_NULL)
        + bytes([EW]) + e_slot(0) + bytes([EGE]) + e_slot(0) + bytes([255])
        + bytes([ER]) + e_slot(0) + q_slot(0) + bytes([EW]) + e_slot(0) + bytes([QW]) + q_slot(0),
    "item-submits-to-own-queue": queue_create(0) + submit(q_slot(0), self_call=7) + bytes([QW]) + q_slot(0),
    "rerecord-in-flight": queue_create(0) + bytes([EC, 0]) + copy1d(300000, 0, 0, q_slot(0), e_slot(0))
        + bytes([ER]) + e_slot(0) + q_slot(0) + bytes([EQ]) + e_slot(0) + bytes([ED]) + e_slot(0)
        + bytes([QD]) + q_slot(0),
}

def main():
    os.makedirs(OUT, exist_ok=True)
    for name, ops in seeds.items():
        with open(os.path.join(OUT, "seed-" + name), "wb") as f:
            f.write(bytes([1]) + ops)
    rng = random.Random(20261203)
    for i in range(6):
        with open(os.path.join(OUT, "seed-random-%d" % i), "wb") as f:
            f.write(bytes(rng.randrange(256) for _ in range(rng.randrange(40, 300))))

if __name__ == "__main__":
    main()
