"""folsom.Client: every method over the three protocols, against a real memcached."""

import json
import threading

import pytest

import folsom
from conftest import PROTOCOLS, scaled


@pytest.fixture(params=PROTOCOLS)
def client(request, shared_memcached):
    c = folsom.Client(shared_memcached.address, protocol=request.param, encoding="utf-8",
                      allow_unicode_keys=True)
    c.flush_all()
    yield c
    c.close()


def test_set_get_delete(client):
    assert client.set("k", b"v", expire=60) is True
    assert client.get("k") == b"v"
    assert client.get(b"k") == b"v"
    assert client.get("missing") is None
    assert client.get("missing", b"dflt") == b"dflt"
    assert client.delete("k") is True
    assert client.delete("k") is False
    assert client.get("k") is None


def test_values_bytes_in_and_out(client):
    client.set("s", "héllo")  # str is stored as its UTF-8
    assert client.get("s") == "héllo".encode()
    client.set("n", 42)  # numbers as their decimal text, as pymemcache
    assert client.get("n") == b"42"
    client.set("ba", bytearray(b"\x00\x01"))
    assert client.get("ba") == b"\x00\x01"
    client.set("mv", memoryview(b"view"))
    assert client.get("mv") == b"view"
    big = bytes(range(256)) * 1000
    client.set("big", big)
    assert client.get("big") == big
    client.set("empty", b"")
    assert client.get("empty") == b""


def test_unicode_key(client):
    assert client.set("ключ", b"1")
    assert client.get("ключ") == b"1"
    assert client.get_many(["ключ"]) == {"ключ": b"1"}


def test_flags_round_trip(client):
    client.set("f", b"x", flags=7)
    assert client._n.get("f", False)[1] == 7


def test_add_replace_append_prepend(client):
    assert client.add("a", b"1") is True
    assert client.add("a", b"2") is False
    assert client.replace("a", b"3") is True
    assert client.replace("nope", b"3") is False
    assert client.append("a", b"4") is True
    assert client.prepend("a", b"2") is True
    assert client.get("a") == b"234"
    assert client.append("nope", b"x") is False
    assert client.prepend("nope", b"x") is False


def test_gets_and_cas(client):
    assert client.gets("c") == (None, None)
    assert client.gets("c", b"d", 0) == (b"d", 0)
    client.set("c", b"1")
    value, cas = client.gets("c")
    assert value == b"1" and isinstance(cas, int) and cas > 0
    assert client.cas("c", b"2", cas) is True
    assert client.cas("c", b"3", cas) is False  # changed since
    assert client.cas("absent", b"3", cas) is None
    assert client.get("c") == b"2"
    _, cas2 = client.gets("c")
    assert client.cas("c", b"4", str(cas2).encode()) is True  # pymemcache's bytes cas


def test_get_many_gets_many(client):
    assert client.get_many([]) == {}
    client.set("m1", b"a")
    client.set(b"m2", b"b")
    assert client.get_many(["m1", b"m2", "m3"]) == {"m1": b"a", b"m2": b"b"}
    assert client.get_multi(["m1"]) == {"m1": b"a"}
    many = client.gets_many(["m1", "m3"])
    assert list(many) == ["m1"] and many["m1"][0] == b"a" and many["m1"][1] > 0
    keys = ["many%d" % i for i in range(300)]
    client.set_many({k: k.encode() for k in keys})
    assert client.get_many(keys) == {k: k.encode() for k in keys}


def test_set_many_delete_many_touch_many(client):
    assert client.set_many({}) == []
    assert client.set_many({"x1": b"1", "x2": b"2", b"x3": 3}, expire=60) == []
    assert client.get_many(["x1", "x2", b"x3"]) == {"x1": b"1", "x2": b"2", b"x3": b"3"}
    assert client.set_multi({"x4": b"4"}) == []
    assert sorted(client.touch_many(["x1", "x2", "gone"], expire=60)) == ["gone"]
    assert client.delete_many(["x1", "x2", "gone"]) is True
    assert client.get_many(["x1", "x2"]) == {}
    assert client.delete_multi([]) is True


