#!/usr/bin/env bash
# Checks that Darshan's runtime and pario's drop-in work together: runs
# tests/dropin/darshan_prog.c on 2 ranks with Darshan preloaded ahead of
# libpario-mpiio.so, and again with Darshan over the system's own MPI-IO,
# then compares the two logs' counters for the program's file (pydarshan),
# and checks that pario's trace shows pario served the calls.
# Usage: tools/darshan-check.sh /path/to/libdarshan.so [BUILD_DIR]
# (Darshan's runtime is not packaged in Debian or on PyPI: build it from
# its sources or take a cluster's; pydarshan is installed from PyPI.)
set -euo pipefail
cd "$(dirname "$0")/.."
darshan=${1:?usage: tools/darshan-check.sh /path/to/libdarshan.so [BUILD_DIR]}
build=${2:-build}
pario="$PWD/$build/lib/libpario-mpiio.so"
[ -f "$darshan" ] || { echo "darshan-check: $darshan: no such file" >&2; exit 2; }
[ -f "$pario" ] || { echo "darshan-check: $pario: no such file (build pario first)" >&2; exit 2; }
python3 -c 'import darshan' 2>/dev/null || python3 -m pip install -q darshan
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc -O2 -o "$work/prog" tests/dropin/darshan_prog.c
launch=(mpiexec --oversubscribe -n 2 -x DARSHAN_DISABLE_SHARED_REDUCTION=1)
[ "$(id -u)" = 0 ] && launch+=(--allow-run-as-root)
run() { # name, LD_PRELOAD, extra mpiexec args...
  local name=$1 preload=$2; shift 2
  "${launch[@]}" -x LD_PRELOAD="$preload" -x DARSHAN_LOGFILE="$work/$name.darshan" "$@" \
    "$work/prog" "$work/$name.dat"
}
run pario "$darshan:$pario" -x PARIO_TRACE="$work/trace.json"
run system "$darshan"
python3 - "$work" <<'PY'
import json, sys, warnings
import darshan
warnings.filterwarnings("ignore")
work = sys.argv[1]
COUNTERS = {"MPI-IO": ["MPIIO_COLL_OPENS", "MPIIO_COLL_WRITES", "MPIIO_INDEP_WRITES",
                       "MPIIO_COLL_READS", "MPIIO_INDEP_READS", "MPIIO_BYTES_WRITTEN",
                       "MPIIO_BYTES_READ"],
            "POSIX": ["POSIX_BYTES_WRITTEN", "POSIX_BYTES_READ"]}

def counters(name):
    """Per module, the counters of the program's file, by rank."""
    report = darshan.DarshanReport(f"{work}/{name}.darshan", read_all=True)
    out = {}
    for module, keys in COUNTERS.items():
        if module not in report.records:
            out[module] = {}
            continue
        df = report.records[module].to_df()["counters"]
        df = df[df["id"].map(report.name_records) == f"{work}/{name}.dat"]
        out[module] = {int(row["rank"]): {k: int(row[k]) for k in keys} for _, row in df.iterrows()}
    return out

pario, system = counters("pario"), counters("system")
bad = []
for module in COUNTERS:
    print(f"{module}: over pario {pario[module]}")
    print(f"{module}: over the system's MPI-IO {system[module]}")
    if not pario[module]:
        bad.append(f"no {module} record over pario")
    if module == "MPI-IO" and pario[module] != system[module]:
        bad.append("MPI-IO counters differ")
    if module == "POSIX":  # aggregation may move bytes between ranks: compare totals
        total = lambda m: {k: sum(r[k] for r in m.values()) for k in COUNTERS["POSIX"]}
        if total(pario[module]) != total(system[module]):
            bad.append("POSIX byte totals differ")
trace = json.load(open(f"{work}/trace.json"))
served = [f for f in trace["files"] if f["path"] == f"{work}/pario.dat"]
if not served or served[0]["total"]["logical"]["write"]["calls"] != 10:
    bad.append("pario's trace does not show the program's 10 writes")
print("darshan-check: " + ("; ".join(bad) if bad else "Darshan over pario counts what it counts over the system's MPI-IO"))
sys.exit(1 if bad else 0)
PY
