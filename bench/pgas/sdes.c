/* S-DES and the tables of its differential analysis (see sdes.h). */
#include "sdes.h"

static const uint8_t P10[10] = {3, 5, 2, 7, 4, 10, 1, 9, 8, 6};
static const uint8_t P8[8] = {6, 3, 7, 4, 8, 5, 10, 9};
static const uint8_t IP[8] = {2, 6, 3, 1, 4, 8, 5, 7};
static const uint8_t IP_INV[8] = {4, 1, 3, 5, 7, 2, 8, 6};
static const uint8_t EP[8] = {4, 1, 2, 3, 2, 3, 4, 1};
static const uint8_t P4[4] = {2, 4, 3, 1};
static const uint8_t SBOX[2][4][4] = {
    {{1, 0, 3, 2}, {3, 2, 1, 0}, {0, 2, 1, 3}, {3, 1, 3, 2}},
    {{0, 1, 2, 3}, {2, 0, 1, 3}, {3, 0, 1, 0}, {2, 1, 0, 3}},
};

const char *const sdes_table_name[SDES_TABLES] = {"dpt_s0", "ddt_s0",    "dpt_s1",
                                                  "ddt_s1", "dpt_layer", "ddt_layer"};

/* Output bit k (1-based from the left) is input bit table[k - 1]. */
static unsigned permute(unsigned in, int n_in, const uint8_t *table, int n_out) {
    unsigned out = 0;
    for (int k = 0; k < n_out; k++)
        out = (out << 1) | ((in >> (n_in - table[k])) & 1u);
    return out;
}

/* Rotates both 5-bit halves of a 10-bit value left by n. */
static unsigned rotate_halves(unsigned v, int n) {
    unsigned left = v >> 5, right = v & 0x1f;
    left = ((left << n) | (left >> (5 - n))) & 0x1f;
    right = ((right << n) | (right >> (5 - n))) & 0x1f;
    return (left << 5) | right;
}

sdes_subkeys sdes_schedule(uint16_t key) {
    unsigned v = rotate_halves(permute(key, 10, P10, 10), 1);
    sdes_subkeys k;
    k.k1 = (uint8_t)permute(v, 10, P8, 8);
    k.k2 = (uint8_t)permute(rotate_halves(v, 2), 10, P8, 8);
    return k;
}

uint8_t sdes_sbox(int s, uint8_t in) {
    unsigned row = ((in >> 2) & 2u) | (in & 1u), col = (in >> 1) & 3u;
    return SBOX[s][row][col];
}

uint8_t sdes_layer(uint8_t in) {
    return (uint8_t)((sdes_sbox(0, in >> 4) << 2) | sdes_sbox(1, in & 0xf));
}

/* The round function F of a 4-bit half with an 8-bit subkey. */
static unsigned round_f(unsigned half, uint8_t subkey) {
    return permute(sdes_layer((uint8_t)(permute(half, 4, EP, 8) ^ subkey)), 4, P4, 4);
}

/* fK: the left half XORed with F of the right half. */
static unsigned round_fk(unsigned v, uint8_t subkey) {
    unsigned left = v >> 4, right = v & 0xf;
    return ((left ^ round_f(right, subkey)) << 4) | right;
}

static unsigned swap_halves(unsigned v) {
    return ((v << 4) | (v >> 4)) & 0xff;
}

uint8_t sdes_encrypt_with(sdes_subkeys k, uint8_t plain) {
    unsigned v = round_fk(permute(plain, 8, IP, 8), k.k1);
    v = round_fk(swap_halves(v), k.k2);
    return (uint8_t)permute(v, 8, IP_INV, 8);
}

uint8_t sdes_decrypt_with(sdes_subkeys k, uint8_t cipher) {
    unsigned v = round_fk(permute(cipher, 8, IP, 8), k.k2);
    v = round_fk(swap_halves(v), k.k1);
    return (uint8_t)permute(v, 8, IP_INV, 8);
}

