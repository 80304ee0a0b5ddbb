#!/usr/bin/python3
"""Differential test driver: pario's MPI-IO drop-in against the system's MPI-IO.

For each rank count, runs diffgen once per back end (one mpiexec runs all the
cases) into separate directories, then requires identical logs and
byte-identical case files. On a mismatch it prints the first differing log
line and the commands that reproduce that one case on each back end.

Back ends:
  oracle  the system's MPI-IO. Open MPI: OMPIO with its "individual" collective
          component (the aggregating components of Open MPI 4.1 write stray
          bytes into holes and return before the data is in the file, which
          diffgen's own checks catch) and SEEK_END emulated with SEEK_SET
          (OMPIO's SEEK_END ignores the view). MPICH: its ROMIO, with reads
          past the end of file and memory types with a negative lower bound
          left out on both sides (ROMIO gets both wrong); even so MPICH 4.0's
          ROMIO still fails diffgen's checks, so CMake registers the test for
          Open MPI builds only. Every system MPI-IO gets a barrier between a
          collective write and the get_size after it.
  pario   the same diffgen binary with libpario-mpiio.so preloaded.
  other   with --other-mpi: another MPI's oracle (its own diffgen build).

Modes: default oracle vs pario; --oracle-only runs the oracle twice (shows
that the generator is deterministic); --other-* compares two MPIs' oracles;
--model-only runs one back end alone against diffgen's own checks.
"""
import argparse
import filecmp
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import pario_stripe  # noqa: E402


class Backend:
    def __init__(self, name, mpi, mpiexec, diffgen, preload=None, hints=(), env=(), gen=(),
                 stripe=None):
        self.name = name
        self.mpi = mpi
        self.mpiexec = mpiexec
        self.diffgen = diffgen
        self.preload = preload
        self.hints = list(hints)  # "key=value": pario's PARIO_HINT_<key> overrides
        self.env = list(env)  # "NAME=value": more environment for this back end
        self.gen = list(gen)  # diffgen flags that change the cases (both back ends)
        self.romio_limits = mpi == "mpich"
        self.stripe = stripe  # (factor, unit): files created striped over target directories

    def stripe_targets(self, workdir):
        return [os.path.join(workdir, "targets", "t%d" % i) for i in range(self.stripe[0])]

    def command(self, np, seed, cases, workdir):
        env = [("PARIO_HINT_" + k, v) for k, _, v in (h.partition("=") for h in self.hints)]
        env += [(k, v) for k, _, v in (e.partition("=") for e in self.env)]
        if self.stripe:
            env += [("PARIO_STRIPE_TARGETS", ",".join(self.stripe_targets(workdir))),
                    ("PARIO_HINT_striping_factor", str(self.stripe[0])),
                    ("PARIO_HINT_striping_unit", str(self.stripe[1]))]
        if self.mpi == "mpich":
            cmd = [self.mpiexec, "-n", str(np)]
            if self.preload:
                cmd += ["-genv", "LD_PRELOAD", self.preload]
            for k, v in env:
                cmd += ["-genv", k, v]
        else:
            cmd = [self.mpiexec, "--oversubscribe", "--allow-run-as-root",
                   "--mca", "btl", "self,vader", "-n", str(np)]
            for k, v in env:
                cmd += ["-x", k + "=" + v]
            if self.preload:
                cmd += ["-x", "LD_PRELOAD=" + self.preload]
            else:
                cmd += ["--mca", "io", "ompio", "--mca", "fcoll", "individual"]
        cmd.append(self.diffgen)
        if self.mpi != "mpich" and not self.preload:
            cmd.append("--seek-end-by-set")
        if self.romio_limits:
            # Set on both sides when either is MPICH: leave out what MPICH
            # 4.0's ROMIO gets wrong, so that both run the same cases.
            cmd += ["--no-eof-reads", "--memtype-lb-zero"]
        cmd += self.gen
        cmd += ["--seed", str(seed), "--cases", cases, "--dir", workdir]
        return cmd


def parse_range(text):
    first, _, last = text.partition("-")
    return int(first), int(last or first)


def run(backend, np, seed, cases, workdir, timeout):
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    for target in backend.stripe_targets(workdir) if backend.stripe else ():
        os.makedirs(target)
    cmd = backend.command(np, seed, cases, workdir)
    start = time.monotonic()
    # A session of its own, so that a hung run is killed with all its ranks.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True, errors="replace", start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        out, rc = (out or "") + "\n(timed out after %d s)" % timeout, -1
    return cmd, rc, out, time.monotonic() - start


def read_log(workdir):
    path = os.path.join(workdir, "diffgen.log")
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return f.read().splitlines()


def case_of_line(lines, index):
    """The case number of the log section holding line index."""
    for i in range(min(index, len(lines) - 1), -1, -1):
        if lines[i].startswith("case "):
            return int(lines[i].split()[1])
        if lines[i].startswith("after finalize: case "):  # --leave-open's file checks
            return int(lines[i].split()[3])
    return None


