/* File handles: allocation, validation and the Fortran handle table.
 *
 * Registry (process-wide, guarded by handles.lock): slots[i] is the open
 * handle whose Fortran handle is i; slot 0 stands for MPI_FILE_NULL and is
 * never used. A handle is valid only while it is in the table, so a freed or
 * bogus MPI_File is rejected without being dereferenced. Freed slots are
 * reused (lowest first), so the table grows only with the number of files
 * open at the same time.
 */
#include "mpiio/mpiio.h"

#include <pthread.h>
#include <stdlib.h>

/* "PARIOFIL" in ASCII: marks a live handle. */
#define MPIIO_FILE_MAGIC UINT64_C(0x504152494f46494c)
/* Initial number of slots; the table doubles when full. */
#define MPIIO_HANDLE_SLOTS_INITIAL 16

static struct {
    pthread_mutex_t lock;
    struct mpiio_file **slots;
    int nslots;
} handles = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

int pario_mpiio_active(void) {
    return 1;
}

/* Index of a free slot, growing the table if needed; -1 when out of memory.
 * Called with the lock held. */
static int handle_free_slot(void) {
    for (int i = 1; i < handles.nslots; i++)
        if (!handles.slots[i])
            return i;
    int n = handles.nslots ? 2 * handles.nslots : MPIIO_HANDLE_SLOTS_INITIAL;
    struct mpiio_file **slots = realloc(handles.slots, (size_t)n * sizeof *slots);
    if (!slots)
        return -1;
    for (int i = handles.nslots; i < n; i++)
        slots[i] = NULL;
    int first = handles.nslots ? handles.nslots : 1;
    handles.slots = slots;
    handles.nslots = n;
    return first;
}

struct mpiio_file *mpiio_handle_new(pario_file *pf, MPI_Errhandler errhandler) {
    struct mpiio_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    pthread_mutex_lock(&handles.lock);
    int slot = handle_free_slot();
    if (slot > 0)
        handles.slots[slot] = f;
    pthread_mutex_unlock(&handles.lock);
    if (slot < 0) {
        free(f);
        return NULL;
    }
    f->magic = MPIIO_FILE_MAGIC;
    f->fint = slot;
    f->pf = pf;
    f->errhandler = errhandler;
    f->split = MPIIO_SPLIT_NONE;
    return f;
}

void mpiio_handle_free(struct mpiio_file *f) {
    pthread_mutex_lock(&handles.lock);
    if (f->fint > 0 && f->fint < handles.nslots && handles.slots[f->fint] == f)
        handles.slots[f->fint] = NULL;
    pthread_mutex_unlock(&handles.lock);
    f->magic = 0;
    free(f);
}

/* The slot holding fh, or 0. Called with the lock held. */
static int handle_slot_of(MPI_File fh) {
    for (int i = 1; i < handles.nslots; i++)
        if (handles.slots[i] && mpiio_handle_of(handles.slots[i]) == fh)
            return i;
    return 0;
}

struct mpiio_file *mpiio_handle_find(MPI_File fh) {
    if (fh == MPI_FILE_NULL)
        return NULL;
    pthread_mutex_lock(&handles.lock);
    int slot = handle_slot_of(fh);
    struct mpiio_file *f = slot ? handles.slots[slot] : NULL;
    pthread_mutex_unlock(&handles.lock);
    return f && f->magic == MPIIO_FILE_MAGIC ? f : NULL;
}

int mpiio_lookup(MPI_File fh, const char *fname, struct mpiio_file **f) {
    *f = mpiio_handle_find(fh);
    return *f ? MPI_SUCCESS : mpiio_fail_bad_handle(fh, fname);
}

MPI_Fint PMPI_File_c2f(MPI_File fh) {
    struct mpiio_file *f = mpiio_handle_find(fh);
    return f ? (MPI_Fint)f->fint : 0;
}
MPIIO_ALIAS(MPI_File_c2f);

MPI_File PMPI_File_f2c(MPI_Fint fint) {
    MPI_File fh = MPI_FILE_NULL;
    pthread_mutex_lock(&handles.lock);
    if (fint > 0 && fint < handles.nslots && handles.slots[fint])
        fh = mpiio_handle_of(handles.slots[fint]);
    pthread_mutex_unlock(&handles.lock);
    return fh;
}
MPIIO_ALIAS(MPI_File_f2c);
