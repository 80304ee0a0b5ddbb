"""An mpi4py application using MPI.File directly; it knows nothing of pario.

    mpi4py_client.py OUTDIR      writes OUTDIR/mpi4py_client.dat

The file is made of four regions, each written with different calls:
  header   write_at_all at explicit offsets (one block per rank)
  woven    set_view with a derived filetype (a resized vector of ints, the
           ranks' blocks interleaved), write_all, then read_all back
  async    iwrite_at and iwrite (individual pointer under a view) + Wait,
           then iread_at of another rank's part + Wait after sync-barrier-sync
  ordered  write_ordered on the shared pointer (rank r writes (r+1)*L bytes),
           then seek_shared and read_ordered back
get_size, get_position, get_position_shared and the statuses' counts are
checked; at the end rank 0 reads the whole file with plain Python and
compares it with the image computed here. Prints "backend: pario" or
"backend: system"; exits non-zero on any failed check.
"""

import ctypes
import os
import sys

from mpi4py import MPI
import numpy as np

HEADER_BYTES = 64  # header bytes per rank
WOVEN_BLOCK = 5  # ints per block of the interleaved view
WOVEN_BLOCKS = 4  # blocks each rank writes through the view
ASYNC_BYTES = 48  # bytes per rank and per nonblocking write
ORDERED_UNIT = 9  # rank r writes (r + 1) * ORDERED_UNIT bytes in order
INT_BYTES = 4

comm = MPI.COMM_WORLD
rank, nranks = comm.Get_rank(), comm.Get_size()
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        sys.stderr.write("rank %d: FAILED %s\n" % (rank, what))


def pattern(seed, length):
    """Deterministic bytes for one block: seed names the writer and region."""
    return bytes((seed * 37 + i * 11 + 5) % 251 for i in range(length))


def woven_values(r):
    return np.arange(WOVEN_BLOCK * WOVEN_BLOCKS, dtype=np.int32) + 100000 * (r + 1)


def region_offsets():
    header = 0
    woven = header + HEADER_BYTES * nranks
    async_ = woven + WOVEN_BLOCK * WOVEN_BLOCKS * nranks * INT_BYTES
    ordered = async_ + 2 * ASYNC_BYTES * nranks
    end = ordered + sum((r + 1) * ORDERED_UNIT for r in range(nranks))
    return header, woven, async_, ordered, end


def expected_image():
    header, woven, async_, ordered, end = region_offsets()
    img = bytearray(end)
    for r in range(nranks):
        img[header + r * HEADER_BYTES:header + (r + 1) * HEADER_BYTES] = pattern(r, HEADER_BYTES)
        vals = woven_values(r).tobytes()
        block = WOVEN_BLOCK * INT_BYTES
        for b in range(WOVEN_BLOCKS):
            at = woven + (b * nranks + r) * block
            img[at:at + block] = vals[b * block:(b + 1) * block]
        at = async_ + r * ASYNC_BYTES
        img[at:at + ASYNC_BYTES] = pattern(100 + r, ASYNC_BYTES)
        at = async_ + (nranks + r) * ASYNC_BYTES
        img[at:at + ASYNC_BYTES] = pattern(200 + r, ASYNC_BYTES)
    at = ordered
    for r in range(nranks):
        n = (r + 1) * ORDERED_UNIT
        img[at:at + n] = pattern(300 + r, n)
        at += n
    return bytes(img)


def write_header(fh):
    status = MPI.Status()
    fh.Write_at_all(rank * HEADER_BYTES, pattern(rank, HEADER_BYTES), status)
    check(status.Get_count(MPI.BYTE) == HEADER_BYTES, "write_at_all count")


def woven_filetype():
    """Two blocks of WOVEN_BLOCK ints, nranks blocks apart, resized so the
    next tile starts after the other ranks' blocks."""
    vec = MPI.INT.Create_vector(2, WOVEN_BLOCK, WOVEN_BLOCK * nranks)
    ftype = vec.Create_resized(0, 2 * WOVEN_BLOCK * nranks * INT_BYTES)
    ftype.Commit()
    vec.Free()
    return ftype


