#!/usr/bin/env python3
"""Client CPU per memcached request, folsom against pylibmc and pymemcache, side by side in one
run against one private memcached. The server and this process (every thread of it: folsom's
I/O thread too) are pinned to one core (taskset -c 0 by default), so client and server share it
as in the C++ e2e bench. CPU is this process's user + system time (time.process_time: every
thread, system calls included).

Cases:
  get        sequential get of one 64-byte value: CPU us per get
  set        sequential set of one 64-byte value, each answer awaited: CPU us per set (no
             target: for comparison)
  get_many   get_many of 100 keys (64-byte values): CPU us per key
  asyncio    1,000 concurrent gets: gets per CPU second of folsom.AsyncClient, against a
             pymemcache thread pool (16 threads, a client each) doing the same 1,000 gets

  python3 python/bench/bench.py [--runs 3] [--reps 5] [--cpu 0]

Each run interleaves the clients rep by rep and takes each one's median; the table gives the
median over runs, with every run's value, and the ratios the issue asks for.
"""

import argparse
import asyncio
import concurrent.futures
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_memcached(cpu):
    port = free_port()
    args = ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-t", "1", "-m", "256"]
    if os.geteuid() == 0:
        args += ["-u", "root"]
    if shutil.which("taskset"):
        args = ["taskset", "-c", str(cpu)] + args
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.02)
    proc.kill()
    raise RuntimeError("memcached did not start")


def cpu_per(fn, n):
    """CPU seconds per unit of `fn()` doing `n` units."""
    t = time.process_time()
    fn()
    return (time.process_time() - t) / n


def make_clients(port):
    import folsom
    import pylibmc
    import pymemcache

    addr = "127.0.0.1:%d" % port
    return {
        "folsom (meta)": folsom.Client(addr, protocol="meta"),
        "folsom (ascii)": folsom.Client(addr, protocol="ascii"),
        "pylibmc": pylibmc.Client([addr], behaviors={"tcp_nodelay": True}),
        "pymemcache": pymemcache.Client(("127.0.0.1", port), no_delay=True),
    }


def bench_get(clients, ops, reps):
    for c in clients.values():
        c.set("bench:k", b"v" * 64)
    samples = {name: [] for name in clients}
    for _ in range(reps):
        for name, c in clients.items():
            get = c.get

            def loop():
                for _ in range(ops):
                    get("bench:k")

            samples[name].append(cpu_per(loop, ops))
    return {name: statistics.median(v) for name, v in samples.items()}


def bench_set(clients, ops, reps):
    value = b"v" * 64
    samples = {name: [] for name in clients}
    for _ in range(reps):
        for name, c in clients.items():
            set_ = c.set

            def loop():
                for _ in range(ops):
                    set_("bench:s", value)

            def loop_pymemcache():  # its default is noreply: every client waits for the answer
                for _ in range(ops):
                    set_("bench:s", value, 0, False)  # (key, value, expire, noreply)

            if name == "pymemcache":
                loop = loop_pymemcache

            samples[name].append(cpu_per(loop, ops))
    return {name: statistics.median(v) for name, v in samples.items()}


def bench_get_many(clients, calls, reps):
    keys = ["bench:m%d" % i for i in range(100)]
    first = next(iter(clients.values()))
    first.set_many({k: b"v" * 64 for k in keys})
    samples = {name: [] for name in clients}
    for _ in range(reps):
        for name, c in clients.items():
            many = c.get_multi if name == "pylibmc" else c.get_many
            assert len(many(keys)) == 100

            def loop():
                for _ in range(calls):
                    many(keys)

            samples[name].append(cpu_per(loop, calls * len(keys)))
    return {name: statistics.median(v) for name, v in samples.items()}


