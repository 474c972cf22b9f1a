#!/usr/bin/env python3
"""The libmemcached drop-in against Debian's libmemcached, through their consumers, in one run:

    bench/dropin/run_dropin_bench.py [--lib-dir DIR] [--reps 7] [--calls 20000] [--cpu 0]
                                     [--markdown FILE] [--write-docs]

For each consumer operation, one process per repetition on each library alternately (Debian's,
then the drop-in, so a change in machine load falls on both), all pinned to one CPU with the
memcached they talk to (taskset -c CPU):
  php-memcached (php8.2-memcached): get, set, getMulti of 100 keys, setMulti of 100 keys
  pylibmc (python3-pylibmc):        get, get_multi of 100 keys, set_multi of 100 keys
  memcslap (libmemcached-tools):    -t set, -t get, -t mget, 1 thread, requests per second
The php and pylibmc figure is the client process's CPU time (user + system, getrusage around the
loop only) per call; the median over the repetitions is reported with the drop-in/Debian
ratio (below 1.0: the drop-in costs less). memcslap's figure is wall-clock throughput (its own
run time, server on the same CPU), ratio drop-in/Debian (above 1.0: the drop-in is faster).
The drop-in side runs with LD_LIBRARY_PATH=DIR; each process's loaded libmemcached.so.11 is
checked through LD_DEBUG=files, so a figure cannot come from the wrong library.

--write-docs puts the table into docs/libmemcached-dropin.md between its
<!-- dropin-bench:begin --> / <!-- dropin-bench:end --> markers, and the ratios alone, a row per
consumer, into README.md between <!-- dropin-summary:begin --> / <!-- dropin-summary:end -->.
"""

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PHP_OPS = [("get", 1), ("set", 1), ("getMulti", 1 / 20), ("setMulti", 1 / 20)]
PY_OPS = [("get", 1), ("get_multi", 1 / 20), ("set_multi", 1 / 20)]
SLAP_TESTS = ["set", "get", "mget"]
TARGET = {"get": 1.0, "set": 1.0}  # everything else is a multi-key call: 0.7


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """memcached on a free loopback port, pinned like the clients, stopped by its PID."""

    def __init__(self, cpu):
        self.port = free_port()
        args = ["taskset", "-c", cpu, "memcached", "-l", "127.0.0.1", "-p", str(self.port),
                "-U", "0", "-t", "1", "-m", "256"]
        if os.geteuid() == 0:
            args += ["-u", "root"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.02)
        self.stop()
        sys.exit("memcached did not start")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def run(cmd, lib_dir, cpu, expect_lib):
    """Runs cmd pinned to cpu on one library; returns (stdout, wall seconds). Fails when the
    process loaded a libmemcached.so.11 other than expect_lib."""
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    if lib_dir:
        env["LD_LIBRARY_PATH"] = lib_dir
    with tempfile.TemporaryDirectory() as d:
        env["LD_DEBUG"] = "files"
        env["LD_DEBUG_OUTPUT"] = os.path.join(d, "ld")
        t0 = time.monotonic()
        p = subprocess.run(["taskset", "-c", cpu] + cmd, env=env, capture_output=True,
                           text=True, timeout=600)
        wall = time.monotonic() - t0
        loaded = set()
        for f in os.listdir(d):
            with open(os.path.join(d, f), errors="replace") as fh:
                loaded |= set(re.findall(r"calling init: (\S*libmemcached\.so\.11\S*)", fh.read()))
    if p.returncode != 0:
        sys.exit("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:]))
    real = {os.path.realpath(x) for x in loaded}
    if real != {expect_lib}:
        sys.exit("%s loaded %s, not %s" % (" ".join(cmd), sorted(real) or "nothing",
                                           expect_lib))
    return p.stdout, wall


def system_lib():
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    m = re.search(r"libmemcached\.so\.11 \(libc6,x86-64\) => (\S+)", out)
    if not m:
        sys.exit("Debian's libmemcached11 is not installed")
    return os.path.realpath(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib-dir", default=os.path.join(ROOT, "build/compat/libmemcached"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20000,
                    help="single-key calls per process (multi-key calls: a twentieth)")
    ap.add_argument("--slap", type=int, default=50000, help="memcslap --execute-number")
    ap.add_argument("--cpu", default="0")
    ap.add_argument("--only", default="php,pylibmc,memcslap")
    ap.add_argument("--markdown", help="also write the table to this file")
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args()
    lib_dir = os.path.abspath(a.lib_dir)
    sides = [("debian", None, system_lib()),
             ("drop-in", lib_dir, os.path.realpath(os.path.join(lib_dir, "libmemcached.so.11")))]
    only = a.only.split(",")
    rows = []  # (consumer, op, unit, debian median, drop-in median, ratio, target)
    server = Server(a.cpu)
    try:
        jobs = []
        if "php" in only:
            for op, f in PHP_OPS:
                n = max(1, int(a.calls * f))
                jobs.append(("php-memcached", op, ["php", os.path.join(HERE, "php_ops.php"),
                                                   str(server.port), op, str(n)]))
        if "pylibmc" in only:
            for op, f in PY_OPS:
                n = max(1, int(a.calls * f))
                jobs.append(("pylibmc", op, ["/usr/bin/python3",
                                             os.path.join(HERE, "pylibmc_ops.py"),
                                             str(server.port), op, str(n)]))
        for consumer, op, cmd in jobs:
            got = {s[0]: [] for s in sides}
            for _ in range(a.reps):
                for name, d, lib in sides:
                    out, _ = run(cmd, d, a.cpu, lib)
                    got[name].append(float(out.split()[1]))
            deb, dro = statistics.median(got["debian"]), statistics.median(got["drop-in"])
            rows.append((consumer, op, "CPU µs/call", deb, dro, dro / deb,
                         TARGET.get(op, 0.7)))
            print("%-14s %-10s debian %8.2f  drop-in %8.2f  ratio %.2f"
                  % (consumer, op, deb, dro, dro / deb),
                  file=sys.stderr, flush=True)
        if "memcslap" in only:
            for test in SLAP_TESTS:
                got = {s[0]: [] for s in sides}
                for _ in range(a.reps):
                    for name, d, lib in sides:
                        cmd = ["memcslap", "--servers=127.0.0.1:%d" % server.port,
                               "--test=" + test, "--concurrency=1",
                               "--execute-number=%d" % a.slap]
                        out, wall = run(cmd, d, a.cpu, lib)
                        m = re.search(r"Took ([\d.]+) seconds", out)
                        secs = float(m.group(1)) if m and float(m.group(1)) > 0 else wall
                        got[name].append(a.slap / secs)
                deb, dro = statistics.median(got["debian"]), statistics.median(got["drop-in"])
                rows.append(("memcslap", test, "requests/s", deb, dro, dro / deb, None))
                print("%-14s %-10s debian %8.0f  drop-in %8.0f  ratio %.2f"
                      % ("memcslap", test, deb, dro, dro / deb),
                      file=sys.stderr, flush=True)
    finally:
        server.stop()
    table = ["| consumer | operation | unit | Debian's libmemcached | drop-in | drop-in / Debian "
             "| target |", "|---|---|---|---:|---:|---:|---|"]
    for consumer, op, unit, deb, dro, ratio, target in rows:
        if target is None:
            verdict = "higher is better"
        else:
            verdict = "≤ %.1f %s" % (target, "met" if ratio <= target else "**missed**")
        fmt = "%.0f" if unit == "requests/s" else "%.2f"
        table.append("| %s | %s | %s | %s | %s | %.2f | %s |" % (consumer, op, unit, fmt % deb,
                                                                fmt % dro, ratio, verdict))
    head = ("Measured %s, %d reps (medians), %d single-key calls per process, client and "
            "memcached pinned to CPU %s, load average %s at the end; "
            "`bench/dropin/run_dropin_bench.py --reps %d --calls %d`."
            % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), a.reps, a.calls, a.cpu,
               open("/proc/loadavg").read().split()[0], a.reps, a.calls))
    text = head + "\n\n" + "\n".join(table) + "\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    if a.write_docs:
        write_between(os.path.join(ROOT, "docs/libmemcached-dropin.md"), "dropin-bench", text)
        write_between(os.path.join(ROOT, "README.md"), "dropin-summary", summary(rows, head))


