"""pario calibrate: measure what requests cost on a file system and keep the figures.

`pario calibrate DIR` runs build/bin/pario-calibrate (tools/calibrate.c) on a scratch
file in DIR, prints its figures and stores them as the record of the file system
holding DIR: one line in the costs file, keyed by mount point, replacing that mount's
earlier record. pario reads the record when it opens a file there
(src/io/cost/cost.h) and weighs its sieving decisions and block reservation with it.
`pario calibrate --show` lists the records.

The costs file: --costs, else $PARIO_COSTS, else $XDG_CACHE_HOME/pario/costs, else
~/.cache/pario/costs (the library looks in the same places).
"""
import os
import platform
import re
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pario_env

# The library's built-in figures, measured on ext4 (src/io/cost/cost.h).
DEFAULT_WRITE_CALL_BYTES = 32 << 10
DEFAULT_READ_CALL_BYTES = 8 << 10
# Seconds the calibration program may run before it is considered hung.
CALIBRATE_TIMEOUT = 600
# Fields of a record the library reads, then the ones kept for people.
RECORD_FIELDS = ("mount", "type", "write_call_bytes", "read_call_bytes", "reserve")
INFO_FIELDS = (
    ("write_uncached_call_us", "write_call_us"), ("write_uncached_mib_s", "write_mib_s"),
    ("read_cached_call_us", "read_cached_call_us"), ("read_cached_mib_s", "read_cached_mib_s"),
    ("read_uncached_call_us", "read_uncached_call_us"),
    ("read_uncached_mib_s", "read_uncached_mib_s"), ("lock_us", "lock_us"))


def add_arguments(p):
    p.add_argument("dir", nargs="?", help="a directory on the file system to calibrate")
    p.add_argument("--show", action="store_true", help="list the stored records and exit")
    p.add_argument("--quick", action="store_true",
                   help="a fraction of a second, rough figures (for tests)")
    p.add_argument("--costs", help="the costs file (default $PARIO_COSTS, else "
                                   "$XDG_CACHE_HOME/pario/costs or ~/.cache/pario/costs)")
    p.add_argument("--no-store", action="store_true", help="print the figures only")
    p.add_argument("--build", help="build directory (default: the one holding this command)")


def costs_file(explicit=None):
    """The costs file the library reads, or None when nothing names one."""
    env = os.environ
    if explicit:
        return Path(explicit)
    if env.get("PARIO_COSTS"):
        return Path(env["PARIO_COSTS"])
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "pario" / "costs"
    if env.get("HOME"):
        return Path(env["HOME"]) / ".cache" / "pario" / "costs"
    return None


def escape(text):
    """Blanks and backslashes as octal escapes, as in /proc/self/mounts."""
    return re.sub(r"[ \t\n\\]", lambda m: "\\%03o" % ord(m.group()), text)


def unescape(text):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def parse_fields(text):
    """key=value pairs of one record line or of the program's output."""
    fields = {}
    for token in text.split():
        key, sep, value = token.partition("=")
        if sep:
            fields[key] = value
    return fields


def run_program(build, directory, quick):
    """The calibration program's figures, as a dict of strings, with the
    machine's load average over the last minute when it started."""
    load = os.getloadavg()[0]
    program = build / "bin" / "pario-calibrate"
    if not program.is_file():
        raise pario_env.SetupError(f"{program} not found: build the pario-calibrate target")
    cmd = [str(program)] + (["--quick"] if quick else []) + [str(directory)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=CALIBRATE_TIMEOUT)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or f"{program} exited with {done.returncode}")
    fig = parse_fields(done.stdout)
    fig["load"] = f"{load:.1f}"
    return fig


def record_line(fig, directory):
    """The record of one calibration: what the library reads, the measured
    figures behind it, and when, where and on what host they were measured."""
    parts = [f"{key}={fig[key]}" for key in RECORD_FIELDS]
    parts += [f"{name}={fig[key]}" for key, name in INFO_FIELDS if key in fig]
    parts.append(f"reserve_mib_s={fig['reserve_plain_mib_s']}/{fig['reserve_first_mib_s']}")
    parts.append("when=" + datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    parts.append(f"load={fig['load']}")
    parts.append("host=" + escape(platform.node() or "unknown"))
    parts.append("dir=" + escape(str(Path(directory).resolve())))
    return " ".join(parts)


def read_records(path):
    """Every line of the costs file, or [] when it does not exist."""
    try:
        return path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return []


def store(path, line, mount):
    """Replace mount's record in the costs file with line (written whole,
    then renamed over the old file, so a reader never sees half of it)."""
    kept = [old for old in read_records(path)
            if old.lstrip().startswith("#") or parse_fields(old).get("mount") != mount]
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".costs.")
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(kept + [line]) + "\n")
    os.replace(tmp, path)


