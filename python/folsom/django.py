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

Values are stored as pymemcache's pickle serde stores them, so PyMemcacheCache and FolsomCache
read each other's entries.
"""

import re

from django.core.cache.backends.base import DEFAULT_TIMEOUT, default_key_func
from django.core.cache.backends.memcached import BaseMemcachedCache

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


class FolsomCache(BaseMemcachedCache):
    """A Django cache on folsom's HashClient (see the module's documentation)."""

    def __init__(self, server, params):
        super().__init__(server, params, library=folsom, value_not_found_exception=KeyError)
        self._class = folsom.HashClient
        options = dict(self._options)
        self._disconnect_on_close = bool(options.pop("disconnect_on_close", False))
        self._options = {
            "allow_unicode_keys": True,
            "default_noreply": False,
            "encoding": "utf8",
            "serde": _default_serde(),
            **options,
        }

    @property
    def client_servers(self):
        return [s[5:] if s.startswith("unix:") else s for s in self._servers]

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
