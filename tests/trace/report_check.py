#!/usr/bin/python3
"""`pario report` and `pario advise` on traces of seeded bad patterns
(patterns.c), and the HTML page in headless Chromium.

    report_check.py --pario BUILD/bin/pario --mpiexec M --mpi openmpi|mpich
                    --preload P --np N --workdir W --patterns PATH
                    --check advice|advise|browser

advice:  each pattern's trace yields the expected advice (and no other rule
         fires on it); the Markdown, PNG and HTML are written.
advise:  `pario advise` on the nosieve pattern applies romio_ds_write/read=enable
         and the I/O time after is lower than before.
browser: the HTML page of a trace opens in headless Chromium (Debian's
         package) with no console error, and its screenshot is not blank.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

from traced import Failure, add_launch_arguments, run_in_fresh_workdir, run_traced

EXPECTED = {
    "nosieve": {"sieve-write", "collective-write", "sieve-read", "collective-read"},
    "readsame": {"read-once"},
    "misaligned": {"align-collective", "align-records"},
    "smallcb": {"cb_buffer_size"},
}


def run_pattern(args, mode, trace, extra=()):
    outdir = os.path.join(args.workdir, mode)
    os.makedirs(outdir, exist_ok=True)
    return run_traced(args, [args.patterns, mode, outdir], trace, extra)


def pario(args, *argv, env=None):
    res = subprocess.run([sys.executable, args.pario, *argv], capture_output=True, text=True,
                         timeout=600, env=env)
    if res.returncode != 0:
        raise Failure(f"pario {' '.join(argv)} failed:\n{res.stdout}\n{res.stderr}")
    return res.stdout


def check_advice(args):
    tools = os.path.dirname(os.path.abspath(args.pario))
    sys.path.insert(0, tools)
    import pario_trace
    for mode, want in EXPECTED.items():
        trace = os.path.join(args.workdir, f"{mode}.json")
        doc = run_pattern(args, mode, trace)
        got = {a["key"] for a in pario_trace.advise(doc)}
        if got != want:
            raise Failure(f"{mode}: advice {sorted(got)}, expected {sorted(want)}")
        md = pario(args, "report", trace, "--html", trace + ".html", "--png", trace + ".png")
        for key in want:
            item = next(a for a in pario_trace.advise(doc) if a["key"] == key)
            if item["reason"] not in md:
                raise Failure(f"{mode}: the report does not give the reason of {key}")
        for ext in (".html", ".png"):
            if os.path.getsize(trace + ext) < 1000:
                raise Failure(f"{mode}: {trace + ext} is nearly empty")
        print(f"ok  {mode}: advice {sorted(got)}")
    reasons = {a["key"]: a["reason"] for a in pario_trace.advise(doc)}
    print("    e.g.", reasons)
    check_read_once_hint(args, pario_trace)


def check_read_once_hint(args, pario_trace):
    """The read-once advice offers pario_read_once only where reads are
    request-bound (made so here by pario_read_call_bytes, as a network file
    system's costs make them) and ranks share a node: not on local costs,
    not at one rank per node."""
    bound = ("PARIO_HINT_pario_read_call_bytes", "1048576")
    for name, extra, want in (("local", (), {}),
                              ("bound", (bound,), {"pario_read_once": "enable"}),
                              ("bound-apart", (bound, ("PARIO_NODE_SIZE", "1")), {})):
        trace = os.path.join(args.workdir, f"readsame-{name}.json")
        doc = run_pattern(args, "readsame", trace, extra)
        got = [a for a in pario_trace.advise(doc) if a["key"] == "read-once"]
        if len(got) != 1 or got[0]["hints"] != want:
            raise Failure(f"readsame ({name}): read-once advice {got}, expected hints {want}")
        print(f"ok  readsame ({name}): read-once hints {want}")


def check_advise(args):
    out = os.path.join(args.workdir, "advise")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.pop("PARIO_TRACE", None)
    if args.no_leak_check:  # sanitizer build: `pario run` preloads the drop-in alone, so the
        # sanitizer runtime arrives as its dependency, after the program's libraries
        env["ASAN_OPTIONS"] = "detect_leaks=0:verify_asan_link_order=0"
    os.makedirs(out, exist_ok=True)
    text = pario(args, "advise", "-n", str(args.np), "--out", out, "--", args.patterns,
                 "nosieve", out, env=env)
    with open(os.path.join(out, "advice.json")) as f:
        result = json.load(f)
    want = {"romio_ds_write": "enable", "romio_ds_read": "enable"}
    if result["hints"] != want:
        raise Failure(f"advise applied {result['hints']}, expected {want}")
    if not result["after"] < result["before"]:
        raise Failure(f"the advice did not help: I/O seconds {result['before']} before, "
                      f"{result['after']} after\n{text}")
    print(f"ok  advise: I/O seconds {result['before']:.4f} before, {result['after']:.4f} after")


def check_unclosed(args):
    """A file left open: each rank writes its own part at MPI_Finalize, and
    the report reads them with the rest."""
    trace = os.path.join(args.workdir, "unclosed.json")
    outdir = os.path.join(args.workdir, "unclosed")
    os.makedirs(outdir)
    try:
        run_traced(args, [args.patterns, "unclosed", outdir], trace)
    except FileNotFoundError:
        pass  # no file was closed: PATH itself is not written
    per_rank = 65536
    for r in range(args.np):
        with open(f"{trace}.open.{r}") as f:
            part = json.load(f)["files"]
        if len(part) != 1 or part[0]["unclosed_rank"] != r:
            raise Failure(f"{trace}.open.{r}: expected rank {r}'s part of one file")
        t = part[0]["total"]
        got = (t["logical"]["write"]["calls"], t["logical"]["write"]["bytes"],
               t["logical"]["write"]["first"], t["physical"]["pwrite"]["bytes"])
        if got != (1, per_rank, r * per_rank, per_rank):
            raise Failure(f"rank {r}'s part: (calls, bytes, first, physical bytes) {got}")
    if os.path.getsize(os.path.join(outdir, "unclosed.dat")) != args.np * per_rank:
        raise Failure("the file left open lacks bytes")
    with open(trace, "w") as f:  # an empty run document beside the parts
        json.dump({"kind": "pario-trace", "version": 1, "files": []}, f)
    md = pario(args, "report", trace)
    ranks = ", ".join(str(r) for r in range(args.np))
    merged = f"Left open at MPI_Finalize: the parts of ranks {ranks}, merged."
    if md.count("Left open at MPI_Finalize") != 1 or merged not in md:
        raise Failure("the report does not show the ranks' parts as one file:\n" + md)
    row = f"| logical | write (indep {args.np}) | {args.np:,} | {args.np * per_rank:,} |"
    if row not in md:
        raise Failure(f"the merged file lacks the row {row}:\n" + md)
    print(f"ok  unclosed: {args.np} ranks' parts written at MPI_Finalize, reported as one file")


def screenshot_blank(png):
    import matplotlib.image as mpimg
    img = mpimg.imread(png)
    rgb = img[..., :3]
    white = (rgb > 0.97).all(axis=-1)
    return white.mean(), rgb.std()


def check_browser(args):
    chromium = shutil.which("chromium")
    if not chromium:
        raise Failure("chromium not found: install Debian's package chromium (tools/deps.sh)")
    trace = os.path.join(args.workdir, "page.json")
    run_pattern(args, "nosieve", trace)
    page, shot = trace + ".html", os.path.join(args.workdir, "page.png")
    pario(args, "report", trace, "--html", page)
    base = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", f"--user-data-dir={args.workdir}/chromium-profile",
            "--enable-logging=stderr", "--v=0", "--window-size=1000,1400"]
    res = subprocess.run(base + [f"--screenshot={shot}", "file://" + page],
                         capture_output=True, text=True, timeout=120)
    errors = [line for line in res.stderr.splitlines()
              if "CONSOLE" in line and ("Uncaught" in line or "Error" in line)]
    if errors:
        raise Failure("script errors in the page:\n" + "\n".join(errors))
    if not os.path.exists(shot):
        raise Failure(f"no screenshot ({res.returncode}):\n{res.stderr[-3000:]}")
    white, spread = screenshot_blank(shot)
    if white > 0.995 or spread < 0.01:
        raise Failure(f"the screenshot is blank ({100 * white:.1f} % white)")
    dom = subprocess.run(base + ["--dump-dom", "file://" + page], capture_output=True,
                         text=True, timeout=120).stdout
    plots = dom.count("<svg")
    if plots < 4:
        raise Failure(f"the rendered page holds {plots} plots, expected at least 4")
    print(f"ok  browser: {plots} plots rendered, screenshot {100 * (1 - white):.1f} % drawn")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pario", required=True)
    add_launch_arguments(ap)
    ap.add_argument("--patterns", required=True)
    ap.add_argument("--check", choices=["advice", "advise", "browser", "unclosed"],
                    required=True)
    args = ap.parse_args()
    checks = {"advice": check_advice, "advise": check_advise, "browser": check_browser,
              "unclosed": check_unclosed}
    return run_in_fresh_workdir(args, checks[args.check])


if __name__ == "__main__":
    sys.exit(main())
