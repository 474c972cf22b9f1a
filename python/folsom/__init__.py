"""folsom: a memcached client for Python on folsom-cpp's asynchronous C++ core.

    from folsom import Client
    c = Client(["127.0.0.1:11211"], protocol="meta")
    c.set("k", b"v", expire=60)
    c.get("k")

pymemcache's method names, arguments and return values (Client / HashClient); asyncio through
folsom.AsyncClient; errors in folsom.exceptions. See python/README.md.
"""

from .aio import AsyncClient
from .client import Client, QuietView
from .exceptions import (
    MemcacheAuthError,
    MemcacheClientError,
    MemcacheClosedError,
    MemcacheConnectionError,
    MemcacheDecodeError,
    MemcacheError,
    MemcacheFillError,
    MemcacheIllegalInputError,
    MemcacheOverloadedError,
    MemcacheServerError,
    MemcacheTimeoutError,
    MemcacheTLSError,
    MemcacheUnexpectedCloseError,
    MemcacheUnknownError,
    MemcacheUnsupportedError,
    MemcacheValueTooLargeError,
)

HashClient = Client  # pymemcache's name for a client of several servers

__all__ = [
    "AsyncClient", "Client", "HashClient", "QuietView",
    "MemcacheAuthError", "MemcacheClientError", "MemcacheClosedError", "MemcacheConnectionError",
    "MemcacheDecodeError", "MemcacheError", "MemcacheFillError", "MemcacheIllegalInputError",
    "MemcacheOverloadedError", "MemcacheServerError", "MemcacheTimeoutError", "MemcacheTLSError",
    "MemcacheUnexpectedCloseError", "MemcacheUnknownError", "MemcacheUnsupportedError",
    "MemcacheValueTooLargeError",
]
from . import _native  # noqa: E402  (the extension: its version is the CMake project's)

__version__ = _native.__version__
