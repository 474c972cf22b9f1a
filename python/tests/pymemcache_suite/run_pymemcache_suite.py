#!/usr/bin/env python3
"""Runs pymemcache's own tests against folsom: test_integration.py and test_benchmark.py (the
tests of pinterest/pymemcache that talk to a real server), over each protocol, with folsom's
Client, PooledClient and HashClient (one and three servers) in place of pymemcache's
(suite_conftest.py). Real memcached processes on loopback ports are started and stopped by the
run. Nothing of pymemcache is copied into this repository: its tests are taken at run time from

  1. FOLSOM_PYMEMCACHE_SRC: a pymemcache source tree (a clone of pinterest/pymemcache at the
     version Debian ships, or an unpacked Debian source package), or else
  2. Debian's source package: `apt-get source python-pymemcache` through a private deb-src
     list for the mirror of /etc/apt/sources.list(.d), into a cache directory
     (FOLSOM_PYMEMCACHE_CACHE, default ~/.cache/folsom/pymemcache-src).

With neither (no deb-src reachable, no tree given), it prints why and exits 77 (CTest's skip).

  PYTHONPATH=<build>/python python3 python/tests/pymemcache_suite/run_pymemcache_suite.py
  [--protocols meta,binary,ascii] [pytest arguments...]

The tests that fail are listed in python/README.md with the reason; expected_failures.txt
holds them, and the run fails if any other test fails (or one of them passes).
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
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


def mirror_uris():
    """The Debian mirror URIs and suite of this machine's apt sources."""
    uris, suite = [], None
    for path in glob.glob("/etc/apt/sources.list.d/*.sources"):
        text = open(path).read()
        for block in text.split("\n\n"):
            fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", block, re.M))
            if fields.get("Types", "").split() and "deb" in fields["Types"].split():
                for uri in fields.get("URIs", "").split():
                    if "security" not in uri:
                        uris.append(uri)
                        suite = suite or fields.get("Suites", "").split()[0]
    if os.path.exists("/etc/apt/sources.list"):
        for line in open("/etc/apt/sources.list"):
            m = re.match(r"\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", line)
            if m and "security" not in m.group(1):
                uris.append(m.group(1))
                suite = suite or m.group(2)
    return uris, suite


def apt_source(cache):
    """pymemcache's Debian source package, unpacked under `cache`; None with the reason logged."""
    found = glob.glob(os.path.join(cache, "python-pymemcache-*"))
    if found:
        return found[0]
    uris, suite = mirror_uris()
    if not uris or not shutil.which("apt-get") or not shutil.which("dpkg-source"):
        log("no Debian mirror in the apt sources (or no apt-get/dpkg-source)")
        return None
    state = os.path.join(cache, "apt")
    for d in ("lists/partial", "archives/partial", "etc"):
        os.makedirs(os.path.join(state, d), exist_ok=True)
    with open(os.path.join(state, "etc", "src.sources"), "w") as f:
        f.write("Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\n"
                "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n" % (uris[0], suite))
    open(os.path.join(state, "etc", "empty.list"), "w").close()
    opts = ["-o", "Dir::Etc::SourceList=" + os.path.join(state, "etc", "empty.list"),
            "-o", "Dir::Etc::SourceParts=" + os.path.join(state, "etc"),
            "-o", "Dir::State::Lists=" + os.path.join(state, "lists"),
            "-o", "Dir::Cache=" + state, "-o", "Debug::NoLocking=1"]
    r = subprocess.run(["apt-get", *opts, "-qq", "update"], capture_output=True, text=True)
    if r.returncode != 0:
        log("apt-get update of a deb-src list for %s failed: %s" % (uris[0], r.stderr.strip()))
        return None
    r = subprocess.run(["apt-get", *opts, "-qq", "source", "python-pymemcache"], cwd=cache,
                       capture_output=True, text=True)
    found = glob.glob(os.path.join(cache, "python-pymemcache-*"))
    if r.returncode != 0 or not found:
        log("apt-get source python-pymemcache failed: %s" % (r.stderr.strip().splitlines() or
                                                           ["(no output)"])[-1])
        return None
    return found[0]


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

    tree = os.environ.get("FOLSOM_PYMEMCACHE_SRC")
    if not tree:
        cache = os.environ.get("FOLSOM_PYMEMCACHE_CACHE",
                               os.path.expanduser("~/.cache/folsom/pymemcache-src"))
        os.makedirs(cache, exist_ok=True)
        tree = apt_source(cache)
    tests = find_tests_in(tree) if tree else None
    if not tests:
        log("SKIPPED: pymemcache's tests are not available (set FOLSOM_PYMEMCACHE_SRC to a "
            "pymemcache source tree, or add a deb-src line for the Debian mirror)")
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
            report = os.path.join(work, "report-%s.txt" % protocol)
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
                   "--junitxml", report, *TEST_FILES, *pytest_args]
            r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
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
