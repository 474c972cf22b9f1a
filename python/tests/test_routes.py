"""routes=: mcrouter-shaped route trees (docs/routing.md) from Python, against real memcached."""

import json

import pytest

import folsom
from conftest import Memcached


def replicated(a, b, **route):
    cfg = {"pools": {"A": {"servers": [a.address]}, "B": {"servers": [b.address]}},
           "route": {"type": "AllSyncRoute", "name": "replicated",
                     "children": ["PoolRoute|A", "PoolRoute|B"]}}
    cfg["route"].update(route)
    return cfg


@pytest.fixture
def two():
    a, b = Memcached(), Memcached()
    yield a, b
    a.stop()
    b.stop()


@pytest.mark.parametrize("protocol", ["meta", "binary", "ascii"])
def test_replicated_writes_reach_both_pools(two, protocol):
    a, b = two
    c = folsom.Client(None, protocol=protocol, routes=replicated(a, b))
    only_a = folsom.Client(a.address, protocol=protocol)
    only_b = folsom.Client(b.address, protocol=protocol)
    assert c.set("k", b"v") is True
    assert only_a.get("k") == b"v" and only_b.get("k") == b"v"
    assert c.get_many(["k", "none"]) == {"k": b"v"}
    assert c.delete("k") is True
    assert only_a.get("k") is None and only_b.get("k") is None
    stats = {s["name"]: s for s in c.route_stats()}
    assert stats["replicated"]["type"] == "AllSyncRoute"
    assert stats["replicated"]["requests"] >= 3
    for x in (c, only_a, only_b):
        x.close()


def test_routes_as_json_text_or_file(two, tmp_path):
    a, b = two
    path = tmp_path / "routes.json"
    path.write_text(json.dumps(replicated(a, b)))
    for routes in (json.dumps(replicated(a, b)), str(path), path):
        c = folsom.Client(None, routes=routes)
        assert c.set("k", b"x") is True
        assert c.get("k") == b"x"
        c.close()


def test_failover_to_the_second_pool_when_the_first_is_dead(two):
    a, b = two
    cfg = {"pools": {"P": {"servers": [a.address]}, "B": {"servers": [b.address]}},
           "route": {"type": "FailoverRoute", "children": ["PoolRoute|P", "PoolRoute|B"]}}
    c = folsom.Client(None, routes=cfg)
    assert c.set("k", b"p") is True
    a.kill()
    assert c.set("k", b"b") is True
    assert c.get("k") == b"b"
    assert folsom.Client(b.address).get("k") == b"b"
    assert {s["name"]: s for s in c.route_stats()}["route"]["failovers"] >= 2
    c.close()


def test_a_bad_configuration_names_its_json_path(two):
    a, b = two
    cfg = replicated(a, b)
    cfg["route"]["children"][1] = "PoolRoute|C"
    with pytest.raises(folsom.MemcacheIllegalInputError, match=r"route\.children\[1\]: unknown pool 'C'"):
        folsom.Client(None, routes=cfg)
    with pytest.raises(folsom.MemcacheIllegalInputError, match="unknown key 'colour'"):
        folsom.Client(None, routes={"pools": {}, "route": "NullRoute", "colour": "red"})


async def test_async_client_over_a_route(two):
    a, b = two
    c = folsom.AsyncClient(None, routes=replicated(a, b))
    assert await c.set("k", b"v") is True
    assert await c.get("k") == b"v"
    assert folsom.Client(b.address).get("k") == b"v"
    c.close()
