/* fuzz_npy: the .npy reader.  Whatever it accepts must serialise and parse
 * back to the same dtype, shape and bytes; whatever it rejects must name
 * the file.  Sizes from the header are checked before allocation (no
 * allocation beyond what the bytes present can fill: libFuzzer's -rss_limit
 * and -malloc_limit catch any that is). */
#include <stdint.h>
#include <string.h>

#include "fuzz_util.h"
#include "isa.h"
#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npy_array_t a;
    tpb_err_t err = { { 0 } };
    if (npy_parse(data, size, "in.npy", &a, &err) != 0) {
        FUZZ_CHECK(strncmp(err.msg, "in.npy", 6) == 0, "message without the file: %s", err.msg);
        return 0;
    }
    size_t bytes = a.count * isa_dtype_size(a.dtype);
    FUZZ_CHECK(bytes <= size || a.converted_from_f64, "%zu data bytes from a %zu-byte file", bytes, size);
    uint8_t *buf;
    size_t len;
    FUZZ_CHECK(npy_serialize(&a, &buf, &len, &err) == 0, "%s", err.msg);
    npy_array_t b;
    FUZZ_CHECK(npy_parse(buf, len, "again.npy", &b, &err) == 0, "%s", err.msg);
    FUZZ_CHECK(a.dtype == b.dtype && a.ndim == b.ndim && a.count == b.count, "header changed");
    for (int i = 0; i < a.ndim; i++)
        FUZZ_CHECK(a.shape[i] == b.shape[i], "dim %d changed", i);
    FUZZ_CHECK(memcmp(a.data, b.data, bytes) == 0, "data changed");
    free(buf);
    npy_free(&a);
    npy_free(&b);
    return 0;
}
