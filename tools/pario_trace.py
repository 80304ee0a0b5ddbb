"""Reports on pario trace documents (kind "pario-trace", written by the io
layer when PARIO_TRACE or the pario_trace hint is set; src/io/trace).

markdown(doc) and plot(doc, png) serve `pario report TRACE`; write_html
writes the self-contained page (inline SVG, no script, no network);
advise(doc) reads the trace for what to change, each piece of advice with
its reason and, where a hint does it, the hint; advise_main is
`pario advise -- PROGRAM`: run traced, apply the advice's hints as
PARIO_HINT_* variables, run again, report before and after.
"""
import html
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

TRACE_KIND = "pario-trace"
PHYS_OPS = ("pread", "pwrite", "sync", "trunc", "alloc", "lock")
DIRS = ("read", "write")
PAGE = 4096
# Logical requests below this many bytes per contiguous block are "small":
# below it a call per block costs more than the bytes (the sieving decision's
# default write-call cost is 32 KiB of transfer; 8 B blocks list-written ran
# at 103 MiB/s where sieving ran at 718).
SMALL_BLOCK = 4096
# Share of the physical requests that must be misaligned, and their mean size,
# before alignment is worth advice: small requests are misaligned anyway.
MISALIGNED_SHARE = 0.5
ALIGN_MIN_MEAN = 64 << 10
# A sieving window moving this many times its data wastes more than it saves.
SIEVE_WASTE = 4.0
# The cycle window pario uses when cb_buffer_size allows (pario_cb_cycle_size).
DEFAULT_CYCLE = 1 << 20


class TraceError(Exception):
    pass


# ---- reading --------------------------------------------------------------------

# Event flag: a logical call whose one physical request (same offset and bytes)
# is carried in the same event, as two more fields: its start and its seconds.
FOLDED = 1 << 6


def unfold_events(events):
    """The event log with every folded call as two events: the call (layer 0) and
    its physical request (layer 1, pread or pwrite, as the direction)."""
    out = []
    for e in events:
        if len(e) > 9 and e[7] & FOLDED:
            rank, _, op, t, dur, off, nbytes, flags, view, pt, pdur = e[:11]
            out.append([rank, 0, op, t, dur, off, nbytes, flags & ~FOLDED, view])
            out.append([rank, 1, op, pt, pdur, off, nbytes, 0, -1])
        else:
            out.append(e)
    return out


# Two-phase fields that are the same on every rank: merged as the maximum.
SAME_ON_EVERY_RANK = ("calls", "cycle_bytes", "cycles")


def merge_value(key, a, b, within=""):
    """Two ranks' values of one record field, merged as the library merges them."""
    if isinstance(a, dict):
        return {k: merge_value(k, a[k], b.get(k, a[k]), key) for k in a}
    if key == "views":
        return []
    if isinstance(a, list):
        n = max(len(a), len(b))
        return [(a[i] if i < len(a) else 0) + (b[i] if i < len(b) else 0) for i in range(n)]
    if key == "first":
        return min(x for x in (a, b) if x >= 0) if max(a, b) >= 0 else -1
    if key in ("end", "domain_max") or (within == "twophase" and key in SAME_ON_EVERY_RANK):
        return max(a, b)
    return a + b


def merge_unclosed_parts(parts):
    """One file left open at MPI_Finalize, from its ranks' parts (each written
    alone, events timed from its own open): one entry with every part's
    record as its rank's, the totals merged, the events on one time line."""
    parts = sorted(parts, key=lambda f: f["unclosed_rank"])
    t_open = min(p["t_open"] for p in parts)
    t_close = max(p["t_close"] for p in parts)
    total = parts[0]["total"]
    for p in parts[1:]:
        total = merge_value("total", total, p["total"])
    total["time"]["open"] = t_close - t_open
    events = []  # each part's rank is its place in the merged entry (unclosed_ranks)
    for rank, p in enumerate(parts):
        shift = p["t_open"] - t_open
        for e in p.get("events", []):
            e = [rank] + list(e[1:])
            e[3] += shift
            if len(e) > 9:
                e[9] += shift
            events.append(e)
    return dict(parts[0], nranks=len(parts), unclosed_rank=-1,
                unclosed_ranks=[p["unclosed_rank"] for p in parts], t_open=t_open,
                t_close=t_close, total=total, ranks=[p["ranks"][0] for p in parts],
                events=events)


