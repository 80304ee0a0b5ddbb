/* The storage system calls of every driver, through one layer that can
 * make them fail on purpose (fault injection for the tests, tests/fault).
 *
 * A driver calls io_sys_x where it would call x: the same arguments and the
 * same results (-1 and errno, except io_sys_posix_fallocate, which returns
 * the error number as posix_fallocate does). Unless the environment asks
 * for injection or counting, each wrapper costs one predictable branch.
 *
 * PARIO_FAULT="rank=R,call=N,op=OP,error=E[,sticky]": in the process of
 * rank R of MPI_COMM_WORLD, the N-th call (from 1, counted in the process
 * from its start) matching OP fails with E, once, or with sticky that call
 * and every later matching one. OP: write (pwrite, pwritev), read (pread),
 * sync (fsync, fdatasync), trunc (ftruncate), alloc (fallocate,
 * posix_fallocate), lock (a byte-range lock taken; unlocks are made
 * unchanged and not counted), any (all of these), or mem: a scratch
 * buffer about to be allocated (io_scratch_reserve; not counted in any).
 * E: ENOSPC, EIO, ENOMEM, or short: a read or write moves only half of its
 * bytes (at least one) and returns that count, as the system may; on a call
 * that moves no bytes, short does nothing.
 *
 * PARIO_FAULT_COUNT=path: at exit every process that opened a file appends
 * one line to path: "rank=R write=.. read=.. sync=.. trunc=.. alloc=..
 * lock=.. mem=.. any=.. fired=..", its calls per op and how many were made to fail (or
 * short), so a harness can learn how many calls a run makes.
 *
 * The settings and counters are the one process-wide registry of this
 * folder: parsed once (pthread_once, at a driver's first open, in the
 * opening thread, which may call MPI), counted atomically afterwards from
 * any thread. */
#ifndef PARIO_IO_DRIVER_SYS_H
#define PARIO_IO_DRIVER_SYS_H

#include <fcntl.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Reads the environment, once per process. Drivers call it on open. */
void io_sys_setup(void);

ssize_t io_sys_pwrite(int fd, const void *buf, size_t len, off_t off);
ssize_t io_sys_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off);
ssize_t io_sys_pread(int fd, void *buf, size_t len, off_t off);
int io_sys_fsync(int fd);
int io_sys_fdatasync(int fd);
int io_sys_ftruncate(int fd, off_t size);
int io_sys_fallocate(int fd, int mode, off_t off, off_t len);
int io_sys_posix_fallocate(int fd, off_t off, off_t len);
/* fcntl(fd, F_OFD_SETLKW, fl): waits for a lock, or releases one (F_UNLCK). */
int io_sys_lock(int fd, struct flock *fl);
/* Whether a scratch buffer about to be allocated must fail (a mem fault). */
int io_sys_mem_fails(void);

#endif
