"""Running a program on the drop-in with PARIO_TRACE set, for the trace tests."""
import json
import os
import shutil
import subprocess
import sys


class Failure(Exception):
    pass


def add_launch_arguments(ap):
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--mpi", choices=["openmpi", "mpich"], required=True)
    ap.add_argument("--preload", required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--no-leak-check", action="store_true")


def run_traced(args, program_args, trace, extra=()):
    """Runs program_args on args.np ranks with the drop-in preloaded, the
    trace going to `trace` and the (name, value) pairs of `extra` in their
    environment; returns the trace document."""
    pairs = [("LD_PRELOAD", args.preload), ("PARIO_TRACE", trace), *extra]
    if args.no_leak_check:
        pairs.append(("ASAN_OPTIONS", "detect_leaks=0"))
    if args.mpi == "mpich":
        cmd = [args.mpiexec, "-n", str(args.np)]
        for k, v in pairs:
            cmd += ["-genv", k, v]
    else:
        cmd = [args.mpiexec, "--oversubscribe", "--allow-run-as-root", "--mca", "btl",
               "self,vader", "-n", str(args.np)]
        for k, v in pairs:
            cmd += ["-x", f"{k}={v}"]
    cmd += program_args
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "PARIO_TRACE")}
    print("$", " ".join(cmd), flush=True)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    if res.returncode != 0:
        raise Failure(f"program failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    with open(trace) as f:
        doc = json.load(f)
    if doc.get("kind") != "pario-trace":
        raise Failure(f"{trace}: not a pario trace")
    return doc


def run_in_fresh_workdir(args, check):
    """check(args) in an empty args.workdir, removed after a pass and kept
    for a look after a failure; the exit status."""
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    try:
        check(args)
    except Failure as e:
        print(f"FAIL {e}", file=sys.stderr)
        return 1
    shutil.rmtree(args.workdir, ignore_errors=True)
    return 0
