#!/usr/bin/env bash
# Builds HDF5's parallel test programs (testpar/: testphdf5, t_shapesame, t_pread, ...)
# from Debian's source package of the HDF5 the system has, so `pario bench hdf5` can
# run them on pario and on the system's MPI-IO. Debian ships no test binaries.
#
#   tools/hdf5-testpar.sh [--cache DIR] [--source DIR] [--mpicc CC] [--jobs N]
#
#   --cache DIR   where the source and the build live (default
#                 ${XDG_CACHE_HOME:-~/.cache}/pario/hdf5); reused when present
#   --source DIR  a directory holding the package's .dsc and tarballs already
#                 (otherwise `apt-get source --download-only hdf5` fetches them
#                 into the cache; needs deb-src lines in the apt sources)
#   --mpicc CC    the MPI compiler (default mpicc: the MPI pario is built with
#                 must be the one the programs run under)
#   --jobs N      make -j (default 2)
#
# HDF5 is configured with --enable-parallel --disable-fortran --disable-cxx
# --disable-hl --disable-shared (static, so the programs run without libtool
# wrappers), and only src/, the test library and testpar/ are built. The last
# line printed is the directory holding the programs. Nothing is installed.
set -euo pipefail

cache="${XDG_CACHE_HOME:-$HOME/.cache}/pario/hdf5"
source_dir=""
mpicc="mpicc"
jobs=2

usage() {
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
    --cache) cache="$2"; shift 2 ;;
    --source) source_dir="$2"; shift 2 ;;
    --mpicc) mpicc="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "hdf5-testpar.sh: unknown argument $1" >&2; usage ;;
  esac
done

fail() {
  echo "hdf5-testpar.sh: $*" >&2
  exit 1
}

find_dsc() {
  ls "$1"/hdf5_*.dsc 2>/dev/null | head -n 1
}

fetch_source_package() {
  mkdir -p "$cache/pkg"
  if [ -n "$source_dir" ]; then
    [ -n "$(find_dsc "$source_dir")" ] || fail "no hdf5_*.dsc in $source_dir"
    cp -n "$source_dir"/hdf5_* "$cache/pkg/"
  elif [ -z "$(find_dsc "$cache/pkg")" ]; then
    (cd "$cache/pkg" && apt-get source --download-only hdf5 >&2) ||
      fail "apt-get source hdf5 failed in $cache/pkg (deb-src enabled? apt-get update done?)"
  fi
}

unpack_source() {
  [ -x "$cache/src/configure" ] && return 0
  local dsc
  dsc="$(find_dsc "$cache/pkg")"
  [ -n "$dsc" ] || fail "no hdf5_*.dsc in $cache/pkg"
  rm -rf "$cache/src"
  dpkg-source -x "$dsc" "$cache/src" >&2 || fail "dpkg-source -x $dsc failed"
}

configure_build() {
  [ -f "$cache/build/src/libhdf5.la" ] && return 0
  mkdir -p "$cache/build"
  (cd "$cache/build" &&
    CC="$mpicc" "$cache/src/configure" --enable-parallel --disable-fortran --disable-cxx \
      --disable-hl --disable-shared >configure.log 2>&1) ||
    fail "configure failed: see $cache/build/configure.log"
}

make_step() {
  local dir="$1" target="$2" log="$3"
  make -C "$cache/build/$dir" -j"$jobs" $target >"$cache/build/$log" 2>&1 ||
    fail "make -C $dir $target failed: see $cache/build/$log"
}

build_programs() {
  make_step src "" make-src.log
  make_step test libh5test.la make-test.log
  make_step testpar "" make-testpar.log
  [ -x "$cache/build/testpar/testphdf5" ] || fail "no testphdf5 in $cache/build/testpar"
}

fetch_source_package
unpack_source
configure_build
build_programs
echo "$cache/build/testpar"
