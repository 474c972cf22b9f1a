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

# Options::request_timeout's default (include/folsom/options.hpp), in seconds.
DEFAULT_REQUEST_TIMEOUT = 3.0


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
    if (isinstance(servers, (tuple, list)) and len(servers) in (2, 3)
            and isinstance(servers[0], (str, bytes)) and isinstance(servers[1], int)):
        return [_server_string(tuple(servers))]  # one (host, port), or pymemcache's [host, port]
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
        from . import tls as _tls
        kwargs = dict(kwargs)
        kwargs.update(_tls.options_from_context(tls_context, kwargs))
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
    if kwargs.get("tcp_keepalive") is not None:
        kwargs = dict(kwargs, tcp_keepalive=tcp_keepalive(kwargs["tcp_keepalive"]))
    known = {
        "tcp_keepalive", "distribution", "max_outstanding_requests", "max_value_size", "connections_per_server",
        "request_timeout", "reconnect_initial_delay", "reconnect_max_delay", "scatter_threshold",
        "tcp_nodelay", "hash_with_key_prefix", "binary_keys", "retry_idempotent", "failover", "dead_timeout",
        "failure_limit",
        "tls", "tls_ca_file", "tls_cert_file", "tls_key_file", "tls_server_name", "tls_verify",
        "sasl_username", "sasl_password", "metrics", "routes", "allow_unicode_keys",
        "ascii_str_values",
    }
    for name, value in kwargs.items():
        if name not in known:
            raise TypeError("unknown option %r" % name)
        opts[name] = value
    limit = opts.get("failure_limit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)
                              or not 1 <= limit < 1 << 32):
        raise ValueError("failure_limit must be an int from 1 to 2**32-1, not %r" % (limit,))
    if opts.get("routes") is not None:
        opts["routes"] = route_config_text(opts["routes"])
    if any(opts.get(n) for n in ("tls_ca_file", "tls_cert_file", "tls_key_file", "tls_server_name")):
        opts.setdefault("tls", True)
    return opts


def check_encoding(encoding):
    """pymemcache's encoding: folsom sends str keys and values as UTF-8, of which ASCII (the
    default, with allow_unicode_keys=False refusing other keys) is a part."""
    if not isinstance(encoding, str) or encoding.replace("-", "").replace("_", "").lower() not in (
            "utf8", "ascii", "usascii"):
        raise ValueError("folsom encodes str keys and values as UTF-8 (or its ASCII part): "
                         "encoding=%r is not supported" % (encoding,))


# Linux's limits on TCP_KEEPIDLE/TCP_KEEPINTVL (s) and TCP_KEEPCNT (folsom::TcpKeepalive).
_KEEPALIVE_LIMITS = (("idle", 32767), ("interval", 32767), ("count", 127))


def tcp_keepalive(value):
    """folsom's tcp_keepalive option, (idle, interval, count) in seconds and probes, checked
    against Linux's limits (a value outside them raises here, before anything connects)."""
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        raise TypeError("tcp_keepalive must be (idle, interval, count), not %r" % (value,))
    for (name, top), v in zip(_KEEPALIVE_LIMITS, value):
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= top:
            raise ValueError("tcp_keepalive %s must be an int from 1 to %d, not %r"
                             % (name, top, v))
    return tuple(value)


def socket_keepalive_option(socket_keepalive, options):
    """pymemcache's socket_keepalive (a KeepaliveOpts: idle, intvl, cnt) as folsom's
    tcp_keepalive, which sets the same three socket options on every TCP connection."""
    if socket_keepalive is None:
        return
    values = []
    for name in ("idle", "intvl", "cnt"):
        v = getattr(socket_keepalive, name, None)
        if not isinstance(v, int):
            raise TypeError("socket_keepalive must be pymemcache's KeepaliveOpts (idle, "
                            "intvl, cnt), not %r" % (socket_keepalive,))
        values.append(v)
    if options.get("tcp_keepalive") is not None:
        raise TypeError("pass socket_keepalive (pymemcache's) or tcp_keepalive, not both")
    options["tcp_keepalive"] = tcp_keepalive(tuple(values))


