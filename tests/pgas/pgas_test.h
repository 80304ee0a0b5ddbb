/* Helpers shared by the pgas test programs. */
#ifndef PARIO_PGAS_TEST_H
#define PARIO_PGAS_TEST_H

#include <stdint.h>
#include <string.h>

#include "ptest.h"
#include "pario/pgas.h"

/* Heaps small enough for 8 ranks on one machine, large enough for every test. */
#define TEST_SHARED_HEAP ((size_t)1 << 20)
#define TEST_LOCAL_HEAP ((size_t)256 << 10)

static inline pario_pgas *test_pgas_init(void) {
    pario_pgas_config cfg = {TEST_SHARED_HEAP, TEST_LOCAL_HEAP};
    pario_pgas *ctx = NULL;
    pario_error err;
    int rc = pario_pgas_init(MPI_COMM_WORLD, &cfg, &ctx, &err);
    if (rc != PARIO_OK)
        fprintf(stderr, "pario_pgas_init: %s\n", err.msg);
    PT_EQ(rc, PARIO_OK);
    return ctx;
}

/* The byte at position k of element i of array `salt`. */
static inline unsigned char test_byte(uint64_t i, uint32_t k, int salt) {
    return (unsigned char)(i * 131 + k * 7 + (uint64_t)salt * 29 + 1);
}

static inline void test_fill(unsigned char *buf, uint64_t first, uint64_t count, uint32_t es,
                             int salt) {
    for (uint64_t i = 0; i < count; i++)
        for (uint32_t k = 0; k < es; k++)
            buf[i * es + k] = test_byte(first + i, k, salt);
}

/* Elements of buf (holding first .. first + count - 1) not matching salt. */
static inline uint64_t test_mismatch(const unsigned char *buf, uint64_t first, uint64_t count,
                                     uint32_t es, int salt) {
    uint64_t bad = 0;
    for (uint64_t i = 0; i < count; i++)
        for (uint32_t k = 0; k < es; k++)
            if (buf[i * es + k] != test_byte(first + i, k, salt)) {
                bad++;
                break;
            }
    return bad;
}

/* The message of the last failure contains text. */
static inline int test_msg_has(const pario_pgas *ctx, const char *text) {
    const char *m = pario_pgas_last_error(ctx)->msg;
    if (strstr(m, text))
        return 1;
    fprintf(stderr, "message \"%s\" lacks \"%s\"\n", m, text);
    return 0;
}

#endif
