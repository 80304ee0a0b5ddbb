/* Conversion of data accesses on non-native views.
 *
 * The user's count instances of the memory type are a packed stream of
 * `total` native bytes. It is cut into chunks of about DATAREP_STAGE_BYTES
 * that start and end on whole etypes (so each chunk is a valid access of its
 * own at the next etype) and on whole items (so no item is split between
 * two conversions). A write converts a chunk into the staging buffer and
 * writes it as MPI_BYTE; a read reads a chunk as MPI_BYTE and converts what
 * arrived. Explicit offsets move on by the chunk's etypes; the individual
 * pointer moves by itself as each chunk goes through the entry point.
 *
 * Collective calls stay collective: before each round the ranks agree
 * whether any of them still has data, and a rank with none (or whose
 * conversion failed) takes part with a zero count. */
#include "io/datarep/convert.h"

#include <stdlib.h>
#include <string.h>
#include "common/error.h"
#include "io/datarep/datarep.h"
#include "io/indep/cursor.h"

typedef struct dr_xfer {
    pario_file *fh;
    const io_datarep *rep;
    rw_call call; /* the caller's, with the offset moved on per chunk */
    void *buf;
    MPI_Count count;
    MPI_Datatype type;
    const flat_type *mem; /* the memory type, flattened (cached on it) */
    datarep_sig sig;      /* its signature */
    int64_t total;        /* native bytes of the user's data */
    char *stage;
    int64_t stage_cap;
    pario_error err; /* a conversion failure (kept apart from fh->last,
                        which every chunk's access resets) */
} dr_xfer;

bool io_datarep_applies(const pario_file *fh, MPI_Datatype type) {
    return fh->view.rep != NULL && type != MPI_BYTE && type != MPI_PACKED;
}

/* Checks the call and decodes the memory type; failures go to fh->last. */
static int xfer_open(dr_xfer *x, pario_file *fh, const rw_call *c, void *buf, MPI_Count count,
                     MPI_Datatype type) {
    *x = (dr_xfer){
        .fh = fh, .rep = fh->view.rep, .call = *c, .buf = buf, .count = count, .type = type};
    int rc = io_rw_check(fh, c, count, type);
    if (rc == PARIO_OK)
        rc = io_datarep_build_sig(x->rep, type, &x->sig, c->op, "the memory datatype", fh->path,
                                  &fh->last);
    if (rc != PARIO_OK)
        return rc;
    if ((rc = flat_get(type, &x->mem)) != PARIO_OK)
        return pario_fail(&fh->last, rc, "%s %s: cannot decode the memory datatype", c->op,
                          fh->path);
    x->total = (int64_t)count * x->mem->size;
    return PARIO_OK;
}

static void xfer_close(dr_xfer *x) {
    datarep_sig_free(&x->sig);
    free(x->stage);
    x->stage = NULL;
}

static bool on_item_boundary(const dr_xfer *x, int64_t at) {
    return datarep_sig_locate(&x->sig, at).byte == 0;
}

/* End of the chunk starting at p: whole etypes, whole items, about
 * DATAREP_STAGE_BYTES long (longer only when no boundary comes sooner). */
static int64_t chunk_end(const dr_xfer *x, int64_t p) {
    int64_t esize = x->fh->view.etype_size;
    int64_t step = DATAREP_STAGE_BYTES - DATAREP_STAGE_BYTES % esize;
    if (step < esize)
        step = esize;
    if (p + step >= x->total)
        return x->total;
    for (int64_t q = p + step; q > p; q -= esize)
        if (on_item_boundary(x, q))
            return q;
    for (int64_t q = p + step + esize; q < x->total; q += esize)
        if (on_item_boundary(x, q))
            return q;
    return x->total;
}

static int stage_reserve(dr_xfer *x, int64_t n) {
    if (n <= x->stage_cap)
        return PARIO_OK;
    char *s = realloc(x->stage, (size_t)n);
    if (!s)
        return pario_fail(&x->err, PARIO_ERR_NO_MEM,
                          "%s %s: no memory for a %lld-byte staging "
                          "buffer",
                          x->call.op, x->fh->path, (long long)n);
    x->stage = s;
    x->stage_cap = n;
    return PARIO_OK;
}

