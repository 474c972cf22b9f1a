"""One measurement of pylibmc on whichever libmemcached.so.11 the loader gives this process
(bench/dropin/run_dropin_bench.py runs it on Debian's library and on the drop-in).
Usage: python3 pylibmc_ops.py PORT OP CALLS; prints "OP <client CPU microseconds per call>".
The client's CPU time (user + system) is taken around the loop only."""

import resource
import sys

import pylibmc


def cpu_us():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) * 1e6


def main():
    port, op, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mc = pylibmc.Client(["127.0.0.1:%s" % port])
    value = b"v" * 100
    keys = ["bench:py:%d" % i for i in range(100)]
    items = {k: value for k in keys}
    if mc.set_multi(items):
        sys.exit("set_multi failed")
    ok = True
    t0 = cpu_us()
    if op == "get":
        for _ in range(calls):
            ok = mc.get("bench:py:7") == value and ok
    elif op == "get_multi":
        for _ in range(calls):
            ok = len(mc.get_multi(keys)) == 100 and ok
    elif op == "set_multi":
        for _ in range(calls):
            ok = not mc.set_multi(items) and ok
    else:
        sys.exit("unknown op " + op)
    t1 = cpu_us()
    if not ok:
        sys.exit("%s: a call failed" % op)
    print("%s %.3f" % (op, (t1 - t0) / calls))


main()
