"""cachelib and Flask-Caching backends on folsom.

cachelib: ``folsom.cachelib.FolsomCache(servers, default_timeout=300, key_prefix=None,
**options)`` is cachelib's MemcachedCache with a folsom client (options as folsom.HashClient's).

Flask-Caching: ``CACHE_TYPE = "folsom.cachelib.FlaskFolsomCache"``, with CACHE_MEMCACHED_SERVERS,
CACHE_DEFAULT_TIMEOUT, CACHE_KEY_PREFIX and CACHE_OPTIONS (folsom's options) as Flask-Caching's
own memcached backends take them.
"""

from cachelib.memcached import MemcachedCache

import folsom

from . import serde as _serde


class FolsomCache(MemcachedCache):
    """cachelib's MemcachedCache on folsom.HashClient (values through the pickle serde)."""

    def __init__(self, servers=None, default_timeout=300, key_prefix=None, **options):
        if servers is None:
            servers = ["127.0.0.1:11211"]
        options.setdefault("serde", _serde.pickle_serde)
        options.setdefault("allow_unicode_keys", True)
        options.setdefault("encoding", "utf8")
        client = folsom.HashClient(servers, **options)
        super().__init__(servers=client, default_timeout=default_timeout, key_prefix=key_prefix)

    def close(self):
        self._client.close()


try:
    from flask_caching.backends.memcache import MemcachedCache as _FlaskMemcachedCache
except Exception:  # Flask-Caching not installed: the cachelib backend alone
    _FlaskMemcachedCache = None

if _FlaskMemcachedCache is not None:

    class FlaskFolsomCache(_FlaskMemcachedCache):
        """Flask-Caching's CACHE_TYPE = "folsom.cachelib.FlaskFolsomCache": its
        MemcachedCache on folsom.HashClient."""

        def __init__(self, servers=None, default_timeout=300, key_prefix=None, **options):
            if servers is None:
                servers = ["127.0.0.1:11211"]
            options.setdefault("serde", _serde.pickle_serde)
            options.setdefault("allow_unicode_keys", True)
            options.setdefault("encoding", "utf8")
            client = folsom.HashClient(servers, **options)
            super().__init__(servers=client, default_timeout=default_timeout,
                             key_prefix=key_prefix)

        @classmethod
        def factory(cls, app, config, args, kwargs):
            args.insert(0, config.get("CACHE_MEMCACHED_SERVERS") or ["127.0.0.1:11211"])
            kwargs.update(dict(key_prefix=config.get("CACHE_KEY_PREFIX")))
            kwargs.update(config.get("CACHE_OPTIONS") or {})
            return cls(*args, **kwargs)
