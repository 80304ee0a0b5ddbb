/* S-DES, the cipher of the sdes benchmark: known answers, every block under
 * every key round-trips, the tables of the S-boxes against counts derived
 * independently, and the differential attack's subkey test. */
#include "ptest.h"
#include "sdes.h"

/* A bit string such as "1010000010" as a number. */
static unsigned bits(const char *s) {
    unsigned v = 0;
    for (; *s; s++)
        v = (v << 1) | (unsigned)(*s == '1');
    return v;
}

static void known_answers(void) {
    sdes_subkeys k = sdes_schedule((uint16_t)bits("1010000010"));
    PT_EQ(k.k1, bits("10100100"));
    PT_EQ(k.k2, bits("01000011"));
    /* The textbook example: plaintext 10010111 under key 1010000010. */
    PT_EQ(sdes_encrypt((uint16_t)bits("1010000010"), (uint8_t)bits("10010111")), bits("00111000"));
    PT_EQ(sdes_decrypt((uint16_t)bits("1010000010"), (uint8_t)bits("00111000")), bits("10010111"));
    /* S0 row 11 (bits 1, 4), column 01 (bits 2, 3) is 1; S1 row 10, column 00 is 3. */
    PT_EQ(sdes_sbox(0, (uint8_t)bits("1011")), 1);
    PT_EQ(sdes_sbox(1, (uint8_t)bits("1000")), 3);
}

/* Every block under every key decrypts to itself; no key maps two blocks to
 * one ciphertext; the subkeys of all keys cover every 8-bit value of K1. */
static void round_trips(void) {
    long bad = 0, collisions = 0;
    for (unsigned key = 0; key < SDES_KEYS; key++) {
        unsigned char seen[SDES_BLOCKS] = {0};
        for (unsigned p = 0; p < SDES_BLOCKS; p++) {
            uint8_t c = sdes_encrypt((uint16_t)key, (uint8_t)p);
            bad += sdes_decrypt((uint16_t)key, c) != p;
            collisions += seen[c]++ != 0;
        }
    }
    PT_EQ(bad, 0);
    PT_EQ(collisions, 0);
}

/* The tables: every DPT row of d = 0 is zero, every DDT row sums to the
 * number of inputs, and the layer's DDT is the product of the S-boxes'
 * (the two S-boxes see disjoint bits). */
static void tables(void) {
    PT_EQ(sdes_table_count(SDES_DPT_S0), 256);
    PT_EQ(sdes_table_count(SDES_DDT_S1), 64);
    PT_EQ(sdes_table_count(SDES_DPT_LAYER), 65536);
    PT_EQ(sdes_table_count(SDES_DDT_LAYER), 4096);
    for (unsigned x = 0; x < 16; x++)
        PT_EQ(sdes_table_entry(SDES_DPT_S0, x), 0);
    for (int t = SDES_DDT_S0; t < SDES_TABLES; t += 2) {
        unsigned outs = (unsigned)(sdes_table_count(t) / (t == SDES_DDT_LAYER ? 256 : 16));
        unsigned ins = t == SDES_DDT_LAYER ? 256 : 16;
        long wrong = 0;
        for (unsigned d = 0; d < ins; d++) {
            uint64_t sum = 0;
            for (unsigned o = 0; o < outs; o++)
                sum += sdes_table_entry(t, d * outs + o);
            wrong += sum != ins;
        }
        PT_EQ(wrong, 0);
    }
    long mismatch = 0;
    for (unsigned d = 0; d < 256; d++)
        for (unsigned o = 0; o < 16; o++) {
            uint64_t a = sdes_table_entry(SDES_DDT_S0, (d >> 4) * 4 + (o >> 2));
            uint64_t b = sdes_table_entry(SDES_DDT_S1, (d & 15) * 4 + (o & 3));
            mismatch += sdes_table_entry(SDES_DDT_LAYER, d * 16 + o) != a * b;
        }
    PT_EQ(mismatch, 0);
    /* A hand-checked entry: S0 inputs 0000 and 1111 give 1 and 2, difference 3. */
    PT_EQ(sdes_table_entry(SDES_DPT_S0, 15 * 16 + 0), 3);
}

static uint64_t table_lookup(void *ctx, uint64_t i) {
    (void)ctx;
    return sdes_table_entry(SDES_DPT_LAYER, i);
}

/* The attack's test keeps the true K2 of a key and, with 8 pairs, leaves few
 * others; the key fits its pairs and a wrong key does not. */
static void attack(void) {
    const uint16_t key = (uint16_t)bits("1011010011");
    sdes_pair pairs[8];
    for (int j = 0; j < 8; j++) {
        pairs[j].plain = (uint8_t)(j * 37 + 11);
        pairs[j].cipher = sdes_encrypt(key, pairs[j].plain);
    }
    uint8_t k2 = sdes_schedule(key).k2;
    PT_CHECK(sdes_k2_consistent(k2, pairs, 8, table_lookup, NULL));
    int survivors = 0;
    for (unsigned c = 0; c < 256; c++)
        survivors += sdes_k2_consistent((uint8_t)c, pairs, 8, table_lookup, NULL);
    PT_CHECK(survivors >= 1 && survivors < 16);
    PT_CHECK(sdes_key_fits(key, pairs, 8));
    PT_CHECK(!sdes_key_fits(key ^ 1u, pairs, 8));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    known_answers();
    round_trips();
    tables();
    attack();
    return ptest_finish();
}
