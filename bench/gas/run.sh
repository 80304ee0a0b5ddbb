#!/usr/bin/env bash
# Runs every gas benchmark and writes one JSON file per run.
# Usage: bench/gas/run.sh BUILD_DIR OUT_DIR
# gas_bench_am and gas_bench_put measure the node-local and the MPI path in
# the same run (they create a second team with PARIO_NODE_SIZE=1);
# gas_bench_bcast runs once per path and rank count.
set -euo pipefail
build=${1:?build directory}
out=${2:?output directory}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { mpiexec.openmpi --oversubscribe --mca btl self,vader "$@"; }
b=$build/bench
run -n 2 "$b/gas_bench_am" > "$out/am.json"
run -n 2 "$b/gas_bench_put" > "$out/put.json"
for path in local mpi; do
  env=()
  if [ "$path" = mpi ]; then env=(-x PARIO_NODE_SIZE=1); fi
  for n in 2 4 8; do
    run -n "$n" "${env[@]}" "$b/gas_bench_bcast" > "$out/bcast_${path}_np$n.json"
  done
done
