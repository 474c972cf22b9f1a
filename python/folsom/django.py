"""Django cache backend: ``folsom.django.FolsomCache``.

    CACHES = {
        "default": {
            "BACKEND": "folsom.django.FolsomCache",
            "LOCATION": ["127.0.0.1:11211", "10.0.0.2:11211"],
            "OPTIONS": {"protocol": "meta", "connect_timeout": 1, "timeout": 1},
        }
    }

OPTIONS are what django.core.cache.backends.memcached.PyMemcacheCache takes (pymemcache's
HashClient arguments, with the same defaults: allow_unicode_keys=True, default_noreply=False,
the pickle serde) plus folsom's own (protocol, tls options, routes, distribution, ...), and one
of this backend's:

- ``disconnect_on_close`` (default False). Django closes every cache at the end of each request;
  PyMemcacheCache then drops its sockets and connects again at the next request. folsom's client
  reconnects on its own and serves every thread, so by default close() keeps the connections,
  as PyLibMCCache does. True drops them as PyMemcacheCache does (the next call reconnects).

A PyLibMCCache user's OPTIONS are taken too, with pylibmc's meaning (see pylibmc_options()):
``binary`` (True: protocol="binary") and ``behaviors`` (tcp_nodelay, hash, ketama,
distribution, connect_timeout, ...; a behaviour folsom has no counterpart for is accepted as a
documented no-op, one it cannot honour or an unknown one raises ValueError naming it). With
them keys are placed as pylibmc places them (pylibmc_placement(): modula by default, as
pylibmc's). The client then reads them back as pylibmc.Client does (``cache._cache.binary``,
``cache._cache.behaviors``).

Values are stored as pymemcache's pickle serde stores them, so PyMemcacheCache and FolsomCache
read each other's entries.
"""

import os
import re

from django.core.cache.backends.base import DEFAULT_TIMEOUT, default_key_func
from django.core.cache.backends.memcached import BaseMemcachedCache
from django.utils.functional import cached_property

import folsom

from . import serde as _serde

# What memcache_key_warnings() looks for, as one C-level search (Django's own check is a Python
# loop over the key's characters, which costs more than folsom's whole get). A key it flags is
# handed to Django's validate_key for Django's own error.
_BAD_KEY_CHAR = re.compile(r"[\x00-\x20\x7f]")
_MAX_KEY_LENGTH = 250


def _default_serde():
    try:
        import pymemcache.serde
        return pymemcache.serde.pickle_serde
    except Exception:
        return _serde.pickle_serde


# pylibmc behaviours (pylibmc.all_behaviors) that have no counterpart in folsom, and why each
# changes nothing.
_PYLIBMC_NO_OPS = {
    "no_block": "folsom's I/O is always non-blocking",
    "buffer_requests": "folsom always pipelines requests onto its connections",
    "cas": "folsom always reads CAS values (gets/cas need no switch)",
    "verify_keys": "folsom always checks keys before sending them",
    "_io_msg_watermark": "libmemcached's I/O buffering; folsom's event loop has no counterpart",
    "_io_bytes_watermark": "libmemcached's I/O buffering; folsom's event loop has no counterpart",
    "_io_key_prefetch": "libmemcached's I/O buffering; folsom's event loop has no counterpart",
    "_poll_timeout": "libmemcached's poll() timeout; folsom's is the request timeout",
    "_socket_send_size": "folsom keeps the kernel's socket buffer sizes",
    "_socket_recv_size": "folsom keeps the kernel's socket buffer sizes",
}

# libmemcached's hashes by number (memcached_hash_t), by folsom's names; pylibmc's names for
# them (pylibmc.hashers), and pylibmc's distribution names (pylibmc.distributions) by number
# (memcached_server_distribution_t).
_LIBMEMCACHED_HASHES = ("one_at_a_time", "md5", "crc", "fnv1_64", "fnv1a_64", "fnv1_32",
                        "fnv1a_32", "hsieh", "murmur", "jenkins", "murmur3")
_PYLIBMC_HASHES = {"default": 0, "md5": 1, "crc": 2, "fnv1_64": 3, "fnv1a_64": 4, "fnv1_32": 5,
                   "fnv1a_32": 6, "hsieh": 7, "murmur": 8, "jenkins": 9}
