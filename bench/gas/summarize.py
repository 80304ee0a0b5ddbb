#!/usr/bin/env python3
"""Markdown tables from the JSON lines written by bench/gas/run.sh.

Usage: bench/gas/summarize.py RESULTS_DIR
Cells are "median (min)" in microseconds unless stated otherwise.
"""
import json
import os
import sys


def load(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def find(rows, impl, op, nbytes, ranks=None):
    for r in rows:
        if r.get("impl") == impl and r.get("op") == op and r.get("bytes") == nbytes:
            if ranks is None or r.get("ranks") == ranks:
                return r
    return None


def cell(r, field="usec"):
    if r is None:
        return "-"
    if field == "mib":
        return "%.0f" % r["mib_s_median"]
    return "%.2f (%.2f)" % (r["usec_median"], r["usec_min"])


def table(header, lines):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in line) + " |" for line in lines]
    return "\n".join(out)


def am_tables(d):
    rows = load(os.path.join(d, "am.json"))
    sizes = sorted({r["bytes"] for r in rows if r["op"] == "pingpong_rtt_half"})
    lat, bw = [], []
    for n in sizes:
        lat.append([n, cell(find(rows, "mpi", "pingpong_rtt_half", n))] +
                   [cell(find(rows, impl, kind + "_rtt_half", n))
                    for impl in ("pario-local", "pario-mpi")
                    for kind in ("short", "medium", "long")])
        bw.append([n, cell(find(rows, "mpi", "send_flood", n), "mib")] +
                  [cell(find(rows, impl, kind + "_flood", n), "mib")
                   for impl in ("pario-local", "pario-mpi")
                   for kind in ("short", "medium", "long")])
    print("### Active messages: half round trip, µs, median (min)\n")
    print(table(["bytes", "MPI ping-pong", "local Short", "local Medium", "local Long",
                 "mpi-path Short", "mpi-path Medium", "mpi-path Long"], lat))
    print("\n### Active messages: one-way flood, MiB/s (median)\n")
    print(table(["bytes", "MPI send", "local Short", "local Medium", "local Long",
                 "mpi-path Short", "mpi-path Medium", "mpi-path Long"], bw))
    s_loc = find(rows, "pario-local", "short_rtt_half", 8)
    s_mpi = find(rows, "pario-mpi", "short_rtt_half", 8)
    pp = find(rows, "mpi", "pingpong_rtt_half", 8)
    if s_loc and s_mpi and pp:
        print("\nShort AM half round trip: node-local %.3f µs vs MPI ping-pong %.3f µs "
              "(ratio %.2f; by minima %.2f); MPI path %.3f µs: MPI-path / node-local = "
              "%.2f (by minima %.2f)."
              % (s_loc["usec_median"], pp["usec_median"],
                 s_loc["usec_median"] / pp["usec_median"], s_loc["usec_min"] / pp["usec_min"],
                 s_mpi["usec_median"], s_mpi["usec_median"] / s_loc["usec_median"],
                 s_mpi["usec_min"] / s_loc["usec_min"]))


def put_tables(d):
    rows = load(os.path.join(d, "put.json"))
    sizes = sorted({r["bytes"] for r in rows if r["op"] == "put"})
    lines = []
    for n in sizes:
        lines.append([n, cell(find(rows, "mpi", "put_flush", n)),
                      cell(find(rows, "mpi", "put_flush_wincreate", n)),
                      cell(find(rows, "pario-local", "put", n)),
                      cell(find(rows, "pario-mpi", "put", n)),
                      cell(find(rows, "memcpy", "memcpy", n)),
                      cell(find(rows, "mpi", "get_flush", n)),
                      cell(find(rows, "mpi", "get_flush_wincreate", n)),
                      cell(find(rows, "pario-local", "get", n)),
                      cell(find(rows, "pario-mpi", "get", n))])
    print("\n### Put / get latency, µs, median (min)\n")
    print(table(["bytes", "MPI_Put+flush (Win_allocate)", "MPI_Put+flush (Win_create)",
                 "pario put local", "pario put mpi-path", "memcpy",
                 "MPI_Get+flush (Win_allocate)", "MPI_Get+flush (Win_create)",
                 "pario get local", "pario get mpi-path"], lines))
    p8, m8 = find(rows, "pario-local", "put", 8), find(rows, "mpi", "put_flush", 8)
    if p8 and m8:
        print("\n8 B node-local put %.3f µs vs MPI_Put+flush %.3f µs: ratio %.2f."
              % (p8["usec_median"], m8["usec_median"], p8["usec_median"] / m8["usec_median"]))
    for n in sizes[-3:]:
        pb, mb = find(rows, "pario-local", "put", n), find(rows, "memcpy", "memcpy", n)
        if pb and mb:
            print("%d B node-local put / memcpy time: %.2f (medians), %.2f (minima)."
                  % (n, pb["usec_median"] / mb["usec_median"], pb["usec_min"] / mb["usec_min"]))


def bcast_tables(d):
    print("\n### Broadcast completion, µs, median (min)\n")
    algs = ["auto", "flat", "chain", "binary", "binomial", "scatter_allgather"]
    lines = []
    verdicts = []
    for path in ("local", "mpi"):
        for np_ in (2, 4, 8):
            rows = load(os.path.join(d, "bcast_%s_np%d.json" % (path, np_)))
            impl = "pario-local" if path == "local" else "pario-mpi"
            if not rows:
                continue
            impl = next((r["impl"] for r in rows if r["op"].startswith("bcast_auto")), impl)
            for n in sorted({r["bytes"] for r in rows if r["op"] == "bcast_mpi"}):
                vals = {a: find(rows, impl, "bcast_" + a, n) for a in algs}
                choice = next((r["choice"] for r in rows
                               if r["op"] == "auto_choice" and r["bytes"] == n), "?")
                best = min((a for a in algs[1:] if vals[a]),
                           key=lambda a: vals[a]["usec_median"])
                lines.append([path, np_, n, cell(find(rows, "mpi", "bcast_mpi", n))] +
                             [cell(vals[a]) for a in algs] + [choice, best])
                if vals["auto"] and vals[best] and vals.get(choice):
                    verdicts.append((path, np_, n, vals["auto"]["usec_median"] /
                                     vals[best]["usec_median"],
                                     vals[choice]["usec_median"] / vals[best]["usec_median"]))
    print(table(["path", "ranks", "bytes", "MPI_Bcast"] + algs + ["auto picks", "best"],
                lines))
    if verdicts:
        print("\nauto / best and (the algorithm auto picks, run by name) / best, "
              "medians: " + ", ".join("%s np%d %dB %.2f %.2f" % v for v in verdicts))


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    am_tables(d)
    put_tables(d)
    bcast_tables(d)


if __name__ == "__main__":
    main()