def merge_unclosed(files):
    """Entries of the ranks' parts of a file left open (unclosed_rank >= 0) merged
    into one per file: parts of the same path join while their ranks differ."""
    out, open_parts = [], {}
    for f in files:
        r = f.get("unclosed_rank", -1)
        if r < 0:
            out.append(f)
            continue
        group = open_parts.get(f["path"])
        if group is None or r in {p["unclosed_rank"] for p in group}:
            group = open_parts[f["path"]] = []
            out.append(group)
        group.append(f)
    return [merge_unclosed_parts(x) if isinstance(x, list) else x for x in out]


def with_siblings(path, doc):
    """Files written by other processes (PATH.<world rank>) and the ranks' parts
    of files left open at MPI_Finalize (PATH.open.<world rank>, merged into one
    entry per file) join the document; folded events are unfolded."""
    doc = dict(doc)
    files = list(doc.get("files", []))
    for sib in sorted(Path(path).parent.glob(Path(path).name + ".*")):
        if re.fullmatch(r"(open\.)?\d+", sib.name[len(Path(path).name) + 1:]):
            try:
                files += json.loads(sib.read_text()).get("files", [])
            except (OSError, json.JSONDecodeError):
                continue
    files = [dict(f, events=unfold_events(f.get("events", []))) for f in files]
    doc["files"] = merge_unclosed(files)
    return doc


def routes_of(f):
    out = {}
    for item in filter(None, f.get("routes", "").split(",")):
        k, _, v = item.partition(":")
        out[k] = int(v or 0)
    return out


def size_class_label(b):
    if b == 0:
        return "0"
    lo = 1 << (b - 1)
    return human(lo)


