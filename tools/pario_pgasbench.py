"""pario bench stream|sdes: the pgas experiments of seed 000.

The programs in build/bench (pgas_bench_stream, pgas_bench_sdes) print one JSON
object per measurement; each program already interleaves its repetitions (every
configuration once per repetition) and reports medians. This module launches
them node-local (all ranks one node) and across nodes (PARIO_NODE_SIZE=1: every
rank its own node, remote accesses through MPI), adds the path, computes the
targets of issue 13 and writes the document `pario report` renders:

  stream  STREAM copy/scale/add/triad over shared arrays: element access through
          pointers-to-shared (ptr: a[i]; walk: p + 1; both unchecked load/store;
          checked: walk through the checked get/put), cast to local per block,
          bulk memget/memput, next to plain C and plain MPI; block factors 1, 128
          and the largest; shifted variants read the neighbour's block (and time
          "fetch": memget against MPI_Get + MPI_Win_flush of the same chunks)
  sdes    S-DES: known answers and round trips, the difference pair and
          distribution tables of S0, S1 and their layer built in parallel (ptr,
          walk, cast; blocks 1, 8, 128) against sequential C, and the key search
          (brute force and differential attack)

With --reps R the programs time R interleaved repetitions (default: stream 5,
sdes 21); every configuration runs once per (path, ranks). stream's
--variants names the methods to run (e.g. cast,c: more repetitions of the
comparison a target needs, in less time); its arrays together hold at least
4x the last-level cache the machine reports (STREAM's rule), unless --size.
"""
import time
from dataclasses import dataclass

import pario_env
import pario_gasbench as gb

PGAS_KIND = "pario-pgasbench"
PATHS = ("local", "mpi")
STREAM_KERNELS = ("copy", "scale", "add", "triad", "fetch")
STREAM_METHODS = ("ptr", "walk", "checked", "cast", "bulk", "c", "mpi")
SDES_METHODS = ("ptr", "walk", "cast")
# Targets of issue 13.
CAST_TRIAD_MIN = 0.95     # cast-to-local triad / plain C triad
ELEMENT_MIN = 0.25        # pointer-to-shared element triad (node-local) / plain C
MEMGET_MIN = 0.8          # memget across nodes / MPI_Get + flush, same chunks
# Ranks the S-DES target names.
SDES_TARGET_RANKS = (2, 4)


@dataclass(frozen=True)
class PgasScenario:
    program: str
    summary: str
    ranks: tuple
    size_flag: str  # the program's option for --size, or None


PGAS_SCENARIOS = {
    "stream": PgasScenario("pgas_bench_stream",
                           "STREAM over pgas shared arrays: pointer-to-shared, cast to local, "
                           "bulk, plain C and MPI, block factors 1/128/largest, node-local and "
                           "across nodes (seed 000)", (1, 2), "-n"),
    "sdes": PgasScenario("pgas_bench_sdes",
                         "S-DES difference tables built in parallel in shared arrays (ptr, walk, "
                         "cast; blocks 1/8/128) next to sequential C, and the key search "
                         "(seed 000)", (1, 2, 4), None),
}


# ---- running ---------------------------------------------------------------------

def program_args(args, scenario):
    out = []
    if args.reps:
        out += ["-r", str(args.reps)]
    if args.size:
        if not scenario.size_flag:
            raise pario_env.SetupError(f"--size does not apply to {args.scenario}")
        out += [scenario.size_flag, str(args.size)]
    if args.variants:
        if args.scenario != "stream":
            raise pario_env.SetupError(f"--variants does not apply to {args.scenario}")
        unknown = [m for m in args.variants.split(",") if m not in STREAM_METHODS]
        if unknown:
            raise pario_env.SetupError(f"--variants {args.variants}: no method "
                                       f"{', '.join(unknown)} (stream has "
                                       f"{', '.join(STREAM_METHODS)})")
        out += ["-M", args.variants]  # the methods, e.g. cast,c
    if args.quick and not args.size and not args.reps:
        out += ["-n", "262144", "-m", "4096", "-r", "3"] if args.scenario == "stream" else \
            ["-r", "5"]
    return out


def configurations(ranks, paths):
    """(path, ranks) pairs; the path between nodes needs two ranks at least."""
    return [(p, n) for p in paths for n in ranks if p == "local" or n >= 2]


