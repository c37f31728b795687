/* fj_decl.c - the declarations of a kernel file: its tensors (inputs,
 * outputs, scratch), inline and file constants, and the NKI launch grid
 * (docs/kernel-format.md).  Called once by frontend_json.c's run(). */
#include "fj.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "expr.h"
#include "fileio.h"
#include "jsonread.h"
#include "lnc.h"
#include "numeric.h"

/* ---- tensors and constants ---- */

int fj_decl_tensors(jx_t *j, const cJSON *root, const char *key, tir_tensor_kind_t kind)
{
    const cJSON *arr = fj_field(root, key);
    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr))
        return fj_jfail(j, key, NULL, "expected an array of {name, shape, dtype}, got %s",
                     fj_type_name(arr));
    static const char *const allowed[] = {"name", "shape", "dtype", NULL};
    int i = 0;
    for (const cJSON *t = arr->child; t; t = t->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "%s[%d]", key, i);
        if (!cJSON_IsObject(t))
            return fj_jfail(j, path, NULL, "expected an object, got %s", fj_type_name(t));
        if (fj_check_fields(j, t, path, allowed))
            return -1;
        const char *name;
        unsigned dt;
        int64_t shape[TIR_MAX_DIMS];
        int nd;
        if (fj_get_str(j, t, path, "name", &name, true) || fj_get_dtype(j, t, path, &dt) ||
            fj_get_shape(j, t, path, "shape", shape, &nd, TIR_MAX_DIMS))
            return -1;
        enc_set_path(&j->b, path);
        int id = kind == TIR_T_INPUT ? enc_input(&j->b, name, dt, nd, shape)
               : kind == TIR_T_OUTPUT ? enc_output(&j->b, name, dt, nd, shape)
                                      : enc_scratch(&j->b, name, dt, nd, shape);
        if (id < 0)
            return -1;
    }
    return 0;
}

static int store_value(jx_t *j, const char *path, void *p, unsigned dt, double v)
{
    switch (dt) {
    case ISA_DT_FP32: case ISA_DT_BF16: case ISA_DT_FP16:
        num_store_f32(p, dt, (float)v);
        return 0;
    case ISA_DT_FP8E4M3: case ISA_DT_FP8E4M3IEEE: case ISA_DT_FP8E5M2: case ISA_DT_FP8E8M0:
        return fj_jfail(j, path, "value", "inline float8 constants are not supported; give a .npy "
                     "`file` instead");
    default: break;
    }
    if (v != floor(v))
        return fj_jfail(j, path, "value", "%g is not an integer (dtype %s)", v, isa_dtype_numpy_name(dt));
    double lo, hi;
    switch (dt) {
    case ISA_DT_INT8: lo = -128; hi = 127; break;
    case ISA_DT_INT16: lo = -32768; hi = 32767; break;
    case ISA_DT_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
    case ISA_DT_UINT8: lo = 0; hi = 255; break;
    case ISA_DT_UINT16: lo = 0; hi = 65535; break;
    default: lo = 0; hi = 4294967295.0; break;
    }
    if (v < lo || v > hi)
        return fj_jfail(j, path, "value", "%g out of range for %s", v, isa_dtype_numpy_name(dt));
    int64_t iv = (int64_t)v;
    unsigned sz = isa_dtype_size(dt);
    memcpy(p, &iv, sz);   /* little-endian host */
    return 0;
}

/* Infer the shape of nested lists (rectangular). */
static int value_shape(jx_t *j, const char *path, const cJSON *v, int64_t *shape, int *nd)
{
    *nd = 0;
    const cJSON *c = v;
    while (cJSON_IsArray(c)) {
        if (*nd == TIR_MAX_DIMS)
            return fj_jfail(j, path, "value", "more than %d nested levels", TIR_MAX_DIMS);
        int n = cJSON_GetArraySize(c);
        if (n < 1)
            return fj_jfail(j, path, "value", "empty list");
        shape[(*nd)++] = n;
        c = c->child;
    }
    if (*nd == 0)
        return fj_jfail(j, path, "value", "expected nested lists of numbers");
    return 0;
}

static int fill_values(jx_t *j, const char *path, const cJSON *v, const int64_t *shape, int nd,
                       int d, uint8_t *data, unsigned dt, int64_t *idx)
{
    if (d == nd) {
        if (!cJSON_IsNumber(v) && !cJSON_IsBool(v))
            return fj_jfail(j, path, "value", "expected a number, got %s", fj_type_name(v));
        double x = cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1 : 0) : v->valuedouble;
        return store_value(j, path, data + (size_t)(*idx)++ * isa_dtype_size(dt), dt, x);
    }
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != shape[d])
        return fj_jfail(j, path, "value", "not a rectangular [%s] array matching the shape at "
                     "level %d", "...", d);
    for (const cJSON *c = v->child; c; c = c->next)
        if (fill_values(j, path, c, shape, nd, d + 1, data, dt, idx))
            return -1;
    return 0;
}

