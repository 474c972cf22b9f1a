"""binary_keys=True: keys of any bytes (1..186) over the meta protocol, against a real memcached.
Every byte value as a key, multi-gets keyed by the caller's objects, counters, touch and
delete on them, the 186-byte limit (key_prefix included), and the refusal over ascii and
binary."""

import pytest

import folsom
from folsom.exceptions import MemcacheIllegalInputError, MemcacheUnsupportedError


@pytest.fixture
def client(shared_memcached):
    c = folsom.Client(shared_memcached.address, protocol="meta", binary_keys=True)
    c.flush_all()
    yield c
    c.close()


def one_byte_keys():
    return [bytes([b]) for b in range(256)]


def test_every_byte_value_is_a_key_of_its_own(client):
    keys = one_byte_keys()
    for i, k in enumerate(keys):
        assert client.set(k, b"v%d" % i, expire=60) is True
    for i, k in enumerate(keys):
        assert client.get(k) == b"v%d" % i
    longer = [b"k" + k + b"\r\n end" for k in keys] + [b"\0" * 186, b"\xff" * 186, b" " * 186]
    for k in longer:
        assert client.set(k, k)
    missing = [b"never\0set", b"\n" * 185]
    found = client.get_many(keys + longer + missing)
    assert len(found) == len(keys) + len(longer)
    for i, k in enumerate(keys):
        assert found[k] == b"v%d" % i
    for k in longer:
        assert found[k] == k
    for m in missing:
        assert m not in found
    many = client.gets_many(keys)
    assert set(many) == set(keys)
    value, cas = many[b"\n"]
    assert value == b"v10"
    assert client.cas(b"\n", b"changed", cas) is True
    assert client.get(b"\n") == b"changed"


def test_counters_touch_and_delete_on_every_byte_value(client):
    for i, k in enumerate(one_byte_keys()):
        assert client.set(k, b"10")
        assert client.incr(k, i) == 10 + i
        assert client.decr(k, 3) == 7 + i
        assert client.touch(k, 60) is True
        assert client.delete(k) is True
        assert client.get(k) is None
        assert client.delete(k) is False


def test_str_keys_are_their_utf8_and_text_keys_are_shared(shared_memcached, client):
    client.set("clé é", b"x")
    assert client.get("clé é".encode()) == b"x"
    # memcached stores the decoded bytes: a client without binary_keys sees the same item.
    plain = folsom.Client(shared_memcached.address, protocol="ascii")
    try:
        client.set(b"shared", b"from binary")
        assert plain.get(b"shared") == b"from binary"
    finally:
        plain.close()


def test_keys_outside_1_to_186_bytes_raise_before_sending(client, shared_memcached):
    assert client.set(b"\x80" * 186, b"fits")
    for bad in (b"\x80" * 187, b""):
        with pytest.raises(MemcacheIllegalInputError):
            client.set(bad, b"no")
        with pytest.raises(MemcacheIllegalInputError):
            client.get(bad)
        with pytest.raises(MemcacheIllegalInputError):
            client.get_many([b"ok", bad])
    assert client.get(b"\x80" * 186) == b"fits"
    # The prefix counts: 5 + 181 fit, 5 + 182 do not.
    prefixed = folsom.Client(shared_memcached.address, protocol="meta", binary_keys=True,
                             key_prefix=b"\x00ns \xff")
    try:
        assert prefixed.set(b"\n" * 181, b"p")
        assert prefixed.get_many([b"\n" * 181]) == {b"\n" * 181: b"p"}
        assert client.get(b"\x00ns \xff" + b"\n" * 181) == b"p"
        with pytest.raises(MemcacheIllegalInputError):
            prefixed.set(b"\n" * 182, b"p")
    finally:
        prefixed.close()


@pytest.mark.parametrize("protocol", ["ascii", "binary"])
def test_ascii_and_binary_protocols_are_refused(shared_memcached, protocol):
    with pytest.raises(MemcacheUnsupportedError, match="binary_keys needs the meta protocol"):
        folsom.Client(shared_memcached.address, protocol=protocol, binary_keys=True)


def test_asyncio_and_hash_clients_take_binary_keys(shared_memcached):
    import asyncio

    key = b"\x00a\r\n \xff"

    async def run():
        c = folsom.AsyncClient(shared_memcached.address, binary_keys=True)
        try:
            assert await c.set(key, b"async") is True
            assert await c.get(key) == b"async"
            assert await c.get_many([key, b"\x01missing"]) == {key: b"async"}
        finally:
            c.close()

    asyncio.run(run())
    h = folsom.HashClient([shared_memcached.address], binary_keys=True)
    try:
        assert h.get(key) == b"async"
        assert h.get_many([key]) == {key: b"async"}
    finally:
        h.close()
