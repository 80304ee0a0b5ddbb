#!/usr/bin/python3
"""Fault-injection harness: one storage call of one rank fails, and the ranks
must agree, not hang and not lose bytes.

For each scenario (fault_scenario --list; tests/fault/README.md) the driver
first runs it with PARIO_FAULT_COUNT set and no fault, which must pass every
check below with no error at all, and learns N: how many storage calls the
chosen ranks make (per op). Then it runs it once per fault: the n-th call
(op=any) of rank R fails with ENOSPC, for n = 1..N, and with EIO and as a
short transfer (op=write and op=read) for every k-th n, R being one rank
other than 0 and then rank 0; so does, as ENOMEM, every k-th scratch buffer
the rank reserves (op=mem). --budget caps the runs per scenario (k grows
to fit); --full runs every n of every kind.

After each run it checks, from the ranks' records (DIR/result.RANK), the
plan (DIR/plan) and the file read with plain reads:
  hang     the run ended within --timeout and every rank recorded its close;
  agree    on every step whose failures are agreed (collective calls of
           agreeing paths, sync, set_size, preallocate, close), every rank
           got the same outcome: success, or the same error class and the
           same message (" (on rank N)" aside); on a deferred step (kept
           writes, each rank's own collective reads) every rank has reported
           the failure by the next sync or close; local steps (independent
           calls) concern only their rank;
  class    a rank's first error has the injected error's class;
  surfaced an injected ENOSPC or EIO that fired made some call fail;
  reads    no read succeeded with bytes other than the steps wrote;
  bytes    every byte written by steps that all succeeded and were followed
           by a sync (or close) that succeeded before any error holds its
           value, bytes nobody wrote hold the prefill pattern, and the bytes
           of later steps hold either of those or what one of those steps
           wrote; the file's size is one the steps allow.
Each failing case is printed with its reasons, every rank's records and
the commands that reproduce it.
"""
import argparse
import bisect
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

# Scenario: ranks, environment, the rank other than 0 whose calls fail.
SCENARIOS = {
    "kept": (4, {}, 1),
    "keptsmall": (4, {}, 2),
    "funnel": (4, {}, 1),
    "twophase": (4, {"PARIO_NODE_SIZE": "2"}, 2),
    "twophase1": (3, {}, 1),
    "settled": (4, {"PARIO_NODE_SIZE": "2"}, 2),
    "stripe": (4, {}, 2),
    "nodes": (4, {"PARIO_NODE_SIZE": "2"}, 3),
    "readonly": (4, {"PARIO_NODE_SIZE": "2"}, 3),
    "ownread": (4, {}, 1),
    "sieved": (4, {}, 2),
    "indep": (3, {}, 1),
    "indepsieve": (3, {}, 2),
    "indepspan": (3, {}, 1),
}
ERROR_CLASS = {"ENOSPC": "NO_SPACE", "EIO": "IO", "ENOMEM": "NO_MEM"}
RANK_NOTE = re.compile(r" \(on rank \d+\)")
NOTE_TEXT = " (on rank "


def without_rank_note(msg):
    """The message without its " (on rank N)" note, also when MPI's message
    length limit cut the note short at the end (long paths)."""
    msg = RANK_NOTE.sub("", msg)
    tail = re.search(r" \(on rank \d*$", msg)
    if tail:
        return msg[:tail.start()]
    for n in range(len(NOTE_TEXT) - 1, 0, -1):
        if msg.endswith(NOTE_TEXT[:n]):
            return msg[:-n]
    return msg


