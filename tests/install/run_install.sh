#!/usr/bin/env bash
# Installs a pario build into a fresh prefix and uses it as an outside user would, with
# nothing of the build or source tree on any path:
#   1. the layout: headers, versioned libraries (soname), pkg-config files, the CMake
#      package, bin/pario, the docs;
#   2. an outside C program (outside/) built with CMake's find_package(pario) and run;
#   3. the same program built with mpicc and `pkg-config pario` and run;
#   4. a Fortran MPI-IO program (tests/fortran/views.F90, use mpi_f08) linked with
#      `pkg-config pario-mpiio`, run without any preload: its MPI_FILE_* calls must reach
#      pario (it prints "backend: pario");
#   5. the same program built against the MPI alone and run by the installed
#      `pario run`: it must print "backend: pario" too.
# Usage: run_install.sh BUILD SOURCE WORK MPI(openmpi|mpich) MPIEXEC [SANITIZE(0|1)]
# pipefail: no `grep -q` after a pipe here (its early exit would fail the writer).
set -euo pipefail
build=$1 source=$2 work=$3 mpi=$4 mpiexec=$5 sanitize=${6:-0}
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work/data"
unset PARIO_BUILD LD_PRELOAD LD_LIBRARY_PATH PKG_CONFIG_PATH
cd "$work"

fail() { echo "install test: FAILED: $*" >&2; exit 1; }
step() { echo "== $*"; }

mpicc=mpicc.$mpi mpifc=mpif90.$mpi
launch=("$mpiexec" -n 2)
[ "$mpi" = openmpi ] && launch=("$mpiexec" --oversubscribe --allow-run-as-root -n 2)
extra_flags=()
if [ "$sanitize" = 1 ]; then
  # The installed libraries carry the sanitizers; so must the programs that load them.
  extra_flags=(-fsanitize=address,undefined)
  export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
fi

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" > install.log || { cat install.log; fail "install"; }
libdir=$(dirname "$(find "$prefix" -name 'libpario.so' -print -quit)")
[ -n "$libdir" ] && [ "$libdir" != . ] || fail "no libpario.so under $prefix"
for f in include/pario/io.h include/pario/pario.h include/pario/gas.h include/pario/pgas.h \
         bin/pario share/pario/pario-install.conf share/doc/pario/README.md \
         share/doc/pario/architecture.md; do
  [ -e "$prefix/$f" ] || fail "$prefix/$f missing"
done
for lib in pario pario-mpiio; do
  soname=$(readelf -d "$libdir/lib$lib.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  [ "$soname" = "lib$lib.so.0" ] || fail "lib$lib.so: soname '$soname', expected lib$lib.so.0"
  [ -e "$libdir/$soname" ] || fail "$libdir/$soname missing"
done
[ -f "$libdir/pkgconfig/pario.pc" ] && [ -f "$libdir/cmake/pario/parioConfig.cmake" ] ||
  fail "pkg-config or CMake package files missing"
ldd "$libdir/libpario-mpiio.so" | grep "libpario.so.0 => $libdir/" > /dev/null ||
  fail "the installed drop-in does not find the installed libpario.so"

step "outside C program through find_package(pario)"
CC=$mpicc cmake -S "$source/tests/install/outside" -B outside-cmake -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_FLAGS="${extra_flags[*]}" > outside-cmake.log 2>&1 || { cat outside-cmake.log; fail "configure"; }
cmake --build outside-cmake > outside-build.log 2>&1 || { cat outside-build.log; fail "build"; }
ldd outside-cmake/outside | grep "libpario.so.0 => $libdir/" > /dev/null || fail "outside links another libpario"
"${launch[@]}" outside-cmake/outside "$work/data/native-cmake.dat" | tee run1.log
grep -q "outside: ok" run1.log || fail "outside (CMake) did not finish"

step "outside C program through pkg-config"
export PKG_CONFIG_PATH=$libdir/pkgconfig
$mpicc "${extra_flags[@]}" -o outside-pc "$source/tests/install/outside/outside.c" \
  $(pkg-config --cflags --libs pario) -Wl,-rpath,"$libdir"
"${launch[@]}" ./outside-pc "$work/data/native-pc.dat" | tee run2.log
grep -q "outside: ok" run2.log || fail "outside (pkg-config) did not finish"
cmp "$work/data/native-cmake.dat" "$work/data/native-pc.dat" || fail "the two outside files differ"

step "outside Fortran program linked with pario-mpiio (no preload)"
$mpifc "${extra_flags[@]}" -cpp -DBIND_F08 -o views-linked "$source/tests/fortran/views.F90" \
  $(pkg-config --libs pario-mpiio) -Wl,-rpath,"$libdir"
mkdir -p data/linked
"${launch[@]}" ./views-linked "$work/data/linked" | tee run3.log
grep -q "backend: pario" run3.log || fail "the linked Fortran program did not reach pario"
grep -q "views: ok" run3.log || fail "the linked Fortran program failed"

step "the same program built against the MPI alone, run by the installed pario run"
$mpifc "${extra_flags[@]}" -cpp -DBIND_F08 -o views-plain "$source/tests/fortran/views.F90"
mkdir -p data/run
"$prefix/bin/pario" run --dry-run -n 2 -- ./views-plain "$work/data/run" | tee dry.log
grep -q "$libdir/libpario-mpiio.so" dry.log || fail "pario run does not preload the installed drop-in"
"$prefix/bin/pario" run -n 2 -- ./views-plain "$work/data/run" | tee run4.log
grep -q "backend: pario" run4.log || fail "pario run: the program did not reach pario"
grep -q "views: ok" run4.log || fail "pario run: the program failed"
cmp data/linked/views.dat data/run/views.dat || fail "linked and preloaded runs wrote different files"
echo "install test: ok"
