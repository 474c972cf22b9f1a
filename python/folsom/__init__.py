"""folsom: a memcached client for Python on folsom-cpp's asynchronous C++ core.

    from folsom import Client
    c = Client(["127.0.0.1:11211"], protocol="meta")
    c.set("k", b"v", expire=60)
    c.get("k")

pymemcache's method names, arguments and return values (Client / HashClient); asyncio through
folsom.AsyncClient; errors in folsom.exceptions. See python/README.md.
"""

from . import tls as _tls  # records load_cert_chain() for tls_context= (folsom/tls.py)
from .aio import AsyncClient
from .client import Client, HashClient, PooledClient, QuietView
from .exceptions import (
    ClientError,
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

__all__ = [
    "AsyncClient", "Client", "ClientError", "HashClient", "PooledClient", "QuietView",
    "MemcacheAuthError", "MemcacheClientError", "MemcacheClosedError", "MemcacheConnectionError",
    "MemcacheDecodeError", "MemcacheError", "MemcacheFillError", "MemcacheIllegalInputError",
    "MemcacheOverloadedError", "MemcacheServerError", "MemcacheTimeoutError", "MemcacheTLSError",
    "MemcacheUnexpectedCloseError", "MemcacheUnknownError", "MemcacheUnsupportedError",
    "MemcacheValueTooLargeError",
]
from . import _native  # noqa: E402  (the extension: its version is the CMake project's)

__version__ = _native.__version__
