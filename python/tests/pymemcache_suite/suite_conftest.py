"""conftest.py for pymemcache's own tests run against folsom (copied next to them by
run_pymemcache_suite.py; pymemcache's own conftest.py is not used).

pymemcache's clients are replaced by folsom's before the tests import them:
pymemcache.client.base.Client, PooledClient, pymemcache.client.hash.HashClient and
pymemcache.client.Client. ``client_class`` runs each integration test with folsom.Client,
folsom.PooledClient, folsom.HashClient over one server, and folsom.HashClient over three (the
key's server chosen by folsom's placement), all over FOLSOM_PROTOCOL (meta, binary or ascii).
The servers are real memcached processes on free loopback ports, started and stopped here: a
plain one (host/port), two more for the three-server HashClient, and a TLS one (tls_host/
tls_port) whose certificates are generated per run, tls_context trusting their CA.
"""

import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

import pytest

import folsom
import foreign_sources
import pymemcache.client
import pymemcache.client.base
import pymemcache.client.hash

PROTOCOL = os.environ.get("FOLSOM_PROTOCOL", "meta")


# One memcached per instance on a free loopback port, stopped by its PID: the class the other
# foreign suites use (python/tests/foreign_sources.py, on the path run_pymemcache_suite.py sets).
_Memcached = foreign_sources.Memcached


_state = {}


def pytest_configure(config):
    config.addinivalue_line("markers", "integration: talks to memcached")
    config.addinivalue_line("markers", "benchmark: a benchmark")
    d = tempfile.mkdtemp(prefix="folsom-pymemcache-tls-")
    p = lambda name: os.path.join(d, name)
    run = lambda cmd: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run(["openssl", "req", "-x509", *ec, "-keyout", p("ca.key"), "-out", p("ca.pem"), "-days",
         "2", "-subj", "/CN=folsom-pymemcache-ca"])
    run(["openssl", "req", *ec, "-keyout", p("server.key"), "-out", p("server.csr"), "-subj",
         "/CN=localhost"])
    with open(p("san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run(["openssl", "x509", "-req", "-in", p("server.csr"), "-CA", p("ca.pem"), "-CAkey",
         p("ca.key"), "-CAcreateserial", "-out", p("server.pem"), "-days", "2", "-extfile",
         p("san.ext")])
    _state["dir"] = d
    _state["plain"] = [_Memcached(), _Memcached(), _Memcached()]
    _state["tls"] = [_Memcached(["-Z", "-o", "ssl_chain_cert=%s,ssl_key=%s"
                                 % (p("server.pem"), p("server.key"))]) for _ in range(3)]


def pytest_unconfigure(config):
    for m in _state.get("plain", []) + _state.get("tls", []):
        m.stop()
    if "dir" in _state:
        shutil.rmtree(_state["dir"], ignore_errors=True)


def _group_of(server):
    """The three servers of the group (plain or TLS) `server` belongs to."""
    for group in (_state["plain"], _state["tls"]):
        addresses = [("127.0.0.1", m.port) for m in group]
        if tuple(server) in addresses:
            return addresses
    return [tuple(server)]


# ---- folsom in pymemcache's place ------------------------------------------------------------

class Client(folsom.Client):
    def __init__(self, server, *args, **kwargs):
        kwargs.setdefault("protocol", PROTOCOL)
        super().__init__(server, *args, **kwargs)


class PooledClient(folsom.PooledClient):
    def __init__(self, server, *args, **kwargs):
        kwargs.setdefault("protocol", PROTOCOL)
        super().__init__(server, *args, **kwargs)


class HashClient(folsom.HashClient):
    def __init__(self, servers, *args, **kwargs):
        kwargs.setdefault("protocol", PROTOCOL)
        super().__init__(servers, *args, **kwargs)


class HashClientSingle(HashClient):
    """pymemcache's own conftest's HashClientSingle: a HashClient of the one server."""

    def __init__(self, server, *args, **kwargs):
        super().__init__([server], *args, **kwargs)


class HashClientThree(HashClient):
    """A HashClient of three servers, the given one first (keys spread by placement)."""

    def __init__(self, server, *args, **kwargs):
        others = [s for s in _group_of(server) if s != tuple(server)][:2]
        super().__init__([server] + others, *args, **kwargs)


pymemcache.client.base.Client = Client
pymemcache.client.base.PooledClient = PooledClient
pymemcache.client.hash.HashClient = HashClient
pymemcache.client.Client = Client
pymemcache.client.PooledClient = PooledClient
pymemcache.client.HashClient = HashClient


# ---- pymemcache's fixtures, on the servers started above -------------------------------------

@pytest.fixture(scope="session")
def host():
    return "127.0.0.1"


@pytest.fixture(scope="session")
def port():
    return _state["plain"][0].port


@pytest.fixture(scope="session")
def tls_host():
    return "127.0.0.1"


@pytest.fixture(scope="session")
def tls_port():
    return _state["tls"][0].port


@pytest.fixture(scope="session")
def size():
    return 1024


@pytest.fixture(scope="session")
def count():
    return int(os.environ.get("FOLSOM_PYMEMCACHE_BENCH_COUNT", "200"))


@pytest.fixture(scope="session")
def keys():
    return 20


@pytest.fixture(scope="session")
def pairs(size, keys):
    return {"pymemcache_test:%d" % i: "X" * size for i in range(keys)}


@pytest.fixture(scope="session")
def tls_context():
    return ssl.create_default_context(cafile=os.path.join(_state["dir"], "ca.pem"))


def pytest_generate_tests(metafunc):
    if "socket_module" in metafunc.fixturenames:
        metafunc.parametrize("socket_module", [socket])
    if "client_class" in metafunc.fixturenames:
        metafunc.parametrize("client_class",
                             [Client, PooledClient, HashClientSingle, HashClientThree],
                             ids=["Client", "PooledClient", "HashClient1", "HashClient3"])


def pytest_collection_modifyitems(config, items):
    # test_benchmark.py's peers (pylibmc, python-memcached) are not what is tested here.
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec and callspec.params.get("client") in ("pylibmc", "memcache"):
            item.add_marker(pytest.mark.skip(reason="a peer library, not pymemcache's API"))
