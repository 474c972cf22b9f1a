"""folsom.Client: a blocking client with pymemcache's methods, on folsom-cpp's core."""

import math
import os
import threading
import weakref

from . import _common as _c
from . import _native
from .exceptions import MemcacheClientError, MemcacheServerError, MemcacheValueTooLargeError

_STORE_FAILURE = {_c.VALUE_TOO_LARGE: (MemcacheValueTooLargeError, "object too large for cache"),
                  _c.OUT_OF_MEMORY: (MemcacheServerError, "out of memory storing object")}


_STORED = _c.STORED
_DELTA_LIMIT = 1 << 64


def _stored(status):
    if status in _STORE_FAILURE:
        cls, what = _STORE_FAILURE[status]
        raise cls(what)
    return status == _c.STORED or status == _c.SENT


# After os.fork(), a child that uses a client made before the fork gets a native client of its
# own: new connections (and a new I/O thread: threads do not survive fork). The inherited one
# is kept, never used nor destroyed: its thread is gone and its sockets now name unconnected
# sockets of the child's own (folsom-cpp does that at the fork), so the child cannot read its
# parent's replies or write into its parent's connections (pre-forking servers: gunicorn
# --preload, uWSGI).
_after_fork_reopen = weakref.WeakSet()
_inherited_native = []


def _reopen_after_fork():
    for client in list(_after_fork_reopen):
        # A closed client reconnects at its next call, so it is reopened too.
        _inherited_native.append(client._n)
        client._open()


os.register_at_fork(after_in_child=_reopen_after_fork)


