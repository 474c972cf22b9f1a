"""folsom.AsyncClient: Client's methods as coroutines, for asyncio.

Requests are started from the event loop's thread and run on the client's I/O thread; their
completions are queued there and the loop is woken through one eventfd (loop.add_reader), which
is written only when the queue goes from empty to non-empty: one wake-up per batch of
completions, however many requests are in flight. Thousands of concurrent ``await c.get(k)``
are pipelined onto the same connections. Each request is awaited through a Waiter
(folsom._native.Waiter), which asyncio treats as a future: the reader callback that takes a
batch resumes each awaiting task at once, in the task's context, where a future's set_result
would schedule the wake-up for a later turn of the loop. Cancelling the awaiting task cancels
the request.
"""

import asyncio
import collections
import threading

from . import _common as _c
from . import _native
from .client import Client, _stored
from .exceptions import MemcacheOverloadedError, MemcacheTimeoutError, MemcacheValueTooLargeError

_get_ident = threading.get_ident
_send_batch_begin = _native.send_batch_begin
_send_batch_end = _native.send_batch_end


class AsyncClient(Client):
    """As folsom.Client, with every request method a coroutine. Bound to the first event loop
    that uses it. close() (or ``async with``) ends it."""

    def __init__(self, servers, *args, fail_fast=False, **kwargs):
        kwargs["io_thread"] = True
        super().__init__(servers, *args, **kwargs)
        # Over max_outstanding_requests a request waits for a slot, at most the request
        # timeout (then MemcacheTimeoutError); fail_fast=True raises MemcacheOverloadedError.
        self._fail_fast = bool(fail_fast)
        self._max_outstanding = int(self._opts.get("max_outstanding_requests", 1000))
        self._capacity_waiters = collections.deque()
        self._recheck_scheduled = False
        self._handed_out = 0  # slots handed to woken waiters not yet started
        self._loop = None
        self._thread = None
        self._batching = False
        self._fd = self._n.event_fd()
        self._drain = self._n.drain
        # The hot requests as plain C functions, without pybind11's dispatch.
        self._a_get_value = self._n.fast("a_get_value")
        self._a_get_multi = self._n.fast("a_get_multi")
        self._a_store = self._n.fast("a_store")
        self._a_delete = self._n.fast("a_delete")
        self._a_arith = self._n.fast("a_arith")

    # ---- the bridge to the event loop ---------------------------------------------------

    def _turn(self):
        """Binds the loop and opens this turn's batch, which the next request's sending joins.
        The request then returns a Waiter (folsom._native.Waiter) to await: its completion
        wakes the awaiting task at once, and cancelling the task cancels the request."""
        # The thread, not asyncio.get_running_loop(), is checked per request: that call costs
        # a getpid() system call each time (CPython's fork check).
        if _get_ident() != self._thread or not self._batching:
            self._open_turn()

    def _open_turn(self):
        if _get_ident() != self._thread:
            self._bind()
        if not self._batching:
            # The requests started in this turn of the loop go out together, when the turn's
            # ready callbacks have run: one write per connection and one wake-up of the I/O
            # thread, instead of one each as the I/O thread preempts the loop.
            self._batching = True
            _send_batch_begin()
            self._loop.call_soon(self._send_batch)

    def _bind(self):
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            if self._loop is not None:
                raise RuntimeError("this AsyncClient is bound to another event loop")
            # drain(True): completions wake their tasks at once (see _native.Waiter).
            self._n.set_loop(loop, self._n)
            loop.add_reader(self._fd, self._on_completions)
            self._loop = loop
        self._thread = _get_ident()

    def _on_completions(self):
        """The eventfd's reader: delivers the batch (each awaiting task resumed at once), then
        hands the slots it freed to requests waiting for capacity, oldest first."""
        self._drain(True)
        if self._capacity_waiters:
            self._wake_waiters()

    def _wake_waiters(self):
        # Slots handed to woken waiters that have not started their request yet count as
        # taken: otherwise the next batch would hand the same slots out again.
        free = self._max_outstanding - self._n.outstanding() - self._handed_out
        waiters = self._capacity_waiters
        while free > 0 and waiters:
            fut = waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                self._handed_out += 1
                free -= 1
        if waiters and not self._recheck_scheduled and self._loop is not None:
            # The core releases a slot just after it queues the request's completion, so the
            # count read here may still hold slots already free: look again shortly, for as
            # long as requests wait (each at most its request timeout).
            self._recheck_scheduled = True
            self._loop.call_later(0.001, self._recheck)

    def _recheck(self):
        self._recheck_scheduled = False
        if self._capacity_waiters:
            self._wake_waiters()

    async def _request(self, start):
        """Awaits the request `start()` starts. Over max_outstanding_requests it waits for a
        slot and starts it again; while requests wait, a new one queues behind them (FIFO)
        instead of trying (see _after_overload)."""
        if self._capacity_waiters and not self._fail_fast:
            return await self._after_overload(start)
        try:
            return await start()
        except MemcacheOverloadedError:
            if self._fail_fast:
                raise
        return await self._after_overload(start)

    async def _await_started(self, p, start):
        """Awaits `p`, a request already started; over capacity `start()` starts it again."""
        try:
            return await p
        except MemcacheOverloadedError:
            if self._fail_fast:
                raise
        return await self._after_overload(start)

    def _must_queue(self):
        return self._capacity_waiters and not self._fail_fast

    async def _after_overload(self, start):
        """Waits for a free slot (in FIFO order, woken by the completions that free slots),
        then starts the request; gives up with MemcacheTimeoutError at the request timeout."""
        loop = self._loop
        deadline = loop.time() + self._request_timeout
        front = False
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise MemcacheTimeoutError(
                    "no free slot (max_outstanding_requests=%d) within the request timeout"
                    % self._max_outstanding)
            fut = loop.create_future()
            if front:  # woken but beaten to the slot: first in line again
                self._capacity_waiters.appendleft(fut)
            else:
                self._capacity_waiters.append(fut)
            self._wake_waiters()  # slots freed before this request queued
            try:
                await asyncio.wait_for(fut, remaining)
            except asyncio.TimeoutError:
                try:
                    self._capacity_waiters.remove(fut)
                except ValueError:
                    pass
                continue  # the deadline check above raises
            except BaseException:  # cancelled: a slot handed to it goes back
                if fut.done() and not fut.cancelled():
                    self._handed_out -= 1
                raise
            self._turn()
            self._handed_out -= 1
            try:
                p = start()
            except BaseException:
                if self._capacity_waiters:
                    self._wake_waiters()
                raise
            try:
                return await p
            except MemcacheOverloadedError:
                front = True

    def _send_batch(self):
        self._batching = False
        _send_batch_end()

    def wakeups(self):
        """(eventfd writes, completions) so far: completions arrive in batches."""
        return self._n.wakeups()

    # ---- retrieval ----------------------------------------------------------------------

    async def get(self, key, default=None):
        """The value of ``key``, or ``default`` on a miss (or on a failure, with ignore_exc)."""
        # The hot path: _turn() written out, a call less per request.
        if _get_ident() != self._thread or not self._batching:
            self._open_turn()
        try:
            if self._capacity_waiters:  # others wait for a slot: queue behind them
                v = await self._request(lambda: self._a_get_value(key) if self._serde is None
                                        else self._n.a_get(key, False))
            else:
                # Without a serde the reply is the value's bytes alone (or None): no tuple.
                try:
                    v = await (self._a_get_value(key) if self._serde is None
                               else self._n.a_get(key, False))
                except MemcacheOverloadedError:
                    if self._fail_fast:
                        raise
                    v = await self._after_overload(
                        lambda: self._a_get_value(key) if self._serde is None
                        else self._n.a_get(key, False))
        except _c._exc.MemcacheIllegalInputError:
            raise
        except _c._exc.MemcacheError:
            if self.ignore_exc:
                return default
            raise
        if v is None:
            return default
        return v if self._serde is None else self._decode(key, v)

    async def gets(self, key, default=None, cas_default=None):
        self._turn()
        v = await self._request(lambda: self._n.a_get(key, True))
        if v is None:
            return default, cas_default
        return self._decode(key, v), v[2]

    async def gat(self, key, expire=0, default=None):
        self._turn()
        expire = _c.check_expire(expire)
        v = await self._request(lambda: self._n.a_gat(key, expire, False))
        return default if v is None else self._decode(key, v)

    async def gats(self, key, expire=0, default=None, cas_default=None):
        self._turn()
        expire = _c.check_expire(expire)
        v = await self._request(lambda: self._n.a_gat(key, expire, True))
        if v is None:
            return default, cas_default
        return self._decode(key, v), v[2]

    async def _amany(self, keys, cas):
        keys = list(keys)
        if not keys:
            return keys, []
        self._turn()
        try:
            values, err = await self._request(lambda: self._a_get_multi(keys, cas))
        except _c._exc.MemcacheIllegalInputError:
            raise
        except _c._exc.MemcacheError:
            if self.ignore_exc:
                return keys, [None] * len(keys)
            raise
        if err and not self.ignore_exc:
            _c.raise_for(err, "a server did not answer get_many")
        return keys, values

    async def get_many(self, keys):
        keys, values = await self._amany(keys, False)
        return {k: self._decode(k, v) for k, v in zip(keys, values) if v is not None}

    get_multi = get_many

    async def gets_many(self, keys):
        keys, values = await self._amany(keys, True)
        return {k: (self._decode(k, v), v[2]) for k, v in zip(keys, values) if v is not None}

    # ---- storage ------------------------------------------------------------------------

    async def _astore(self, mode, key, value, expire, noreply, flags, cas=0):
        value, flags = self._encode(key, value, _c.check_flags(flags))
        noreply = self._noreply(noreply)
        expire = _c.check_expire(expire)
        self._turn()
        if self._must_queue():
            st = await self._after_overload(
                lambda: self._a_store(mode, key, value, expire, flags, cas, noreply))
            return True if noreply else st
        try:
            p = self._a_store(mode, key, value, expire, flags, cas, noreply)
        except MemcacheValueTooLargeError:
            if mode == _c.SET:  # memcached drops the old value when it refuses a set
                await self.delete(key, noreply=False)
            raise
        if noreply:
            # Quiet: the true outcome (meta, binary) arrives with the connection's barrier; it is
            # not waited for, as pymemcache's noreply does not wait.
            return True
        return await self._await_started(
            p, lambda: self._a_store(mode, key, value, expire, flags, cas, noreply))

    async def set(self, key, value, expire=0, noreply=None, flags=None):
        st = await self._astore(_c.SET, key, value, expire, noreply, flags)
        return st is True or _stored(st)

    async def add(self, key, value, expire=0, noreply=None, flags=None):
        st = await self._astore(_c.ADD, key, value, expire, noreply, flags)
        return st is True or _stored(st)

    async def replace(self, key, value, expire=0, noreply=None, flags=None):
        st = await self._astore(_c.REPLACE, key, value, expire, noreply, flags)
        return st is True or _stored(st)

    async def append(self, key, value, expire=0, noreply=None, flags=None):
        st = await self._astore(_c.APPEND, key, value, expire, noreply, flags)
        return st is True or _stored(st)

    async def prepend(self, key, value, expire=0, noreply=None, flags=None):
        st = await self._astore(_c.PREPEND, key, value, expire, noreply, flags)
        return st is True or _stored(st)

    async def cas(self, key, value, cas, expire=0, noreply=False, flags=None):
        st = await self._astore(_c.CAS, key, value, expire, noreply, flags, _c.cas_int(cas))
        if st is True:
            return True
        if st == _c.EXISTS:
            return False
        if st == _c.NOT_FOUND:
            return None
        return _stored(st)

    async def set_many(self, values, expire=0, noreply=None, flags=None):
        items = []
        f = _c.check_flags(flags)
        for k, v in values.items():
            data, fl = self._encode(k, v, f)
            items.append((k, data, fl))
        if not items:
            return []
        self._turn()
        expire = _c.check_expire(expire)
        results = await self._request(lambda: self._n.a_set_multi(items, expire))
        return [item[0] for item, (err, st) in zip(items, results) if err or st != _c.STORED]

    set_multi = set_many

    async def delete(self, key, noreply=None):
        noreply = self._noreply(noreply)
        self._turn()
        if self._must_queue():
            st = await self._after_overload(lambda: self._a_delete(key, noreply))
            return True if noreply else st == _c.DELETED
        p = self._a_delete(key, noreply)
        if noreply:
            return True
        return (await self._await_started(p, lambda: self._a_delete(key, False))) == _c.DELETED

    async def delete_many(self, keys, noreply=None):
        keys = list(keys)
        if keys:
            self._turn()
            await self._request(lambda: self._n.a_delete_multi(keys))
        return True

    delete_multi = delete_many

    async def touch(self, key, expire=0, noreply=None):
        noreply = self._noreply(noreply)
        self._turn()
        expire = _c.check_expire(expire)
        if self._must_queue():
            st = await self._after_overload(lambda: self._n.a_touch(key, expire, noreply))
            return True if noreply else st == _c.TOUCHED
        p = self._n.a_touch(key, expire, noreply)
        if noreply:
            return True
        return (await self._await_started(p, lambda: self._n.a_touch(key, expire, False))) == _c.TOUCHED

    async def touch_many(self, keys, expire=0):
        keys = list(keys)
        if not keys:
            return []
        self._turn()
        expire = _c.check_expire(expire)
        results = await self._request(lambda: self._n.a_touch_multi(keys, expire))
        return [k for k, (err, st) in zip(keys, results) if err or st != _c.TOUCHED]

    async def _aarith(self, incr, key, value, noreply, initial, initial_expire):
        delta = _c.check_delta(value)
        if initial is not None:
            initial = _c.check_delta(initial)
        noreply = self._noreply(noreply) if noreply is not False else False
        self._turn()
        initial_expire = _c.check_expire(initial_expire)
        if self._must_queue():
            v = await self._after_overload(
                lambda: self._a_arith(incr, key, delta, noreply, initial, initial_expire))
            return None if noreply else v
        p = self._a_arith(incr, key, delta, noreply, initial, initial_expire)
        if noreply:
            return None
        return await self._await_started(
            p, lambda: self._a_arith(incr, key, delta, False, initial, initial_expire))

    async def incr(self, key, value, noreply=False, initial=None, initial_expire=0):
        return await self._aarith(True, key, value, noreply, initial, initial_expire)

    async def decr(self, key, value, noreply=False, initial=None, initial_expire=0):
        return await self._aarith(False, key, value, noreply, initial, initial_expire)

    # ---- every server -------------------------------------------------------------------

    async def stats(self, *args):
        self._turn()
        group = _c.stats_group(args)
        nodes = await self._request(lambda: self._n.a_stats(group))
        return _c.one_or_many(nodes, _c.stats_dict)

    async def version(self):
        self._turn()
        return _c.one_or_many(await self._request(self._n.a_version), lambda v: v)

    async def flush_all(self, delay=0, noreply=None):
        self._turn()
        delay = int(delay) if delay else None
        await self._request(lambda: self._n.a_flush_all(delay))
        return True

    async def get_or_fill(self, key, fill, expire=0, **kwargs):
        """Client.get_or_fill with ``fill`` a coroutine function (or a plain function). The
        recipe runs in the loop's default executor (a blocking wait there, never on the loop);
        the fill coroutine runs on this loop."""
        loop = asyncio.get_running_loop()

        def run_fill():
            r = fill()
            if asyncio.iscoroutine(r):
                return asyncio.run_coroutine_threadsafe(r, loop).result()
            return r

        sync = Client.get_or_fill
        return await loop.run_in_executor(None, lambda: sync(self, key, run_fill, expire, **kwargs))

    async def wait_connected(self, timeout=3.0):
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._n.wait_connected, float(timeout))

    # ---- lifecycle ----------------------------------------------------------------------

    def close(self):
        """Fails every outstanding request (their awaiters get MemcacheClosedError)."""
        if self._batching and _get_ident() == self._thread:
            self._send_batch()
        self._n.close()
        self._n.drain()
        while self._capacity_waiters:  # they start again (and connect again) when they run
            fut = self._capacity_waiters.popleft()
            if not fut.done():
                fut.set_result(None)
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self._fd)
        self._loop = None
        self._thread = None

    quit = close

    async def aclose(self):
        self.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        self.close()

    def quiet(self):
        raise NotImplementedError("AsyncClient: pass noreply=True to the write methods")

    def __setitem__(self, key, value):
        raise TypeError("AsyncClient has no item assignment: await client.set(...)")

    __getitem__ = __setitem__
    __delitem__ = __setitem__


del _native
