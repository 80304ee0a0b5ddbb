"""pario bench: run one I/O scenario against several back ends, interleaved.

The gas scenarios (am, put, bcast) are run by pario_gasbench; this module only
dispatches to it and writes its outputs like those of the I/O scenarios.

Repetition r runs every back end once (pario, ompio, romio, limit, in that order)
before repetition r+1 starts, so slow drifts of a shared machine hit all back ends
alike. Every repetition writes fresh files. The benchmark programs (build/bench/io_*)
print one RESULT line per timed operation; this module collects them into records
(median, min and max over repetitions) and hands them to pario_report.
"""
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pario_env
import pario_gasbench
import pario_pgasbench
import pario_hdf5bench
import pario_metabench
import pario_report
import pario_testbed

MIB = float(1 << 20)
# Seconds one benchmark program may run before it is considered hung.
DEFAULT_TIMEOUT = 900
# Defaults of the I/O scenarios (the gas scenarios have their own).
IO_DEFAULT_RANKS = 4
IO_DEFAULT_REPS = 5
GAS_DEFAULT_REPS = 3
# Lines of a failing program's stderr shown in the failure message.
STDERR_TAIL_LINES = 15


@dataclass(frozen=True)
class Scenario:
    program: str
    summary: str
    size_help: str
    quick_size: str
    default_ranks: int = IO_DEFAULT_RANKS


SCENARIOS = {
    "coll3d": Scenario("io_coll3d",
                       "3-D array of doubles, darray view: independent, data sieving at "
                       "4 MiB/512 KiB/64 KiB, collective (seed 003)",
                       "global edge N or NXxNYxNZ, optionally /PXxPYxPZ for the process grid "
                       "(default 320)", "64"),
    "ior": Scenario("io_ior",
                    "IOR shared file: segmented and strided, 4 KiB/64 KiB/1 MiB transfers, "
                    "independent and collective, plus IO500 ior-hard",
                    "bytes per rank (default 8m; at most --max-calls transfers)", "64k"),
    "noncontig": Scenario("io_noncontig",
                          "vector types with 8 B..4 KiB blocks in file, memory, or both",
                          "bytes per rank (default 1m)", "16k"),
    "hpcx": Scenario("io_hpcx",
                     "file per task, one shared file, all read the same file (independent "
                     "reads, with pario_read_once, and collective reads) (seed 001)",
                     "bytes per rank (default 16m)", "1m"),
    "wellformed": Scenario("io_wellformed",
                           "records of 800,000 B vs 1 MiB interleaved in a shared file, the "
                           "global cache off or on at page sizes 256 KiB..4 MiB and 16 or 64 "
                           "pages per process (seed 002)",
                           "bytes per rank (default 32m)", "4m"),
    "cyclic": Scenario("io_cyclic",
                       "1 MiB records following the cache's cyclic page mapping (each rank "
                       "its own pages) or not (the next rank's), cache on and off (seed 002)",
                       "bytes per rank (default 32m)", "4m"),
    "overlap": Scenario("io_overlap",
                        "independent I/O then computation (blocking) or started, computed "
                        "over, then waited for (nonblocking): does the I/O progress while "
                        "the program computes",
                        "bytes per rank (default 64m)", "4m", default_ranks=2),
    "upcio": Scenario("io_upcio",
                      "checkpoint/restart of a shared array of doubles with block factor 1, "
                      "128 and [*]: UPC-IO (pgas io) vs master/worker, pwrite per block and an "
                      "MPI-IO darray view (seeds 000, 001, 003)",
                      "bytes of the whole array (default 64m)", "8m"),
    "stripe": Scenario("io_stripe",
                       "one shared file, collective writes and reads of each rank's block "
                       "in 4 MiB calls, plain and striped over 1..4 target directories "
                       "(DIR/t0..t3 or $PARIO_BENCH_STRIPE_TARGETS) with 64 KiB and 1 MiB "
                       "units (seed 002)",
                       "bytes per rank (default 64m)", "4m"),
}


