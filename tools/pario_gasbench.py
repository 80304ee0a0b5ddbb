"""pario bench am|put|bcast: the gas benchmarks next to plain MPI.

The programs in build/bench (gas_bench_am, gas_bench_put, gas_bench_bcast) print one
JSON object per measurement; each measurement is already 15 interleaved repetitions
(median, min, max). This module launches them, adds the path and the rank count,
computes the gas targets and writes the document `pario report` renders:

  am     2 ranks; node-local and MPI path (a second team under PARIO_NODE_SIZE=1) in
         the same run, next to MPI_Send/MPI_Recv ping-pong and a send flood
  put    2 ranks; both paths in the same run, next to MPI_Put/MPI_Get + flush and memcpy
  bcast  every algorithm and MPI_Bcast, at 2, 4, 8 ranks, once node-local and once with
         PARIO_NODE_SIZE=1 (MPI path)

With --reps R every configuration runs R times; a cell is then the median of the
runs' medians, with the smallest minimum and the largest maximum.
"""
import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

import pario_env

GAS_KIND = "pario-gasbench"
MIB = float(1 << 20)
# Lines of a failing program's stderr shown in the failure message.
STDERR_TAIL_LINES = 15
PATHS = ("local", "mpi")
# The environment variable that makes every rank its own node (the MPI path).
NODE_SIZE_ENV = "PARIO_NODE_SIZE"
# A target "within 10 %" holds when the ratio stays under this bound.
WITHIN_TEN_PERCENT = 1.10
# Node-local puts at or above this size count as "large" for the memcpy target.
LARGE_PUT_BYTES = 1 << 20
# The seed's MPI-path / node-local Short AM latency ratio.
SEED_SHORT_RATIO = 4.5
# Repetitions each gas benchmark program times per measurement (BENCH_REPS).
BENCH_REPS_PER_RUN = 15
BCAST_ALGS = ("auto", "flat", "chain", "binary", "binomial", "scatter_allgather")


@dataclass(frozen=True)
class GasScenario:
    program: str
    summary: str
    ranks: tuple        # default rank counts
    fixed_ranks: bool   # the program only runs with exactly these
    one_run_both_paths: bool


GAS_SCENARIOS = {
    "am": GasScenario("gas_bench_am",
                      "gas active messages (Short/Medium/Long): half round trip and one-way "
                      "flood, node-local and MPI path, next to MPI_Send/MPI_Recv",
                      (2,), True, True),
    "put": GasScenario("gas_bench_put",
                       "gas put/get latency, node-local and MPI path, next to MPI_Put/MPI_Get "
                       "+ MPI_Win_flush and memcpy", (2,), True, True),
    "bcast": GasScenario("gas_bench_bcast",
                         "gas broadcast: every algorithm and MPI_Bcast at 2, 4, 8 ranks, "
                         "node-local and MPI path", (2, 4, 8), False, False),
}


class RunFailure(Exception):
    pass


# ---- running ---------------------------------------------------------------------

def env_args(mpi, name, value):
    """mpiexec options that set one environment variable in every rank."""
    if mpi.flavor == "mpich":
        return ["-genv", name, str(value)]
    return ["-x", f"{name}={value}"]


def parse_lines(text):
    """The JSON objects of a program's stdout, one per line."""
    records = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return records


def run_once(cmd, timeout, label):
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RunFailure(f"{label}: no result after {timeout} s (hung?)")
    except OSError as e:
        raise RunFailure(f"{label}: cannot start {cmd[0]}: {e}")
    records = parse_lines(proc.stdout)
    if proc.returncode != 0 or not records:
        tail = "\n".join(proc.stderr.strip().splitlines()[-STDERR_TAIL_LINES:])
        raise RunFailure(f"{label}: exited with {proc.returncode}, {len(records)} results\n"
                         f"  command: {' '.join(cmd)}\n" +
                         "\n".join("  | " + ln for ln in tail.splitlines()))
    return records


def run_with_retry(cmd, timeout, label):
    """A launch on a busy shared machine occasionally fails on its own: retry once."""
    try:
        return run_once(cmd, timeout, label)
    except RunFailure as e:
        print(f"pario bench: {e}\npario bench: retrying once", file=sys.stderr, flush=True)
    return run_once(cmd, timeout, label)


