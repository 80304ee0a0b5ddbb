/* ROMIO's hint conventions: the hints file named by $ROMIO_HINTS, and the
 * ROMIO hints pario accepts and reports without acting on them. */
#include "io/hints/hints.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest line of a hints file read (ROMIO's keys and values are short). */
#define ROMIO_LINE_MAX 1024
/* Most distinct keys one hints file sets (later ones are ignored). */
#define ROMIO_FILE_KEYS_MAX 128

/* ROMIO hints pario takes and reports in get_info, with the value ROMIO
 * reports when the program sets none (NULL: reported only when set). pario's
 * own paths decide what they steer (romio_cb_pfr, romio_cb_fr_*: file realms;
 * romio_cb_alltoall, romio_cb_ds_threshold: two-phase details; the Lustre
 * and direct I/O hints: other drivers). Order matches io_hints.romio. */
static const struct romio_key {
    const char *key;
    const char *romio_default;
} romio_keys[IO_ROMIO_KEYS] = {
    {"romio_cb_pfr", "disable"},
    {"romio_cb_fr_types", "aar"},
    {"romio_cb_fr_alignment", "1"},
    {"romio_cb_ds_threshold", "0"},
    {"romio_cb_alltoall", "automatic"},
    {"romio_synchronized_flush", "disabled"},
    {"romio_visibility_immediate", NULL},
    {"romio_lustre_co_ratio", NULL},
    {"romio_lustre_coll_threshold", NULL},
    {"romio_lustre_ds_in_coll", NULL},
    {"start_iodevice", NULL},
    {"direct_read", NULL},
    {"direct_write", NULL},
};

int io_hints_set_romio(io_hints *h, const char *key, const char *val) {
    for (int i = 0; i < IO_ROMIO_KEYS; i++) {
        if (strcmp(key, romio_keys[i].key) != 0)
            continue;
        if (val[0] && strlen(val) < sizeof h->romio[i])
            snprintf(h->romio[i], sizeof h->romio[i], "%s", val);
        return 1;
    }
    return 0;
}

void io_hints_romio_to_info(const io_hints *h, MPI_Info info) {
    for (int i = 0; i < IO_ROMIO_KEYS; i++) {
        const char *v = h->romio[i][0] ? h->romio[i] : romio_keys[i].romio_default;
        if (v)
            MPI_Info_set(info, romio_keys[i].key, v);
    }
}

/* Splits a line into exactly two blank-separated words; 0 for a blank line,
 * a comment ('#' first) or any other number of words (ROMIO skips those). */
static int split_key_value(char *line, char **key, char **val) {
    char *save = NULL;
    *key = strtok_r(line, " \t\r\n", &save);
    if (!*key || (*key)[0] == '#')
        return 0;
    *val = strtok_r(NULL, " \t\r\n", &save);
    return *val && !strtok_r(NULL, " \t\r\n", &save);
}

static int key_seen(char seen[][MPI_MAX_INFO_KEY + 1], int nseen, const char *key) {
    for (int i = 0; i < nseen; i++)
        if (!strcmp(seen[i], key))
            return 1;
    return 0;
}

/* As ROMIO reads its hints file: "key value" lines, a key given twice keeps
 * its first value. Without memory for the keys seen, the file is skipped
 * (hints are advice). */
static void apply_romio_file(io_hints *h, FILE *f) {
    char(*seen)[MPI_MAX_INFO_KEY + 1] = calloc(ROMIO_FILE_KEYS_MAX, sizeof *seen);
    if (!seen)
        return;
    int nseen = 0;
    char line[ROMIO_LINE_MAX];
    while (fgets(line, sizeof line, f) && nseen < ROMIO_FILE_KEYS_MAX) {
        char *key, *val;
        if (!split_key_value(line, &key, &val) || strlen(key) > MPI_MAX_INFO_KEY ||
            key_seen(seen, nseen, key))
            continue;
        snprintf(seen[nseen++], sizeof seen[0], "%s", key);
        io_hints_set(h, key, val);
    }
    free(seen);
}

void io_hints_apply_romio_file(io_hints *h) {
    const char *path = getenv("ROMIO_HINTS");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "r");
    if (!f)
        return; /* as ROMIO: a missing hints file is no error */
    apply_romio_file(h, f);
    fclose(f);
}
