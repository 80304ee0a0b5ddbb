/* The allocation service: each heap's book is kept by one rank (the
 * symmetric heap's by rank 0, a local heap's by its own rank); other ranks
 * allocate and free there through a Short active message and its reply.
 *
 * A request carries the keeper's context address (exchanged at init), so
 * the handler finds the book without any global registry, and the address of
 * the requester's result record, which the reply fills. */
#include "pgas/pgas_internal.h"

#include <stdint.h>

enum book_op { BOOK_ALLOC = 0, BOOK_FREE = 1 };
enum book_handler { BOOK_REQUEST = 0, BOOK_REPLY = 1, BOOK_HANDLERS = 2 };

/* What the requester waits on; its address travels with the request. */
typedef struct book_result {
    int rc;
    int done;
    uint64_t offset, id;
} book_result;

static pgas_heap *book_of(pario_pgas *ctx, int region) {
    return region == PGAS_SYMMETRIC ? &ctx->sym : &ctx->local;
}

static int book_run(pario_pgas *ctx, int op, int region, uint64_t *a, uint64_t *b) {
    pgas_heap *h = book_of(ctx, region);
    if (op == BOOK_ALLOC)
        return pgas_heap_alloc(h, *a, a, b);
    return pgas_heap_free(h, *a, *b);
}

/* args: op, region, bytes or offset, id, keeper context, result record */
static void book_request(pario_gas_token *tok, void *payload, size_t bytes, const uint64_t *args,
                         int nargs) {
    (void)payload;
    (void)bytes;
    (void)nargs;
    pario_pgas *ctx = (pario_pgas *)(uintptr_t)args[4];
    uint64_t a = args[2], b = args[3];
    int rc = book_run(ctx, (int)args[0], (int)args[1], &a, &b);
    uint64_t reply[4] = {(uint64_t)rc, a, b, args[5]};
    pario_gas_reply_short(tok, ctx->handler_base + BOOK_REPLY, reply, 4);
}

static void book_reply(pario_gas_token *tok, void *payload, size_t bytes, const uint64_t *args,
                       int nargs) {
    (void)tok;
    (void)payload;
    (void)bytes;
    (void)nargs;
    book_result *res = (book_result *)(uintptr_t)args[3];
    res->rc = (int)args[0];
    res->offset = args[1];
    res->id = args[2];
    res->done = 1;
}

int pgas_book_register(pario_pgas *ctx) {
    const pario_gas_handler fns[BOOK_HANDLERS] = {book_request, book_reply};
    int rc = pario_gas_register_handlers(ctx->team, fns, BOOK_HANDLERS, &ctx->handler_base);
    return rc == PARIO_OK ? rc : pgas_gas_failed(ctx, rc, "handler registration");
}

static int book_remote(pario_pgas *ctx, int op, int region, int keeper, uint64_t *a, uint64_t *b) {
    book_result res = {0, 0, 0, 0};
    uint64_t args[6] = {(uint64_t)op, (uint64_t)region,  *a,
                        *b,           ctx->peer[keeper], (uint64_t)(uintptr_t)&res};
    int rc = pario_gas_request_short(ctx->team, keeper, ctx->handler_base + BOOK_REQUEST, args, 6);
    if (rc != PARIO_OK)
        return pgas_gas_failed(ctx, rc, "request to the allocation service");
    int idle = 0;
    while (rc == PARIO_OK && !res.done)
        rc = pgas_idle_step(ctx, &idle);
    if (rc != PARIO_OK)
        return rc;
    *a = res.offset;
    *b = res.id;
    return res.rc;
}

static int book_call(pario_pgas *ctx, int op, int region, int keeper, uint64_t *a, uint64_t *b) {
    if (keeper == ctx->rank)
        return book_run(ctx, op, region, a, b);
    return book_remote(ctx, op, region, keeper, a, b);
}

int pgas_book_alloc(pario_pgas *ctx, int region, int keeper, uint64_t bytes, uint64_t *offset,
                    uint64_t *id) {
    uint64_t a = bytes, b = 0;
    int rc = book_call(ctx, BOOK_ALLOC, region, keeper, &a, &b);
    if (rc == PARIO_ERR_NO_MEM)
        return pgas_fail(ctx, rc, "pgas: %s heap of rank %d has no room for %llu bytes",
                         region == PGAS_SYMMETRIC ? "symmetric" : "local", keeper,
                         (unsigned long long)bytes);
    if (rc != PARIO_OK)
        return rc;
    *offset = a;
    *id = b;
    return PARIO_OK;
}

int pgas_book_free(pario_pgas *ctx, int region, int keeper, uint64_t offset, uint64_t id) {
    uint64_t a = offset, b = id;
    int rc = book_call(ctx, BOOK_FREE, region, keeper, &a, &b);
    if (rc == PARIO_ERR_REQUEST)
        return pgas_fail(ctx, rc,
                         "pgas: free of offset %llu (allocation %llu) on rank %d: not allocated "
                         "(freed twice?)",
                         (unsigned long long)offset, (unsigned long long)id, keeper);
    return rc;
}
