"""dogpile.cache backend ``folsom`` (registered as an entry point of the dogpile.cache.backends
group; ``make_region().configure("folsom", arguments={"url": [...]})``).

It is dogpile's own ``dogpile.cache.pymemcache`` backend (PyMemcacheBackend), unchanged but for
the client it makes: folsom.HashClient with the same arguments (serde, default_noreply,
tls_context, socket_keepalive, the HashClient retry and dead-server settings, and pymemcache's
RetryingClient when enable_retry_client is set), plus ``folsom_options``, a dict of folsom's own
options (protocol, distribution, ...).
"""

from dogpile.cache.backends import memcached as _dogpile_memcached

import folsom

from . import serde as _serde


class _SerdeOnly:
    """What PyMemcacheBackend reads of pymemcache when pymemcache itself is not installed."""

    class serde:
        pickle_serde = _serde.pickle_serde


class FolsomBackend(_dogpile_memcached.PyMemcacheBackend):
    def __init__(self, arguments):
        self.folsom_options = dict(arguments.get("folsom_options") or {})
        super().__init__(arguments)

    def _imports(self):
        try:
            super()._imports()
        except ImportError:
            _dogpile_memcached.pymemcache = _SerdeOnly

    def _create_client(self):
        kwargs = {
            "serde": self.serde,
            "default_noreply": self.default_noreply,
            "tls_context": self.tls_context,
            "retry_attempts": self.hashclient_retry_attempts,
            "retry_timeout": self.hashclient_retry_timeout,
            "dead_timeout": self.dead_timeout,
            "allow_unicode_keys": True,
            "encoding": "utf8",
        }
        if self.socket_keepalive is not None:
            kwargs["socket_keepalive"] = self.socket_keepalive
        kwargs.update(self.folsom_options)
        client = folsom.HashClient(self.url, **kwargs)
        if self.enable_retry_client:
            from pymemcache.client.retrying import RetryingClient
            return RetryingClient(client, attempts=self.retry_attempts,
                                  retry_delay=self.retry_delay, retry_for=self.retry_for,
                                  do_not_retry_for=self.do_not_retry_for)
        return client
