"""pario bench meta: what open, close, set_view, get_size and sync cost per call.

Runs build/bench/io_meta at each rank count of --ranks (default 1,2,4,8) on pario,
OMPIO and ROMIO, interleaved: repetition r runs every (ranks, back end) once before
repetition r+1 starts. Each run reports the slowest rank's mean microseconds per call
over --size rounds (default 200); the table holds the median over repetitions. With
the native tests built, pario's collective MPI calls per open (a PMPI tally,
tests/io/test_io_meta) are listed per rank count too.
"""
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pario_env
import pario_testbed

SUMMARY = ("open+close and open+write+close (own file, shared file), set_view, get_size, "
           "sync with nothing dirty, at 1, 2, 4, 8 ranks; pario's collective calls per open")

DEFAULT_RANKS = "1,2,4,8"
DEFAULT_REPS = 3
DEFAULT_ROUNDS = 200
BACKENDS = ("pario", "ompio", "romio")
CASES = ("open_close_own", "open_write_own", "open_close_shared", "open_write_shared",
         "set_view", "get_size", "sync_clean")
TIMEOUT = 600


def run_once(mpi, program, ranks, backend, workdir, rounds, hints, launch):
    env, wrapper = launch or ({}, [])
    cmd = mpi.launch_prefix(ranks, backend, env) + wrapper + [
        str(program), "--dir", str(workdir), "--iters", str(rounds)]
    if hints:
        cmd += ["--hints", hints]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    if proc.returncode != 0:
        raise pario_env.SetupError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            out[r["case"]] = r["us"]
    return out


def collective_tally(mpi, build_dir, ranks):
    """pario's collective MPI calls per open (first on a communicator, later ones)."""
    test = build_dir / "tests" / "test_io_meta"
    if not test.is_file():
        return None
    with tempfile.TemporaryDirectory(prefix="pario-meta-tally-") as d:
        proc = subprocess.run(mpi.launch_prefix(ranks, None, {"PARIO_TEST_DIR": d}) +
                              [str(test)], capture_output=True, text=True, timeout=TIMEOUT)
    counts = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"(.+?)\s+(\d+) collective calls at", line)
        if m:
            counts.setdefault(m.group(1), int(m.group(2)))
    return counts


def markdown(doc):
    lines = [f"pario bench meta: µs per call, slowest rank, median of {doc['reps']} "
             f"repetitions of {doc['rounds']} rounds ({doc['filesystem']})", ""]
    head = "| case | ranks | " + " | ".join(doc["backends"]) + " | pario / faster peer |"
    lines += [head, "|" + "---|" * (len(doc["backends"]) + 3)]
    for case in CASES:
        for ranks in doc["ranks"]:
            row = doc["median"].get(case, {}).get(str(ranks), {})
            cells = [f"{row[b]:.1f}" if b in row else "-" for b in doc["backends"]]
            peers = [row[b] for b in ("ompio", "romio") if b in row]
            ratio = f"{min(peers) / row['pario']:.2f}x" if peers and "pario" in row and \
                row["pario"] > 0 else "-"
            lines.append(f"| {case} | {ranks} | " + " | ".join(cells) + f" | {ratio} |")
    if doc.get("tally"):
        lines += ["", "pario's collective MPI calls (PMPI tally, tests/io/test_io_meta):", "",
                  "| call | " + " | ".join(f"{r} ranks" for r in doc["ranks"]) + " |",
                  "|---|" + "---|" * len(doc["ranks"])]
        calls = list(next(iter(doc["tally"].values())).keys())
        for c in calls:
            lines.append(f"| {c} | " + " | ".join(
                str(doc["tally"].get(str(r), {}).get(c, "-")) for r in doc["ranks"]) + " |")
    return "\n".join(lines) + "\n"


def main(args):
    build_dir = pario_env.find_build_dir(args.build)
    mpi = pario_env.Mpi.detect(build_dir, args.mpi)
    program = build_dir / "bench" / "io_meta"
    if not program.is_file():
        print(f"pario bench: {program} not found: build the benchmarks", file=sys.stderr)
        return 1
    ranks = [int(x) for x in (args.ranks or DEFAULT_RANKS).split(",")]
    reps = args.reps or DEFAULT_REPS
    rounds = int(args.size) if args.size else DEFAULT_ROUNDS
    backends = [b for b in args.backends.split(",") if b in BACKENDS and
                not mpi.backend_problem(b)]
    testbed = pario_testbed.Testbed(pario_testbed.find_script(build_dir)) \
        if args.testbed else None
    state = {}
    if testbed:
        state, _ = testbed.ensure(args.nodes, args.cache, args.delay_us)
    base = Path(args.dir) if args.dir else (Path(state["mnt"]) / "bench" if testbed
                                            else Path(tempfile.gettempdir()))
    base.mkdir(parents=True, exist_ok=True)
    samples = {}
    for rep in range(1, reps + 1):
        for n in ranks:
            launch = None
            if testbed:  # as many simulated nodes as divide the ranks, at most --nodes
                nodes = max(k for k in range(1, min(args.nodes, n) + 1) if n % k == 0)
                launch = ({"PARIO_NODE_SIZE": n // nodes},
                          testbed.wrapper(state["mnt"], n // nodes))
            for b in backends:
                with tempfile.TemporaryDirectory(prefix="pario-bench-meta-", dir=base) as d:
                    res = run_once(mpi, program, n, b, d, rounds, args.hints, launch)
                for case, us in res.items():
                    samples.setdefault(case, {}).setdefault(str(n), {}).setdefault(
                        b, []).append(us)
        print(f"pario bench meta: repetition {rep}/{reps} done", file=sys.stderr, flush=True)
    median = {c: {n: {b: statistics.median(v) for b, v in per.items()}
                  for n, per in by_n.items()} for c, by_n in samples.items()}
    doc = {"scenario": "meta", "ranks": ranks, "reps": reps, "rounds": rounds,
           "backends": backends, "hints": args.hints or "",
           "filesystem": ("test bed (GlusterFS), " if testbed else "") + str(
               pario_env.filesystem_of(base)),
           "machine": pario_env.machine_info(), "samples": samples, "median": median,
           "tally": {str(n): collective_tally(mpi, build_dir, n) for n in ranks}}
    out = Path(args.json or "pario-bench-meta.json")
    out.write_text(json.dumps(doc, indent=1) + "\n")
    md = markdown(doc)
    out.with_suffix(".md").write_text(md)
    print(md)
    return 0
