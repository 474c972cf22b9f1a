"""The framework backends against real memcached: Django's folsom.django.FolsomCache (its
cache API, and requests served through Django's request cycle, which closes every cache after
each request), cachelib's and Flask-Caching's (CACHE_TYPE), and dogpile.cache's ``folsom``
backend (dogpile's own pymemcache backend with folsom's client)."""

import threading
import time

import pytest

from conftest import Memcached

django = pytest.importorskip("django")


@pytest.fixture(scope="module")
def servers():
    ms = [Memcached(), Memcached(), Memcached()]
    yield ms
    for m in ms:
        m.stop()


# ---- Django --------------------------------------------------------------------------------

_views_hits = []


def _view(request):
    from django.core.cache import caches
    from django.http import HttpResponse
    cache = caches[request.GET.get("alias", "default")]
    n = cache.get("visits", 0) + 1
    cache.set("visits", n)
    _views_hits.append(n)
    return HttpResponse(str(n))


urlpatterns = []


@pytest.fixture(scope="module")
def django_settings(servers):
    from django.conf import settings
    from django.urls import path
    if settings.configured:
        pytest.skip("Django settings already configured by another module")
    locations = [m.address for m in servers]
    settings.configure(
        DEBUG=False,
        SECRET_KEY="folsom-test",
        ALLOWED_HOSTS=["*"],
        ROOT_URLCONF=__name__,
        MIDDLEWARE=[],
        INSTALLED_APPS=[],
        CACHES={
            "default": {"BACKEND": "folsom.django.FolsomCache", "LOCATION": locations},
            "one": {"BACKEND": "folsom.django.FolsomCache", "LOCATION": locations[0],
                    "OPTIONS": {"protocol": "binary", "connect_timeout": 1, "timeout": 2}},
            "disconnecting": {"BACKEND": "folsom.django.FolsomCache",
                              "LOCATION": ";".join(locations),
                              "OPTIONS": {"disconnect_on_close": True, "use_pooling": True,
                                          "max_pool_size": 4}},
            "pymemcache": {"BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
                           "LOCATION": locations},
        },
    )
    urlpatterns[:] = [path("visit", _view)]
    django.setup()
    return settings


@pytest.mark.parametrize("alias", ["default", "one", "disconnecting"])
def test_django_cache_api(django_settings, alias):
    from django.core.cache import caches
    from django.core.cache.backends.base import InvalidCacheKey
    cache = caches[alias]
    cache.clear()
    cache.set("k", {"a": [1, 2]}, 60)
    assert cache.get("k") == {"a": [1, 2]}
    assert cache.get("missing", "dflt") == "dflt"
    assert cache.add("k", 1) is False
    assert cache.add("new", "ünïcode") is True and cache.get("new") == "ünïcode"
    cache.set("n", 1)
    assert cache.incr("n", 5) == 6 and cache.decr("n", 2) == 4
    with pytest.raises(ValueError):
        cache.incr("absent")
    assert cache.get_many(["k", "n", "absent"]) == {"k": {"a": [1, 2]}, "n": 4}
    assert cache.set_many({"a": 1, "b": b"2"}) == []
    assert cache.get_many(["a", "b"]) == {"a": 1, "b": b"2"}
    assert cache.touch("a", 60) is True and cache.touch("absent") is False
    assert cache.delete("a") is True and cache.delete("a") is False
    cache.delete_many(["b", "k"])
    assert cache.get_many(["b", "k"]) == {}
    assert cache.get_or_set("gos", lambda: "made") == "made"
    cache.set("ключ", "unicode key")  # Django's memcached backends allow non-ASCII keys
    assert cache.get("ключ") == "unicode key"
    # a timeout over 30 days: Django sends an absolute time, which must store the value
    cache.set("long", "kept", 60 * 60 * 24 * 60)
    assert cache.get("long") == "kept"
    cache.set("zero", "gone", 0)  # Django: 0 is set-and-expire
    assert cache.get("zero") is None
    with pytest.raises(InvalidCacheKey):
        cache.set("key with spaces", 1)
    with pytest.raises(InvalidCacheKey):
        cache.get("x" * 300)
    with pytest.raises(InvalidCacheKey):
        cache.get_many(["ok", "bad\nkey"])
    # an oversized value leaves no stale entry (memcached's 1 MB limit)
    cache.set("big", "small")
    try:
        cache.set("big", "x" * (2 * 1024 * 1024))
    except Exception:
        pass
    assert cache.get("big") is None
    cache.close()
    assert cache.get("n") == 4  # usable after close()