def configurations(scenario, ranks, paths):
    """(path, ranks) pairs to run; "both" when the program measures both paths itself."""
    if scenario.one_run_both_paths:
        return [("both", n) for n in ranks]
    return [(p, n) for p in paths for n in ranks]


def path_of(record, run_path):
    if run_path != "both":
        return run_path
    return {"pario-local": "local", "pario-mpi": "mpi"}.get(record.get("impl"), "-")


def aggregate(samples):
    """One record per measurement from the records of all runs."""
    out = []
    for key, recs in samples.items():
        first = dict(recs[0])
        if "usec_median" in first:
            med = statistics.median(r["usec_median"] for r in recs)
            first.update(usec_median=med, usec_min=min(r["usec_min"] for r in recs),
                         usec_max=max(r["usec_max"] for r in recs),
                         mib_s_median=first["bytes"] / MIB / (med * 1e-6) if med > 0 else None)
        else:
            choices = sorted({r.get("choice") for r in recs})
            first["choice"] = "/".join(c for c in choices if c)
        first["runs"] = len(recs)
        out.append(first)
    return out


def locate_program(args, name):
    """The build directory, its MPI and the benchmark program `name` in build/bench."""
    build = pario_env.find_build_dir(args.build)
    mpi = pario_env.Mpi.detect(build, args.mpi)
    if mpi.build_mismatch():
        raise pario_env.SetupError(mpi.build_mismatch())
    program = build / "bench" / name
    if not program.is_file():
        raise pario_env.SetupError(f"{program} not found: build it (cmake --build {build} "
                                   f"--target {name})")
    return build, mpi, program


def launch_logged(cmd, timeout, label, entry, runs):
    """Runs one configuration: its records; entry (status, seconds) goes to runs."""
    t0 = time.monotonic()
    try:
        records = run_with_retry(cmd, timeout, label)
        entry.update(status="ok", results=len(records))
    except RunFailure as e:
        entry.update(status="failed", reason=str(e))
        print(f"pario bench: FAILED: {e}", file=sys.stderr, flush=True)
        records = []
    entry["seconds"] = round(time.monotonic() - t0, 2)
    runs.append(entry)
    print(f"pario bench: {label}: {entry['status']}, {entry['seconds']:.1f} s",
          file=sys.stderr, flush=True)
    return records


def measure(args, argv, ranks, reps):
    """Runs the scenario; returns the JSON document."""
    scenario = GAS_SCENARIOS[args.scenario]
    build, mpi, program = locate_program(args, scenario.program)
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    bad = [p for p in paths if p not in PATHS]
    if bad or not paths:
        raise pario_env.SetupError(f"--paths: {','.join(bad) or 'empty'} (use local,mpi)")
    samples, runs = {}, []
    for rep in range(1, reps + 1):
        for path, n in configurations(scenario, ranks, paths):
            cmd = mpi.launch_prefix(n, None)
            if path == "mpi":
                cmd += env_args(mpi, NODE_SIZE_ENV, 1)
            cmd.append(str(program))
            label = f"{args.scenario}, path {path}, {n} ranks, run {rep}"
            entry = {"path": path, "ranks": n, "run": rep, "command": cmd}
            for r in launch_logged(cmd, args.timeout, label, entry, runs):
                r["path"] = path_of(r, path)
                key = (r["path"], r.get("impl"), r.get("op"), r.get("bytes"), r.get("ranks"))
                samples.setdefault(key, []).append(r)
    params = {"ranks": list(ranks), "paths": paths, "reps": reps,
              "program": scenario.program, "build": str(build)}
    doc = document(GAS_KIND, args, argv, scenario.summary, mpi, params, runs,
                   aggregate(samples))
    doc["targets"] = targets(doc)
    return doc


def document(kind, args, argv, summary, mpi, params, runs, results, machine=None):
    """The JSON document of a run: what ran, on which machine, and the results."""
    machine = machine or pario_env.machine_info()
    machine["mpi"] = mpi_version(mpi)
    machine["mpi_flavor"] = mpi.flavor
    return {
        "kind": kind, "version": 1, "scenario": args.scenario, "summary": summary,
        "command": ["pario"] + list(argv),
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "params": params, "machine": machine, "runs": runs, "results": results,
    }


