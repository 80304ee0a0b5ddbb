/* The data representations a view may name, and what each makes of a type.
 *
 * Process-wide registry: a fixed table of the representations registered
 * with pario_register_datarep, guarded by one mutex. Entries are only ever
 * added; an entry is filled in before the count that publishes it grows (both
 * under the mutex) and never changes afterwards, so a view may keep a pointer
 * to it for the rest of the process. "external32" is a constant entry of its
 * own; "native" and "internal" are no entry at all (NULL). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "common/error.h"
#include "io/datarep/datarep.h"

/* Most representations a process may register: programs register a handful
 * at most; a fixed table needs no allocation that would outlive the process. */
#define DATAREP_REGISTRY_MAX 64

static const io_datarep external32 = {.name = "external32", .external32 = true};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static io_datarep registry[DATAREP_REGISTRY_MAX];
static int registry_count;

static bool is_native_name(const char *name) {
    return !strcmp(name, "native") || !strcmp(name, "internal");
}

/* The registered entry called name; the caller holds registry_lock. */
static const io_datarep *registry_lookup_locked(const char *name) {
    for (int i = 0; i < registry_count; i++)
        if (!strcmp(registry[i].name, name))
            return &registry[i];
    return NULL;
}

static const io_datarep *registry_lookup(const char *name) {
    if (!strcmp(name, external32.name))
        return &external32;
    pthread_mutex_lock(&registry_lock);
    const io_datarep *rep = registry_lookup_locked(name);
    pthread_mutex_unlock(&registry_lock);
    return rep;
}

int io_datarep_find(const char *name, const io_datarep **rep, const char *op, const char *path,
                    pario_error *err) {
    *rep = NULL;
    if (name && is_native_name(name))
        return PARIO_OK;
    if (name)
        *rep = registry_lookup(name);
    if (*rep)
        return PARIO_OK;
    return pario_fail(err, PARIO_ERR_UNSUPPORTED_DATAREP,
                      "%s %s: data representation \"%s\" is not supported (native, internal, "
                      "external32 or a registered one)",
                      op, path, name ? name : "(null)");
}

