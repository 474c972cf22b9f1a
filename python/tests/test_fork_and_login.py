"""A client made before os.fork() in a pre-forking server (gunicorn --preload's shape), and
memcached's text-protocol login (memcached -Y) through username=/password=."""

import os
import tempfile
import time

import pytest

import folsom

WORKERS = 4
KEYS = 1000


def _worker(client, n):
    """A worker's requests through the client its master made; 0 when every value was right."""
    wrong = 0
    for i in range(KEYS):
        key = "w%d:%d" % (n, i)
        value = ("value of %s" % key).encode()
        if not client.set(key, value):
            wrong += 1
        if client.get(key) != value:
            wrong += 1
    if client.get("master") != b"preloaded":
        wrong += 1
    return wrong


@pytest.mark.parametrize("io_thread", [False, True])
def test_prefork_workers_each_get_their_own_replies(memcached, io_thread):
    client = folsom.Client(memcached.address, io_thread=io_thread)  # the master's (--preload)
    assert client.set("master", b"preloaded")
    pids = []
    for n in range(WORKERS):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = 0 if _worker(client, n) == 0 else 1
            finally:
                os._exit(code)
        pids.append(pid)
    # The master keeps using its client meanwhile.
    for i in range(KEYS):
        assert client.set("m:%d" % i, b"x%d" % i)
        assert client.get("m:%d" % i) == b"x%d" % i
    deadline = time.monotonic() + 120
    for pid in pids:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                assert os.waitstatus_to_exitcode(status) == 0
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                pytest.fail("worker %d did not finish" % pid)
            time.sleep(0.01)
    assert client.get("w%d:%d" % (WORKERS - 1, KEYS - 1)) == b"value of w3:999"
    client.close()


@pytest.fixture
def auth_memcached(memcached_factory):
    fd, path = tempfile.mkstemp(prefix="folsom-py-auth-")
    with os.fdopen(fd, "w") as f:
        f.write("app:s3cret\n")
    os.chmod(path, 0o644)
    yield memcached_factory(["-Y", path])
    os.unlink(path)


@pytest.mark.parametrize("protocol", ["ascii", "meta"])
def test_text_login(auth_memcached, protocol):
    with folsom.Client(auth_memcached.address, protocol=protocol, username="app",
                       password="s3cret") as c:
        assert c.set("k", b"v")
        assert c.get("k") == b"v"
    with folsom.Client(auth_memcached.address, protocol=protocol, username="app",
                       password="wrong-one") as c:
        with pytest.raises(folsom.MemcacheError) as e:
            c.get("k")
        assert "wrong-one" not in str(e.value)