def measure(args, argv, ranks):
    scenario = PGAS_SCENARIOS[args.scenario]
    build, mpi, program = gb.locate_program(args, scenario.program)
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    if not paths or any(p not in PATHS for p in paths):
        raise pario_env.SetupError(f"--paths {args.paths}: use local and/or mpi")
    extra = program_args(args, scenario)
    results, runs = [], []
    load = pario_env.machine_info().get("load_avg_1m_at_start")
    for path, n in configurations(ranks, paths):
        cmd = mpi.launch_prefix(n, None)
        if path == "mpi":
            cmd += gb.env_args(mpi, gb.NODE_SIZE_ENV, 1)
        cmd += [str(program)] + extra
        entry = {"path": path, "ranks": n, "command": cmd}
        for r in gb.launch_logged(cmd, args.timeout, f"{args.scenario}, path {path}, {n} ranks",
                                  entry, runs):
            r["path"] = path
            results.append(r)
    machine = pario_env.machine_info()
    machine["load_avg_1m_at_start"] = load
    params = {"ranks": list(ranks), "paths": paths, "program_args": extra,
              "program": scenario.program, "build": str(build)}
    doc = gb.document(PGAS_KIND, args, argv, scenario.summary, mpi, params, runs, results,
                      machine)
    doc["targets"] = targets(doc)
    return doc


def resolve_ranks(args):
    return gb.parse_ranks(args.ranks, PGAS_SCENARIOS[args.scenario].ranks)


def failed_runs(doc):
    return [r for r in doc.get("runs", []) if r.get("status") != "ok"]


def invalid_results(doc):
    """Results whose own check failed (a wrong value, a key not recovered)."""
    return [r for r in doc["results"] if r.get("validated") is False or
            r.get("recovered") is False or r.get("known_answers") is False or
            r.get("round_trips") is False]


# ---- look-ups ----------------------------------------------------------------------

def stream_rec(doc, path, ranks, method, block, kernel, shifted=0):
    for r in doc["results"]:
        if (r.get("bench") == "stream" and r["path"] == path and r["ranks"] == ranks and
                r["method"] == method and r["block"] == block and r["kernel"] == kernel and
                r["shifted"] == shifted):
            return r
    return None


def sdes_rec(doc, path, ranks, method, block):
    for r in doc["results"]:
        if (r.get("op") == "tables" and r["path"] == path and r["ranks"] == ranks and
                r["method"] == method and r["block"] == block):
            return r
    return None


def groups(doc):
    """(path, ranks) pairs present, in a stable order."""
    keys = {(r["path"], r["ranks"]) for r in doc["results"] if "ranks" in r}
    return sorted(keys, key=lambda k: (PATHS.index(k[0]), k[1]))


# ---- targets -----------------------------------------------------------------------

def rate_ratio(a, b, field):
    if not a or not b or not b.get(field):
        return None
    return a[field] / b[field]


def ratio_target(name, parts, limit):
    """One target over several cells: met when every cell's ratio reaches limit."""
    cells = [(label, r) for label, r in parts if r is not None]
    if not cells:
        return None
    text = "; ".join(f"{label}: {r:.2f}x" for label, r in cells)
    missed = [label for label, r in cells if r < limit]
    verdict = "met" if not missed else f"missed in {len(missed)} of {len(cells)}"
    return gb.target(name, text, verdict, worst=min(r for _, r in cells))


def stream_targets(doc):
    out = []
    cast, elem, fetch = [], [], []
    for path, n in groups(doc):
        c = stream_rec(doc, path, n, "c", "-", "triad")
        if path == "local":
            for block in ("1", "128", "largest"):
                cast.append((f"{n} ranks, B={block}", rate_ratio(
                    stream_rec(doc, path, n, "cast", block, "triad"), c, "mb_s_rank")))
            for method in ("ptr", "walk"):
                elem.append((f"{method}, {n} ranks, B=largest", rate_ratio(
                    stream_rec(doc, path, n, method, "largest", "triad"), c, "mb_s_rank")))
        else:
            fetch.append((f"{n} ranks", rate_ratio(
                stream_rec(doc, path, n, "bulk", "largest", "fetch", 1),
                stream_rec(doc, path, n, "mpi", "-", "fetch", 1), "mb_s_total")))
    for t in (ratio_target(f"cast-to-local triad >= {CAST_TRIAD_MIN}x plain C (node-local, "
                           "per-rank MB/s)", cast, CAST_TRIAD_MIN),
              ratio_target(f"pointer-to-shared element triad >= {ELEMENT_MIN}x plain C "
                           "(node-local data, per-rank MB/s)", elem, ELEMENT_MIN),
              ratio_target(f"bulk memget across nodes >= {MEMGET_MIN}x MPI_Get + flush "
                           "(neighbour's block in 256 KiB chunks)", fetch, MEMGET_MIN)):
        if t:
            out.append(t)
    bad = [r for r in doc["results"] if r.get("validated") is False]
    out.append(gb.target("STREAM validation", f"{len(bad)} failed of "
                         f"{len(doc['results'])} results", "met" if not bad else "missed"))
    return out


