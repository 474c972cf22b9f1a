"""What a pymemcache program relies on: close() reconnects, an expire over 30 days is an
absolute time, a refused oversized set leaves no stale value, ignore_exc covers writes, stats'
arguments, ASCII keys by default, serde as the second positional parameter, cache_memlimit,
PooledClient / HashClient / RetryingClient with every pymemcache argument, tls_context as an
ssl.SSLContext, and pymemcache's exception classes catching folsom's errors."""

import asyncio
import os
import socket
import ssl
import subprocess
import time

import pytest

import folsom
from conftest import PROTOCOLS, Memcached

pymemcache = pytest.importorskip("pymemcache")
from pymemcache import exceptions as pm_exc  # noqa: E402
from pymemcache import serde as pm_serde  # noqa: E402
from pymemcache.client.base import KeepaliveOpts  # noqa: E402
from pymemcache.client.retrying import RetryingClient  # noqa: E402


def within(ttl, expected, slack=100):
    """memcached's clock moves once a second behind the wall clock: one second over is fine."""
    return expected - slack <= ttl <= expected + 1


def meta_ttl(address, key):
    """The remaining ttl memcached holds for `key` (mg's t flag), read over a socket of its own:
    -1 for no expiry, None for a miss."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), 5) as s:
        s.sendall(b"mg " + key.encode() + b" t\r\n")
        reply = b""
        while not reply.endswith(b"\r\n"):
            reply += s.recv(256)
    if reply.startswith(b"EN"):
        return None
    for flag in reply.split()[1:]:
        if flag.startswith(b"t"):
            return int(flag[1:])
    raise AssertionError(reply)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_close_and_disconnect_all_reconnect(shared_memcached, protocol):
    c = folsom.Client(shared_memcached.address, protocol=protocol)
    assert c.set("rc", b"1")
    conns = c.stats()[b"curr_connections"]
    for end in (c.close, c.disconnect_all, c.quit):
        end()
        assert c.closed
        assert c.get("rc") == b"1"  # the next call connects again
        assert not c.closed
    c.close()
    # The dropped connections are gone at the server (no leak per close).
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with folsom.Client(shared_memcached.address) as probe:
            if probe.stats()[b"curr_connections"] <= conns:
                break
        time.sleep(0.05)
    else:
        pytest.fail("connections were not dropped by close()")


async def test_async_close_reconnects(shared_memcached):
    c = folsom.AsyncClient(shared_memcached.address)
    assert await c.set("arc", b"1")
    c.close()
    assert await c.get("arc") == b"1"
    c.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_expire_over_thirty_days_is_a_unix_time(shared_memcached, protocol):
    with folsom.Client(shared_memcached.address, protocol=protocol) as c:
        at = int(time.time()) + 3600
        assert c.set("abs", b"v", expire=at)
        assert c.get("abs") == b"v"
        assert within(meta_ttl(shared_memcached.address, "abs"), 3600)
        assert c.touch("abs", int(time.time()) + 7200)
        assert within(meta_ttl(shared_memcached.address, "abs"), 7200)
        assert c.gat("abs", int(time.time()) + 1800) == b"v"
        assert within(meta_ttl(shared_memcached.address, "abs"), 1800)
        # a duration of 30 days exactly is still a duration
        assert c.set("rel", b"v", expire=30 * 24 * 3600)
        assert within(meta_ttl(shared_memcached.address, "rel"), 30 * 24 * 3600)
        # an absolute time already past: expired at once
        assert c.set("past", b"v", expire=int(time.time()) - 10)
        assert c.get("past") is None
        # a far absolute time (a year on): memcached keeps it that long
        year = int(time.time()) + 365 * 24 * 3600
        assert c.set("far", b"v", expire=year)
        assert within(meta_ttl(shared_memcached.address, "far"), 365 * 24 * 3600)
        assert c.set_many({"m1": b"1"}, expire=int(time.time()) + 3600) == []
        assert within(meta_ttl(shared_memcached.address, "m1"), 3600)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_oversized_set_leaves_no_stale_value(shared_memcached, protocol):
    with folsom.Client(shared_memcached.address, protocol=protocol, max_value_size=1000) as c:
        assert c.set("big", b"old")
        with pytest.raises(pm_exc.MemcacheServerError) as e:
            c.set("big", b"x" * 1001)
        assert isinstance(e.value, folsom.MemcacheValueTooLargeError)
        assert c.get("big") is None  # as after memcached's own refusal
        assert c.set("many", b"old")
        with pytest.raises(pm_exc.MemcacheServerError):
            c.set_many({"many": b"x" * 1001, "other": b"1"})
        assert c.get("many") is None
        assert c.set("quiet", b"old")
        with pytest.raises(folsom.MemcacheValueTooLargeError):
            c.set("quiet", b"x" * 1001, noreply=True)
        assert c.get("quiet") is None
    # The server's own refusal (its item limit below max_value_size)
    with folsom.Client(shared_memcached.address, protocol=protocol,
                       max_value_size=4 * 1024 * 1024) as c:
        assert c.set("srv", b"old")
        with pytest.raises(pm_exc.MemcacheServerError):
            c.set("srv", b"x" * (2 * 1024 * 1024))
        assert c.get("srv") is None


async def test_async_oversized_set_leaves_no_stale_value(shared_memcached):
    async with folsom.AsyncClient(shared_memcached.address, max_value_size=1000) as c:
        assert await c.set("abig", b"old")
        with pytest.raises(pm_exc.MemcacheServerError):
            await c.set("abig", b"x" * 1001)
        assert await c.get("abig") is None


def test_ignore_exc_covers_writes():
    dead = "127.0.0.1:%d" % _closed_port()
    for cls in (folsom.Client, folsom.HashClient):
        c = cls(dead, ignore_exc=True, connect_timeout=0.5, timeout=0.5)
        assert c.set("k", b"v") is False
        assert c.add("k", b"v") is False
        assert c.replace("k", b"v") is False
        assert c.append("k", b"v") is False
        assert c.prepend("k", b"v") is False
        assert c.cas("k", b"v", 1) is False
        assert c.delete("k") is False
        assert c.incr("k", 1) is None
        assert c.decr("k", 1) is None
        assert c.touch("k", 1) is False
        assert c.get("k") is None
        assert c.gets("k") == (None, None)
        assert c.get_many(["k", "j"]) == {}
        assert c.set_many({"k": b"1", "j": b"2"}) == ["k", "j"]
        assert c.delete_many(["k"]) is True
        assert c.stats() == {}
        # bad input still raises: it is the program's error, not the server's
        with pytest.raises(folsom.MemcacheIllegalInputError):
            c.set("bad key", b"v")
        c.close()
    c = folsom.Client(dead, connect_timeout=0.5, timeout=0.5)
    with pytest.raises(folsom.MemcacheConnectionError):
        c.set("k", b"v")
    c.close()


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("protocol", ["meta", "ascii"])
def test_stats_takes_pymemcache_arguments(shared_memcached, protocol):
    with folsom.Client(shared_memcached.address, protocol=protocol) as c:
        c.set("dumped", b"v")
        dump = c.stats("cachedump", "1", "100")
        assert isinstance(dump, dict)
        assert c.stats("slabs")
        assert c.stats(b"settings")[b"maxconns"] > 0
        with pytest.raises(folsom.MemcacheIllegalInputError):
            c.stats("items\r\nflush_all")
        with pytest.raises(folsom.MemcacheIllegalInputError):
            c.stats("cachedump", "")


def test_unicode_keys_as_pymemcache(shared_memcached):
    with folsom.Client(shared_memcached.address) as c:
        with pytest.raises(pm_exc.MemcacheIllegalInputError):
            c.set("ключ", b"1")
        with pytest.raises(pm_exc.MemcacheIllegalInputError):
            c.get("ключ")
        with pytest.raises(pm_exc.MemcacheClientError):  # encoding='ascii' (pymemcache's)
            c.set("k", "\u0fff")
        assert c.set("ascii", "plain")
    with folsom.Client(shared_memcached.address, allow_unicode_keys=True, encoding="utf8") as c:
        assert c.set("ключ", "значение")
        assert c.get("ключ") == "значение".encode()
    with pytest.raises(ValueError):
        folsom.Client(shared_memcached.address, encoding="latin-1")


def test_serde_is_the_second_positional_parameter(shared_memcached):
    with folsom.Client(shared_memcached.address, pm_serde.pickle_serde) as c:
        c.set("obj", {"a": [1, 2]})
        assert c.get("obj") == {"a": [1, 2]}
    with pytest.raises(TypeError, match="protocol="):
        folsom.Client(shared_memcached.address, "meta")

    def ser(key, value):
        return (value.encode(), 3) if isinstance(value, str) else (value, 0)

    def de(key, value, flags):
        return value.decode() if flags == 3 else value

    with folsom.Client(shared_memcached.address, serializer=ser, deserializer=de) as c:
        c.set("legacy", "text")
        assert c.get("legacy") == "text"


def test_cache_memlimit(memcached):
    with folsom.Client(memcached.address) as c:
        assert c.cache_memlimit(100) is True
        assert c.stats("settings")[b"maxbytes"] == 100 * 1024 * 1024
        with pytest.raises(folsom.MemcacheIllegalInputError):
            c.cache_memlimit("a lot")


def test_every_pymemcache_argument_accepted(shared_memcached):
    host, port = shared_memcached.address.rsplit(":", 1)
    server = (host, int(port))
    keep = KeepaliveOpts(idle=1, intvl=1, cnt=3)
    c = folsom.Client(server, pm_serde.pickle_serde, None, None, 1.0, 1.0, True, False, socket,
                      keep, b"p:", True, False, "ascii", None)
    assert c.set("x", [1]) is True and c.get("x") == [1]
    c.close()
    c = folsom.PooledClient(server, serde=None, serializer=None, deserializer=None,
                            connect_timeout=1, timeout=1, no_delay=True, ignore_exc=False,
                            socket_module=socket, socket_keepalive=keep, key_prefix=b"",
                            max_pool_size=4, pool_idle_timeout=10, lock_generator=None,
                            default_noreply=True, allow_unicode_keys=False, encoding="ascii",
                            tls_context=None)
    assert c.set("pooled", b"1") and c.get("pooled") == b"1"
    c.close()
    from pymemcache.client.rendezvous import RendezvousHash
    c = folsom.HashClient([server], hasher=RendezvousHash, serde=None, serializer=None,
                          deserializer=None, connect_timeout=1, timeout=1, no_delay=True,
                          socket_module=socket, socket_keepalive=keep, key_prefix=b"",
                          max_pool_size=2, pool_idle_timeout=0, lock_generator=None,
                          retry_attempts=2, retry_timeout=1, dead_timeout=60, use_pooling=True,
                          ignore_exc=False, allow_unicode_keys=False, default_noreply=True,
                          encoding="ascii", tls_context=None)
    assert c.set("hashed", b"1") and c.get("hashed") == b"1"
    c.close()
    for bad in ({"max_pool_size": -1}, {"retry_attempts": "2"}, {"socket_keepalive": 5},
                {"use_pooling": "yes"}, {"hasher": object}):
        with pytest.raises((TypeError, ValueError)):
            folsom.HashClient([server], **bad)


def _keepalive_of_connections_to(port):
    """(SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT) of each of this process's TCP
    sockets connected to 127.0.0.1:port (read through a duplicate of the descriptor)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink("/proc/self/fd/" + fd).startswith("socket:"):
                continue
            s = socket.fromfd(int(fd), socket.AF_INET, socket.SOCK_STREAM)
        except OSError:
            continue
        with s:
            try:
                if s.family != socket.AF_INET or s.getpeername() != ("127.0.0.1", port):
                    continue
            except OSError:
                continue
            found.append((s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
                          s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                          s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
                          s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT)))
    return found


