#!/usr/bin/python3
"""pario: run MPI programs on pario, benchmark parallel I/O, report results.

  pario run -n 4 -- ./app args        run an unchanged MPI program with pario's
                                      MPI-IO (or --backend ompio|romio)
  pario bench coll3d                  one I/O scenario on pario, OMPIO, ROMIO and the
                                      physical limit, interleaved and repeated
  pario bench am|put|bcast            the gas benchmarks next to plain MPI
  pario bench stream|sdes             the pgas experiments (STREAM, S-DES) next to plain C/MPI
  pario bench hdf5                    HDF5's parallel test programs on pario and OMPIO
                                      (built by tools/hdf5-testpar.sh)
  pario report bench.json             the Markdown summary (and --png plot) of a result
  pario report trace.json --html P    a trace (PARIO_TRACE=trace.json): Markdown, PNG,
                                      an HTML page, and advice
  pario advise -n 4 -- ./app          run traced, apply the advice as hints, run again,
                                      report before and after
  pario calibrate DIR                 measure what requests cost on DIR's file system and
                                      keep the figures pario's path decisions use there
  pario stripe info|join|split        show a striped file's layout, join it into one
                                      plain file, or stripe a plain file over directories

Each verb has --help. The command finds its build directory from its own location
(build/bin/pario), from --build, or from $PARIO_BUILD.
"""
import argparse
import os
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pario_bench  # noqa: E402
import pario_calibrate  # noqa: E402
import pario_env  # noqa: E402
import pario_report  # noqa: E402
import pario_stripe  # noqa: E402
import pario_testbed  # noqa: E402
import pario_trace  # noqa: E402


def run_main(args):
    """pario run: exec mpiexec with the back end's flags in front of the program."""
    prog = list(args.program)
    if prog and prog[0] == "--":
        prog = prog[1:]
    if not prog:
        print("pario run: no program given (pario run -n 4 -- ./app args)", file=sys.stderr)
        return 2
    try:
        build = pario_env.find_build_dir(args.build) if (args.build or args.backend == "pario") \
            else _optional_build_dir()
        mpi = pario_env.Mpi.detect(build, args.mpi)
    except pario_env.SetupError as e:
        print(f"pario run: {e}", file=sys.stderr)
        return 1
    backend = None if args.backend == "system" else args.backend
    if backend:
        problem = mpi.backend_problem(backend)
        if problem or backend == "limit":
            print(f"pario run: back end {backend} unavailable: "
                  f"{problem or 'limit is a benchmark reference, not an MPI back end'}",
                  file=sys.stderr)
            return 1
    try:
        cmd = launch_command(args, mpi, backend, build) + prog
    except pario_env.SetupError as e:
        print(f"pario run: {e}", file=sys.stderr)
        return 1
    if args.dry_run:
        print(shlex.join(cmd))
        return 0
    sys.stdout.flush()
    os.execv(cmd[0], cmd)
    return 127


def launch_command(args, mpi, backend, build):
    """mpiexec up to the program; with --testbed each rank runs on its node's mount of the
    test bed (which must be up) and PARIO_NODE_SIZE tells pario the split."""
    if not args.testbed:
        if args.nodes is not None:
            raise pario_env.SetupError("--nodes only with --testbed")
        return mpi.launch_prefix(args.n, backend)
    testbed = pario_testbed.Testbed(pario_testbed.find_script(build))
    state = testbed.status()
    nodes = args.nodes or int(state.get("nodes", 0) or pario_testbed.DEFAULT_NODES)
    if state["status"] != "up" or int(state.get("nodes", 0)) < nodes:
        up = shlex.join(testbed.command("up", "--nodes", str(nodes)))
        raise pario_env.SetupError(f"the test bed is {state['status']}"
                                   f"{'' if state['status'] != 'up' else ' with fewer nodes'}: "
                                   f"bring it up with\n  {up}")
    return testbed.launch(mpi, args.n, backend, {}, state, nodes)


def _optional_build_dir():
    try:
        return pario_env.find_build_dir()
    except pario_env.SetupError:
        return None