def woven_write_read(fh, woven):
    ftype = woven_filetype()
    fh.Set_view(woven + rank * WOVEN_BLOCK * INT_BYTES, MPI.INT, ftype, "native")
    data = woven_values(rank)
    status = MPI.Status()
    fh.Write_all(data, status)
    check(status.Get_count(MPI.INT) == data.size, "write_all count")
    check(fh.Get_position() == data.size, "position after write_all")
    fh.Sync()
    comm.Barrier()
    fh.Sync()
    fh.Seek(0, MPI.SEEK_SET)
    back = np.zeros_like(data)
    fh.Read_all(back, status)
    check(status.Get_count(MPI.INT) == data.size, "read_all count")
    check(np.array_equal(back, data), "read_all contents")
    ftype.Free()


def async_write_read(fh, async_):
    fh.Set_view(0, MPI.BYTE, MPI.BYTE, "native")
    first = bytearray(pattern(100 + rank, ASYNC_BYTES))
    req = fh.Iwrite_at(async_ + rank * ASYNC_BYTES, first)
    status = MPI.Status()
    req.Wait(status)
    check(status.Get_count(MPI.BYTE) == ASYNC_BYTES, "iwrite_at count")
    # The second half through the individual pointer under a shifted view.
    fh.Set_view(async_ + nranks * ASYNC_BYTES, MPI.BYTE, MPI.BYTE, "native")
    fh.Seek(rank * ASYNC_BYTES, MPI.SEEK_SET)
    second = bytearray(pattern(200 + rank, ASYNC_BYTES))
    req = fh.Iwrite(second)
    req.Wait(status)
    check(status.Get_count(MPI.BYTE) == ASYNC_BYTES, "iwrite count")
    check(fh.Get_position() == (rank + 1) * ASYNC_BYTES, "position after iwrite")
    fh.Sync()
    comm.Barrier()
    fh.Sync()
    other = (rank + 1) % nranks
    fh.Set_view(0, MPI.BYTE, MPI.BYTE, "native")
    back = bytearray(ASYNC_BYTES)
    req = fh.Iread_at(async_ + (nranks + other) * ASYNC_BYTES, back)
    req.Wait(status)
    check(status.Get_count(MPI.BYTE) == ASYNC_BYTES, "iread_at count")
    check(bytes(back) == pattern(200 + other, ASYNC_BYTES), "iread_at contents")


def ordered_write_read(fh, ordered, end):
    fh.Set_view(ordered, MPI.BYTE, MPI.BYTE, "native")
    mine = (rank + 1) * ORDERED_UNIT
    status = MPI.Status()
    fh.Write_ordered(pattern(300 + rank, mine), status)
    check(status.Get_count(MPI.BYTE) == mine, "write_ordered count")
    check(fh.Get_position_shared() == end - ordered, "shared position after write_ordered")
    fh.Sync()
    comm.Barrier()
    fh.Sync()
    fh.Seek_shared(0, MPI.SEEK_SET)
    back = bytearray(mine)
    fh.Read_ordered(back, status)
    check(status.Get_count(MPI.BYTE) == mine, "read_ordered count")
    check(bytes(back) == pattern(300 + rank, mine), "read_ordered contents")


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: mpi4py_client.py OUTDIR\n")
        return 2
    path = os.path.join(sys.argv[1], "mpi4py_client.dat")
    if rank == 0:
        on_pario = hasattr(ctypes.CDLL(None), "pario_mpiio_active")
        print("backend: %s" % ("pario" if on_pario else "system"), flush=True)
    header, woven, async_, ordered, end = region_offsets()

    fh = MPI.File.Open(comm, path, MPI.MODE_CREATE | MPI.MODE_RDWR)
    fh.Set_errhandler(MPI.ERRORS_ARE_FATAL)
    write_header(fh)
    woven_write_read(fh, woven)
    async_write_read(fh, async_)
    ordered_write_read(fh, ordered, end)
    size = fh.Get_size()
    check(size == end, "get_size %d, expected %d" % (size, end))
    fh.Close()

    comm.Barrier()
    if rank == 0:
        with open(path, "rb") as f:
            got = f.read()
        want = expected_image()
        if got != want:
            where = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                         min(len(got), len(want)))
            check(False, "file image: %d bytes, expected %d, first difference at %d" %
                  (len(got), len(want), where))
    total = comm.allreduce(len(failures))
    if rank == 0:
        print("mpi4py_client: %d ranks, %d failed checks" % (nranks, total), flush=True)
    return 0 if total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
