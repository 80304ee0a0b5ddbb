"""Where pario is built and how to launch MPI programs on each I/O back end.

A back end is the MPI-IO implementation a program runs on:
  pario  libpario-mpiio.so preloaded (LD_PRELOAD) into an unchanged MPI program
  ompio  Open MPI's OMPIO component (--mca io ompio)
  romio  ROMIO: Open MPI's romio321 component, or MPICH's built-in MPI-IO
  limit  not MPI: one process with plain pwrite/pread (benchmarks only)
"""
import os
import platform
import shutil
from pathlib import Path

MPI_BACKENDS = ("pario", "ompio", "romio")
ALL_BACKENDS = MPI_BACKENDS + ("limit",)
# pario with tracing on (PARIO_TRACE set): not run by default; `--backends
# pario,pario-traced` measures what tracing costs.
TRACED_BACKEND = "pario-traced"
PARIO_BACKENDS = ("pario", TRACED_BACKEND)
# The limit done by every rank of the run, each its contiguous part of the same
# bytes in large sequential calls on its node's mount (io_limit_ranks): what any
# library could get from these ranks and mounts. Not run by default.
LIMIT_RANKS_BACKEND = "limit-ranks"
LIMIT_BACKENDS = ("limit", LIMIT_RANKS_BACKEND)
PARIO_LIBRARY = "libpario-mpiio.so"
# What `cmake --install` leaves in PREFIX/share/pario for the installed command, in
# CMakeCache.txt's KEY=value form: the MPI, its mpiexec and where the libraries are.
INSTALL_RECORD = "pario-install.conf"


class SetupError(Exception):
    """The build or the MPI installation cannot do what was asked."""


def read_cmake_cache(build_dir):
    """Returns the CMakeCache.txt entries of a build directory (or the install record of an
    installed pario) as a dict."""
    cache = {}
    path = Path(build_dir) / "CMakeCache.txt"
    if not path.is_file():
        path = Path(build_dir) / INSTALL_RECORD
    if not path.is_file():
        return cache
    for line in path.read_text(errors="replace").splitlines():
        if not line or line.startswith(("#", "//")) or "=" not in line:
            continue
        key_type, value = line.split("=", 1)
        cache[key_type.split(":", 1)[0]] = value
    return cache


def find_tool_script(name, build_dir=None):
    """tools/NAME: beside these modules (run from tools/, or installed with them) or in
    the sources of the build at build_dir."""
    candidates = [Path(__file__).resolve().parent / name]
    if build_dir:
        source = read_cmake_cache(build_dir).get("pario_SOURCE_DIR")
        if source:
            candidates.append(Path(source) / "tools" / name)
    for c in candidates:
        if c.is_file():
            return c
    raise SetupError(f"{name} not found (looked in "
                     f"{', '.join(str(c.parent) for c in candidates)})")


def find_build_dir(explicit=None):
    """The build directory: --build, $PARIO_BUILD, or the one holding this script (in an
    installed pario: PREFIX/share/pario, which holds the install record)."""
    candidates = [explicit, os.environ.get("PARIO_BUILD"), Path(__file__).resolve().parent.parent]
    for cand in candidates:
        if cand and any((Path(cand) / f).is_file() for f in ("CMakeCache.txt", INSTALL_RECORD)):
            return Path(cand).resolve()
    if explicit:
        raise SetupError(f"{explicit} is not a CMake build directory (no CMakeCache.txt)")
    raise SetupError("cannot find the build directory: run build/bin/pario, or pass --build DIR "
                     "or set PARIO_BUILD")


