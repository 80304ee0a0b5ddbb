#!/usr/bin/env bash
# Installs what pario needs on Debian 12 when it is missing. Idempotent.
# Usage: tools/deps.sh [base|testbed]
#   base (default): compilers, both MPIs, the I/O clients the tests run
#   testbed: GlusterFS server and client for the network file system test bed
#            (tools/testbed.sh)
set -euo pipefail
case "${1:-base}" in
  base)
    pkgs=(cmake make gcc g++ openmpi-bin libopenmpi-dev mpich libmpich-dev python3 python3-numpy
          python3-matplotlib libhdf5-openmpi-dev hdf5-tools python3-mpi4py python3-h5py-mpi
          libpnetcdf-dev pnetcdf-bin pkg-config gfortran
          chromium) ;;  # chromium: the trace report's page is opened headless in tests/trace
  testbed)
    pkgs=(glusterfs-server glusterfs-client iproute2 util-linux procps) ;;
  *)
    echo "usage: tools/deps.sh [base|testbed]" >&2
    exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
