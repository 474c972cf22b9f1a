#!/usr/bin/env python3
"""Runs dogpile.cache's own memcached backend tests (tests/cache/test_memcached_backend.py with
its _fixtures.py, from dogpile.cache's source at the installed version) against folsom, with
dogpile's pytest configuration (its conftest.py and log_tests.ini), twice:

  folsom-backend     every test class of the file that uses the dogpile.cache.pymemcache
                     backend, subclassed with backend = "folsom" only (folsom_backend_tests.py):
                     the backend folsom registers, found by dogpile's loader through the
                     dogpile.cache entry point declared in python/pyproject.toml;
  pymemcache-backend the file's PyMemcache* classes unchanged, dogpile's own pymemcache backend
                     making folsom.HashClient in place of pymemcache's (dogpile_plugin.py).

Real memcached processes on free loopback ports, a plain one and a TLS one, are started and
stopped by PID (dogpile's TLS certificate expired in 2024: the run makes a CA and a localhost
certificate and puts the CA where dogpile's tests read it, tests/tls/ca-root.crt).
dogpile's time_intensive tests (deselected by dogpile's own setup.cfg) run with --all.

dogpile's tests are never copied into this repository. They come at run time from

  1. FOLSOM_DOGPILE_SRC: a dogpile.cache source tree holding tests/cache/ (a checkout or
     `git archive` of the installed version's tag, rel_1_1_8 for Debian 12's 1.1.8), or else
  2. Debian's upstream tarball of the installed python3-dogpile.cache (`apt-get source
     --download-only python-dogpile.cache=<installed version>`), kept in FOLSOM_DOGPILE_CACHE
     (default ~/.cache/folsom/dogpile-src).

With neither it prints why and exits 77 (CTest's skip).

  PYTHONPATH=<build>/python python3 python/tests/dogpile_suite/run_dogpile_suite.py [--all]
      [pytest arguments...]

expected_failures.txt lists the tests that fail, each with the reason (also in
python/README.md); the run fails if another test fails or a listed one passes.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import foreign_sources  # noqa: E402

SKIP = 77
FILES = ("tests/__init__.py", "tests/conftest.py", "tests/cache/__init__.py",
         "tests/cache/_fixtures.py", "tests/cache/test_memcached_backend.py", "log_tests.ini")


def log(msg):
    print("dogpile suite: " + msg, flush=True)


def dogpile_version():
    try:
        import dogpile
        return dogpile.__version__
    except (ImportError, AttributeError):
        return None


def has_tests(tree):
    return all(os.path.isfile(os.path.join(tree, f)) for f in FILES)


def find_tree(version):
    tree = os.environ.get("FOLSOM_DOGPILE_SRC")
    if tree:
        if not has_tests(tree):
            log("FOLSOM_DOGPILE_SRC=%s lacks one of %s" % (tree, ", ".join(FILES)))
            return None
        return tree
    cache = os.environ.get("FOLSOM_DOGPILE_CACHE",
                           os.path.expanduser("~/.cache/folsom/dogpile-src"))
    os.makedirs(cache, exist_ok=True)
    unpacked = os.path.join(cache, "dogpile.cache-%s" % version)
    if has_tests(unpacked):
        return unpacked
    debian_version = foreign_sources.installed_version("python3-dogpile.cache")
    if not debian_version or foreign_sources.upstream_version(debian_version) != version:
        log("python3-dogpile.cache is not the dogpile imported (%s)" % version)
        return None
    tarball = foreign_sources.apt_orig_tarball("python-dogpile.cache", debian_version, cache,
                                               log)
    if not tarball:
        return None
    top = foreign_sources.unpack(tarball, cache, ["tests/", "log_tests.ini"])
    if os.path.abspath(top) != os.path.abspath(unpacked) or not has_tests(unpacked):
        log("%s unpacks to %s, without dogpile's tests as expected" % (tarball, top))
        return None
    return unpacked


def expected_failures():
    out = {}
    with open(os.path.join(HERE, "expected_failures.txt")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                test, _, why = line.partition(" ")
                out[test] = why.strip()
    return out


def entry_point():
    """The dogpile.cache entry point python/pyproject.toml declares: (name, value)."""
    with open(os.path.join(HERE, "..", "..", "pyproject.toml")) as f:
        text = f.read()
    section = re.search(r'^\[project\.entry-points\."dogpile\.cache"\]\n((?:[^\[\n].*\n?)*)',
                        text, re.M)
    if not section:
        raise RuntimeError("python/pyproject.toml declares no dogpile.cache entry point")
    name, value = re.search(r'^(\w+)\s*=\s*"([^"]+)"', section.group(1), re.M).groups()
    return name, value


def make_tls_files(d):
    """A CA (written where dogpile's tests read theirs) and a certificate for localhost."""
    run = lambda cmd: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
    p = lambda name: os.path.join(d, name)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run(["openssl", "req", "-x509", *ec, "-keyout", p("ca.key"), "-out", p("ca-root.crt"),
         "-days", "2", "-subj", "/CN=folsom-dogpile-ca"])
    run(["openssl", "req", *ec, "-keyout", p("server.key"), "-out", p("server.csr"), "-subj",
         "/CN=localhost"])
    with open(p("san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run(["openssl", "x509", "-req", "-in", p("server.csr"), "-CA", p("ca-root.crt"), "-CAkey",
         p("ca.key"), "-CAcreateserial", "-out", p("server_chain.pem"), "-days", "2",
         "-extfile", p("san.ext")])
    return p("server_chain.pem"), p("server.key")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--all", action="store_true",
                    help="also dogpile's time_intensive tests (its setup.cfg deselects them)")
    args, pytest_args = ap.parse_known_args()

    version = dogpile_version()
    if not version:
        log("SKIPPED: dogpile.cache is not importable (Debian: python3-dogpile.cache)")
        return SKIP
    tree = find_tree(version)
    if not tree:
        log("SKIPPED: dogpile.cache %s's tests are not available (set FOLSOM_DOGPILE_SRC to a "
            "dogpile.cache %s source tree, e.g. `git archive rel_%s` of its repository)"
            % (version, version, version.replace(".", "_")))
        return SKIP
    log("dogpile.cache %s, tests from %s" % (version, tree))

    expected = expected_failures()
    path = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    unexpected = []
    work = tempfile.mkdtemp(prefix="folsom-dogpile-suite-")
    servers = []
    try:
        for f in FILES:
            os.makedirs(os.path.dirname(os.path.join(work, f)), exist_ok=True)
            shutil.copy(os.path.join(tree, f), os.path.join(work, f))
        shutil.copy(os.path.join(HERE, "folsom_backend_tests.py"),
                    os.path.join(work, "tests", "cache", "test_folsom_backend.py"))
        shutil.copy(os.path.join(HERE, "dogpile_plugin.py"), work)
        # The entry point as pip would install it: a dist-info on the path of the run.
        name, value = entry_point()
        dist = os.path.join(work, "site", "folsom-0.0.0.dist-info")
        os.makedirs(dist)
        with open(os.path.join(dist, "METADATA"), "w") as f:
            f.write("Metadata-Version: 2.1\nName: folsom\nVersion: 0.0.0\n")
        with open(os.path.join(dist, "entry_points.txt"), "w") as f:
            f.write("[dogpile.cache]\n%s = %s\n" % (name, value))
        with open(os.path.join(work, "pytest.ini"), "w") as f:
            # dogpile's setup.cfg [tool:pytest], the junit report added.
            f.write("[pytest]\naddopts = --tb native -r fxX -p no:logging -p no:warnings "
                    "-p no:cacheprovider%s\npython_files = tests/*test_*.py\n"
                    % ("" if args.all else " -m \"not time_intensive\""))
        tls = os.path.join(work, "tests", "tls")
        os.makedirs(tls)
        chain, key = make_tls_files(tls)
        plain = foreign_sources.Memcached()
        servers.append(plain)
        tls_server = foreign_sources.Memcached(
            ["-Z", "-o", "ssl_chain_cert=%s,ssl_key=%s" % (chain, key)])
        servers.append(tls_server)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
                   PYTHONPATH=os.pathsep.join([work, os.path.join(work, "site")] + path),
                   DOGPILE_MEMCACHED_PORT=str(plain.port),
                   DOGPILE_TLS_MEMCACHED_PORT=str(tls_server.port),
                   XDG_CACHE_HOME=os.path.join(work, "xdg-cache"))  # stevedore's cache

        runs = [("folsom-backend", "tests/cache/test_folsom_backend.py", []),
                ("pymemcache-backend", "tests/cache/test_memcached_backend.py",
                 ["-k", "PyMemcache"])]
        for label, test_file, select in runs:
            report = os.path.join(work, "report-%s.xml" % label)
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "dogpile_plugin", "--junitxml",
                   report, test_file, *select, *pytest_args]
            r = subprocess.run(cmd, cwd=work, capture_output=True, text=True,
                               env=dict(env, FOLSOM_DOGPILE_PYMEMCACHE_CLIENT=str(
                                   int(label == "pymemcache-backend"))))
            if not os.path.exists(report):
                log("%s: pytest did not run (exit %d)" % (label, r.returncode))
                print(r.stdout[-8000:], r.stderr[-4000:])
                unexpected.append((label, "no report"))
                continue
            failed, passed, skipped = set(), 0, {}
            for case in ET.parse(report).iter("testcase"):
                test = "%s::%s" % (case.get("classname").split(".")[-1], case.get("name"))
                if case.find("failure") is not None or case.find("error") is not None:
                    failed.add(test)
                elif case.find("skipped") is not None:
                    skipped[test] = case.find("skipped").get("message", "")
                else:
                    passed += 1
            log("%s: %d passed, %d failed, %d skipped" % (label, passed, len(failed),
                                                          len(skipped)))
            # expected_failures.txt names a test "<run>:<Class>::<test>".
            listed = {t.split(":", 1)[1] for t in expected if t.startswith(label + ":")}
            for t in sorted(failed):
                if t in listed:
                    log("  expected failure %s" % t)
                else:
                    log("  FAILED %s" % t)
                    unexpected.append((label, t))
            for t in sorted(listed - failed):
                log("  listed as failing but passed: %s" % t)
                unexpected.append((label, "passed: " + t))
            for t, why in sorted(skipped.items()):
                log("  skipped %s: %s" % (t, why))
            if failed - listed or r.returncode not in (0, 1):
                print(r.stdout[-12000:], r.stderr[-4000:])
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(work, ignore_errors=True)
    if unexpected:
        log("%d unexpected result(s)" % len(unexpected))
        return 1
    log("every test passed but those listed in expected_failures.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