static int registry_add(const io_datarep *rep, pario_error *err) {
    int rc = PARIO_OK;
    pthread_mutex_lock(&registry_lock);
    if (registry_lookup_locked(rep->name))
        rc = pario_fail(err, PARIO_ERR_DUP_DATAREP,
                        "register_datarep: \"%s\" is already registered", rep->name);
    else if (registry_count == DATAREP_REGISTRY_MAX)
        rc = pario_fail(err, PARIO_ERR_NO_MEM,
                        "register_datarep: \"%s\": the registry is full (%d representations)",
                        rep->name, DATAREP_REGISTRY_MAX);
    else
        registry[registry_count++] = *rep;
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

/* Checks rep's name and extent function, then adds it. */
static int register_checked(io_datarep *rep, const char *name, pario_error *err) {
    pario_error_clear(err);
    if (!name || !name[0] || strlen(name) >= MPI_MAX_DATAREP_STRING)
        return pario_fail(err, PARIO_ERR_ARG,
                          "register_datarep: the name must have 1 to %d characters",
                          MPI_MAX_DATAREP_STRING - 1);
    if (!rep->extent_fn)
        return pario_fail(err, PARIO_ERR_ARG, "register_datarep: \"%s\": no extent function", name);
    if (is_native_name(name) || !strcmp(name, external32.name))
        return pario_fail(err, PARIO_ERR_DUP_DATAREP,
                          "register_datarep: \"%s\" is a predefined data representation", name);
    snprintf(rep->name, sizeof rep->name, "%s", name);
    return registry_add(rep, err);
}

int pario_register_datarep(const char *name, pario_datarep_conversion_fn *read_fn,
                           pario_datarep_conversion_fn *write_fn,
                           pario_datarep_extent_fn *extent_fn, void *extra_state,
                           pario_error *err) {
    io_datarep rep = {
        .read_fn = read_fn, .write_fn = write_fn, .extent_fn = extent_fn, .extra = extra_state};
    return register_checked(&rep, name, err);
}

int pario_register_datarep_c(const char *name, pario_datarep_conversion_c_fn *read_fn,
                             pario_datarep_conversion_c_fn *write_fn,
                             pario_datarep_extent_fn *extent_fn, void *extra_state,
                             pario_error *err) {
    io_datarep rep = {
        .read_fn_c = read_fn, .write_fn_c = write_fn, .extent_fn = extent_fn, .extra = extra_state};
    return register_checked(&rep, name, err);
}

/* ---- what a representation makes of a type ------------------------------------ */

/* Bytes one item of b takes in files of rep; PARIO_ERR_CONVERSION when the
 * user's extent function fails. */
static int file_size_of(const io_datarep *rep, const datarep_basic *b, MPI_Aint *size) {
    if (!rep) {
        *size = datarep_basic_size(b);
        return PARIO_OK;
    }
    if (rep->external32) {
        *size = b->ext32_size;
        return PARIO_OK;
    }
    *size = 0;
    return rep->extent_fn(b->type, size, rep->extra) == MPI_SUCCESS ? PARIO_OK
                                                                    : PARIO_ERR_CONVERSION;
}

static bool never_converted(const datarep_basic *b) {
    return b->type == MPI_BYTE || b->type == MPI_PACKED;
}

/* PARIO_OK when items of b are stored in rep with their native size and, for
 * external32, a format pario converts by reversing bytes. */
static int check_basic(const io_datarep *rep, const datarep_basic *b, const char *op,
                       const char *what, const char *path, pario_error *err) {
    if (never_converted(b))
        return PARIO_OK;
    MPI_Aint file_size = 0;
    if (file_size_of(rep, b, &file_size) != PARIO_OK)
        return pario_fail(err, PARIO_ERR_CONVERSION,
                          "%s %s: the extent function of \"%s\" failed for %s", op, path, rep->name,
                          b->name);
    if (file_size != datarep_basic_size(b))
        return pario_fail(err, PARIO_ERR_UNSUPPORTED_DATAREP,
                          "%s %s: %s holds %s, %lld bytes in \"%s\" but %d in memory; pario "
                          "supports only types whose size the representation keeps",
                          op, path, what, b->name, (long long)file_size, rep->name,
                          datarep_basic_size(b));
    if (rep->external32 && !b->swappable)
        return pario_fail(err, PARIO_ERR_UNSUPPORTED_DATAREP,
                          "%s %s: %s holds %s, whose external32 format pario cannot convert to "
                          "from this machine's",
                          op, path, what, b->name);
    return PARIO_OK;
}

static int fail_signature(int rc, MPI_Datatype bad, const char *op, const char *what,
                          const char *path, const io_datarep *rep, pario_error *err) {
    char name[MPI_MAX_OBJECT_NAME];
    if (rc == PARIO_ERR_UNSUPPORTED_DATAREP && bad != MPI_DATATYPE_NULL)
        return pario_fail(err, rc, "%s %s: %s holds %s, which \"%s\" cannot convert", op, path,
                          what, datarep_type_name(bad, name, (int)sizeof name), rep->name);
    if (rc == PARIO_ERR_UNSUPPORTED_DATAREP)
        return pario_fail(err, rc, "%s %s: %s is too irregular to convert to \"%s\"", op, path,
                          what, rep->name);
    return pario_fail(err, rc, "%s %s: cannot decode %s", op, path, what);
}

/* Every run of a decoded signature checked with check_basic. */
static int check_sig(const io_datarep *rep, const datarep_sig *sig, const char *op,
                     const char *what, const char *path, pario_error *err) {
    int rc = PARIO_OK;
    for (int j = 0; rep && j < sig->nruns && rc == PARIO_OK; j++)
        rc = check_basic(rep, sig->runs[j].basic, op, what, path, err);
    return rc;
}

int io_datarep_build_sig(const io_datarep *rep, MPI_Datatype t, datarep_sig *sig, const char *op,
                         const char *what, const char *path, pario_error *err) {
    MPI_Datatype bad = MPI_DATATYPE_NULL;
    int rc = datarep_sig_build(t, sig, &bad);
    if (rc != PARIO_OK)
        return fail_signature(rc, bad, op, what, path, rep, err);
    rc = check_sig(rep, sig, op, what, path, err);
    if (rc != PARIO_OK)
        datarep_sig_free(sig);
    return rc;
}

int io_datarep_check_type(const io_datarep *rep, MPI_Datatype t, const char *op, const char *what,
                          const char *path, pario_error *err) {
    if (!rep)
        return PARIO_OK;
    datarep_sig sig;
    int rc = io_datarep_build_sig(rep, t, &sig, op, what, path, err);
    if (rc == PARIO_OK)
        datarep_sig_free(&sig);
    return rc;
}

int io_datarep_type_extent(const io_datarep *rep, MPI_Datatype t, MPI_Aint *extent,
                           pario_error *err) {
    MPI_Aint lb = 0;
    if (t == MPI_DATATYPE_NULL || MPI_Type_get_extent(t, &lb, extent) != MPI_SUCCESS)
        return pario_fail(err, PARIO_ERR_TYPE, "get_type_extent: invalid datatype");
    if (!rep)
        return PARIO_OK;
    const datarep_basic *b = datarep_basic_find(t);
    if (b) {
        if (file_size_of(rep, b, extent) != PARIO_OK)
            return pario_fail(err, PARIO_ERR_CONVERSION,
                              "get_type_extent: the extent function of \"%s\" failed for %s",
                              rep->name, b->name);
        return PARIO_OK;
    }
    return io_datarep_check_type(rep, t, "get_type_extent", "the datatype", rep->name, err);
}

int pario_datarep_type_extent(const char *datarep, MPI_Datatype type, MPI_Aint *extent,
                              pario_error *err) {
    const io_datarep *rep = NULL;
    int rc = io_datarep_find(datarep, &rep, "get_type_extent", "", err);
    if (rc == PARIO_OK)
        rc = io_datarep_type_extent(rep, type, extent, err);
    return rc;
}