def human(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" or n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def share(part, whole):
    return part / whole if whole else 0.0


def well_formed(f):
    """Rows (layer, kind, requests, share aligned to stripe unit, to page)."""
    rows = []
    t = f["total"]
    for d in DIRS:
        s = t["logical"][d]
        if s["calls"]:
            rows.append(("logical", d, s["calls"], share(s["aligned_unit"], s["calls"]),
                         share(s["aligned_page"], s["calls"])))
    for op in ("pread", "pwrite"):
        s = t["physical"][op]
        if s["calls"]:
            rows.append(("physical", op, s["calls"], share(s["aligned_unit"], s["calls"]),
                         share(s["aligned_page"], s["calls"])))
    return rows


def time_split(f):
    """Rank-seconds inside read/write calls, split into storage (the data
    requests, locks and reservations, in any thread), exchange and the rest
    (waiting for other ranks, agreement, copying); syncs come on their own,
    outside the read/write calls."""
    t = f["total"]
    logical, exchange = t["time"]["logical"], t["time"]["exchange"]
    storage = sum(t["physical"][op]["time"] for op in ("pread", "pwrite", "lock", "alloc"))
    return {"in calls": logical, "storage": storage, "exchange": exchange,
            "other (waiting, agreement, copying)": max(0.0, logical - storage - exchange),
            "sync (outside read/write calls)": t["physical"]["sync"]["time"]}


# ---- advice ---------------------------------------------------------------------

def advice_item(f, key, reason, hints=None, change=None):
    return {"file": f["path"], "key": key, "reason": reason, "hints": hints or {},
            "change": change}


def views_blocks(f, direction):
    """(smallest block, calls) over the noncontiguous views the ranks used."""
    smallest, calls = None, 0
    for r in f["ranks"]:
        for v in r["views"]:
            if not v["contiguous"] and v["calls"]:
                calls += v["calls"]
                smallest = v["block_min"] if smallest is None else min(smallest, v["block_min"])
    return smallest, calls


def advise_noncontig_independent(f, out):
    t = f["total"]
    for d in DIRS:
        k = t["kinds"][d]
        if not k["indep"] or not k["noncontig"] or f["nranks"] < 2:
            continue
        block, _ = views_blocks(f, d)
        phys = t["physical"]["pwrite" if d == "write" else "pread"]
        sieved = t["sieve"][d]["windows"]
        if block is None or block >= SMALL_BLOCK:
            continue
        per_call = share(phys["calls"], t["logical"][d]["calls"])
        syscall = "pwrite" if d == "write" else "pread"
        reason = (f"{k['indep']} independent {d}s through noncontiguous views with "
                  f"{block}-byte blocks became {phys['calls']:,} {syscall} calls "
                  f"({per_call:,.0f} per call)" + (f", {sieved} sieved windows" if sieved
                                                   else ", none sieved"))
        if not sieved:
            key = "romio_ds_write" if d == "write" else "romio_ds_read"
            out.append(advice_item(f, f"sieve-{d}", reason + ": let data sieving combine them",
                                   hints={key: "enable"}))
        out.append(advice_item(f, f"collective-{d}", reason,
                               change=f"use the collective call (MPI_File_{d}_all): "
                               "aggregators then access the file in large aligned requests"))


def advise_alignment(f, out):
    unit = f.get("stripe_unit", PAGE)
    s = f["total"]["physical"]["pwrite"]
    if not s["calls"]:
        return
    mis = s["calls"] - s["aligned_unit"]
    mean = s["bytes"] / s["calls"]
    if share(mis, s["calls"]) < MISALIGNED_SHARE or mean < ALIGN_MIN_MEAN:
        return
    lg = f["total"]["logical"]["write"]
    sizes = [e[6] for e in f.get("events", []) if e[1] == 1 and e[2] == 1]
    common = max(set(sizes), key=sizes.count) if sizes else int(mean)
    common_share = share(sizes.count(common), len(sizes)) if sizes else 1.0
    reason = (f"{100 * share(mis, s['calls']):.0f} % of the {s['calls']} writes reaching the file "
              f"are not well-formed: {100 * common_share:.0f} % are {common:,} B, not a "
              f"multiple of the {human(unit)} stripe unit")
    if lg["calls"] and f["total"]["kinds"]["write"]["coll"] == 0 and f["nranks"] > 1:
        out.append(advice_item(f, "align-collective", reason,
                               change="write collectively (MPI_File_write_all): aggregators "
                               "write domains aligned to the stripe unit"))
    out.append(advice_item(f, "align-records", reason,
                           change=f"make records a multiple of {unit:,} B (pad them), or set "
                           f"striping_unit to the record size when the file system allows"))


def advise_cycles(f, out):
    tp = f["total"]["twophase"]
    if not tp["calls"] or not tp["cycle_bytes"]:
        return
    cb = f["hints"]["cb_buffer_size"]
    if tp["domain_max"] <= tp["cycle_bytes"] or tp["cycle_bytes"] >= DEFAULT_CYCLE:
        return
    cycles = -(-tp["domain_max"] // tp["cycle_bytes"])
    want = max(DEFAULT_CYCLE, 1 << (tp["domain_max"] - 1).bit_length())
    reason = (f"cb_buffer_size {cb:,} B is smaller than one aggregator's domain "
              f"({tp['domain_max']:,} B): {cycles} exchange cycles per call where one would "
              f"do, each a round of messages")
    out.append(advice_item(f, "cb_buffer_size", reason, hints={"cb_buffer_size": str(want)}))


def advise_read_same(f, out):
    ranks = f["ranks"]
    reads = [r["logical"]["read"] for r in ranks]
    if len(ranks) < 2 or not all(s["calls"] for s in reads):
        return
    spans = {(s["first"], s["end"], s["bytes"]) for s in reads}
    if len(spans) != 1:
        return
    first, end, nbytes = spans.pop()
    if f.get("read_once"):  # already read once per node
        return
    reason = (f"every one of the {len(ranks)} ranks reads the same {human(nbytes)} "
              f"(bytes {first:,} to {end:,}): the file system serves them "
              f"{len(ranks)} times")
    change = ("read once (one rank, or each rank a part with MPI_File_read_all) and share "
              "it with MPI_Bcast/MPI_Allgather")
    hints = None
    # Where each read is a round trip to a server and ranks share nodes, pario can read
    # the file once per node into shared memory (test bed, 2 x 4 tasks: 656-938 MiB/s
    # against 313-338 reading it on every task); on a local disk the page cache already
    # is that copy, and the hint loses (245 against 509 MiB/s), so it is not offered there.
    if f.get("read_only") and f.get("request_bound_reads") and f["nnodes"] < len(ranks):
        reason += (f"; on this file system each read is a round trip, and "
                   f"{len(ranks)} ranks share {f['nnodes']} node(s)")
        hints = {"pario_read_once": "enable"}
    out.append(advice_item(f, "read-once", reason, hints=hints, change=change))


def advise_sieve_waste(f, out):
    for d in DIRS:
        s = f["total"]["sieve"][d]
        if s["windows"] and s["span"] > SIEVE_WASTE * s["data"]:
            key = "romio_ds_write" if d == "write" else "romio_ds_read"
            reason = (f"data sieving {d}s moved {human(s['span'] * (2 if d == 'write' else 1))} "
                      f"of file for {human(s['data'])} of data ({s['windows']} windows): the "
                      f"blocks are too sparse for it")
            out.append(advice_item(f, f"nosieve-{d}", reason, hints={key: "disable"}))


ADVISORS = (advise_noncontig_independent, advise_alignment, advise_cycles, advise_read_same,
            advise_sieve_waste)


def advise(doc):
    out = []
    for f in doc.get("files", []):
        for a in ADVISORS:
            a(f, out)
    return out


def advised_hints(advice):
    hints = {}
    for a in advice:
        hints.update(a["hints"])
    return hints


# ---- Markdown -------------------------------------------------------------------

def stat_row(layer, kind, s):
    mean = s["bytes"] / s["calls"] if s["calls"] else 0
    return (f"| {layer} | {kind} | {s['calls']:,} | {s['bytes']:,} | {human(mean)} | "
            f"{s['time']:.6f} | {s['failed']} |")


def left_open(f):
    """What the report says of a file left open at MPI_Finalize."""
    if f.get("unclosed_ranks"):
        ranks = ", ".join(str(r) for r in f["unclosed_ranks"])
        return f" Left open at MPI_Finalize: the parts of ranks {ranks}, merged."
    if f.get("unclosed_rank", -1) >= 0:
        return f" Left open at MPI_Finalize: rank {f['unclosed_rank']}'s part alone."
    return ""


def file_markdown(f):
    t = f["total"]
    lines = [f"### `{f['path']}`", "",
             f"{f['nranks']} ranks on {f['nnodes']} node(s), stripe unit {f['stripe_unit']:,} B, "
             f"open {t['time']['open']:.6f} s (slowest rank to last close). "
             f"Collective routes: {f['routes'] or 'none'}." +
             left_open(f), "",
             "| layer | kind | calls | bytes | mean | seconds (all ranks) | failed |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for d in DIRS:
        if t["logical"][d]["calls"]:
            k = t["kinds"][d]
            kinds = ", ".join(f"{n} {v}" for n, v in k.items() if v)
            lines.append(stat_row("logical", f"{d} ({kinds})", t["logical"][d]))
    for op in PHYS_OPS:
        if t["physical"][op]["calls"]:
            lines.append(stat_row("physical", op + (f" ({t['pwritev']} vectored)"
                                                    if op == "pwrite" and t["pwritev"] else ""),
                                  t["physical"][op]))
    views = sorted({(v["contiguous"], v["blocks"], v["block_min"], v["block_max"], v["extent"])
                    for r in f["ranks"] for v in r["views"]})
    if views:
        lines += ["", "Views: " + "; ".join(
            "contiguous" if c else f"{n:,} block(s) of {lo:,} B" + (f" to {hi:,} B" if hi != lo
                                                                    else "") +
            f" in every {ext:,} B of file" for c, n, lo, hi, ext in views) + "."]
    lines += ["", "Well-formedness (offset and length multiples of the unit, seed 002):", "",
              "| layer | kind | requests | stripe unit | 4 KiB page |", "|---|---|---:|---:|---:|"]
    for layer, kind, n, su, pg in well_formed(f):
        lines.append(f"| {layer} | {kind} | {n:,} | {100 * su:.0f} % | {100 * pg:.0f} % |")
    lines += ["", "Time split (rank-seconds inside read/write calls):", "",
              "| part | seconds |", "|---|---:|"]
    lines += [f"| {k} | {v:.6f} |" for k, v in time_split(f).items()]
    tp, sv = t["twophase"], t["sieve"]
    if tp["calls"]:
        lines += ["", f"Two-phase: {tp['calls']} call(s), {tp['domains']} aggregator domains "
                  f"(largest {tp['domain_max']:,} B), cycle window {tp['cycle_bytes']:,} B, "
                  f"{tp['cycles']} cycles, {tp['exchange_bytes']:,} B exchanged."]
    for d in DIRS:
        if sv[d]["windows"]:
            lines += ["", f"Data sieving ({d}): {sv[d]['windows']} windows spanning "
                      f"{sv[d]['span']:,} B for {sv[d]['data']:,} B of data."]
    if t["dropped"]:
        lines += ["", f"The event log kept {t['events']:,} events and dropped {t['dropped']:,} "
                  "(timeline and access map show the first ones)."]
    return lines


def markdown(doc, columns=None):
    del columns
    files = doc.get("files", [])
    lines = [f"## pario trace: `{doc.get('program', '?')}`", "",
             f"{len(files)} file(s) traced, {doc.get('world_ranks', '?')} ranks.", ""]
    for f in files:
        lines += file_markdown(f) + [""]
    lines += ["## Advice", ""]
    advice = advise(doc)
    if not advice:
        lines.append("Nothing to change: no pattern the advice rules know was found.")
    for a in advice:
        todo = ", ".join(f"`{k}={v}`" for k, v in a["hints"].items()) or a["change"]
        lines.append(f"- **{todo}** ({os.path.basename(a['file'])}): {a['reason']}.")
    return "\n".join(lines) + "\n"


# ---- pictures: inline SVG for the page, matplotlib for the PNG ----------------------

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


def svg_histogram(title, series):
    """series: {label: hist list}; grouped bars per size class."""
    top = max((len(h) for h in series.values()), default=0)
    if top == 0:
        return ""
    w, h, left, bottom = 640, 220, 50, 40
    peak = max(max(hh) if hh else 0 for hh in series.values()) or 1
    groups = top
    gw = (w - left - 10) / groups
    bw = gw / (len(series) + 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'role="img"><title>{html.escape(title)}</title>',
             f'<text x="{w / 2}" y="14" text-anchor="middle" font-size="13">'
             f'{html.escape(title)}</text>',
             f'<line x1="{left}" y1="{h - bottom}" x2="{w - 10}" y2="{h - bottom}" '
             'stroke="#333"/>']
    for b in range(groups):
        x0 = left + b * gw
        if b % max(1, groups // 12) == 0:
            parts.append(f'<text x="{x0 + gw / 2:.1f}" y="{h - bottom + 14}" font-size="9" '
                         f'text-anchor="middle">{size_class_label(b)}</text>')
        for i, (label, hist) in enumerate(series.items()):
            v = hist[b] if b < len(hist) else 0
            if not v:
                continue
            bh = (h - bottom - 24) * v / peak
            parts.append(f'<rect x="{x0 + i * bw:.1f}" y="{h - bottom - bh:.1f}" '
                         f'width="{bw:.1f}" height="{bh:.1f}" fill="{PALETTE[i]}">'
                         f'<title>{html.escape(label)}: {v} requests of '
                         f'{size_class_label(b)} and more</title></rect>')
    for i, label in enumerate(series):
        parts.append(f'<rect x="{left + 10 + 150 * i}" y="{h - 16}" width="10" height="10" '
                     f'fill="{PALETTE[i]}"/><text x="{left + 24 + 150 * i}" y="{h - 7}" '
                     f'font-size="10">{html.escape(label)}</text>')
    parts.append(f'<text x="4" y="30" font-size="9">peak {peak}</text></svg>')
    return "".join(parts)


def svg_timeline(f):
    ev = f.get("events", [])
    if not ev:
        return ""
    n = f["nranks"]
    w, lane, left = 760, 26, 60
    h = 40 + 2 * lane * n
    tmax = max(e[3] + e[4] for e in ev) or 1e-9
    sx = (w - left - 10) / tmax
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img">'
             '<title>per-rank timeline</title>',
             f'<text x="{w / 2}" y="14" text-anchor="middle" font-size="13">Per-rank timeline '
             f'(0 to {tmax:.6f} s after open; upper lane: calls, lower: storage)</text>']
    for r in range(n):
        y = 24 + 2 * lane * r
        parts.append(f'<text x="4" y="{y + lane}" font-size="11">rank {r}</text>')
    for rank, layer, op, t, dur, off, nbytes, flags, view in ev:
        y = 24 + 2 * lane * rank + layer * lane
        color = PALETTE[(1 if op == 1 else 0) if layer == 0 else 2 + op]
        name = DIRS[op] if layer == 0 else PHYS_OPS[op]
        parts.append(f'<rect x="{left + t * sx:.2f}" y="{y + 2}" width="{max(1.0, dur * sx):.2f}" '
                     f'height="{lane - 6}" fill="{color}"><title>rank {rank} {name} {nbytes} B at '
                     f'{off} ({dur * 1e6:.0f} us)</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


def svg_access_map(f):
    ev = [e for e in f.get("events", []) if e[1] == 1 and e[2] in (0, 1) and e[6] > 0]
    if not ev:
        return ""
    w, h, left = 760, 60 + 18 * f["nranks"], 60
    fmax = max(e[5] + e[6] for e in ev) or 1
    sx = (w - left - 10) / fmax
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img">'
             '<title>access map</title>',
             f'<text x="{w / 2}" y="14" text-anchor="middle" font-size="13">Access map: bytes '
             f'each rank read/wrote (0 to {fmax:,} B)</text>']
    for rank, layer, op, t, dur, off, nbytes, flags, view in ev:
        y = 24 + 18 * rank
        parts.append(f'<rect x="{left + off * sx:.2f}" y="{y + (8 if op == 0 else 0)}" '
                     f'width="{max(0.5, nbytes * sx):.2f}" height="8" '
                     f'fill="{PALETTE[rank % len(PALETTE)]}" opacity="{0.5 if op == 0 else 0.9}">'
                     f'<title>rank {rank} {PHYS_OPS[op]} [{off}, {off + nbytes})</title></rect>')
    for r in range(f["nranks"]):
        parts.append(f'<text x="4" y="{32 + 18 * r}" font-size="11">rank {r}</text>')
    parts.append(f'<text x="{left}" y="{h - 8}" font-size="10">upper half of a lane: writes, '
                 'lower: reads (physical requests)</text></svg>')
    return "".join(parts)


def svg_time_split(f):
    split = time_split(f)
    total = max(split["in calls"], split["storage"] + split["exchange"]) or 1e-12
    w, left = 640, 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="60" role="img">'
             '<title>time split</title>']
    x = left
    for i, k in enumerate(("storage", "exchange", "other (waiting, agreement, copying)")):
        bw = (w - 20) * split[k] / total
        parts.append(f'<rect x="{x:.1f}" y="10" width="{bw:.1f}" height="20" '
                     f'fill="{PALETTE[i + 2]}"><title>{k}: {split[k]:.6f} s</title></rect>'
                     f'<rect x="{left + 200 * i}" y="40" width="10" height="10" '
                     f'fill="{PALETTE[i + 2]}"/><text x="{left + 14 + 200 * i}" y="49" '
                     f'font-size="10">{k} {100 * split[k] / total:.0f} %</text>')
        x += bw
    parts.append("</svg>")
    return "".join(parts)


def md_table_to_html(lines):
    """The Markdown pipe tables and paragraphs of file_markdown as HTML."""
    out, table = [], []
    for line in lines + [""]:
        if line.startswith("|"):
            if not re.fullmatch(r"\|[-:|]+\|", line):
                table.append([html.escape(c.strip()) for c in line.strip("|").split("|")])
            continue
        if table:
            head, *rows = table
            out.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in head) + "</tr>" +
                       "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>"
                               for r in rows) + "</table>")
            table = []
        if line.startswith("### "):
            out.append(f"<h3>{html.escape(line[4:].strip('`'))}</h3>")
        elif line:
            out.append(f"<p>{html.escape(line)}</p>")
    return "\n".join(out)