def sdes_targets(doc):
    out, parts = [], []
    for path, n in groups(doc):
        if n not in SDES_TARGET_RANKS:
            continue
        seq = sdes_rec(doc, path, n, "seq", 0)
        for block in (1, 8, 128):
            cast = sdes_rec(doc, path, n, "cast", block)
            r = rate_ratio(seq, cast, "usec_median")  # speed-up over sequential C
            parts.append((f"{path}, {n} ranks, block {block}", r))
    t = ratio_target("table building with cast-to-local faster than sequential C at 2 and 4 "
                     "ranks (speed-up = sequential time / parallel time)", parts, 1.0)
    if t:
        out.append(t)
    tables = [r for r in doc["results"] if r.get("op") == "tables" and r["method"] != "seq"]
    bad = [r for r in tables if not r.get("validated")]
    out.append(gb.target("the same tables for every method, block size and rank count "
                         "(entry by entry against the sequential build)",
                         f"{len(tables) - len(bad)} of {len(tables)} builds identical",
                         "met" if tables and not bad else "missed"))
    search = [r for r in doc["results"] if r.get("op") in ("brute_force", "differential")]
    lost = [r for r in search if not r.get("recovered")]
    out.append(gb.target("key search recovers the key (brute force by affinity and the "
                         "differential attack)", f"{len(search) - len(lost)} of {len(search)} "
                         "searches found exactly the secret key",
                         "met" if search and not lost else "missed"))
    return out


def targets(doc):
    return stream_targets(doc) if doc["scenario"] == "stream" else sdes_targets(doc)


# ---- Markdown --------------------------------------------------------------------

def header_lines(doc):
    p, m = doc.get("params", {}), doc.get("machine", {})
    reps = next((r.get("reps") for r in doc["results"] if r.get("reps")), "?")
    lines = [f"## pario bench {doc['scenario']}", "", doc.get("summary", "") + ".", "",
             f"Command: `{' '.join(doc.get('command', []))}`  ",
             f"ranks {','.join(map(str, p.get('ranks', [])))}, paths "
             f"{','.join(p.get('paths', []))}, {reps} interleaved repetitions per program run; "
             f"{m.get('cores')} cores ({m.get('cpu', '?')}), {m.get('mem_gib', '?')} GiB, "
             f"{m.get('os', '?')}, load {gb.fmt_load(m)} at start; {m.get('mpi', '?')}.  ",
             "Path `local`: all ranks one node (shared memory); `mpi`: PARIO_NODE_SIZE=1, "
             "every rank its own node (remote data through MPI RMA)."]
    for r in failed_runs(doc):
        lines.append(f"- **run failed: path {r['path']}, {r['ranks']} ranks** — "
                     f"{r.get('reason', '').splitlines()[0]}")
    for r in invalid_results(doc):
        lines.append(f"- **check failed**: {r}")
    return lines


def target_lines(doc):
    rows = [[t["target"], t["measured"], t["verdict"]] for t in doc.get("targets") or
            targets(doc)]
    return ["", "### Targets", ""] + gb.md_table(["target", "measured", "verdict"], rows,
                                                 ["---", "---", "---"])


def mb(r, field="mb_s_total"):
    return "—" if r is None else f"{r[field]:.0f}"


def stream_rows(doc, path, n):
    keys = []
    for r in doc["results"]:
        if r.get("bench") == "stream" and r["path"] == path and r["ranks"] == n:
            k = (r["shifted"], STREAM_METHODS.index(r["method"]), r["block_factor"], r["method"],
                 r["block"])
            if k not in keys:
                keys.append(k)
    return sorted(keys)


def stream_markdown(doc):
    out = []
    for path, n in groups(doc):
        rows = []
        elems = None
        for shifted, _, _, method, block in stream_rows(doc, path, n):
            recs = [stream_rec(doc, path, n, method, block, k, shifted) for k in STREAM_KERNELS]
            triad = recs[3]
            elems = elems or (triad or {}).get("elems")
            rows.append([method + (" shifted" if shifted else ""), block] +
                        [mb(r) for r in recs] + [mb(triad, "mb_s_rank"),
                                                 (triad or {}).get("elems", "—"),
                                                 "ok" if triad and triad["validated"] else "FAIL"])
        out += ["", f"### {path} path, {n} ranks: MB/s (10^6 B/s), median over repetitions", ""]
        out += gb.md_table(["method", "block"] + [f"{k} total" for k in STREAM_KERNELS] +
                           ["triad per rank", "elements", "check"], rows,
                           ["---", "---"] + ["---:"] * (len(STREAM_KERNELS) + 2) + ["---"])
    out += ["", "Total: bytes of all ranks / the time from the barrier before the kernel to the "
            "barrier after it (median over "
            "repetitions); per rank: each rank's bytes / its own time (median over ranks and "
            "repetitions). STREAM counts 2 doubles per element for copy and scale, 3 for add "
            "and triad; fetch 1. Shifted rows read the first operand one block further on "
            "(the next rank's block); element-wise shifted rows across nodes use the smaller "
            "arrays shown in `elements` (every access is a round trip)."]
    return out