def mpi_version(mpi):
    """First line of `mpiexec --version` (the programs do not print their MPI)."""
    try:
        out = subprocess.run([mpi.mpiexec, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.strip().splitlines()[0] if out.strip() else ""


def parse_ranks(text, default):
    """Rank counts from --ranks (a number or a comma-separated list), else default."""
    if not text:
        return list(default)
    try:
        ranks = [int(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        raise pario_env.SetupError(f"--ranks {text}: not a number list")
    if not ranks or min(ranks) < 1:
        raise pario_env.SetupError("--ranks must be at least 1")
    return ranks


def resolve_ranks(args):
    """Rank counts from --ranks (a number or a comma-separated list) or the defaults."""
    scenario = GAS_SCENARIOS[args.scenario]
    ranks = parse_ranks(args.ranks, scenario.ranks)
    if scenario.fixed_ranks and ranks != list(scenario.ranks):
        raise pario_env.SetupError(f"{args.scenario} runs with exactly "
                                   f"{','.join(map(str, scenario.ranks))} ranks")
    return ranks


def failed_runs(doc):
    return [r for r in doc.get("runs", []) if r.get("status") != "ok"]


# ---- targets ---------------------------------------------------------------------

def find(doc, impl, op, nbytes, ranks=None, path=None):
    for r in doc["results"]:
        if (r.get("impl") == impl and r.get("op") == op and r.get("bytes") == nbytes and
                (ranks is None or r.get("ranks") == ranks) and
                (path is None or r.get("path") == path)):
            return r
    return None


def ratio(a, b, field="usec_median"):
    if a is None or b is None or not b.get(field):
        return None
    return a[field] / b[field]


def target(name, measured, verdict, **values):
    return dict({"target": name, "measured": measured, "verdict": verdict}, **values)


def am_targets(doc):
    loc = find(doc, "pario-local", "short_rtt_half", 8)
    mpi = find(doc, "pario-mpi", "short_rtt_half", 8)
    pp = find(doc, "mpi", "pingpong_rtt_half", 8)
    out = []
    if loc and pp:
        r, rmin = ratio(loc, pp), ratio(loc, pp, "usec_min")
        out.append(target(
            "node-local AM Short half round trip <= MPI ping-pong half round trip (8 B)",
            f"{loc['usec_median']:.3f} µs vs {pp['usec_median']:.3f} µs: ratio {r:.2f} "
            f"(minima {rmin:.2f})", "met" if r <= 1.0 else "missed",
            ratio=r, ratio_min=rmin))
    if loc and mpi:
        r, rmin = ratio(mpi, loc), ratio(mpi, loc, "usec_min")
        out.append(target(
            f"MPI-path / node-local Short AM latency (seed: {SEED_SHORT_RATIO}x)",
            f"{mpi['usec_median']:.3f} µs / {loc['usec_median']:.3f} µs = {r:.2f}x "
            f"(minima {rmin:.2f}x)", "reported", ratio=r, ratio_min=rmin))
    return out


def put_targets(doc):
    out = []
    p8, m8 = find(doc, "pario-local", "put", 8), find(doc, "mpi", "put_flush", 8)
    c8 = find(doc, "mpi", "put_flush_wincreate", 8)
    if p8 and m8:
        r = ratio(p8, m8)
        extra = f"; MPI_Win_create window: {c8['usec_median']:.3f} µs" if c8 else ""
        out.append(target(
            "node-local 8 B put <= half of MPI_Put + MPI_Win_flush",
            f"{p8['usec_median']:.3f} µs vs {m8['usec_median']:.3f} µs (MPI_Win_allocate): "
            f"ratio {r:.2f}{extra}", "met" if r <= 0.5 else "missed", ratio=r))
    sizes = sorted({r["bytes"] for r in doc["results"] if r.get("op") == "memcpy"})
    large = [n for n in sizes if n >= LARGE_PUT_BYTES]
    parts, worst = [], None
    for n in large:
        put, cpy = find(doc, "pario-local", "put", n), find(doc, "memcpy", "memcpy", n)
        frac = ratio(cpy, put)  # put bandwidth / memcpy bandwidth
        if frac is None:
            continue
        worst = frac if worst is None else min(worst, frac)
        parts.append(f"{n // (1 << 20)} MiB: {put['mib_s_median']:.0f} vs "
                     f"{cpy['mib_s_median']:.0f} MiB/s ({100 * frac:.0f} %)")
    if parts:
        out.append(target(
            "large node-local put within 10 % of memcpy bandwidth",
            "; ".join(parts), "met" if worst >= 1 / WITHIN_TEN_PERCENT else "missed",
            worst_fraction=worst))
    return out


def bcast_cells(doc):
    """Per (path, ranks, bytes): every algorithm's record, the best and auto's choice."""
    cells = []
    keys = sorted({(r["path"], r["ranks"], r["bytes"]) for r in doc["results"]
                   if r.get("op") == "bcast_mpi"}, key=lambda k: (PATHS.index(k[0])
                                                                   if k[0] in PATHS else 9,
                                                                   k[1], k[2]))
    for path, n, nbytes in keys:
        impl = next((r["impl"] for r in doc["results"] if r.get("path") == path and
                     r.get("ranks") == n and r.get("op") == "bcast_auto"), None)
        algs = {a: find(doc, impl, "bcast_" + a, nbytes, n, path) for a in BCAST_ALGS}
        named = [a for a in BCAST_ALGS[1:] if algs[a]]
        best = min(named, key=lambda a: algs[a]["usec_median"]) if named else None
        choice = find(doc, impl, "auto_choice", nbytes, n, path)
        cells.append({"path": path, "ranks": n, "bytes": nbytes, "algs": algs, "best": best,
                      "mpi": find(doc, "mpi", "bcast_mpi", nbytes, n, path),
                      "choice": choice.get("choice") if choice else None})
    return cells


def bcast_targets(doc):
    cells = [c for c in bcast_cells(doc) if c["best"] and c["algs"]["auto"]]
    if not cells:
        return []
    auto_ok = [c for c in cells if ratio(c["algs"]["auto"], c["algs"][c["best"]])
               <= WITHIN_TEN_PERCENT]
    pick_ok = [c for c in cells if c["choice"] in c["algs"] and c["algs"][c["choice"]] and
               ratio(c["algs"][c["choice"]], c["algs"][c["best"]]) <= WITHIN_TEN_PERCENT]
    worst = max(cells, key=lambda c: ratio(c["algs"]["auto"], c["algs"][c["best"]]))
    wr = ratio(worst["algs"]["auto"], worst["algs"][worst["best"]])
    return [target(
        "`auto` broadcast within 10 % of the best algorithm at each size",
        f"`auto` within 10 % in {len(auto_ok)} of {len(cells)} cells (worst {wr:.2f}x: "
        f"{worst['path']}, {worst['ranks']} ranks, {worst['bytes']} B); the algorithm auto "
        f"picks, run by name, within 10 % in {len(pick_ok)} of {len(cells)}",
        "met" if len(auto_ok) == len(cells) else
        f"missed in {len(cells) - len(auto_ok)} of {len(cells)} cells",
        cells=len(cells), auto_within=len(auto_ok), pick_within=len(pick_ok))]


TARGETS = {"am": am_targets, "put": put_targets, "bcast": bcast_targets}


def targets(doc):
    return TARGETS[doc["scenario"]](doc)


# ---- Markdown --------------------------------------------------------------------

def cell(r):
    return "—" if r is None else f"{r['usec_median']:.2f} ({r['usec_min']:.2f})"


def rate_cell(r):
    return "—" if r is None or r.get("mib_s_median") is None else f"{r['mib_s_median']:.0f}"


def md_table(header, rows, align=None):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join(align or ["---:"] * len(header)) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def fmt_load(machine):
    load = machine.get("load_avg_1m_at_start")
    return "?" if load is None else f"{load:.1f}"


def header_lines(doc):
    p, m = doc.get("params", {}), doc.get("machine", {})
    lines = [f"## pario bench {doc['scenario']}", "", doc.get("summary", "") + ".", "",
             f"Command: `{' '.join(doc.get('command', []))}`  ",
             f"ranks {','.join(map(str, p.get('ranks', [])))}, {p.get('reps')} run(s) per "
             f"configuration; {m.get('cores')} cores ({m.get('cpu', '?')}), "
             f"{m.get('mem_gib', '?')} GiB, {m.get('os', '?')}, load "
             f"{fmt_load(m)} at start; {m.get('mpi', '?')}.  ",
             f"Times in µs: median (min) over the program's {BENCH_REPS_PER_RUN} interleaved "
             "repetitions (with several runs: median of the runs' medians, smallest "
             "minimum). "
             "On a shared machine the spread is often larger than the differences."]
    for r in failed_runs(doc):
        lines.append(f"- **run failed: path {r['path']}, {r['ranks']} ranks** — "
                     f"{r.get('reason', '').splitlines()[0]}")
    return lines


def target_lines(doc):
    rows = [[t["target"], t["measured"], t["verdict"]] for t in doc.get("targets") or
            targets(doc)]
    if not rows:
        return []
    return ["", "### Targets", ""] + md_table(["target", "measured", "verdict"], rows,
                                              ["---", "---", "---"])


def am_markdown(doc):
    sizes = sorted({r["bytes"] for r in doc["results"] if r.get("op") == "pingpong_rtt_half"})
    kinds = ("short", "medium", "long")
    series = [(impl, k) for impl in ("pario-local", "pario-mpi") for k in kinds]
    names = [f"{'local' if i == 'pario-local' else 'mpi-path'} {k.capitalize()}"
             for i, k in series]
    lat = [[n, cell(find(doc, "mpi", "pingpong_rtt_half", n))] +
           [cell(find(doc, i, k + "_rtt_half", n)) for i, k in series] for n in sizes]
    bw = [[n, rate_cell(find(doc, "mpi", "send_flood", n))] +
          [rate_cell(find(doc, i, k + "_flood", n)) for i, k in series] for n in sizes]
    return (["", "### Half round trip, µs, median (min)", ""] +
            md_table(["bytes", "MPI ping-pong"] + names, lat) +
            ["", "### One-way flood, MiB/s (median)", ""] +
            md_table(["bytes", "MPI send"] + names, bw))


PUT_COLUMNS = (("MPI_Put+flush (Win_allocate)", "mpi", "put_flush"),
               ("MPI_Put+flush (Win_create)", "mpi", "put_flush_wincreate"),
               ("put local", "pario-local", "put"), ("put mpi-path", "pario-mpi", "put"),
               ("memcpy", "memcpy", "memcpy"),
               ("MPI_Get+flush (Win_allocate)", "mpi", "get_flush"),
               ("MPI_Get+flush (Win_create)", "mpi", "get_flush_wincreate"),
               ("get local", "pario-local", "get"), ("get mpi-path", "pario-mpi", "get"))


def put_markdown(doc):
    sizes = sorted({r["bytes"] for r in doc["results"] if r.get("op") == "put"})
    lat = [[n] + [cell(find(doc, impl, op, n)) for _, impl, op in PUT_COLUMNS] for n in sizes]
    bw_cols = PUT_COLUMNS[:5]
    bw = [[n] + [rate_cell(find(doc, impl, op, n)) for _, impl, op in bw_cols] for n in sizes]
    return (["", "### Latency, µs, median (min)", ""] +
            md_table(["bytes"] + [c[0] for c in PUT_COLUMNS], lat) +
            ["", "### Put bandwidth, MiB/s (median)", ""] +
            md_table(["bytes"] + [c[0] for c in bw_cols], bw))


def fmt_ratio(a, b):
    r = ratio(a, b)
    return "—" if r is None else f"{r:.2f}"


def bcast_markdown(doc):
    rows = []
    for c in bcast_cells(doc):
        best = c["algs"][c["best"]] if c["best"] else None
        picked = c["algs"].get(c["choice"]) if c["choice"] else None
        rows.append([c["path"], c["ranks"], c["bytes"], cell(c["mpi"])] +
                    [cell(c["algs"][a]) for a in BCAST_ALGS] +
                    [c["choice"] or "?", c["best"] or "?", fmt_ratio(c["algs"]["auto"], best),
                     fmt_ratio(picked, best)])
    return (["", "### Broadcast completion, µs, median (min)", ""] +
            md_table(["path", "ranks", "bytes", "MPI_Bcast"] + list(BCAST_ALGS) +
                     ["auto picks", "best", "auto / best", "picked / best"], rows) +
            ["", "`auto / best`: medians; `best` is the fastest algorithm run by name; "
             "`picked / best`: the algorithm `auto` chooses, run by name. `auto` runs the "
             "chosen algorithm's code, so a gap between `auto` and its pick is noise; with "
             "2 ranks every algorithm sends the same single message."])


DETAIL = {"am": am_markdown, "put": put_markdown, "bcast": bcast_markdown}


def markdown(doc, columns=None):
    """The document's Markdown; `columns` (back ends of io reports) does not apply."""
    return "\n".join(header_lines(doc) + target_lines(doc) +
                     DETAIL[doc["scenario"]](doc)) + "\n"


# ---- plots -----------------------------------------------------------------------

def series(doc, impl, op, field="usec_median", path=None):
    pts = sorted((r["bytes"], r[field]) for r in doc["results"]
                 if r.get("impl") == impl and r.get("op") == op and r.get(field) and
                 (path is None or r.get("path") == path))
    return [p[0] for p in pts], [p[1] for p in pts]


def line_panel(ax, doc, lines, field, ylabel, title):
    for label, impl, op in lines:
        xs, ys = series(doc, impl, op, field)
        if xs:  # a single point (Short AMs exist at 8 B only) gets a bigger marker
            ax.plot(xs, ys, marker="o" if len(xs) > 1 else "D",
                    markersize=3 if len(xs) > 1 else 7, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(which="both", alpha=0.3)
    ax.legend(fontsize=7)


def am_plot(plt, doc):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    panels = (("rtt_half", ("MPI ping-pong", "mpi", "pingpong_rtt_half"), "usec_median",
               "µs (median)", "half round trip"),
              ("flood", ("MPI send", "mpi", "send_flood"), "mib_s_median", "MiB/s (median)",
               "one-way flood"))
    for ax, (suffix, mpi_line, field, ylabel, title) in zip(axes, panels):
        gas = [(f"{'local' if i == 'pario-local' else 'mpi-path'} {k}", i, f"{k}_{suffix}")
               for i in ("pario-local", "pario-mpi") for k in ("short", "medium", "long")]
        line_panel(ax, doc, [mpi_line] + gas, field, ylabel, title)
    return fig


def put_plot(plt, doc):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    puts = [c for c in PUT_COLUMNS if "Get" not in c[0] and "get" not in c[0]]
    gets = [c for c in PUT_COLUMNS if "Get" in c[0] or "get" in c[0]]
    line_panel(axes[0], doc, puts, "usec_median", "µs (median)", "put latency (and memcpy)")
    line_panel(axes[1], doc, gets, "usec_median", "µs (median)", "get latency")
    return fig


def size_label(nbytes):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift and nbytes % (1 << shift) == 0:
            return f"{nbytes >> shift} {unit}"
    return f"{nbytes} B"


def bcast_plot(plt, doc):
    cells = bcast_cells(doc)
    paths = [p for p in PATHS if any(c["path"] == p for c in cells)]
    ranks = sorted({c["ranks"] for c in cells})
    sizes = sorted({c["bytes"] for c in cells})
    names = ["MPI_Bcast"] + list(BCAST_ALGS)
    fig, axes = plt.subplots(len(paths), len(ranks), squeeze=False,
                             figsize=(4.2 * len(ranks), 3.4 * len(paths)))
    bar = 0.8 / len(names)
    for i, path in enumerate(paths):
        for j, n in enumerate(ranks):
            ax = axes[i][j]
            for k, name in enumerate(names):
                xs, ys = [], []
                for s, nbytes in enumerate(sizes):
                    c = next((c for c in cells if (c["path"], c["ranks"], c["bytes"]) ==
                              (path, n, nbytes)), None)
                    rec = None if c is None else (c["mpi"] if k == 0 else c["algs"][name])
                    if rec:
                        xs.append(s + (k - (len(names) - 1) / 2) * bar)
                        ys.append(rec["usec_median"])
                if xs:
                    ax.bar(xs, ys, bar, label=name)
            ax.set_yscale("log")
            ax.set_xticks(range(len(sizes)))
            ax.set_xticklabels([size_label(s) for s in sizes], fontsize=8)
            ax.set_title(f"{path} path, {n} ranks", fontsize=10)
            ax.set_ylabel("µs (median)")
            ax.grid(axis="y", which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    return fig


PLOTS = {"am": am_plot, "put": put_plot, "bcast": bcast_plot}


def draw(doc, png_path, figure, title):
    """Draws figure(plt, doc) titled `title` into png_path; returns a problem or None."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"matplotlib unavailable ({e}); install python3-matplotlib"
    if not doc.get("results"):
        return "no results to plot"
    fig = figure(plt, doc)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
    return None


def plot(doc, png_path):
    """Writes the scenario's plot; returns a problem or None."""
    runs = doc.get("params", {}).get("reps", 1)
    title = (f"pario bench {doc['scenario']}, {doc.get('created_utc', '')}: medians of "
             f"{BENCH_REPS_PER_RUN} repetitions" + (f", median of {runs} runs" if runs > 1
                                                   else ""))
    return draw(doc, png_path, PLOTS[doc["scenario"]], title)