class Client:
    """A memcached client with pymemcache's Client/HashClient methods.

    ``servers`` is one "host:port", a (host, port) tuple, a socket path, or a list of them
    (several servers: keys are placed by ketama, as libmemcached/pylibmc do). Every call blocks
    the calling thread with the GIL released; many threads may share one client, and their
    requests pipeline onto the same connections. Errors raise (see folsom.exceptions); a miss
    is ``default``.

    The positional parameters are pymemcache's Client's (``server, serde, serializer,
    deserializer, connect_timeout, timeout, no_delay, ignore_exc, socket_module,
    socket_keepalive, key_prefix, default_noreply, allow_unicode_keys, encoding,
    tls_context``); folsom's own options are keywords (``protocol``, ``io_thread``, ...). The
    pymemcache arguments that have no meaning here are accepted and documented as no-ops in
    python/README.md.

    By default the threads that wait on the client run its I/O themselves (no thread hand-off:
    the cheapest sequential requests); ``io_thread=True`` gives the client its own I/O thread.
    """

    def __init__(self, servers, serde=None, serializer=None, deserializer=None,
                 connect_timeout=None, timeout=None, no_delay=None, ignore_exc=False,
                 socket_module=None, socket_keepalive=None, key_prefix=b"",
                 default_noreply=False, allow_unicode_keys=False, encoding="ascii",
                 tls_context=None, *, protocol="meta", username=None, password=None,
                 io_thread=False, **options):
        if isinstance(serde, str):
            raise TypeError("the second positional parameter is serde, as in pymemcache's "
                            "Client(server, serde): pass protocol=%r as a keyword" % (serde,))
        _c.check_encoding(encoding)
        _c.check_pymemcache_only_options(socket_module, options)
        _c.socket_keepalive_option(socket_keepalive, options)
        self._serde = _c.make_serde(serde, serializer, deserializer)
        self.protocol = protocol
        self.default_noreply = bool(default_noreply)
        self.ignore_exc = bool(ignore_exc)
        self.allow_unicode_keys = bool(allow_unicode_keys)
        self.encoding = encoding
        self.key_prefix = key_prefix
        self.server = servers
        self._servers_arg = servers
        options["allow_unicode_keys"] = self.allow_unicode_keys
        # pymemcache encodes a str value with `encoding`: ASCII refuses any other str value.
        options["ascii_str_values"] = encoding.replace("-", "").replace("_", "").lower() != "utf8"
        opts = _c.native_options(servers, protocol, connect_timeout, timeout, no_delay, key_prefix,
                                 tls_context, username, password, options)
        self._request_timeout = opts.get("request_timeout", _c.DEFAULT_REQUEST_TIMEOUT)
        self._opts = opts
        self._native_args = (opts, bool(io_thread))
        self._open()
        _after_fork_reopen.add(self)

    def _open(self):
        self._n = _native.NativeClient(*self._native_args)
        # Plain C entry points of this native client (no pybind11 dispatch): made anew with it
        # (after a fork too).
        self._get_value = self._n.fast("get_value")
        self._get = self._n.fast("get")
        self._pickled = _c.is_pickle_serde(self._serde)
        self._get_pickled = self._n.fast("get_pickled")
        self._get_multi_pickled = self._n.fast("get_multi_pickled")
        self._store = self._n.fast("store")
        self._delete = self._n.fast("delete")
        self._arith = self._n.fast("arith")
        self._get_dict = self._n.fast("get_multi_dict")

    # ---- values -------------------------------------------------------------------------

    def _encode(self, key, value, flags):
        if self._serde is not None:
            value, serde_flags = self._serde.serialize(key, value)
            if flags is None:
                flags = serde_flags
        else:
            value = _c.plain_value(value)
        return value, (flags or 0)

    def _decode(self, key, v):
        if self._serde is None:
            return v[0]
        return self._serde.deserialize(key, v[0], v[1])

    def _noreply(self, noreply):
        return self.default_noreply if noreply is None else bool(noreply)

    # ---- retrieval ----------------------------------------------------------------------

    def get(self, key, default=None):
        """The value of ``key``, or ``default`` on a miss."""
        try:
            if self._serde is None:
                v = self._get_value(key)
                return default if v is None else v
            if self._pickled:  # pymemcache's pickle serde, read natively
                return self._get_pickled(key, default)
            v = self._get(key)
        except _c._exc.MemcacheIllegalInputError:
            raise
        except _c._exc.MemcacheError:
            if self.ignore_exc:
                return default
            raise
        return default if v is None else self._serde.deserialize(key, v[0], v[1])

    def gets(self, key, default=None, cas_default=None):
        """(value, cas) of ``key``; (default, cas_default) on a miss. cas is an int."""
        try:
            v = self._n.get(key, True)
        except _c._exc.MemcacheIllegalInputError:
            raise
        except _c._exc.MemcacheError:
            if self.ignore_exc:
                return default, cas_default
            raise
        if v is None:
            return default, cas_default
        return self._decode(key, v), v[2]

    def gat(self, key, expire=0, default=None):
        """Get and touch: the value of ``key`` (``default`` on a miss), its ttl set to expire."""
        v = self._n.gat(key, _c.check_expire(expire), False)
        return default if v is None else self._decode(key, v)

    def gats(self, key, expire=0, default=None, cas_default=None):
        """As gat, returning (value, cas)."""
        v = self._n.gat(key, _c.check_expire(expire), True)
        if v is None:
            return default, cas_default
        return self._decode(key, v), v[2]

    def _many(self, keys, cas, touch=None):
        keys = list(keys)
        if not keys:
            return keys, [], 0
        try:
            if touch is None:
                values, err = self._n.get_multi(keys, cas)
            else:
                values, err = self._n.gat_multi(keys, touch)
        except _c._exc.MemcacheIllegalInputError:
            raise
        except _c._exc.MemcacheError:
            if self.ignore_exc:
                return keys, [None] * len(keys), 0
            raise
        if err and not self.ignore_exc:
            _c.raise_for(err, "a server did not answer get_many")
        return keys, values, err

    def get_many(self, keys):
        """{key: value} of the keys found (split per server, one round trip each)."""
        if self._serde is None or self._pickled:
            if type(keys) is not list:
                keys = list(keys)
            if not keys:
                return {}
            try:
                # Without a serde the values are the bytes; with pymemcache's pickle serde they
                # are read natively, by their flags.
                found, err = (self._get_dict if self._serde is None else self._get_multi_pickled)(keys)
            except _c._exc.MemcacheIllegalInputError:
                raise
            except _c._exc.MemcacheError:
                if self.ignore_exc:
                    return {}
                raise
            if err and not self.ignore_exc:
                _c.raise_for(err, "a server did not answer get_many")
            return found
        keys, values, _ = self._many(keys, False)
        deserialize = self._serde.deserialize
        return {k: deserialize(k, v[0], v[1]) for k, v in zip(keys, values) if v is not None}

    get_multi = get_many

    def gets_many(self, keys):
        """{key: (value, cas)} of the keys found."""
        keys, values, _ = self._many(keys, True)
        return {k: (self._decode(k, v), v[2]) for k, v in zip(keys, values) if v is not None}

    def gat_many(self, keys, expire=0):
        """get_many that also sets each found key's ttl."""
        keys, values, _ = self._many(keys, False, _c.check_expire(expire))
        return {k: self._decode(k, v) for k, v in zip(keys, values) if v is not None}

    # ---- storage ------------------------------------------------------------------------

    def _store_cmd(self, mode, key, value, expire, noreply, flags, cas=0):
        # Written out for the usual call (bytes, no serde, no flags, an int expire): each
        # helper call it spares costs about as much as the native call's own Python side.
        if self._serde is None:
            if type(value) is not bytes:
                value = _c.plain_value(value)
            flags = 0 if flags is None else _c.check_flags(flags)
        else:
            value, flags = self._encode(key, value, _c.check_flags(flags))
        noreply = self.default_noreply if noreply is None else bool(noreply)
        if type(expire) is not int:
            expire = _c.check_expire(expire)
        st = self._store(mode, key, value, expire, flags, cas, noreply)
        return True if noreply else st

    def _write_failed(self, key, default):
        """The outcome of a write that raised (the exception in flight): with ignore_exc, the
        value pymemcache's HashClient returns; a refused oversized set first drops the key's
        old value, as memcached's own refusal does. Bad input always raises."""
        try:
            raise
        except MemcacheValueTooLargeError:
            self._drop_stale(key)
            if not self.ignore_exc:
                raise
        except _c._exc.MemcacheIllegalInputError:
            raise
        except _c._exc.MemcacheError:
            if not self.ignore_exc:
                raise
        return default

    def _drop_stale(self, key):
        # memcached unlinks the old item when it refuses a set as too large; folsom refuses
        # it before sending, so it deletes the key itself (a failure of the delete is moot).
        try:
            self._delete(key, False)
        except _c._exc.MemcacheError:
            pass

    def set(self, key, value, expire=0, noreply=None, flags=None):
        """Stores ``value``; True. A value over max_value_size (the server's own refusal too)
        raises MemcacheValueTooLargeError, a MemcacheServerError, after the key's old value
        was deleted, as memcached does."""
        try:
            st = self._store_cmd(_c.SET, key, value, expire, noreply, flags)
            return st is True or st == _STORED or _stored(st)
        except _c._exc.MemcacheError:
            return self._write_failed(key, False)

    def add(self, key, value, expire=0, noreply=None, flags=None):
        """Stores only if ``key`` is absent: True if stored, False if it existed."""
        try:
            st = self._store_cmd(_c.ADD, key, value, expire, noreply, flags)
            return st is True or _stored(st)
        except _c._exc.MemcacheError:
            return self._write_failed(None, False)

    def replace(self, key, value, expire=0, noreply=None, flags=None):
        """Stores only if ``key`` is present: True if stored, False if it was absent."""
        try:
            st = self._store_cmd(_c.REPLACE, key, value, expire, noreply, flags)
            return st is True or _stored(st)
        except _c._exc.MemcacheError:
            return self._write_failed(None, False)

    def append(self, key, value, expire=0, noreply=None, flags=None):
        """Adds bytes after the value: True, or False if ``key`` is absent."""
        try:
            st = self._store_cmd(_c.APPEND, key, value, expire, noreply, flags)
            return st is True or _stored(st)
        except _c._exc.MemcacheError:
            return self._write_failed(None, False)

    def prepend(self, key, value, expire=0, noreply=None, flags=None):
        """Adds bytes before the value: True, or False if ``key`` is absent."""
        try:
            st = self._store_cmd(_c.PREPEND, key, value, expire, noreply, flags)
            return st is True or _stored(st)
        except _c._exc.MemcacheError:
            return self._write_failed(None, False)

    def cas(self, key, value, cas, expire=0, noreply=False, flags=None):
        """Check and set: True if stored, False if changed since ``cas`` was read (EXISTS),
        None if ``key`` is absent."""
        try:
            st = self._store_cmd(_c.CAS, key, value, expire, noreply, flags, _c.cas_int(cas))
            if st is True:
                return True
            if st == _c.EXISTS:
                return False
            if st == _c.NOT_FOUND:
                return None
            return _stored(st)
        except _c._exc.MemcacheError:
            return self._write_failed(None, False)

    def set_many(self, values, expire=0, noreply=None, flags=None):
        """Stores every item of the dict (quiet pipelines, one barrier per server). Returns the
        keys that were not stored. Every key's true outcome is waited for, noreply or not."""
        items = []
        f = _c.check_flags(flags)
        for k, v in values.items():
            data, fl = self._encode(k, v, f)
            items.append((k, data, fl))
        if not items:
            return []
        try:
            results = self._n.set_multi(items, _c.check_expire(expire))
        except MemcacheValueTooLargeError:
            limit = self._n.max_value_size()
            for k, data, _ in items:
                if len(data if not isinstance(data, str) else data.encode()) > limit:
                    self._drop_stale(k)
            if not self.ignore_exc:
                raise
            return [item[0] for item in items]
        except _c._exc.MemcacheIllegalInputError:
            raise
        except _c._exc.MemcacheError:
            if not self.ignore_exc:
                raise
            return [item[0] for item in items]
        return [item[0] for item, (err, st) in zip(items, results) if err or st != _c.STORED]

    set_multi = set_many

    def delete(self, key, noreply=None):
        """True if ``key`` was deleted, False if it was absent (True with noreply)."""
        try:
            if self._noreply(noreply):
                self._delete(key, True)
                return True
            return self._delete(key, False) == _c.DELETED
        except _c._exc.MemcacheError:
            return self._write_failed(None, False)

    def delete_many(self, keys, noreply=None):
        """Deletes every key; True (raises only when every key failed)."""
        keys = list(keys)
        if keys:
            try:
                self._n.delete_multi(keys)
            except _c._exc.MemcacheError:
                return self._write_failed(None, True)
        return True

    delete_multi = delete_many

    def touch(self, key, expire=0, noreply=None):
        """Sets the ttl of ``key``: True, or False if it is absent (True with noreply)."""
        try:
            if self._noreply(noreply):
                self._n.touch(key, _c.check_expire(expire), True)
                return True
            return self._n.touch(key, _c.check_expire(expire), False) == _c.TOUCHED
        except _c._exc.MemcacheError:
            return self._write_failed(None, False)

    def touch_many(self, keys, expire=0):
        """Sets every key's ttl; returns the keys that were not touched (absent or failed)."""
        keys = list(keys)
        if not keys:
            return []
        try:
            results = self._n.touch_multi(keys, _c.check_expire(expire))
        except _c._exc.MemcacheError:
            return self._write_failed(None, keys)
        return [k for k, (err, st) in zip(keys, results) if err or st != _c.TOUCHED]

    def _arith_cmd(self, incr, key, value, noreply, initial, initial_expire):
        # Written out for the usual call (an int delta, no initial): see _store_cmd.
        delta = value if type(value) is int and 0 <= value < _DELTA_LIMIT else _c.check_delta(value)
        if initial is not None:
            initial = _c.check_delta(initial)
        if noreply is not False:
            noreply = self.default_noreply if noreply is None else bool(noreply)
        if type(initial_expire) is not int:
            initial_expire = _c.check_expire(initial_expire)
        try:
            return self._arith(incr, key, delta, noreply, initial, initial_expire)
        except _c._exc.MemcacheError:
            return self._write_failed(None, None)

    def incr(self, key, value, noreply=False, initial=None, initial_expire=0):
        """Adds ``value``: the new value, or None if ``key`` is absent (None with noreply).
        With ``initial`` (binary and meta protocols), a missing counter is created holding it."""
        return self._arith_cmd(True, key, value, noreply, initial, initial_expire)

    def decr(self, key, value, noreply=False, initial=None, initial_expire=0):
        """Subtracts ``value`` (not below 0): the new value, or None if ``key`` is absent."""
        return self._arith_cmd(False, key, value, noreply, initial, initial_expire)

    # ---- stampede recipe (meta protocol) ----------------------------------------------------

    def get_or_fill(self, key, fill, expire=0, *, flags=None, stub_ttl=30, wait=True,
                    wait_timeout=3.0, with_source=False):
        """Stampede-protected get (folsom's get_or_fill; meta protocol only): on a miss exactly
        one caller, the one memcached hands the win, runs ``fill()`` and stores its result; the
        others wait for it (``wait``) or get None at once. Returns the value, or with
        ``with_source`` (value, source, stored), source one of "hit", "filled", "waited",
        "stale", "miss"."""
        fill_flags = _c.check_flags(flags) or 0

        def run_fill():
            data, fl = self._encode(key, fill(), fill_flags)
            if fl != fill_flags:
                # The recipe's store carries the flags given up front; a serde that picks other
                # flags for this value would store bytes it cannot read back.
                raise _c._exc.MemcacheIllegalInputError(
                    "the serde chose flags %d for the filled value: pass flags=%d" % (fl, fl))
            return data

        value, source, stored = self._n.get_or_fill(key, run_fill, _c.check_expire(expire),
                                                    fill_flags, int(stub_ttl), bool(wait),
                                                    float(wait_timeout))
        out = None if value is None else self._decode(key, value)
        if with_source:
            return out, _c.CACHE_SOURCES[source], stored
        return out

    # ---- every server -------------------------------------------------------------------

    def stats(self, *args):
        """memcached's stats, with pymemcache's arguments (``stats("slabs")``,
        ``stats("cachedump", "1", "10")``): a dict as pymemcache returns it (bytes names,
        converted values). With several servers: {server: dict} of the servers that answered."""
        try:
            nodes = self._n.stats(_c.stats_group(args))
        except _c._exc.MemcacheIllegalInputError:
            raise
        except _c._exc.MemcacheError:
            if self.ignore_exc:
                return {}
            raise
        return _c.one_or_many(nodes, _c.stats_dict)

    def cache_memlimit(self, memlimit):
        """memcached's cache_memlimit (megabytes) on every server; True. An administrative
        command folsom's protocols do not carry: it goes over a short connection of its own to
        each server (plain TCP or TLS as the client's; not with SASL)."""
        return _c.cache_memlimit(self, memlimit)

    def version(self):
        """The server's version (bytes); with several servers, {server: version}."""
        return _c.one_or_many(self._n.version(), lambda v: v)

    def flush_all(self, delay=0, noreply=None):
        """Invalidates every item on every server (after ``delay`` seconds); True."""
        try:
            self._n.flush_all(int(delay) if delay else None)
        except _c._exc.MemcacheError:
            return self._write_failed(None, False)
        return True

    # ---- folsom's own -------------------------------------------------------------------

    def quiet(self):
        """A view of this client whose writes are quiet (noreply=True): see docs/quiet-writes.md."""
        return QuietView(self)

    @property
    def serde(self):
        """The serde values go through (pymemcache's Client.serde); None: values are bytes,
        str, int or float, stored as they are."""
        return self._serde

    def server_for(self, key):
        """The server ("host:port") that owns ``key`` (ketama placement)."""
        return self._n.server_for(key)

    @property
    def servers(self):
        return self._n.servers()

    def wait_connected(self, timeout=3.0):
        """Blocks until a connection is up (raises MemcacheTimeoutError past ``timeout``)."""
        self._n.wait_connected(float(timeout))

    def route_stats(self):
        """With routes= (docs/routing.md): a list of dicts, one per route, with its name, type,
        requests, failovers, shadow_requests and shadow_errors. Empty without routes."""
        return self._n.route_stats()

    def metrics(self):
        """Per-server request counts, latencies and connection events as a dict (None unless
        the client was made with metrics=True)."""
        return self._n.metrics()

    def prometheus_metrics(self):
        """The same, in the Prometheus text format (None without metrics=True)."""
        return self._n.prometheus()

    def noreply_failures(self):
        """noreply writes whose failure the server reported (they raise nothing)."""
        return self._n.noreply_failures()

    def outstanding(self):
        return self._n.outstanding()

    # ---- lifecycle ----------------------------------------------------------------------

    def close(self):
        """Drops the connections; the next call connects again, as pymemcache's close() and
        disconnect_all() (Django calls disconnect_all() after every request). Requests
        outstanding at the time fail with MemcacheClosedError."""
        self._n.close()

    quit = close
    disconnect_all = close

    @property
    def closed(self):
        return self._n.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __setitem__(self, key, value):
        self.set(key, value, noreply=True)

    def __getitem__(self, key):
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __delitem__(self, key):
        self.delete(key, noreply=True)


