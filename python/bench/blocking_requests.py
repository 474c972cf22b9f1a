#!/usr/bin/env python3
"""Client CPU per blocking request other than get, folsom against pylibmc in one process and one
run: set, delete (of a missing key) and incr, each answer awaited. No target: it shows what the
other requests of the blocking client cost next to libmemcached's. Pinned to one core with the
private memcached, as bench.py is.

  python3 python/bench/blocking_requests.py [--runs 5] [--ops 40000] [--cpu 0]

Each number is the median over runs of (user + system time) / requests.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import start_memcached  # noqa: E402


def cpu_per_request(fn, ops):
    for _ in range(2000):  # warm-up
        fn()
    t = time.process_time()
    for _ in range(ops):
        fn()
    return (time.process_time() - t) / ops


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--ops", type=int, default=40000)
    ap.add_argument("--cpu", type=int, default=0)
    a = ap.parse_args()
    os.sched_setaffinity(0, {a.cpu})
    proc, port = start_memcached(a.cpu)
    try:
        import folsom
        import pylibmc

        addr = "127.0.0.1:%d" % port
        fc = folsom.Client(addr, protocol="ascii")
        pc = pylibmc.Client([addr], behaviors={"tcp_nodelay": True})
        fc.set("bench:n", b"0")
        value = b"v" * 64
        cases = {
            ("set", "folsom (ascii)"): lambda: fc.set("bench:s", value),
            ("set", "pylibmc"): lambda: pc.set("bench:s", value),
            ("delete", "folsom (ascii)"): lambda: fc.delete("bench:missing"),
            ("delete", "pylibmc"): lambda: pc.delete("bench:missing"),
            ("incr", "folsom (ascii)"): lambda: fc.incr("bench:n", 1),
            ("incr", "pylibmc"): lambda: pc.incr("bench:n", 1),
        }
        samples = {k: [] for k in cases}
        for _ in range(a.runs):
            for k, fn in cases.items():
                samples[k].append(cpu_per_request(fn, a.ops))
    finally:
        proc.kill()
        proc.wait()
    print("| request | client | µs CPU, median | runs |")
    print("|---|---|---:|---|")
    for (req, client), v in samples.items():
        print("| %s | %s | %.2f | %s |" % (req, client, statistics.median(v) * 1e6,
                                          ", ".join("%.2f" % (x * 1e6) for x in v)))
    for req in ("set", "delete", "incr"):
        f = statistics.median(samples[(req, "folsom (ascii)")])
        p = statistics.median(samples[(req, "pylibmc")])
        print("%s: folsom / pylibmc = %.2f" % (req, f / p))


if __name__ == "__main__":
    sys.exit(main())
