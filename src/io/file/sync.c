/* MPI_File_sync: one fsync per file and machine.
 *
 * fsync makes every dirty page of an inode durable, whichever descriptor
 * wrote it: on one machine an inode has one page cache. So of the ranks on
 * one machine that see the file as the same inode (the same device and
 * inode number, that is one mount: the simulated nodes of the test bed each
 * have their own mount and so their own fsync), only the lowest one that
 * wrote since its last sync calls fsync, after the others' writes have
 * reached the inode. Every rank's sync already skips the fsync when it wrote
 * nothing (io/driver/posix.c); with k writers per machine a sync costs one
 * fsync there instead of k, each a round trip to the servers on a network
 * file system and each waiting for the others' on a local one.
 *
 * The steps: one vote on the file's communicator (the outcome so far,
 * whether any rank wrote); when none did the sync ends there, as before.
 * Else one reduction on the machine's ranks (the lowest writer, and whether
 * they all see one inode: where they do not, each writer calls its own
 * fsync), the fsync, and the outcome agreed on the file's communicator, so a
 * failed fsync fails the sync on every rank; the rank that made it keeps
 * its mark and tries again at the next sync. The machine's communicator is
 * made at the file's first sync (MPI_Comm_split_type; that every rank has
 * it rides in the vote). Only plain posix files share: a striped file's
 * objects and the global cache's pages are synced by their own drivers on
 * every rank. */
#include <stdatomic.h>
#include <stdint.h>
#include "common/error.h"
#include "io/async/async.h"
#include "io/coll/coll.h"
#include "io/file/file.h"

/* Syncs of this file may share an fsync: the same answer on every rank. */
static int may_share(const pario_file *fh) {
    return fh->nranks > 1 && fh->io.drv == &io_driver_posix && !fh->io.stripe &&
           !(fh->amode & MPI_MODE_RDONLY);
}

/* Collective, at the first sync: the machine's ranks of fh->comm. Whether
 * every rank has them is agreed in the sync's vote. */
static void host_split(pario_file *fh) {
    int ok = MPI_Comm_split_type(fh->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                 &fh->sync_host) == MPI_SUCCESS;
    fh->sync_host_state = ok ? 1 : -1;
}

static void host_free(pario_file *fh) {
    if (fh->sync_host_state == 1)
        MPI_Comm_free(&fh->sync_host);
    fh->sync_host_state = -1;
}

/* What the machine's ranks reduce with MIN, as signed 64-bit words (MPICH
 * compares MPI_UINT64_T words as signed): the lowest writer, 0 when some
 * writer's inode cannot be named, and each of device and inode number and
 * its negation (min(x) == -min(-x) iff every rank that has the file open
 * passed x). */
enum { LOWEST_WRITER, ALL_NAMED, DEV, NEG_DEV, INO, NEG_INO, HOST_WORDS };

/* Collective on the machine: 1 when this rank is to call fsync, as the
 * lowest writer of an inode all the machine's ranks see, or because they
 * see different ones (each writer then calls its own) or could not be
 * asked. */
static int fsync_here(pario_file *fh, int wrote) {
    const io_handle *h = &fh->io;
    int me = 0;
    MPI_Comm_rank(fh->sync_host, &me);
    int named = h->fd >= 0 && h->dev <= INT64_MAX && h->ino <= INT64_MAX;
    int64_t dev = (int64_t)h->dev, ino = (int64_t)h->ino;
    int64_t mine[HOST_WORDS], all[HOST_WORDS];
    mine[LOWEST_WRITER] = wrote ? me : INT64_MAX;
    mine[ALL_NAMED] = named || !wrote;
    mine[DEV] = named ? dev : INT64_MAX;
    mine[NEG_DEV] = named ? -dev : INT64_MAX;
    mine[INO] = named ? ino : INT64_MAX;
    mine[NEG_INO] = named ? -ino : INT64_MAX;
    if (MPI_Allreduce(mine, all, HOST_WORDS, MPI_INT64_T, MPI_MIN, fh->sync_host) != MPI_SUCCESS)
        return wrote;
    int one_inode = all[ALL_NAMED] && all[DEV] == -all[NEG_DEV] && all[INO] == -all[NEG_INO];
    return wrote && (!one_inode || all[LOWEST_WRITER] == me);
}

/* Collective: makes the file's writes durable with one fsync per machine
 * where its ranks see one inode. rc: this rank's outcome so far. */
static int sync_shared(pario_file *fh, int rc, pario_error *err) {
    if (fh->sync_host_state == 0)
        host_split(fh);
    int wrote = atomic_load(&fh->io.unsynced);
    io_vote v = {
        .nany = 2, .any = {wrote, fh->sync_host_state < 0}, .call = "sync", .path = fh->path};
    int vrc = io_agree_vote(fh->comm, rc, &v, err);
    if (vrc != PARIO_OK) { /* what this rank wrote still becomes durable if it can */
        if (rc == PARIO_OK)
            fh->io.drv->sync(&fh->io, NULL);
        return vrc;
    }
    if (!v.any[0])
        return PARIO_OK; /* nothing written anywhere since the last sync */
    if (v.any[1]) {      /* some rank has no machine communicator: each its own */
        host_free(fh);
        return io_agree(fh->comm, fh->io.drv->sync(&fh->io, err), err);
    }
    int src = PARIO_OK;
    if (fsync_here(fh, atomic_exchange(&fh->io.unsynced, 0))) {
        atomic_store(&fh->io.unsynced, 1);
        src = fh->io.drv->sync(&fh->io, err);
    }
    return io_agree(fh->comm, src, err);
}

/* Collective: the writes made durable, and where the client caches between
 * opens, what it cached dropped once every rank's writes reached the
 * storage (the sync's outcome is agreed after them), so the reads after the
 * sync see them. */
static int sync_all(pario_file *fh, int rc, pario_error *err) {
    if (may_share(fh))
        rc = sync_shared(fh, rc, err);
    else {
        if (rc == PARIO_OK && !(fh->amode & MPI_MODE_RDONLY))
            rc = fh->io.drv->sync(&fh->io, err);
        rc = io_agree(fh->comm, rc, err);
    }
    io_file_drop_cached(fh);
    return rc;
}

int pario_file_sync(pario_file *fh) {
    pario_error *err = &fh->last;
    io_async_drain(fh);      /* what was started before is made durable too */
    io_file_size_forget(fh); /* others' changes may show from here on */
    int rc = io_report_held(fh, io_coll_kept_flush(fh), err); /* an own read that failed */
    return io_file_result(fh, sync_all(fh, rc, err));
}
