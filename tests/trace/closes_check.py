#!/usr/bin/python3
"""The trace of closes.c: every file closed, on any communicator and in any
order, has exactly one entry with every rank's calls merged, whether its
trace was merged when IO_TRACE_PENDING closed files waited, when its
communicator was freed, when two files were open at once, or at
MPI_Finalize; with --leave-open, the files still waiting with the file left
open are written by each rank alone at MPI_Finalize.

    closes_check.py --mpiexec M --mpi openmpi|mpich --preload P --np N
                    --workdir W --program closes [--leave-open]
"""
import argparse
import glob
import json
import os
import sys

from traced import Failure, add_launch_arguments, run_in_fresh_workdir, run_traced

BLOCK = 1024
WORLD_FILES = 20
PENDING = 16  # IO_TRACE_PENDING (src/io/trace/trace.h)


def expected_files(np):
    """name -> (ranks, blocks per rank) of every file closes.c closes."""
    files = {f"world.{k:02d}": (np, k + 1) for k in range(WORLD_FILES)}
    for g in range(min(np, 2)):
        ranks = len(range(g, np, 2))
        for k in ("0", "1", "2", "10", "11"):
            files[f"split{g}.{k}"] = (ranks, 2)
    for r in range(np):
        for k in range(2):
            files[f"self{r}.{k}"] = (1, 3)
    files["pairA"] = files["pairB"] = (np, 2)
    return files


def left_unmerged(np):
    """With leave-open: name -> blocks per rank of the files each rank writes
    alone at MPI_Finalize: the world files waiting when 'open' took their
    communicator (those closed after the last full batch, and pairA, which
    parked it again; pairB's communicator was its own), and 'open' itself."""
    files = expected_files(np)
    last_batch = WORLD_FILES - WORLD_FILES % PENDING
    waiting = [f"world.{k:02d}" for k in range(last_batch, WORLD_FILES)] + ["pairA"]
    return {name: files[name][1] for name in waiting} | {"open": 1}


def entries(trace):
    """Every entry of the run's documents: PATH, PATH.<rank>, PATH.open.<rank>."""
    found = []
    for path in [trace] + sorted(glob.glob(trace + ".*")):
        if not os.path.exists(path):
            continue
        with open(path) as f:
            doc = json.load(f)
        found += [(path, e) for e in doc["files"]]
    return found


def writes(entry):
    w = entry["total"]["logical"]["write"]
    return w["calls"], w["bytes"]


def check(args):
    trace = os.path.join(args.workdir, "closes.json")
    data = os.path.join(args.workdir, "data")
    os.makedirs(data)
    argv = [args.program, data] + (["leave-open"] if args.leave_open else [])
    try:
        run_traced(args, argv, trace)
    except FileNotFoundError:
        raise Failure(f"{trace} was not written")
    expected = expected_files(args.np)
    unmerged = left_unmerged(args.np) if args.leave_open else {}
    seen = {}
    for path, e in entries(trace):
        name = os.path.basename(e["path"])
        seen.setdefault(name, []).append((path, e))
    for name in sorted(set(expected) | set(unmerged) | set(seen)):
        got = seen.get(name, [])
        if name in unmerged:
            ranks = sorted(e["unclosed_rank"] for _, e in got)
            if ranks != list(range(args.np)):
                raise Failure(f"{name}: expected one part per rank, got ranks {ranks}")
            for path, e in got:
                want = (unmerged[name], unmerged[name] * BLOCK)
                if e["nranks"] != 1 or writes(e) != want or ".open." not in path:
                    raise Failure(f"{name}: rank {e['unclosed_rank']}'s part in {path}: "
                                  f"writes {writes(e)}, expected {want}")
            continue
        if name not in expected:
            raise Failure(f"an entry for {name}, which closes.c does not write")
        ranks, blocks = expected[name]
        if len(got) != 1:
            raise Failure(f"{name}: {len(got)} entries, expected 1 "
                          f"({[p for p, _ in got]})")
        path, e = got[0]
        want = (ranks * blocks, ranks * blocks * BLOCK)
        if e["unclosed_rank"] != -1 or e["nranks"] != ranks or writes(e) != want:
            raise Failure(f"{name} in {path}: nranks {e['nranks']}, unclosed_rank "
                          f"{e['unclosed_rank']}, writes {writes(e)}; expected {ranks} ranks "
                          f"merged, writes {want}")
        if len(e["ranks"]) != ranks or len(e["events"]) < ranks * blocks:
            raise Failure(f"{name}: {len(e['ranks'])} rank records, {len(e['events'])} events")
    print(f"ok  closes: {len(expected)} files closed, each merged once"
          + (f"; {len(unmerged)} written per rank at MPI_Finalize" if unmerged else ""))


def main():
    ap = argparse.ArgumentParser()
    add_launch_arguments(ap)
    ap.add_argument("--program", required=True)
    ap.add_argument("--leave-open", action="store_true")
    args = ap.parse_args()
    return run_in_fresh_workdir(args, check)


if __name__ == "__main__":
    sys.exit(main())
