"""pario bench hdf5: HDF5's parallel test programs (testpar/) on pario and on OMPIO.

Runs each program at --ranks (default 4) once per back end per repetition, interleaved:
repetition r runs every (program, back end) before repetition r+1 starts, and the back
ends take turns going first. Each run has a fresh directory (HDF5_PARAPREFIX and the
working directory, which holds links to the programs: t_cache_image runs ./t_cache_image).
A run passes when it exits 0 and prints no "*FAILED*". The table holds the median wall
time over repetitions, the pass count per back end, and the load average the runs saw.

The programs come from tools/hdf5-testpar.sh (built once from Debian's source package
into a cache), or from --hdf5-testpar DIR. With --testbed [--nodes K] the runs' directory is
on the test bed's volume and each node's ranks use their own client mount (HDF5_PARAPREFIX
names the directory, which every rank sees through its node's mount).
"""
import fnmatch
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pario_env
import pario_testbed

SUMMARY = ("HDF5's parallel test programs (testphdf5, t_shapesame, t_pread, ...) on pario "
           "and OMPIO: pass/fail and median wall time")

DEFAULT_RANKS = 4
DEFAULT_REPS = 3
BACKENDS = ("pario", "ompio", "romio")
# In run order: t_prestart reopens the file t_pshutdown leaves, so they run as one pair
# in the same directory. t_cache_image is left out by default: its serial set-up child
# alone ran over 10 minutes on the development machine.
PROGRAMS = ("t_mpi", "t_init_term", "t_pshutdown", "t_prestart", "t_pread",
            "t_filters_parallel", "t_shapesame", "testphdf5", "t_bigio", "t_cache")
OPTIONAL_PROGRAMS = ("t_cache_image",)
SCRIPT_NAME = "hdf5-testpar.sh"


def build_script(build_dir):
    """tools/hdf5-testpar.sh: beside this module (run from tools/, installed) or in the
    build's sources."""
    return pario_env.find_tool_script(SCRIPT_NAME, build_dir)


def testpar_dir(args, build_dir):
    """The directory holding the built programs: --hdf5-testpar, or the build script's."""
    if args.hdf5_testpar:
        return Path(args.hdf5_testpar)
    script = build_script(build_dir)
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise pario_env.SetupError(f"{script} failed:\n{proc.stderr[-2000:]}")
    return Path(proc.stdout.strip().splitlines()[-1])


def select_programs(args, directory):
    """The programs to run: --variants patterns over every known program, else the
    default set; each must exist in `directory`."""
    known = PROGRAMS + OPTIONAL_PROGRAMS
    if args.variants:
        patterns = [p.strip() for p in args.variants.split(",")]
        chosen = [p for p in known if any(fnmatch.fnmatch(p, pat) for pat in patterns)]
    else:
        chosen = list(PROGRAMS)
    missing = [p for p in chosen if not (directory / p).is_file()]
    if missing:
        raise pario_env.SetupError(f"not built in {directory}: {', '.join(missing)}")
    if not chosen:
        raise pario_env.SetupError(f"--variants {args.variants} matches none of "
                                   f"{', '.join(known)}")
    return chosen


def link_programs(directory, workdir):
    for program in PROGRAMS + OPTIONAL_PROGRAMS:
        if (directory / program).is_file():
            (workdir / program).symlink_to(directory / program)


def run_once(mpi, ranks, backend, program, workdir, timeout, launch=None):
    """One run in `workdir`: (seconds, passed, load average before, tail of the output).
    launch: (environment, wrapper) of the test bed, or None."""
    env, wrapper = launch or ({}, [])
    prefix = mpi.launch_prefix(ranks, backend, {"HDF5_PARAPREFIX": str(workdir), **env})
    if wrapper:  # the time is the whole run's: the wrapper must not load the library
        prefix = pario_testbed.preload_past_wrapper(prefix)
    cmd = prefix + wrapper + [f"./{program}"]
    load = os.getloadavg()[0]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return timeout, False, load, f"timed out after {timeout} s"
    seconds = time.monotonic() - start
    out = proc.stdout + proc.stderr
    if "cannot be preloaded" in out:  # the loader ignored the drop-in: not a pario run
        raise pario_env.SetupError(f"{' '.join(cmd)}: the preload did not take effect:\n"
                                   f"{out[-1000:]}")
    passed = proc.returncode == 0 and "*FAILED*" not in out
    return seconds, passed, load, "" if passed else out[-2000:]