def repro(backend, np, seed, case, workdir):
    cmd = backend.command(np, seed, "%d-%d" % (case, case), workdir + "-case%d" % case)
    return "mkdir -p %s && %s" % (shlex.quote(workdir + "-case%d" % case),
                                  " ".join(shlex.quote(c) for c in cmd))


def first_log_difference(a_lines, b_lines):
    for i in range(max(len(a_lines), len(b_lines))):
        a = a_lines[i] if i < len(a_lines) else "(end of log)"
        b = b_lines[i] if i < len(b_lines) else "(end of log)"
        if a != b:
            return i, a, b
    return None


def join_striped(workdir):
    """Replaces every striped case file with its logical bytes; how many there were."""
    joined = 0
    for n in sorted(os.listdir(workdir)):
        path = os.path.join(workdir, n)
        if n.endswith(".dat") and pario_stripe.read_layout(path):
            pario_stripe.join(path, path)
            joined += 1
    return joined


def differing_files(a_dir, b_dir):
    """Case files present on one side only or differing in content."""
    names = sorted(set(n for d in (a_dir, b_dir) for n in os.listdir(d)
                       if n.endswith(".dat")))
    bad = []
    for n in names:
        pa, pb = os.path.join(a_dir, n), os.path.join(b_dir, n)
        if not (os.path.exists(pa) and os.path.exists(pb)) or \
                not filecmp.cmp(pa, pb, shallow=False):
            bad.append(n)
    return bad


def report_failed_run(side, cmd, rc, out):
    print("%s run failed (exit %s): %s" % (side.name, rc, " ".join(map(shlex.quote, cmd))))
    lines = out.splitlines()
    for line in lines[:40]:
        print("  | " + line)
    if len(lines) > 40:
        print("  | ... (%d more lines)" % (len(lines) - 40))


def check_alone(b, np, seed, cases, workroot, timeout, keep):
    """Runs one back end and relies on diffgen's own checks (its model)."""
    workdir = os.path.join(workroot, "np%d" % np, b.name)
    cmd, rc, out, secs = run(b, np, seed, cases, workdir, timeout)
    print("np%d %-6s %5.1f s  exit %s" % (np, b.name, secs, rc))
    want = "pario" if b.preload else "the system"
    lines = read_log(workdir)
    ok = rc == 0 and "diffgen: MPI-IO from %s" % want in out and lines and \
        lines[-1] == "end failures=0"
    if not ok:
        report_failed_run(b, cmd, rc, out)
        fails = [i for i, line in enumerate(lines) if " FAIL " in line]
        if fails:
            case = case_of_line(lines, fails[0])
            print("first FAIL (case %s): %s" % (case, lines[fails[0]]))
            print("reproduce:\n  %s" % repro(b, np, seed, case, workdir))
    else:
        print("np%d: %d cases pass diffgen's checks" % (
            np, sum(1 for line in lines if line.startswith("case "))))
        if not keep:
            shutil.rmtree(os.path.join(workroot, "np%d" % np), ignore_errors=True)
    return ok