class Mpi:
    """One MPI installation (Open MPI or MPICH) and how to launch on each back end."""

    def __init__(self, flavor, mpiexec, build_dir, build_flavor=None, libdir="lib"):
        self.flavor = flavor
        self.mpiexec = mpiexec
        self.build_dir = Path(build_dir) if build_dir else None
        self.build_flavor = build_flavor  # the MPI the build's binaries were compiled with
        self.libdir = libdir  # the libraries, relative to build_dir

    @classmethod
    def detect(cls, build_dir, flavor=None):
        """The MPI named by `flavor`, else the one the build was configured with."""
        cache = read_cmake_cache(build_dir) if build_dir else {}
        flavor = flavor or cache.get("PARIO_MPI", "openmpi")
        if flavor not in ("openmpi", "mpich"):
            raise SetupError(f"unknown MPI '{flavor}' (openmpi or mpich)")
        default = "mpiexec.mpich" if flavor == "mpich" else "mpiexec.openmpi"
        mpiexec = cache.get("MPIEXEC_EXECUTABLE", "") if cache.get("PARIO_MPI") == flavor else ""
        mpiexec = mpiexec or shutil.which(default)
        if not mpiexec:
            raise SetupError(f"{default} not found: install the {flavor} package (tools/deps.sh)")
        return cls(flavor, mpiexec, build_dir, cache.get("PARIO_MPI"),
                   cache.get("PARIO_LIBDIR", "lib"))

    def build_mismatch(self):
        """Why the build's binaries cannot run under this MPI, or None."""
        if self.build_flavor and self.build_flavor != self.flavor:
            return (f"{self.build_dir} is built with {self.build_flavor}; MPI binaries are "
                    f"ABI-specific: configure a build with -DPARIO_MPI={self.flavor} and use "
                    f"its bin/pario")
        return None

    def pario_library(self):
        if not self.build_dir:
            return None
        return Path(os.path.normpath(self.build_dir / self.libdir / PARIO_LIBRARY))

    def backend_problem(self, backend):
        """Why `backend` cannot run here, or None when it can."""
        if backend == "ompio" and self.flavor != "openmpi":
            return "OMPIO is part of Open MPI only (this build uses MPICH)"
        if backend in PARIO_BACKENDS:
            if self.build_mismatch():
                return self.build_mismatch()
            lib = self.pario_library()
            if lib is None or not lib.is_file():
                return f"{lib or PARIO_LIBRARY} not found (build the pario-mpiio target)"
        if backend not in ALL_BACKENDS + (TRACED_BACKEND, LIMIT_RANKS_BACKEND):
            return f"unknown back end '{backend}' (one of {', '.join(ALL_BACKENDS)})"
        return None

    def launch_prefix(self, nranks, backend, env=None):
        """The mpiexec command line up to the program for `nranks` on `backend`, with the
        variables of `env` (a dict) set in every rank."""
        env = env or {}
        if self.flavor == "mpich":
            cmd = [self.mpiexec, "-n", str(nranks)]
            if backend in PARIO_BACKENDS:
                cmd += ["-genv", "LD_PRELOAD", str(self.pario_library())]
            for key, value in env.items():
                cmd += ["-genv", key, str(value)]
            return cmd
        cmd = [self.mpiexec, "--oversubscribe", "--mca", "btl", "self,vader", "-n", str(nranks)]
        if os.geteuid() == 0:
            cmd.insert(1, "--allow-run-as-root")
        if backend in PARIO_BACKENDS:
            cmd += ["-x", f"LD_PRELOAD={self.pario_library()}"]
        elif backend == "ompio":
            cmd += ["--mca", "io", "ompio"]
        elif backend == "romio":
            cmd += ["--mca", "io", "romio321"]
        for key, value in env.items():
            cmd += ["-x", f"{key}={value}"]
        return cmd


def machine_info():
    """Facts about the machine that explain benchmark numbers; no host name."""
    info = {"cores": os.cpu_count(), "kernel": platform.release(), "arch": platform.machine(),
            "python": platform.python_version()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["mem_gib"] = round(int(line.split()[1]) / 2**20, 1)
                break
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                info["os"] = line.split("=", 1)[1].strip('"')
        info["load_avg_1m_at_start"] = os.getloadavg()[0]
    except OSError:
        pass
    return info


def filesystem_of(path):
    """The mount's file-system type for `path` (from /proc/mounts), or 'unknown'."""
    best, fstype = "", "unknown"
    target = str(Path(path).resolve())
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) >= 3 and (target == fields[1] or
                                     target.startswith(fields[1].rstrip("/") + "/")):
                if len(fields[1]) > len(best):
                    best, fstype = fields[1], fields[2]
    except OSError:
        pass
    return fstype
