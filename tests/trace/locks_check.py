#!/usr/bin/env python3
"""A sieved write in atomic mode takes one byte-range lock, over its span:
its windows take none of their own (an unlock of a window would release
that part of the span while the call is still writing). locks.c writes
64 KiB per rank through 8-byte blocks in windows of 4 KiB, so a window lock
each would show as dozens of lock calls per rank in the trace.

Usage: locks_check.py --mpiexec M --mpi openmpi|mpich --preload LIB --np N
                      --workdir W --program PATH
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from traced import Failure, add_launch_arguments, run_in_fresh_workdir, run_traced  # noqa: E402


def check(args):
    doc = run_traced(args, [args.program, args.workdir], os.path.join(args.workdir, "trace.json"))
    files = [f for f in doc["files"] if f["path"].endswith("locks.dat")]
    if len(files) != 1:
        raise Failure(f"{len(files)} trace entries for locks.dat")
    for r, rank in enumerate(files[0]["ranks"]):
        locks = rank["physical"]["lock"]["calls"]
        writes = rank["physical"]["pwrite"]["calls"]
        print(f"rank {r}: {locks} lock calls, {writes} pwrite calls")
        if writes < 2:
            raise Failure(f"rank {r}: {writes} pwrite calls: the write did not sieve windows")
        if locks != 1:
            raise Failure(f"rank {r}: {locks} lock calls for one atomic write (want 1, its span)")


def main():
    ap = argparse.ArgumentParser()
    add_launch_arguments(ap)
    ap.add_argument("--program", required=True)
    return run_in_fresh_workdir(ap.parse_args(), check)


if __name__ == "__main__":
    sys.exit(main())