def build_parser():
    top = argparse.ArgumentParser(
        prog="pario", description="Run, benchmark and report on pario programs.",
        epilog="Run `pario VERB --help` for the options of each verb.")
    verbs = top.add_subparsers(dest="verb", metavar="{run,bench,report,advise,calibrate,stripe}")

    run = verbs.add_parser(
        "run", help="run an MPI program on pario (or another MPI-IO back end)",
        description="Launch an unchanged MPI program with mpiexec: as root, oversubscribed "
                    "(Open MPI), and with libpario-mpiio preloaded (--backend pario, the "
                    "default) or on the system's OMPIO / ROMIO.",
        usage="pario run -n N [--backend pario|ompio|romio|system] [--mpi M] "
              "[--testbed [--nodes K]] [--dry-run] -- PROGRAM [ARGS...]")
    run.add_argument("-n", "--np", dest="n", type=int, default=1, help="processes (default 1)")
    run.add_argument("--backend", default="pario",
                     choices=("pario", "ompio", "romio", "system"),
                     help="MPI-IO implementation (default pario; system: MPI's default)")
    run.add_argument("--mpi", choices=("openmpi", "mpich"),
                     help="MPI to launch with (default: the one the build uses)")
    run.add_argument("--build", help="build directory (default: the one holding this command)")
    run.add_argument("--testbed", action="store_true",
                     help="run on the network file system test bed (tools/testbed.sh up): "
                     "ranks split into nodes, each seeing its node's client mount at the "
                     "test bed's common path, PARIO_NODE_SIZE set to match")
    run.add_argument("--nodes", type=int,
                     help="with --testbed: simulated nodes (default: all the test bed has); "
                     "must divide -n")
    run.add_argument("--dry-run", action="store_true", help="print the command, do not run it")
    run.add_argument("program", nargs=argparse.REMAINDER, help="-- PROGRAM [ARGS...]")
    run.set_defaults(func=lambda a, argv: run_main(a))

    bench = verbs.add_parser(
        "bench", help="benchmark one I/O scenario on several back ends, or gas (am, put, bcast)",
        description="Run one I/O scenario on pario, OMPIO, ROMIO and the physical limit "
                    "(one process, sequential pwrite/pread; `limit-ranks`, on request: every rank on "
                    "its part), interleaved: repetition 1 of "
                    "every back end, then repetition 2, ... Each repetition uses fresh files; "
                    "each operation is timed cached (no sync) and durable (MPI_File_sync "
                    "timed). Every read is verified. The gas scenarios am, put and bcast run "
                    "the gas benchmark programs next to plain MPI, node-local and on the MPI "
                    "path (PARIO_NODE_SIZE=1). Writes JSON, Markdown and PNG.")
    pario_bench.add_arguments(bench)
    bench.set_defaults(func=pario_bench.main)

    report = verbs.add_parser(
        "report", help="summarise a pario JSON result as Markdown (and a PNG)",
        description="Print the Markdown summary of a `pario bench` JSON file; --png also "
                    "draws the plot.")
    pario_report.add_arguments(report)
    report.set_defaults(func=lambda a, argv: pario_report.main(a))

    advise = verbs.add_parser(
        "advise", help="run a program traced, apply the trace's advice as hints, rerun",
        description="Run PROGRAM on pario with PARIO_TRACE set, read the trace for advice "
                    "(pario report's), apply the advice that a hint can carry as PARIO_HINT_* "
                    "variables, run it again traced and report the I/O time before and "
                    "after. Writes before.json, after.json, advice.md and advice.json to --out.",
        usage="pario advise [-n N] [--out DIR] [--testbed [--nodes K]] -- PROGRAM [ARGS...]")
    pario_trace.add_advise_arguments(advise)
    advise.set_defaults(func=lambda a, argv: pario_trace.advise_main(
        a, [sys.executable, str(Path(__file__).resolve())]))

    calibrate = verbs.add_parser(
        "calibrate", help="measure a file system's request costs for pario's path decisions",
        description="Measure on a scratch file in DIR what a write and a read call cost (in "
                    "bytes of transfer), a byte-range lock round trip and whether reserving "
                    "blocks before large writes pays, print the figures, and store them as "
                    "the record of the file system holding DIR. pario opens files there "
                    "with these figures instead of its ext4 defaults; hints still override "
                    "them. --show lists the records.")
    pario_calibrate.add_arguments(calibrate)
    calibrate.set_defaults(func=lambda a, argv: pario_calibrate.main(a))

    stripe = verbs.add_parser(
        "stripe", help="show, join or split striped files (the stripe driver)",
        description=pario_stripe.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    pario_stripe.add_arguments(stripe)
    stripe.set_defaults(func=lambda a, argv: pario_stripe.main(a))
    return top


def main(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.verb:
        parser.print_help()
        return 0 if not argv else 2
    return args.func(args, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
