#!/usr/bin/python3
"""`pario stripe split|info|join` end to end: a plain file of random bytes split
over target directories (factors 1, 3 and 4; units 4 KiB, 64 KiB and 3001 B)
is read back through pario's stripe driver (stripe_cat) and joined by the tool,
both byte-identical to the original; info names the layout; a plain file is
refused by join."""
import argparse
import os
import shutil
import subprocess
import sys


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pario", required=True)
    p.add_argument("--cat", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("launcher", nargs=argparse.REMAINDER)
    a = p.parse_args()
    launcher = a.launcher[1:] if a.launcher[:1] == ["--"] else a.launcher
    shutil.rmtree(a.dir, ignore_errors=True)
    targets = [os.path.join(a.dir, "t%d" % i) for i in range(4)]
    for t in targets:
        os.makedirs(t)
    plain = os.path.join(a.dir, "plain.bin")
    data = os.urandom(1_000_003)
    with open(plain, "wb") as f:
        f.write(data)
    failures = 0
    for factor, unit in ((1, 4096), (3, 3001), (4, 65536)):
        striped = os.path.join(a.dir, "f%d-u%d.dat" % (factor, unit))
        r = run([a.pario, "stripe", "split", plain, striped, "--targets",
                 ",".join(targets), "--unit", str(unit), "--factor", str(factor)])
        info = run([a.pario, "stripe", "info", striped]).stdout
        out = striped + ".cat"
        cat = run(launcher + [a.cat, striped, out])
        joined = striped + ".joined"
        join = run([a.pario, "stripe", "join", striped, joined])
        checks = {
            "split": r.returncode == 0,
            "info": "unit %d, factor %d, logical size %d" % (unit, factor, len(data)) in info,
            "pario read": cat.returncode == 0 and open(out, "rb").read() == data,
            "join": join.returncode == 0 and open(joined, "rb").read() == data,
        }
        for name, ok in checks.items():
            print("%s factor %d unit %d: %s" % ("ok  " if ok else "FAIL", factor, unit, name))
            failures += not ok
        if not checks["pario read"]:
            print(cat.stdout + cat.stderr)
    refused = run([a.pario, "stripe", "join", plain, plain + ".x"])
    ok = refused.returncode == 1 and "not a striped file" in refused.stderr
    print("%s join refuses a plain file" % ("ok  " if ok else "FAIL"))
    failures += not ok
    if not failures:
        shutil.rmtree(a.dir, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
