"""One exception hierarchy, mapped from folsom's error codes (folsom::errc).

pymemcache's names are kept where pymemcache has the concept (MemcacheError,
MemcacheClientError, MemcacheIllegalInputError, MemcacheServerError, MemcacheUnknownError,
MemcacheUnexpectedCloseError); connection failures and timeouts also derive from Python's
builtin ConnectionError and TimeoutError, so ``except ConnectionError`` works as well. Every
exception raised for a failed request carries ``errc``: folsom's name for the error
("timeout", "connection_lost", ...).

When pymemcache is importable, each class also derives from pymemcache's class of the same
meaning, so that a program's ``except pymemcache.exceptions.MemcacheError`` (or
MemcacheClientError, MemcacheIllegalInputError, MemcacheServerError, MemcacheUnknownError,
MemcacheUnexpectedCloseError) catches folsom's errors unchanged. A value refused as too large
is a MemcacheServerError too, as memcached's refusal is in pymemcache.

Likewise, when pylibmc is importable, the classes also derive from pylibmc's of the same meaning
(Error, ClientError, ServerError, TooBig, ProtocolError, NotSupportedError, ConnectionError),
so that a PyLibMCCache or pylibmc program's ``except pylibmc.Error`` (...) keeps catching them.
ClientError is MemcacheClientError under pylibmc's name (``folsom.ClientError``): Django's
memcached backends name the class an incr of a non-number raises as ``<library>.ClientError``.
"""

try:
    from pymemcache import exceptions as _pymemcache
except Exception:  # not installed (or broken): folsom's own classes alone
    _pymemcache = None

try:
    import pylibmc as _pylibmc
except Exception:
    _pylibmc = None


def _also(name, pylibmc_name=None):
    """pymemcache's class `name` (and pylibmc's `pylibmc_name`) as extra bases (none without
    those packages)."""
    out = []
    for module, n in ((_pymemcache, name), (_pylibmc, pylibmc_name)):
        cls = getattr(module, n, None) if module is not None and n else None
        if isinstance(cls, type) and issubclass(cls, Exception):
            out.append(cls)
    return tuple(out)


class MemcacheError(*(_also("MemcacheError", "Error") or (Exception,))):
    """Base class of every error this package raises."""

    errc = None


class MemcacheClientError(MemcacheError, *_also("MemcacheClientError", "ClientError")):
    """The request was refused on the client side, or the server answered CLIENT_ERROR."""


class MemcacheIllegalInputError(MemcacheClientError, *_also("MemcacheIllegalInputError")):
    """A key or value that cannot be sent: wrong type, empty, too long, holding a space or a
    control character, or a value over max_value_size. Nothing was sent."""


class MemcacheServerError(MemcacheError, *_also("MemcacheServerError", "ServerError")):
    """The server answered SERVER_ERROR (or ERROR)."""


class MemcacheValueTooLargeError(MemcacheIllegalInputError, MemcacheServerError,
                                 *_also(None, "TooBig")):
    """A value over the client's max_value_size (nothing was stored; a set first deleted the
    key's old value, as memcached does when it refuses one), or one the server refused as too
    large. Also a MemcacheServerError: pymemcache raises that for memcached's refusal."""


class MemcacheUnsupportedError(MemcacheClientError,
                               *_also("MemcacheUnknownCommandError", "NotSupportedError")):
    """The operation is not available over the chosen protocol (e.g. SASL over meta)."""


class MemcacheClosedError(MemcacheClientError):
    """The client was closed."""


class MemcacheOverloadedError(MemcacheClientError):
    """More than max_outstanding_requests in flight: the request failed at once."""


class MemcacheUnknownError(MemcacheError, *_also("MemcacheUnknownError", "ProtocolError")):
    """The server sent bytes that are not a valid reply; the connection was dropped."""


class MemcacheConnectionError(MemcacheError, ConnectionError, *_also(None, "ConnectionError")):
    """No usable connection to the server that owns the key."""


class MemcacheUnexpectedCloseError(MemcacheConnectionError, *_also("MemcacheUnexpectedCloseError")):
    """The connection broke under the request (the server closed it, an I/O error)."""


class MemcacheTLSError(MemcacheConnectionError):
    """The TLS handshake or the certificate check failed."""


class MemcacheAuthError(MemcacheConnectionError):
    """SASL authentication was refused (or the server offers no PLAIN mechanism)."""


class MemcacheTimeoutError(MemcacheError, TimeoutError):
    """A connect, or a reply, took longer than its timeout."""


class MemcacheDecodeError(MemcacheError):
    """A stored value could not be decoded."""


class MemcacheFillError(MemcacheError):
    """get_or_fill's fill function failed."""


# pylibmc's name for the class (see the module's documentation).
ClientError = MemcacheClientError

# folsom::errc value -> class; index 0 is a key or value of the wrong type.
_BY_ERRC = {
    "not_connected": MemcacheConnectionError,
    "closed": MemcacheClosedError,
    "overloaded": MemcacheOverloadedError,
    "timeout": MemcacheTimeoutError,
    "protocol_error": MemcacheUnknownError,
    "invalid_key": MemcacheIllegalInputError,
    "value_too_large": MemcacheValueTooLargeError,
    "auth_failed": MemcacheAuthError,
    "server_error": MemcacheServerError,
    "client_error": MemcacheClientError,
    "invalid_argument": MemcacheIllegalInputError,
    "resolve_failed": MemcacheConnectionError,
    "connect_failed": MemcacheConnectionError,
    "tls_error": MemcacheTLSError,
    "unsupported": MemcacheUnsupportedError,
    "cancelled": MemcacheError,  # the asyncio client raises asyncio.CancelledError instead
    "connection_lost": MemcacheUnexpectedCloseError,
    "decode_failed": MemcacheDecodeError,
    "fill_failed": MemcacheFillError,
    "no_sasl_mechanism": MemcacheAuthError,
    "built_without_c_ares": MemcacheUnsupportedError,
    "built_without_zstd": MemcacheUnsupportedError,
    "built_without_lz4": MemcacheUnsupportedError,
    "built_without_zlib": MemcacheUnsupportedError,
    "built_without_nlohmann_json": MemcacheUnsupportedError,
}


def _register(native):
    classes = [MemcacheIllegalInputError] * (max(native.ERRC.values()) + 1)
    for name, value in native.ERRC.items():
        classes[value] = _BY_ERRC.get(name, MemcacheError)
    native._set_error_classes(classes)
    return classes


def error_for(classes, errc_value, what):
    """An exception instance for a per-key error code of a multi-key result."""
    cls = classes[errc_value] if 0 < errc_value < len(classes) else MemcacheError
    e = cls(what)
    for name, value in _ERRC_NAMES.items():
        if value == errc_value:
            e.errc = name
    return e


_ERRC_NAMES = {}
