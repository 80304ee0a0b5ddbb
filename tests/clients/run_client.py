#!/usr/bin/python3
"""Runs one client application twice, on the system's MPI-IO and with pario's
drop-in preloaded, each into its own directory, and compares what they wrote.

    run_client.py --mpiexec M --mpi openmpi --preload P --np N --workdir W
                  --compare {bytes,hdf5,pnetcdf} [--tool NAME=PATH ...]
                  [--expect FILE ...] -- PROGRAM [ARG ...]

The program gets its output directory as its last argument, must exit 0 (it
verifies what it reads itself) and must print "backend: system" on the
system run and "backend: pario" on the pario run, which proves the drop-in
really took the MPI_File_* calls. Then both directories must hold the same
files, and for each file:
  bytes    the two files are byte-identical;
  hdf5     h5diff finds no difference, h5dump prints the same text (the line
           naming the file aside), and the files are byte-identical (the
           clients turn off object timestamps, so HDF5 lays out the same
           bytes whatever MPI-IO carries them);
  pnetcdf  ncmpidump prints the same text and the files are byte-identical.
With --missing TEXT the test only reports what is missing and fails.
The work directory is removed when everything matches and kept otherwise.
"""

import argparse
import os
import shutil
import subprocess
import sys

RUN_TIMEOUT = 120  # seconds allowed for one run of a client
TOOL_TIMEOUT = 60  # seconds allowed for one h5diff / h5dump / ncmpidump
OUTPUT_SHOWN = 4000  # characters of a failing command's output shown

# The Debian package that provides each comparison tool.
TOOL_PACKAGES = {"h5diff": "hdf5-tools", "h5dump": "hdf5-tools", "ncmpidump": "pnetcdf-bin"}
COMPARE_TOOLS = {"bytes": [], "hdf5": ["h5diff", "h5dump"], "pnetcdf": ["ncmpidump"]}


class Mismatch(Exception):
    pass


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--mpi", choices=["openmpi", "mpich"], default="openmpi")
    p.add_argument("--preload", required=True, help="LD_PRELOAD value for the pario run")
    p.add_argument("--np", type=int, required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--compare", choices=sorted(COMPARE_TOOLS), default="bytes")
    p.add_argument("--tool", action="append", default=[], metavar="NAME=PATH")
    p.add_argument("--expect", action="append", default=[], metavar="FILE",
                   help="a file each run must produce")
    p.add_argument("--no-leak-check", action="store_true",
                   help="sanitizer build: turn off leak reports of the clients")
    p.add_argument("--missing", help="report this missing dependency and fail")
    p.add_argument("program", nargs="*")
    return p.parse_args()


def tail(text):
    return text if len(text) <= OUTPUT_SHOWN else "...\n" + text[-OUTPUT_SHOWN:]


def as_text(output):
    """A timed-out run's output may come back as bytes even in text mode."""
    if isinstance(output, bytes):
        return output.decode(errors="replace")
    return output or ""


def mpiexec_command(args, pario):
    if args.mpi == "mpich":
        cmd = [args.mpiexec, "-n", str(args.np)]
        if pario:
            cmd += ["-genv", "LD_PRELOAD", args.preload]
        if args.no_leak_check:
            cmd += ["-genv", "ASAN_OPTIONS", "detect_leaks=0"]
        return cmd
    cmd = [args.mpiexec, "--oversubscribe", "--allow-run-as-root", "--mca", "btl", "self,vader",
           "-n", str(args.np)]
    cmd += ["-x", "LD_PRELOAD=" + args.preload] if pario else ["--mca", "io", "ompio"]
    if args.no_leak_check:
        cmd += ["-x", "ASAN_OPTIONS=detect_leaks=0"]
    return cmd


def run_client(args, variant, outdir):
    cmd = mpiexec_command(args, variant == "pario") + args.program + [outdir]
    print("[%s] %s" % (variant, " ".join(cmd)), flush=True)
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env)
    except subprocess.TimeoutExpired as e:
        raise Mismatch("%s run timed out after %d s\n%s"
                       % (variant, RUN_TIMEOUT, tail(as_text(e.stdout))))
    output = res.stdout + res.stderr
    print(tail(output), end="" if output.endswith("\n") else "\n", flush=True)
    if res.returncode != 0:
        raise Mismatch("%s run failed (exit %d)" % (variant, res.returncode))
    if ("backend: %s" % variant) not in res.stdout:
        raise Mismatch("%s run: the program did not report 'backend: %s', so the MPI_File_* "
                       "calls did not go where intended" % (variant, variant))


def tool_output(path, argv):
    res = subprocess.run([path] + argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT)
    return res.returncode, res.stdout, res.stderr


def first_difference(a, b):
    for i in range(min(len(a), len(b))):
        if a[i] != b[i]:
            return i
    return min(len(a), len(b))