def test_pymemcache_and_folsom_read_each_others_entries(django_settings):
    from django.core.cache import caches
    # three servers: FolsomCache places keys as PyMemcacheCache does (pymemcache's rendezvous)
    ours, theirs = caches["default"], caches["pymemcache"]
    ours.clear()
    for value in ({"a": 1}, "text", b"bytes", 42, [1.5, None]):
        ours.set("shared", value)
        assert theirs.get("shared") == value
        theirs.set("shared2", value)
        assert ours.get("shared2") == value
    ours.set_many({"m%d" % i: i for i in range(50)})
    assert theirs.get_many(["m%d" % i for i in range(50)]) == {"m%d" % i: i for i in range(50)}


@pytest.mark.parametrize("alias", ["default", "disconnecting", "one"])
def test_requests_through_djangos_request_cycle(django_settings, alias):
    """Django closes every cache when a request finishes (request_finished -> close_caches:
    disconnect_all() for PyMemcacheCache); the next request still reads and writes."""
    from django.core.cache import caches
    from django.core.signals import request_finished
    from django.test import Client as DjangoClient
    caches[alias].delete("visits")
    closes = []

    def count_closes(**kwargs):
        closes.append(1)

    request_finished.connect(count_closes)
    try:
        http = DjangoClient()
        got = [http.get("/visit", {"alias": alias}).content for _ in range(5)]
    finally:
        request_finished.disconnect(count_closes)
    assert got == [b"1", b"2", b"3", b"4", b"5"]
    assert len(closes) == 5


def test_request_cycle_in_threads(django_settings):
    """Each thread has its own cache object (Django's), each serving requests that close it."""
    from django.core.cache import caches
    from django.test import Client as DjangoClient
    caches["disconnecting"].delete("visits")
    errors = []

    def worker():
        try:
            http = DjangoClient()
            for _ in range(10):
                assert http.get("/visit", {"alias": "disconnecting"}).status_code == 200
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    # The counter is not atomic (get then set, as a view writes it): every request answered.
    assert 1 <= caches["disconnecting"].get("visits") <= 40


def test_django_options_are_checked(django_settings, servers):
    from folsom.django import FolsomCache
    cache = FolsomCache([servers[0].address], {"OPTIONS": {"no_such_option": 1}})
    with pytest.raises(TypeError):
        cache.get("k")
    cache = FolsomCache([servers[0].address], {"OPTIONS": {"max_pool_size": -1}})
    with pytest.raises(ValueError):
        cache.get("k")


def test_django_pylibmc_options(django_settings, servers):
    """A PyLibMCCache user's OPTIONS (pylibmc.Client's binary= and behaviors=) with pylibmc's
    meaning, read back as pylibmc.Client's attributes."""
    from folsom.django import FolsomCache
    cache = FolsomCache([servers[0].address], {"OPTIONS": {
        "binary": True,
        "behaviors": {"tcp_nodelay": True, "ketama": True, "connect_timeout": 500,
                      "send_timeout": 750000, "receive_timeout": 1500000, "retry_timeout": 3,
                      "dead_timeout": 20, "remove_failed": 1, "no_block": True, "cas": True,
                      "tcp_keepalive": True, "hash": "md5"}}})
    opts = cache._options
    assert (opts["protocol"], opts["no_delay"]) == ("binary", True)
    assert opts["distribution"] == "libmemcached_consistent:md5"  # libmemcached's unweighted ring
    assert (opts["connect_timeout"], opts["timeout"]) == (0.5, 1.5)
    assert (opts["retry_timeout"], opts["dead_timeout"], opts["failover"]) == (3, 20, True)
    assert len(opts["tcp_keepalive"]) == 3 and "no_block" not in opts and "cas" not in opts
    assert cache._cache.binary is True and cache._cache.protocol == "binary"
    assert cache._cache.behaviors["tcp_nodelay"] == 1 and cache._cache.behaviors["hash"] == "md5"
    cache.set("pylibmc-options", 7)
    assert cache.get("pylibmc-options") == 7
    assert FolsomCache([servers[0].address], {})._cache.binary is False
    for behaviors, error, named in (({"no_such_behavior": 1}, ValueError, "no_such_behavior"),
                                    ({"distribution": "random"}, ValueError, "random"),
                                    ({"distribution": "virtual bucket"}, ValueError, "virtual"),
                                    ({"distribution": "consistent max"}, ValueError, "max"),
                                    ({"distribution": "consistent ketama spy"}, ValueError,
                                     "spy"),
                                    ({"distribution": "nope"}, ValueError, "nope"),
                                    ({"hash": "hsieh"}, ValueError, "hsieh"),
                                    ({"ketama_hash": "sha1"}, ValueError, "ketama_hash"),
                                    ({"num_replicas": 2}, ValueError, "num_replicas"),
                                    ({"tcp_nodelay": "yes"}, TypeError, "tcp_nodelay")):
        with pytest.raises(error, match=named):
            FolsomCache([servers[0].address], {"OPTIONS": {"behaviors": behaviors}})
    with pytest.raises(ValueError, match="distribution"):
        FolsomCache([servers[0].address], {"OPTIONS": {"behaviors": {"ketama": True},
                                                       "distribution": "ketama"}})
    with pytest.raises(ValueError):
        FolsomCache([servers[0].address], {"OPTIONS": {"binary": True, "protocol": "meta"}})


