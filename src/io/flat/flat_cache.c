/* flat_get: the flattened form cached on the MPI datatype as an attribute.
 *
 * Process-wide registry (documented in flat.h): one keyval created on first
 * use under pthread_once and kept for the life of the process, plus a mutex
 * that makes "look up, else attach" atomic between threads. */
#include "io/flat/flat_internal.h"

#include <pthread.h>

#include "pario/pario.h"

static pthread_once_t registry_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static int registry_keyval = MPI_KEYVAL_INVALID;
static int registry_status = PARIO_ERR_INTERN;

/* MPI_Type_dup: the copy has the same typemap, so it shares the form. */
static int cache_copy(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag) {
    (void)old;
    (void)keyval;
    (void)extra;
    flat_retain(in);
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* MPI_Type_free (or a replaced attribute): drop the cache's reference. */
static int cache_delete(MPI_Datatype type, int keyval, void *value, void *extra) {
    (void)type;
    (void)keyval;
    (void)extra;
    flat_release(value);
    return MPI_SUCCESS;
}

/* The mark of a type moved once without its form (flat_used_before); a
 * dup is a new type to its program, so the mark is not copied. */
static int used_keyval = MPI_KEYVAL_INVALID;

static void registry_create(void) {
    int rc = MPI_Type_create_keyval(cache_copy, cache_delete, &registry_keyval, NULL);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &used_keyval,
                                    NULL);
    registry_status = rc == MPI_SUCCESS ? PARIO_OK : PARIO_ERR_INTERN;
}

static const flat_type *cache_lookup(MPI_Datatype type) {
    void *value = NULL;
    int found = 0;
    if (MPI_Type_get_attr(type, registry_keyval, &value, &found) != MPI_SUCCESS || !found)
        return NULL;
    return value;
}

/* Attach t unless another thread attached a form first; the winner is
 * returned in *out (t is released when it lost). */
static int cache_attach(MPI_Datatype type, flat_type *t, const flat_type **out) {
    int rc = PARIO_OK;
    pthread_mutex_lock(&registry_lock);
    const flat_type *cached = cache_lookup(type);
    if (cached) {
        flat_release(t);
        *out = cached;
    } else if (MPI_Type_set_attr(type, registry_keyval, t) == MPI_SUCCESS) {
        *out = t;
    } else {
        flat_release(t);
        rc = PARIO_ERR_TYPE;
    }
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

bool flat_is_cached(MPI_Datatype type) {
    if (type == MPI_DATATYPE_NULL)
        return false;
    pthread_once(&registry_once, registry_create);
    return registry_status == PARIO_OK && cache_lookup(type) != NULL;
}

bool flat_used_before(MPI_Datatype type) {
    if (type == MPI_DATATYPE_NULL)
        return true;
    pthread_once(&registry_once, registry_create);
    if (registry_status != PARIO_OK)
        return true;
    void *value = NULL;
    int found = 0;
    if (MPI_Type_get_attr(type, used_keyval, &value, &found) != MPI_SUCCESS)
        return true;
    if (!found && MPI_Type_set_attr(type, used_keyval, (void *)&used_keyval) != MPI_SUCCESS)
        return true;
    return found;
}

/* Decoded, or packed when comm is given and packing pays (flat_pack.c). */
static int build_form(MPI_Datatype type, MPI_Comm comm, flat_type **t) {
    if (comm != MPI_COMM_NULL) {
        int rc = flat_pack_try(type, comm, t);
        if (rc != FLAT_PACK_DECLINED)
            return rc;
    }
    return flat_decode(type, t);
}

static int get_form(MPI_Datatype type, MPI_Comm comm, const flat_type **out) {
    if (!out)
        return PARIO_ERR_ARG;
    *out = NULL;
    if (type == MPI_DATATYPE_NULL)
        return PARIO_ERR_TYPE;
    pthread_once(&registry_once, registry_create);
    if (registry_status)
        return registry_status;
    const flat_type *cached = cache_lookup(type);
    if (cached) {
        *out = cached;
        return PARIO_OK;
    }
    flat_type *t;
    int rc = build_form(type, comm, &t);
    if (rc)
        return rc;
    return cache_attach(type, t, out);
}

int flat_get(MPI_Datatype type, const flat_type **out) {
    return get_form(type, MPI_COMM_NULL, out);
}

int flat_get_committed(MPI_Datatype type, MPI_Comm comm, const flat_type **out) {
    return get_form(type, comm, out);
}
