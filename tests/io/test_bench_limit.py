#!/usr/bin/python3
"""`pario bench`'s two limits end to end: `limit` (one process) and `limit-ranks`
(every rank on its contiguous part of the same bytes, io_limit_ranks) run side
by side on a quick scenario; the JSON records both as run, with every variant's
byte count for both, one rank for `limit` and the run's ranks for
`limit-ranks`. Each limit reads back and checks the pattern it wrote, so a
wrong part fails the run. A file that cannot be made fails io_limit_ranks on
every rank, with the path named, and no rank waits for the others. No figure
is checked against a time.

usage: test_bench_limit.py --pario BUILD/bin/pario --limit-ranks io_limit_ranks
                           --ranks N --dir DIR -- MPIEXEC_PREFIX_FOR_N_RANKS...
"""
import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL {what}", file=sys.stderr)


def bench_records(args, data):
    out = data / "bench.json"
    cmd = [args.pario, "bench", "ior", "--quick", "--ranks", str(args.ranks), "--reps", "1",
           "--backends", "limit,limit-ranks", "--dir", str(data / "files"), "--no-plot",
           "--json", str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    check(run.returncode == 0, f"pario bench exited {run.returncode}: {run.stderr[-2000:]}")
    if run.returncode != 0:
        return None
    return json.loads(out.read_text())


def check_records(doc, ranks):
    for b in ("limit", "limit-ranks"):
        check(doc["backends"].get(b, {}).get("status") == "ok", f"back end {b} did not run")
    by_backend = {}
    for r in doc["results"]:
        by_backend.setdefault(r["backend"], {})[(r["op"], r["mode"], r["variant"])] = r
    one, all_ranks = by_backend.get("limit", {}), by_backend.get("limit-ranks", {})
    check(one and set(one) == set(all_ranks), "the two limits measured different cells")
    for key, r in all_ranks.items():
        check(r["ranks"] == ranks, f"limit-ranks {key}: {r['ranks']} ranks recorded")
        check(key in one and one[key]["bytes"] == r["bytes"],
              f"limit-ranks {key}: not the bytes of limit")
        check(r["mib_s_median"] and r["mib_s_median"] > 0, f"limit-ranks {key}: no rate")
    for key, r in one.items():
        check(r["ranks"] == 1, f"limit {key}: {r['ranks']} ranks recorded")


def check_failure(args, data):
    path = data / "missing-dir" / "limit.dat"
    cmd = args.prefix + [args.limit_ranks, "--file", str(path), "--bytes", "1048576",
                         "--modes", "cached"]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        check(False, "io_limit_ranks hung on a file it cannot make")
        return
    check(run.returncode != 0, "io_limit_ranks succeeded on a file it cannot make")
    check(str(path) in run.stderr, f"the error does not name {path}: {run.stderr[-500:]}")
    check("RESULT" not in run.stdout, "a result was printed for a failed run")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pario", required=True)
    p.add_argument("--limit-ranks", required=True)
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("prefix", nargs=argparse.REMAINDER)
    args = p.parse_args()
    args.prefix = [a for a in args.prefix if a != "--"]
    data = Path(args.dir)
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    doc = bench_records(args, data)
    if doc:
        check_records(doc, args.ranks)
    check_failure(args, data)
    if not failures:
        shutil.rmtree(data, ignore_errors=True)
    print("test_bench_limit: %s" % ("ok" if not failures else f"{len(failures)} failures"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