class QuietView:
    """Client.quiet(): the same writes with noreply=True (fire and forget; failures the server
    reports are counted in Client.noreply_failures())."""

    def __init__(self, client):
        self._c = client

    def set(self, key, value, expire=0, flags=None):
        return self._c.set(key, value, expire, True, flags)

    def add(self, key, value, expire=0, flags=None):
        return self._c.add(key, value, expire, True, flags)

    def replace(self, key, value, expire=0, flags=None):
        return self._c.replace(key, value, expire, True, flags)

    def append(self, key, value, expire=0, flags=None):
        return self._c.append(key, value, expire, True, flags)

    def prepend(self, key, value, expire=0, flags=None):
        return self._c.prepend(key, value, expire, True, flags)

    def cas(self, key, value, cas, expire=0, flags=None):
        return self._c.cas(key, value, cas, expire, True, flags)

    def delete(self, key):
        return self._c.delete(key, True)

    def touch(self, key, expire=0):
        return self._c.touch(key, expire, True)

    def incr(self, key, value):
        return self._c.incr(key, value, True)

    def decr(self, key, value):
        return self._c.decr(key, value, True)


# The names of pymemcache's HashClient placement (distribution=), and of its placement of keys
# given as bytes.
_PYMEMCACHE_RENDEZVOUS = frozenset({"pymemcache_rendezvous", "rendezvous", "pymemcache"})
_PYMEMCACHE_BYTES = "pymemcache_rendezvous_bytes"

