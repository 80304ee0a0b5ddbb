#!/usr/bin/python3
"""Runs a program that writes a file with collective writes and ends without
closing it, then checks the file byte for byte.

    run_unclosed.py --mpiexec M --mpi openmpi --np N [--preload P]
                    --backend {pario,system} --ending {finalize,kill}
                    --workdir W --calls C --part B [--delay MS] [--sleep MS]
                    [--reopen] -- PROGRAM [ARG ...]

The program gets: the file path, the ending, calls, part bytes, the salt,
the pario_cb_write_behind_delay hint in ms (0: the default), how long to
sleep in ms, and "reopen" (it first writes and closes another file, the
path with ".first" added, and sleeps, so the file it leaves open takes over
what the closed one used) or "fresh". Every rank r writes calls parts of part bytes,
call j at (j * N + r) * part, with MPI_File_write_at_all (or pario's), byte
i of the file being (7 i + i // 251 + salt) mod 256. Then:
  finalize  the program calls MPI_Finalize without closing the file and
            must exit 0;
  kill      after an MPI_Barrier rank 0 prints "written", every rank sleeps
            and kills itself with SIGKILL: mpiexec must fail.
The program prints "backend: pario" or "backend: system", which must be
--backend. Then the file must hold exactly N * calls * part bytes of the
pattern. The work directory is removed when the test passes.
"""

import argparse
import os
import shutil
import subprocess
import sys

RUN_TIMEOUT = 120  # seconds allowed for the run
OUTPUT_SHOWN = 4000  # characters of output shown
SALT = 5


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--mpi", choices=["openmpi", "mpich"], default="openmpi")
    p.add_argument("--np", type=int, required=True)
    p.add_argument("--preload", help="LD_PRELOAD value: run on pario's drop-in")
    p.add_argument("--backend", choices=["pario", "system"], required=True)
    p.add_argument("--ending", choices=["finalize", "kill"], required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--calls", type=int, default=8)
    p.add_argument("--part", type=int, default=100)
    p.add_argument("--delay", type=int, default=0, help="pario_cb_write_behind_delay, ms")
    p.add_argument("--sleep", type=int, default=0, help="ms slept before SIGKILL")
    p.add_argument("--reopen", action="store_true", help="write and close another file first")
    p.add_argument("program", nargs="+")
    return p.parse_args()


def mpiexec_command(args):
    if args.mpi == "mpich":
        cmd = [args.mpiexec, "-n", str(args.np)]
        if args.preload:
            cmd += ["-genv", "LD_PRELOAD", args.preload]
        return cmd
    cmd = [args.mpiexec, "--oversubscribe", "--allow-run-as-root", "--mca", "btl", "self,vader",
           "-n", str(args.np)]
    cmd += ["-x", "LD_PRELOAD=" + args.preload] if args.preload else ["--mca", "io", "ompio"]
    return cmd


def tail(text):
    return text if len(text) <= OUTPUT_SHOWN else "...\n" + text[-OUTPUT_SHOWN:]


def run(args, path):
    cmd = mpiexec_command(args) + args.program + [
        path, args.ending, str(args.calls), str(args.part), str(SALT), str(args.delay),
        str(args.sleep), "reopen" if args.reopen else "fresh"]
    print(" ".join(cmd), flush=True)
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return "the run timed out after %d s" % RUN_TIMEOUT
    output = res.stdout + res.stderr
    print(tail(output), end="" if output.endswith("\n") else "\n", flush=True)
    if "backend: %s" % args.backend not in res.stdout:
        return "the program did not report 'backend: %s'" % args.backend
    if args.ending == "finalize" and res.returncode != 0:
        return "the run failed (exit %d)" % res.returncode
    if args.ending == "kill":
        if res.returncode == 0:
            return "the run succeeded, but its ranks were to kill themselves"
        if "written" not in res.stdout:
            return "the ranks died before their writes were done"
    return None


def check_file(args, path):
    want_len = args.np * args.calls * args.part
    want = bytes((7 * i + i // 251 + SALT) % 256 for i in range(want_len))
    try:
        with open(path, "rb") as f:
            got = f.read()
    except OSError as e:
        return "cannot read %s: %s" % (path, e)
    if got == want:
        print("%s: %d bytes, as written" % (path, want_len))
        return None
    first = next((i for i in range(min(len(got), want_len)) if got[i] != want[i]),
                 min(len(got), want_len))
    return "%s: %d bytes, expected %d; first difference at offset %d" % (
        path, len(got), want_len, first)


def main():
    args = parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    path = os.path.join(args.workdir, "unclosed.dat")
    problem = run(args, path) or check_file(args, path)
    if problem:
        print("FAIL: " + problem)
        return 1
    shutil.rmtree(args.workdir, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