def compare_np(a, b, np, seed, cases, workroot, timeout, keep):
    """Runs both back ends at one rank count; returns True when they agree."""
    dirs = {}
    results = {}
    for side in (a, b):
        dirs[side] = os.path.join(workroot, "np%d" % np, side.name)
        results[side] = run(side, np, seed, cases, dirs[side], timeout)
        print("np%d %-6s %5.1f s  exit %s" % (np, side.name, results[side][3], results[side][1]))
    ok = True
    for side in (a, b):
        if side.stripe and results[side][1] == 0:
            joined = join_striped(dirs[side])
            print("np%d %-6s %d striped files joined" % (np, side.name, joined))
            if joined == 0:  # the driver never ran: the comparison would prove nothing
                print("np%d: %s made no striped file" % (np, side.name))
                ok = False
        cmd, rc, out, _ = results[side]
        if rc != 0:
            report_failed_run(side, cmd, rc, out)
            ok = False
        # diffgen names the MPI-IO it ran on: a preload that did not take
        # effect would compare the system with itself.
        want = "pario" if side.preload else "the system"
        if rc == 0 and "diffgen: MPI-IO from %s" % want not in out:
            print("%s run did not use %s's MPI-IO:" % (side.name, want))
            report_failed_run(side, cmd, rc, out)
            ok = False
    a_lines, b_lines = read_log(dirs[a]), read_log(dirs[b])
    diff = first_log_difference(a_lines, b_lines)
    if diff:
        i, la, lb = diff
        case = case_of_line(a_lines if i < len(a_lines) else b_lines, i)
        print("np%d: logs differ first at line %d (case %s):" % (np, i + 1, case))
        print("  %-6s: %s" % (a.name, la))
        print("  %-6s: %s" % (b.name, lb))
        if case is not None:
            print("reproduce on %s:\n  %s" % (a.name, repro(a, np, seed, case, dirs[a])))
            print("reproduce on %s:\n  %s" % (b.name, repro(b, np, seed, case, dirs[b])))
        ok = False
    bad = differing_files(dirs[a], dirs[b])
    if bad:
        print("np%d: %d case files differ (cmp %s %s): %s" % (
            np, len(bad), os.path.join(dirs[a], bad[0]), os.path.join(dirs[b], bad[0]),
            " ".join(bad[:10])))
        case = int(bad[0][4:-4])
        print("reproduce on %s:\n  %s" % (a.name, repro(a, np, seed, case, dirs[a])))
        print("reproduce on %s:\n  %s" % (b.name, repro(b, np, seed, case, dirs[b])))
        ok = False
    if not a_lines or not a_lines[-1].startswith("end "):
        print("np%d: %s log is incomplete" % (np, a.name))
        ok = False
    if ok:
        n = sum(1 for line in a_lines if line.startswith("case "))
        print("np%d: %d cases agree" % (np, n))
        if not keep:
            shutil.rmtree(os.path.join(workroot, "np%d" % np), ignore_errors=True)
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--mpi", choices=("openmpi", "mpich"), default="openmpi")
    p.add_argument("--diffgen", required=True)
    p.add_argument("--preload", help="libpario-mpiio.so (the back end under test)")
    p.add_argument("--np", default="1,2,4", help="rank counts, comma separated")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--hint", action="append", default=[], metavar="KEY=VALUE",
                   help="pario hint for the back end under test (PARIO_HINT_KEY), repeatable")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="environment for the back end under test, e.g. PARIO_NODE_SIZE=2 "
                   "(every 2 ranks a node), repeatable")
    p.add_argument("--cases", default="0-99", help="case range A-B run at every rank count")
    p.add_argument("--gen", action="append", default=[], metavar="FLAG",
                   help="diffgen flag for every back end, repeatable: --gen=--focus-agree "
                   "(views empty on some ranks, hints per rank, get_size after collective "
                   "writes, more often), --gen=--leave-open (every case ends with collective "
                   "writes and leaves its file open: MPI_Finalize must keep the bytes)")
    p.add_argument("--workdir", default="diff-work",
                   help="scratch directory; fsync-heavy, so tmpfs (/dev/shm) is fastest")
    p.add_argument("--keep", action="store_true",
                   help="keep the files of rank counts that agree (kept anyway on a mismatch)")
    p.add_argument("--timeout", type=int, default=600, help="seconds per mpiexec")
    p.add_argument("--oracle-only", action="store_true",
                   help="compare the oracle with itself (determinism)")
    p.add_argument("--model-only", action="store_true",
                   help="run pario (or, without --preload, the oracle) alone and rely on "
                   "diffgen's own checks: for an MPI whose MPI-IO is no usable oracle")
    p.add_argument("--stripe", metavar="FACTOR:UNIT",
                   help="pario creates every file striped over FACTOR target directories "
                   "(under the work directory) with stripe unit UNIT bytes; the files are "
                   "joined (pario stripe join) before they are compared")
    p.add_argument("--other-mpi", choices=("openmpi", "mpich"))
    p.add_argument("--other-mpiexec")
    p.add_argument("--other-diffgen")
    args = p.parse_args()

    first, last = parse_range(args.cases)
    cases = "%d-%d" % (first, last)
    nps = [int(x) for x in args.np.split(",") if x]
    if args.mpi == "mpich":
        # MPICH busy-polls: more ranks than cores makes every barrier slow.
        nps = [n for n in nps if n <= 2]

    a = Backend("oracle", args.mpi, args.mpiexec, args.diffgen, gen=args.gen)
    if args.other_mpi:
        b = Backend("other", args.other_mpi, args.other_mpiexec, args.other_diffgen,
                    gen=args.gen)
        if args.other_mpi == "mpich":
            nps = [n for n in nps if n <= 2]
    elif args.oracle_only or (args.model_only and not args.preload):
        b = Backend("again", args.mpi, args.mpiexec, args.diffgen, gen=args.gen)
    else:
        if not args.preload:
            p.error("--preload is required unless --oracle-only or --other-mpi")
        stripe = tuple(int(x) for x in args.stripe.split(":")) if args.stripe else None
        b = Backend("pario", args.mpi, args.mpiexec, args.diffgen, args.preload, args.hint,
                    args.env, args.gen, stripe)

    if args.model_only and args.preload:
        b.romio_limits = False  # no ROMIO in the run: nothing to leave out
    elif a.romio_limits or b.romio_limits:
        a.romio_limits = b.romio_limits = True
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    start = time.monotonic()
    ok = True
    for np in nps:
        if args.model_only:
            ok = check_alone(b if args.preload else a, np, args.seed, cases,
                             os.path.abspath(args.workdir), args.timeout, args.keep) and ok
            continue
        ok = compare_np(a, b, np, args.seed, cases, os.path.abspath(args.workdir),
                        args.timeout, args.keep) and ok
    if ok and not args.keep:
        try:
            os.rmdir(os.path.abspath(args.workdir))
        except OSError:
            pass
    print("%s: %d rank counts x %d cases in %.1f s" % (
        "PASS" if ok else "FAIL", len(nps), last - first + 1, time.monotonic() - start))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
