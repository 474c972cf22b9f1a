"""No leaked Python objects: reference counts, gc object counts and traced memory stay flat
over 100,000 requests (blocking and asyncio)."""

import asyncio
import gc
import sys
import tracemalloc

import folsom
from conftest import scaled

N = scaled(100000, 20000)


def _objects():
    gc.collect()
    return len(gc.get_objects())


def test_blocking_refcounts_flat(shared_memcached):
    with folsom.Client(shared_memcached.address, protocol="meta") as c:
        key, value, missing = "rc-key", b"rc-value" * 8, "rc-missing"
        keys = ["rc-key", "rc-missing"]
        c.set(key, value)
        for _ in range(1000):  # warm-up: caches, interned strings, the first allocations
            c.get(key)
            c.get_many(keys)
        refs = (sys.getrefcount(key), sys.getrefcount(value), sys.getrefcount(missing),
                sys.getrefcount(keys))
        objects = _objects()
        tracemalloc.start()
        snap0 = tracemalloc.take_snapshot()
        for i in range(N // 4):
            c.get(key)
            c.get(missing)
            c.set(key, value)
            c.get_many(keys)
        snap1 = tracemalloc.take_snapshot()
        tracemalloc.stop()
        grown = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
        del snap0, snap1
        assert refs[:4] == (sys.getrefcount(key), sys.getrefcount(value),
                            sys.getrefcount(missing), sys.getrefcount(keys))
        assert _objects() - objects < 200  # a leak per request would be 100,000
        assert grown < 64 * 1024, grown


async def test_async_refcounts_flat(shared_memcached):
    async with folsom.AsyncClient(shared_memcached.address, protocol="meta") as c:
        key, value = "arc-key", b"arc-value"
        await c.set(key, value)
        for _ in range(500):
            await c.get(key)
        for _ in range(5):  # warm-up of gather's own machinery
            await asyncio.gather(*(c.get(key) for _ in range(1000)))
        refs = (sys.getrefcount(key), sys.getrefcount(value))
        objects = _objects()
        batch = 1000
        for _ in range(N // batch):
            await asyncio.gather(*(c.get(key) for _ in range(batch)))
        assert refs == (sys.getrefcount(key), sys.getrefcount(value))
        # a leak per request would be 100,000 objects; asyncio keeps a few of its own
        assert _objects() - objects < 200