# pylibmc behaviours that place keys, each as a PyLibMCCache user may give them.
_PYLIBMC_PLACEMENTS = [
    {}, {"hash": "crc"}, {"hash": "fnv1a_32", "distribution": "modula"}, {"hash": "murmur"},
    {"hash": "jenkins"}, {"hash": "fnv1_64"}, {"hash": "md5"}, {"ketama": True},
    {"ketama": True, "hash": "md5"}, {"distribution": "consistent", "hash": "fnv1a_64"},
    {"distribution": "consistent ketama"}, {"ketama_hash": "crc", "ketama": True},
    {"ketama_weighted": True}, {"ketama_weighted": True, "hash": "crc"},
    {"distribution": "consistent weighted", "hash": "fnv1_32"},
    {"ketama_weighted": True, "distribution": "consistent ketama spy"}, {"_sort_hosts": True},
]


@pytest.mark.parametrize("behaviors", _PYLIBMC_PLACEMENTS, ids=lambda b: repr(b))
def test_django_pylibmc_behaviors_place_keys_as_pylibmc(django_settings, servers, behaviors):
    """PyLibMCCache's placement behaviours (and none: pylibmc's default, modula) place every
    key where Debian's python3-pylibmc over the same server list does: 4,000 keys per case
    (68,000 in all) that pylibmc stores, each looked for on every server, against
    FolsomCache's placement."""
    pylibmc = pytest.importorskip("pylibmc")
    import folsom
    from folsom.django import FolsomCache
    locations = [m.address for m in reversed(servers)]  # not sorted: _sort_hosts sorts them
    keys = ["user:%d:profile" % i for i in range(3000)] + ["k%d" % i for i in range(1000)]
    for m in servers:
        with folsom.Client(m.address) as one:
            one.flush_all()
    mc = pylibmc.Client(locations, behaviors=dict(behaviors))
    for i in range(0, len(keys), 1000):
        assert mc.set_multi({k: b"1" for k in keys[i:i + 1000]}) == []
    mc.disconnect_all()
    owner = {}
    for m in servers:
        with folsom.Client(m.address) as one:
            for k in one.get_many(keys):
                assert k not in owner
                owner[k] = m.address
    assert len(owner) == len(keys)
    cache = FolsomCache(locations, {"OPTIONS": {"behaviors": dict(behaviors)}})
    try:
        mismatched = [k for k in keys if cache._cache.server_for(k) != owner[k]]
        assert mismatched == [], (cache._options["distribution"], len(mismatched))
        assert len(set(owner.values())) == 3
    finally:
        cache._cache.close()


def test_django_incr_of_a_non_number_raises_the_libraries_client_error(django_settings):
    """Django's PyLibMCCache tests expect <library>.ClientError, its PyMemcacheCache tests
    pymemcache's MemcacheClientError: folsom's is both (and pylibmc's when installed)."""
    import folsom
    from django.core.cache import caches
    cache = caches["default"]
    cache.set("not-a-number", None)
    with pytest.raises(folsom.ClientError) as e:
        cache.incr("not-a-number")
    assert isinstance(e.value, folsom.MemcacheClientError)
    try:
        import pylibmc
    except ImportError:
        return
    assert isinstance(e.value, pylibmc.ClientError)


