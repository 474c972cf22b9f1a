#!/usr/bin/env python3
"""Client CPU of a reconnect, folsom's against pymemcache's, side by side in one run against one
private memcached, the server and this process pinned to one core (taskset -c 0 by default).

What Django's PyMemcacheCache does per request (disconnect_all at request_finished, then the
next request connects again) in its smallest form, one HashClient of one server each:

  cycle   close()/disconnect_all(), get, set: CPU us per cycle, and context switches of this
          process per cycle (getrusage)
  steady  get, set on a connection kept open (folsom only: pymemcache's set on a kept
          connection waits for Nagle's delayed ACK, no_delay being off by default)
  close   folsom's close() alone, and its first get after it (the reconnect itself)

  python3 python/bench/reconnect_bench.py [--reps 5] [--cycles 3000] [--cpu 0]

Each figure is the median of --reps repetitions, the clients interleaved rep by rep.
"""

import argparse
import os
import resource
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import start_memcached  # noqa: E402


def switches():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_nvcsw + r.ru_nivcsw


def measure(fn, n):
    """(CPU us, context switches) per call of fn, over n calls."""
    s, t = switches(), time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t) / n * 1e6, (switches() - s) / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cycles", type=int, default=3000)
    ap.add_argument("--cpu", type=int, default=0)
    args = ap.parse_args()
    os.sched_setaffinity(0, {args.cpu})
    proc, port = start_memcached(args.cpu)
    try:
        import folsom
        import pymemcache.client.hash
        server = "127.0.0.1:%d" % port
        ours = folsom.HashClient([server])
        theirs = pymemcache.client.hash.HashClient([server])
        ours.set("k", b"v")
        theirs.set("k", b"v")

        def ours_cycle():
            ours.close()
            ours.get("k")
            ours.set("k", b"v")

        def theirs_cycle():
            theirs.disconnect_all()
            theirs.get("k")
            theirs.set("k", b"v")

        def ours_steady():
            ours.get("k")
            ours.set("k", b"v")

        def ours_close_then_get():
            ours.close()
            t = time.process_time()
            ours.get("k")
            first_get.append(time.process_time() - t)

        cases = {"folsom cycle": ours_cycle, "pymemcache cycle": theirs_cycle,
                 "folsom steady": ours_steady, "folsom close + first get": ours_close_then_get}
        results = {name: [] for name in cases}
        first_gets = []
        for _ in range(args.reps):
            for name, fn in cases.items():
                first_get = []
                results[name].append(measure(fn, args.cycles))
                if first_get:
                    first_gets.append(statistics.mean(first_get) * 1e6)
        print("| case | µs CPU per call | context switches per call |")
        print("|---|---:|---:|")
        for name, rs in results.items():
            print("| %s | %.1f | %.2f |" % (name, statistics.median(r[0] for r in rs),
                                             statistics.median(r[1] for r in rs)))
        print("| folsom first get after close | %.1f | |" % statistics.median(first_gets))
        ours_c = statistics.median(r[0] for r in results["folsom cycle"])
        theirs_c = statistics.median(r[0] for r in results["pymemcache cycle"])
        steady = statistics.median(r[0] for r in results["folsom steady"])
        print("\nreconnect cycle: folsom / pymemcache = %.2f; folsom's reconnect costs %.1f us "
              "over a kept connection" % (ours_c / theirs_c, ours_c - steady))
        ours.close()
        theirs.close()
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