class BackendFailure(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind  # "verify" (wrong data read back), "crash" or "preload"


def parse_program_output(text):
    """Splits a benchmark program's stdout into info, plan and result records."""
    out = {"info": {}, "plan": [], "results": [], "info_keys": None}
    for line in text.splitlines():
        tag, _, payload = line.partition(" ")
        if tag not in ("INFO", "PLAN", "RESULT", "INFO-KEYS"):
            continue
        try:
            record = json.loads(payload)
        except json.JSONDecodeError:
            continue
        if tag == "INFO":
            out["info"] = record
        elif tag == "PLAN":
            out["plan"].append(record)
        elif tag == "RESULT":
            out["results"].append(record)
        else:
            out["info_keys"] = record.get("keys", [])
    return out


def run_program(cmd, timeout, label):
    """Runs one benchmark program; returns its parsed output or raises BackendFailure."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BackendFailure("crash", f"{label}: no result after {timeout} s (hung?)")
    except OSError as e:
        raise BackendFailure("crash", f"{label}: cannot start {cmd[0]}: {e}")
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-STDERR_TAIL_LINES:])
        kind = "verify" if "VERIFY-FAIL" in proc.stderr else "crash"
        what = "read back wrong data" if kind == "verify" else f"exited with {proc.returncode}"
        raise BackendFailure(kind, f"{label}: {what}\n  command: {' '.join(cmd)}\n"
                                   + "\n".join("  | " + ln for ln in tail.splitlines()))
    return parse_program_output(proc.stdout)


def run_with_retry(run, what):
    """Runs `run()`; a crash (not a verification failure) is retried once, loudly, since
    a launch on a busy shared machine occasionally fails for reasons of its own."""
    try:
        return run()
    except BackendFailure as e:
        if e.kind != "crash":
            raise
        print(f"pario bench: {what} failed, retrying once:\n{e}", file=sys.stderr, flush=True)
    return run()


def loud(message):
    bar = "!" * 72
    print(f"{bar}\npario bench: {message}\n{bar}", file=sys.stderr, flush=True)


class BenchRun:
    """One `pario bench` invocation: back ends, repetitions, samples."""

    def __init__(self, args, argv):
        self.args = args
        self.argv = argv
        self.scenario = SCENARIOS[args.scenario]
        self.build_dir = pario_env.find_build_dir(args.build)
        self.mpi = pario_env.Mpi.detect(self.build_dir, args.mpi)
        if self.mpi.build_mismatch():
            raise pario_env.SetupError(self.mpi.build_mismatch())
        self.program = self.build_dir / "bench" / self.scenario.program
        self.limit_program = self.build_dir / "bench" / "io_limit"
        self.limit_ranks_program = self.build_dir / "bench" / "io_limit_ranks"
        self.size = args.size or (self.scenario.quick_size if args.quick else None)
        self.status = {}
        self.samples = {}  # (backend, op, mode, variant) -> [(bytes, seconds)]
        self.peak_rss = {}  # same key -> peak resident MiB of the largest rank
        self.plan = []
        self.mpi_library = ""
        self.workdir = None
        self.own_workdir = False
        self.testbed = None  # pario_testbed.Testbed with --testbed
        self.testbed_state = {}
        self.testbed_before = None
        if args.testbed:
            pario_testbed.ranks_per_node(args.ranks, args.nodes)  # an uneven split fails here
            self.testbed = pario_testbed.Testbed(pario_testbed.find_script(self.build_dir))

    # ---- setup -------------------------------------------------------------------
    def select_backends(self):
        """Back ends that can run; the others are reported as skipped, loudly."""
        active = []
        for b in [x.strip() for x in self.args.backends.split(",") if x.strip()]:
            problem = self.mpi.backend_problem(b)
            program = {"limit": self.limit_program,
                       pario_env.LIMIT_RANKS_BACKEND: self.limit_ranks_program}.get(b)
            if program and not program.is_file():
                problem = f"{program} not found (build the {program.name} target)"
            if problem:
                self.status[b] = {"status": "skipped", "reason": problem}
                loud(f"skipping back end {b}: {problem}")
            else:
                self.status[b] = {"status": "ok"}
                active.append(b)
        return active

    def program_args(self, rep, backend):
        """Every back end writes its files in one directory, under the same names: on a
        distributed file system the name (within a directory) decides the server that
        holds a file, and on the GlusterFS test bed one brick took 120-170 ms for a
        64 MiB write that the other took 200-360 ms for, so per-back-end directories
        compared the servers as much as the back ends."""
        return (["--dir", str(self.files_dir()), "--rep", str(rep),
                 "--modes", self.args.modes] + self.selection_args())

    def files_dir(self):
        return self.workdir / "files"

    def selection_args(self):
        """Options that choose the variants and their sizes."""
        a = []
        if self.size:
            a += ["--size", self.size]
        if self.args.variants:
            a += ["--variants", self.args.variants]
        if self.args.max_calls:
            a += ["--max-calls", str(self.args.max_calls)]
        return a

    def make_plan(self):
        """Asks the program (without I/O) which variants it runs and their byte counts."""
        if not self.program.is_file():
            raise pario_env.SetupError(f"{self.program} not found: build the benchmarks "
                                       f"(cmake --build {self.build_dir})")
        cmd = (self.mpi.launch_prefix(self.args.ranks, None) + [str(self.program), "--plan"] +
               self.selection_args())
        try:
            out = run_with_retry(lambda: run_program(cmd, self.args.timeout, "plan"),
                                 "listing the variants")
        except BackendFailure as e:
            raise pario_env.SetupError(f"cannot list the scenario's variants: {e}")
        self.plan = out["plan"]
        self.mpi_library = out["info"].get("mpi_library", "")
        if not self.plan:
            raise pario_env.SetupError(f"no variant matches --variants {self.args.variants}")

    # ---- one repetition of one back end ------------------------------------------
    def run_mpi_backend(self, rep, backend):
        cmd = (self.launch(backend) + [str(self.program)] + self.program_args(rep, backend))
        label = f"back end {backend}, repetition {rep}"
        out = run_program(cmd, self.args.timeout, label)
        self.check_provider(backend, out["info"].get("file_open_from", ""), label)
        return out["results"]

    def launch(self, backend):
        """mpiexec up to the program; on the test bed with each rank on its node's mount
        and PARIO_NODE_SIZE telling pario the same split."""
        env = {}
        if backend == pario_env.TRACED_BACKEND:  # the trace of the last run stays there
            env["PARIO_TRACE"] = str(self.workdir / backend / "trace.json")
        if not self.testbed:
            return self.mpi.launch_prefix(self.args.ranks, backend, env)
        return self.testbed.launch(self.mpi, self.args.ranks, backend, env, self.testbed_state,
                                   self.args.nodes)

    def check_provider(self, backend, provider, label):
        """Refuses results measured on the wrong MPI-IO (a preload that did not work)."""
        from_pario = pario_env.PARIO_LIBRARY in provider
        if from_pario != (backend in pario_env.PARIO_BACKENDS):
            raise BackendFailure("preload", f"{label}: MPI_File_open came from "
                                            f"{provider or 'an unknown object'}; the results "
                                            f"would not be {backend}'s")
        self.status[backend]["file_open_from"] = provider

    def run_limit(self, rep, backend):
        """`limit`: one process; `limit-ranks`: every rank on its part, launched as the
        MPI back ends are (on the test bed each rank on its node's mount)."""
        sizes = sorted({p["bytes"] for p in self.plan})
        args = ["--file", str(self.files_dir() / f"{backend}.dat"),
                "--bytes", ",".join(map(str, sizes)), "--modes", self.args.modes,
                "--rep", str(rep)]
        if backend == "limit":
            cmd = [str(self.limit_program)] + args
        else:
            cmd = self.launch(backend) + [str(self.limit_ranks_program)] + args
        out = run_program(cmd, self.args.timeout, f"back end {backend}, repetition {rep}")
        by_bytes = {}
        for r in out["results"]:
            by_bytes.setdefault(r["bytes"], []).append(r)
        results = []
        for p in self.plan:  # the limit for each variant is the run with its byte count
            for r in by_bytes.get(p["bytes"], []):
                results.append(dict(r, variant=p["variant"]))
        return results

    def run_one(self, rep, backend):
        (self.workdir / backend).mkdir(parents=True, exist_ok=True)  # its trace, if any
        self.files_dir().mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        results = (self.run_limit(rep, backend) if backend in pario_env.LIMIT_BACKENDS
                   else self.run_mpi_backend(rep, backend))
        for r in results:
            key = (backend, r["op"], r["mode"], r["variant"])
            self.samples.setdefault(key, []).append((r["bytes"], r["seconds"]))
            if "peak_rss_mib" in r:  # largest over ranks and repetitions
                self.peak_rss[key] = max(self.peak_rss.get(key, 0.0), r["peak_rss_mib"])
        return time.monotonic() - t0

    # ---- the whole run -----------------------------------------------------------
    def run(self):
        active = self.select_backends()
        if not active:
            raise pario_env.SetupError("no back end can run")
        if self.testbed:
            self.testbed_state, self.testbed_before = self.testbed.ensure(
                self.args.nodes, self.args.cache, self.args.delay_us)
        try:
            return self.run_backends(active)
        finally:
            if self.testbed and self.testbed_before == "down" and not self.args.keep_testbed:
                print("pario bench: taking down the test bed it brought up (--keep-testbed "
                      "keeps it)", file=sys.stderr, flush=True)
                self.testbed.down()
            elif self.testbed and self.testbed_before == "other":
                print("pario bench: the test bed stays up with this run's knobs "
                      "(tools/testbed.sh status)", file=sys.stderr, flush=True)

    def run_backends(self, active):
        self.open_workdir()
        try:
            self.make_plan()
            for rep in range(1, self.args.reps + 1):
                line = []
                for backend in list(active):
                    try:
                        seconds = run_with_retry(lambda: self.run_one(rep, backend),
                                                 f"back end {backend}, repetition {rep}")
                        line.append(f"{backend} {seconds:.1f} s")
                    except BackendFailure as e:
                        active.remove(backend)
                        self.drop_samples(backend)
                        self.status[backend] = {"status": "failed", "kind": e.kind,
                                                "repetition": rep, "reason": str(e)}
                        loud(f"back end {backend} FAILED and is dropped from this run: {e}")
                print(f"pario bench {self.args.scenario}: repetition {rep}/{self.args.reps}: "
                      + ", ".join(line), file=sys.stderr, flush=True)
                if not active:
                    break
        finally:
            self.close_workdir()
        return self.document()

    def drop_samples(self, backend):
        """A failed back end's earlier numbers are not trustworthy: keep none."""
        for key in [k for k in self.samples if k[0] == backend]:
            del self.samples[key]

    def open_workdir(self):
        if self.testbed:
            mnt = Path(self.testbed_state["mnt"])
            base = Path(self.args.dir) if self.args.dir else mnt / "bench"
            if not base.resolve().is_relative_to(mnt):
                raise pario_env.SetupError(f"--dir {base} is not on the test bed (under {mnt})")
            base.mkdir(parents=True, exist_ok=True)
            self.workdir = Path(tempfile.mkdtemp(prefix=f"pario-bench-{self.args.scenario}-",
                                                 dir=base))
        elif self.args.dir:
            base = Path(self.args.dir)
            base.mkdir(parents=True, exist_ok=True)
            self.workdir = Path(tempfile.mkdtemp(prefix=f"pario-bench-{self.args.scenario}-",
                                                 dir=base))
        else:
            self.workdir = Path(tempfile.mkdtemp(prefix=f"pario-bench-{self.args.scenario}-"))
        self.own_workdir = True

    def close_workdir(self):
        if self.own_workdir and self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # ---- results -----------------------------------------------------------------
    def records(self):
        produced_by_mpi = {(op, v) for (b, op, _, v) in self.samples
                           if b not in pario_env.LIMIT_BACKENDS}
        recs = []
        for (backend, op, mode, variant), samples in sorted(self.samples.items()):
            if (backend in pario_env.LIMIT_BACKENDS and produced_by_mpi and
                    (op, variant) not in produced_by_mpi):
                continue  # e.g. hpcx readsame has no timed write
            nbytes = samples[0][0]
            rates = [b / MIB / s for b, s in samples if s > 0]
            recs.append({
                "backend": backend, "op": op, "mode": mode, "variant": variant,
                "bytes": nbytes, "ranks": 1 if backend == "limit" else self.args.ranks,
                "reps": len(samples),
                "mib_s_median": statistics.median(rates) if rates else None,
                "mib_s_min": min(rates) if rates else None,
                "mib_s_max": max(rates) if rates else None,
                "seconds": [s for _, s in samples],
            })
            key = (backend, op, mode, variant)
            if key in self.peak_rss:
                recs[-1]["peak_rss_mib"] = self.peak_rss[key]
        return recs

    def document(self):
        machine = pario_env.machine_info()
        machine["mpi"] = self.mpi_library
        machine["mpi_flavor"] = self.mpi.flavor
        machine["filesystem"] = pario_env.filesystem_of(self.workdir.parent)
        if self.testbed:
            filesystem = pario_testbed.describe(self.testbed_state, self.args.nodes,
                                                self.args.ranks)
        else:
            filesystem = {"testbed": False, "type": machine["filesystem"], "nodes": 1}
        return {
            "kind": pario_report.BENCH_KIND, "version": 1,
            "scenario": self.args.scenario, "summary": self.scenario.summary,
            "command": ["pario"] + self.argv,
            "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "params": {"ranks": self.args.ranks, "reps": self.args.reps, "size": self.size,
                       "quick": self.args.quick, "modes": self.args.modes,
                       "variants": self.args.variants, "max_calls": self.args.max_calls,
                       "testbed": self.args.testbed, "nodes": filesystem["nodes"],
                       "cache": filesystem.get("cache"), "delay_us": filesystem.get("delay_us")},
            "machine": machine,
            "filesystem": filesystem,
            "backends": self.status,
            "plan": self.plan,
            "results": self.records(),
        }


def add_arguments(p):
    scenarios = dict((k, v.summary) for k, v in SCENARIOS.items())
    scenarios.update((k, v.summary) for k, v in pario_gasbench.GAS_SCENARIOS.items())
    scenarios.update((k, v.summary) for k, v in pario_pgasbench.PGAS_SCENARIOS.items())
    scenarios["meta"] = pario_metabench.SUMMARY
    scenarios["hdf5"] = pario_hdf5bench.SUMMARY
    p.add_argument("scenario", choices=list(scenarios),
                   help="; ".join(f"{k}: {v}" for k, v in scenarios.items()))
    p.add_argument("--ranks", "-n",
                   help=f"MPI processes (I/O scenarios: default {IO_DEFAULT_RANKS}, overlap 2; am, put: "
                   "2 only; bcast: a comma-separated list, default 2,4,8; stream: list, default "
                   "1,2; sdes: list, default 1,2,4)")
    p.add_argument("--reps", type=int,
                   help=f"repetitions per back end (I/O, default {IO_DEFAULT_REPS}); runs per "
                   f"configuration (gas, default {GAS_DEFAULT_REPS}: each gas program already "
                   "times 15 interleaved repetitions); stream, sdes: the program's interleaved "
                   "repetitions (default 5 and 21)")
    p.add_argument("--paths", default="local,mpi",
                   help="bcast, stream, sdes: node-local and/or MPI path (PARIO_NODE_SIZE=1) (default "
                   "local,mpi; am and put always measure both in one run)")
    p.add_argument("--size", help="problem size; coll3d: " + SCENARIOS["coll3d"].size_help +
                   "; ior: " + SCENARIOS["ior"].size_help + "; noncontig: " +
                   SCENARIOS["noncontig"].size_help + "; hpcx: " + SCENARIOS["hpcx"].size_help +
                   "; overlap: " + SCENARIOS["overlap"].size_help +
                   "; stream: elements per array (default 6291456, multiple of 128 x ranks)")
    p.add_argument("--quick", action="store_true", help="tiny sizes for a demonstration")
    p.add_argument("--backends", default=",".join(pario_env.ALL_BACKENDS),
                   help="comma-separated, from " + ",".join(pario_env.ALL_BACKENDS) +
                   " (default: all), and " + pario_env.TRACED_BACKEND + " and " +
                   pario_env.LIMIT_RANKS_BACKEND + " (the limit done by every rank on its "
                   "part of the bytes, each on its node's mount)")
    p.add_argument("--optional", default="",
                   help="back ends whose failure is reported but does not fail the run")
    p.add_argument("--modes", default="cached,durable",
                   help="cached (no sync) and/or durable (MPI_File_sync timed)")
    p.add_argument("--variants", help="comma-separated name patterns (fnmatch), e.g. 'coll,sieve-*'")
    p.add_argument("--max-calls", type=int,
                   help="cap on I/O calls per rank and variant (ior; default 512)")
    p.add_argument("--dir", help="directory for the benchmark files (default: $TMPDIR or /tmp; "
                   "with --testbed: MOUNT/bench on the test bed); a fresh subdirectory is "
                   "created and removed")
    tb = p.add_argument_group(
        "network file system test bed (tools/testbed.sh; I/O scenarios)",
        "--testbed runs on a GlusterFS volume with one client mount per simulated node: the "
        "ranks are split into --nodes consecutive groups, each rank sees its node's mount "
        "at the common path, PARIO_NODE_SIZE is set to match. The test bed is brought up "
        "with these knobs when it is not (and taken down again after the run if it was "
        "down; needs root).")
    tb.add_argument("--testbed", action="store_true",
                    help="run on the test bed (files under its mount, default MOUNT/bench)")
    tb.add_argument("--nodes", type=int,
                    help=f"simulated nodes (default {pario_testbed.DEFAULT_NODES}); must divide "
                    "--ranks")
    tb.add_argument("--cache", choices=pario_testbed.CACHE_MODES,
                    help="client caching: off (default; every I/O a request to the servers) or "
                    "nfslike (close-to-open)")
    tb.add_argument("--delay-us", type=int,
                    help="extra microseconds every server request takes (default 0)")
    tb.add_argument("--keep-testbed", action="store_true",
                    help="leave a test bed this run brought up running")
    p.add_argument("--json", default=None,
                   help="output JSON (default pario-bench-SCENARIO.json); the Markdown "
                   "table (.md) and the plot (.png) are written next to it")
    p.add_argument("--no-plot", action="store_true", help="do not write the PNG")
    p.add_argument("--mpi", choices=("openmpi", "mpich"),
                   help="MPI to launch with (default: the one the build uses)")
    p.add_argument("--build", help="build directory (default: the one holding this command)")
    p.add_argument("--hints", help="meta: hints for every open, key=value,... (e.g. "
                   "romio_no_indep_rw=true)")
    p.add_argument("--hdf5-testpar",
                   help="hdf5: the directory holding HDF5's built testpar programs (default: "
                   "the one tools/hdf5-testpar.sh builds and caches); --variants picks "
                   "programs by name")
    p.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT,
                   help=f"seconds per program run (default {DEFAULT_TIMEOUT})")