/* Copies native bytes [p, p + n) of the user's data into the stage (pack)
 * or back out of it. */
static int copy_native(dr_xfer *x, int64_t p, int64_t n, int pack) {
    io_mem_cursor m;
    int rc = io_mem_open(&m, x->mem, x->buf, x->count, p);
    if (rc != PARIO_OK)
        return pario_fail(&x->err, rc, "%s %s: cannot walk the memory datatype", x->call.op,
                          x->fh->path);
    io_mem_copy(&m, x->stage, n, pack);
    io_mem_close(&m);
    return PARIO_OK;
}

/* Whether rep converts in direction `write` with a function of the user's. */
static bool has_user_fn(const io_datarep *rep, bool write) {
    if (rep->external32)
        return false;
    return write ? rep->write_fn || rep->write_fn_c : rep->read_fn || rep->read_fn_c;
}

/* Runs the user's conversion function into the file (write) or out of it
 * over the items in bytes [p, p + n): the large-count one when registered so. */
static int call_user_fn(dr_xfer *x, bool write, int64_t p, int64_t n) {
    const io_datarep *r = x->rep;
    int64_t first = datarep_sig_item_index(&x->sig, datarep_sig_locate(&x->sig, p));
    int64_t end = datarep_sig_item_index(&x->sig, datarep_sig_locate(&x->sig, p + n));
    pario_datarep_conversion_c_fn *fn_c = write ? r->write_fn_c : r->read_fn_c;
    pario_datarep_conversion_fn *fn = write ? r->write_fn : r->read_fn;
    int rc;
    if (fn_c)
        rc = fn_c(x->buf, x->type, (MPI_Count)(end - first), x->stage, (MPI_Offset)first, r->extra);
    else if (end - first > INT32_MAX)
        return pario_fail(&x->err, PARIO_ERR_INTERN, "%s %s: chunk of too many items", x->call.op,
                          x->fh->path);
    else
        rc = fn(x->buf, x->type, (int)(end - first), x->stage, (MPI_Offset)first, r->extra);
    if (rc != MPI_SUCCESS)
        return pario_fail(&x->err, PARIO_ERR_CONVERSION,
                          "%s %s: the %s conversion function of \"%s\" failed (code %d)",
                          x->call.op, x->fh->path, write ? "write" : "read", r->name, rc);
    return PARIO_OK;
}

/* The user's bytes [p, p + n) into the file representation, in the stage. */
static int to_file(dr_xfer *x, int64_t p, int64_t n) {
    if (has_user_fn(x->rep, true))
        return call_user_fn(x, true, p, n);
    int rc = copy_native(x, p, n, 1);
    if (rc == PARIO_OK && x->rep->external32)
        datarep_sig_swap(&x->sig, datarep_sig_locate(&x->sig, p), x->stage, n);
    return rc;
}

/* The stage's file data for bytes [p, p + n) into the user's buffer. */
static int from_file(dr_xfer *x, int64_t p, int64_t n) {
    if (has_user_fn(x->rep, false))
        return call_user_fn(x, false, p, n);
    if (x->rep->external32)
        datarep_sig_swap(&x->sig, datarep_sig_locate(&x->sig, p), x->stage, n);
    return copy_native(x, p, n, 0);
}

/* The chunk's access through the ordinary entry point, as bytes. */
static int move_chunk(dr_xfer *x, int64_t p, int64_t n, bool collective, MPI_Count *moved) {
    rw_call c = x->call;
    if (c.explicit_offset)
        c.offset += p / x->fh->view.etype_size;
    *moved = 0;
    if (collective)
        return io_rw_collective(x->fh, &c, x->stage, n, MPI_BYTE, moved);
    return io_rw_independent(x->fh, &c, x->stage, n, MPI_BYTE, moved);
}

/* Bytes of whole items in the first `got` bytes of the chunk at p. */
static int64_t whole_items(const dr_xfer *x, int64_t p, int64_t got) {
    return got - datarep_sig_locate(&x->sig, p + got).byte;
}