def bench_asyncio(port, rounds, reps):
    import folsom
    import pymemcache

    addr = "127.0.0.1:%d" % port
    n = 1000
    keys = ["bench:a%d" % (i % 100) for i in range(n)]

    async def folsom_case():
        async with folsom.AsyncClient(addr, protocol="meta") as c:
            await c.set_many({k: b"v" * 64 for k in set(keys)})
            await asyncio.gather(*(c.get(k) for k in keys))  # warm-up
            out = []
            for _ in range(reps):
                t = time.process_time()
                for _ in range(rounds):
                    await asyncio.gather(*(c.get(k) for k in keys))
                out.append(rounds * n / (time.process_time() - t))
            return out

    def pool_case():
        local = threading.local()

        def get(k):
            c = getattr(local, "c", None)
            if c is None:
                c = local.c = pymemcache.Client(("127.0.0.1", port), no_delay=True)
            return c.get(k)

        out = []
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            list(pool.map(get, keys))  # warm-up: every thread's connection
            for _ in range(reps):
                t = time.process_time()
                for _ in range(rounds):
                    list(pool.map(get, keys))
                out.append(rounds * n / (time.process_time() - t))
        return out

    f = asyncio.run(folsom_case())
    p = pool_case()
    return {"folsom AsyncClient": statistics.median(f), "pymemcache thread pool": statistics.median(p)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--ops", type=int, default=20000, help="sequential gets per rep")
    ap.add_argument("--calls", type=int, default=1000, help="100-key get_many calls per rep")
    ap.add_argument("--rounds", type=int, default=20, help="rounds of 1,000 concurrent gets per rep")
    ap.add_argument("--cpu", type=int, default=0, help="the core for client and server")
    a = ap.parse_args()
    os.sched_setaffinity(0, {a.cpu})  # before any client: their threads inherit it
    proc, port = start_memcached(a.cpu)
    try:
        runs = []
        for r in range(a.runs):
            clients = make_clients(port)
            g = bench_get(clients, a.ops, a.reps)
            m = bench_get_many(clients, a.calls, a.reps)
            st = bench_set(clients, a.ops, a.reps)
            for c in clients.values():
                (c.disconnect_all if hasattr(c, "disconnect_all") else c.close)()
            s = bench_asyncio(port, a.rounds, a.reps)
            runs.append((g, m, s, st))
            print("run %d: get %s | get_many/key %s | asyncio %s | set %s" % (
                r + 1, {k: round(v * 1e6, 2) for k, v in g.items()},
                {k: round(v * 1e6, 3) for k, v in m.items()},
                {k: round(v) for k, v in s.items()},
                {k: round(v * 1e6, 2) for k, v in st.items()}), flush=True)
    finally:
        proc.kill()
        proc.wait()

    def col(i, name, scale):
        vals = [run[i][name] * scale for run in runs]
        return statistics.median(vals), vals

    def ratio(i, a_name, b_name, invert=False):
        vals = [(run[i][b_name] / run[i][a_name]) if invert else (run[i][a_name] / run[i][b_name])
                for run in runs]
        return statistics.median(vals), vals

    print()
    print("| case | client | median | runs |")
    print("|---|---|---:|---|")
    for i, case, unit, scale in ((0, "sequential get", "us CPU/get", 1e6),
                                 (1, "get_many 100 keys", "us CPU/key", 1e6),
                                 (2, "asyncio 1,000 concurrent gets", "gets per CPU second", 1),
                                 (3, "sequential set", "us CPU/set", 1e6)):
        for name in runs[0][i]:
            med, vals = col(i, name, scale)
            fmt = "%.0f" if i == 2 else "%.3f"
            print("| %s (%s) | %s | %s | %s |" % (case, unit, name, fmt % med,
                                                 ", ".join(fmt % v for v in vals)))
    print()
    print("| target | ratio (median of runs) | runs | met |")
    print("|---|---:|---|---|")
    for label, i, a_name, b_name, limit, invert in (
            ("sequential get: folsom (meta) / pylibmc <= 0.8", 0, "folsom (meta)", "pylibmc", 0.8, False),
            ("sequential get: folsom (ascii) / pylibmc <= 0.8", 0, "folsom (ascii)", "pylibmc", 0.8, False),
            ("sequential get: folsom (meta) / pymemcache <= 0.5", 0, "folsom (meta)", "pymemcache", 0.5, False),
            ("sequential get: folsom (ascii) / pymemcache <= 0.5", 0, "folsom (ascii)", "pymemcache", 0.5, False),
            # pylibmc speaks ascii (libmemcached's default): folsom (ascii) is the like-for-like row.
            ("get_many per key: folsom (meta) / pylibmc <= 0.5", 1, "folsom (meta)", "pylibmc", 0.5, False),
            ("get_many per key: folsom (ascii) / pylibmc <= 0.5", 1, "folsom (ascii)", "pylibmc", 0.5, False),
            ("asyncio: folsom / pymemcache pool >= 3", 2, "folsom AsyncClient", "pymemcache thread pool", 3, False)):
        med, vals = ratio(i, a_name, b_name, invert)
        met = med >= limit if label.endswith(">= 3") else med <= limit
        print("| %s | %.2f | %s | %s |" % (label, med, ", ".join("%.2f" % v for v in vals),
                                           "yes" if met else "**no**"))
    for name in ("folsom (meta)", "folsom (ascii)"):
        med, vals = ratio(3, name, "pylibmc")
        print("| sequential set: %s / pylibmc (no target) | %.2f | %s | - |" % (
            name, med, ", ".join("%.2f" % v for v in vals)))
    best = {}
    for i in (0, 1):
        best[i] = min(("folsom (meta)", "folsom (ascii)"),
                      key=lambda n: statistics.median(run[i][n] for run in runs))
    print("\n(best folsom protocol: get %s, get_many %s)" % (best[0], best[1]))


if __name__ == "__main__":
    sys.exit(main())