def test_socket_keepalive_sets_tcp_keepalive(memcached):
    # pymemcache's KeepaliveOpts sets SO_KEEPALIVE, TCP_KEEPIDLE/INTVL/CNT on its socket; folsom
    # sets the same on each of its connections (its tcp_keepalive option).
    host, port = memcached.address.rsplit(":", 1)
    port = int(port)
    for make in (lambda: folsom.Client(memcached.address,
                                       socket_keepalive=KeepaliveOpts(idle=7, intvl=3, cnt=4)),
                 lambda: folsom.HashClient([memcached.address],
                                           socket_keepalive=KeepaliveOpts(idle=7, intvl=3, cnt=4)),
                 lambda: folsom.Client(memcached.address, tcp_keepalive=(7, 3, 4))):
        c = make()
        assert c.set("ka", b"1") is True
        conns = _keepalive_of_connections_to(port)
        assert conns and all(k == (1, 7, 3, 4) for k in conns), conns
        c.close()
    c = folsom.Client(memcached.address)
    assert c.set("ka", b"1") is True
    conns = _keepalive_of_connections_to(port)
    assert conns and all(k[0] == 0 for k in conns), conns
    c.close()
    with pytest.raises(TypeError):
        folsom.Client(memcached.address, socket_keepalive=KeepaliveOpts(),
                      tcp_keepalive=(1, 1, 1))
    for bad in ((0, 1, 1), (1, 40000, 1), (1, 1, 128), (1, 1, "3")):
        with pytest.raises((TypeError, ValueError)):
            folsom.Client(memcached.address, tcp_keepalive=bad)
    with pytest.raises(ValueError, match="count"):
        folsom.Client(memcached.address, socket_keepalive=KeepaliveOpts(idle=1, intvl=1, cnt=200))