def test_incr_decr(client):
    assert client.incr("n", 1) is None
    client.set("n", b"10")
    assert client.incr("n", 5) == 15
    assert client.decr("n", 20) == 0  # never below 0
    assert client.decr("absent", 1) is None
    with pytest.raises(folsom.MemcacheIllegalInputError):
        client.incr("n", -1)
    with pytest.raises(folsom.MemcacheIllegalInputError):
        client.incr("n", "1")


def test_incr_with_initial(client):
    if client.protocol == "ascii":
        with pytest.raises(folsom.MemcacheUnsupportedError):
            client.incr("ctr", 1, initial=100)
        return
    assert client.incr("ctr", 1, initial=100) == 100
    assert client.incr("ctr", 1, initial=100) == 101


def test_touch_and_gat(client):
    assert client.touch("t", 60) is False
    client.set("t", b"v")
    assert client.touch("t", 60) is True
    assert client.gat("t", 60) == b"v"
    assert client.gat("nope", 60, b"d") == b"d"
    value, cas = client.gats("t", 60)
    assert value == b"v" and cas > 0
    assert client.gat_many(["t", "nope"], 60) == {"t": b"v"}


def test_noreply_and_quiet(client):
    assert client.set("q", b"1", noreply=True) is True
    assert client.add("q2", b"1", noreply=True) is True
    assert client.delete("q2", noreply=True) is True
    assert client.touch("q", 60, noreply=True) is True
    assert client.get("q") == b"1"  # the noreply write was sent before this get
    q = client.quiet()
    for i in range(2000):  # more than max_outstanding_requests / 2: bounded by back-pressure
        q.set("qq%d" % i, b"x")
    assert client.get("qq1999") == b"x"
    assert q.incr("q", 1) is None
    assert q.delete("qq0") is True
    assert client.get("qq0") is None
    assert client.get("q") == b"2"
    # a failing quiet write raises nothing; the server's refusal is counted
    q.replace("never-there", b"x")
    client.get("q")
    if client.protocol != "ascii":
        assert client.noreply_failures() >= 1


def test_default_noreply(shared_memcached):
    with folsom.Client(shared_memcached.address, default_noreply=True) as c:
        assert c.add("dn", b"1") is True
        assert c.add("dn", b"1") is True  # noreply: always True, as pymemcache
        assert c.get("dn") == b"1"
        c.delete("dn")


def test_stats_version_flush(client):
    stats = client.stats()
    assert isinstance(stats[b"pid"], int) and isinstance(stats[b"version"], bytes)
    assert isinstance(stats[b"rusage_user"], float)
    settings = client.stats("settings")
    assert b"maxbytes" in settings
    assert client.version().startswith(b"1.")
    client.set("f", b"1")
    assert client.flush_all() is True
    assert client.get("f") is None


def test_item_access(client):
    client["ia"] = b"1"
    assert client["ia"] == b"1"
    del client["ia"]
    with pytest.raises(KeyError):
        client["ia"]


class JsonSerde:
    def serialize(self, key, value):
        if isinstance(value, bytes):
            return value, 1
        return json.dumps(value).encode(), 2

    def deserialize(self, key, value, flags):
        if flags == 1:
            return value
        if flags == 2:
            return json.loads(value)
        raise ValueError("unknown flags %r" % flags)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_serde(shared_memcached, protocol):
    with folsom.Client(shared_memcached.address, protocol=protocol, serde=JsonSerde()) as c:
        c.set("j", {"a": [1, 2]})
        c.set("b", b"raw")
        assert c.get("j") == {"a": [1, 2]}
        assert c.get("b") == b"raw"
        assert c.get_many(["j", "b"]) == {"j": {"a": [1, 2]}, "b": b"raw"}
        assert c.gets("j")[0] == {"a": [1, 2]}
        assert c.set_many({"j2": [3]}) == []
        assert c.get("j2") == [3]