_PYLIBMC_DISTRIBUTIONS = {"modula": 0, "consistent": 1, "consistent ketama": 2, "random": 3,
                          "consistent ketama spy": 4, "consistent weighted": 5,
                          "virtual bucket": 6, "consistent max": 7}
_MODULA, _KETAMA, _RANDOM, _KETAMA_SPY, _WEIGHTED, _VIRTUAL_BUCKET, _MAX = 0, 2, 3, 4, 5, 6, 7
_REFUSED_DISTRIBUTIONS = {
    _RANDOM: "places each request on a server at random, so no key can be found again",
    _VIRTUAL_BUCKET: "needs libmemcached's bucket map (memcached_virtual_bucket_create), "
                     "which pylibmc cannot set",
    _MAX: "libmemcached refuses it (so does pylibmc)",
}
# The behaviours that place keys, in the order pylibmc applies them (its behaviour table).
_PLACEMENT_BEHAVIORS = ("hash", "ketama_hash", "ketama", "ketama_weighted", "distribution")


def _pylibmc_number(name, value, names, what):
    """A pylibmc hash or distribution, given by pylibmc's name or libmemcached's number."""
    number = names.get(value) if isinstance(value, str) else value
    if isinstance(number, bool) or not isinstance(number, int) or \
            number not in names.values() and not (what == "hash" and number == 10):
        raise ValueError("pylibmc %s=%r is not one of pylibmc's %ss (%s)"
                         % (name, value, what, ", ".join(sorted(names))))
    return number


def pylibmc_placement(behaviors):
    """folsom's distribution for pylibmc's placement behaviours (hash, ketama_hash, ketama,
    ketama_weighted, distribution), placing every key where pylibmc over the same servers
    does: libmemcached 1.1.4's behaviours applied in pylibmc's order, as folsom's libmemcached
    drop-in applies them (compat/libmemcached/behavior.cpp). pylibmc's default, no behaviour
    given, is libmemcached's: modula with the one_at_a_time hash.

    - hash: the key hash of every distribution below;
    - ketama: True is libmemcached's unweighted CONSISTENT_KETAMA ring (100 points a server,
      points and keys by the key hash: folsom's libmemcached_consistent), False modula;
    - ketama_weighted: True is the weighted MD5 ring (folsom's ketama_libmemcached), the key
      hash set to md5; False modula;
    - distribution: "modula", "consistent" and "consistent ketama" (the unweighted ring, or the
      weighted one after ketama_weighted), "consistent weighted" (the weighted ring with the
      key hash), "consistent ketama spy" after ketama_weighted (spymemcached's ring);
    - ketama_hash: libmemcached keeps it but places nothing with it.

    Raises ValueError naming the behaviour for what folsom cannot place as pylibmc does:
    hsieh (Debian's libmemcached is built without it, and refuses it), random, virtual
    bucket, consistent max, and "consistent ketama spy" without ketama_weighted
    (libmemcached's unweighted spymemcached ring, which is not a folsom distribution)."""
    key_hash, weighted, distribution = 0, False, _MODULA
    for name in _PLACEMENT_BEHAVIORS:
        if name not in behaviors:
            continue
        value = behaviors[name]
        if name in ("hash", "ketama_hash"):
            number = _pylibmc_number(name, value, _PYLIBMC_HASHES, "hash")
            if number == 7:
                raise ValueError("pylibmc %s='hsieh' is not available: Debian's libmemcached "
                                 "is built without it (pylibmc refuses it there too)" % name)
            if name == "hash":
                key_hash = number
        elif name == "ketama":
            weighted, distribution = False, _KETAMA if value else _MODULA
        elif name == "ketama_weighted":
            weighted, distribution = bool(value), _WEIGHTED if value else _MODULA
            if value:
                key_hash = 1  # libmemcached sets the key hash to md5 with it
        else:
            distribution = _pylibmc_number(name, value, _PYLIBMC_DISTRIBUTIONS, "distribution")
            if distribution in _REFUSED_DISTRIBUTIONS:
                raise ValueError("pylibmc distribution %r is not available: it %s"
                                 % (value, _REFUSED_DISTRIBUTIONS[distribution]))
            if distribution == _WEIGHTED:
                weighted = True
    hash_name = _LIBMEMCACHED_HASHES[key_hash]
    if distribution == _MODULA:
        return "libmemcached_modula:" + hash_name
    if distribution == _KETAMA_SPY:
        if not weighted:
            raise ValueError("pylibmc distribution 'consistent ketama spy' without "
                             "ketama_weighted is not available: libmemcached's unweighted "
                             "spymemcached ring is not one of folsom's distributions (with "
                             "ketama_weighted it is ketama_spymemcached)")
        return "ketama_spymemcached"
    if weighted:
        return "ketama_libmemcached:" + hash_name
    return "libmemcached_consistent:" + hash_name


