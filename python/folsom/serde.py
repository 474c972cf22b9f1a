"""pymemcache's pickle serde, wire-compatible (the same flags as pymemcache and
python-memcached), for the framework backends when pymemcache is not installed: a cache filled
through pymemcache's PickleSerde reads the same through folsom's, and back."""

import pickle

FLAG_BYTES = 0
FLAG_PICKLE = 1 << 0
FLAG_INTEGER = 1 << 1
FLAG_LONG = 1 << 2
FLAG_COMPRESSED = 1 << 3  # unused, as in pymemcache
FLAG_TEXT = 1 << 4

DEFAULT_PICKLE_VERSION = pickle.HIGHEST_PROTOCOL


class PickleSerde:
    """bytes as they are, str as UTF-8, int as its decimal text, anything else pickled."""

    def __init__(self, pickle_version=DEFAULT_PICKLE_VERSION):
        self._version = pickle_version

    def serialize(self, key, value):
        t = type(value)
        if t is bytes:
            return value, FLAG_BYTES
        if t is str:
            return value.encode("utf8"), FLAG_TEXT
        if t is int:
            return b"%d" % value, FLAG_INTEGER
        return pickle.dumps(value, self._version), FLAG_PICKLE

    def deserialize(self, key, value, flags):
        if flags == 0:
            return value
        if flags & FLAG_TEXT:
            return value.decode("utf8")
        if flags & (FLAG_INTEGER | FLAG_LONG):
            return int(value)
        if flags & FLAG_PICKLE:
            try:
                return pickle.loads(value)
            except Exception:  # as pymemcache: an unreadable value is a miss
                return None
        return value


pickle_serde = PickleSerde()