def write_html(doc, path):
    advice = advise(doc)
    body = [f"<h1>pario trace: {html.escape(doc.get('program', '?'))}</h1>",
            f"<p>{len(doc.get('files', []))} file(s), {doc.get('world_ranks', '?')} ranks.</p>",
            "<h2>Advice</h2><ul>"]
    if not advice:
        body.append("<li>Nothing to change: no pattern the advice rules know was found.</li>")
    for a in advice:
        todo = ", ".join(f"{k}={v}" for k, v in a["hints"].items()) or a["change"]
        body.append(f"<li><b>{html.escape(todo)}</b> ({html.escape(os.path.basename(a['file']))})"
                    f": {html.escape(a['reason'])}.</li>")
    body.append("</ul>")
    for f in doc.get("files", []):
        t = f["total"]
        body.append(md_table_to_html(file_markdown(f)))
        body.append(svg_histogram("Request sizes, logical layer (calls per size class)",
                                  {f"logical {d}": t["logical"][d]["hist"] for d in DIRS}))
        body.append(svg_histogram("Request sizes, physical layer",
                                  {op: t["physical"][op]["hist"] for op in ("pread", "pwrite")}))
        body.append(svg_time_split(f))
        body.append(svg_timeline(f))
        body.append(svg_access_map(f))
    page = ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>pario trace</title>"
            "<style>body{font-family:sans-serif;margin:1em 2em}table{border-collapse:collapse;"
            "margin:.5em 0}td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}"
            "svg{display:block;margin:.6em 0;background:#fafafa}</style></head><body>"
            + "\n".join(x for x in body if x) + "</body></html>\n")
    Path(path).write_text(page)


