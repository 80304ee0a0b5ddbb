/* The tests' own reader of striped files (the layout of
 * src/io/driver/stripe.h, written again from its description so a wrong
 * mapping in the driver cannot agree with itself): when path holds a stripe
 * layout record, the logical file's bytes are read from its objects.
 * Plain files read as they are. Not collective. */
#ifndef PARIO_TEST_STRIPE_IMAGE_H
#define PARIO_TEST_STRIPE_IMAGE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STRIPE_IMAGE_MAGIC "pario-stripe-layout 1\n"
#define STRIPE_IMAGE_MAX_OBJECTS 64

typedef struct stripe_image {
    long long unit;
    int factor;
    char paths[STRIPE_IMAGE_MAX_OBJECTS][4200];
} stripe_image;

/* Parses the record at path into s; 0 when path is no record. */
static inline int stripe_image_layout(const char *path, stripe_image *s) {
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[4200];
    int ok = fgets(line, sizeof line, f) && strcmp(line, STRIPE_IMAGE_MAGIC) == 0 &&
             fscanf(f, "unit %lld\nfactor %d\n", &s->unit, &s->factor) == 2 && s->unit > 0 &&
             s->factor > 0 && s->factor <= STRIPE_IMAGE_MAX_OBJECTS;
    for (int i = 0; ok && i < s->factor; i++) {
        ok = fgets(line, sizeof line, f) && strncmp(line, "object ", 7) == 0;
        if (ok) {
            line[strcspn(line, "\n")] = '\0';
            memcpy(s->paths[i], line + 7, strlen(line + 7) + 1);
        }
    }
    fclose(f);
    return ok;
}

/* The logical size: the furthest logical byte any object holds, plus one. */
static inline long long stripe_image_size(const stripe_image *s) {
    long long size = 0;
    for (int i = 0; i < s->factor; i++) {
        struct stat st;
        if (stat(s->paths[i], &st) != 0)
            return -1;
        if (st.st_size == 0)
            continue;
        long long last = (long long)st.st_size - 1;
        long long stripe = last / s->unit * s->factor + i;
        long long end = stripe * s->unit + last % s->unit + 1;
        size = end > size ? end : size;
    }
    return size;
}

/* Reads the first cap bytes of the logical file byte range by byte range
 * (holes read as zeros); returns its size, -1 on failure. */
static inline long long stripe_image_read(const stripe_image *s, unsigned char *buf, size_t cap) {
    long long size = stripe_image_size(s);
    if (size < 0)
        return -1;
    size_t want = (unsigned long long)size < cap ? (size_t)size : cap;
    memset(buf, 0, want);
    for (long long at = 0; at < (long long)want;) {
        long long stripe = at / s->unit, in = at % s->unit;
        long long len = s->unit - in < (long long)want - at ? s->unit - in : (long long)want - at;
        int fd = open(s->paths[stripe % s->factor], O_RDONLY);
        if (fd < 0)
            return -1;
        ssize_t n = pread(fd, buf + at, (size_t)len, (off_t)(stripe / s->factor * s->unit + in));
        close(fd);
        if (n < 0)
            return -1;
        at += len;
    }
    return size;
}

/* The logical file of path: its size, the first cap bytes in buf; -1 when
 * path cannot be read. *striped says whether it was a striped file. */
static inline long long stripe_image_of(const char *path, unsigned char *buf, size_t cap,
                                        int *striped) {
    stripe_image *s = malloc(sizeof *s);
    *striped = s && stripe_image_layout(path, s);
    long long size = *striped ? stripe_image_read(s, buf, cap) : -1;
    free(s);
    return size;
}

#endif
