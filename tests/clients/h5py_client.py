"""An h5py application on the MPI-IO driver; it knows nothing of pario.

    h5py_client.py OUTDIR      writes OUTDIR/h5py_client.h5

It creates (collectively, on every rank) a contiguous float dataset, a
chunked int dataset, an extendible chunked dataset and a group, with
attributes on the file, the group and the datasets; writes row blocks and
strided rows with `dset.collective`, column blocks independently, extends
the extendible dataset and writes the new rows collectively; then reopens
the file read-only and verifies every value and attribute (whole datasets
collectively, another rank's part independently). Prints "backend: pario"
or "backend: system"; exits non-zero on any failed check, or when the h5py
found is not the MPI build.
"""

import ctypes
import os
import sys

from mpi4py import MPI
import numpy as np
import h5py

ROWS_PER_RANK = 6  # rows of each dataset per rank
COLS = 9  # columns of every dataset
CHUNKS = (4, 4)  # chunk shape: chunks straddle the ranks' rows
EXT_INITIAL_PER_RANK = 2  # rows per rank of the extendible dataset before it grows

comm = MPI.COMM_WORLD
rank, nranks = comm.Get_rank(), comm.Get_size()
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        sys.stderr.write("rank %d: FAILED %s\n" % (rank, what))


def grid(ds, rows):
    """The full expected contents of dataset number ds."""
    r = np.arange(rows, dtype=np.float64)[:, None]
    c = np.arange(COLS, dtype=np.float64)[None, :]
    return ds * 10000 + r * 100 + c


def write_phase(path):
    rows = ROWS_PER_RANK * nranks
    mine = slice(rank * ROWS_PER_RANK, (rank + 1) * ROWS_PER_RANK)
    with h5py.File(path, "w", driver="mpio", comm=comm) as f:
        f.attrs["title"] = "pario clients: h5py"
        f.attrs["ranks"] = np.int32(nranks)
        grp = f.create_group("fields")
        grp.attrs["description"] = "two-dimensional test fields"

        temp = grp.create_dataset("temperature", (rows, COLS), dtype="f8")
        temp.attrs["units"] = "K"
        temp.attrs["range"] = np.array([0.0, 1e6])
        with temp.collective:
            temp[mine, :] = grid(1, rows)[mine]

        counts = grp.create_dataset("counts", (rows, COLS), dtype="i4", chunks=CHUNKS)
        counts.attrs["stride"] = np.int32(nranks)
        with counts.collective:
            counts[rank::nranks, :] = grid(2, rows)[rank::nranks].astype(np.int32)

        # Independent writes: column c belongs to rank c % nranks.
        cols = f.create_dataset("columns", (rows, COLS), dtype="f4", chunks=CHUNKS)
        want = grid(3, rows).astype(np.float32)
        for c in range(rank, COLS, nranks):
            cols[:, c] = want[:, c]

        ext0 = EXT_INITIAL_PER_RANK * nranks
        ext = f.create_dataset("extended", (ext0, COLS), maxshape=(None, COLS), dtype="f8",
                               chunks=CHUNKS)
        lo = rank * EXT_INITIAL_PER_RANK
        with ext.collective:
            ext[lo:lo + EXT_INITIAL_PER_RANK, :] = grid(4, rows)[lo:lo + EXT_INITIAL_PER_RANK]
        f.flush()
        ext.resize((rows, COLS))
        new_rows = np.arange(ext0, rows)[rank::nranks]
        with ext.collective:
            for r in range(-(-(rows - ext0) // nranks)):
                # Every rank takes part in each collective write; those with
                # no row left write an empty selection.
                if r < len(new_rows):
                    ext[new_rows[r]:new_rows[r] + 1, :] = grid(4, rows)[new_rows[r]:new_rows[r] + 1]
                else:
                    ext.write_direct(np.zeros((0, COLS)), np.s_[0:0, :], np.s_[0:0, :])


def read_phase(path):
    rows = ROWS_PER_RANK * nranks
    other = (rank + 1) % nranks
    theirs = slice(other * ROWS_PER_RANK, (other + 1) * ROWS_PER_RANK)
    with h5py.File(path, "r", driver="mpio", comm=comm) as f:
        check(f.attrs["title"] == "pario clients: h5py", "title attribute")
        check(int(f.attrs["ranks"]) == nranks, "ranks attribute")
        grp = f["fields"]
        check(grp.attrs["description"] == "two-dimensional test fields", "group attribute")
        temp, counts = grp["temperature"], grp["counts"]
        check(temp.attrs["units"] == "K", "units attribute")
        check(np.array_equal(temp.attrs["range"], [0.0, 1e6]), "range attribute")
        check(int(counts.attrs["stride"]) == nranks, "stride attribute")
        expect = {"temperature": (temp, grid(1, rows)),
                  "counts": (counts, grid(2, rows).astype(np.int32)),
                  "columns": (f["columns"], grid(3, rows).astype(np.float32)),
                  "extended": (f["extended"], grid(4, rows))}
        for name, (dset, want) in sorted(expect.items()):
            check(dset.shape == want.shape, "%s shape %s" % (name, dset.shape))
            check(dset.dtype == want.dtype, "%s dtype %s" % (name, dset.dtype))
            with dset.collective:
                whole = dset[...]
            check(np.array_equal(whole, want), "%s collective read" % name)
            part = dset[theirs, :]
            check(np.array_equal(part, want[theirs]), "%s independent read" % name)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: h5py_client.py OUTDIR\n")
        return 2
    if not h5py.get_config().mpi:
        sys.stderr.write("h5py_client: the h5py imported is not built with MPI "
                         "(install python3-h5py-mpi and run under mpiexec)\n")
        return 1
    path = os.path.join(sys.argv[1], "h5py_client.h5")
    if rank == 0:
        on_pario = hasattr(ctypes.CDLL(None), "pario_mpiio_active")
        print("backend: %s" % ("pario" if on_pario else "system"), flush=True)
    write_phase(path)
    comm.Barrier()
    read_phase(path)
    total = comm.allreduce(len(failures))
    if rank == 0:
        print("h5py_client: %d ranks, %d failed checks" % (nranks, total), flush=True)
    return 0 if total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
