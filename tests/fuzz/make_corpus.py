#!/usr/bin/env python3
"""Writes the seed corpora of the decoder fuzz targets: valid server replies of every kind.

    tests/fuzz/make_corpus.py            # (re)writes tests/fuzz/corpus/<target>/seed-*

Each file is the 4-byte header decoder_harness.hpp reads (limits selector, read mode, seed of
the random cuts) followed by a byte stream. Every stream is written with the default limits in
one read, byte by byte, and in random reads under small limits, so the fuzzer starts from the
resumption and limit paths too. Regression inputs (regress-*) in the same directories are kept.
The encoder targets take FuzzedDataProvider input; their corpora are minimised fuzzer output
(see tests/fuzz/README.md).
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- text protocol ------------------------------------------------------------------------
ASCII = {
    "hit": b"VALUE foo 0 3\r\nbar\r\nEND\r\n",
    "hit_cas": b"VALUE foo 4294967295 5 18446744073709551615\r\nhello\r\nEND\r\n",
    "multi_hit": b"VALUE a 1 1\r\nx\r\nVALUE bb 2 2\r\nyy\r\nVALUE ccc 3 0\r\n\r\nEND\r\n",
    "binary_value": b"VALUE k 0 8\r\n\r\nEND\r\n\x00\xff\r\nEND\r\n",
    "miss": b"END\r\n",
    "stored": b"STORED\r\nNOT_STORED\r\nEXISTS\r\nNOT_FOUND\r\n",
    "deleted_touched_ok": b"DELETED\r\nTOUCHED\r\nOK\r\n",
    "number": b"0\r\n42\r\n18446744073709551615\r\n",
    "stats": b"STAT pid 1234\r\nSTAT version 1.6.18\r\nSTAT bare\r\n"
             b"STAT list a b c\r\nEND\r\n",
    "version": b"VERSION 1.6.18\r\n",
    "errors": b"ERROR\r\nERROR unknown command\r\nCLIENT_ERROR bad data chunk\r\n"
              b"SERVER_ERROR object too large for cache\r\n"
              b"SERVER_ERROR out of memory storing object\r\nSERVER_ERROR busy\r\n",
    "pipeline": b"STORED\r\nVALUE key 7 4 99\r\ndata\r\nEND\r\nDELETED\r\n1\r\nEND\r\n",
    "long_key": b"VALUE " + b"k" * 250 + b" 0 1\r\nv\r\nEND\r\n",
    # malformed on purpose: the fuzzer should start next to every error path too
    "bad_terminator": b"VALUE k 0 1\r\nvX\r\n",
    "bare_newline": b"STORED\n",
    "overflow": b"VALUE k 4294967296 1\r\nv\r\n",
    "garbage": b"HTTP/1.1 400 Bad Request\r\n",
}

# ---- binary protocol ----------------------------------------------------------------------
def packet(opcode, status=0, key=b"", extras=b"", value=b"", opaque=0, cas=0):
    body = extras + key + value
    return struct.pack(">BBHBBHIIQ", 0x81, opcode, len(key), len(extras), 0, status,
                       len(body), opaque, cas) + body

GET, SET, DELETE, INCR, DECR, NOOP, VERSION, GETK, GETKQ, STAT, GAT, SASL_LIST = (
    0x00, 0x01, 0x04, 0x05, 0x06, 0x0a, 0x0b, 0x0c, 0x0d, 0x10, 0x1d, 0x20)
BINARY = {
    "get_hit": packet(GET, extras=b"\x00\x00\x00\x07", value=b"bar", opaque=1, cas=5),
    "get_miss": packet(GET, status=1, value=b"Not found", opaque=2),
    "getk_hit": packet(GETK, extras=b"\xde\xad\xbe\xef", key=b"foo", value=b"v", cas=9),
    "quiet_pipeline": packet(GETKQ, extras=b"\0\0\0\0", key=b"a", value=b"1", opaque=1)
                      + packet(GETKQ, extras=b"\0\0\0\0", key=b"b", value=b"", opaque=2)
                      + packet(NOOP, opaque=3),
    "set_ok": packet(SET, cas=123, opaque=7),
    "set_exists": packet(SET, status=2, value=b"Data exists for key."),
    "too_large": packet(SET, status=3, value=b"Too large."),
    "delete": packet(DELETE) + packet(DELETE, status=1, value=b"Not found"),
    "incr": packet(INCR, value=struct.pack(">Q", 43), cas=3),
    "decr_non_numeric": packet(DECR, status=6, value=b"Non-numeric server-side value"),
    "noop_version": packet(NOOP) + packet(VERSION, value=b"1.6.18"),
    "stats": packet(STAT, key=b"pid", value=b"1234") + packet(STAT, key=b"uptime", value=b"7")
             + packet(STAT),
    "gat_hit": packet(GAT, extras=b"\0\0\0\1", value=b"x" * 32),
    "sasl": packet(SASL_LIST, value=b"PLAIN"),
    "unknown_status": packet(GET, status=0x99, value=b"?"),
    "unknown_command": packet(0x7f, status=0x81, value=b"Unknown command"),
    "bad_magic": b"ERROR\r\n",
    "bad_extras": packet(GET, extras=b"\0\0", value=b"v"),
}

# ---- meta protocol ------------------------------------------------------------------------
META = {
    "va": b"VA 3 f0 c1\r\nbar\r\n",
    "va_all_flags": b"VA 2 b kZm9v O123 c18446744073709551615 f4294967295 t-1 s2 h1 l9 W X Z\r\n"
                    b"hi\r\n",
    "va_empty": b"VA 0\r\n\r\n",
    "va_binary": b"VA 6 Oq\r\n\r\nEN\r\n\r\n",
    "hd": b"HD\r\nHD c7 kfoo O1\r\nHD t30 f0 s3\r\n",
    "miss": b"EN\r\nEN O5 kbar\r\n",
    "statuses": b"NF\r\nNS\r\nEX c99\r\nNF O1 kx\r\n",
    "quiet_pipeline": b"VA 1 O1 kx\r\n1\r\nVA 1 O2 ky\r\n2\r\nMN\r\n",
    "me": b"ME foo exp=-1 la=3 cas=2 fetch=no cls=1 size=63\r\n",
    "errors": b"ERROR\r\nCLIENT_ERROR bad command line format\r\nSERVER_ERROR out of memory\r\n",
    "unknown_flag": b"HD Qnew x1\r\n",
    "ttl_negative": b"HD t-9223372036854775808\r\n",
    "long_key": b"HD k" + b"a" * 250 + b"\r\n",
    "bad_flag": b"HD cX\r\n",
    "bad_terminator": b"VA 1\r\nxy\r\n",
    "garbage": b"VALUE k 0 1\r\nv\r\n",
}

# (name suffix, header): defaults in one read; defaults byte by byte; random reads under small
# limits (line 64, value 16); fixed 7-byte reads under line 32 / value 4.
HEADERS = [
    ("whole", bytes([0x00, 0x00, 0x00, 0x00])),
    ("bytewise", bytes([0x00, 0x02, 0x00, 0x00])),
    ("small_random", bytes([0x98, 0x3e, 0x5a, 0xa5])),
    ("tiny_chunks", bytes([0x56, 0x19, 0x00, 0x00])),
]


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def main():
    for proto, streams in (("ascii", ASCII), ("binary", BINARY), ("meta", META)):
        for target in (proto + "_decoder", proto + "_split"):
            d = os.path.join(HERE, "corpus", target)
            if os.path.isdir(d):  # regenerate the seeds, keep regression inputs
                for f in os.listdir(d):
                    if f.startswith("seed-"):
                        os.remove(os.path.join(d, f))
            for name, stream in streams.items():
                for suffix, header in HEADERS:
                    write(target, f"{name}-{suffix}", header + stream)
            # Everything at once: a long pipeline crossing every reply kind.
            everything = b"".join(streams.values())
            write(target, "all-whole", HEADERS[0][1] + everything)
            write(target, "all-random", bytes([0x00, 0x3e, 0x11, 0x22]) + everything)


if __name__ == "__main__":
    main()
