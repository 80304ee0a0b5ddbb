"""pario report: readable summaries of pario's JSON outputs.

Each input kind has a reporter: a Markdown function and an optional plot function,
registered in REPORTERS under the document's "kind" field: "pario-bench" (the I/O
scenarios of `pario bench`) and "pario-gasbench" (its gas scenarios am, put, bcast,
rendered by pario_gasbench) and "pario-pgasbench" (stream, sdes: pario_pgasbench).
Trace documents ("pario-trace", written by the io layer under PARIO_TRACE) are
rendered by pario_trace, which also writes the HTML page (--html) and gives advice.
"""
import json
import sys
from pathlib import Path

import pario_gasbench
import pario_pgasbench
import pario_testbed
import pario_trace

BENCH_KIND = "pario-bench"
TRACE_KIND = pario_trace.TRACE_KIND
# Column order of back ends in tables and plots.
BACKEND_ORDER = ("pario", "ompio", "romio", "limit", "limit-ranks")
OPS = ("write", "read")
MODES = ("cached", "durable")


class ReportError(Exception):
    pass


def load(path):
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ReportError(f"cannot read {path}: {e}")
    if not isinstance(doc, dict):
        raise ReportError(f"{path}: not a pario JSON document")
    return doc


def kind_of(doc):
    """The document kind; bench files without the field are recognised by shape."""
    if "kind" in doc:
        return doc["kind"]
    if "results" in doc and "scenario" in doc:
        return BENCH_KIND
    return "unknown"


# ---- bench documents ------------------------------------------------------------

def fmt_rate(x):
    if x is None:
        return "—"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def fmt_cell(rec):
    if rec is None:
        return "—"
    return (f"{fmt_rate(rec['mib_s_median'])} "
            f"({fmt_rate(rec['mib_s_min'])}–{fmt_rate(rec['mib_s_max'])})")


def backends_in(doc):
    named = list(doc.get("backends", {}))
    named += [r["backend"] for r in doc["results"] if r["backend"] not in named]
    return sorted(named, key=lambda b: (BACKEND_ORDER.index(b) if b in BACKEND_ORDER
                                        else len(BACKEND_ORDER), b))


def variants_in(doc):
    """Variants in the order the scenario defines them."""
    order = [p["variant"] for p in doc.get("plan", [])]
    order += [r["variant"] for r in doc["results"] if r["variant"] not in order]
    return list(dict.fromkeys(order))


def index_results(doc):
    return {(r["backend"], r["op"], r["mode"], r["variant"]): r for r in doc["results"]}


def bench_header(doc):
    p, m = doc.get("params", {}), doc.get("machine", {})
    lines = [f"## pario bench {doc['scenario']}", ""]
    if doc.get("summary"):
        lines += [doc["summary"] + ".", ""]
    lines.append(f"Command: `{' '.join(doc.get('command', []))}`  ")
    fs = m.get('filesystem', '?')
    if doc.get("filesystem", {}).get("testbed"):
        fs += f" ({pario_testbed.summary(doc['filesystem'])})"
    lines.append(f"{p.get('ranks')} ranks, {p.get('reps')} repetitions, size "
                 f"{p.get('size') or 'default'}; {m.get('cores')} cores ({m.get('cpu', '?')}), "
                 f"{m.get('mem_gib', '?')} GiB, {m.get('os', '?')}, file system "
                 f"{fs}; {m.get('mpi', '?')}.  ")
    lines.append("MiB/s = bytes of all ranks / time of the slowest rank; median (min–max) over "
                 "repetitions. `limit`: one process, sequential pwrite/pread of the same bytes.")
    if "limit-ranks" in doc.get("backends", {}):
        lines[-1] += (" `limit-ranks`: every rank the same on its contiguous part of the "
                      "bytes, on its node's mount; the slowest rank's time.")
    for b, s in doc.get("backends", {}).items():
        if s.get("status") != "ok":
            reason = s.get("reason", "").splitlines()[0] if s.get("reason") else ""
            lines.append(f"- **{b}: {s['status']}** — {reason}")
    return lines


def bench_markdown(doc, columns=None):
    """Markdown tables per (op, mode); `columns` fixes the back-end columns (a back end
    without results shows "—"), default: every back end of the run."""
    backends = list(columns) if columns else backends_in(doc)
    index = index_results(doc)
    variants = variants_in(doc)
    out = bench_header(doc)
    for op in OPS:
        for mode in MODES:
            rows = [v for v in variants if any((b, op, mode, v) in index for b in backends)]
            if not rows:
                continue
            out += ["", f"### {op}, {mode}", "",
                    "| variant | MiB | " + " | ".join(backends) + " |",
                    "|---|---:|" + "---:|" * len(backends)]
            for v in rows:
                recs = [index.get((b, op, mode, v)) for b in backends]
                nbytes = next(r["bytes"] for r in recs if r)
                out.append(f"| {v} | {nbytes / 2**20:.3g} | " +
                           " | ".join(fmt_cell(r) for r in recs) + " |")
    out += peak_rss_table(doc, backends, variants)
    return "\n".join(out) + "\n"


