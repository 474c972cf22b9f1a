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


def _bytes_and_unicode_keys():
    """10,000 keys a program may give pymemcache: str with characters beyond ASCII (hashed as
    characters there), and bytes (hashed as their repr, b'...'), ASCII or not, with the quotes
    and backslashes repr escapes or switches on. (No control character or DEL: folsom refuses
    those in a text key.)"""
    pieces = ["\u00e9", "\u20ac", "\U0001f600", "\u0100", "\u65e5\u672c", "\u00ff"]
    keys = ["u:%d:%s%s" % (i, pieces[i % 6], pieces[(i // 6) % 6]) for i in range(3000)]
    keys += [("b:%d:profile" % i).encode() for i in range(3000)]
    raw = [b"'", b'"', b"'\"", b"\\", b"\x80\xff", "\u00e9".encode(), b"\x9f", b"\xc3"]
    keys += [b"r%d" % i + raw[i % 8] + raw[(i // 8) % 8] for i in range(2000)]
    keys += ["s:%d" % i for i in range(2000)]
    return keys


@pytest.mark.parametrize("prefix", [b"", b"app:"])
def test_hash_client_places_bytes_and_unicode_keys_as_pymemcache(three, prefix):
    """pymemcache 3.5 places a bytes key by its repr and a str key by its characters: folsom's
    HashClient places both as it does, key by key, and each finds what the other stored."""
    pymemcache_hash = pytest.importorskip("pymemcache.client.hash")
    servers = [("127.0.0.1", s.port) for s in three]
    keys = _bytes_and_unicode_keys()
    assert len(keys) == 10000 and len(set(keys)) == 10000
    theirs = pymemcache_hash.HashClient(servers, key_prefix=prefix, default_noreply=False,
                                        allow_unicode_keys=True)
    with folsom.HashClient(servers, key_prefix=prefix, allow_unicode_keys=True) as ours:
        ours.flush_all()
        mismatched = [(k, ours.server_for(k), theirs.hasher.get_node(k)) for k in keys
                      if ours.server_for(k) != theirs.hasher.get_node(k)]
        assert mismatched == [], (len(mismatched), mismatched[:5])
        for kind in (bytes, str):
            assert len({ours.server_for(k) for k in keys if isinstance(k, kind)}) == 3
        # b"k" and "k" name one item, which pymemcache may look for on another server: so does
        # folsom (the same answers for the same calls).
        assert ours.set("same", b"1") and theirs.get("same") == b"1"
        assert (ours.get(b"same") == b"1") == (theirs.get(b"same") == b"1")
        # What one writes, the other finds, through every single-key and multi-key call.
        half = len(keys) // 2
        ours_written = keys[::2]
        theirs_written = keys[1::2]
        assert ours.set_many({k: b"o" for k in ours_written}) == []
        got = theirs.get_many(ours_written)
        assert len(got) == half and set(got.values()) == {b"o"}
        theirs.set_many({k: b"t" for k in theirs_written})
        got = ours.get_many(theirs_written)
        assert len(got) == half and set(got.values()) == {b"t"}
        assert set(got) == set(theirs_written)  # keyed by the objects given
        for k in keys[:200]:
            assert ours.get(k) == theirs.get(k) is not None
            assert ours.delete(k) and theirs.get(k) is None
            assert ours.add(k, b"5") and theirs.get(k) == b"5"
            assert ours.incr(k, 1) == 6 and theirs.get(k) == b"6"
            theirs.set(k, b"x")
            assert ours.gets(k)[0] == b"x" and ours.touch(k, 60)
        assert len(ours.gets_many(keys[:400])) == 400
        assert ours.delete_many(keys[200:400]) is True
        assert theirs.get_many(keys[200:400]) == {}
    theirs.close()