def test_hash_client_default_kwargs_as_pymemcache(shared_memcached):
    # pymemcache's HashClient.default_kwargs: what each server's client gets (Django's tests read
    # it); the same keys, and the same values for the arguments given (the defaults are folsom's:
    # default_noreply=False, see the migration table).
    from pymemcache.client.hash import HashClient as PmHashClient
    host, port = shared_memcached.address.rsplit(":", 1)
    for kwargs in ({}, {"no_delay": True, "serde": pm_serde.pickle_serde, "timeout": 2.5,
                        "key_prefix": b"p:", "allow_unicode_keys": True, "encoding": "utf8"},
                   {"use_pooling": True, "max_pool_size": 3, "pool_idle_timeout": 5}):
        ours = folsom.HashClient([(host, int(port))], **kwargs)
        theirs = PmHashClient([(host, int(port))], **kwargs)
        assert ours.default_kwargs.keys() == theirs.default_kwargs.keys()
        for name, value in kwargs.items():
            if name != "use_pooling":
                assert ours.default_kwargs[name] == theirs.default_kwargs[name] == value
        ours.close()


def test_hash_client_clients_one_per_server(memcached_factory):
    # pymemcache's HashClient.clients: {"host:port": that server's Client}, with the same
    # arguments; each talks to its server only.
    from pymemcache.client.hash import HashClient as PmHashClient
    servers = [memcached_factory() for _ in range(3)]
    addresses = [s.address for s in servers]
    protocol = "binary"  # folsom's own options carried over too
    hc = folsom.HashClient(addresses, serde=pm_serde.pickle_serde, key_prefix=b"p:",
                           protocol=protocol)
    assert list(hc.clients) == list(PmHashClient(addresses).clients) == addresses
    for name, c in hc.clients.items():
        assert type(c) is folsom.Client and c.serde is pm_serde.pickle_serde
        assert c.protocol == protocol and c.key_prefix == b"p:"
    assert hc.clients["%s" % addresses[0]] is hc.clients[addresses[0]]  # made once
    key = "placed"
    owner = hc.server_for(key)
    assert hc.set(key, {"v": 1}) is True
    for name, c in hc.clients.items():
        assert c.get(key) == ({"v": 1} if name == owner else None)
    assert hc.clients[owner].delete(key) is True and hc.get(key) is None
    hc.close()
    assert all(c.closed for c in hc.clients.values())
    assert hc.clients[owner].set(key, [2]) is True and hc.get(key) == [2]  # both reconnect
    hc.close()