int fj_decl_constants(jx_t *j, const cJSON *root)
{
    const cJSON *arr = fj_field(root, "constants");
    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr))
        return fj_jfail(j, "constants", NULL, "expected an array, got %s", fj_type_name(arr));
    static const char *const allowed[] = {"name", "shape", "dtype", "file", "value", "identity", NULL};
    int i = 0;
    for (const cJSON *t = arr->child; t; t = t->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "constants[%d]", i);
        if (!cJSON_IsObject(t))
            return fj_jfail(j, path, NULL, "expected an object, got %s", fj_type_name(t));
        if (fj_check_fields(j, t, path, allowed))
            return -1;
        const char *name, *file;
        unsigned dt;
        if (fj_get_str(j, t, path, "name", &name, true) || fj_get_dtype(j, t, path, &dt) ||
            fj_get_str(j, t, path, "file", &file, false))
            return -1;
        const cJSON *val = fj_field(t, "value"), *idn = fj_field(t, "identity");
        int kinds = (file != NULL) + (val != NULL) + (idn != NULL);
        if (kinds != 1)
            return fj_jfail(j, path, NULL, "give exactly one of 'file', 'value' or 'identity'");
        enc_set_path(&j->b, path);
        if (idn) {
            int64_t n;
            if (fj_get_int_item(j, idn, path, "identity", &n, NULL))
                return -1;
            if (fj_field(t, "shape"))
                return fj_jfail(j, path, "shape", "not used with 'identity' (the shape is n x n)");
            if (enc_shared_identity_matrix(&j->b, name, n, dt) < 0)
                return -1;
            continue;
        }
        int64_t shape[TIR_MAX_DIMS];
        int nd;
        if (file) {
            if (fj_get_shape(j, t, path, "shape", shape, &nd, TIR_MAX_DIMS))
                return -1;
            char full[1024];
            if (file[0] == '/')
                snprintf(full, sizeof full, "%s", file);
            else if (snprintf(full, sizeof full, "%s/%s", j->base_dir, file) >= (int)sizeof full)
                return fj_jfail(j, path, "file", "path too long");
            if (enc_shared_constant_file(&j->b, name, dt, nd, shape, full) < 0)
                return -1;
            continue;
        }
        if (value_shape(j, path, val, shape, &nd))
            return -1;
        if (fj_field(t, "shape")) {
            int64_t s2[TIR_MAX_DIMS];
            int n2;
            if (fj_get_shape(j, t, path, "shape", s2, &n2, TIR_MAX_DIMS))
                return -1;
            if (n2 != nd || memcmp(s2, shape, (size_t)nd * sizeof *shape))
                return fj_jfail(j, path, "shape", "does not match the nested 'value' lists");
        }
        int id = enc_shared_constant(&j->b, name, dt, nd, shape, NULL);
        if (id < 0)
            return -1;
        int64_t idx = 0;
        if (fill_values(j, path, val, shape, nd, 0, j->b.k->tensors[id].const_data, dt, &idx))
            return -1;
    }
    return 0;
}

/* ---- grid ---- */

#define GRID_MAX_DIMS 4
#define GRID_MAX_INSTANCES 65536

/* One launch-grid axis: an integer (expression) or an NKI core annotation:
 * "nc(k)" (k instances, one per core), "nc(k)*m" / "spmd_dim(nc(k), m)"
 * (k*m instances, blocked: instance i on core i / m), "m*nc(k)" /
 * "spmd_dim(m, nc(k))" (interleaved: core i % k). */
static int grid_axis(jx_t *j, const cJSON *c, int d, int64_t *size, int64_t *nc,
                     bool *interleaved)
{
    *nc = 0;
    *interleaved = false;
    if (cJSON_IsString(c) && strstr(c->valuestring, "nc(")) {
        char t[128];
        size_t n = 0;
        for (const char *q = c->valuestring; *q && n + 1 < sizeof t; q++)
            if (*q != ' ')
                t[n++] = *q;
        t[n] = 0;
        const char *q = t;
        if (!strncmp(q, "nl.", 3))
            q += 3;
        long long k = 0, m = 1;
        int used = 0;
        char tail;
        if (sscanf(q, "nc(%lld)%n", &k, &used) == 1 && q[used] == 0) {
            m = 1;
        } else if (sscanf(q, "nc(%lld)*%lld%c", &k, &m, &tail) == 2 ||
                   sscanf(q, "spmd_dim(nc(%lld),%lld)%c", &k, &m, &tail) == 2 ||
                   sscanf(q, "spmd_dim(nl.nc(%lld),%lld)%c", &k, &m, &tail) == 2) {
        } else if (sscanf(q, "%lld*nc(%lld)%c", &m, &k, &tail) == 2 ||
                   sscanf(q, "%lld*nl.nc(%lld)%c", &m, &k, &tail) == 2 ||
                   sscanf(q, "spmd_dim(%lld,nc(%lld))%c", &m, &k, &tail) == 2 ||
                   sscanf(q, "spmd_dim(%lld,nl.nc(%lld))%c", &m, &k, &tail) == 2) {
            *interleaved = true;
        } else {
            return fj_jfail(j, "grid", NULL, "axis %d: '%s' is not nc(k), nc(k)*m, m*nc(k), "
                         "spmd_dim(nc(k), m) or spmd_dim(m, nc(k))", d, c->valuestring);
        }
        if (k < 1 || m < 1 || k > LNC_MAX_CORES)
            return fj_jfail(j, "grid", NULL, "axis %d: nc(%lld) with %lld instances per core "
                         "(1..%d cores, at least one instance)", d, k, m, LNC_MAX_CORES);
        if (m > GRID_MAX_INSTANCES / k)   /* also keeps k * m from overflowing */
            return fj_jfail(j, "grid", NULL, "axis %d: nc(%lld) with %lld instances per core is "
                         "more than %d instances", d, k, m, GRID_MAX_INSTANCES);
        *nc = k;
        *size = k * m;
        return 0;
    }
    if (fj_get_int_item(j, c, "grid", "grid", size, NULL))
        return -1;
    if (*size < 1 || *size > GRID_MAX_INSTANCES)
        return fj_jfail(j, "grid", NULL, "axis %d is %lld (1..%d)", d, (long long)*size,
                     GRID_MAX_INSTANCES);
    return 0;
}

