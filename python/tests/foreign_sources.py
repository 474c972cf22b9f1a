"""What the runners of other projects' test suites share (django_suite, dogpile_suite): Debian
source tarballs fetched at run time into a cache directory outside the tree, and memcached
processes on free loopback ports started and stopped by PID.

Nothing of those projects is copied into this repository. A source tarball comes from the
machine's own Debian mirror: `apt-get source --download-only` through a private deb-src list
(the mirror URIs and suites of /etc/apt/sources.list(.d), security included), with apt's state
kept in the cache directory so the system's apt is not touched. A mirror may serve a package's
upstream tarball but not its .dsc (apt then reports an error after downloading the tarball):
the tarball is what the runners need, so they look for it whatever apt's exit status.
"""

import glob
import os
import re
import shutil
import socket
import subprocess
import tarfile
import time


def mirror_sources():
    """[(uri, [suites])] of the Debian `deb` entries in this machine's apt sources."""
    out = []
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        with open(path) as f:
            text = f.read()
        for block in re.split(r"\n\s*\n", text):
            fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", block, re.M))
            if "deb" in fields.get("Types", "").split():
                for uri in fields.get("URIs", "").split():
                    if "debian" in uri:
                        out.append((uri, fields.get("Suites", "").split()))
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                m = re.match(r"\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", line)
                if m and "debian" in m.group(1):
                    out.append((m.group(1), [m.group(2)]))
    return out


def installed_version(binary_package):
    """The Debian version of the source package an installed binary package was built from,
    or None."""
    if not shutil.which("dpkg-query"):
        return None
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", binary_package],
                       capture_output=True, text=True)
    version = r.stdout.strip() if r.returncode == 0 else ""
    # A binary-only rebuild (+b1) has no source package of its own.
    return re.sub(r"\+b\d+$", "", version) or None


def upstream_version(debian_version):
    """3:3.2.25-0+deb12u7 -> 3.2.25"""
    v = debian_version.split(":", 1)[-1]
    return v.rsplit("-", 1)[0] if "-" in v else v


def apt_orig_tarball(source_package, version, cache, log):
    """Debian's upstream tarball of `source_package` at `version` (a Debian version, or None for
    the newest), downloaded into `cache`; its path, or None with the reason logged."""
    upstream = upstream_version(version) if version else "*"
    pattern = os.path.join(cache, "%s_%s.orig.tar.*" % (source_package, upstream))
    found = [p for p in glob.glob(pattern) if not p.endswith(".asc")]
    if found:
        return found[0]
    sources = mirror_sources()
    if not sources or not shutil.which("apt-get"):
        log("no Debian mirror in the apt sources (or no apt-get)")
        return None
    state = os.path.join(cache, "apt")
    for d in ("lists/partial", "archives/partial", "etc"):
        os.makedirs(os.path.join(state, d), exist_ok=True)
    with open(os.path.join(state, "etc", "src.sources"), "w") as f:
        for uri, suites in sources:
            f.write("Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\n"
                    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
                    % (uri, " ".join(suites)))
    open(os.path.join(state, "etc", "empty.list"), "w").close()
    opts = ["-o", "Dir::Etc::SourceList=" + os.path.join(state, "etc", "empty.list"),
            "-o", "Dir::Etc::SourceParts=" + os.path.join(state, "etc"),
            "-o", "Dir::State::Lists=" + os.path.join(state, "lists"),
            "-o", "Dir::Cache=" + state, "-o", "Debug::NoLocking=1",
            "-o", "APT::Sandbox::User=root"]
    r = subprocess.run(["apt-get", *opts, "-qq", "update"], capture_output=True, text=True)
    if r.returncode != 0:
        log("apt-get update of a private deb-src list failed: %s" % r.stderr.strip())
        return None
    want = "%s=%s" % (source_package, version) if version else source_package
    r = subprocess.run(["apt-get", *opts, "-qq", "source", "--download-only", want], cwd=cache,
                       capture_output=True, text=True)
    found = [p for p in glob.glob(pattern) if not p.endswith(".asc")]
    if not found:
        lines = r.stderr.strip().splitlines() or ["(no output)"]
        why = next((l for l in lines if "orig.tar" in l), lines[-1])
        log("apt-get source --download-only %s brought no upstream tarball: %s" % (want, why))
        return None
    return found[0]


def unpack(tarball, dest, members_under):
    """Unpacks the members of `tarball` whose path (after the top directory) starts with one of
    `members_under` into `dest`; returns the top directory's path."""
    with tarfile.open(tarball) as t:
        names = t.getnames()
        top = names[0].split("/", 1)[0]
        wanted = [m for m in t.getmembers()
                  if "/" in m.name and m.name.split("/", 1)[1].startswith(tuple(members_under))]
        for m in wanted:
            if m.issym() or m.islnk() or m.name.startswith("/") or ".." in m.name.split("/"):
                continue
            t.extract(m, dest)
    return os.path.join(dest, top)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Memcached:
    """One memcached process on a free 127.0.0.1 port, stopped by its PID."""

    def __init__(self, extra=()):
        for _ in range(5):
            self.port = free_port()
            args = ["memcached", "-l", "127.0.0.1", "-p", str(self.port), "-U", "0", "-t", "2",
                    "-m", "64"]
            if os.geteuid() == 0:
                args += ["-u", "root"]
            self.proc = subprocess.Popen(args + list(extra), stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                    return
                except OSError:
                    time.sleep(0.01)
            self.stop()
        raise RuntimeError("memcached did not start")

    @property
    def address(self):
        return "127.0.0.1:%d" % self.port

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
