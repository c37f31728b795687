#include "npy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "hugepage.h"
#include "isa.h"
#include "numeric.h"

static const struct { const char *descr; unsigned dtype; } descr_map[] = {
    { "<f4", ISA_DT_FP32 }, { "<f2", ISA_DT_FP16 },
    { "|i1", ISA_DT_INT8 }, { "<i2", ISA_DT_INT16 }, { "<i4", ISA_DT_INT32 },
    { "|u1", ISA_DT_UINT8 }, { "<u2", ISA_DT_UINT16 }, { "<u4", ISA_DT_UINT32 },
    { "|b1", ISA_DT_UINT8 }, { "<i1", ISA_DT_INT8 }, { "<u1", ISA_DT_UINT8 },
    { "=f4", ISA_DT_FP32 }, { "=f2", ISA_DT_FP16 }, { "=i2", ISA_DT_INT16 },
    { "=i4", ISA_DT_INT32 }, { "=u2", ISA_DT_UINT16 }, { "=u4", ISA_DT_UINT32 },
};

const char *npy_descr(unsigned dtype)
{
    for (size_t i = 0; i < 8; i++)
        if (descr_map[i].dtype == dtype)
            return descr_map[i].descr;
    return NULL;
}

/* Find `'key':` in the header dict and return a pointer just past the colon. */
static const char *find_key(const char *hdr, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(hdr, pat);
    if (!p) {
        snprintf(pat, sizeof pat, "\"%s\"", key);
        p = strstr(hdr, pat);
    }
    if (!p)
        return NULL;
    p = strchr(p + strlen(pat), ':');
    if (!p)
        return NULL;
    p++;
    while (*p == ' ')
        p++;
    return p;
}

/* A Python literal ends at a separator ("False," "False}" "False ").  */
static bool bool_end(char c)
{
    return c == ',' || c == '}' || c == ' ' || c == '\n' || c == 0;
}

/* The 'shape' tuple of a header: non-negative integers, at most
 * NPY_MAX_DIMS of them, each below 2^62 (no overflow in strtoll). */
static int parse_shape(const char *hdr, const char *name, size_t hstart, int64_t *shape, int *ndim,
                       tpb_err_t *err)
{
    const char *p = find_key(hdr, "shape");
    if (!p || *p != '(')
        return tpb_errf(err, "%s: offset %zu: field 'shape': missing", name, hstart);
    p++;
    *ndim = 0;
    for (;;) {
        while (*p == ' ')
            p++;
        if (*p == ')')
            return 0;
        if (*p < '0' || *p > '9')
            return tpb_errf(err, "%s: offset %zu: field 'shape': malformed", name, hstart);
        char *end;
        long long v = strtoll(p, &end, 10);
        if (v < 0 || v >= (1LL << 62))
            return tpb_errf(err, "%s: offset %zu: field 'shape': dimension %d out of range", name,
                            hstart, *ndim);
        if (*ndim == NPY_MAX_DIMS)
            return tpb_errf(err, "%s: offset %zu: field 'shape': more than %d dims", name, hstart,
                            NPY_MAX_DIMS);
        shape[(*ndim)++] = v;
        p = end;
        while (*p == 'L')
            p++;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
        else if (*p != ')')
            return tpb_errf(err, "%s: offset %zu: field 'shape': malformed", name, hstart);
    }
}

/* npy_alloc without the allocation: dtype, rank, shape and count set,
 * data NULL */
static int npy_describe(npy_array_t *a, unsigned dtype, int ndim, const int64_t *shape,
                        tpb_err_t *err)
{
    memset(a, 0, sizeof *a);
    if (ndim < 0 || ndim > NPY_MAX_DIMS)
        return tpb_errf(err, "npy: rank %d not in 0..%d", ndim, NPY_MAX_DIMS);
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (shape[i] && count > SIZE_MAX / 16 / (size_t)shape[i]))
            return tpb_errf(err, "npy: bad shape dimension %d: %lld", i, (long long)shape[i]);
        count *= (size_t)shape[i];
        a->shape[i] = shape[i];
    }
    a->dtype = dtype;
    a->ndim = ndim;
    a->count = count;
    return 0;
}

