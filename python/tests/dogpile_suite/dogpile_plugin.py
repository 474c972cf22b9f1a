"""pytest plugin loaded into the runs of dogpile.cache's tests (run_dogpile_suite.py).

With FOLSOM_DOGPILE_PYMEMCACHE_CLIENT=1, pymemcache's HashClient is folsom.HashClient, so that
dogpile's own ``dogpile.cache.pymemcache`` backend, unchanged, makes folsom's client (the
migration where a dogpile user swaps the client under the existing backend).
"""

import os

if os.environ.get("FOLSOM_DOGPILE_PYMEMCACHE_CLIENT") == "1":
    import pymemcache.client.hash

    import folsom

    pymemcache.client.hash.HashClient = folsom.HashClient