def peak_rss_table(doc, backends, variants):
    """Peak resident memory of the largest rank per variant and back end (the
    largest over its operations, modes and repetitions); empty without data."""
    peak = {}
    for r in doc["results"]:
        if r.get("peak_rss_mib") is not None:
            key = (r["backend"], r["variant"])
            peak[key] = max(peak.get(key, 0.0), r["peak_rss_mib"])
    rows = [v for v in variants if any((b, v) in peak for b in backends)]
    if not rows:
        return []
    out = ["", "### peak resident memory, MiB (largest rank)", "",
           "| variant | " + " | ".join(backends) + " |", "|---|" + "---:|" * len(backends)]
    for v in rows:
        cells = [f"{peak[(b, v)]:.1f}" if (b, v) in peak else "—" for b in backends]
        out.append(f"| {v} | " + " | ".join(cells) + " |")
    return out


def bench_plot(doc, png_path):
    """Writes grouped bars (variant x back end) per op and mode; returns a problem or None."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"matplotlib unavailable ({e}); install python3-matplotlib"
    index = index_results(doc)
    backends = [b for b in backends_in(doc) if any(k[0] == b for k in index)]
    variants = variants_in(doc)
    panels = [(op, mode) for op in OPS for mode in MODES
              if any(k[1] == op and k[2] == mode for k in index)]
    if not panels or not backends:
        return "no results to plot"
    width = max(8.0, 0.45 * len(variants) * max(1, len(backends)) / 2 + 3)
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, 3.2 * len(panels)), squeeze=False)
    bar = 0.8 / len(backends)
    for ax, (op, mode) in zip(axes[:, 0], panels):
        for i, b in enumerate(backends):
            xs, ys, lo, hi = [], [], [], []
            for j, v in enumerate(variants):
                r = index.get((b, op, mode, v))
                if r and r["mib_s_median"]:
                    xs.append(j + (i - (len(backends) - 1) / 2) * bar)
                    ys.append(r["mib_s_median"])
                    lo.append(r["mib_s_median"] - r["mib_s_min"])
                    hi.append(r["mib_s_max"] - r["mib_s_median"])
            if xs:
                ax.bar(xs, ys, bar, yerr=[lo, hi], capsize=2, label=b)
        ax.set_yscale("log")
        ax.set_ylabel("MiB/s")
        ax.set_title(f"{doc['scenario']}: {op}, {mode}")
        ax.set_xticks(range(len(variants)))
        ax.set_xticklabels(variants, rotation=30 if len(variants) > 6 else 0, ha="right"
                           if len(variants) > 6 else "center", fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=8)
    p = doc.get("params", {})
    where = ""
    if doc.get("filesystem", {}).get("testbed"):
        where = f"\n{pario_testbed.summary(doc['filesystem'])}"
    fig.suptitle(f"pario bench {doc['scenario']}: {p.get('ranks')} ranks, median of "
                 f"{p.get('reps')} (bars: min–max){where}", fontsize=10)
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
    return None


REPORTERS = {
    BENCH_KIND: {"markdown": bench_markdown, "plot": bench_plot},
    pario_gasbench.GAS_KIND: {"markdown": pario_gasbench.markdown, "plot": pario_gasbench.plot},
    pario_pgasbench.PGAS_KIND: {"markdown": pario_pgasbench.markdown,
                                "plot": pario_pgasbench.plot},
    TRACE_KIND: {"markdown": pario_trace.markdown, "plot": pario_trace.plot},
}


def add_arguments(p):
    p.add_argument("files", nargs="+", metavar="FILE.json",
                   help="a `pario bench` JSON (kind pario-bench or pario-gasbench) or a "
                   "trace (kind pario-trace, from PARIO_TRACE=FILE.json)")
    p.add_argument("--html", help="traces: also write the self-contained HTML page here "
                   "(one input file only)")
    p.add_argument("--png", help="also write the plot to this PNG (one input file only)")
    p.add_argument("--md", help="also write the Markdown to this file")
    p.add_argument("--columns", help="back-end columns of the tables, in order (e.g. "
                   "pario,ompio,romio,limit); default: the back ends of the run")


def main(args):
    if (args.png or args.html) and len(args.files) > 1:
        print("pario report: --png and --html take one input file", file=sys.stderr)
        return 2
    texts = []
    try:
        for path in args.files:
            doc = load(path)
            kind = kind_of(doc)
            if kind == TRACE_KIND:  # with the parts other processes wrote (PATH.<rank>)
                doc = pario_trace.with_siblings(path, doc)
            if args.html:
                if kind != TRACE_KIND:
                    raise ReportError(f"{path}: --html is for traces (kind {TRACE_KIND})")
                pario_trace.write_html(doc, args.html)
            reporter = REPORTERS.get(kind)
            if reporter is None:
                raise ReportError(f"{path}: unknown document kind '{kind}' "
                                  f"(known: {', '.join(REPORTERS)})")
            columns = [c.strip() for c in args.columns.split(",")] if args.columns else None
            texts.append(reporter["markdown"](doc, columns))
            if args.png:
                if reporter["plot"] is None:
                    raise ReportError(f"{path}: no plot for kind '{kind}'")
                problem = reporter["plot"](doc, args.png)
                if problem:
                    raise ReportError(problem)
    except ReportError as e:
        print(f"pario report: {e}", file=sys.stderr)
        return 1
    text = "\n".join(texts)
    if args.md:
        Path(args.md).write_text(text)
    print(text, end="")
    return 0