def write_outputs(doc, json_path, markdown, plot, no_plot):
    """Writes the JSON, the Markdown next to it and (unless no_plot) the PNG."""
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(doc, indent=1) + "\n")
    md = markdown(doc)
    json_path.with_suffix(".md").write_text(md)
    outputs = [str(json_path), str(json_path.with_suffix(".md"))]
    if not no_plot:
        problem = plot(doc, json_path.with_suffix(".png"))
        if problem:
            print(f"pario bench: no plot: {problem}", file=sys.stderr)
        else:
            outputs.append(str(json_path.with_suffix(".png")))
    print(md)
    print("pario bench: wrote " + ", ".join(outputs), file=sys.stderr)


def run_layer_scenario(args, argv, module, measure):
    """Runs a gas or pgas scenario through `measure(ranks)`, writes its outputs with the
    module's Markdown and plot; fails when a run failed or a result failed its check."""
    if args.reps is not None and args.reps < 1:
        print("pario bench: --reps must be at least 1", file=sys.stderr)
        return 2
    try:
        doc = measure(module.resolve_ranks(args))
    except pario_env.SetupError as e:
        print(f"pario bench: {e}", file=sys.stderr)
        return 1
    write_outputs(doc, Path(args.json or f"pario-bench-{args.scenario}.json"),
                  module.markdown, module.plot, args.no_plot)
    failed = module.failed_runs(doc)
    invalid = module.invalid_results(doc) if hasattr(module, "invalid_results") else []
    if failed or invalid:
        loud(f"{len(failed)} of {len(doc['runs'])} runs FAILED, {len(invalid)} results failed "
             "their check (see the JSON)")
    return 1 if failed or invalid else 0