static int npy_alloc_data(npy_array_t *a, tpb_err_t *err)
{
    a->data = calloc(a->count ? a->count : 1, isa_dtype_size(a->dtype));
    if (!a->data)
        return tpb_errf(err, "npy: out of memory for %zu elements", a->count);
    tpb_advise_huge_pages(a->data, a->count * isa_dtype_size(a->dtype));
    return 0;
}

int npy_alloc(npy_array_t *a, unsigned dtype, int ndim, const int64_t *shape, tpb_err_t *err)
{
    return npy_describe(a, dtype, ndim, shape, err) || npy_alloc_data(a, err) ? -1 : 0;
}

void npy_free(npy_array_t *a)
{
    if (a) {
        free(a->data);
        a->data = NULL;
    }
}

/* Where the data of a parsed header is. */
typedef struct {
    size_t dstart;                  /* byte offset of the first element */
    size_t esz;                     /* bytes per element in the file */
    bool f64;                       /* float64 in the file, fp32 in memory */
    int v1_dtype;                   /* in: the fp8 dtype a '|V1' file is read as, or -1 */
} npy_layout_t;

/* NumPy's void descrs, which np.save writes for the narrow floats NumPy
 * itself lacks (ml_dtypes' bfloat16 / float8 in NKI, tpbsim_dtypes here):
 * the elements are the raw bits.  Two bytes are bfloat16 (fp16 has its own
 * descr); one byte is either fp8 format, which the file does not say: it
 * is read as the fp8 dtype of the tensor it is loaded into, and refused
 * anywhere else.  Returns the isa dtype, -1 for no void descr, -2 for an
 * unplaceable '|V1' (the error set). */
static int void_dtype(const char *descr, const npy_layout_t *lay, const char *name, size_t off,
                      tpb_err_t *err)
{
    if (!strcmp(descr, "<V2") || !strcmp(descr, "|V2") || !strcmp(descr, "=V2"))
        return ISA_DT_BF16;
    if (strcmp(descr, "|V1") && strcmp(descr, "<V1") && strcmp(descr, "=V1"))
        return -1;
    if (lay->v1_dtype >= 0)
        return lay->v1_dtype;
    tpb_errf(err, "%s: offset %zu: field 'descr': '%s' is raw 1-byte values (an fp8 array saved "
                  "from NumPy) without its format: accepted only as an input whose tensor is "
                  "float8_e4m3fn, float8_e4m3 or float8_e5m2 (or save it as float32)", name, off, descr);
    return -2;
}

/* Every check of npy_parse except the data copy, with the same messages:
 * buf holds at least the first hstart + hlen bytes of a file of len bytes
 * (all of them for npy_parse).  On success out is allocated. */