def libmemcached_sorted(servers):
    """`servers` ("host:port" or a socket path) in the order libmemcached's _sort_hosts puts
    them: by host name (strcmp), then port. Modula places keys by that order."""
    def key(server):
        host, sep, port = server.rpartition(":")
        if not sep or not port.isdigit():
            host, port = server, "11211"
        return host.strip("[]").encode(), int(port)
    return sorted(servers, key=key)


def _kernel_keepalive():
    """SO_KEEPALIVE's timings as the kernel sets them (what pylibmc's tcp_keepalive uses)."""
    out = []
    for name, default in (("tcp_keepalive_time", 7200), ("tcp_keepalive_intvl", 75),
                          ("tcp_keepalive_probes", 9)):
        try:
            with open(os.path.join("/proc/sys/net/ipv4", name)) as f:
                out.append(int(f.read()))
        except (OSError, ValueError):
            out.append(default)
    return tuple(out)


def pylibmc_options(binary, behaviors, options):
    """PyLibMCCache's OPTIONS (pylibmc.Client's binary= and behaviors=) as folsom's options,
    added to `options`; returns the behaviours as pylibmc.Client.behaviors reads them back.

    Mapped: binary=True -> protocol="binary" (False: the text protocol, folsom's meta);
    tcp_nodelay -> no_delay; tcp_keepalive -> tcp_keepalive with the kernel's timings;
    hash/ketama_hash/ketama/ketama_weighted/distribution -> distribution, placing keys as
    pylibmc does (pylibmc_placement()); connect_timeout
    (ms) -> connect_timeout; send_timeout/receive_timeout (us) -> timeout (folsom's is per
    request, the larger of the two); retry_timeout (s) -> retry_timeout; dead_timeout (s) ->
    dead_timeout; remove_failed/auto_eject -> failover; failure_limit -> failure_limit (failures
    in a row before a server is ejected); _noreply -> default_noreply;
    _hash_with_prefix_key -> hash_with_key_prefix; pickle_protocol -> the pickle serde's version;
    num_replicas: 0 only; _sort_hosts: FolsomCache orders the servers as libmemcached does.
    The others are no-ops (_PYLIBMC_NO_OPS says why). pylibmc ejects no failed server unless
    remove_failed or auto_eject says so, so neither does folsom then (failover=False)."""
    pylibmc_style = binary is not None or behaviors is not None
    if binary is not None:
        want = "binary" if binary else None
        given = options.get("protocol")
        if binary and given not in (None, "binary"):
            raise ValueError("binary=True and protocol=%r contradict each other" % (given,))
        if not binary and given == "binary":
            raise ValueError("binary=False and protocol='binary' contradict each other")
        if want:
            options["protocol"] = want
    behaviors = dict(behaviors or {})
    read_back = {}
    timeouts = []
    if any(name in behaviors for name in _PLACEMENT_BEHAVIORS):
        if options.get("distribution") is not None:
            raise ValueError("pass pylibmc's placement behaviours or folsom's distribution=, "
                             "not both")
        options["distribution"] = pylibmc_placement(behaviors)
    for name, value in behaviors.items():
        if name in ("hash", "distribution", "ketama_hash") and isinstance(value, str):
            read_back[name] = value
        elif isinstance(value, (bool, int, float)):
            read_back[name] = int(value)
        else:
            raise TypeError("pylibmc behavior %s must be a number, not %r" % (name, value))
        if name == "tcp_nodelay":
            options["no_delay"] = bool(value)
        elif name == "tcp_keepalive":
            if value:
                options["tcp_keepalive"] = _kernel_keepalive()
        elif name in _PLACEMENT_BEHAVIORS or name == "_sort_hosts":
            pass  # pylibmc_placement() above; _sort_hosts orders the servers (FolsomCache)
        elif name == "connect_timeout":
            if value:
                options["connect_timeout"] = value / 1000.0
        elif name in ("send_timeout", "receive_timeout"):
            if value:
                timeouts.append(value / 1e6)
        elif name == "retry_timeout":
            options["retry_timeout"] = value
        elif name == "dead_timeout":
            if value:
                options["dead_timeout"] = value
        elif name in ("remove_failed", "auto_eject"):
            options["failover"] = bool(value)
        elif name == "failure_limit":
            if value:
                options["failure_limit"] = int(value)
        elif name == "_noreply":
            options["default_noreply"] = bool(value)
        elif name == "_hash_with_prefix_key":
            options["hash_with_key_prefix"] = bool(value)
        elif name == "pickle_protocol":
            options["serde"] = _serde.PickleSerde(pickle_version=int(value))
        elif name == "num_replicas":
            if value:
                raise ValueError("pylibmc num_replicas=%r: folsom does not replicate keys over "
                                 "servers" % (value,))
        elif name not in _PYLIBMC_NO_OPS:
            raise ValueError("unknown pylibmc behavior %r" % (name,))
    if timeouts:
        options["timeout"] = max(timeouts)
    if pylibmc_style:
        # pylibmc's OPTIONS: pylibmc's placement and failure handling where no behaviour
        # changes them (modula with libmemcached's default hash, no server ejected), not
        # PyMemcacheCache's.
        options.setdefault("distribution", pylibmc_placement({}))
        options.setdefault("failover", False)
    return read_back


