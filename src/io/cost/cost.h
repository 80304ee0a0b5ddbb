/* What requests cost on the file system holding a file, as pario measured it
 * there (`pario calibrate DIR`, tools/calibrate.c), else the defaults below,
 * which were measured on ext4.
 *
 * Records: one line per file system in the file named by $PARIO_COSTS, else
 * $XDG_CACHE_HOME/pario/costs, else $HOME/.cache/pario/costs. '#' starts a
 * comment line; a record is blank-separated key=value fields, of which these
 * are read (the others, measured figures and when, where and on what host
 * they were measured, are for people):
 *
 *   mount=/scratch type=lustre write_call_bytes=N read_call_bytes=N reserve=yes|no
 *
 * mount is the mount point with blanks and backslashes written as octal
 * escapes (\040, \011, \012, \134), as in /proc/self/mounts. A record applies
 * to a file when its mount point and type are those of the mount holding the
 * file (io/cost/mount.h); a line missing one of the five fields or holding a
 * malformed value is ignored, and the last valid one for a file system wins.
 * No record (or no readable file) is not an error: the defaults apply.
 *
 * Each process reads the record for a file system once, at the first open of
 * a file there, and keeps it in a registry (one mutex, entries only added,
 * kept until the process ends): opens run in parallel in threaded programs,
 * and re-reading the file at every open would cost a round trip on a home
 * directory on a network file system. Calibrating again therefore reaches
 * programs started afterwards. */
#ifndef PARIO_IO_COST_H
#define PARIO_IO_COST_H

#include <stddef.h>
#include <stdint.h>

/* What one system call costs, in bytes of transfer: the exchange rate the
 * automatic sieving decision uses to weigh extra bytes against extra calls,
 * where no record says otherwise. A write call costs more than a read: it
 * takes the file's lock (ranks writing one file take turns, reads run side by
 * side) and updates the file's times and size. Measured on ext4 (pario bench
 * noncontig, 4 ranks on 2 cores, cached, medians of 5, MiB/s): with 16 KiB for
 * both, 4 KiB blocks interleaved in the file went by one call per block,
 * writing 968 (ROMIO's sieving 1557) and reading 2779 (OMPIO's calls per block
 * 13038); with 32 KiB per write and 8 KiB per read, writes sieve, 2162 (ROMIO
 * 1741), and reads go by block, 17027 (OMPIO 13561); 8 B to 512 B blocks sieve
 * either way. One process writing 48 KiB per call reaches 3344 MiB/s and
 * 1 MiB per call 5035, about 25 KiB of copy per call without any other
 * writer. */
#define IO_WRITE_CALL_BYTES ((int64_t)32 << 10)
#define IO_READ_CALL_BYTES ((int64_t)8 << 10)
/* Largest call cost accepted from a record or a hint (1 TiB): far beyond any
 * measured one, and small enough that costs of calls in a window add up
 * without overflow. */
#define IO_CALL_BYTES_MAX ((int64_t)1 << 40)

/* A file system where one read call costs as much as moving at least this
 * many bytes (pario_read_call_bytes: `pario calibrate`'s figure or the hint)
 * is request-bound: each request is a round trip (a network file system).
 * There a collective read whose pieces are adjacent and each smaller than
 * this is made by two-phase, one request for the lot, instead of a request
 * per rank (io/coll/route.c): IOR strided 4 KiB collective reads on the
 * GlusterFS test bed, 4 ranks as 2 nodes: 51-66 MiB/s two-phase against
 * 29-38 each rank on its own; on local ext4 (a read call worth 5.5-8 KB)
 * the same change halved the rate (573-585 against 945-1252), so it stays
 * off there. Noncontiguous memory is staged in larger steps there too
 * (io/indep/access.c). */
#define IO_REQUEST_BOUND_READ ((int64_t)64 << 10)
/* The same for write calls (pario_write_call_bytes): there the small-write
 * funnel leaves parts apart to their ranks (io/coll/small.c). The test bed's
 * write calls cost 78-113 KB of transfer; local ext4's 5-32 KB. */
#define IO_REQUEST_BOUND_WRITE ((int64_t)64 << 10)

/* What n calls cost in bytes at call_bytes each (1 to IO_CALL_BYTES_MAX),
 * saturating instead of overflowing (windows of very many tiny blocks), with
 * room left to add a window's bytes. */
static inline int64_t io_calls_cost(int64_t n, int64_t call_bytes) {
    return n > INT64_MAX / 2 / call_bytes ? INT64_MAX / 2 : n * call_bytes;
}

/* Whether reserving a large write's blocks before writing it pays. */
typedef enum io_reserve {
    IO_RESERVE_UNMEASURED = 0, /* no record: the built-in rule decides (ext4 only) */
    IO_RESERVE_PAYS,
    IO_RESERVE_DOES_NOT_PAY,
} io_reserve;

typedef struct io_costs {
    int64_t write_call_bytes; /* one write call costs as much as this many bytes */
    int64_t read_call_bytes;  /* one read call, likewise */
    io_reserve reserve;
    int recorded; /* from a calibration record, not the defaults */
} io_costs;

/* The defaults: the ext4 figures above, reservation unmeasured. */
void io_costs_default(io_costs *c);

/* The costs of the file system holding path: its record, else the defaults.
 * dev: the st_dev of the open file (0 when unknown); a file system seen
 * before on that device is not looked up in the mount table again. Never
 * fails; thread-safe. */
void io_costs_lookup(const char *path, uint64_t dev, io_costs *c);

/* Whether writes reserve their blocks first in automatic mode: as the record
 * says, else the built-in rule's verdict `fs_default`. */
int io_costs_reserve_pays(const io_costs *c, int fs_default);

/* Parse one record line: 1 and its fields (mount unescaped) when the line is
 * a valid record, else 0. */
int io_costs_parse_record(const char *line, char *mount, size_t mount_len, char *type,
                          size_t type_len, io_costs *c);

/* The record file this process would read now, or 0 when none is named (no
 * $PARIO_COSTS, $XDG_CACHE_HOME nor $HOME) or the name does not fit. */
int io_costs_file(char *path, size_t len);

#endif
