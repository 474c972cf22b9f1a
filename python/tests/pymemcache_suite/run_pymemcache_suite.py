#!/usr/bin/env python3
"""Runs pymemcache's own tests against folsom: test_integration.py and test_benchmark.py (the
tests of pinterest/pymemcache that talk to a real server), over each protocol, with folsom's
Client, PooledClient and HashClient (one and three servers) in place of pymemcache's
(suite_conftest.py). Real memcached processes on loopback ports are started and stopped by the
run. Nothing of pymemcache is copied into this repository: its tests are taken at run time from

  1. FOLSOM_PYMEMCACHE_SRC: a pymemcache source tree (a clone of pinterest/pymemcache at the
     version Debian ships, or an unpacked Debian source package), or else
  2. Debian's upstream tarball of the installed python3-pymemcache (`apt-get source
     --download-only python-pymemcache=<installed version>` through a private deb-src list for
     the machine's mirror, python/tests/foreign_sources.py), kept and unpacked in
     FOLSOM_PYMEMCACHE_CACHE (default ~/.cache/folsom/pymemcache-src); a tarball of that name
     already in the cache directory is used as is.

With neither (the mirror has no tarball, no tree given), it prints why and exits 77 (CTest's
skip).

  PYTHONPATH=<build>/python python3 python/tests/pymemcache_suite/run_pymemcache_suite.py
  [--protocols meta,binary,ascii] [pytest arguments...]

The tests that fail are listed in python/README.md with the reason; expected_failures.txt
holds them, and the run fails if any other test fails (or one of them passes).
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import foreign_sources  # noqa: E402

SKIP = 77
TEST_FILES = ("test_integration.py", "test_benchmark.py")


def log(msg):
    print("pymemcache suite: " + msg, flush=True)


def find_tests_in(tree):
    for sub in ("pymemcache/test", "test", "."):
        d = os.path.join(tree, sub)
        if os.path.isfile(os.path.join(d, "test_integration.py")):
            return d
    return None


def pymemcache_version():
    try:
        import pymemcache
        return pymemcache.__version__
    except (ImportError, AttributeError):
        return None


def find_tests():
    """The directory holding pymemcache's test_integration.py; None with the reason logged."""
    tree = os.environ.get("FOLSOM_PYMEMCACHE_SRC")
    if tree:
        found = find_tests_in(tree)
        if not found:
            log("FOLSOM_PYMEMCACHE_SRC=%s holds no test_integration.py" % tree)
        return found
    cache = os.environ.get("FOLSOM_PYMEMCACHE_CACHE",
                           os.path.expanduser("~/.cache/folsom/pymemcache-src"))
    os.makedirs(cache, exist_ok=True)
    # The installed python3-pymemcache's version: the tests folsom's clients stand in for.
    debian_version = foreign_sources.installed_version("python3-pymemcache")
    version = pymemcache_version()
    if debian_version and version and foreign_sources.upstream_version(debian_version) != version:
        log("python3-pymemcache (%s) is not the pymemcache imported (%s)" % (debian_version,
                                                                           version))
        debian_version = None
    if not debian_version:
        log("python3-pymemcache is not installed: no source version to take its tests from")
        return None
    upstream = foreign_sources.upstream_version(debian_version)
    for top in glob.glob(os.path.join(cache, "pymemcache-%s" % upstream)):
        if find_tests_in(top):
            return find_tests_in(top)
    tarball = foreign_sources.apt_orig_tarball("python-pymemcache", debian_version, cache, log)
    if not tarball:
        return None
    top = foreign_sources.unpack(tarball, cache, ["pymemcache/test/"])
    return find_tests_in(top)


def expected_failures():
    out = {}
    path = os.path.join(HERE, "expected_failures.txt")
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            test, _, why = line.partition(" ")
            out[test] = why.strip()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--protocols", default="meta,binary,ascii")
    args, pytest_args = ap.parse_known_args()

    tests = find_tests()
    if not tests:
        log("SKIPPED: pymemcache's tests are not available (set FOLSOM_PYMEMCACHE_SRC to a "
            "pymemcache source tree at the installed version, e.g. `git archive v3.5.2` of "
            "pinterest/pymemcache, or put Debian's python-pymemcache_<version>.orig.tar.* in "
            "the cache directory)")
        return SKIP

    expected = expected_failures()
    work = tempfile.mkdtemp(prefix="folsom-pymemcache-suite-")
    try:
        for name in TEST_FILES:
            shutil.copy(os.path.join(tests, name), work)
        shutil.copy(os.path.join(HERE, "suite_conftest.py"), os.path.join(work, "conftest.py"))
        with open(os.path.join(work, "pytest.ini"), "w") as f:
            f.write("[pytest]\n")
        log("tests from %s" % tests)
        unexpected = []
        for protocol in args.protocols.split(","):
            env = dict(os.environ, FOLSOM_PROTOCOL=protocol, PYTHONDONTWRITEBYTECODE="1")
            # pytest runs in the work directory: a relative PYTHONPATH would point elsewhere.
            # python/tests too: the conftest starts its servers with foreign_sources.Memcached.
            env["PYTHONPATH"] = os.pathsep.join(
                [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
                + [os.path.dirname(HERE)])
            report = os.path.join(work, "report-%s.txt" % protocol)
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
                   "--junitxml", report, *TEST_FILES, *pytest_args]
            r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
            if not os.path.exists(report):
                log("%s: pytest reported nothing (exit %d)" % (protocol, r.returncode))
                print(r.stdout[-8000:], r.stderr[-4000:])
                unexpected.append((protocol, "no report"))
                continue
            failed = set()
            import xml.etree.ElementTree as ET
            for case in ET.parse(report).iter("testcase"):
                if case.find("failure") is not None or case.find("error") is not None:
                    failed.add("%s.py::%s" % (case.get("classname").split(".")[-1],
                                              case.get("name")))
            summary = (r.stdout.strip().splitlines() or ["(no output)"])[-1]
            log("%s: %s" % (protocol, summary))
            # expected_failures.txt names a test as "<file>::<id>" (every protocol) or
            # "<protocol>:<file>::<id>".
            listed = {t for t in expected if ":" not in t.split("::")[0]}
            listed |= {t.split(":", 1)[1] for t in expected if t.startswith(protocol + ":")}
            for t in sorted(failed):
                if t in listed:
                    log("  expected failure %s" % t)
                else:
                    log("  FAILED %s" % t)
                    unexpected.append((protocol, t))
            for t in sorted(listed - failed):
                log("  listed as failing but passed: %s" % t)
                unexpected.append((protocol, "passed: " + t))
            if r.returncode not in (0, 1) or (failed - listed):
                print(r.stdout[-8000:], r.stderr[-4000:])
        if unexpected:
            log("%d unexpected result(s)" % len(unexpected))
            return 1
        log("every test passed but those listed in expected_failures.txt")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