def test_retrying_client_wraps_folsom(shared_memcached):
    attempts = []

    class Flaky(folsom.Client):
        def get(self, key, default=None):
            attempts.append(key)
            if len(attempts) < 3:
                raise folsom.MemcacheUnexpectedCloseError("cut")
            return super().get(key, default)

    inner = Flaky(shared_memcached.address)
    inner.set("r", b"1")
    c = RetryingClient(inner, attempts=3, retry_delay=0,
                       retry_for=[pm_exc.MemcacheUnexpectedCloseError])
    assert c.get("r") == b"1"
    assert len(attempts) == 3
    assert c.set("r2", b"2") is True
    c.close()


def test_pymemcache_exceptions_catch_folsom_errors(shared_memcached):
    pairs = [(folsom.MemcacheError, pm_exc.MemcacheError),
             (folsom.MemcacheClientError, pm_exc.MemcacheClientError),
             (folsom.MemcacheIllegalInputError, pm_exc.MemcacheIllegalInputError),
             (folsom.MemcacheServerError, pm_exc.MemcacheServerError),
             (folsom.MemcacheUnknownError, pm_exc.MemcacheUnknownError),
             (folsom.MemcacheUnexpectedCloseError, pm_exc.MemcacheUnexpectedCloseError),
             (folsom.MemcacheValueTooLargeError, pm_exc.MemcacheServerError)]
    for ours, theirs in pairs:
        assert issubclass(ours, theirs), (ours, theirs)
    with folsom.Client(shared_memcached.address) as c:
        try:
            c.get("bad key")
        except pm_exc.MemcacheIllegalInputError as e:
            assert e.errc == "invalid_key"
    c = folsom.Client("127.0.0.1:%d" % _closed_port(), connect_timeout=0.5, timeout=0.5)
    with pytest.raises(OSError) as e:  # pymemcache raises socket errors: OSError
        c.get("k")
    assert isinstance(e.value, pm_exc.MemcacheError)  # and folsom's base class catches it too
    c.close()


