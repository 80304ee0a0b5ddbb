#!/usr/bin/python3
"""Runs a known program on the drop-in with PARIO_TRACE set and checks the
trace's call and byte counts at both layers against what the program does.

    trace_counts.py --mpiexec M --mpi openmpi|mpich --preload P --np N
                    --workdir W --case coll3d|ior|hdf5 --program PATH

coll3d: the 3-D array (16^3 doubles) written and read independently, with
data sieving (4 MiB and 64 KiB buffers) and collectively. The expected counts
come from the array's block distribution: every contiguous block of a rank is
one pwrite/pread without sieving, one window per rank with it, and one
request per aggregator domain (the array split evenly, 4 KiB aligned) when
collective.
ior: IOR's segmented and strided patterns, 16 transfers of 4 KiB per rank,
independent (one request per transfer at both layers) and collective.
hdf5: the parallel HDF5 client of tests/clients: whatever HDF5 asks, each
logical byte reaches the file once (no sieving), the file's size is the end
of the highest physical write, and the dataset's bytes are all written.
"""
import argparse
import os
import sys

from traced import Failure, add_launch_arguments, run_in_fresh_workdir, run_traced

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from pario_trace import FOLDED, unfold_events  # noqa: E402

N = 16  # coll3d edge: 16^3 doubles, 32 KiB
IOR_XFER = 4096
IOR_PER_RANK = 16 * IOR_XFER


def check(what, got, want):
    if got != want:
        raise Failure(f"{what}: trace says {got}, expected {want}")
    print(f"ok  {what} = {got}")


def dims(p):
    """MPI_Dims_create(p, 3) for the rank counts the tests use."""
    return {1: (1, 1, 1), 2: (2, 1, 1), 3: (3, 1, 1), 4: (2, 2, 1)}[p]


