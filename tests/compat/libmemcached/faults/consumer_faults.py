#!/usr/bin/env python3
"""Faults under the consumers: php-memcached and pylibmc, on Debian's libmemcached and on the
drop-in, each with a server that breaks between a successful set and the get that follows:

  killed    memcached killed (SIGKILL) before the get
  closed    a loopback listener that reads the get and closes the connection mid-request
  frozen    memcached stopped (SIGSTOP) before the get: the request is sent, no answer comes
  garbage   a loopback listener that answers the get with a line that is no memcached reply

The drop-in must give the libmemcached return code Debian's library gives, and return within
the configured timeout (connect and poll timeout TIMEOUT_MS, plus slack for a loaded machine).

    consumer_faults.py --lib-dir DIR [--only php,pylibmc]

Exit status 0 when every scenario agrees, 1 otherwise, 77 when no consumer is installed.
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT_MS = 500
SLACK_MS = 1500  # a loaded 2-core machine; the timeout itself is what is compared
NAMES = {0: "SUCCESS", 3: "CONNECTION_FAILURE", 5: "WRITE_FAILURE", 7: "UNKNOWN_READ_FAILURE",
         8: "PROTOCOL_ERROR", 16: "NOTFOUND", 26: "ERRNO", 31: "TIMEOUT", 35: "SERVER_MARKED_DEAD",
         47: "SERVER_TEMPORARILY_DISABLED", 45: "CONNECTION_SOCKET_CREATE_FAILURE"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Memcached:
    def __init__(self):
        self.port = free_port()
        args = ["memcached", "-l", "127.0.0.1", "-p", str(self.port), "-U", "0", "-t", "1"]
        if os.geteuid() == 0:
            args += ["-u", "root"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("memcached did not start")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(10)


class Listener:
    """A loopback listener that answers a set with STORED, then does `then` to the next request
    (close the connection, or answer garbage). Serves one connection at a time, for one test."""

    def __init__(self, then):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.then = then
        self.stopped = False
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        self.sock.settimeout(0.2)
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(10)
            buf = b""
            try:
                while not self.stopped:
                    data = conn.recv(4096)
                    if not data:
                        break
                    buf += data
                    if buf.startswith(b"set ") and buf.count(b"\r\n") >= 2:
                        conn.sendall(b"STORED\r\n")
                        buf = b""
                    elif buf.startswith(b"get ") and b"\r\n" in buf:
                        if self.then == "garbage":
                            conn.sendall(b"XYZZY this is no memcached reply\r\n")
                            time.sleep(0.2)  # let the client read it before the close
                        break
            except OSError:
                pass
            conn.close()

    def stop(self):
        self.stopped = True
        self.sock.close()


def wait_stopped(pid):
    """kill() returns before every thread of the process has stopped: wait until each has."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        states = []
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
        if all(s in ("T", "t") for s in states):
            return
        time.sleep(0.005)
    raise RuntimeError("memcached did not stop")


def one(consumer, lib_dir, scenario):
    """Runs one scenario on one library; returns (rc, milliseconds) or raises."""
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    if lib_dir:
        env["LD_LIBRARY_PATH"] = lib_dir
    server = Memcached() if scenario in ("killed", "frozen") else Listener(scenario)
    try:
        cmd = (["php", os.path.join(HERE, "client.php")] if consumer == "php" else
               ["/usr/bin/python3", os.path.join(HERE, "client_pylibmc.py")])
        p = subprocess.Popen(cmd + [str(server.port), str(TIMEOUT_MS)], env=env, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            ready = p.stdout.readline().strip()
            if ready != "READY":
                raise RuntimeError("the set before the fault failed: %r %s"
                                   % (ready, p.stderr.read()[-300:]))
            if scenario == "killed":
                server.proc.kill()
                server.proc.wait(10)
            elif scenario == "frozen":
                server.proc.send_signal(signal.SIGSTOP)
                wait_stopped(server.proc.pid)
            p.stdin.write("go\n")
            p.stdin.flush()
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise RuntimeError("no answer within 30 s")
        fields = out.split()
        if p.returncode != 0 or len(fields) != 2:
            raise RuntimeError("exit %d, output %r %s" % (p.returncode, out, err[-300:]))
        return fields[0], int(fields[1])
    finally:
        server.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--only", default="php,pylibmc")
    a = ap.parse_args()
    lib_dir = os.path.abspath(a.lib_dir)
    consumers = []
    for c in a.only.split(","):
        if c == "php" and shutil.which("php") and subprocess.run(
                ["php", "-r", "exit(class_exists('Memcached') ? 0 : 1);"]).returncode == 0:
            consumers.append(c)
        elif c == "pylibmc" and subprocess.run(["/usr/bin/python3", "-c", "import pylibmc"],
                                               capture_output=True).returncode == 0:
            consumers.append(c)
        else:
            print("consumer_faults: %s not installed: skipped" % c)
    if not consumers:
        sys.exit(77)
    bad = 0
    print("| consumer | fault | Debian's: code, ms | drop-in: code, ms | |")
    print("|---|---|---|---|---|")
    for c in consumers:
        for scenario in ("killed", "closed", "frozen", "garbage"):
            try:
                deb = one(c, None, scenario)
                dro = one(c, lib_dir, scenario)
            except RuntimeError as e:
                print("| %s | %s | error: %s | | FAIL |" % (c, scenario, e))
                bad += 1
                continue
            ok = deb[0] == dro[0] and dro[1] <= TIMEOUT_MS + SLACK_MS
            bad += not ok

            def fmt(r):
                try:
                    return "%s %s, %d" % (r[0], NAMES.get(int(r[0]), ""), r[1])
                except ValueError:
                    return "%s, %d" % r
            print("| %s | %s | %s | %s | %s |" % (c, scenario, fmt(deb), fmt(dro),
                                                 "ok" if ok else "FAIL"), flush=True)
    print("consumer_faults: %s (timeout %d ms)" % ("OK" if not bad else "%d FAILED" % bad,
                                                   TIMEOUT_MS))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
