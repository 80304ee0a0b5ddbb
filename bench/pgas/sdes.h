/* Simplified DES (S-DES): a 10-bit key, 8-bit blocks, two Feistel rounds with
 * the standard P10, P8, IP, EP, P4, S0 and S1 tables, and the pieces of a
 * differential attack on it: the difference pair and difference distribution
 * tables of the S-boxes and the recovery of the second round's subkey from
 * known plaintext/ciphertext pairs. Pure functions, no MPI. */
#ifndef PARIO_BENCH_SDES_H
#define PARIO_BENCH_SDES_H

#include <stdint.h>

/* Bits are numbered as in the cipher's description: position 1 is the most
 * significant of an n-bit value. */
enum {
    SDES_KEYS = 1024,    /* 10-bit keys */
    SDES_BLOCKS = 256,   /* 8-bit blocks */
    SDES_SBOX_IN = 16,   /* 4-bit S-box inputs */
    SDES_SBOX_OUT = 4,   /* 2-bit S-box outputs */
    SDES_LAYER_IN = 256, /* both S-boxes side by side: 8 bits in */
    SDES_LAYER_OUT = 16, /* 4 bits out */
};

typedef struct sdes_subkeys {
    uint8_t k1, k2;
} sdes_subkeys;

sdes_subkeys sdes_schedule(uint16_t key);
uint8_t sdes_encrypt(uint16_t key, uint8_t plain);
uint8_t sdes_decrypt(uint16_t key, uint8_t cipher);
/* Encryption and decryption with subkeys already derived. */
uint8_t sdes_encrypt_with(sdes_subkeys k, uint8_t plain);
uint8_t sdes_decrypt_with(sdes_subkeys k, uint8_t cipher);

/* S-box s (0 or 1) of a 4-bit input: bits 1 and 4 pick the row, 2 and 3 the
 * column. */
uint8_t sdes_sbox(int s, uint8_t in);
/* The S-box layer of the round function: S0 on the left 4 bits, S1 on the
 * right 4, outputs concatenated (S0's two bits first). */
uint8_t sdes_layer(uint8_t in);

/* The six tables the benchmark builds, each an array of uint64_t:
 * DPT and DDT of S0, of S1 and of the layer (S0 and S1 side by side). */
enum sdes_table {
    SDES_DPT_S0,
    SDES_DDT_S0,
    SDES_DPT_S1,
    SDES_DDT_S1,
    SDES_DPT_LAYER,
    SDES_DDT_LAYER,
    SDES_TABLES
};
extern const char *const sdes_table_name[SDES_TABLES];
/* Entries of a table. */
uint64_t sdes_table_count(int t);
/* Entry i of table t, computed from the S-boxes alone (a DDT entry counts the
 * inputs with that output difference, so it does not read the DPT). */
uint64_t sdes_table_entry(int t, uint64_t i);

/* A known pair under one key. */
typedef struct sdes_pair {
    uint8_t plain, cipher;
} sdes_pair;

/* 1 when key encrypts every pair's plaintext to its ciphertext. */
int sdes_key_fits(uint16_t key, const sdes_pair *pairs, int npairs);

/* Differential attack on the second round. From a pair the attacker knows the
 * input of the second round function (the right half after the first round)
 * and its output; for two pairs the difference of the S-box inputs does not
 * depend on the subkey, and the layer's difference pair table lists the
 * inputs x that give the observed output difference. 1 when the 8-bit
 * subkey candidate k2 is consistent with every pair of pairs, checked with
 * the table dpt_layer (65,536 entries, read through lookup(ctx, index)). */
int sdes_k2_consistent(uint8_t k2, const sdes_pair *pairs, int npairs,
                       uint64_t (*lookup)(void *ctx, uint64_t i), void *ctx);

#endif