def test_key_prefix(shared_memcached):
    with folsom.Client(shared_memcached.address, key_prefix=b"app1:") as c, \
            folsom.Client(shared_memcached.address) as raw:
        c.set("k", b"prefixed")
        assert raw.get("app1:k") == b"prefixed"
        assert c.get("k") == b"prefixed"
        assert c.get_many(["k"]) == {"k": b"prefixed"}
        with pytest.raises(folsom.MemcacheIllegalInputError):
            c.get("x" * 246)  # fits alone, not with the prefix


def test_server_forms(shared_memcached):
    port = shared_memcached.port
    for servers in (("127.0.0.1", port), [("127.0.0.1", port)], "127.0.0.1:%d" % port,
                    ["127.0.0.1:%d" % port], b"127.0.0.1:%d" % port):
        with folsom.HashClient(servers) as c:
            assert c.servers == ["127.0.0.1:%d" % port]
            c.set("sf", b"1")
            assert c.get("sf") == b"1"
    with pytest.raises(ValueError):
        folsom.Client(shared_memcached.address, protocol="udp")
    with pytest.raises(TypeError):
        folsom.Client(shared_memcached.address, no_such_option=1)
    with pytest.raises(folsom.MemcacheIllegalInputError):
        folsom.Client("127.0.0.1:99999")
    import ssl
    ctx = ssl.create_default_context()
    ctx.verify_mode = ssl.CERT_OPTIONAL
    with pytest.raises(ValueError, match="verify_mode=CERT_OPTIONAL"):
        folsom.Client(shared_memcached.address, tls_context=ctx)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_unix_socket_servers(shared_memcached, unix_memcached, protocol):
    """A socket path is a server like host:port, alone or in one ring with TCP servers."""
    with folsom.Client(unix_memcached.address, protocol=protocol) as c:
        assert c.servers == [unix_memcached.address]
        c.set("us", b"over the socket")
        assert c.get("us") == b"over the socket"
    with folsom.Client("unix:" + unix_memcached.address, protocol=protocol) as c:
        assert c.get("us") == b"over the socket"  # pymemcache's spelling
    keys = ["mixed%d" % i for i in range(200)]
    with folsom.Client([shared_memcached.address, unix_memcached.address],
                       protocol=protocol) as c:
        c.delete_many(keys)
        assert c.set_many({k: k.encode() for k in keys}) == []
        assert c.get_many(keys) == {k: k.encode() for k in keys}
    # Both servers hold some of the keys: the ring placed them over TCP and the socket.
    counts = []
    for addr in (shared_memcached.address, unix_memcached.address):
        with folsom.Client(addr, protocol=protocol) as one:
            counts.append(len(one.get_many(keys)))
    assert sum(counts) == len(keys) and min(counts) > 0, counts


def test_unix_socket_refuses_tls(unix_memcached, tls_files):
    with pytest.raises(folsom.MemcacheError):
        folsom.Client(unix_memcached.address, tls=True, tls_ca_file=tls_files("ca.pem"))


