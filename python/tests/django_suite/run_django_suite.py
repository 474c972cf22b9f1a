#!/usr/bin/env python3
"""Runs Django's own memcached cache tests (tests/cache/tests.py of Django's source, the version
installed) against folsom.django.FolsomCache.

Django's test classes PyMemcacheCacheTests and PyLibMCCacheTests run unchanged (but for the
class attribute should_disconnect_on_close, set to FolsomCache's documented behaviour: see
child()), through Django's
own test runner (DiscoverRunner, test database included), with the backend paths they are
configured by, django.core.cache.backends.memcached.PyMemcacheCache and .PyLibMCCache, bound to
folsom.django.FolsomCache: the one-import change a user makes in CACHES. Each protocol
(--protocols, default meta) runs in its own interpreter against real memcached processes on
free loopback ports (--servers, default 1, all in LOCATION), started and stopped by PID here.

Django's tests are never copied into this repository. They come at run time from

  1. FOLSOM_DJANGO_SRC: a Django source tree holding tests/cache/ (an unpacked release tarball,
     or a checkout of the installed version's tag), or else
  2. Debian's upstream tarball of the installed python3-django (`apt-get source
     --download-only python-django=<installed version>` through a private deb-src list for the
     machine's mirror), kept in FOLSOM_DJANGO_CACHE (default ~/.cache/folsom/django-src).

With neither it prints why and exits 77 (CTest's skip).

  PYTHONPATH=<build>/python python3 python/tests/django_suite/run_django_suite.py
      [--protocols meta,binary,ascii] [--servers N] [-k test_name_substring]
      [--options '{"disconnect_on_close": true}']

expected_failures.txt lists the tests that fail, each with the reason (also in
python/README.md); the run fails if another test fails or a listed one passes.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import foreign_sources  # noqa: E402

SKIP = 77
CLASSES = ("PyMemcacheCacheTests", "PyLibMCCacheTests")
BACKENDS = ("PyMemcacheCache", "PyLibMCCache")


def log(msg):
    print("django suite: " + msg, flush=True)


def django_version():
    try:
        import django
        return django.get_version()
    except ImportError:
        return None


def tests_dir_in(tree):
    d = os.path.join(tree, "tests")
    return d if os.path.isfile(os.path.join(d, "cache", "tests.py")) else None


def find_tests(version):
    tree = os.environ.get("FOLSOM_DJANGO_SRC")
    if tree:
        found = tests_dir_in(tree)
        if not found:
            log("FOLSOM_DJANGO_SRC=%s holds no tests/cache/tests.py" % tree)
        return found
    cache = os.environ.get("FOLSOM_DJANGO_CACHE",
                           os.path.expanduser("~/.cache/folsom/django-src"))
    os.makedirs(cache, exist_ok=True)
    unpacked = os.path.join(cache, "Django-%s" % version)
    if tests_dir_in(unpacked):
        return tests_dir_in(unpacked)
    debian_version = foreign_sources.installed_version("python3-django")
    if not debian_version or foreign_sources.upstream_version(debian_version) != version:
        log("python3-django is not the Django imported (%s): no source package to match it"
            % version)
        return None
    tarball = foreign_sources.apt_orig_tarball("python-django", debian_version, cache, log)
    if not tarball:
        return None
    top = foreign_sources.unpack(tarball, cache, ["tests/cache/"])
    if os.path.abspath(top) != os.path.abspath(unpacked):
        log("%s unpacks to %s, not Django-%s" % (tarball, top, version))
        return None
    return tests_dir_in(unpacked)


def expected_failures():
    out = {}
    with open(os.path.join(HERE, "expected_failures.txt")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                test, _, why = line.partition(" ")
                out[test] = why.strip()
    return out


# ---- the child: one protocol, in its own interpreter -------------------------------------------

def child(tests, server, protocol, report, pattern, options):
    import django
    from django.conf import settings
    import django.core.cache.backends.memcached as memcached_backends
    import folsom
    import folsom.django

    class FolsomCache(folsom.django.FolsomCache):
        """folsom.django.FolsomCache over this run's protocol, unless OPTIONS name one."""

        def __init__(self, server, params):
            super().__init__(server, params)
            self._options.setdefault("protocol", protocol)

    FolsomCache.__module__ = "folsom.django"
    FolsomCache.__qualname__ = "FolsomCache"
    for name in BACKENDS:
        setattr(memcached_backends, name, FolsomCache)

    sys.path.insert(0, tests)
    # Django's cache tests pick each memcached class's settings by BACKEND path in CACHES.
    caches = {
        "default": {"BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
                    "LOCATION": server.split(",")},
        "pylibmc": {"BACKEND": "django.core.cache.backends.memcached.PyLibMCCache",
                    "LOCATION": server.split(",")},
    }
    if options:
        for params in caches.values():
            params["OPTIONS"] = json.loads(options)
    settings.configure(
        DEBUG=False,
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3"},
                   "other": {"ENGINE": "django.db.backends.sqlite3"}},
        INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "cache"],
        SECRET_KEY="folsom-django-suite",
        CACHES=caches,
        USE_TZ=False,
        DEFAULT_AUTO_FIELD="django.db.models.AutoField",
        TEMPLATES=[{"BACKEND": "django.template.backends.django.DjangoTemplates",
                    "APP_DIRS": True}],
    )
    django.setup()
    from django.core.cache import caches as django_caches
    from django.test.runner import DiscoverRunner
    import cache.tests as django_cache_tests

    # Django's test_close asks whether the backend drops its connections when Django closes the
    # caches after a request: each test class states its library's answer in
    # should_disconnect_on_close (True for PyMemcacheCache, False for PyLibMCCache, whose
    # client "manages its own connections"). Both classes run FolsomCache here, whose answer is
    # its documented one: False, as PyLibMCCache (its client reconnects on its own and serves
    # every thread), or True with OPTIONS={"disconnect_on_close": True}. That one class
    # attribute is the only thing of Django's tests this run sets.
    disconnects = bool(json.loads(options).get("disconnect_on_close", False)) if options else False
    for name in CLASSES:
        getattr(django_cache_tests, name).should_disconnect_on_close = disconnects

    # What Django's tests will get under those backend paths: folsom's backend and client.
    for alias in caches:
        backend = django_caches[alias]
        if not isinstance(backend, folsom.django.FolsomCache) or \
                not isinstance(backend._cache, folsom.HashClient):
            raise RuntimeError("%s is %r on %r, not FolsomCache on folsom.HashClient"
                               % (alias, backend, type(backend._cache)))
        backend.close()

    results = {}

    class Runner(DiscoverRunner):
        def run_suite(self, suite, **kwargs):
            if pattern:
                kept = [t for t in _flatten(suite) if pattern in t.id()]
                suite = self.test_suite(kept)
            r = super().run_suite(suite, **kwargs)
            results["run"] = r.testsRun
            results["failed"] = sorted({_name(t) for t, _ in r.failures + r.errors})
            results["details"] = {_name(t): tb.strip().splitlines()[-1]
                                  for t, tb in r.failures + r.errors}
            results["skipped"] = {_name(t): why for t, why in r.skipped}
            return r

    runner = Runner(verbosity=1, interactive=False, parallel=1)
    runner.run_tests(["cache.tests.%s" % c for c in CLASSES])
    with open(report, "w") as f:
        json.dump(results, f)
    return 0