def test_pylibmc_exceptions_catch_folsom_errors(shared_memcached):
    """A pylibmc program's (or PyLibMCCache user's) except clauses keep catching folsom's
    errors when pylibmc is installed."""
    pylibmc = pytest.importorskip("pylibmc")
    pairs = [(folsom.MemcacheError, pylibmc.Error),
             (folsom.MemcacheClientError, pylibmc.ClientError),
             (folsom.MemcacheServerError, pylibmc.ServerError),
             (folsom.MemcacheValueTooLargeError, pylibmc.TooBig),
             (folsom.MemcacheUnknownError, pylibmc.ProtocolError),
             (folsom.MemcacheUnsupportedError, pylibmc.NotSupportedError),
             (folsom.MemcacheConnectionError, pylibmc.ConnectionError)]
    for ours, theirs in pairs:
        assert issubclass(ours, theirs), (ours, theirs)
    assert folsom.ClientError is folsom.MemcacheClientError
    with folsom.Client(shared_memcached.address, max_value_size=1024) as c:
        with pytest.raises(pylibmc.TooBig):
            c.set("big", b"x" * 2048)
        c.set("text", b"abc")
        with pytest.raises(pylibmc.ClientError):
            c.incr("text", 1)
    c = folsom.Client("127.0.0.1:%d" % _closed_port(), connect_timeout=0.5, timeout=0.5)
    with pytest.raises(pylibmc.ConnectionError):
        c.get("k")
    c.close()


@pytest.fixture(scope="module")
def client_cert(tls_files):
    d = os.path.dirname(tls_files("ca.pem"))
    p = lambda name: os.path.join(d, name)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run = lambda cmd: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
    run(["openssl", "req", *ec, "-keyout", p("client.key"), "-out", p("client.csr"), "-subj",
         "/CN=folsom-client"])
    run(["openssl", "x509", "-req", "-in", p("client.csr"), "-CA", p("ca.pem"), "-CAkey",
         p("ca.key"), "-CAcreateserial", "-out", p("client.pem"), "-days", "2"])
    return p("client.pem"), p("client.key")


@pytest.fixture(scope="module")
def mtls_memcached(tls_files):
    """memcached -Z that requires a client certificate signed by the test CA."""
    m = Memcached(["-Z", "-o", "ssl_chain_cert=%s,ssl_key=%s,ssl_verify_mode=2,ssl_ca_cert=%s"
                   % (tls_files("server.pem"), tls_files("server.key"), tls_files("ca.pem"))])
    yield m
    m.stop()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_tls_context_verifies_with_its_ca(tls_memcached, tls_files, protocol):
    ctx = ssl.create_default_context(cafile=tls_files("ca.pem"))
    with folsom.Client(tls_memcached.address, tls_context=ctx, protocol=protocol) as c:
        assert c.set("tlsctx", b"1") and c.get("tlsctx") == b"1"
    wrong = ssl.create_default_context(cafile=tls_files("other.pem"))
    with folsom.Client(tls_memcached.address, tls_context=wrong, connect_timeout=2,
                       timeout=2) as c:
        with pytest.raises(folsom.MemcacheConnectionError):
            c.get("k")
    unverified = ssl.create_default_context(cafile=tls_files("other.pem"))
    unverified.check_hostname = False
    unverified.verify_mode = ssl.CERT_NONE
    with folsom.Client(tls_memcached.address, tls_context=unverified) as c:
        assert c.get("tlsctx") == b"1"