static int parse_header(const uint8_t *buf, size_t len, const char *name, npy_array_t *out,
                        npy_layout_t *lay, bool alloc, tpb_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
        return tpb_errf(err, "%s: offset 0: field 'magic': not a .npy file", name);
    unsigned major = buf[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return tpb_errf(err, "%s: offset 8: field 'header_len': truncated", name);
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        hstart = 12;
    } else {
        return tpb_errf(err, "%s: offset 6: field 'version': unsupported .npy version %u", name, major);
    }
    if (hlen > len - hstart)
        return tpb_errf(err, "%s: offset %zu: field 'header_len': header of %zu bytes runs past end of file (%zu bytes)",
                        name, hstart - 2, hlen, len);
    if (hlen > NPY_MAX_HEADER)
        return tpb_errf(err, "%s: offset %zu: field 'header_len': header of %zu bytes is longer than the limit "
                             "of %d bytes", name, hstart - 2, hlen, NPY_MAX_HEADER);
    char *hdr = malloc(hlen + 1);
    if (!hdr)
        return tpb_errf(err, "%s: out of memory", name);
    memcpy(hdr, buf + hstart, hlen);
    hdr[hlen] = 0;

    int rc = -1;
    const char *p = find_key(hdr, "descr");
    char descr[16] = { 0 };
    if (!p || (*p != '\'' && *p != '"')) {
        tpb_errf(err, "%s: offset %zu: field 'descr': missing", name, hstart);
        goto out;
    }
    {
        char q = *p++;
        size_t i = 0;
        while (*p && *p != q && i < sizeof descr - 1)
            descr[i++] = *p++;
        if (*p != q) {
            tpb_errf(err, "%s: offset %zu: field 'descr': malformed", name, hstart);
            goto out;
        }
    }
    bool f64 = strcmp(descr, "<f8") == 0 || strcmp(descr, "=f8") == 0;
    int dt = -1;
    for (size_t i = 0; i < sizeof descr_map / sizeof descr_map[0]; i++)
        if (strcmp(descr_map[i].descr, descr) == 0)
            dt = (int)descr_map[i].dtype;
    if (dt < 0 && !f64 && (dt = void_dtype(descr, lay, name, hstart, err)) == -2)
        goto out;
    if (dt < 0 && !f64) {
        tpb_errf(err, "%s: offset %zu: field 'descr': unsupported dtype '%s' (want float32/float16/"
                      "int8-32/uint8-32/bool, little-endian)", name, hstart, descr);
        goto out;
    }
    p = find_key(hdr, "fortran_order");
    if (!p) {
        tpb_errf(err, "%s: offset %zu: field 'fortran_order': missing", name, hstart);
        goto out;
    }
    if (strncmp(p, "True", 4) == 0) {
        tpb_errf(err, "%s: offset %zu: field 'fortran_order': Fortran-ordered arrays are not supported "
                      "(save np.ascontiguousarray(x))", name, hstart);
        goto out;
    }
    if (strncmp(p, "False", 5) != 0 || !bool_end(p[5])) {
        tpb_errf(err, "%s: offset %zu: field 'fortran_order': want True or False", name, hstart);
        goto out;
    }
    int64_t shape[NPY_MAX_DIMS];
    int ndim = 0;
    if (parse_shape(hdr, name, hstart, shape, &ndim, err))
        goto out;
    size_t esz = f64 ? 8 : isa_dtype_size((unsigned)dt);
    size_t dstart = hstart + hlen;
    /* every size is checked against the bytes present and NPY_MAX_BYTES
     * before anything is allocated */
    uint64_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] && count > NPY_MAX_BYTES / (uint64_t)shape[i]) {
            tpb_errf(err, "%s: offset %zu: field 'shape': dimension %d (%lld) makes the array larger "
                          "than the limit of %llu bytes", name, hstart, i, (long long)shape[i],
                     (unsigned long long)NPY_MAX_BYTES);
            goto out;
        }
        count *= (uint64_t)shape[i];
    }
    uint64_t need = count * esz;
    if (need > NPY_MAX_BYTES) {
        tpb_errf(err, "%s: offset %zu: field 'shape': array of %llu bytes is larger than the limit of %llu "
                      "bytes", name, hstart, (unsigned long long)need, (unsigned long long)NPY_MAX_BYTES);
        goto out;
    }
    if (need > len - dstart) {
        tpb_errf(err, "%s: offset %zu: field 'data': need %llu bytes for shape, file has %zu", name,
                 dstart, (unsigned long long)need, len - dstart);
        goto out;
    }
    if (npy_describe(out, f64 ? ISA_DT_FP32 : (unsigned)dt, ndim, shape, err) ||
        (alloc && npy_alloc_data(out, err))) {
        tpb_err_prefix(err, "%s", name);
        goto out;
    }
    lay->dstart = dstart;
    lay->esz = esz;
    lay->f64 = f64;
    rc = 0;