# HashClient's options that place keys over several servers: meaningless for one server's client.
_PLACEMENT_OPTIONS = frozenset({"distribution", "hash_with_key_prefix", "failover",
                                "dead_timeout", "failure_limit"})


class HashClient(Client):
    """pymemcache's HashClient, with its positional parameters (``servers, hasher, serde,
    serializer, deserializer, connect_timeout, timeout, no_delay, socket_module,
    socket_keepalive, key_prefix, max_pool_size, pool_idle_timeout, lock_generator,
    retry_attempts, retry_timeout, dead_timeout, use_pooling, ignore_exc, allow_unicode_keys,
    default_noreply, encoding, tls_context``). A server that fails is retried every
    ``retry_timeout`` seconds, and at its (``retry_attempts`` + 1)-th failure in a row taken out
    of the placement for ``dead_timeout`` seconds after its last failure (folsom's auto-eject),
    as pymemcache's HashClient marks it dead; its keys then go where pymemcache's would."""

    def __init__(self, servers, hasher=None, serde=None, serializer=None, deserializer=None,
                 connect_timeout=None, timeout=None, no_delay=None, socket_module=None,
                 socket_keepalive=None, key_prefix=b"", max_pool_size=None, pool_idle_timeout=0,
                 lock_generator=None, retry_attempts=2, retry_timeout=1, dead_timeout=60,
                 use_pooling=False, ignore_exc=False, allow_unicode_keys=False,
                 default_noreply=False, encoding="ascii", tls_context=None, **options):
        # Kept for the client of bytes keys (_bytes_keys_client), made with the same arguments.
        self._arguments = dict(
            servers=servers, hasher=hasher, serde=serde, serializer=serializer,
            deserializer=deserializer, connect_timeout=connect_timeout, timeout=timeout,
            no_delay=no_delay, socket_module=socket_module, socket_keepalive=socket_keepalive,
            key_prefix=key_prefix, max_pool_size=max_pool_size,
            pool_idle_timeout=pool_idle_timeout, lock_generator=lock_generator,
            retry_attempts=retry_attempts, retry_timeout=retry_timeout,
            dead_timeout=dead_timeout, use_pooling=use_pooling, ignore_exc=ignore_exc,
            allow_unicode_keys=allow_unicode_keys, default_noreply=default_noreply,
            encoding=encoding, tls_context=tls_context, **options)
        if hasher is not None and getattr(hasher, "__name__", "") != "RendezvousHash":
            raise TypeError("folsom places keys with its own distributions (distribution=...): "
                            "hasher=%r cannot be used" % (hasher,))
        for name, value in (("retry_attempts", retry_attempts), ("retry_timeout", retry_timeout),
                            ("dead_timeout", dead_timeout)):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
                raise ValueError("%s must be a non-negative number, not %r" % (name, value))
        # pymemcache's HashClient placement (rendezvous over murmur3): a pymemcache HashClient
        # user keeps a warm cache. distribution="ketama" gives libmemcached's (pylibmc's).
        options.setdefault("distribution", "pymemcache_rendezvous")
        rendezvous = options["distribution"] in _PYMEMCACHE_RENDEZVOUS
        if rendezvous or options["distribution"] == _PYMEMCACHE_BYTES:
            options.setdefault("hash_with_key_prefix", False)  # pymemcache hashes the bare key
        # pymemcache's dead-server handling, in the core's failover: a server that fails is
        # tried again every retry_timeout seconds (its keys failing meanwhile), taken out of
        # the placement at its (retry_attempts + 1)-th failure in a row (its keys then go
        # where pymemcache's hasher sends them without it), and kept out for dead_timeout
        # seconds after its last failure (back at once when a reconnect succeeds).
        options.setdefault("failover", True)
        options.setdefault("dead_timeout", float(dead_timeout))
        options.setdefault("failure_limit",
                           math.ceil(retry_attempts) + 1 if retry_attempts > 0 else 1)
        if retry_timeout:
            options.setdefault("reconnect_initial_delay", float(retry_timeout))
            options.setdefault("reconnect_max_delay", float(retry_timeout))
        options.update(max_pool_size=max_pool_size, pool_idle_timeout=pool_idle_timeout,
                       lock_generator=lock_generator, retry_attempts=retry_attempts,
                       use_pooling=use_pooling)
        # What a Client of one of the servers is made with (the clients attribute).
        self._one_server_options = {k: v for k, v in options.items()
                                    if k not in _PLACEMENT_OPTIONS}
        self._one_server_options.update(ignore_exc=ignore_exc)
        self._clients = None
        self._clients_lock = threading.Lock()
        super().__init__(servers, serde, serializer, deserializer, connect_timeout, timeout,
                         no_delay, ignore_exc, socket_module, socket_keepalive, key_prefix,
                         default_noreply, allow_unicode_keys, encoding, tls_context, **options)
        # pymemcache's HashClient keeps the arguments it gives each server's client in this
        # public attribute (the same keys), which programs and Django's tests read back.
        self.default_kwargs = {
            "connect_timeout": connect_timeout, "timeout": timeout, "no_delay": no_delay,
            "socket_module": socket_module, "socket_keepalive": socket_keepalive,
            "key_prefix": key_prefix, "serde": serde, "serializer": serializer,
            "deserializer": deserializer, "allow_unicode_keys": allow_unicode_keys,
            "default_noreply": default_noreply, "encoding": encoding, "tls_context": tls_context,
        }
        if use_pooling is True:
            self.default_kwargs.update(max_pool_size=max_pool_size,
                                       pool_idle_timeout=pool_idle_timeout,
                                       lock_generator=lock_generator)
        # pymemcache hashes a key given as bytes by its repr, a str key by its characters: b"k"
        # and "k" name one item but may live on different servers. Only Python knows a key's
        # type, so with pymemcache's placement over several servers this client's bytes keys go
        # through a client of their own, placed by the core's pymemcache_rendezvous_bytes
        # (made at the first bytes key); multi-key calls give each client its keys.
        self._bytes_keys = None
        self._split_bytes_keys = (rendezvous and len(self.servers) > 1
                                  and self._opts.get("routes") is None)

    @property
    def clients(self):
        """pymemcache's HashClient.clients: {"host:port" (or socket path): a Client of that one
        server}, with this client's arguments (serde, timeouts, TLS, protocol, ...). They are
        made at the first use of this attribute and have their own connections (this client
        itself is one client over every server); close() closes them too."""
        with self._clients_lock:
            if self._clients is None:
                if self._opts.get("routes") is not None:
                    raise MemcacheClientError("with routes= the servers are the routes' pools: "
                                              "there is no client per server")
                kw = self.default_kwargs
                self._clients = {
                    name: Client(name, kw["serde"], kw["serializer"], kw["deserializer"],
                                 kw["connect_timeout"], kw["timeout"], kw["no_delay"],
                                 socket_module=kw["socket_module"],
                                 socket_keepalive=kw["socket_keepalive"],
                                 key_prefix=kw["key_prefix"],
                                 default_noreply=kw["default_noreply"],
                                 allow_unicode_keys=kw["allow_unicode_keys"],
                                 encoding=kw["encoding"], tls_context=kw["tls_context"],
                                 **self._one_server_options)
                    for name in self.servers}
            return dict(self._clients)

    def close(self):
        """As Client.close(), for the clients of the clients attribute too."""
        super().close()
        with self._clients_lock:
            for c in (self._clients or {}).values():
                c.close()
            if self._bytes_keys is not None:
                self._bytes_keys.close()

    quit = close
    disconnect_all = close

    def add_server(self, server, port=None):
        raise NotImplementedError("folsom's server list is fixed at construction (or comes "
                                  "from discovery=): make a new client")

    remove_server = add_server

    # ---- keys given as bytes (pymemcache's placement: see _split_bytes_keys) ----------------

    def _bytes_keys_client(self):
        with self._clients_lock:
            if self._bytes_keys is None:
                arguments = dict(self._arguments, distribution=_PYMEMCACHE_BYTES)
                self._bytes_keys = HashClient(**arguments)
            return self._bytes_keys

    def _merged(self, name, keys, *args):
        """Client.<name>(keys, *args) over this client's keys and the bytes keys' client's,
        the results merged."""
        method = getattr(Client, name)
        if not self._split_bytes_keys:
            return method(self, keys, *args)
        as_bytes, others = [], []
        for k in keys:
            (as_bytes if isinstance(k, bytes) else others).append(k)
        if not as_bytes:
            return method(self, others, *args)
        theirs = method(self._bytes_keys_client(), as_bytes, *args)
        if not others:
            return theirs
        ours = method(self, others, *args)
        if isinstance(ours, dict):
            ours.update(theirs)
            return ours
        if isinstance(ours, list):
            return ours + list(theirs)
        return ours and theirs

    def get_many(self, keys):
        return self._merged("get_many", keys)

    get_multi = get_many

    def gets_many(self, keys):
        return self._merged("gets_many", keys)

    def gat_many(self, keys, expire=0):
        return self._merged("gat_many", keys, expire)

    def touch_many(self, keys, expire=0):
        return self._merged("touch_many", keys, expire)

    def delete_many(self, keys, noreply=None):
        return self._merged("delete_many", keys, noreply)

    delete_multi = delete_many

    def set_many(self, values, expire=0, noreply=None, flags=None):
        if not self._split_bytes_keys:
            return Client.set_many(self, values, expire, noreply, flags)
        as_bytes = {k: v for k, v in values.items() if isinstance(k, bytes)}
        if not as_bytes:
            return Client.set_many(self, values, expire, noreply, flags)
        failed = Client.set_many(self._bytes_keys_client(), as_bytes, expire, noreply, flags)
        others = {k: v for k, v in values.items() if not isinstance(k, bytes)}
        if others:
            failed = Client.set_many(self, others, expire, noreply, flags) + failed
        return failed

    set_multi = set_many