def test_tls_context_client_certificate(mtls_memcached, tls_files, client_cert):
    ctx = ssl.create_default_context(cafile=tls_files("ca.pem"))
    with folsom.Client(mtls_memcached.address, tls_context=ctx, connect_timeout=2,
                       timeout=2) as c:
        with pytest.raises(folsom.MemcacheConnectionError):
            c.get("k")  # no client certificate: refused by the server
    ctx.load_cert_chain(*client_cert)
    with folsom.Client(mtls_memcached.address, tls_context=ctx) as c:
        assert c.set("mtls", b"1") and c.get("mtls") == b"1"


def test_tls_context_settings_that_cannot_be_carried_over(tls_files, client_cert):
    def ctx():
        return ssl.create_default_context(cafile=tls_files("ca.pem"))

    c = ctx()
    c.verify_mode = ssl.CERT_OPTIONAL
    with pytest.raises(ValueError, match="verify_mode=CERT_OPTIONAL"):
        folsom.Client("127.0.0.1:1", tls_context=c)
    c = ctx()
    c.check_hostname = False
    with pytest.raises(ValueError, match="check_hostname=False"):
        folsom.Client("127.0.0.1:1", tls_context=c)
    c = ctx()
    c.minimum_version = ssl.TLSVersion.TLSv1_3
    with pytest.raises(ValueError, match="minimum_version=TLSv1_3"):
        folsom.Client("127.0.0.1:1", tls_context=c)
    c = ctx()
    c.load_verify_locations(capath=os.path.dirname(tls_files("ca.pem")))
    with pytest.raises(ValueError, match="capath"):
        folsom.Client("127.0.0.1:1", tls_context=c)
    with pytest.raises(ValueError, match="PROTOCOL_TLS_SERVER"):
        folsom.Client("127.0.0.1:1", tls_context=ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER))
    with pytest.raises(TypeError):
        folsom.Client("127.0.0.1:1", tls_context="not a context")


async def test_async_burst_waits_for_capacity(shared_memcached):
    """10,000 concurrent gets at the defaults (max_outstanding_requests=1000): the requests
    over the limit wait for a slot instead of failing."""
    async with folsom.AsyncClient(shared_memcached.address) as c:
        keys = ["burst%d" % (i % 100) for i in range(10000)]
        await c.set_many({k: b"v" for k in set(keys)})
        results = await asyncio.gather(*(c.get(k) for k in keys))
        assert results == [b"v"] * len(keys)
        assert c.outstanding() == 0
        # set, delete, incr and get_many wait as well
        assert all(await asyncio.gather(*(c.set("bs%d" % i, b"1") for i in range(3000))))
        assert all(await asyncio.gather(*(c.delete("bs%d" % i) for i in range(3000))))
        got = await asyncio.gather(*(c.get_many(["burst1", "burst2"]) for _ in range(3000)))
        assert all(g == {"burst1": b"v", "burst2": b"v"} for g in got)


async def test_async_burst_fail_fast_on_request(shared_memcached):
    async with folsom.AsyncClient(shared_memcached.address, fail_fast=True,
                                  max_outstanding_requests=10) as c:
        results = await asyncio.gather(*(c.get("ff%d" % i) for i in range(100)),
                                       return_exceptions=True)
        assert any(isinstance(r, folsom.MemcacheOverloadedError) for r in results)
        assert all(r is None or isinstance(r, folsom.MemcacheOverloadedError) for r in results)