out:
    free(hdr);
    return rc;
}

int npy_parse(const uint8_t *buf, size_t len, const char *name, npy_array_t *out, tpb_err_t *err)
{
    npy_layout_t lay = { .v1_dtype = -1 };
    if (parse_header(buf, len, name, out, &lay, true, err))
        return -1;
    if (lay.f64) {
        float *d = out->data;
        for (size_t i = 0; i < out->count; i++) {
            double v;
            memcpy(&v, buf + lay.dstart + i * 8, 8);
            d[i] = (float)v;
        }
        out->converted_from_f64 = true;
    } else {
        memcpy(out->data, buf + lay.dstart, out->count * lay.esz);
    }
    return 0;
}

/* npy_read of a regular file without a whole-file buffer: the header is
 * read and checked (parse_header, same messages: it sees the file size),
 * then the elements are read straight into the array.  Returns 0 or -1 as
 * npy_read, or 1 when the whole-file path must decide (an unusual file, a
 * float64 array, a file that changed while read): that path then gives
 * exactly the old results and errors. */
/* want/dst (npy_read_into): an array of exactly want's dtype and shape
 * is read into dst instead of a new buffer */
static bool same_array(const npy_array_t *a, const npy_array_t *want)
{
    if (a->dtype != want->dtype || a->ndim != want->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != want->shape[d])
            return false;
    return true;
}

/* float32 data of want's shape for a narrower float dtype (bf16, fp16,
 * fp8): converted into dst a chunk at a time, so neither a buffer of the
 * whole array nor its first-touch page clearing is needed. */
static bool convert_f32(const npy_array_t *a, const npy_array_t *want)
{
    npy_array_t as_want = *a;
    as_want.dtype = want->dtype;
    return a->dtype == ISA_DT_FP32 && want->dtype != ISA_DT_FP32 &&
           isa_dtype_kind(want->dtype) == ISA_DK_F && same_array(&as_want, want);
}

static bool read_converted(FILE *f, size_t count, unsigned dtype, uint8_t *dst)
{
    enum { CHUNK = 16384 }; /* floats: 64 KiB, stays in L2 */
    float *buf = malloc(CHUNK * sizeof *buf);
    size_t esz = isa_dtype_size(dtype), done = 0;
    while (buf && done < count) {
        size_t n = count - done < CHUNK ? count - done : CHUNK;
        if (fread(buf, sizeof *buf, n, f) != n)
            break;
        num_store_f32_array(dst + done * esz, dtype, buf, n);
        done += n;
    }
    free(buf);
    return done == count;
}

static int read_direct(const char *path, npy_array_t *out, const npy_array_t *want, void *dst,
                       tpb_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1;
    int rc = 1;
    uint8_t head[4096], *hb = head;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 12 ||
        (uintmax_t)st.st_size > SIZE_MAX / 2)
        goto done;
    size_t len = (size_t)st.st_size, n = len < sizeof head ? len : sizeof head;
    if (fread(head, 1, n, f) != n || memcmp(head, "\x93NUMPY", 6) != 0)
        goto done;
    size_t hstart, hlen;
    if (head[6] == 1) {
        hstart = 10;
        hlen = (size_t)head[8] | (size_t)head[9] << 8;
    } else if (head[6] == 2 || head[6] == 3) {
        hstart = 12;
        hlen = (size_t)head[8] | (size_t)head[9] << 8 | (size_t)head[10] << 16 |
               (size_t)head[11] << 24;
    } else {
        goto done;
    }
    if (hlen > len - hstart || hlen > NPY_MAX_HEADER)
        goto done;
    if (hstart + hlen > n) { /* a long header: read the rest of it */
        if (!(hb = malloc(hstart + hlen)))
            goto done;
        memcpy(hb, head, n);
        if (fread(hb + n, 1, hstart + hlen - n, f) != hstart + hlen - n)
            goto done;
    }
    npy_layout_t lay = { .v1_dtype = -1 };
    if (want && isa_dtype_kind(want->dtype) == ISA_DK_F && isa_dtype_size(want->dtype) == 1)
        lay.v1_dtype = (int)want->dtype;
    if (parse_header(hb, len, path, out, &lay, false, err) != 0) {
        rc = -1;
        goto done;
    }
    if (lay.f64)
        goto done;
    bool place = dst && same_array(out, want);
    if (dst && !place && convert_f32(out, want)) {
        if (fseek(f, (long)lay.dstart, SEEK_SET) == 0 &&
            read_converted(f, out->count, want->dtype, dst))
            rc = 0;
        goto done;
    }
    if (!place && npy_alloc_data(out, err) != 0) {
        rc = tpb_err_prefix(err, "%s", path);
        goto done;
    }
    size_t bytes = out->count * lay.esz;
    if (fseek(f, (long)lay.dstart, SEEK_SET) != 0 ||
        fread(place ? dst : out->data, 1, bytes, f) != bytes) {
        if (!place)
            npy_free(out);
        goto done;
    }
    rc = 0;
