#include <stdlib.h>
#include "io/driver/sys.h"
#include "io/file/file.h"

int io_scratch_reserve(char **buf, int64_t *cap, int64_t len) {
    if (*cap >= len)
        return PARIO_OK;
    char *p = io_sys_mem_fails() ? NULL : realloc(*buf, (size_t)len);
    if (!p)
        return PARIO_ERR_NO_MEM;
    *buf = p;
    *cap = len;
    return PARIO_OK;
}

void io_scratch_free(io_scratch *s) {
    free(s->stage);
    free(s->window);
    free(s->runs);
    *s = (io_scratch){0};
}