async def test_async_wait_for_capacity_bounded_by_the_request_timeout():
    """A server that never answers holds every slot: the waiting request gives up at the
    request timeout with MemcacheTimeoutError."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    try:
        async with folsom.AsyncClient("127.0.0.1:%d" % listener.getsockname()[1],
                                      max_outstanding_requests=5, timeout=0.5) as c:
            t0 = time.monotonic()
            results = await asyncio.gather(*(c.get("h%d" % i) for i in range(20)),
                                           return_exceptions=True)
            assert all(isinstance(r, folsom.MemcacheTimeoutError) for r in results), results
            assert time.monotonic() - t0 < 30
    finally:
        listener.close()


@pytest.mark.parametrize("serde", ["pymemcache", "folsom"])
def test_pickle_serde_values_read_natively(shared_memcached, serde):
    """Values pymemcache wrote with its pickle serde read back the same through folsom's get and
    get_many (which read that serde's flags natively), and the other way round."""
    from pymemcache.client.base import Client as PymemcacheClient
    from folsom import serde as folsom_serde
    host, port = shared_memcached.address.rsplit(":", 1)
    theirs = PymemcacheClient((host, int(port)), serde=pm_serde.pickle_serde,
                              default_noreply=False)  # its writes done before we read
    s = pm_serde.pickle_serde if serde == "pymemcache" else folsom_serde.pickle_serde
    ours = folsom.Client(shared_memcached.address, s)
    assert ours._pickled
    values = {"b": b"bytes", "t": "tëxt", "i": 12345678901234567890, "n": -5,
              "d": {"a": [1, 2.5, None]}, "e": b"", "u": ""}
    for k, v in values.items():
        theirs.set("ps-" + k, v)
    for k, v in values.items():
        got = ours.get("ps-" + k)
        assert got == v and type(got) is type(v), (k, got)
    assert ours.get_many(["ps-" + k for k in values] + ["ps-absent"]) == {
        "ps-" + k: v for k, v in values.items()}
    assert ours.get("ps-absent", "dflt") == "dflt"
    theirs.set("ps-bad", b"not a pickle", flags=pm_serde.FLAG_PICKLE)
    assert ours.get("ps-bad", "dflt") is None  # as pymemcache: an unreadable pickle is None
    for k, v in values.items():
        ours.set("ps2-" + k, v)
        assert theirs.get("ps2-" + k) == v
    theirs.close()
    ours.close()


@pytest.mark.parametrize("retry_attempts", [0, 2])
def test_hash_client_dead_server_as_pymemcache(memcached_factory, retry_attempts):
    """retry_attempts, retry_timeout and dead_timeout mean what they mean in pymemcache's
    HashClient, against a killed memcached: the server's keys fail while it is retried every
    retry_timeout, it leaves the placement at its (retry_attempts + 1)-th failure, its keys then
    go where pymemcache's hasher sends them without it (key by key), and it comes back."""
    from pymemcache.client.hash import HashClient as PmHashClient
    servers = [memcached_factory() for _ in range(3)]
    addresses = [("127.0.0.1", s.port) for s in servers]
    retry_timeout = 0.2
    hc = folsom.HashClient(addresses, retry_attempts=retry_attempts,
                           retry_timeout=retry_timeout, dead_timeout=30)
    keys = ["dead:%d" % i for i in range(3000)]
    placed = {k: hc.server_for(k) for k in keys}
    assert placed == {k: PmHashClient(addresses).hasher.get_node(k) for k in keys}
    victim = servers[1]
    moved = [k for k in keys if placed[k] == victim.address]
    assert moved and hc.set(moved[0], b"before") is True

    killed = time.monotonic()
    victim.kill()
    failures = 0
    deadline = killed + 10
    for _ in range(2000):  # bounded in count and in time
        if hc.server_for(moved[0]) != victim.address or time.monotonic() > deadline:
            break
        try:
            hc.get(moved[0])
        except folsom.MemcacheConnectionError:
            failures += 1
        time.sleep(0.005)
    left = time.monotonic() - killed
    assert hc.server_for(moved[0]) != victim.address, "the dead server never left the placement"
    if retry_attempts:
        # Its keys failed while it was still placed. (With 0, the first failure takes it out,
        # and folsom's retry of an idempotent get may already find the key's new server.)
        assert failures >= 1
    # retry_attempts reconnect attempts, retry_timeout apart (the backoff's jitter: >= 80%),
    # lie between the first failure and the last.
    assert left >= retry_attempts * retry_timeout * 0.8

    # Where pymemcache's HashClient sends every key once the dead node is out of its hasher.
    pm = PmHashClient(addresses)
    pm.hasher.remove_node(victim.address)
    assert {k: hc.server_for(k) for k in keys} == {k: pm.hasher.get_node(k) for k in keys}
    assert hc.set_many({k: b"moved" for k in moved}) == []
    live = PmHashClient([a for a in addresses if a[1] != victim.port], default_noreply=False)
    assert live.get_many(moved) == {k: b"moved" for k in moved}
    live.close()

    victim.restart()
    deadline = time.monotonic() + 10
    for _ in range(2000):
        if hc.server_for(moved[0]) == victim.address or time.monotonic() > deadline:
            break
        hc.get(keys[-1])  # drives the client's loop, which reconnects
        time.sleep(0.005)
    assert {k: hc.server_for(k) for k in keys} == placed
    hc.close()
