"""What Client and AsyncClient share: options, server lists, values, results."""

import json
import os

from . import _native
from . import exceptions as _exc

_ERROR_CLASSES = _exc._register(_native)
_exc._ERRC_NAMES.update(_native.ERRC)

# folsom::Status values, as the native layer returns them.
OK, STORED, NOT_STORED, EXISTS, NOT_FOUND, DELETED, TOUCHED, VALUE_TOO_LARGE, OUT_OF_MEMORY, SENT = range(10)
# folsom::StoreMode values.
SET, ADD, REPLACE, APPEND, PREPEND, CAS = range(6)
# folsom::CacheSource values.
CACHE_SOURCES = ("hit", "filled", "waited", "stale", "miss")

_PROTOCOLS = ("meta", "binary", "ascii")


def _server_string(server):
    """One server as folsom's Options::servers spells it ("host:port[:weight]" or a path)."""
    if isinstance(server, bytes):
        server = server.decode("utf-8")
    if isinstance(server, str):
        if server.startswith("unix:"):
            return server[len("unix:"):]
        return server
    if isinstance(server, (tuple, list)) and len(server) in (2, 3):
        host = server[0]
        if isinstance(host, bytes):
            host = host.decode("utf-8")
        if ":" in host and not host.startswith("["):
            host = "[" + host + "]"
        s = "%s:%d" % (host, int(server[1]))
        if len(server) == 3:
            s += ":%d" % int(server[2])
        return s
    raise TypeError("a server is 'host:port', a socket path, or a (host, port) tuple, not %r" % (server,))


def server_list(servers):
    """pymemcache's forms: one "host:port", a (host, port) tuple, or a list of either."""
    if isinstance(servers, (str, bytes)):
        text = servers.decode("utf-8") if isinstance(servers, bytes) else servers
        parts = [p.strip() for p in text.split(",") if p.strip()]
        return [_server_string(p) for p in parts]
    if isinstance(servers, tuple) and len(servers) in (2, 3) and isinstance(servers[1], int):
        return [_server_string(servers)]
    out = [_server_string(s) for s in servers]
    if not out:
        raise ValueError("no servers given")
    return out


_STAT_TYPES = {
    b"version": bytes,
    b"libevent": bytes,
    b"rusage_user": lambda v: float(v.replace(b":", b".")),
    b"rusage_system": lambda v: float(v.replace(b":", b".")),
    b"hash_is_expanding": lambda v: int(v) != 0,
    b"slab_reassign_running": lambda v: int(v) != 0,
    b"inter": bytes,
    b"growth_factor": float,
    b"stat_key_prefix": bytes,
    b"umask": lambda v: int(v, 8),
    b"detail_enabled": lambda v: int(v) != 0,
    b"cas_enabled": lambda v: int(v) != 0,
    b"auth_enabled_sasl": lambda v: v == b"yes",
    b"maxconns_fast": lambda v: int(v) != 0,
    b"slab_reassign": lambda v: int(v) != 0,
    b"slab_automove": lambda v: int(v) != 0,
}


def stats_dict(pairs):
    """memcached's STAT lines as pymemcache returns them: bytes names, values converted."""
    out = {}
    for name, value in pairs:
        conv = _STAT_TYPES.get(name, int)
        try:
            out[name] = conv(value)
        except Exception:
            out[name] = value
    return out


def per_server(nodes, convert):
    """Results of a request sent to every server: {server: value} of those that answered."""
    return {server: convert(value) for server, err, value in nodes if not err}


def one_or_many(nodes, convert):
    answered = per_server(nodes, convert)
    if len(nodes) == 1 and answered:
        return next(iter(answered.values()))
    return answered


def raise_for(errc_value, what):
    raise _exc.error_for(_ERROR_CLASSES, errc_value, what)


def error_for(errc_value, what):
    return _exc.error_for(_ERROR_CLASSES, errc_value, what)