def pattern_base(size):
    """Bytes of step 0's pattern, repeated past size + 251: the pattern of
    step s at offset o is this at o + shift(s) (31 is invertible mod 251)."""
    period = bytes((i * 31 + 11) % 251 for i in range(251))
    return period * (size // 251 + 3)


def shift(step):
    return (97 * step * pow(31, -1, 251)) % 251


def pattern(step, off):
    """Byte that step writes at file offset off (scenario.c: pattern)."""
    return (off * 31 + step * 97 + 11) % 251


class Plan:
    def __init__(self, path):
        self.steps = {}  # step -> (kind, mode)
        self.exts = {}  # step -> [(off, len)] of every rank
        self.resize = {}  # step -> new size
        self.nranks = self.size = self.nsteps = 0
        with open(path) as f:
            for line in f:
                w = line.split()
                if w[0] == "ranks":
                    self.nranks = int(w[1])
                elif w[0] == "size":
                    self.size = int(w[1])
                elif w[0] == "steps":
                    self.nsteps = int(w[1])
                elif w[0] == "step":
                    self.steps[int(w[1])] = (w[2], w[3])
                elif w[0] == "ext":
                    self.exts.setdefault(int(w[1]), []).append((int(w[3]), int(w[4])))
                elif w[0] == "resize":
                    self.resize[int(w[1])] = int(w[2])
        self.close = self.nsteps + 1
        self.steps[self.close] = ("close", "agreed")
        for e in self.exts.values():
            e.sort()

    def is_point(self, step):
        """A sync or the close: where deferred failures must be known."""
        return self.steps[step][0] in ("sync", "close")


class Records:
    """One rank's result file: step -> (status, class, message)."""

    def __init__(self, path):
        self.steps = {}
        self.ended = False
        self.last = "(no record)"
        if not os.path.exists(path):
            return
        with open(path, errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                if line == "end":
                    self.ended = True
                    continue
                w = line.split("\t")
                if len(w) == 5:
                    self.steps.setdefault(int(w[0]), []).append((w[2], w[3], w[4], w[1]))
                    self.last = line.replace("\t", " ")

    def outcome(self, step):
        """The step's outcome: 'bad' wins over the call's own result."""
        r = self.steps.get(step)
        if not r:
            return None
        bad = [x for x in r if x[0] == "bad"]
        return (bad or r)[-1][:3]

    def first_error(self):
        for s in sorted(self.steps):
            o = self.outcome(s)
            if o and o[0] == "err":
                return s, o
        return None


def read_counts(path):
    counts = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                kv = dict(x.split("=", 1) for x in line.split())
                rank = int(kv.pop("rank"))
                counts[rank] = {k: int(v) for k, v in kv.items()}
    return counts


class Case:
    def __init__(self, scenario, rank=None, call=None, op=None, error=None, sticky=False):
        self.scenario, self.rank, self.call, self.op, self.error = scenario, rank, call, op, error
        self.sticky = sticky

    @staticmethod
    def parse(scenario, spec):
        kv = dict(x.split("=", 1) if "=" in x else (x, "1") for x in spec.split(","))
        return Case(scenario, int(kv["rank"]), int(kv["call"]), kv["op"], kv["error"],
                    "sticky" in kv)

    def spec(self):
        if self.rank is None:
            return None
        return "rank=%d,call=%d,op=%s,error=%s%s" % (self.rank, self.call, self.op, self.error,
                                                     ",sticky" if self.sticky else "")

    def name(self):
        return "%s %s" % (self.scenario, self.spec() or "(no fault)")

    def dirname(self):
        if self.rank is None:
            return "count"
        return "r%d-n%d-%s-%s%s" % (self.rank, self.call, self.op, self.error,
                                    "-sticky" if self.sticky else "")


class Harness:
    def __init__(self, args):
        self.args = args

    def command(self, case, workdir):
        np, env, _ = SCENARIOS[case.scenario]
        env = dict(env)
        env["PARIO_FAULT_COUNT"] = os.path.join(workdir, "counts")
        if case.spec():
            env["PARIO_FAULT"] = case.spec()
        a = self.args
        if a.mpi == "mpich":
            cmd = [a.mpiexec, "-n", str(np), "-genv", "LD_PRELOAD", a.preload]
            for k, v in sorted(env.items()):
                cmd += ["-genv", k, v]
        else:
            cmd = [a.mpiexec, "--oversubscribe", "--allow-run-as-root", "--mca", "btl",
                   "self,vader", "-n", str(np), "-x", "LD_PRELOAD=" + a.preload]
            for k, v in sorted(env.items()):
                cmd += ["-x", "%s=%s" % (k, v)]
        return cmd + [a.program, case.scenario, workdir]

    def run(self, case):
        workdir = os.path.join(self.args.workdir, case.scenario, case.dirname())
        shutil.rmtree(workdir, ignore_errors=True)
        os.makedirs(workdir)
        cmd = self.command(case, workdir)
        start = time.monotonic()
        # A session of its own, so that a hung run is killed with all its ranks.
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                universal_newlines=True, errors="replace",
                                start_new_session=True)
        hung = False
        try:
            out, _ = proc.communicate(timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            hung = True
        return Run(case, cmd, workdir, proc.returncode, out, hung, time.monotonic() - start)


class Run:
    def __init__(self, case, cmd, workdir, rc, out, hung, secs):
        self.case, self.cmd, self.workdir = case, cmd, workdir
        self.rc, self.out, self.hung, self.secs = rc, out or "", hung, secs
        plan = os.path.join(workdir, "plan")
        self.plan = Plan(plan) if os.path.exists(plan) else None
        n = self.plan.nranks if self.plan else SCENARIOS[case.scenario][0]
        self.recs = [Records(os.path.join(workdir, "result.%d" % r)) for r in range(n)]
        self.counts = read_counts(os.path.join(workdir, "counts"))
        self.problems = []

    def fired(self):
        c = self.counts.get(self.case.rank, {})
        return c.get("fired", 0)

    # ---- the checks ----------------------------------------------------------------

    def check(self, timeout):
        p = self.problems
        if self.hung:
            p.append("hang: the run did not end within %d s" % timeout)
        elif self.rc != 0:
            p.append("the run exited with status %s" % self.rc)
        if not self.plan:
            p.append("no plan written (the program did not start)")
            return p
        opened = self.open_agreed_failure()
        for r, rec in enumerate(self.recs):
            if not rec.ended:
                p.append("rank %d did not finish; its last record: %s" % (r, rec.last))
            elif rec.outcome(0) != ("ok", "SUCCESS", "") and not opened:
                p.append("rank %d: open or set_view failed: %s" % (r, rec.last))
        if opened:  # nothing else ran: the file must still hold the prefill
            self.check_bytes()
            return p
        self.check_steps()
        self.check_reads()
        self.check_errors()
        self.check_bytes()
        return p

    def open_agreed_failure(self):
        """A striped file's open reads its layout record, a storage call: when
        that call fails the open fails, and it must fail alike on every rank
        (the same class and message)."""
        if not self.fired() or not all(r.ended for r in self.recs):
            return False
        outs = [r.outcome(0) for r in self.recs]
        if not outs or any(o is None or o[0] != "err" for o in outs):
            return False
        same = {(o[1], without_rank_note(o[2])) for o in outs}
        return len(same) == 1 and "read layout of" in outs[0][2]

    def outcomes(self, step):
        return [rec.outcome(step) for rec in self.recs]

    def check_steps(self):
        plan = self.plan
        for step in range(1, plan.close + 1):
            kind, mode = plan.steps[step]
            outs = self.outcomes(step)
            if all(o is None or o[0] == "skip" for o in outs):
                continue
            if mode == "agreed":
                self.check_agreed(step, kind, outs)
            elif mode == "deferred":
                self.check_deferred(step, kind, outs)

    def check_agreed(self, step, kind, outs):
        seen = set()
        for o in outs:
            if o is None:
                seen.add(("missing",))
            elif o[0] == "err":
                seen.add(("err", o[1], without_rank_note(o[2])))
            else:
                seen.add((o[0] if o[0] != "bad" else "ok",))
        if len(seen) > 1:
            self.problems.append("step %d (%s): the ranks disagree: %s" % (
                step, kind, "; ".join("rank %d %s" % (r, describe(o)) for r, o in enumerate(outs))))

    def check_deferred(self, step, kind, outs):
        if not any(o and o[0] == "err" for o in outs):
            return
        point = next(s for s in range(step, self.plan.close + 1) if self.plan.is_point(s))
        for r, rec in enumerate(self.recs):
            if not any((rec.outcome(s) or ("",))[0] == "err" for s in range(step, point + 1)):
                self.problems.append(
                    "step %d (%s) failed on rank %s, but rank %d has not reported it by step %d "
                    "(%s): %s" % (step, kind, ",".join(
                        str(i) for i, o in enumerate(outs) if o and o[0] == "err"), r, point,
                        self.plan.steps[point][0], describe(rec.outcome(point))))

    def check_reads(self):
        for r, rec in enumerate(self.recs):
            for step in sorted(rec.steps):
                for status, _, msg, kind in rec.steps[step]:
                    if status == "bad":
                        self.problems.append("step %d (%s) on rank %d succeeded with wrong "
                                             "data: %s" % (step, kind, r, msg))

    def check_errors(self):
        case = self.case
        firsts = [(r, rec.first_error()) for r, rec in enumerate(self.recs)]
        firsts = [(r, f) for r, f in firsts if f]
        if case.error is None:
            for r, (step, o) in firsts:
                self.problems.append("no fault injected, yet rank %d failed at step %d: %s"
                                     % (r, step, describe(o)))
            return
        want = ERROR_CLASS.get(case.error)
        for r, (step, o) in firsts:
            if want and o[1] != want:
                self.problems.append("rank %d: first error (step %d) has class %s, expected %s: "
                                     "%s" % (r, step, o[1], want, o[2]))
        if want and self.fired() and not firsts:
            self.problems.append("the injected %s fired (%d call(s)) but no call reported an "
                                 "error" % (case.error, self.fired()))

    def committed_point(self):
        """The last sync (or the close) before which every step succeeded on
        every rank and which itself did; 0 when there is none."""
        last = 0
        for step in range(1, self.plan.close + 1):
            outs = self.outcomes(step)
            if not all(o and o[0] == "ok" for o in outs):
                break
            if self.plan.is_point(step):
                last = step
        return last

    def check_bytes(self):
        plan = self.plan
        path = os.path.join(self.workdir, "file.dat")
        if not os.path.exists(path):
            self.problems.append("the file is gone")
            return
        got = logical_bytes(path)
        point = self.committed_point()
        issued = [s for s in range(point + 1, plan.close) if any(
            o and o[0] != "skip" for o in self.outcomes(s))]
        size = plan.size
        for s in sorted(plan.resize):
            size = plan.resize[s] if s <= point else size
        sizes = {size} | {plan.resize[s] for s in issued if s in plan.resize}
        if len(got) not in sizes:
            self.problems.append("file size %d, expected %s" % (
                len(got), " or ".join(str(x) for x in sorted(sizes))))
        want, owner = self.committed_image(point, max(sizes))
        open_steps = [s for s in issued if s in plan.exts]
        bad = self.compare(got, want, owner, open_steps)
        if bad:
            self.problems.append("%d byte(s) wrong in the file (committed through step %d; "
                                 "steps that may have changed bytes since: %s); first: %s" % (
                                     bad[0], point, ",".join(map(str, open_steps)) or "none",
                                     "; ".join(bad[1])))

    def committed_image(self, point, size):
        """The file every step through `point` makes (bytes a resize adds
        read as zeros), and which step wrote each extent (for messages)."""
        base = pattern_base(max(size, self.plan.size))
        img = bytearray(base[:self.plan.size]) + bytearray(max(0, size - self.plan.size))
        owner = []
        for step in range(1, point + 1):
            for off, n in self.plan.exts.get(step, []):
                d = (off + shift(step)) % 251
                img[off:off + n] = base[d:d + n]
                owner.append((off, off + n, step))
        return img, owner

    def compare(self, got, want, owner, open_steps):
        """Offsets where the file holds neither the committed byte nor one an
        open step wrote there. Returns (count, first few descriptions)."""
        ranges = {s: self.plan.exts[s] for s in open_steps}
        starts = {s: [e[0] for e in r] for s, r in ranges.items()}
        n = min(len(got), len(want))
        count, first = 0, []
        for start in range(0, n, 4096):
            end = min(n, start + 4096)
            if got[start:end] == want[start:end]:
                continue
            for o in range(start, end):
                if got[o] == want[o]:
                    continue
                ok = False
                for s in open_steps:
                    i = bisect.bisect_right(starts[s], o) - 1
                    if i >= 0 and o < ranges[s][i][0] + ranges[s][i][1] and \
                            got[o] == pattern(s, o):
                        ok = True
                        break
                if ok:
                    continue
                count += 1
                if len(first) < 3:
                    first.append("offset %d holds %d, expected %d (%s)" % (
                        o, got[o], want[o], who_wrote(owner, o)))
        return (count, first) if count else None


def logical_bytes(path):
    """The file's bytes; a striped file's (a layout record, see
    src/io/driver/stripe.h) joined from its objects."""
    with open(path, "rb") as f:
        got = f.read()
    if not got.startswith(b"pario-stripe-layout 1\n"):
        return got
    unit, objects = 0, []
    for line in got.decode().splitlines()[1:]:
        key, _, value = line.partition(" ")
        if key == "unit":
            unit = int(value)
        elif key == "object":
            with open(value, "rb") as f:
                objects.append(f.read())
    factor = len(objects)
    ends = [((len(o) - 1) // unit * factor + i) * unit + (len(o) - 1) % unit + 1
            if o else 0 for i, o in enumerate(objects)]
    image = bytearray(max(ends) if ends else 0)
    for stripe in range(0, (len(image) + unit - 1) // unit):
        obj = objects[stripe % factor]
        at = stripe // factor * unit
        piece = obj[at:at + unit]
        image[stripe * unit:stripe * unit + len(piece)] = piece
    return bytes(image)


def who_wrote(owner, o):
    steps = [s for a, b, s in owner if a <= o < b]
    return "written by step %d" % steps[-1] if steps else "the prefill"


def describe(o):
    if o is None:
        return "no record"
    if o[0] == "err":
        return "error %s '%s'" % (o[1], o[2])
    return o[0]


# ---- choosing the faults --------------------------------------------------------------


def every_kth(n, k, first, last=False):
    """1..n every k-th from first (with last: and n itself)."""
    picks = list(range(first, n + 1, k))
    if last and n >= 1 and n not in picks:
        picks.append(n)
    return picks


def fault_cases(scenario, counts, args):
    """The faults to run unless args.full: ENOSPC (op=any) at every n of each
    chosen rank while that fits args.budget (else every k-th), then a third
    of the budget more, spread evenly over EIO (any), short transfers (write
    and read), failed byte-range locks (EIO) and a disk that stays full
    (ENOSPC sticky, write) of each rank, and a third more over the scratch
    buffers each rank reserves (ENOMEM, mem)."""
    _, _, other = SCENARIOS[scenario]
    ranks = [r for r in (args.rank or (other, 0)) if r in counts]
    k = 1
    if not args.full and ranks:
        k = max(1, -(-sum(counts[r]["any"] for r in ranks) // max(1, args.budget)))
    cases = [Case(scenario, r, n, "any", "ENOSPC") for r in ranks
             for n in every_kth(counts[r]["any"], k, 1, last=True)]
    others = []
    for r in ranks:
        c = counts[r]
        others += [Case(scenario, r, n, "any", "EIO") for n in range(1, c["any"] + 1)]
        for op in ("write", "read"):
            others += [Case(scenario, r, n, op, "short") for n in range(1, c[op] + 1)]
        others += [Case(scenario, r, n, "lock", "EIO") for n in range(1, c["lock"] + 1)]
        others += [Case(scenario, r, n, "write", "ENOSPC", sticky=True)
                   for n in range(1, c["write"] + 1)]
    mem = [Case(scenario, r, n, "mem", "ENOMEM") for r in ranks
           for n in range(1, counts[r].get("mem", 0) + 1)]
    return cases + spread(others, args) + spread(mem, args)


def spread(cases, args):
    """A third of args.budget of cases, evenly spread (all with args.full)."""
    if args.full or not cases:
        return cases
    step = -(-len(cases) // max(1, args.budget // 3))
    return cases[step // 2::step]


# ---- reporting ---------------------------------------------------------------------------


def report(run, args):
    print("FAIL %s" % run.case.name())
    for problem in run.problems:
        print("  - %s" % problem)
    for r, rec in enumerate(run.recs):
        steps = []
        for s in sorted(rec.steps):
            o = rec.outcome(s)
            steps.append("%d:%s" % (s, o[0] if o[0] != "err" else "err(%s)" % o[1]))
        print("  rank %d: %s%s" % (r, " ".join(steps), "" if rec.ended else " (unfinished)"))
    lines = [x for x in run.out.splitlines() if x.strip()]
    for line in lines[:12]:
        print("  | " + line)
    one = [sys.executable, os.path.abspath(__file__), "--mpiexec", path_arg(args.mpiexec),
           "--mpi", args.mpi, "--preload", path_arg(args.preload), "--program",
           path_arg(args.program), "--workdir", args.workdir, "--scenario", run.case.scenario]
    if run.case.spec():
        one += ["--case", run.case.spec()]
    print("  reproduce: %s" % " ".join(shlex.quote(x) for x in one))
    print("  by hand:   %s" % " ".join(shlex.quote(x) for x in run.cmd))
    print("  files:     %s" % run.workdir)


def path_arg(x):
    """x as an absolute path when it names a file from here (else a command)."""
    return os.path.abspath(x) if os.path.exists(x) else x


def run_scenario(h, scenario, args):
    """Count, then the faults. Returns (passed, failed)."""
    start = time.monotonic()
    base = h.run(Case(scenario))
    if base.check(args.timeout):
        report(base, args)
        print("%s: the run without a fault fails; no faults injected" % scenario)
        return 0, 1
    counts = base.counts
    if not args.keep:
        shutil.rmtree(base.workdir, ignore_errors=True)
    print("%s: %.1f s without a fault; calls per rank: %s" % (scenario, base.secs, "; ".join(
        "%d: %s" % (r, " ".join("%s=%d" % kv for kv in sorted(c.items()) if kv[0] != "fired"))
        for r, c in sorted(counts.items()))))
    if args.case:
        cases = [Case.parse(scenario, args.case)]
    else:
        cases = fault_cases(scenario, counts, args)
    if args.ops:
        cases = [c for c in cases if c.op in args.ops.split(",")]
    passed, failed, hangs, unfired = 1, 0, 0, 0
    for i, case in enumerate(cases):
        if hangs >= args.max_hangs:
            print("%s: %d case(s) not run after %d hangs" % (scenario, len(cases) - i, hangs))
            failed += len(cases) - i
            break
        run = h.run(case)
        if not run.check(args.timeout):
            passed += 1
            unfired += case.call <= counts.get(case.rank, {}).get(case.op, 0) and not run.fired()
            if not args.keep:
                shutil.rmtree(run.workdir, ignore_errors=True)
            continue
        failed += 1
        hangs += run.hung
        report(run, args)
    note = " (%d fault(s) did not fire: the call count differed)" % unfired if unfired else ""
    print("%s: %d fault cases, %d failed, %.1f s%s" % (
        scenario, len(cases), failed, time.monotonic() - start, note))
    return passed, failed


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--mpi", choices=("openmpi", "mpich"), default="openmpi")
    p.add_argument("--preload", required=True, help="libpario-mpiio.so")
    p.add_argument("--program", required=True, help="the fault_scenario binary")
    p.add_argument("--scenario", action="append", default=[],
                   help="scenario to run (repeatable; default all): %s" % ", ".join(SCENARIOS))
    p.add_argument("--ops", help="run only the cases of these ops, e.g. mem or write,read")
    p.add_argument("--case", help="run only this fault, e.g. rank=1,call=3,op=any,error=EIO")
    p.add_argument("--budget", type=int, default=36,
                   help="ENOSPC runs per scenario at most (at every n while they fit), and a "
                   "third of it more for the other kinds, spread evenly over them")
    p.add_argument("--full", action="store_true", help="every n for every error kind")
    p.add_argument("--rank", type=int, action="append", default=[],
                   help="fail this rank's calls (repeatable; default one rank other than 0, "
                   "then rank 0)")
    p.add_argument("--timeout", type=int, default=60, help="seconds per run")
    p.add_argument("--max-hangs", type=int, default=2,
                   help="stop a scenario after this many hangs")
    p.add_argument("--workdir", default="fault-work")
    p.add_argument("--keep", action="store_true", help="keep the files of passing runs")
    args = p.parse_args()
    args.workdir = os.path.abspath(args.workdir)
    args.mpiexec, args.preload, args.program = map(path_arg, (args.mpiexec, args.preload,
                                                           args.program))
    for s in args.scenario:
        if s not in SCENARIOS:
            p.error("unknown scenario %s" % s)
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    h = Harness(args)
    start = time.monotonic()
    passed = failed = 0
    for s in args.scenario or list(SCENARIOS):
        a, b = run_scenario(h, s, args)
        passed, failed = passed + a, failed + b
    if not failed and not args.keep:
        shutil.rmtree(args.workdir, ignore_errors=True)
    print("fault: %d passed, %d failed (%.1f s)" % (passed, failed, time.monotonic() - start))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
