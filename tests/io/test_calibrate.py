#!/usr/bin/python3
"""`pario calibrate` end to end: it writes one record per file system into the
costs file, keyed by the mount point holding the directory (found here
independently, from /proc/self/mounts), replaces that record when run again
and keeps every other line; `--show` lists the records; and a program opening a
file there runs with the record's figures (cost_report prints what pario put in
effect), whatever figures the record holds, or with the defaults when there is
no record. No figure is checked against a time.

usage: test_calibrate.py --pario BUILD/bin/pario --report cost_report --dir DIR
                         -- MPIEXEC_PREFIX...
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

DEFAULT_WRITE_CALL_BYTES = 32768
DEFAULT_READ_CALL_BYTES = 8192
PREALLOC_MIN = 256 << 10
FOREIGN = ("mount=/pario-test-elsewhere type=nfs write_call_bytes=5 read_call_bytes=6 "
           "reserve=no")

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL {what}", file=sys.stderr)


def mount_of(path):
    """The longest mount point in /proc/self/mounts holding path, and its type."""
    real = os.path.realpath(path)
    best, best_type = "", ""
    with open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            mnt = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[1])
            inside = mnt == "/" or real == mnt or real.startswith(mnt.rstrip("/") + "/")
            if inside and len(mnt) >= len(best):
                best, best_type = mnt, fields[2]
    return best, best_type


def escape(text):
    return re.sub(r"[ \t\n\\]", lambda m: "\\%03o" % ord(m.group()), text)


def fields(line):
    return dict(tok.partition("=")[::2] for tok in line.split() if "=" in tok)


def run(cmd, env, want_rc=0):
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    check(done.returncode == want_rc,
          f"{' '.join(map(str, cmd))}: exit {done.returncode}, wanted {want_rc}\n"
          f"{done.stdout}{done.stderr}")
    return done


def report(args, env, path):
    done = run(args.mpiexec + [args.report, str(path)], env)
    return fields(done.stdout)


def records_for(costs, mount):
    return [fields(l) for l in costs.read_text().splitlines()
            if fields(l).get("mount") == escape(mount)]


def expect_in_effect(args, env, path, write, read, prealloc, recorded, what):
    got = report(args, env, path)
    want = {"pario_write_call_bytes": str(write), "pario_read_call_bytes": str(read),
            "prealloc_min": str(prealloc), "recorded": str(recorded)}
    check(got == want, f"{what}: in effect {got}, wanted {want}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pario", required=True)
    p.add_argument("--report", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("mpiexec", nargs=argparse.REMAINDER)
    args = p.parse_args()
    args.mpiexec = [a for a in args.mpiexec if a != "--"]
    top = Path(args.dir)
    shutil.rmtree(top, ignore_errors=True)
    data = top / "data"
    data.mkdir(parents=True)
    costs = top / "costs"
    costs.write_text(f"# pario costs\n{FOREIGN}\n")
    env = dict(os.environ, PARIO_COSTS=str(costs))
    mount, fstype = mount_of(data)

    done = run([args.pario, "calibrate", "--quick", str(data)], env)
    check("write call" in done.stdout and "record for" in done.stdout,
          f"calibrate prints its figures: {done.stdout}")
    lines = costs.read_text().splitlines()
    check(lines[:2] == ["# pario costs", FOREIGN], f"other lines kept: {lines}")
    recs = records_for(costs, mount)
    check(len(recs) == 1, f"one record for {mount}: {recs}")
    rec = recs[0] if recs else {}
    check(rec.get("type") == fstype, f"record type {rec.get('type')}, mount type {fstype}")
    for key in ("write_call_bytes", "read_call_bytes"):
        check(rec.get(key, "").isdigit() and int(rec[key]) > 0, f"{key} positive: {rec}")
    check(rec.get("reserve") in ("yes", "no"), f"reserve yes or no: {rec}")
    check(rec.get("dir") == escape(str(data.resolve())), f"dir recorded: {rec}")
    check(bool(rec.get("when")) and bool(rec.get("host")), f"when and host recorded: {rec}")

    run([args.pario, "calibrate", "--quick", str(data)], env)
    again = costs.read_text().splitlines()
    check(len(again) == len(lines) and len(records_for(costs, mount)) == 1,
          f"calibrating again replaces the record: {again}")
    shown = run([args.pario, "calibrate", "--show"], env).stdout
    check(mount in shown and "/pario-test-elsewhere" in shown, f"--show lists: {shown}")

    rec = records_for(costs, mount)[0] if records_for(costs, mount) else rec
    target = data / "file"
    expect_in_effect(args, env, target, rec.get("write_call_bytes"), rec.get("read_call_bytes"),
                     PREALLOC_MIN if rec.get("reserve") == "yes" else -1, 1, "the record")

    # The library reads whatever figures the record holds.
    flipped = "no" if rec.get("reserve") == "yes" else "yes"
    text = costs.read_text()
    text = re.sub(r"(mount=" + re.escape(escape(mount)) + r" .*?)write_call_bytes=\d+ "
                  r"read_call_bytes=\d+ reserve=\w+",
                  r"\g<1>write_call_bytes=123457 read_call_bytes=98765 reserve=" + flipped, text)
    costs.write_text(text)
    expect_in_effect(args, env, target, 123457, 98765,
                     PREALLOC_MIN if flipped == "yes" else -1, 1, "an edited record")

    # No record: the defaults, no error.
    none = dict(env, PARIO_COSTS=str(top / "no-such-costs"))
    on_ext4 = fstype == "ext4"
    expect_in_effect(args, none, target, DEFAULT_WRITE_CALL_BYTES, DEFAULT_READ_CALL_BYTES,
                     PREALLOC_MIN if on_ext4 else -1, 0, "no record")

    done = run([args.pario, "calibrate", str(top / "no-such-dir")], env, want_rc=1)
    check("Traceback" not in done.stderr, f"a missing directory is reported: {done.stderr}")
    check(not list(data.glob(".pario-calibrate*")), "the scratch file is removed")

    print(f"{'FAILED' if failures else 'passed'}: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