def run_repetition(mpi, args, rep, programs, directory, backends, base, doc, launch):
    order = backends if rep % 2 else list(reversed(backends))
    for b in order:
        with tempfile.TemporaryDirectory(prefix=f"pario-bench-hdf5-{b}-", dir=base) as d:
            workdir = Path(d)
            link_programs(directory, workdir)
            for program in programs:
                seconds, passed, load, tail = run_once(mpi, args.ranks, b, program, workdir,
                                                       args.timeout, launch)
                entry = doc["runs"].setdefault(program, {}).setdefault(b, [])
                entry.append({"rep": rep, "seconds": seconds, "passed": passed, "load": load,
                              "output": tail})
                print(f"pario bench hdf5: rep {rep} {b} {program} {seconds:.2f} s "
                      f"{'PASS' if passed else 'FAIL'} (load {load:.1f})", file=sys.stderr,
                      flush=True)


def summarize(doc):
    for program, per in doc["runs"].items():
        row = {}
        for b, runs in per.items():
            row[b] = {"median_s": statistics.median(r["seconds"] for r in runs),
                      "passed": sum(r["passed"] for r in runs), "runs": len(runs)}
        doc["median"][program] = row
    loads = [r["load"] for per in doc["runs"].values() for runs in per.values() for r in runs]
    doc["load"] = {"min": min(loads), "median": statistics.median(loads), "max": max(loads)}


def markdown(doc):
    bs = doc["backends"]
    load = doc["load"]
    lines = [f"pario bench hdf5: seconds per program at {doc['ranks']} ranks, median of "
             f"{doc['reps']} interleaved repetitions ({doc['filesystem']}; load average "
             f"{load['min']:.1f}-{load['max']:.1f}, median {load['median']:.1f})", ""]
    lines += ["| program | " + " | ".join(f"{b} s" for b in bs) + " | pario / ompio | " +
              " | ".join(f"{b} passed" for b in bs) + " |",
              "|---|" + "---|" * (2 * len(bs) + 1)]
    for program, row in doc["median"].items():
        times = [f"{row[b]['median_s']:.2f}" if b in row else "-" for b in bs]
        ratio = f"{row['pario']['median_s'] / row['ompio']['median_s']:.2f}" \
            if "pario" in row and "ompio" in row and row["ompio"]["median_s"] > 0 else "-"
        passes = [f"{row[b]['passed']}/{row[b]['runs']}" if b in row else "-" for b in bs]
        lines.append(f"| {program} | " + " | ".join(times) + f" | {ratio} | " +
                     " | ".join(passes) + " |")
    return "\n".join(lines) + "\n"


def failures(doc):
    return [(p, b) for p, per in doc["runs"].items() for b, runs in per.items()
            if not all(r["passed"] for r in runs)]


def main(args):
    build_dir = pario_env.find_build_dir(args.build)
    mpi = pario_env.Mpi.detect(build_dir, args.mpi)
    directory = testpar_dir(args, build_dir)
    programs = select_programs(args, directory)
    ranks = int(args.ranks) if args.ranks else DEFAULT_RANKS
    args.ranks = ranks
    reps = args.reps or DEFAULT_REPS
    backends = [b for b in args.backends.split(",") if b in BACKENDS and
                not mpi.backend_problem(b)]
    launch, state = None, {}
    if args.testbed:  # every node's ranks on their own client mount of the volume
        per_node = pario_testbed.ranks_per_node(ranks, args.nodes)
        testbed = pario_testbed.Testbed(pario_testbed.find_script(build_dir))
        state, _ = testbed.ensure(args.nodes, args.cache, args.delay_us)
        launch = ({"PARIO_NODE_SIZE": per_node}, testbed.wrapper(state["mnt"], per_node))
    base = Path(args.dir) if args.dir else (Path(state["mnt"]) / "bench" if launch
                                            else Path(tempfile.gettempdir()))
    base.mkdir(parents=True, exist_ok=True)
    doc = {"scenario": "hdf5", "ranks": ranks, "reps": reps, "backends": backends,
           "programs": programs, "testpar": str(directory),
           "filesystem": ("test bed (GlusterFS), " if launch else "") +
           str(pario_env.filesystem_of(base)),
           "machine": pario_env.machine_info(), "runs": {}, "median": {}}
    for rep in range(1, reps + 1):
        run_repetition(mpi, args, rep, programs, directory, backends, base, doc, launch)
    summarize(doc)
    out = Path(args.json or "pario-bench-hdf5.json")
    out.write_text(json.dumps(doc, indent=1) + "\n")
    md = markdown(doc)
    out.with_suffix(".md").write_text(md)
    print(md)
    failed = failures(doc)
    if failed:
        print("pario bench hdf5: FAILED: " + ", ".join(f"{p} on {b}" for p, b in failed) +
              " (outputs in the JSON)", file=sys.stderr)
    return 1 if failed else 0