def test_bad_input_raises_and_sends_nothing(shared_memcached):
    with folsom.Client(shared_memcached.address, max_value_size=1000) as c:
        before = c.stats()
        bad_keys = ["", "a b", "a\nb", "x" * 251, "a\x00b", "\x7f", 5, None, 1.5, ["k"], object()]
        for key in bad_keys:
            for call in (lambda: c.get(key), lambda: c.set(key, b"v"), lambda: c.delete(key),
                         lambda: c.set(key, b"v", noreply=True), lambda: c.incr(key, 1),
                         lambda: c.touch(key, 1), lambda: c.gets(key),
                         lambda: c.get_many(["good", key]), lambda: c.set_many({"good": b"1", key: b"v"}),
                         lambda: c.delete_many(["good", key])):
                try:
                    call()
                except folsom.MemcacheIllegalInputError:
                    pass
                except TypeError:  # an unhashable key in set_many's dict literal itself
                    assert isinstance(key, list)
                else:
                    pytest.fail("no error for key %r" % (key,))
        with pytest.raises(folsom.MemcacheIllegalInputError) as e:
            c.get("a b")
        assert e.value.errc == "invalid_key"
        with pytest.raises(folsom.MemcacheValueTooLargeError):
            c.add("k", b"x" * 1001)
        with pytest.raises(folsom.MemcacheValueTooLargeError):
            c.add("k", b"x" * 1001, noreply=True)
        with pytest.raises(folsom.MemcacheIllegalInputError):
            c.set_many({"ok": b"1", "k": {"a": 1}})
        with pytest.raises(folsom.MemcacheIllegalInputError):
            c.set("k", {"a": 1})  # no serde: not bytes
        with pytest.raises(folsom.MemcacheIllegalInputError):
            c.set("k", b"v", flags=-1)
        with pytest.raises(folsom.MemcacheIllegalInputError):
            c.cas("k", b"v", "notanumber")
        after = c.stats()
        for counter in (b"cmd_get", b"cmd_set", b"cmd_touch", b"delete_misses", b"delete_hits",
                        b"incr_misses", b"get_misses"):
            assert after[counter] == before[counter], counter
    c.close()  # twice is fine
    assert c.closed
    # A closed client connects again at its next call (pymemcache's close/disconnect_all).
    for call in (lambda: c.get("k"), lambda: c.set("k", b"v"), lambda: c.get_many(["k"]),
                 lambda: c.set("k", b"v", noreply=True), lambda: c.stats()):
        call()
        assert not c.closed
        c.close()


def test_get_entry_points_outlive_their_client(shared_memcached):
    # get's request goes through a plain C function bound to the native client (not a
    # pybind11 method); it keeps that client alive, which connects again after close().
    c = folsom.Client(shared_memcached.address)
    c.set("outlive", b"1")
    get = c._get_value
    assert get("outlive") == b"1"
    with pytest.raises(TypeError):
        get()
    with pytest.raises(TypeError):
        get("a", "b")
    c.close()
    del c
    assert get("outlive") == b"1"


def test_fast_entry_points_check_their_arguments(shared_memcached):
    # set, delete, incr and decr also reach the core through plain C functions; their
    # arguments are checked as the pybind11 methods check them.
    c = folsom.Client(shared_memcached.address)
    assert c.set("fast", b"1", expire="60") is True  # pymemcache accepts an int-like expire
    assert c.set("fast", b"1", expire=60.0) is True
    assert c.set("fast", 7) is True and c.get("fast") == b"7"
    assert c.incr("fast", 2) == 9
    assert c.decr("fast", 1) == 8
    for bad in (True, -1, 1 << 64, 1.5, "1"):
        with pytest.raises(folsom.MemcacheIllegalInputError):
            c.incr("fast", bad)
    with pytest.raises(folsom.MemcacheIllegalInputError):
        c.set("fast", b"1", expire="soon")
    with pytest.raises(TypeError):
        c._store(0, "fast", b"1", "not an int", 0, 0, False)
    with pytest.raises(TypeError):
        c._delete("fast")
    assert c.delete("fast") is True and c.delete("fast") is False
    c.close()


def test_errors_are_one_hierarchy(shared_memcached):
    assert issubclass(folsom.MemcacheTimeoutError, TimeoutError)
    assert issubclass(folsom.MemcacheConnectionError, ConnectionError)
    for cls in (folsom.MemcacheClientError, folsom.MemcacheServerError, folsom.MemcacheTimeoutError,
                folsom.MemcacheConnectionError, folsom.MemcacheUnknownError,
                folsom.MemcacheIllegalInputError, folsom.MemcacheClosedError):
        assert issubclass(cls, folsom.MemcacheError)
    # A server that is not there: a connection error, within the connect timeout.
    c = folsom.Client("127.0.0.1:1", connect_timeout=0.5, timeout=0.5)
    with pytest.raises(folsom.MemcacheConnectionError) as e:
        c.get("k")
    assert e.value.errc in ("connect_failed", "not_connected")
    ignoring = folsom.Client("127.0.0.1:1", connect_timeout=0.5, ignore_exc=True)
    assert ignoring.get("k", b"d") == b"d"
    assert ignoring.get_many(["k"]) == {}