def show_figures(fig, directory):
    mount = unescape(fig["mount"])
    print(f"pario calibrate: {directory} is on {mount} ({fig['type']}), "
          f"measured in {fig['seconds']} s at load {fig['load']}")
    cpus = os.cpu_count() or 1
    if float(fig["load"]) > cpus:
        print(f"note: the machine is busy (load {fig['load']} on {cpus} processors), so the "
              f"figures are noisy; calibrate again when it is idle")
    rows = [
        ("write call", f"{fig['write_call_bytes']} B",
         f"{fig['write_uncached_call_us']} us at {fig['write_uncached_mib_s']} MiB/s, "
         f"pages not cached"),
        ("read call", f"{fig['read_call_bytes']} B",
         f"the larger of cached {fig['read_cached_call_bytes']} B "
         f"({fig['read_cached_call_us']} us at {fig['read_cached_mib_s']} MiB/s) and "
         f"uncached {fig['read_uncached_call_bytes']} B "
         f"({fig['read_uncached_call_us']} us at {fig['read_uncached_mib_s']} MiB/s)"),
        ("lock+unlock", f"{fig['lock_us']} us", "OFD lock, exclusive"),
        ("reserve first", fig["reserve"], reserve_note(fig)),
        ("defaults", f"{DEFAULT_WRITE_CALL_BYTES} / {DEFAULT_READ_CALL_BYTES} B",
         "write / read call, measured on ext4; reserve on ext4 only"),
    ]
    print_table(("figure", "value", "from"), rows)


def reserve_note(fig):
    if float(fig["reserve_first_mib_s"]) == 0:
        return "the file system cannot reserve blocks (fallocate unsupported)"
    return (f"{fig['reserve_first_mib_s']} vs {fig['reserve_plain_mib_s']} MiB/s plain, "
            f"1 MiB writes to a fresh file; pays at 10 % faster")


def print_table(head, rows):
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    for r in [head, tuple("-" * w for w in widths)] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


def show_records(path):
    records = [parse_fields(line) for line in read_records(path)
               if line.strip() and not line.lstrip().startswith("#")]
    if not records:
        print(f"no records in {path}")
        return 0
    print(f"records in {path}:")
    rows = [(unescape(r.get("mount", "?")), r.get("type", "?"), r.get("write_call_bytes", "?"),
             r.get("read_call_bytes", "?"), r.get("reserve", "?"), r.get("lock_us", "?"),
             r.get("when", "?"), r.get("load", "?"), unescape(r.get("host", "?")))
            for r in records]
    print_table(("mount", "type", "write call B", "read call B", "reserve", "lock us",
                 "measured", "load", "host"), rows)
    return 0


def main(args):
    path = costs_file(args.costs)
    if args.show:
        if path is None:
            print("pario calibrate: no costs file (set PARIO_COSTS or HOME)", file=sys.stderr)
            return 1
        return show_records(path)
    if not args.dir:
        print("pario calibrate: give a directory (pario calibrate DIR) or --show",
              file=sys.stderr)
        return 2
    if not Path(args.dir).is_dir():
        print(f"pario calibrate: {args.dir} is not a directory", file=sys.stderr)
        return 1
    try:
        fig = run_program(pario_env.find_build_dir(args.build), args.dir, args.quick)
    except (pario_env.SetupError, RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"pario calibrate: {e}", file=sys.stderr)
        return 1
    show_figures(fig, args.dir)
    if args.no_store:
        return 0
    if path is None:
        print("pario calibrate: no costs file to store the record in (set PARIO_COSTS or "
              "HOME)", file=sys.stderr)
        return 1
    store(path, record_line(fig, args.dir), fig["mount"])
    print(f"record for {unescape(fig['mount'])} stored in {path}")
    return 0
