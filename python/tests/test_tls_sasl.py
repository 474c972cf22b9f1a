"""TLS (memcached -Z, certificates generated per module) and SASL (memcached -S)."""

import pytest

import folsom
from conftest import PROTOCOLS


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_tls_verified(tls_memcached, tls_files, protocol):
    with folsom.Client(tls_memcached.address, protocol=protocol, tls=True,
                       tls_ca_file=tls_files("ca.pem"), tls_server_name="localhost") as c:
        assert c.set("tls", b"secret")
        assert c.get("tls") == b"secret"
        assert c.get_many(["tls"]) == {"tls": b"secret"}


async def test_tls_async(tls_memcached, tls_files):
    async with folsom.AsyncClient(tls_memcached.address, tls_ca_file=tls_files("ca.pem")) as c:
        assert await c.set("tls-a", b"1")
        assert await c.get("tls-a") == b"1"


def test_tls_wrong_ca_refused(tls_memcached, tls_files):
    with folsom.Client(tls_memcached.address, tls=True, tls_ca_file=tls_files("other.pem"),
                       connect_timeout=2, timeout=2) as c:
        with pytest.raises(folsom.MemcacheConnectionError):
            c.get("k")


def test_plaintext_to_tls_server_fails(tls_memcached):
    with folsom.Client(tls_memcached.address, connect_timeout=1, timeout=1) as c:
        with pytest.raises(folsom.MemcacheError):
            c.get("k")


def test_sasl_login(sasl_memcached):
    with folsom.Client(sasl_memcached.address, protocol="binary", username="folsom",
                       password="s3cret") as c:
        assert c.set("sasl", b"ok")
        assert c.get("sasl") == b"ok"
        assert c.incr("sasl-n", 1, initial=7) == 7


async def test_sasl_async(sasl_memcached):
    async with folsom.AsyncClient(sasl_memcached.address, protocol="binary",
                                  sasl_username="folsom", sasl_password="s3cret") as c:
        assert await c.set("sasl-a", b"1")
        assert await c.get("sasl-a") == b"1"


def test_sasl_wrong_password(sasl_memcached):
    with folsom.Client(sasl_memcached.address, protocol="binary", username="folsom",
                       password="wrong", connect_timeout=2) as c:
        with pytest.raises(folsom.MemcacheConnectionError) as e:
            c.get("k")
        assert isinstance(e.value, folsom.MemcacheAuthError) or e.value.errc == "not_connected"


def test_a_text_login_to_a_sasl_only_server_fails_without_sending_the_password(sasl_memcached):
    # Over meta, username/password mean memcached's text login (-Y). A server that asks for
    # SASL (-S: binary only) never asks for a text login, so the request fails and the
    # password is not sent.
    c = folsom.Client(sasl_memcached.address, protocol="meta", username="folsom",
                      password="s3cret", timeout=2)
    try:
        with pytest.raises(folsom.MemcacheError) as e:
            c.get("k")
        assert "s3cret" not in str(e.value)
    finally:
        c.close()
