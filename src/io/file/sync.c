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
 * Who calls it is learnt in one allgather on the machine's ranks per sync
 * (device, inode, wrote); the machine's communicator is made at the file's
 * first such sync. Only plain posix files share: a striped file's objects
 * and the global cache's pages are synced by their own drivers on every
 * rank. The outcome is agreed on the file's communicator as before, so a
 * failed fsync fails the sync on every rank; the rank that made it keeps its
 * mark and tries again at the next sync. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "common/error.h"
#include "io/async/async.h"
#include "io/coll/coll.h"
#include "io/file/file.h"

/* Syncs of this file may share an fsync: the same answer on every rank. */
static int may_share(const pario_file *fh) {
    return fh->nranks > 1 && fh->io.drv == &io_driver_posix && !fh->io.stripe &&
           !(fh->amode & MPI_MODE_RDONLY);
}

/* What this rank tells its machine at a sync: the inode it sees (0 0:
 * none shared) and whether it wrote since its last sync. */
struct sync_word {
    uint64_t dev, ino, wrote;
};

/* Collective: the machine's ranks of fh->comm and room for their words,
 * or each rank on its own when some rank could not make them. */
static void host_make(pario_file *fh) {
    int ok = MPI_Comm_split_type(fh->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                 &fh->sync_host) == MPI_SUCCESS;
    int n = 0;
    if (ok)
        MPI_Comm_size(fh->sync_host, &n);
    fh->sync_words = ok ? malloc((size_t)n * sizeof *fh->sync_words) : NULL;
    ok = ok && fh->sync_words;
    int all_ok = 0;
    if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, fh->comm) != MPI_SUCCESS)
        all_ok = 0;
    if (!all_ok) {
        if (fh->sync_host != MPI_COMM_NULL)
            MPI_Comm_free(&fh->sync_host);
        free(fh->sync_words);
        fh->sync_words = NULL;
    }
    fh->sync_host_state = all_ok ? 1 : -1;
}

/* Collective on the machine: 1 when this rank is to call fsync, as the
 * lowest writer of its inode or because its machine could not be asked. */
static int fsync_here(pario_file *fh, int wrote) {
    const io_handle *h = &fh->io;
    int share = h->fd >= 0 && h->regular && h->ino != 0;
    struct sync_word mine = {share ? h->dev : 0, share ? h->ino : 0, (uint64_t)wrote};
    struct sync_word *all = fh->sync_words;
    int me = 0;
    MPI_Comm_rank(fh->sync_host, &me);
    if (MPI_Allgather(&mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, fh->sync_host) != MPI_SUCCESS)
        return wrote;
    for (int i = 0; share && i < me; i++)
        if (all[i].wrote && all[i].dev == mine.dev && all[i].ino == mine.ino)
            return 0;
    return wrote;
}

/* This rank's part of making the file's writes durable; rc: the sync's
 * outcome so far (on failure this rank calls no fsync but still answers its
 * machine). */
static int sync_storage(pario_file *fh, int rc, pario_error *err) {
    if (!may_share(fh))
        return rc == PARIO_OK ? fh->io.drv->sync(&fh->io, err) : rc;
    if (fh->sync_host_state == 0)
        host_make(fh);
    if (fh->sync_host_state < 0)
        return rc == PARIO_OK ? fh->io.drv->sync(&fh->io, err) : rc;
    int wrote = rc == PARIO_OK && atomic_exchange(&fh->io.unsynced, 0);
    if (!fsync_here(fh, wrote))
        return rc; /* nothing written here, or a lower writer's fsync covers it */
    atomic_store(&fh->io.unsynced, 1);
    return fh->io.drv->sync(&fh->io, err);
}

int pario_file_sync(pario_file *fh) {
    pario_error *err = &fh->last;
    io_async_drain(fh);      /* what was started before is made durable too */
    io_file_size_forget(fh); /* others' changes may show from here on */
    int rc = io_coll_kept_flush(fh);
    if (!(fh->amode & MPI_MODE_RDONLY))
        rc = sync_storage(fh, rc, err);
    rc = io_report_held(fh, rc, err); /* an own collective read that failed */
    return io_file_result(fh, io_agree(fh->comm, rc, err));
}
