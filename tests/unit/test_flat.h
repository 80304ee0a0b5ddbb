/* Shared declarations of the unit tests' helper file (test_flat_random.c). */
#ifndef PARIO_TEST_FLAT_H
#define PARIO_TEST_FLAT_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

/* Room for the list of predefined types the generator draws from. */
#define NAMED_TYPES_MAX 16

typedef struct rng {
    uint64_t state;
} rng;

uint64_t rng_next(rng *r);
/* Uniform in [lo, hi]. */
int rng_range(rng *r, int lo, int hi);

/* The predefined types used as leaves (some padded, like MPI_SHORT_INT). */
int named_types(MPI_Datatype *out, int max);

/* A byte of a reproducible pattern, and a buffer filled with it. */
uint8_t pattern_byte(int64_t i, unsigned salt);
void fill_pattern(uint8_t *buf, int64_t n, unsigned salt);

/* A committed random datatype of MPI nesting depth 1..max_depth, fully
 * determined by seed; the caller frees it. */
MPI_Datatype random_type(uint64_t seed, int max_depth);

#endif
