#!/usr/bin/env bash
# One rank of a fault scenario (tests/fault) on the test bed: run_fault.py
# starts this as its program, and it runs the scenario program through
# tools/testbed.sh node, so each rank reaches the file through its own node's
# client mount (2 ranks per node, PARIO_NODE_SIZE to match). The library
# run_fault.py preloads moves to TB_PRELOAD, which the wrapper sets as
# LD_PRELOAD only at its last exec.
#
# Environment: TB_TESTBED_SH (tools/testbed.sh), TB_MNT (the test bed's common
# mount), TB_INSTANCE, TB_FAULT_PROGRAM (the fault_scenario binary).
set -euo pipefail
export TB_PRELOAD=${LD_PRELOAD:-}
unset LD_PRELOAD
export PARIO_NODE_SIZE=2
exec bash "$TB_TESTBED_SH" node --mnt "$TB_MNT" --ranks-per-node 2 -- "$TB_FAULT_PROGRAM" "$@"