def _by_key_type(name):
    """HashClient.<name>: Client.<name> on the client that places the key as pymemcache does
    for its type (see HashClient._bytes_keys_client)."""
    method = getattr(Client, name)

    def by_key_type(self, key, *args, **kwargs):
        if self._split_bytes_keys and isinstance(key, bytes):
            return method(self._bytes_keys_client(), key, *args, **kwargs)
        return method(self, key, *args, **kwargs)

    by_key_type.__name__ = name
    by_key_type.__qualname__ = "HashClient." + name
    by_key_type.__doc__ = method.__doc__
    return by_key_type


for _name in ("get", "gets", "gat", "gats", "set", "add", "replace", "append", "prepend", "cas",
              "delete", "touch", "incr", "decr", "get_or_fill", "server_for"):
    setattr(HashClient, _name, _by_key_type(_name))
del _name


class PooledClient(Client):
    """pymemcache's PooledClient, with its positional parameters (``server, serde, serializer,
    deserializer, connect_timeout, timeout, no_delay, ignore_exc, socket_module,
    socket_keepalive, key_prefix, max_pool_size, pool_idle_timeout, lock_generator,
    default_noreply, allow_unicode_keys, encoding, tls_context``). One folsom client already
    serves every thread (their requests pipeline onto its connections), so the pool's own
    arguments are accepted and change nothing."""

    def __init__(self, server, serde=None, serializer=None, deserializer=None,
                 connect_timeout=None, timeout=None, no_delay=None, ignore_exc=False,
                 socket_module=None, socket_keepalive=None, key_prefix=b"", max_pool_size=None,
                 pool_idle_timeout=0, lock_generator=None, default_noreply=False,
                 allow_unicode_keys=False, encoding="ascii", tls_context=None, **options):
        options.update(max_pool_size=max_pool_size, pool_idle_timeout=pool_idle_timeout,
                       lock_generator=lock_generator)
        super().__init__(server, serde, serializer, deserializer, connect_timeout, timeout,
                         no_delay, ignore_exc, socket_module, socket_keepalive, key_prefix,
                         default_noreply, allow_unicode_keys, encoding, tls_context, **options)