/* One chunk [p, q) of a read or write. *done_bytes: user bytes completed;
 * *io_rc: the entry point's result, *conv_rc: the conversion's. */
static void run_chunk(dr_xfer *x, int64_t p, int64_t q, bool collective, int64_t *done_bytes,
                      int *io_rc, int *conv_rc) {
    MPI_Count moved = 0;
    *done_bytes = 0;
    *conv_rc = stage_reserve(x, q - p);
    if (*conv_rc == PARIO_OK && x->call.write && q > p)
        *conv_rc = to_file(x, p, q - p);
    if (*conv_rc != PARIO_OK)
        q = p; /* still take part in a collective round */
    *io_rc = move_chunk(x, p, q - p, collective, &moved);
    if (*io_rc != PARIO_OK || q == p)
        return;
    if (x->call.write) {
        *done_bytes = moved;
        return;
    }
    int64_t whole = whole_items(x, p, moved);
    if (whole > 0)
        *conv_rc = from_file(x, p, whole);
    *done_bytes = *conv_rc == PARIO_OK ? whole : 0;
}

/* The failure to report: the conversion's message when it failed. */
static int xfer_result(dr_xfer *x, int io_rc, int conv_rc, int64_t done, MPI_Count *bytes) {
    if (bytes)
        *bytes = done;
    if (io_rc == PARIO_OK && conv_rc != PARIO_OK) {
        x->fh->last = x->err;
        io_rc = conv_rc;
    }
    xfer_close(x);
    return io_file_result(x->fh, io_rc);
}

int io_datarep_rw_independent(pario_file *fh, const rw_call *c, void *buf, MPI_Count count,
                              MPI_Datatype type, MPI_Count *bytes) {
    dr_xfer x;
    pario_error_clear(&fh->last);
    int io_rc = xfer_open(&x, fh, c, buf, count, type), conv_rc = PARIO_OK;
    int64_t p = 0;
    while (io_rc == PARIO_OK && conv_rc == PARIO_OK && p < x.total) {
        int64_t q = chunk_end(&x, p), got = 0;
        run_chunk(&x, p, q, false, &got, &io_rc, &conv_rc);
        bool short_read = got < q - p; /* end of file */
        p += got;
        if (short_read)
            break;
    }
    return xfer_result(&x, io_rc, conv_rc, p, bytes);
}

/* True on every rank when any rank still has data to move. */
static int any_rank_busy(MPI_Comm comm, bool busy, bool *any) {
    int mine = busy, all = 0;
    if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return PARIO_ERR_COMM; /* the message is added by the caller */
    *any = all != 0;
    return PARIO_OK;
}

int io_datarep_rw_collective(pario_file *fh, const rw_call *c, void *buf, MPI_Count count,
                             MPI_Datatype type, MPI_Count *bytes) {
    dr_xfer x;
    pario_error_clear(&fh->last);
    int io_rc = io_agree(fh->comm, xfer_open(&x, fh, c, buf, count, type), &fh->last);
    int conv_rc = PARIO_OK;
    int64_t p = 0;
    bool busy = x.total > 0, any = false;
    while (io_rc == PARIO_OK && (io_rc = any_rank_busy(fh->comm, busy, &any)) == PARIO_OK && any) {
        int64_t q = busy ? chunk_end(&x, p) : p, got = 0;
        int rc = PARIO_OK;
        run_chunk(&x, p, q, true, &got, &io_rc, &rc);
        bool complete = got == q - p; /* else end of file */
        p += got;
        if (rc != PARIO_OK)
            conv_rc = rc;
        busy = busy && conv_rc == PARIO_OK && complete && p < x.total;
    }
    if (io_rc == PARIO_ERR_COMM && !fh->last.msg[0])
        pario_fail(&fh->last, io_rc, "%s %s: ranks could not agree on the next chunk", c->op,
                   fh->path);
    if (io_rc == PARIO_OK)
        conv_rc = io_agree(fh->comm, conv_rc, &x.err);
    return xfer_result(&x, io_rc, conv_rc, p, bytes);
}