def compare_bytes(sys_file, pario_file):
    with open(sys_file, "rb") as f:
        a = f.read()
    with open(pario_file, "rb") as f:
        b = f.read()
    if a != b:
        raise Mismatch("%s: not byte-identical (system %d bytes, pario %d bytes, first "
                       "difference at offset %d)" % (os.path.basename(sys_file), len(a), len(b),
                                                     first_difference(a, b)))


def without_file_name(dump):
    """h5dump's first line names the file; the rest is the content."""
    lines = dump.splitlines()
    return lines[1:] if lines and lines[0].startswith("HDF5 ") else lines


def text_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "line %d:\n  system: %s\n  pario:  %s" % (i + 1, x, y)
    return "system %d lines, pario %d lines" % (len(a), len(b))


def compare_hdf5(tools, sys_file, pario_file):
    name = os.path.basename(sys_file)
    rc, out, err = tool_output(tools["h5diff"], [sys_file, pario_file])
    if rc != 0:
        _, detail, _ = tool_output(tools["h5diff"], ["-r", sys_file, pario_file])
        raise Mismatch("%s: h5diff exit %d (1: differences, 2: error)\n%s%s"
                       % (name, rc, tail(detail), err))
    dumps = []
    for f in (sys_file, pario_file):
        rc, out, err = tool_output(tools["h5dump"], [f])
        if rc != 0:
            raise Mismatch("h5dump %s failed (exit %d): %s" % (f, rc, err))
        dumps.append(without_file_name(out))
    if dumps[0] != dumps[1]:
        raise Mismatch("%s: h5dump output differs at %s" % (name, text_difference(*dumps)))
    compare_bytes(sys_file, pario_file)
    print("%s: h5diff no differences, h5dump identical (%d lines), byte-identical"
          % (name, len(dumps[0])))


def compare_pnetcdf(tools, sys_file, pario_file):
    name = os.path.basename(sys_file)
    dumps = []
    for f in (sys_file, pario_file):
        # Each dump runs in the file's directory, so both name it alike.
        res = subprocess.run([tools["ncmpidump"], name], capture_output=True, text=True,
                             timeout=TOOL_TIMEOUT, cwd=os.path.dirname(f))
        if res.returncode != 0:
            raise Mismatch("ncmpidump %s failed (exit %d): %s" % (f, res.returncode, res.stderr))
        dumps.append(res.stdout.splitlines())
    if dumps[0] != dumps[1]:
        raise Mismatch("%s: ncmpidump output differs at %s" % (name, text_difference(*dumps)))
    compare_bytes(sys_file, pario_file)
    print("%s: ncmpidump identical (%d lines), byte-identical" % (name, len(dumps[0])))


def compare_runs(args, tools, sys_dir, pario_dir):
    sys_files, pario_files = sorted(os.listdir(sys_dir)), sorted(os.listdir(pario_dir))
    if sys_files != pario_files:
        raise Mismatch("the runs wrote different files: system %s, pario %s"
                       % (sys_files, pario_files))
    for want in args.expect:
        path = os.path.join(sys_dir, want)
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            raise Mismatch("the system run did not write %s" % want)
    for name in sys_files:
        a, b = os.path.join(sys_dir, name), os.path.join(pario_dir, name)
        if args.compare == "hdf5":
            compare_hdf5(tools, a, b)
        elif args.compare == "pnetcdf":
            compare_pnetcdf(tools, a, b)
        else:
            compare_bytes(a, b)
            print("%s: byte-identical (%d bytes)" % (name, os.path.getsize(a)))


def resolve_tools(args):
    given = dict(t.split("=", 1) for t in args.tool)
    tools = {}
    for name in COMPARE_TOOLS[args.compare]:
        path = given.get(name) or shutil.which(name)
        if not path or path.endswith("NOTFOUND") or not os.access(path, os.X_OK):
            raise Mismatch("missing tool %s (Debian package %s)" % (name, TOOL_PACKAGES[name]))
        tools[name] = path
    return tools


def main():
    args = parse_args()
    if args.missing:
        print("clients: MISSING: %s" % args.missing, file=sys.stderr)
        return 1
    if not args.program:
        print("clients: no program given", file=sys.stderr)
        return 1
    try:
        tools = resolve_tools(args)
        shutil.rmtree(args.workdir, ignore_errors=True)
        sys_dir, pario_dir = (os.path.join(args.workdir, v) for v in ("system", "pario"))
        os.makedirs(sys_dir)
        os.makedirs(pario_dir)
        run_client(args, "system", sys_dir)
        run_client(args, "pario", pario_dir)
        compare_runs(args, tools, sys_dir, pario_dir)
    except (Mismatch, OSError, subprocess.SubprocessError) as e:
        print("clients: FAILED: %s\n(outputs kept in %s)" % (e, args.workdir), file=sys.stderr)
        return 1
    shutil.rmtree(args.workdir, ignore_errors=True)
    print("clients: system and pario runs agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
