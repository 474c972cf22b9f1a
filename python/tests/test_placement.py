"""Placement, key by key for 10,000 keys on 3 servers: folsom.Client's ketama identical to
pylibmc's (libmemcached, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, the mode
tests/unit/ketama_libmemcached_compat_test.cpp checks), and folsom.HashClient's identical to
pymemcache's HashClient (rendezvous hashing over murmur3)."""

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


@pytest.mark.parametrize("prefix", [b"", b"app:"])
def test_hash_client_placement_identical_to_pymemcache(three, prefix):
    """Debian's pymemcache (3.5) hashes a key as the program gave it, without its prefix."""
    pymemcache_hash = pytest.importorskip("pymemcache.client.hash")
    servers = [("127.0.0.1", s.port) for s in three]
    keys = ["user:%d:profile" % i for i in range(9000)]
    keys += ["q'%d" % i for i in range(300)] + ['d"%d' % i for i in range(300)]
    keys += ["bs\\%d" % i for i in range(200)] + ["k%d" % i for i in range(200)]
    assert len(keys) == 10000
    theirs = pymemcache_hash.HashClient(servers, key_prefix=prefix, default_noreply=False)
    with folsom.HashClient(servers, key_prefix=prefix) as ours:
        ours.flush_all()
        mismatched = [(k, ours.server_for(k), theirs.hasher.get_node(k)) for k in keys
                      if ours.server_for(k) != theirs.hasher.get_node(k)]
        assert mismatched == [], mismatched[:5]
        assert len({ours.server_for(k) for k in keys}) == 3
        # what one writes, the other finds (the prefix on the wire, not in the placement)
        assert ours.set_many({k: b"v" for k in keys[:3000]}) == []
        assert len(theirs.get_many(keys[:3000])) == 3000
        theirs.set_many({k: b"w" for k in keys[3000:6000]})
        assert len(ours.get_many(keys[3000:6000])) == 3000
    theirs.close()