done:
    if (hb != head)
        free(hb);
    fclose(f);
    return rc;
}

int npy_read(const char *path, npy_array_t *out, tpb_err_t *err)
{
    return npy_read_into(path, NULL, NULL, out, err);
}

int npy_read_into(const char *path, const npy_array_t *want, void *dst, npy_array_t *out,
                  tpb_err_t *err)
{
    uint8_t *buf;
    size_t len;
    memset(out, 0, sizeof *out);
    int direct = read_direct(path, out, want, dst, err);
    if (direct != 1)
        return direct;
    memset(out, 0, sizeof *out);
    if (fio_read_all(path, &buf, &len, err))
        return -1;
    int rc = npy_parse(buf, len, path, out, err);
    free(buf);
    return rc;
}

int npy_header(const npy_array_t *a, uint8_t *buf, size_t *lenp, tpb_err_t *err)
{
    const char *d = npy_descr(a->dtype);
    if (!d && a->dtype == ISA_DT_BF16)
        d = "<V2";   /* raw bits, as np.save writes a bfloat16 array (void_dtype reads it back) */
    if (!d)
        return tpb_errf(err, "npy: dtype %s has no NumPy equivalent; convert to float32 first",
                        isa_dtype_name(a->dtype));
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", d);
    for (int i = 0; i < a->ndim; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld%s", (long long)a->shape[i],
                      (a->ndim == 1 || i + 1 < a->ndim) ? ", " : "");
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    size_t total = 10 + (size_t)n + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = (size_t)n + pad + 1;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)(hlen & 0xFF);
    buf[9] = (uint8_t)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', pad);
    buf[10 + hlen - 1] = '\n';
    *lenp = 10 + hlen;
    return 0;
}

int npy_serialize(const npy_array_t *a, uint8_t **bufp, size_t *lenp, tpb_err_t *err)
{
    uint8_t head[NPY_HEADER_MAX];
    size_t hl;
    if (npy_header(a, head, &hl, err))
        return -1;
    size_t dbytes = a->count * isa_dtype_size(a->dtype);
    uint8_t *b = malloc(hl + dbytes);
    if (!b)
        return tpb_errf(err, "npy: out of memory");
    tpb_advise_huge_pages(b, hl + dbytes);
    memcpy(b, head, hl);
    memcpy(b + hl, a->data, dbytes);
    *bufp = b;
    *lenp = hl + dbytes;
    return 0;
}

int npy_write(const char *path, const npy_array_t *a, tpb_err_t *err)
{
    uint8_t *b;
    size_t len;
    if (npy_serialize(a, &b, &len, err))
        return tpb_err_prefix(err, "%s", path);
    int rc = fio_write_atomic(path, b, len, err);
    free(b);
    return rc;
}