def plot(doc, png_path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"matplotlib unavailable ({e}); install python3-matplotlib"
    files = doc.get("files", [])
    if not files:
        return "the trace holds no file"
    fig, axes = plt.subplots(len(files), 3, figsize=(15, 3.2 * len(files)), squeeze=False)
    for row, f in zip(axes, files):
        t = f["total"]
        for ax, layer, keys in ((row[0], "logical", DIRS), (row[1], "physical",
                                                            ("pread", "pwrite"))):
            for i, k in enumerate(keys):
                hist = t[layer][k]["hist"]
                ax.bar([b + 0.4 * i for b in range(len(hist))], hist, width=0.4, label=k)
            ax.set_title(f"{os.path.basename(f['path'])}: {layer} request sizes", fontsize=9)
            ax.set_xlabel("size class (log2 bytes)")
            ax.legend(fontsize=7)
        ax = row[2]
        spans = {}  # (rank, op): the physical requests, drawn as one bar collection
        for rank, layer, op, t0, dur, off, nbytes, flags, view in f.get("events", []):
            if layer == 1 and op in (0, 1) and nbytes > 0:
                spans.setdefault((rank, op), []).append((off, nbytes))
        for (rank, op), bars in spans.items():
            ax.broken_barh(bars, (rank + (0.5 if op == 0 else 0), 0.45),
                           color=PALETTE[rank % len(PALETTE)])
        ax.set_title("access map (physical; lower half writes)", fontsize=9)
        ax.set_xlabel("file offset (bytes)")
        ax.set_ylabel("rank")
    fig.tight_layout()
    fig.savefig(png_path, dpi=80)
    plt.close(fig)
    return None


# ---- pario advise -- PROGRAM ---------------------------------------------------------

def add_advise_arguments(p):
    p.add_argument("-n", "--np", type=int, default=1, help="processes (default 1)")
    p.add_argument("--out", default="pario-advise",
                   help="directory for the traces and reports (default ./pario-advise)")
    p.add_argument("--testbed", action="store_true",
                   help="run both times on the network file system test bed, as `pario run "
                   "--testbed` does (advice judged where requests cost a round trip)")
    p.add_argument("--nodes", type=int, help="with --testbed: simulated nodes")
    p.add_argument("program", nargs="+", help="-- PROGRAM [ARGS...]")


def traced_run(pario_cmd, run_args, program, trace, hints):
    env = dict(os.environ)
    env["PARIO_TRACE"] = str(trace)
    for k, v in hints.items():
        env[f"PARIO_HINT_{k}"] = v
    Path(trace).unlink(missing_ok=True)
    cmd = pario_cmd + ["run"] + run_args + ["--"] + program
    start = time.monotonic()
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if res.returncode != 0:
        raise TraceError(f"{' '.join(program)} failed ({res.returncode}):\n"
                         f"{res.stdout[-2000:]}{res.stderr[-2000:]}")
    try:
        doc = with_siblings(trace, json.loads(Path(trace).read_text()))
    except (OSError, json.JSONDecodeError) as e:
        raise TraceError(f"no trace written ({e}): does the program use MPI-IO?")
    return doc, seconds


def io_seconds(doc):
    """Rank-seconds inside read/write calls, over every file."""
    return sum(f["total"]["time"]["logical"] for f in doc.get("files", []))


def advise_main(args, pario_cmd):
    prog = [a for a in args.program if a != "--"] if args.program[:1] == ["--"] else args.program
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    run_args = ["-n", str(args.np)] + (["--testbed"] if args.testbed else [])
    if args.nodes is not None:
        run_args += ["--nodes", str(args.nodes)]
    try:
        before, wall0 = traced_run(pario_cmd, run_args, prog, out / "before.json", {})
        advice = advise(before)
        hints = advised_hints(advice)
        lines = [markdown(before), "## Before and after", ""]
        if not hints:
            lines.append("No advice can be applied as a hint; nothing to rerun.")
            after = None
        else:
            after, wall1 = traced_run(pario_cmd, run_args, prog, out / "after.json", hints)
            io0, io1 = io_seconds(before), io_seconds(after)
            lines += ["Applied as " + " ".join(f"PARIO_HINT_{k}={v}" for k, v in hints.items()),
                      "", "| run | wall seconds | seconds in I/O calls (all ranks) |",
                      "|---|---:|---:|", f"| before | {wall0:.3f} | {io0:.6f} |",
                      f"| after | {wall1:.3f} | {io1:.6f} |", "",
                      f"I/O time after / before: {share(io1, io0):.3g}"]
    except TraceError as e:
        print(f"pario advise: {e}", file=sys.stderr)
        return 1
    text = "\n".join(lines) + "\n"
    (out / "advice.md").write_text(text)
    summary = {"kind": "pario-advice", "hints": hints, "advice": advice,
               "before": io_seconds(before), "after": io_seconds(after) if after else None}
    (out / "advice.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(text, end="")
    return 0