def ms(r):
    return "—" if r is None else f"{r['usec_median'] / 1000:.2f}"


def sdes_markdown(doc):
    cols = groups(doc)
    rows = [["sequential C", "—"] + [ms(sdes_rec(doc, p, n, "seq", 0)) for p, n in cols]]
    for block in (1, 8, 128):
        for m in SDES_METHODS:
            rows.append([m, block] + [ms(sdes_rec(doc, p, n, m, block)) for p, n in cols])
    out = ["", "### Building the six tables, ms (median over repetitions)", ""]
    out += gb.md_table(["method", "block"] + [f"{p} {n} ranks" for p, n in cols], rows,
                       ["---", "---:"] + ["---:"] * len(cols))
    search = [r for r in doc["results"] if r.get("op") in ("brute_force", "differential")]
    srows = [[r["op"], r["path"], r["ranks"], f"{r['usec'] / 1000:.2f}", r["keys_found"],
              r["k2_candidates"] if r["k2_candidates"] >= 0 else "—",
              "yes" if r["recovered"] else "NO"] for r in search]
    out += ["", "### Key search (8 known pairs)", ""]
    out += gb.md_table(["search", "path", "ranks", "ms", "keys found", "K2 candidates",
                        "key recovered"], srows, ["---", "---", "---:", "---:", "---:", "---:",
                                                  "---"])
    out += ["", "Tables: DPT and DDT of S0 and S1 (16 x 16 and 16 x 4 entries) and of the "
            "S-box layer (S0 and S1 side by side: 256 x 256 and 256 x 16), 8-byte entries; a "
            "DDT entry counts the inputs itself. Parallel time: common start to the slowest "
            "rank's end; sequential C: rank 0 alone into plain arrays."]
    return out


def markdown(doc, columns=None):
    detail = stream_markdown if doc["scenario"] == "stream" else sdes_markdown
    return "\n".join(header_lines(doc) + target_lines(doc) + detail(doc)) + "\n"


# ---- plots -----------------------------------------------------------------------

def stream_plot(plt, doc):
    cols = groups(doc)
    fig, axes = plt.subplots(1, len(cols), squeeze=False, figsize=(4.6 * len(cols), 4.6))
    for ax, (path, n) in zip(axes[0], cols):
        labels, values = [], []
        for shifted, _, _, method, block in stream_rows(doc, path, n):
            r = stream_rec(doc, path, n, method, block, "triad", shifted)
            if r:
                labels.append(f"{method}{'>' if shifted else ''} {block}")
                values.append(r["mb_s_total"])
        ax.barh(range(len(values)), values)
        ax.set_yticks(range(len(values)))
        ax.set_yticklabels(labels, fontsize=7)
        ax.set_xscale("log")
        ax.invert_yaxis()
        ax.set_xlabel("triad MB/s, all ranks (median)")
        ax.set_title(f"{path} path, {n} ranks", fontsize=10)
        ax.grid(axis="x", which="both", alpha=0.3)
    return fig


def sdes_plot(plt, doc):
    cols = groups(doc)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(cols) + 3), 4.5))
    series = [("sequential C", "seq", 0)] + [(f"{m} B={b}", m, b) for b in (1, 8, 128)
                                             for m in SDES_METHODS]
    width = 0.8 / len(series)
    for k, (label, m, b) in enumerate(series):
        xs, ys = [], []
        for i, (p, n) in enumerate(cols):
            r = sdes_rec(doc, p, n, m, b)
            if r:
                xs.append(i + (k - (len(series) - 1) / 2) * width)
                ys.append(r["usec_median"] / 1000)
        ax.bar(xs, ys, width, label=label)
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels([f"{p}, {n} ranks" for p, n in cols], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("ms to build the tables (median)")
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    return fig


def plot(doc, png_path):
    figure = stream_plot if doc["scenario"] == "stream" else sdes_plot
    return gb.draw(doc, png_path, figure,
                   f"pario bench {doc['scenario']}, {doc.get('created_utc', '')}")