class FolsomCache(BaseMemcachedCache):
    """A Django cache on folsom's HashClient (see the module's documentation)."""

    def __init__(self, server, params):
        super().__init__(server, params, library=folsom, value_not_found_exception=KeyError)
        self._class = folsom.HashClient
        options = dict(self._options)
        self._disconnect_on_close = bool(options.pop("disconnect_on_close", False))
        binary = options.pop("binary", None)
        self._behaviors = pylibmc_options(binary, options.pop("behaviors", None), options)
        self._options = {
            "allow_unicode_keys": True,
            "default_noreply": False,
            "encoding": "utf8",
            "serde": _default_serde(),
            **options,
        }

    @cached_property
    def _cache(self):
        client = self._class(self.client_servers, **self._options)
        # What pylibmc.Client answers, for a PyLibMCCache program that reads them.
        client.binary = client.protocol == "binary"
        client.behaviors = dict(self._behaviors)
        return client

    @property
    def client_servers(self):
        servers = [s[5:] if s.startswith("unix:") else s for s in self._servers]
        # pylibmc's _sort_hosts: libmemcached sorts its servers, which modula places keys by.
        return libmemcached_sorted(servers) if self._behaviors.get("_sort_hosts") else servers

    def validate_key(self, key):
        if len(key) > _MAX_KEY_LENGTH or _BAD_KEY_CHAR.search(key):
            super().validate_key(key)  # raises InvalidCacheKey with Django's message

    # The hot methods, written out with the fast key check (the same steps as Django's).

    def get(self, key, default=None, version=None):
        key = self.make_key(key, version=version)
        if len(key) > _MAX_KEY_LENGTH or _BAD_KEY_CHAR.search(key):
            super().validate_key(key)
        return self._cache.get(key, default)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        key = self.make_key(key, version=version)
        if len(key) > _MAX_KEY_LENGTH or _BAD_KEY_CHAR.search(key):
            super().validate_key(key)
        if not self._cache.set(key, value, self.get_backend_timeout(timeout)):
            # as Django's: no old value left behind by a failed set
            self._cache.delete(key)

    def get_many(self, keys, version=None):
        keys = list(keys)
        if self.key_func is default_key_func:
            # default_key_func's "%s:%s:%s" % (prefix, version, key), its constant part made once
            prefix = "%s:%s:" % (self.key_prefix, self.version if version is None else version)
            made = [prefix + k if type(k) is str else prefix + str(k) for k in keys]
        else:
            made = [self.make_key(k, version=version) for k in keys]
        # One search over every key; Django's own check (and error) only when it finds one.
        if _BAD_KEY_CHAR.search("".join(made)) or max(map(len, made), default=0) > _MAX_KEY_LENGTH:
            for key in made:
                super().validate_key(key)
        found = self._cache.get_many(made)
        if not found:
            return {}
        original = dict(zip(made, keys))
        return {original[k]: v for k, v in found.items()}

    def close(self, **kwargs):
        if self._disconnect_on_close:
            self._cache.disconnect_all()
