#!/usr/bin/env bash
# One rank of a test program on the test bed, for drivers that start their
# program with mpiexec themselves (tests/fault/run_fault.py,
# tests/diff/run_diff.py): runs $TB_NODE_PROGRAM with this script's arguments
# through tools/testbed.sh node, so each rank reaches its files through its
# own node's client mount ($TB_RANKS_PER_NODE ranks per node, PARIO_NODE_SIZE
# to match). A library the driver preloads moves to TB_PRELOAD, which the
# wrapper sets as LD_PRELOAD only at its last exec.
#
# Environment: TB_TESTBED_SH (tools/testbed.sh), TB_MNT (the test bed's common
# mount), TB_INSTANCE, TB_RANKS_PER_NODE, TB_NODE_PROGRAM.
set -euo pipefail
if [ -n "${LD_PRELOAD:-}" ]; then
  export TB_PRELOAD=$LD_PRELOAD
  unset LD_PRELOAD
fi
export PARIO_NODE_SIZE=$TB_RANKS_PER_NODE
exec bash "$TB_TESTBED_SH" node --mnt "$TB_MNT" --ranks-per-node "$TB_RANKS_PER_NODE" -- \
  "$TB_NODE_PROGRAM" "$@"
