/* The predefined datatypes pario converts, with their external32 sizes
 * (MPI 3.1 table 13.2), and the byte swap that turns host order into the
 * big-endian order of external32. */
#include <stdio.h>
#include <string.h>
#include "io/datarep/datarep.h"

/* swappable is false for a type whose external32 format is not the host's
 * with the bytes reversed (long double: x87 80-bit here, IEEE 128-bit there).
 * Pair types (MPI_2INT, MPI_FLOAT_INT, ...) are absent on purpose. */
static const datarep_basic basics[] = {
    {MPI_PACKED, "MPI_PACKED", 1, 1, true},
    {MPI_BYTE, "MPI_BYTE", 1, 1, true},
    {MPI_CHAR, "MPI_CHAR", 1, 1, true},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 1, true},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, 1, true},
    {MPI_WCHAR, "MPI_WCHAR", 2, 2, true},
    {MPI_SHORT, "MPI_SHORT", 2, 2, true},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 2, 2, true},
    {MPI_INT, "MPI_INT", 4, 4, true},
    {MPI_UNSIGNED, "MPI_UNSIGNED", 4, 4, true},
    {MPI_LONG, "MPI_LONG", 4, 4, true},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 4, 4, true},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", 8, 8, true},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 8, 8, true},
    {MPI_FLOAT, "MPI_FLOAT", 4, 4, true},
    {MPI_DOUBLE, "MPI_DOUBLE", 8, 8, true},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 16, 16, false},
    {MPI_C_BOOL, "MPI_C_BOOL", 1, 1, true},
    {MPI_INT8_T, "MPI_INT8_T", 1, 1, true},
    {MPI_INT16_T, "MPI_INT16_T", 2, 2, true},
    {MPI_INT32_T, "MPI_INT32_T", 4, 4, true},
    {MPI_INT64_T, "MPI_INT64_T", 8, 8, true},
    {MPI_UINT8_T, "MPI_UINT8_T", 1, 1, true},
    {MPI_UINT16_T, "MPI_UINT16_T", 2, 2, true},
    {MPI_UINT32_T, "MPI_UINT32_T", 4, 4, true},
    {MPI_UINT64_T, "MPI_UINT64_T", 8, 8, true},
    {MPI_AINT, "MPI_AINT", 8, 8, true},
    {MPI_COUNT, "MPI_COUNT", 8, 8, true},
    {MPI_OFFSET, "MPI_OFFSET", 8, 8, true},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", 8, 4, true},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16, 8, true},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 32, 16, false},
    {MPI_CHARACTER, "MPI_CHARACTER", 1, 1, true},
    {MPI_LOGICAL, "MPI_LOGICAL", 4, 4, true},
    {MPI_INTEGER, "MPI_INTEGER", 4, 4, true},
    {MPI_REAL, "MPI_REAL", 4, 4, true},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, 8, true},
    {MPI_COMPLEX, "MPI_COMPLEX", 8, 4, true},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, 8, true},
};

const datarep_basic *datarep_basic_find(MPI_Datatype t) {
    if (t == MPI_DATATYPE_NULL)
        return NULL;
    for (size_t i = 0; i < sizeof basics / sizeof basics[0]; i++)
        if (basics[i].type == t && datarep_basic_size(&basics[i]) > 0)
            return &basics[i];
    return NULL;
}

int datarep_basic_size(const datarep_basic *b) {
    int size = 0;
    if (b->type == MPI_DATATYPE_NULL || MPI_Type_size(b->type, &size) != MPI_SUCCESS)
        return 0;
    return size;
}

static void reverse_bytes(char *p, int len) {
    for (int i = 0, j = len - 1; i < j; i++, j--) {
        char t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

void datarep_basic_swap(const datarep_basic *b, char *data, int64_t n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    (void)b, (void)data, (void)n; /* the host order is external32's */
#else
    if (b->unit <= 1)
        return;
    int64_t fields = n * (int64_t)datarep_basic_size(b) / b->unit;
    for (int64_t i = 0; i < fields; i++)
        reverse_bytes(data + i * b->unit, b->unit);
#endif
}

const char *datarep_type_name(MPI_Datatype t, char *buf, int len) {
    const datarep_basic *b = datarep_basic_find(t);
    if (b) {
        snprintf(buf, (size_t)len, "%s", b->name);
        return buf;
    }
    char name[MPI_MAX_OBJECT_NAME] = "";
    int n = 0;
    if (t != MPI_DATATYPE_NULL)
        MPI_Type_get_name(t, name, &n);
    snprintf(buf, (size_t)len, "%s", name[0] ? name : "a predefined type");
    return buf;
}
