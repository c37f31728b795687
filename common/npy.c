#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "hugepage.h"
#include "isa.h"

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

int npy_alloc(npy_array_t *a, unsigned dtype, int ndim, const int64_t *shape, tpb_err_t *err)
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
    a->data = calloc(count ? count : 1, isa_dtype_size(dtype));
    if (!a->data)
        return tpb_errf(err, "npy: out of memory for %zu elements", count);
    tpb_advise_huge_pages(a->data, count * isa_dtype_size(dtype));
    return 0;
}

void npy_free(npy_array_t *a)
{
    if (a) {
        free(a->data);
        a->data = NULL;
    }
}

int npy_parse(const uint8_t *buf, size_t len, const char *name, npy_array_t *out, tpb_err_t *err)
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
    p = find_key(hdr, "shape");
    if (!p || *p != '(') {
        tpb_errf(err, "%s: offset %zu: field 'shape': missing", name, hstart);
        goto out;
    }
    p++;
    int64_t shape[NPY_MAX_DIMS];
    int ndim = 0;
    for (;;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            break;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0) {
            tpb_errf(err, "%s: offset %zu: field 'shape': malformed", name, hstart);
            goto out;
        }
        if (ndim == NPY_MAX_DIMS) {
            tpb_errf(err, "%s: offset %zu: field 'shape': more than %d dims", name, hstart, NPY_MAX_DIMS);
            goto out;
        }
        shape[ndim++] = v;
        p = end;
        while (*p == 'L')
            p++;
    }
    if (npy_alloc(out, f64 ? ISA_DT_FP32 : (unsigned)dt, ndim, shape, err)) {
        tpb_err_prefix(err, "%s", name);
        goto out;
    }
    size_t esz = f64 ? 8 : isa_dtype_size((unsigned)dt);
    size_t dstart = hstart + hlen;
    if (out->count > (len - dstart) / (esz ? esz : 1)) {
        tpb_errf(err, "%s: offset %zu: field 'data': need %zu bytes for shape, file has %zu", name,
                 dstart, out->count * esz, len - dstart);
        npy_free(out);
        goto out;
    }
    if (f64) {
        float *d = out->data;
        for (size_t i = 0; i < out->count; i++) {
            double v;
            memcpy(&v, buf + dstart + i * 8, 8);
            d[i] = (float)v;
        }
        out->converted_from_f64 = true;
    } else {
        memcpy(out->data, buf + dstart, out->count * esz);
    }
    rc = 0;
out:
    free(hdr);
    return rc;
}

int npy_read(const char *path, npy_array_t *out, tpb_err_t *err)
{
    uint8_t *buf;
    size_t len;
    memset(out, 0, sizeof *out);
    if (fio_read_all(path, &buf, &len, err))
        return -1;
    int rc = npy_parse(buf, len, path, out, err);
    free(buf);
    return rc;
}

int npy_serialize(const npy_array_t *a, uint8_t **bufp, size_t *lenp, tpb_err_t *err)
{
    const char *d = npy_descr(a->dtype);
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
    size_t dbytes = a->count * isa_dtype_size(a->dtype);
    uint8_t *b = malloc(10 + hlen + dbytes);
    if (!b)
        return tpb_errf(err, "npy: out of memory");
    tpb_advise_huge_pages(b, 10 + hlen + dbytes);
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (uint8_t)(hlen & 0xFF);
    b[9] = (uint8_t)(hlen >> 8);
    memcpy(b + 10, dict, (size_t)n);
    memset(b + 10 + n, ' ', pad);
    b[10 + hlen - 1] = '\n';
    memcpy(b + 10 + hlen, a->data, dbytes);
    *bufp = b;
    *lenp = 10 + hlen + dbytes;
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