def rank_blocks(p, r):
    """File blocks (offset, length) of rank r's part of the N^3 array."""
    ps = dims(p)
    coords = (r // (ps[1] * ps[2]), (r // ps[2]) % ps[1], r % ps[2])
    lo = [c * (N // q) for c, q in zip(coords, ps)]
    ls = [N // q for q in ps]
    runs = []
    for x in range(lo[0], lo[0] + ls[0]):
        for y in range(lo[1], lo[1] + ls[1]):
            off = ((x * N + y) * N + lo[2]) * 8
            if runs and runs[-1][0] + runs[-1][1] == off:
                runs[-1][1] += ls[2] * 8
            else:
                runs.append([off, ls[2] * 8])
    return runs


def files_of(doc, suffix):
    return [f for f in doc["files"] if f["path"].endswith(suffix)]


def routes(f):
    return {k: int(v) for k, v in (x.split(":") for x in f["routes"].split(","))}


def phys(f, op, rank=None):
    s = (f["total"] if rank is None else f["ranks"][rank])["physical"][op]
    return s["calls"], s["bytes"]


def check_logical(name, f, direction, calls, total, coll):
    lg = f["total"]["logical"][direction]
    check(f"{name} logical {direction} calls", lg["calls"], calls)
    check(f"{name} logical {direction} bytes", lg["bytes"], total)
    check(f"{name} {'collective' if coll else 'independent'} {direction} calls",
          f["total"]["kinds"][direction]["coll" if coll else "indep"], calls)


def coll3d_variant(args, variant):
    p, total = args.np, N ** 3 * 8
    doc = run_traced(args, [args.program, "--dir", args.workdir, "--size", str(N), "--rep",
                            "1", "--modes", "cached", "--variants", variant],
                     os.path.join(args.workdir, f"{variant}.json"))
    wfile, rfile = files_of(doc, f"coll3d.{variant}.dat")
    coll = variant == "coll"
    check_logical(variant, wfile, "write", p, total, coll)
    check_logical(variant, rfile, "read", p, total, coll)
    blocks = [rank_blocks(p, r) for r in range(p)]
    sieving = variant.startswith("sieve")
    for r in range(p):
        nb = len(blocks[r])
        span = blocks[r][-1][0] + blocks[r][-1][1] - blocks[r][0][0]
        if variant == "indep" or (sieving and nb == 1):
            check(f"{variant} rank {r} pwrite", phys(wfile, "pwrite", r), (nb, total // p))
            check(f"{variant} rank {r} pread", phys(rfile, "pread", r), (nb, total // p))
        elif sieving:  # one window per rank: the span, locked, written once
            check(f"{variant} rank {r} pwrite", phys(wfile, "pwrite", r), (1, span))
            check(f"{variant} rank {r} lock", phys(wfile, "lock", r), (1, span))
            check(f"{variant} rank {r} pread", phys(rfile, "pread", r), (1, span))
            # what the patched window keeps: the whole span in one read, or
            # each gap alone when that is cheaper; never more
            calls, got = phys(wfile, "pread", r)
            if got > span or calls > max(1, nb - 1):
                raise Failure(f"{variant} rank {r}: the sieving write read {got} bytes in "
                              f"{calls} calls for a {span}-byte window of {nb} blocks")
    if sieving and any(len(b) > 1 for b in blocks):
        sv = wfile["total"]["sieve"]["write"]
        check(f"{variant} sieved write windows", sv["windows"], p)
        check(f"{variant} sieved write data", sv["data"], total)
        check(f"{variant} sieved read windows", rfile["total"]["sieve"]["read"]["windows"], p)
    if coll:
        check_coll3d_collective(wfile, rfile, blocks, total)


def check_coll3d_collective(wfile, rfile, blocks, total):
    p = len(blocks)
    route = "independent" if p == 1 else "twophase"
    check("coll write route", routes(wfile)[route], 1)
    check("coll read route", routes(rfile)[route], 1)
    if p == 1:
        check("coll pwrite", phys(wfile, "pwrite"), (len(blocks[0]), total))
        return
    unit = wfile["stripe_unit"]  # domains align to the stripe unit (the block size here)
    domain = -(-total // p // unit) * unit  # default cb_nodes: every rank here (<= 4)
    check("coll pwrite (one per domain)", phys(wfile, "pwrite"), (p, total))
    check("coll pread (one per domain)", phys(rfile, "pread"), (p, total))
    check("coll domains", wfile["total"]["twophase"]["domains"], p)
    check("coll largest domain", wfile["total"]["twophase"]["domain_max"], domain)
    traded = sum(n for r in range(p) for off, n in blocks[r] if off // domain != r)
    check("coll bytes exchanged (write)", wfile["total"]["twophase"]["exchange_bytes"], traded)
    check("coll bytes exchanged (read)", rfile["total"]["twophase"]["exchange_bytes"], traded)
    for f in (wfile, rfile):
        check("coll requests aligned to the stripe unit",
              f["total"]["physical"]["pwrite" if f is wfile else "pread"]["aligned_unit"], p)


def ior_variant(args, variant):
    p, n = args.np, IOR_PER_RANK // IOR_XFER
    doc = run_traced(args, [args.program, "--dir", args.workdir, "--size", str(IOR_PER_RANK),
                            "--rep", "1", "--modes", "cached", "--variants", variant],
                     os.path.join(args.workdir, f"{variant}.json"))
    wfile, rfile = files_of(doc, ".dat")[:2]
    coll = variant.endswith("coll")
    check_logical(variant, wfile, "write", n * p, n * p * IOR_XFER, coll)
    check_logical(variant, rfile, "read", n * p, n * p * IOR_XFER, coll)
    check(f"{variant} logical writes of 4 KiB", wfile["total"]["logical"]["write"]["hist"][13],
          n * p)
    check(f"{variant} logical write extent", (wfile["total"]["logical"]["write"]["first"],
                                               wfile["total"]["logical"]["write"]["end"]),
          (0, n * p * IOR_XFER))
    if not coll or p == 1:
        for r in range(p):
            check(f"{variant} rank {r} pwrite", phys(wfile, "pwrite", r), (n, n * IOR_XFER))
            check(f"{variant} rank {r} pread", phys(rfile, "pread", r), (n, n * IOR_XFER))
        for f, op in ((wfile, 1), (rfile, 0)):
            check_folded_events(variant, f, op, p, n)
        return
    # collective on one node: kept writes merge the ranks' transfers into
    # longer runs (fewer requests, every byte once); reads are each rank's own
    check(f"{variant} write route kept", routes(wfile)["kept"], n)
    calls, nbytes = phys(wfile, "pwrite")
    check(f"{variant} physical write bytes", nbytes, n * p * IOR_XFER)
    if not 1 <= calls <= n * p:
        raise Failure(f"{variant}: {calls} physical writes for {n * p} transfers")
    print(f"ok  {variant}: {n * p} transfers reached the file in {calls} writes")
    check(f"{variant} read route own", routes(rfile)["own_read"], n)
    for r in range(p):
        check(f"{variant} rank {r} pread", phys(rfile, "pread", r), (n, n * IOR_XFER))


def check_folded_events(variant, f, op, p, n):
    """Each independent 4 KiB call made one request at its own offset and of its
    own bytes: the log holds one event per call carrying both layers, and the
    reader gives back both, at the same places."""
    raw = f["events"]
    for r in range(p):
        mine = [e for e in raw if e[0] == r]
        folded = [e for e in mine if e[7] & FOLDED and len(e) == 11]
        check(f"{variant} rank {r} events in the log ({'write' if op else 'read'})",
              (len(mine), len(folded)), (n, n))
        if f["ranks"][r]["events"] != n:
            raise Failure(f"{variant} rank {r}: record counts {f['ranks'][r]['events']} events")
    events = unfold_events(raw)
    for r in range(p):
        calls = sorted((e[5], e[6]) for e in events if e[0] == r and e[1] == 0 and e[2] == op)
        reqs = sorted((e[5], e[6]) for e in events if e[0] == r and e[1] == 1 and e[2] == op)
        check(f"{variant} rank {r} unfolded requests = calls", reqs, calls)
    slack = 2e-6  # times are printed to the nanosecond from float durations
    for e in raw:
        if not e[3] - slack <= e[9] and e[9] + e[10] <= e[3] + e[4] + slack:
            raise Failure(f"{variant}: a request outside the time of its call: {e}")


def hdf5_case(args):
    out = os.path.join(args.workdir, "h5")
    os.makedirs(out, exist_ok=True)
    doc = run_traced(args, [args.program, out], os.path.join(args.workdir, "hdf5.json"))
    files = [f for f in doc["files"] if f["total"]["logical"]["write"]["calls"] > 0]
    if not files:
        raise Failure("the HDF5 program's writes are not in the trace")
    for f in files:
        lw, pw = f["total"]["logical"]["write"], f["total"]["physical"]["pwrite"]
        if f["total"]["sieve"]["write"]["windows"] == 0:
            check(f"{os.path.basename(f['path'])} physical write bytes = logical",
                  pw["bytes"], lw["bytes"])
        size = os.path.getsize(f["path"])
        check(f"{os.path.basename(f['path'])} size = end of the highest write",
              max(pw["end"], f["total"]["physical"]["trunc"]["first"]), size)
        if lw["bytes"] < args.hdf5_data_bytes_per_rank * args.np:
            raise Failure(f"{f['path']}: {lw['bytes']} bytes written, fewer than the "
                          f"datasets' {args.hdf5_data_bytes_per_rank * args.np}")
        print(f"ok  {f['path']}: {lw['calls']} logical writes ({lw['bytes']} B), "
              f"{pw['calls']} physical ({pw['bytes']} B)")


def coll3d_case(args):
    for v in ("indep", "sieve-4m", "sieve-64k", "coll"):
        coll3d_variant(args, v)


def ior_case(args):
    for v in ("segmented-4k-indep", "strided-4k-indep", "strided-4k-coll"):
        ior_variant(args, v)


CASES = {"coll3d": coll3d_case, "ior": ior_case, "hdf5": hdf5_case}


def main():
    ap = argparse.ArgumentParser()
    add_launch_arguments(ap)
    ap.add_argument("--case", choices=["coll3d", "ior", "hdf5"], required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--hdf5-data-bytes-per-rank", type=int, default=0)
    args = ap.parse_args()
    return run_in_fresh_workdir(args, CASES[args.case])


if __name__ == "__main__":
    sys.exit(main())
