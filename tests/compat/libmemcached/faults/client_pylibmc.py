"""The pylibmc side of consumer_faults.py: stores a key on 127.0.0.1:PORT, prints READY, waits
for a line on stdin (the driver breaks the server meanwhile), then gets the key and prints
"<libmemcached return code> <milliseconds the get took>" (0 when the get succeeded; pylibmc
names the code in its exception's message: "error 31 from memcached_get(...)")."""
import re
import sys
import time

import pylibmc

port, timeout_ms = sys.argv[1], int(sys.argv[2])
mc = pylibmc.Client(["127.0.0.1:%s" % port], behaviors={
    "connect_timeout": timeout_ms, "_poll_timeout": timeout_ms, "retry_timeout": 0})
try:
    mc.set("fault:key", b"v")
    print("READY", flush=True)
except pylibmc.Error as e:
    print("NOTREADY %s" % e, flush=True)
sys.stdin.readline()
t0 = time.monotonic()
try:
    mc.get("fault:key")
    rc = 0
except pylibmc.Error as e:
    m = re.search(r"error (\d+) from", str(e))
    rc = int(m.group(1)) if m else "%s:%s" % (type(e).__name__, e)
print("%s %d" % (rc, (time.monotonic() - t0) * 1000), flush=True)