/* The NKI launch grid (docs/kernel-format.md "Launch grids"): instance ids
 * are row-major over the axes; without nc() every instance runs on core 0
 * (in program order); nc(k) on one axis spreads that axis over k cores.
 * The object form {"n", "nc", "mapping"} is the 1-D grid of n instances on
 * nc cores (default: one per core). */
int fj_parse_grid(jx_t *j, const cJSON *root, int program_id, int *nprog, int *ncores,
                  int *core)
{
    const cJSON *g = fj_field(root, "grid");
    int64_t n = 1, nc = 0, axis_i = 0, axis_m = 1;
    bool interleaved = false;
    j->grid_ndim = 1;
    j->grid_dims[0] = 1;
    if (g && cJSON_IsArray(g)) {
        int nd = cJSON_GetArraySize(g);
        if (nd < 1 || nd > GRID_MAX_DIMS)
            return fj_jfail(j, "grid", NULL, "%d grid axes (1..%d)", nd, GRID_MAX_DIMS);
        int d = 0, nc_axis = -1;
        for (const cJSON *c = g->child; c; c = c->next, d++) {
            int64_t k;
            bool il;
            if (grid_axis(j, c, d, &j->grid_dims[d], &k, &il))
                return -1;
            if (k && nc_axis >= 0)
                return fj_jfail(j, "grid", NULL, "axes %d and %d both carry nc(): at most one "
                             "axis is spread over cores", nc_axis, d);
            if (k) {
                nc_axis = d;
                nc = k;
                interleaved = il;
            }
            n *= j->grid_dims[d];
            if (n > GRID_MAX_INSTANCES)
                return fj_jfail(j, "grid", NULL, "more than %d instances", GRID_MAX_INSTANCES);
        }
        j->grid_ndim = nd;
        if (nc_axis < 0)
            nc = 1;
        else {
            int64_t stride = 1;   /* row-major: the index along nc_axis */
            for (int e = nd - 1; e > nc_axis; e--)
                stride *= j->grid_dims[e];
            axis_i = (program_id / stride) % j->grid_dims[nc_axis];
            axis_m = j->grid_dims[nc_axis] / nc;
        }
    } else if (g && cJSON_IsObject(g)) {
        static const char *const allowed[] = {"n", "nc", "mapping", NULL};
        const char *m;
        if (fj_check_fields(j, g, "grid", allowed) || fj_get_int(j, g, "grid", "n", &n, 1, true) ||
            fj_get_int(j, g, "grid", "nc", &nc, 0, false) ||
            fj_get_str(j, g, "grid", "mapping", &m, false))
            return -1;
        if (m && !strcmp(m, "interleaved"))
            interleaved = true;
        else if (m && strcmp(m, "blocked"))
            return fj_jfail(j, "grid", "mapping", "unknown mapping '%s' (blocked, interleaved)", m);
        if (n < 1 || n > GRID_MAX_INSTANCES)
            return fj_jfail(j, "grid", "n", "%lld programs (1..%d)", (long long)n,
                         GRID_MAX_INSTANCES);
        if (nc == 0)
            nc = n;
        if (nc < 1 || nc > n || n % nc || nc > LNC_MAX_CORES)
            return fj_jfail(j, "grid", "nc", "%lld cores for %lld programs (must divide n, at "
                         "most %d)", (long long)nc, (long long)n, LNC_MAX_CORES);
        j->grid_dims[0] = n;
        axis_i = program_id;
        axis_m = n / nc;
    } else if (g) {
        return fj_jfail(j, "grid", NULL, "expected [g0, g1, ...] or {\"n\", \"nc\", \"mapping\"}, "
                     "got %s", fj_type_name(g));
    }
    if (nc == 0)
        nc = 1;   /* no grid */
    if (program_id < 0 || program_id >= n)
        return fj_jfail(j, "grid", NULL, "program id %d out of range 0..%lld", program_id,
                     (long long)n - 1);
    *nprog = (int)n;
    *ncores = (int)nc;
    *core = nc == 1 ? 0 : interleaved ? (int)(axis_i % nc) : (int)(axis_i / axis_m);
    return 0;
}
