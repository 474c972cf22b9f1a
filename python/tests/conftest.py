"""Fixtures: real memcached processes on free 127.0.0.1 ports, started per test (or module) and
stopped by PID, as tests/support/memcached_server.cpp does for the C++ suite; TLS certificates
and a SASL user database generated per fixture (tests/support/tls_files.cpp, sasl_database.cpp).
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

SANITIZED = os.environ.get("FOLSOM_PYTEST_SANITIZED") == "1"


def scaled(n, sanitized):
    """A request count, smaller under a sanitizer build (the suite's time stays bounded)."""
    return sanitized if SANITIZED else n


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.01)
    return False


class Memcached:
    """One memcached process on a free loopback port."""

    def __init__(self, extra=(), env=None):
        self.extra = list(extra)
        self.env = env
        self.proc = None
        self.port = None
        for _ in range(5):  # a free port can be taken between probing and binding: retry
            self.port = free_port()
            if self._spawn():
                return
            self.stop()
        raise RuntimeError("memcached did not start: %s" % (self.proc.stderr.read() if self.proc else ""))

    def _spawn(self):
        args = ["memcached", "-l", "127.0.0.1", "-p", str(self.port), "-U", "0", "-t", "2",
                "-m", "64"]
        if os.geteuid() == 0:
            args += ["-u", "root"]
        self.proc = subprocess.Popen(args + self.extra, env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        return wait_listening(self.port, self.proc)

    def restart(self):
        """Starts again on the same port (after kill()); the port may linger briefly."""
        self.kill()
        for _ in range(50):
            if self.proc and self.proc.stderr:
                self.proc.stderr.close()
            if self._spawn():
                return
            self.kill()
            time.sleep(0.05)
        raise RuntimeError("memcached did not restart on port %d" % self.port)

    @property
    def address(self):
        return "127.0.0.1:%d" % self.port

    def kill(self):
        """SIGKILL, at once (a server dying under load)."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        if self.proc and self.proc.stderr:
            self.proc.stderr.close()


class UnixMemcached:
    """One memcached process listening on a Unix-domain socket in a private directory."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="folsom-py-unix-")
        self.path = os.path.join(self.dir, "memcached.sock")
        args = ["memcached", "-s", self.path, "-a", "0700", "-t", "2", "-m", "64"]
        if os.geteuid() == 0:
            args += ["-u", "root"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(0.2)
                    s.connect(self.path)
                    return
            except OSError:
                time.sleep(0.01)
        err = self.proc.stderr.read() if self.proc.poll() is not None else b"(still starting)"
        self.stop()
        raise RuntimeError("memcached -s did not start: %r" % err)

    @property
    def address(self):
        return self.path

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self.proc.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def unix_memcached():
    m = UnixMemcached()
    yield m
    m.stop()


@pytest.fixture
def memcached():
    m = Memcached()
    yield m
    m.stop()


@pytest.fixture(scope="module")
def shared_memcached():
    m = Memcached()
    yield m
    m.stop()


@pytest.fixture
def memcached_factory():
    started = []

    def start(extra=(), env=None):
        m = Memcached(extra, env)
        started.append(m)
        return m

    yield start
    for m in started:
        m.stop()


def _run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def tls_files():
    """A CA, a server certificate for 127.0.0.1/localhost signed by it, and an unrelated CA."""
    d = tempfile.mkdtemp(prefix="folsom-py-tls-")
    p = lambda name: os.path.join(d, name)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _run(["openssl", "req", "-x509", *ec, "-keyout", p("ca.key"), "-out", p("ca.pem"), "-days", "2",
          "-subj", "/CN=folsom-py-test-ca"])
    _run(["openssl", "req", "-x509", *ec, "-keyout", p("other.key"), "-out", p("other.pem"),
          "-days", "2", "-subj", "/CN=someone-else"])
    _run(["openssl", "req", *ec, "-keyout", p("server.key"), "-out", p("server.csr"), "-subj",
          "/CN=localhost"])
    with open(p("san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    _run(["openssl", "x509", "-req", "-in", p("server.csr"), "-CA", p("ca.pem"), "-CAkey",
          p("ca.key"), "-CAcreateserial", "-out", p("server.pem"), "-days", "2", "-extfile",
          p("san.ext")])
    yield p
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def tls_memcached(tls_files):
    m = Memcached(["-Z", "-o", "ssl_chain_cert=%s,ssl_key=%s" % (tls_files("server.pem"),
                                                                   tls_files("server.key"))])
    yield m
    m.stop()


@pytest.fixture(scope="module")
def sasl_memcached():
    """memcached -S with one user (folsom / s3cret) in a private sasldb."""
    if shutil.which("saslpasswd2") is None:
        pytest.fail("saslpasswd2 missing: install sasl2-bin (scripts/deps)")
    d = tempfile.mkdtemp(prefix="folsom-py-sasl-")
    db = os.path.join(d, "sasldb")
    subprocess.run(["saslpasswd2", "-p", "-a", "memcached", "-c", "-f", db, "folsom"],
                   input=b"s3cret", check=True)
    with open(os.path.join(d, "memcached.conf"), "w") as f:
        f.write("mech_list: plain\nsasldb_path: %s\n" % db)
    env = dict(os.environ, SASL_CONF_PATH=d)
    m = Memcached(["-S"], env=env)
    yield m
    m.stop()
    shutil.rmtree(d, ignore_errors=True)


PROTOCOLS = ["meta", "binary", "ascii"]
