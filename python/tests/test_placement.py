"""Ketama placement: identical to pylibmc's (libmemcached, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED,
the mode tests/unit/ketama_libmemcached_compat_test.cpp checks), for 10,000 keys on 3 servers."""

import pylibmc
import pytest

import folsom
from conftest import Memcached


@pytest.fixture(scope="module")
def three():
    servers = [Memcached() for _ in range(3)]
    yield servers
    for s in servers:
        s.stop()


def test_placement_identical_to_pylibmc(three):
    addresses = [s.address for s in three]
    keys = ["user:%d:profile" % i for i in range(10000)]
    with folsom.Client(addresses, protocol="ascii", distribution="ketama") as c:
        c.flush_all()
        owner = {k: c.server_for(k) for k in keys}
        assert set(owner.values()) == set(addresses)
        assert c.set_many({k: k.encode() for k in keys}) == []
    # Each key is on the server folsom placed it on, and only there.
    for s in three:
        with folsom.Client(s.address, protocol="ascii") as single:
            found = single.get_many(keys)
            assert set(found) == {k for k in keys if owner[k] == s.address}
    # pylibmc, configured as libmemcached's usual ketama, finds every key where folsom put it.
    mc = pylibmc.Client(addresses, behaviors={"ketama_weighted": True})
    got = {}
    for i in range(0, len(keys), 500):
        got.update(mc.get_multi(keys[i:i + 500]))
    assert len(got) == len(keys)
    assert all(got[k] == k.encode() for k in keys)
    # And the other way round: what pylibmc writes, folsom reads from the same servers.
    mc.set_multi({"py:%d" % i: b"p" for i in range(2000)})
    with folsom.Client(addresses, protocol="ascii") as c:
        assert len(c.get_many(["py:%d" % i for i in range(2000)])) == 2000
    mc.disconnect_all()


def test_weighted_placement_matches(three):
    addresses = [three[0].address + ":1", three[1].address + ":2", three[2].address + ":3"]
    keys = ["w%d" % i for i in range(10000)]
    with folsom.Client(addresses, protocol="ascii") as c:
        c.flush_all()
        assert c.set_many({k: b"1" for k in keys}) == []
    mc = pylibmc.Client(addresses, behaviors={"ketama_weighted": True})  # "host:port:weight"
    got = {}
    for i in range(0, len(keys), 500):
        got.update(mc.get_multi(keys[i:i + 500]))
    assert len(got) == len(keys)
    mc.disconnect_all()
