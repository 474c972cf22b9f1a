"""A hostile server cannot crash the interpreter: garbage, lies about sizes, endless lines,
replies cut short. Each request fails with a MemcacheError; the client stays usable."""

import asyncio
import gc
import os
import random
import socket
import threading

import pytest

import folsom
from conftest import PROTOCOLS

REPLIES = {
    "garbage": b"\x00\xff GARBAGE \x13\x37\r\n" * 4,
    "huge_value": b"VALUE k 0 99999999999\r\n",
    "over_limit": b"VALUE k 0 2000000\r\n" + b"x" * 100,
    "negative": b"VALUE k 0 -5\r\nabc\r\nEND\r\n",
    "endless_line": b"VALUE " + b"k" * 300000,
    "cut_short": b"VALUE k 0 10\r\nabc",
    "wrong_key": b"VALUE other 0 1\r\nx\r\nEND\r\n",
    "meta_garbage": b"VA 99999999999 f\r\n",
    "binary_garbage": bytes([0x81, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
                             0x7f, 0xff, 0xff, 0xff]) + b"\x00" * 12,
    "random": bytes(random.Random(7).getrandbits(8) for _ in range(4096)),
}


class HostileServer:
    """Answers every request on every connection with `reply`, then closes the connection."""

    def __init__(self, reply):
        self.reply = reply
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.05)
        self.port = self.sock.getsockname()[1]
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(1)
            try:
                if conn.recv(65536):
                    conn.sendall(self.reply)
            except OSError:
                pass
            conn.close()

    def close(self):
        self.stop = True
        self.thread.join(5)
        self.sock.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("name", sorted(REPLIES))
def test_hostile_replies(name, protocol):
    server = HostileServer(REPLIES[name])
    try:
        with folsom.Client("127.0.0.1:%d" % server.port, protocol=protocol, timeout=1,
                           connect_timeout=1, reconnect_initial_delay=0.01) as c:
            for _ in range(3):
                with pytest.raises(folsom.MemcacheError):
                    c.get("k")
                with pytest.raises(folsom.MemcacheError):
                    c.get_many(["k", "l"])
            gc.collect()
    finally:
        server.close()


async def test_hostile_async():
    server = HostileServer(REPLIES["random"])
    try:
        async with folsom.AsyncClient("127.0.0.1:%d" % server.port, timeout=1,
                                      connect_timeout=1) as c:
            results = await asyncio.wait_for(
                asyncio.gather(*(c.get("k%d" % i) for i in range(200)), return_exceptions=True), 30)
            assert all(isinstance(r, folsom.MemcacheError) for r in results)
    finally:
        server.close()
    assert os.getpid() > 0  # still here
