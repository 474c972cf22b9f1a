#!/usr/bin/env python3
"""Client CPU of Django's cache backends, folsom.django.FolsomCache against Django's
PyMemcacheCache and PyLibMCCache, side by side in one run against one private memcached. The
server and this process are pinned to one core (taskset -c 0 by default). CPU is this
process's user + system time (time.process_time), Django's own overhead included.

Cases:
  view      a view doing cache.get + cache.set, served through Django's request cycle (its WSGI
            handler: request_started, the URL resolver, the view, request_finished, which
            closes every cache): CPU us per view call
  get_many  cache.get_many of 100 keys through the backend: CPU us per call

  python3 python/bench/django_bench.py [--runs 1] [--reps 5] [--cpu 0]

Each run interleaves the backends rep by rep and takes each one's median.
"""

import argparse
import io
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import start_memcached  # noqa: E402

BACKENDS = {
    "folsom": {"BACKEND": "folsom.django.FolsomCache"},
    "folsom_disconnect": {"BACKEND": "folsom.django.FolsomCache",
                          "OPTIONS": {"disconnect_on_close": True}},
    "pymemcache": {"BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache"},
    "pylibmc": {"BACKEND": "django.core.cache.backends.memcached.PyLibMCCache"},
}


def view(request):
    from django.core.cache import caches
    from django.http import HttpResponse
    cache = caches[request.META["QUERY_STRING"]]
    value = cache.get("view-key")
    cache.set("view-key", value or "a view's cached fragment " * 4)
    return HttpResponse(b"ok")


urlpatterns = []


def setup(port):
    import django
    from django.conf import settings
    from django.urls import path
    caches = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    for name, conf in BACKENDS.items():
        caches[name] = dict(conf, LOCATION="127.0.0.1:%d" % port)
    settings.configure(DEBUG=False, SECRET_KEY="bench", ALLOWED_HOSTS=["*"],
                       ROOT_URLCONF=__name__, MIDDLEWARE=[], INSTALLED_APPS=[], CACHES=caches)
    urlpatterns[:] = [path("view", view)]
    django.setup()


def environ(alias):
    return {"REQUEST_METHOD": "GET", "PATH_INFO": "/view", "QUERY_STRING": alias,
            "SERVER_NAME": "bench", "SERVER_PORT": "80", "wsgi.input": io.BytesIO(),
            "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr}


def bench_view(handler, alias, n):
    env = environ(alias)
    start = lambda status, headers: None
    handler(dict(env), start)  # connect, warm
    t0 = time.process_time()
    for _ in range(n):
        response = handler(dict(env), start)
        response.close()  # as a WSGI server does: request_finished, which closes the caches
    return (time.process_time() - t0) / n * 1e6


def bench_get_many(alias, n):
    from django.core.cache import caches
    cache = caches[alias]
    keys = ["many-key-%d" % i for i in range(100)]
    cache.set_many({k: "v" * 64 for k in keys})
    assert len(cache.get_many(keys)) == 100
    t0 = time.process_time()
    for _ in range(n):
        cache.get_many(keys)
    return (time.process_time() - t0) / n * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--views", type=int, default=2000)
    ap.add_argument("--many", type=int, default=1000)
    args = ap.parse_args()
    os.sched_setaffinity(0, {args.cpu})
    proc, port = start_memcached(args.cpu)
    try:
        setup(port)
        from django.core.handlers.wsgi import WSGIHandler
        handler = WSGIHandler()
        results = {("view", b): [] for b in BACKENDS}
        results.update({("get_many", b): [] for b in BACKENDS})
        for _ in range(args.runs):
            reps = {k: [] for k in results}
            for _ in range(args.reps):
                for b in BACKENDS:
                    reps[("view", b)].append(bench_view(handler, b, args.views))
                    reps[("get_many", b)].append(bench_get_many(b, args.many))
            for k, v in reps.items():
                results[k].append(statistics.median(v))
        print("| case | " + " | ".join(BACKENDS) + " |")
        print("|---|" + "---:|" * len(BACKENDS))
        for case, unit in (("view", "µs CPU per view call"), ("get_many", "µs CPU per get_many of 100 keys")):
            print("| %s, %s | " % (case, unit) + " | ".join(
                "%.1f" % statistics.median(results[(case, b)]) for b in BACKENDS) + " |")
        view = {b: statistics.median(results[("view", b)]) for b in BACKENDS}
        many = {b: statistics.median(results[("get_many", b)]) for b in BACKENDS}
        print()
        print("view: FolsomCache / PyMemcacheCache = %.2f (disconnect_on_close: %.2f); "
              "/ PyLibMCCache = %.2f" % (view["folsom"] / view["pymemcache"],
                                         view["folsom_disconnect"] / view["pymemcache"],
                                         view["folsom"] / view["pylibmc"]))
        print("get_many of 100: FolsomCache / PyLibMCCache = %.2f; / PyMemcacheCache = %.2f"
              % (many["folsom"] / many["pylibmc"], many["folsom"] / many["pymemcache"]))
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
