/* check.c - dtype-aware comparison of an output array with a golden array
 * (rules in check.h and docs/golden.md). */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "isa.h"
#include "numeric.h"

void gc_tol_default(gc_tol_t *tol)
{
    memset(tol, 0, sizeof *tol);
    tol->rtol = 1e-5;
    tol->atol = 1e-6;
    tol->mode = GC_MODE_VALUES;
    tol->keep_min = 0.0;
    tol->keep_max = 1.0;
}

bool gc_float_match(double got, double want, const gc_tol_t *tol)
{
    if (isnan(want))
        return isnan(got);
    if (isnan(got))
        return false;
    if (isinf(want) || isinf(got))
        return got == want; /* same-signed infinity only */
    return fabs(got - want) <= tol->atol + tol->rtol * fabs(want);
}

/* fp16 -> double, exact.  Kept local so the checker does not depend on the
 * simulator's own conversion code (an independent decoder). */
static double half_to_double(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
    double v;
    if (exp == 0)
        v = ldexp((double)man, -24);
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexp((double)(man | 0x400), exp - 25);
    return sign ? -v : v;
}

static double load_float(const npy_array_t *a, size_t i)
{
    if (a->dtype == ISA_DT_FP16) {
        uint16_t h;
        memcpy(&h, (const uint8_t *)a->data + 2 * i, 2);
        return half_to_double(h);
    }
    float f;
    memcpy(&f, (const uint8_t *)a->data + 4 * i, 4);
    return (double)f;
}

static int64_t load_int(const npy_array_t *a, size_t i)
{
    const uint8_t *p = (const uint8_t *)a->data;
    switch (a->dtype) {
    case ISA_DT_INT8: { int8_t v; memcpy(&v, p + i, 1); return v; }
    case ISA_DT_UINT8: return p[i];
    case ISA_DT_INT16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case ISA_DT_UINT16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case ISA_DT_INT32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case ISA_DT_UINT32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    default: return 0;
    }
}

static void flat_to_index(size_t flat, const npy_array_t *a, int64_t *index)
{
    for (int d = a->ndim - 1; d >= 0; d--) {
        int64_t n = a->shape[d] > 0 ? a->shape[d] : 1;
        index[d] = (int64_t)(flat % (size_t)n);
        flat /= (size_t)n;
    }
}

