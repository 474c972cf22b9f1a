#!/usr/bin/env python3
"""Writes one fresh run of the benches into docs/performance.md and the README's summary table.

    write_report.py OUT_DIR

OUT_DIR holds what scripts/bench report captured: e2e.txt (folsom_e2e_bench), cluster.txt
(folsom_cluster_multiget_bench), decoder.txt (folsom_decoder_bench), python.txt
(python/bench/bench.py, when the Python package was built) and header.txt (commit, date, load).
The README gets one table: the cases a user compares clients by, folsom against libmemcached
and the raw socket, taken from e2e.txt's per-variant lines. python/README.md gets the same for
the Python clients, folsom against pylibmc and pymemcache, from python.txt's table of medians
(when the run has one). Everything captured goes, as the benches printed it, between the
markers of docs/performance.md.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

# (label, folsom variant, peer variants, floor variant, keys per operation)
SUMMARY = [
    ("sequential `get`", "get.seq.folsom", "get.seq.libmemcached", "get.seq.raw", 1),
    ("sequential `get`, `BlockingClient` caller-driven", "get.seq.blocking_caller",
     "get.seq.libmemcached", "get.seq.raw", 1),
    ("pipelined `get`, 1000 in flight", "get.pipe.folsom", "get.pipe.libmemcached", None, 1),
    ("pipelined `get_view` (zero-copy), 1000 in flight", "get.pipe.folsom_view",
     "get.pipe.libmemcached", None, 1),
    ("100-key multi-get, per key", "mget100.folsom", "mget100.libmemcached", "mget100.raw", 100),
    ("100-key `get_multi_view`, per key", "mget100.folsom_view", "mget100.libmemcached",
     "mget100.raw", 100),
    ("sequential `set`", "set.seq.folsom", "set.seq.libmemcached", None, 1),
    ("pipelined `set`, 1000 in flight", "set.pipe.folsom", "set.pipe.libmemcached_buffered",
     None, 1),
    ("quiet pipelined `set`, 1000 in flight", "set.pipe.folsom_quiet",
     "set.pipe.libmemcached_noreply", None, 1),
]


def variant_cpu(e2e_text):
    """Maps each variant id to its median client CPU in µs per operation.

    folsom_e2e_bench ends with a table of every variant: | id | what | CPU µs/op | ... |."""
    cpu = {}
    for line in e2e_text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) >= 3 and re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)+", cells[0]):
            try:
                cpu[cells[0]] = float(cells[2])
            except ValueError:
                pass
    return cpu


def summary_table(cpu):
    rows = ["| case | folsom | libmemcached | folsom ÷ libmemcached | raw socket | folsom ÷ raw |",
            "|---|---:|---:|---:|---:|---:|"]
    for label, ours, peer, floor, per in SUMMARY:
        if ours not in cpu:
            continue
        f = cpu[ours] / per
        cells = [label, "%.3f µs" % f]
        if peer in cpu:
            p = cpu[peer] / per
            cells += ["%.3f µs" % p, "**%.2f**" % (f / p)]
        else:
            cells += ["–", "–"]
        if floor and floor in cpu:
            r = cpu[floor] / per
            cells += ["%.3f µs" % r, "%.2f" % (f / r)]
        else:
            cells += ["–", "–"]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


# (label, bench.py's case, number format): µs of client CPU, the smaller the better.
PYTHON_CPU = [
    ("sequential `get`, µs CPU per get", "sequential get (us CPU/get)", "%.2f"),
    ("`get_many` of 100 keys, µs CPU per key", "get_many 100 keys (us CPU/key)", "%.3f"),
    ("sequential `set`, µs CPU per set", "sequential set (us CPU/set)", "%.2f"),
]
PYTHON_ASYNC = "asyncio 1,000 concurrent gets (gets per CPU second)"
FOLSOM_PROTOCOLS = ["folsom (meta)", "folsom (ascii)"]


def python_medians(python_text):
    """Maps (case, client) to its median, from bench.py's table | case | client | median | runs |."""
    medians = {}
    for line in python_text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 4 and cells[0] != "case":
            try:
                medians[(cells[0], cells[1])] = float(cells[2])
            except ValueError:
                pass
    return medians


def python_tables(medians):
    """The Python clients' table (client CPU; ratios of folsom's better protocol), then
    asyncio's (throughput per CPU second)."""
    cpu = ["| case | folsom (meta) | folsom (ascii) | pylibmc | pymemcache "
           "| folsom ÷ pylibmc | folsom ÷ pymemcache |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for label, case, fmt in PYTHON_CPU:
        ours = [medians[(case, p)] for p in FOLSOM_PROTOCOLS if (case, p) in medians]
        if not ours:
            continue
        cells = [label] + [fmt % medians[(case, p)] if (case, p) in medians else "–"
                           for p in FOLSOM_PROTOCOLS + ["pylibmc", "pymemcache"]]
        for peer in ["pylibmc", "pymemcache"]:
            cells.append("**%.2f**" % (min(ours) / medians[(case, peer)])
                         if (case, peer) in medians else "–")
        cpu.append("| " + " | ".join(cells) + " |")
    tables = ["\n".join(cpu)] if len(cpu) > 2 else []
    ours = medians.get((PYTHON_ASYNC, "folsom AsyncClient"))
    pool = medians.get((PYTHON_ASYNC, "pymemcache thread pool"))
    if ours and pool:
        tables.append("\n".join([
            "| asyncio, 1,000 concurrent gets | folsom `AsyncClient` | pymemcache, 16-thread pool "
            "| folsom ÷ pymemcache |",
            "|---|---:|---:|---:|",
            "| gets per CPU second | %.0f | %.0f | **%.2f** |" % (ours, pool, ours / pool)]))
    return "\n\n".join(tables)


def replace_between(path, name, body):
    text = path.read_text()
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    if begin not in text or end not in text:
        sys.exit("%s: markers %s ... %s not found" % (path, begin, end))
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(head + begin + "\n" + body.rstrip("\n") + "\n" + end + tail)


def main():
    out = pathlib.Path(sys.argv[1])
    read = lambda name: (out / name).read_text() if (out / name).exists() else ""
    header = read("header.txt").strip()
    cpu = variant_cpu(read("e2e.txt"))
    if not cpu:
        sys.exit("write_report.py: no table of variants in %s" % (out / "e2e.txt"))
    table = summary_table(cpu)
    replace_between(ROOT / "README.md", "bench-summary",
                    header + "\n\n" + table + "\n")
    python = python_tables(python_medians(read("python.txt")))
    if python:
        replace_between(ROOT / "python" / "README.md", "bench-python",
                        header + "\n\n" + python + "\n")
    sections = [header, "### Summary", table]
    for title, name in [("End to end, one server (`folsom_e2e_bench`)", "e2e.txt"),
                        ("Three servers (`folsom_cluster_multiget_bench`)", "cluster.txt"),
                        ("The codecs alone (`folsom_decoder_bench`)", "decoder.txt"),
                        ("Python (`python/bench/bench.py`)", "python.txt")]:
        text = read(name).strip()
        if text:
            sections += ["### " + title, "```\n" + text + "\n```"]
    replace_between(ROOT / "docs" / "performance.md", "bench-report", "\n\n".join(sections))


if __name__ == "__main__":
    main()
