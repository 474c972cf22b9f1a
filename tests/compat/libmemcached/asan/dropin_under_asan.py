#!/usr/bin/env python3
"""The libmemcached drop-in built with AddressSanitizer + UndefinedBehaviorSanitizer, loaded into
programs that are not: the C consumer (tests/compat/libmemcached/dropin_check.c, compiled without
sanitizers, as every real consumer is) over ascii and binary and in its AES mode, and
libmemcached-tools (memccp, memccat, memcexist, memctouch, memcrm, memcstat, memcping, memcflush),
with the sanitizer runtimes preloaded (LD_PRELOAD), as a host process would run it under ASan.

    dropin_under_asan.py --lib-dir DIR --check PROGRAM --preload "libasan.so libubsan.so"

Fails on any sanitizer report (ASan, LeakSanitizer, UBSan: their runtimes exit non-zero and print
"ERROR: ...Sanitizer" or "runtime error:"), on a program that fails, and when a process did not
load the drop-in (the C consumer checks its own /proc/self/maps). Leak detection covers the whole
process: the consumer and the tools free what they allocate, so a leak report is the drop-in's.
memcached runs on free loopback ports, started and stopped by PID; every program has a time limit.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..",
                                "python", "tests"))
import foreign_sources  # noqa: E402  (memcached on a free loopback port, stopped by PID)

REPORT = re.compile(r"ERROR: (Address|Leak|UndefinedBehavior)Sanitizer|runtime error:|"
                    r"AddressSanitizer:DEADLYSIGNAL|SUMMARY: (Address|Leak|UndefinedBehavior)"
                    r"Sanitizer")
LIMIT_S = 60


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib-dir", required=True, help="the ASan-built drop-in's directory")
    ap.add_argument("--check", required=True, help="the C consumer (libmemcached_dropin_check)")
    ap.add_argument("--preload", required=True, help="LD_PRELOAD: the sanitizer runtimes")
    args = ap.parse_args()
    lib_dir = os.path.abspath(args.lib_dir)
    failures = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("LD_")}
    env.update({
        "LD_LIBRARY_PATH": lib_dir,
        "LD_PRELOAD": args.preload,
        # verify_asan_link_order=0: the host program is not instrumented, which is the point;
        # the runtime still comes first, through LD_PRELOAD.
        "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:exitcode=23:verify_asan_link_order=0",
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=23",
        "DROPIN_EXPECT_DIR": lib_dir,
        "DROPIN_IS_FOLSOM": "1",
    })
    ran = 0

    def run(argv, want_status=0, want_out=None):
        nonlocal ran
        ran += 1
        what = " ".join(argv)
        try:
            p = subprocess.run(argv, env=env, capture_output=True, text=True, errors="replace",
                               timeout=LIMIT_S)
        except subprocess.TimeoutExpired:
            failures.append("%s: no end within %d s" % (what, LIMIT_S))
            return ""
        report = REPORT.search(p.stderr) or REPORT.search(p.stdout)
        if report:
            start = max(0, report.start() - 200)
            failures.append("%s: sanitizer report:\n%s" % (what, (p.stderr or p.stdout)[start:]
                                                          [:6000]))
        elif p.returncode != want_status:
            failures.append("%s: exit %d, expected %d\nstdout: %s\nstderr: %s" % (
                what, p.returncode, want_status, p.stdout[-2000:], p.stderr[-2000:]))
        elif want_out is not None and p.stdout != want_out:
            failures.append("%s: printed %r, expected %r" % (what, p.stdout, want_out))
        return p.stdout

    with tempfile.TemporaryDirectory(prefix="dropin-asan-") as tmp:
        # The C consumer, over both protocols: it kills its second server on the way.
        for proto in ("ascii", "binary"):
            with foreign_sources.Memcached() as one, foreign_sources.Memcached() as two:
                dead = foreign_sources.free_port()
                out = run([args.check, str(one.port), str(two.port), str(two.proc.pid), str(dead),
                           proto])
                if out and "~loaded " + lib_dir not in out:
                    failures.append("%s run: the drop-in was not the library loaded" % proto)
        with foreign_sources.Memcached() as srv:
            for proto in ("ascii", "binary"):
                run([args.check, "aes", str(srv.port), "both", proto])
            # libmemcached-tools (and libmemcachedutil through memcping).
            tools = ["memccp", "memccat", "memcexist", "memctouch", "memcrm", "memcstat",
                     "memcping", "memcflush"]
            missing = [t for t in tools if not any(
                os.access(os.path.join(d, t), os.X_OK)
                for d in os.environ.get("PATH", "").split(os.pathsep))]
            if missing:
                failures.append("libmemcached-tools missing: %s" % " ".join(missing))
            else:
                servers = "--servers=" + srv.address
                path = os.path.join(tmp, "asan.txt")
                with open(path, "w") as f:
                    f.write("under a sanitizer\n")
                for binary in ([], ["--binary"]):
                    run(["memccp", servers] + binary + [path])
                    run(["memccat", servers] + binary + ["asan.txt"],
                        want_out="under a sanitizer\n\n")
                    run(["memcexist", servers] + binary + ["asan.txt"])
                    run(["memctouch", servers] + binary + ["--expire=100", "asan.txt"])
                    run(["memcrm", servers] + binary + ["asan.txt"])
                    run(["memccat", servers] + binary + ["asan.txt"], want_status=1)
                    run(["memcstat", servers] + binary)
                    run(["memcping", servers])
                    run(["memcflush", servers] + binary)
    for f in failures:
        print("dropin_under_asan: " + f, file=sys.stderr)
    print("dropin_under_asan: %d programs run on the ASan drop-in (%s), %s" % (
        ran, lib_dir, "%d failed" % len(failures) if failures else "no sanitizer report"))
    return 1 if failures else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main())