# The README's columns: a consumer's single-key read and write, then its 100-key forms.
SUMMARY_COLUMNS = [("get", ("get",)), ("set", ("set",)),
                   ("multi-get, 100 keys", ("getMulti", "get_multi")),
                   ("multi-set, 100 keys", ("setMulti", "set_multi"))]


def summary(rows, head):
    """The ratios alone: a row per consumer that reports CPU per call; memcslap's throughput in
    a sentence under it (its ratio reads the other way)."""
    lines = [head, "", "| drop-in ÷ Debian, CPU per call | " +
             " | ".join(c for c, _ in SUMMARY_COLUMNS) + " |",
             "|---|" + "---:|" * len(SUMMARY_COLUMNS)]
    consumers = [c for c in dict.fromkeys(r[0] for r in rows) if c != "memcslap"]
    for consumer in consumers:
        ratios = {op: ratio for c, op, _, _, _, ratio, _ in rows if c == consumer}
        cells = []
        for _, ops in SUMMARY_COLUMNS:
            got = [ratios[o] for o in ops if o in ratios]
            cells.append("%.2f" % got[0] if got else "–")
        lines.append("| %s | %s |" % (consumer, " | ".join(cells)))
    lines += ["", "Targets: ≤ 1.0 for get and set, ≤ 0.7 for the 100-key calls."]
    slap = ["%s %.2f" % (op, ratio) for c, op, _, _, _, ratio, _ in rows if c == "memcslap"]
    if slap:
        lines[-1] += (" memcslap's throughput, drop-in ÷ Debian (above 1.0: the drop-in is "
                      "faster): %s." % ", ".join(slap))
    return "\n".join(lines) + "\n"


def write_between(path, name, text):
    doc = open(path).read()
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    if begin not in doc or end not in doc:
        sys.exit("no %s / %s markers in %s" % (begin, end, path))
    pre, rest = doc.split(begin, 1)
    post = rest.split(end, 1)[1]
    with open(path, "w") as f:
        f.write(pre + begin + "\n" + text + end + post)


if __name__ == "__main__":
    main()