# ---- cachelib and Flask-Caching --------------------------------------------------------------

def test_cachelib_backend(servers):
    pytest.importorskip("cachelib")
    from folsom.cachelib import FolsomCache
    cache = FolsomCache([m.address for m in servers], key_prefix="cl:")
    assert cache.clear()
    assert cache.set("k", {"v": 1}, timeout=60)
    assert cache.get("k") == {"v": 1}
    assert cache.has("k") and not cache.has("absent")
    assert cache.add("k", 2) is False
    assert cache.set_many({"a": 1, "b": "two"}) == ["a", "b"] or cache.get("a") == 1
    assert cache.get_many("a", "b") == [1, "two"]
    assert cache.get_dict("a", "b", "c") == {"a": 1, "b": "two", "c": None}
    assert cache.delete("a") and cache.get("a") is None
    cache.close()
    # inc/dec read and write back (cachelib's; its key_prefix is applied twice there)
    plain = FolsomCache([m.address for m in servers])
    plain.set("n", 1)
    assert plain.inc("n") == 2 and plain.dec("n", 2) == 0
    plain.close()


def test_flask_caching_cache_type(servers):
    flask = pytest.importorskip("flask")
    pytest.importorskip("flask_caching")
    from flask_caching import Cache
    app = flask.Flask(__name__)
    cache = Cache(app, config={"CACHE_TYPE": "folsom.cachelib.FlaskFolsomCache",
                               "CACHE_MEMCACHED_SERVERS": [m.address for m in servers],
                               "CACHE_KEY_PREFIX": "flask:",
                               "CACHE_OPTIONS": {"protocol": "ascii"}})
    calls = []

    @app.route("/square/<int:n>")
    @cache.cached(timeout=60)
    def square(n):
        calls.append(n)
        return str(n * n)

    with app.test_client() as http:
        cache.clear()
        assert http.get("/square/7").data == b"49"
        assert http.get("/square/7").data == b"49"
        assert calls == [7]  # the second answer came from memcached
    with app.app_context():
        cache.set("x", [1, 2])
        assert cache.get("x") == [1, 2]


# ---- dogpile.cache ---------------------------------------------------------------------------

def _dogpile_region(backend, servers, **arguments):
    dogpile = pytest.importorskip("dogpile.cache")
    from dogpile.cache import register_backend
    # An installed folsom registers "folsom" through its entry point (python/pyproject.toml,
    # checked by python/tools/check-pip-install); a build tree on PYTHONPATH has none.
    register_backend("folsom", "folsom.dogpile", "FolsomBackend")
    arguments.setdefault("url", [m.address for m in servers])
    return dogpile.make_region().configure(backend, expiration_time=60, arguments=arguments)


@pytest.mark.parametrize("arguments", [{}, {"folsom_options": {"protocol": "binary"}},
                                       {"enable_retry_client": True, "retry_attempts": 2},
                                       {"socket_keepalive": None, "hashclient_dead_timeout": 5}])
def test_dogpile_folsom_backend(servers, arguments):
    region = _dogpile_region("folsom", servers, **arguments)
    calls = []

    @region.cache_on_arguments()
    def slow(x):
        calls.append(x)
        return {"x": x}

    slow.invalidate(3)
    assert slow(3) == {"x": 3} and slow(3) == {"x": 3}
    assert calls == [3]
    region.set("k", "v")
    assert region.get("k") == "v"
    region.set_multi({"a": 1, "b": 2})
    assert region.get_multi(["a", "b"]) == [1, 2]
    region.delete("a")
    from dogpile.cache.api import NO_VALUE
    assert region.get("a") is NO_VALUE
    region.delete_multi(["b"])
    assert region.get("b") is NO_VALUE
    import folsom
    client = region.backend.client
    inner = getattr(client, "_client", client)  # RetryingClient wraps it
    assert isinstance(inner, folsom.HashClient)


def test_dogpile_folsom_and_pymemcache_backends_share_entries(servers):
    pytest.importorskip("pymemcache")
    ours = _dogpile_region("folsom", servers)  # three servers, placed alike
    theirs = _dogpile_region("dogpile.cache.pymemcache", servers)
    ours.set("shared-dp", {"v": [1]})
    assert theirs.get("shared-dp") == {"v": [1]}
    theirs.set("shared-dp2", "back")
    assert ours.get("shared-dp2") == "back"