uint8_t sdes_encrypt(uint16_t key, uint8_t plain) {
    return sdes_encrypt_with(sdes_schedule(key), plain);
}

uint8_t sdes_decrypt(uint16_t key, uint8_t cipher) {
    return sdes_decrypt_with(sdes_schedule(key), cipher);
}

/* ---- tables ---- */

static uint8_t box_of(int t, uint8_t in) {
    if (t == SDES_DPT_S0 || t == SDES_DDT_S0)
        return sdes_sbox(0, in);
    if (t == SDES_DPT_S1 || t == SDES_DDT_S1)
        return sdes_sbox(1, in);
    return sdes_layer(in);
}

static unsigned inputs_of(int t) {
    return t >= SDES_DPT_LAYER ? SDES_LAYER_IN : SDES_SBOX_IN;
}

static unsigned outputs_of(int t) {
    return t >= SDES_DPT_LAYER ? SDES_LAYER_OUT : SDES_SBOX_OUT;
}

static int is_dpt(int t) {
    return t == SDES_DPT_S0 || t == SDES_DPT_S1 || t == SDES_DPT_LAYER;
}

uint64_t sdes_table_count(int t) {
    return (uint64_t)inputs_of(t) * (is_dpt(t) ? inputs_of(t) : outputs_of(t));
}

/* DPT entry (d, x), index d * inputs + x: the output difference of x and x ^ d.
 * DDT entry (d, o), index d * outputs + o: how many x give output difference o. */
uint64_t sdes_table_entry(int t, uint64_t i) {
    unsigned n = inputs_of(t);
    if (is_dpt(t)) {
        uint8_t d = (uint8_t)(i / n), x = (uint8_t)(i % n);
        return (uint64_t)(box_of(t, x) ^ box_of(t, (uint8_t)(x ^ d)));
    }
    unsigned m = outputs_of(t);
    uint8_t d = (uint8_t)(i / m), o = (uint8_t)(i % m);
    uint64_t count = 0;
    for (unsigned x = 0; x < n; x++)
        count += (uint8_t)(box_of(t, (uint8_t)x) ^ box_of(t, (uint8_t)(x ^ d))) == o;
    return count;
}

/* ---- attack ---- */

int sdes_key_fits(uint16_t key, const sdes_pair *pairs, int npairs) {
    sdes_subkeys k = sdes_schedule(key);
    for (int j = 0; j < npairs; j++)
        if (sdes_encrypt_with(k, pairs[j].plain) != pairs[j].cipher)
            return 0;
    return 1;
}

static unsigned p4_inverse(unsigned y) {
    for (unsigned v = 0; v < 16; v++)
        if (permute(v, 4, P4, 4) == y)
            return v;
    return 0;
}

/* What a pair tells about round 2: the expanded input EP(R) (the subkey not
 * yet added) and the S-box layer's output. */
typedef struct round2_view {
    unsigned expanded, layer_out;
} round2_view;

static round2_view round2_of(sdes_pair p) {
    unsigned in = permute(p.plain, 8, IP, 8), out = permute(p.cipher, 8, IP, 8);
    unsigned r0 = in & 0xf, l2 = out >> 4, l1 = out & 0xf;
    return (round2_view){permute(l1, 4, EP, 8), p4_inverse(l2 ^ r0)};
}

int sdes_k2_consistent(uint8_t k2, const sdes_pair *pairs, int npairs,
                       uint64_t (*lookup)(void *ctx, uint64_t i), void *ctx) {
    for (int a = 0; a < npairs; a++) {
        round2_view va = round2_of(pairs[a]);
        unsigned x = va.expanded ^ k2;
        for (int b = a + 1; b < npairs; b++) {
            round2_view vb = round2_of(pairs[b]);
            unsigned d_in = va.expanded ^ vb.expanded, d_out = va.layer_out ^ vb.layer_out;
            if (lookup(ctx, (uint64_t)d_in * SDES_LAYER_IN + x) != d_out)
                return 0;
        }
    }
    return 1;
}