def _flatten(suite):
    for t in suite:
        if hasattr(t, "__iter__"):
            yield from _flatten(t)
        else:
            yield t


def _name(test):
    test = getattr(test, "test_case", test)  # a subTest's failure names its test
    return re.sub(r"^cache\.tests\.", "", test.id())


# ---- the parent ---------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--protocols", default="meta")
    ap.add_argument("--servers", type=int, default=1,
                    help="memcached processes behind each cache (LOCATION lists them)")
    ap.add_argument("-k", dest="pattern", default="",
                    help="only the tests whose id contains this")
    ap.add_argument("--options", default="",
                    help="a JSON object added as OPTIONS to the memcached caches (tests that "
                         "set their own OPTIONS replace it)")
    ap.add_argument("--child", nargs=4, metavar=("TESTS", "SERVER", "PROTOCOL", "REPORT"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(*args.child, args.pattern, args.options)

    version = django_version()
    if not version:
        log("SKIPPED: Django is not importable (Debian: python3-django)")
        return SKIP
    tests = find_tests(version)
    if not tests:
        log("SKIPPED: Django %s's tests are not available (set FOLSOM_DJANGO_SRC to a Django "
            "%s source tree, or let apt reach a Debian mirror)" % (version, version))
        return SKIP
    log("Django %s, tests from %s" % (version, tests))

    expected = expected_failures()
    unexpected = []
    # The child runs in a scratch directory: a relative PYTHONPATH (build/python) made absolute.
    path = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=os.pathsep.join(path))
    with tempfile.TemporaryDirectory(prefix="folsom-django-suite-") as work:
        for protocol in args.protocols.split(","):
            report = os.path.join(work, "report-%s.json" % protocol)
            servers = []
            try:
                for _ in range(args.servers):
                    servers.append(foreign_sources.Memcached())
                cmd = [sys.executable, os.path.abspath(__file__), "--child", tests,
                       ",".join(m.address for m in servers), protocol, report]
                if args.pattern:
                    cmd += ["-k", args.pattern]
                if args.options:
                    cmd += ["--options", args.options]
                r = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env)
            finally:
                for m in servers:
                    m.stop()
            if not os.path.exists(report):
                log("%s: the run did not finish (exit %d)" % (protocol, r.returncode))
                print(r.stdout[-8000:], r.stderr[-8000:])
                unexpected.append((protocol, "no report"))
                continue
            with open(report) as f:
                res = json.load(f)
            failed = set(res["failed"])
            log("%s, %d server(s): %d tests run, %d failed, %d skipped"
                % (protocol, args.servers, res["run"], len(failed), len(res["skipped"])))
            # expected_failures.txt names a test "<Class>.<test>" (every protocol) or
            # "<protocol>:<Class>.<test>".
            listed = {t for t in expected if ":" not in t}
            listed |= {t.split(":", 1)[1] for t in expected if t.startswith(protocol + ":")}
            if args.pattern:
                listed = {t for t in listed if args.pattern in t}
            for t in sorted(failed):
                if t in listed:
                    log("  expected failure %s" % t)
                else:
                    log("  FAILED %s: %s" % (t, res["details"].get(t, "")))
                    unexpected.append((protocol, t))
            for t in sorted(listed - failed):
                log("  listed as failing but passed: %s" % t)
                unexpected.append((protocol, "passed: " + t))
            for t, why in sorted(res["skipped"].items()):
                log("  skipped %s: %s" % (t, why))
            if failed - listed:
                print(r.stderr[-12000:])
    if unexpected:
        log("%d unexpected result(s)" % len(unexpected))
        return 1
    log("every test passed but those listed in expected_failures.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
