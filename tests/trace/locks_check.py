#!/usr/bin/env python3
"""How a sieved independent write locks, read from the trace. locks.c writes
64 KiB per rank through 8-byte blocks in windows of 4 KiB, so a lock per
window shows as dozens of lock calls per rank.

- atomic: atomic mode takes one lock, over the call's span; its windows take
  none of their own (an unlock of a window would release that part of the
  span while the call is still writing);
- span: pario_lock_span=enable takes one lock over the span, as every write
  that may lock does off local disks (window locks lost bytes on a network
  file system);
- window: on a local disk, without the hint (disable is refused), a lock per
  window, one per pwrite.
- cached: pario_client_cache=enable (a client caching between opens, as
  NFS): a lock per window as on a local disk, and what each window wrote is
  flushed (fdatasync, counted as sync) before its unlock.

Usage: locks_check.py --mpiexec M --mpi openmpi|mpich --preload LIB --np N
                      --workdir W --program PATH --mode atomic|span|window|cached
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from traced import Failure, add_launch_arguments, run_in_fresh_workdir, run_traced  # noqa: E402


def check(args):
    doc = run_traced(args, [args.program, args.workdir, args.mode],
                     os.path.join(args.workdir, "trace.json"))
    files = [f for f in doc["files"] if f["path"].endswith("locks.dat")]
    if len(files) != 1:
        raise Failure(f"{len(files)} trace entries for locks.dat")
    for r, rank in enumerate(files[0]["ranks"]):
        locks = rank["physical"]["lock"]["calls"]
        writes = rank["physical"]["pwrite"]["calls"]
        syncs = rank["physical"]["sync"]["calls"]
        print(f"rank {r}: {locks} lock calls, {writes} pwrite calls, {syncs} syncs")
        if writes < 2:
            raise Failure(f"rank {r}: {writes} pwrite calls: the write did not sieve windows")
        want = writes if args.mode in ("window", "cached") else 1
        if locks != want:
            raise Failure(f"rank {r}: {locks} lock calls for one {args.mode} write (want {want})")
        if args.mode == "cached" and syncs < locks:
            raise Failure(f"rank {r}: {syncs} syncs for {locks} windows: one not flushed")


def main():
    ap = argparse.ArgumentParser()
    add_launch_arguments(ap)
    ap.add_argument("--program", required=True)
    ap.add_argument("--mode", choices=("atomic", "span", "window", "cached"), required=True)
    return run_in_fresh_workdir(ap.parse_args(), check)


if __name__ == "__main__":
    sys.exit(main())