def gas_main(args, argv):
    """pario bench am|put|bcast."""
    reps = args.reps or GAS_DEFAULT_REPS
    return run_layer_scenario(args, argv, pario_gasbench,
                              lambda ranks: pario_gasbench.measure(args, argv, ranks, reps))


def pgas_main(args, argv):
    """pario bench stream|sdes: the pgas experiments (seed 000)."""
    return run_layer_scenario(args, argv, pario_pgasbench,
                              lambda ranks: pario_pgasbench.measure(args, argv, ranks))


def io_ranks(args):
    """--ranks as one number for the I/O scenarios, or None when it is not one."""
    if args.ranks is None:
        return SCENARIOS[args.scenario].default_ranks
    try:
        return int(args.ranks)
    except ValueError:
        return None


def testbed_options(args):
    """Checks the test bed options and fills in their defaults; returns an error or None."""
    given = [o for o, v in (("--nodes", args.nodes), ("--cache", args.cache),
                            ("--delay-us", args.delay_us),
                            ("--keep-testbed", args.keep_testbed or None)) if v is not None]
    if not args.testbed:
        return f"{', '.join(given)} only with --testbed" if given else None
    if args.scenario in pario_gasbench.GAS_SCENARIOS or \
            args.scenario in pario_pgasbench.PGAS_SCENARIOS:
        return "--testbed is for the I/O scenarios"
    args.nodes = pario_testbed.DEFAULT_NODES if args.nodes is None else args.nodes
    args.cache = args.cache or "off"
    args.delay_us = 0 if args.delay_us is None else args.delay_us
    if args.nodes < 1 or args.delay_us < 0:
        return "--nodes must be at least 1 and --delay-us at least 0"
    return None


