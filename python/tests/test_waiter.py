"""folsom._native.Waiter, what AsyncClient.get awaits: its task is woken from the loop's reader
callback at once, in the task's own context; it follows asyncio's future protocol, so gather,
wait and cancellation treat it as a future; a KeyboardInterrupt raised by a woken task leaves
no completion of its batch undelivered; abandoned Waiters are collected."""

import asyncio
import contextvars
import gc
import sys

import pytest

import folsom
from folsom import _native

request_id = contextvars.ContextVar("request_id", default=None)


def _reader_callback_of_this_step():
    """The callback of the loop Handle running this task's step (asyncio's Handle._run frame)."""
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "_run" and "self" in f.f_locals:
            return f.f_locals["self"]._callback
        f = f.f_back
    return None


async def test_get_wakes_its_task_at_once_in_its_own_context(shared_memcached):
    async with folsom.AsyncClient(shared_memcached.address, protocol="meta") as c:
        await c.set("w-k", b"v")

        async def one(i):
            request_id.set(i)
            me = asyncio.current_task()
            v = await c.get("w-k")
            # The task resumed in its own context and as the current task ...
            assert request_id.get() == i
            assert asyncio.current_task() is me
            # ... straight from the reader callback that drained its completion, not from a
            # wake-up scheduled for a later turn of the loop.
            return v, getattr(_reader_callback_of_this_step(), "__name__", None)

        results = await asyncio.gather(*(one(i) for i in range(200)))
        assert all(v == b"v" for v, _ in results)
        assert {name for _, name in results} == {"_on_completions"}  # AsyncClient's reader


async def test_waiters_follow_asyncios_future_protocol(shared_memcached):
    async with folsom.AsyncClient(shared_memcached.address, protocol="meta") as c:
        await c.set("w-a", b"a")
        await c.get("w-a")  # binds the loop
        loop = asyncio.get_running_loop()
        w = c._a_get_value("w-a")
        assert isinstance(w, _native.Waiter)
        assert asyncio.isfuture(w) and w.get_loop() is loop
        assert not w.done() and not w.cancelled()
        with pytest.raises(asyncio.InvalidStateError):
            w.result()
        seen = []
        w.add_done_callback(seen.append)
        w.add_done_callback(lambda f: seen.append("second"))
        assert w.remove_done_callback(seen.append) == 1
        # gather and wait take it as a future
        assert await asyncio.gather(w, c._a_get_value("w-missing")) == [b"a", None]
        assert w.done() and w.result() == b"a" and w.exception() is None
        await asyncio.sleep(0)
        assert seen == ["second"]
        done, pending = await asyncio.wait([c._a_get_value("w-a") for _ in range(3)])
        assert not pending and [d.result() for d in done] == [b"a"] * 3
        # a callback added once done is scheduled, as a future's is
        late = []
        w.add_done_callback(late.append)
        assert late == []
        await asyncio.sleep(0)
        assert late == [w]
        assert not w.cancel()  # done: nothing to cancel
        with pytest.raises(TypeError):
            _native.Waiter()


async def test_a_done_waiter_driven_by_next_returns_its_result_whole(shared_memcached):
    # Driven as a generator (next(), as `yield from` does), a done Waiter stops with its result
    # as StopIteration's value, a tuple as one value: a_get_multi's (values, first error) must
    # not be taken for StopIteration's arguments (StopIteration.value would be `values` alone).
    async with folsom.AsyncClient(shared_memcached.address, protocol="meta") as c:
        await c.set("w-n", b"n")
        w = c._a_get_value("w-n")
        await asyncio.wait([w])
        with pytest.raises(StopIteration) as stop:
            next(w)
        assert stop.value.value == b"n"
        m = c._a_get_multi(["w-n", "w-n-missing"], False)
        await asyncio.wait([m])
        with pytest.raises(StopIteration) as stop:
            next(m)
        values, first_error = m.result()
        assert values[0][0] == b"n" and values[1] is None and first_error == 0
        assert stop.value.value == (values, first_error)


async def test_cancelling_a_waiter_cancels_its_request(shared_memcached):
    async with folsom.AsyncClient(shared_memcached.address, protocol="meta") as c:
        await c.get("w-c")  # binds the loop
        _, pushed0 = c.wakeups()
        w = c._a_get_value("w-c")
        called = []
        w.add_done_callback(called.append)
        assert w.cancel("stop")
        assert w.cancelled() and w.done() and not w.cancel()
        with pytest.raises(asyncio.CancelledError, match="stop"):
            w.result()
        with pytest.raises(asyncio.CancelledError):
            await w
        await asyncio.sleep(0)
        assert called == [w]
        # the request still completes once (cancelled or answered); the Waiter ignores it
        for _ in range(500):
            if c.wakeups()[1] > pushed0:
                break
            await asyncio.sleep(0.01)
        assert c.wakeups()[1] == pushed0 + 1
        assert w.cancelled()
        assert await c.get("w-c", default=b"d") == b"d"


def test_a_keyboard_interrupt_after_a_get_leaves_no_completion_undelivered(shared_memcached):
    loop = asyncio.new_event_loop()
    try:
        c = folsom.AsyncClient(shared_memcached.address, protocol="meta")
        loop.run_until_complete(c.set("w-i", b"v"))

        async def one(i):
            v = await c.get("w-i")
            if i == 10:
                raise KeyboardInterrupt
            return v

        tasks = [loop.create_task(one(i)) for i in range(100)]
        with pytest.raises(KeyboardInterrupt):
            loop.run_until_complete(asyncio.gather(*tasks))
        # The interrupt went on only after its batch was delivered: every task whose reply
        # came in that batch has its value, and the rest complete when the loop runs again.
        assert isinstance(tasks[10].exception(), KeyboardInterrupt)

        async def rest():  # (a completion dropped by the interrupt would never come)
            pending = [t for t in tasks if not t.done()]
            if pending:
                await asyncio.wait(pending, timeout=10)

        loop.run_until_complete(rest())
        assert all(t.done() for t in tasks)
        assert [t.result() for i, t in enumerate(tasks) if i != 10] == [b"v"] * 99
        c.close()
    finally:
        loop.close()


async def test_abandoned_waiters_are_collected(shared_memcached):
    def waiters():
        return sum(type(o) is _native.Waiter for o in gc.get_objects())

    async with folsom.AsyncClient(shared_memcached.address, protocol="meta") as c:
        await c.get("w-g")  # binds the loop
        before = waiters()
        ws = [c._a_get_value("w-g") for _ in range(1000)]
        # each in a cycle through its callback, then dropped without being awaited
        for w in ws:
            w.add_done_callback(lambda f, keep=w: keep)
        del ws, w
        for _ in range(500):
            if c.outstanding() == 0:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        gc.collect()
        assert waiters() <= before