# pymemcache's arguments that mean nothing for folsom (python/README.md says why for each).
# Their values are still checked, so that a typo'd value is not silently taken.
def check_pymemcache_only_options(socket_module, options):
    if socket_module is not None and not hasattr(socket_module, "socket"):
        raise TypeError("socket_module must be a module like socket, not %r" % (socket_module,))
    for name in ("max_pool_size", "pool_idle_timeout", "retry_attempts", "retry_timeout"):
        value = options.pop(name, None)
        if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool)
                                  or value < 0):
            raise ValueError("%s must be a non-negative number, not %r" % (name, value))
    options.pop("lock_generator", None)
    use_pooling = options.pop("use_pooling", False)
    if not isinstance(use_pooling, bool):
        raise TypeError("use_pooling must be True or False, not %r" % (use_pooling,))


class _LegacySerde:
    """pymemcache's deprecated serializer/deserializer functions as a serde."""

    def __init__(self, serializer, deserializer):
        self._s = serializer
        self._d = deserializer

    def serialize(self, key, value):
        if self._s is None:
            return plain_value(value), 0
        return self._s(key, value)

    def deserialize(self, key, value, flags):
        if self._d is None:
            return value
        return self._d(key, value, flags)


def make_serde(serde, serializer, deserializer):
    if serializer is None and deserializer is None:
        return serde
    if serde is not None:
        raise TypeError("pass serde, or serializer/deserializer, not both")
    return _LegacySerde(serializer, deserializer)


def stats_group(args):
    """pymemcache's stats(*args) as the one group string folsom sends ("cachedump 1 10")."""
    parts = []
    for a in args:
        a = a.decode("ascii") if isinstance(a, bytes) else str(a)
        parts.append(a)
    return " ".join(parts)


def _admin_ssl_context(opts):
    import ssl
    ctx = ssl.create_default_context(cafile=opts.get("tls_ca_file") or None)
    if opts.get("tls_verify") is False:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if opts.get("tls_cert_file"):
        ctx.load_cert_chain(opts["tls_cert_file"], opts.get("tls_key_file") or None)
    return ctx


def cache_memlimit(client, memlimit):
    """cache_memlimit on every server of `client`, each over a short connection of its own."""
    import socket
    if not isinstance(memlimit, int) or isinstance(memlimit, bool) or memlimit < 0:
        raise _exc.MemcacheIllegalInputError("memlimit must be a non-negative integer: %r" % (memlimit,))
    if client._opts.get("sasl_username") is not None:
        raise _exc.MemcacheUnsupportedError("cache_memlimit is a text command: a SASL server "
                                            "refuses it before authentication")
    timeout = client._request_timeout
    for server in client.servers:
        if server.startswith("/"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            sock.connect(server)
        else:
            host, _, port = server.rpartition(":")
            sock = socket.create_connection((host.strip("[]"), int(port)), timeout)
        try:
            if client._opts.get("tls"):
                sock = _admin_ssl_context(client._opts).wrap_socket(
                    sock, server_hostname=client._opts.get("tls_server_name") or host.strip("[]"))
            sock.sendall(b"cache_memlimit %d\r\n" % memlimit)
            reply = b""
            while not reply.endswith(b"\r\n"):
                chunk = sock.recv(256)
                if not chunk:
                    raise _exc.MemcacheUnexpectedCloseError("%s closed the connection" % server)
                reply += chunk
        except OSError as e:
            raise _exc.MemcacheConnectionError("cache_memlimit on %s: %s" % (server, e)) from e
        finally:
            sock.close()
        if reply.startswith(b"SERVER_ERROR"):
            raise _exc.MemcacheServerError(reply.strip().decode("ascii", "replace"))
        if reply.startswith(b"CLIENT_ERROR") or not reply.startswith(b"OK"):
            raise _exc.MemcacheClientError(reply.strip().decode("ascii", "replace"))
    return True


def is_pickle_serde(serde):
    """True for pymemcache's PickleSerde (its pickle_serde) and folsom.serde's, whose values the
    native layer reads itself (by the same flags), without a Python call per value."""
    if serde is None:
        return False
    method = getattr(type(serde), "deserialize", None)
    from . import serde as _serde
    known = [_serde.PickleSerde.deserialize]
    try:
        import pymemcache.serde
        known.append(pymemcache.serde.PickleSerde.deserialize)
    except Exception:
        pass
    return method in known