def plain_value(value):
    """A value without a serde, as pymemcache sends it: bytes-like and str as they are (str
    encoded UTF-8 by the native layer), numbers as their decimal text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value).encode("ascii")
    return value


def cas_int(cas):
    """A cas token as gets returns it (int), or as pymemcache's gets returns it (bytes)."""
    if isinstance(cas, int) and not isinstance(cas, bool):
        if cas < 0:
            raise _exc.MemcacheIllegalInputError("cas must be a non-negative integer: %r" % (cas,))
        return cas
    if isinstance(cas, (bytes, str)) and cas.isdigit():
        return int(cas)
    raise _exc.MemcacheIllegalInputError("cas must be an integer: %r" % (cas,))


def check_delta(value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _exc.MemcacheIllegalInputError("incr/decr value must be a non-negative int: %r" % (value,))
    if value >= 1 << 64:
        raise _exc.MemcacheIllegalInputError("incr/decr value over 64 bits: %r" % (value,))
    return value


def check_expire(expire):
    if expire is None:
        return 0
    if not isinstance(expire, int) or isinstance(expire, bool):
        try:
            expire = int(expire)
        except Exception:
            raise _exc.MemcacheIllegalInputError("expire must be an integer: %r" % (expire,))
    return expire


def check_flags(flags):
    if flags is None:
        return None
    if not isinstance(flags, int) or isinstance(flags, bool) or not 0 <= flags < 1 << 32:
        raise _exc.MemcacheIllegalInputError("flags must be a 32-bit unsigned int: %r" % (flags,))
    return flags


def route_config_text(routes):
    """routes= as JSON text: a dict (mcrouter's shape), JSON text, or the path of a file."""
    if isinstance(routes, dict):
        return json.dumps(routes)
    if isinstance(routes, (str, bytes, os.PathLike)):
        text = os.fsdecode(routes) if not isinstance(routes, str) else routes
        if text.lstrip().startswith("{"):
            return text
        with open(text, encoding="utf-8") as f:
            return f.read()
    raise TypeError("routes must be a dict, JSON text or a file path, not %r" % type(routes).__name__)


def native_options(servers, protocol, connect_timeout, timeout, no_delay, key_prefix, tls_context,
                   username, password, kwargs):
    if protocol not in _PROTOCOLS:
        raise ValueError("protocol must be one of %s, not %r" % (", ".join(_PROTOCOLS), protocol))
    if tls_context is not None:
        raise TypeError(
            "folsom cannot take an ssl.SSLContext: OpenSSL's state in it (the client certificate "
            "and key, loaded CAs) cannot be read back out for folsom's own OpenSSL context. "
            "Pass tls=True with tls_ca_file=, tls_cert_file=, tls_key_file=, tls_server_name=, "
            "tls_verify= instead.")
    # With routes= the pools name the servers; `servers` may then be None.
    with_routes = kwargs.get("routes") is not None
    opts = {"servers": server_list(servers) if servers or not with_routes else [],
            "protocol": protocol}
    if connect_timeout is not None:
        opts["connect_timeout"] = float(connect_timeout)
    if timeout is not None:
        opts["request_timeout"] = float(timeout)
    if no_delay is not None:
        opts["tcp_nodelay"] = bool(no_delay)
    if key_prefix:
        opts["key_prefix"] = key_prefix
    if username is not None:
        opts["sasl_username"] = username
    if password is not None:
        opts["sasl_password"] = password
    known = {
        "distribution", "max_outstanding_requests", "max_value_size", "connections_per_server",
        "request_timeout", "reconnect_initial_delay", "reconnect_max_delay", "scatter_threshold",
        "tcp_nodelay", "hash_with_key_prefix", "retry_idempotent", "failover", "dead_timeout",
        "tls", "tls_ca_file", "tls_cert_file", "tls_key_file", "tls_server_name", "tls_verify",
        "sasl_username", "sasl_password", "metrics", "routes",
    }
    for name, value in kwargs.items():
        if name not in known:
            raise TypeError("unknown option %r" % name)
        opts[name] = value
    if opts.get("routes") is not None:
        opts["routes"] = route_config_text(opts["routes"])
    if any(opts.get(n) for n in ("tls_ca_file", "tls_cert_file", "tls_key_file", "tls_server_name")):
        opts.setdefault("tls", True)
    return opts