def main(args, argv):
    problem = testbed_options(args)
    if problem:
        print(f"pario bench: {problem}", file=sys.stderr)
        return 2
    if args.scenario in pario_gasbench.GAS_SCENARIOS:
        return gas_main(args, argv)
    if args.scenario in pario_pgasbench.PGAS_SCENARIOS:
        return pgas_main(args, argv)
    if args.scenario in ("meta", "hdf5"):
        module = pario_metabench if args.scenario == "meta" else pario_hdf5bench
        try:
            return module.main(args)
        except pario_env.SetupError as e:
            print(f"pario bench: {e}", file=sys.stderr)
            return 1
    args.ranks = io_ranks(args)
    args.reps = IO_DEFAULT_REPS if args.reps is None else args.reps
    if args.ranks is None or args.reps < 1 or args.ranks < 1:
        print("pario bench: --reps and --ranks must be numbers of at least 1", file=sys.stderr)
        return 2
    if args.reps < 5:
        print(f"pario bench: note: {args.reps} repetitions; medians are more stable with 5 "
              "or more", file=sys.stderr)
    try:
        doc = BenchRun(args, argv).run()
    except pario_env.SetupError as e:
        print(f"pario bench: {e}", file=sys.stderr)
        return 1
    write_outputs(doc, Path(args.json or f"pario-bench-{args.scenario}.json"),
                  pario_report.bench_markdown, pario_report.bench_plot, args.no_plot)
    optional = {x.strip() for x in args.optional.split(",")}
    failed = [b for b, s in doc["backends"].items() if s["status"] == "failed"]
    hard = [b for b in failed if b not in optional]
    if failed:
        loud("FAILED back ends: " + ", ".join(
            f"{b} ({doc['backends'][b]['kind']})" for b in failed) +
            ("" if hard else " (optional: run not failed)"))
    return 1 if hard else 0