void gc_format_index(const int64_t *index, int ndim, char *buf, size_t len)
{
    size_t used = 0;
    if (len == 0)
        return;
    buf[0] = 0;
    used += (size_t)snprintf(buf, len, "[");
    for (int d = 0; d < ndim && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", d ? ", " : "",
                                 (long long)index[d]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
}

static void record_mismatch(gc_result_t *res, const npy_array_t *a, size_t i,
                            double got, double want)
{
    res->mismatches++;
    if (res->nreported >= GC_MAX_REPORTED)
        return;
    gc_mismatch_t *m = &res->first[res->nreported++];
    m->flat = i;
    m->got = got;
    m->want = want;
    flat_to_index(i, a, m->index);
}

static void track_error(gc_result_t *res, const npy_array_t *a, size_t i, double got,
                        double want)
{
    if (!isfinite(got) || !isfinite(want))
        return;
    double abs_err = fabs(got - want);
    if (abs_err > res->max_abs_err) {
        res->max_abs_err = abs_err;
        flat_to_index(i, a, res->max_abs_index);
    }
    if (want != 0.0) {
        double rel = abs_err / fabs(want);
        if (rel > res->max_rel_err)
            res->max_rel_err = rel;
    }
}

static void compare_ints(const npy_array_t *got, const npy_array_t *want, gc_result_t *res)
{
    for (size_t i = 0; i < want->count; i++) {
        int64_t g = load_int(got, i), w = load_int(want, i);
        track_error(res, want, i, (double)g, (double)w);
        if (g != w)
            record_mismatch(res, want, i, (double)g, (double)w);
    }
}

static void compare_floats(const npy_array_t *got, const npy_array_t *want,
                           const gc_tol_t *tol, gc_result_t *res)
{
    for (size_t i = 0; i < want->count; i++) {
        double g = load_float(got, i), w = load_float(want, i);
        track_error(res, want, i, g, w);
        if (!gc_float_match(g, w, tol))
            record_mismatch(res, want, i, g, w);
    }
}

/* Dropout: an element is fine when dropped (exactly 0) or kept (matches the
 * expected value).  Elements whose expected value is 0 are both at once and
 * are left out of the keep fraction. */
static void compare_dropout(const npy_array_t *got, const npy_array_t *want,
                            const gc_tol_t *tol, gc_result_t *res)
{
    for (size_t i = 0; i < want->count; i++) {
        double g = load_float(got, i), w = load_float(want, i);
        bool kept = gc_float_match(g, w, tol);
        if (w != 0.0) {
            res->keep_population++;
            if (kept)
                res->kept++;
        }
        if (kept)
            track_error(res, want, i, g, w);
        else if (g != 0.0)
            record_mismatch(res, want, i, g, w);
    }
    res->keep_fraction = res->keep_population
                             ? (double)res->kept / (double)res->keep_population : 0.0;
    res->keep_fraction_ok = res->keep_fraction >= tol->keep_min &&
                            res->keep_fraction <= tol->keep_max;
}

static int check_same_layout(const npy_array_t *got, const npy_array_t *want, tpb_err_t *err)
{
    char gs[160], ws[160];
    bool same = got->ndim == want->ndim;
    for (int d = 0; same && d < got->ndim; d++)
        same = got->shape[d] == want->shape[d];
    if (!same) {
        gc_format_index(got->shape, got->ndim, gs, sizeof gs);
        gc_format_index(want->shape, want->ndim, ws, sizeof ws);
        return tpb_errf(err, "shape mismatch: output %s, expected %s", gs, ws);
    }
    if (got->dtype != want->dtype)
        return tpb_errf(err, "dtype mismatch: output %s, expected %s",
                        isa_dtype_numpy_name(got->dtype), isa_dtype_numpy_name(want->dtype));
    return 0;
}

int gc_compare(const npy_array_t *got, const npy_array_t *want, const gc_tol_t *tol,
               gc_result_t *res, tpb_err_t *err)
{
    memset(res, 0, sizeof *res);
    if (check_same_layout(got, want, err) != 0)
        return -1;
    res->ndim = want->ndim;
    memcpy(res->shape, want->shape, sizeof res->shape);
    res->dtype = want->dtype;
    res->count = want->count;
    bool is_float = isa_dtype_kind(want->dtype) == ISA_DK_F;
    if (!is_float && tol->mode == GC_MODE_DROPOUT)
        return tpb_errf(err, "dropout check needs a float array, got %s",
                        isa_dtype_numpy_name(want->dtype));
    if (!is_float) {
        res->exact = true;
        compare_ints(got, want, res);
    } else if (tol->mode == GC_MODE_DROPOUT) {
        compare_dropout(got, want, tol, res);
    } else {
        compare_floats(got, want, tol, res);
    }
    res->pass = res->mismatches == 0 &&
                (tol->mode != GC_MODE_DROPOUT || res->keep_fraction_ok);
    return 0;
}

/* An expected file of raw bf16/fp8 bits (NumPy's void descr: ml_dtypes or
 * tpbsim_dtypes arrays saved with np.save; see npy.c) next to a float32
 * output, as tpb writes bf16/fp8 tensors: the expected values widened to
 * float32 (exact), so the two compare.  0, or -1 (out of memory). */
static int widen_expected(npy_array_t *want, const npy_array_t *got, tpb_err_t *err)
{
    if (want->dtype == got->dtype || got->dtype != ISA_DT_FP32 ||
        isa_dtype_kind(want->dtype) != ISA_DK_F || npy_descr(want->dtype))
        return 0;
    npy_array_t w;
    if (npy_alloc(&w, ISA_DT_FP32, want->ndim, want->shape, err) != 0)
        return -1;
    num_load_f32_array(w.data, want->data, want->dtype, want->count);
    npy_free(want);
    *want = w;
    return 0;
}

int gc_compare_files(const char *got_path, const char *want_path, const gc_tol_t *tol,
                     gc_result_t *res, tpb_err_t *err)
{
    npy_array_t got, want;
    memset(res, 0, sizeof *res);
    if (npy_read(want_path, &want, err) != 0)
        return tpb_err_prefix(err, "expected");
    if (npy_read(got_path, &got, err) != 0) {
        npy_free(&want);
        return tpb_err_prefix(err, "output");
    }
    int rc = widen_expected(&want, &got, err);
    if (rc == 0)
        rc = gc_compare(&got, &want, tol, res, err);
    if (rc != 0)
        tpb_err_prefix(err, "%s vs %s", got_path, want_path);
    npy_free(&got);
    npy_free(&want);
    return rc;
}
