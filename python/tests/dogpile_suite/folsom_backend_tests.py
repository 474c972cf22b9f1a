"""dogpile.cache's memcached backend tests re-targeted at the ``folsom`` backend (copied by
run_dogpile_suite.py next to dogpile's tests/cache/test_memcached_backend.py, as
tests/cache/test_folsom_backend.py).

Every test class of dogpile's file that runs against the ``dogpile.cache.pymemcache`` backend is
subclassed here unchanged but for ``backend = "folsom"``, the name a dogpile user configures
(resolved by dogpile's own loader through the ``dogpile.cache`` entry point). The mocked
PyMemcacheArgsTest, which checks what dogpile's backend passes to a mock pymemcache module, talks
to no client and is not re-targeted.
"""

from . import test_memcached_backend as dogpile_tests


def _retargeted():
    for name, cls in sorted(vars(dogpile_tests).items()):
        if isinstance(cls, type) and getattr(cls, "backend", None) == "dogpile.cache.pymemcache":
            new = name.replace("PyMemcache", "Folsom", 1)
            yield new, type(new, (cls,), {"backend": "folsom", "__module__": __name__})


globals().update(_retargeted())