def test_server_error_raises(shared_memcached):
    # memcached's item limit (-I 1m) is below max_value_size here: the server refuses.
    with folsom.Client(shared_memcached.address, max_value_size=4 * 1024 * 1024) as c:
        with pytest.raises(folsom.MemcacheServerError):
            c.set("huge", b"x" * (2 * 1024 * 1024))
        assert c.get("huge") is None
        c.set("after", b"ok")
        assert c.get("after") == b"ok"


@pytest.mark.parametrize("io_thread", [False, True])
def test_threads_share_one_client(shared_memcached, io_thread):
    n_threads, per_thread = 8, scaled(1000, 200)
    with folsom.Client(shared_memcached.address, io_thread=io_thread, metrics=True) as c:
        errors = []

        def work(t):
            try:
                for i in range(per_thread):
                    k = "t%d-%d" % (t, i % 50)
                    c.set(k, k.encode())
                    assert c.get(k) == k.encode()
            except Exception as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        m = c.metrics()
        assert m["totals"]["requests"] >= 2 * n_threads * per_thread
        assert m["totals"]["errors"] == 0
        # one server, one connection: every thread's requests went over it
        assert m["servers"][shared_memcached.address]["connects"] == 1


def test_metrics(shared_memcached):
    with folsom.Client(shared_memcached.address, metrics=True) as c:
        c.set("m", b"1")
        c.get("m")
        c.get("absent")
        c.get_many(["m", "absent"])
        m = c.metrics()
        s = m["servers"][shared_memcached.address]
        assert s["ops"]["get"]["hits"] == 2 and s["ops"]["get"]["misses"] == 2
        assert s["ops"]["set"]["requests"] == 1
        assert s["bytes_sent"] > 0 and s["latency"]["count"] >= 4
        assert "folsom_requests_total" in c.prometheus_metrics()
    with folsom.Client(shared_memcached.address) as c:
        assert c.metrics() is None


def test_get_or_fill(shared_memcached):
    with folsom.Client(shared_memcached.address, protocol="meta") as c:
        c.delete("gof")
        calls = []

        def fill():
            calls.append(1)
            return b"filled"

        assert c.get_or_fill("gof", fill, expire=60, with_source=True) == (b"filled", "filled", True)
        assert c.get_or_fill("gof", fill) == b"filled"
        assert len(calls) == 1

        def broken():
            raise ValueError("backend down")

        c.delete("gof2")
        with pytest.raises(ValueError, match="backend down"):
            c.get_or_fill("gof2", broken)
        assert c.get_or_fill("gof2", fill, with_source=True)[1] == "filled"  # the win came free


def test_get_or_fill_stampede(shared_memcached):
    """Eight threads miss at once: exactly one runs the fill, the others wait for its value."""
    with folsom.Client(shared_memcached.address, protocol="meta") as c:
        c.delete("herd")
        calls = []
        barrier = threading.Barrier(8)
        results = []

        def fill():
            calls.append(1)
            threading.Event().wait(0.2)
            return b"v"

        def work():
            barrier.wait(10)
            results.append(c.get_or_fill("herd", fill, with_source=True))

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert len(calls) == 1
        assert sorted(r[1] for r in results) == ["filled"] + ["waited"] * 7 or \
            len([r for r in results if r[1] == "filled"]) == 1
        assert all(r[0] == b"v" for r in results)


def test_get_or_fill_needs_meta(shared_memcached):
    with folsom.Client(shared_memcached.address, protocol="ascii") as c:
        with pytest.raises(folsom.MemcacheUnsupportedError):
            c.get_or_fill("x", lambda: b"v")
