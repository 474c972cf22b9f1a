"""What python/tools/check-pip-install asks of an installed folsom package, run by the venv's
interpreter from outside the sources:

    VENV/bin/python check_installed_package.py VENV

- the package is imported from the venv (not from the sources, not from another site-packages);
- its extension was compiled against this interpreter's own Python headers (a pyenv Python's
  build must not have used Debian's /usr/include/python3.x);
- the extension needs no shared library but OpenSSL's and the C/C++ runtimes' (ldd);
- it stores and reads a value on a memcached started here on a free loopback port, and
  dogpile.cache's "folsom" backend (the package's entry point) finds it, when dogpile.cache is
  importable.
"""

import os
import platform
import socket
import subprocess
import sys
import time

import folsom

venv = os.path.realpath(sys.argv[1])
where = os.path.realpath(folsom.__file__)
assert where.startswith(venv + os.sep), "folsom imported from %s, not from the venv %s" % (where, venv)

headers = folsom._native.PYTHON_HEADERS_VERSION
assert headers == platform.python_version(), (
    "the extension was compiled against Python %s's headers, but runs in Python %s (%s)"
    % (headers, platform.python_version(), sys.executable))

# What the extension needs at run time: OpenSSL's libraries and the C/C++ runtimes only.
native = os.path.realpath(folsom._native.__file__)
ldd = subprocess.run(["ldd", native], capture_output=True, text=True, check=True).stdout
needed = sorted(line.split()[0] for line in ldd.splitlines() if line.strip())
allowed = ("linux-vdso.so", "libssl.so.", "libcrypto.so.", "libstdc++.so.", "libm.so.",
           "libgcc_s.so.", "libc.so.", "/lib64/ld-linux", "ld-linux")
extra = [n for n in needed if not n.startswith(allowed)]
assert not extra, "%s needs shared libraries beyond OpenSSL and the runtimes: %s" % (native, extra)

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
args = ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-t", "1", "-m", "16"]
if os.geteuid() == 0:
    args += ["-u", "root"]
server = subprocess.Popen(args)
try:
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                sys.exit("memcached did not start on port %d" % port)
            time.sleep(0.02)
    c = folsom.Client("127.0.0.1:%d" % port, protocol="meta")
    assert c.set("pip:k", b"installed") is True
    assert c.get("pip:k") == b"installed", c.get("pip:k")
    assert c.get("pip:missing") is None
    c.close()
    # The installed package registers dogpile.cache's "folsom" backend (pyproject.toml's entry
    # point): a region configured by that name alone finds it.
    try:
        import dogpile.cache
    except ImportError:
        dogpile = None
    if dogpile is not None:
        region = dogpile.cache.make_region().configure(
            "folsom", arguments={"url": ["127.0.0.1:%d" % port]})
        region.set("pip:dogpile", {"v": 1})
        assert region.get("pip:dogpile") == {"v": 1}
    print("folsom %s installed in %s (Python %s, %s): set and get against memcached on port %d; "
          "the extension needs %s" % (folsom.__version__, venv, platform.python_version(),
                                      sys.base_prefix, port, ", ".join(needed)))
finally:
    server.kill()
    server.wait()
