/* golden/: the output checker (tolerances, exact integers, NaN/Inf rules,
 * shape/dtype mismatch, the mismatch report, missing files) and case.json. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <math.h>
#include <cmocka.h>

#include "case.h"
#include "check.h"
#include "cli_golden.h"
#include "fileio.h"
#include "isa.h"
#include "npy.h"

typedef struct {
    char dir[256];
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/tpb_check_XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        return -1;
    free(f);
    return 0;
}

static void make_f32(npy_array_t *a, int ndim, const int64_t *shape, const float *vals)
{
    tpb_err_t err;
    assert_int_equal(npy_alloc(a, ISA_DT_FP32, ndim, shape, &err), 0);
    memcpy(a->data, vals, a->count * sizeof(float));
}

static void write_f32(const char *path, int ndim, const int64_t *shape, const float *vals)
{
    npy_array_t a;
    tpb_err_t err;
    make_f32(&a, ndim, shape, vals);
    assert_int_equal(npy_write(path, &a, &err), 0);
    npy_free(&a);
}

static void write_i32(const char *path, int n, const int32_t *vals)
{
    npy_array_t a;
    tpb_err_t err;
    int64_t shape[1] = { n };
    assert_int_equal(npy_alloc(&a, ISA_DT_INT32, 1, shape, &err), 0);
    memcpy(a.data, vals, (size_t)n * 4);
    assert_int_equal(npy_write(path, &a, &err), 0);
    npy_free(&a);
}

static void path_in(const fixture_t *f, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", f->dir, name);
}

static gc_tol_t tol_of(double rtol, double atol)
{
    gc_tol_t t;
    gc_tol_default(&t);
    t.rtol = rtol;
    t.atol = atol;
    return t;
}

static void test_float_rule(void **state)
{
    (void)state;
    gc_tol_t t = tol_of(1e-3, 1e-6);
    assert_true(gc_float_match(1.0, 1.0, &t));
    assert_true(gc_float_match(1.0009, 1.0, &t));       /* within rtol */
    assert_false(gc_float_match(1.0011, 1.0, &t));      /* just outside */
    assert_true(gc_float_match(5e-7, 0.0, &t));         /* atol near zero */
    assert_false(gc_float_match(2e-6, 0.0, &t));
    /* rtol scales with the expected value, not the output */
    assert_true(gc_float_match(1000.9, 1000.0, &t));
    assert_false(gc_float_match(0.0, 1000.0, &t));
}

static void test_nan_inf_rules(void **state)
{
    (void)state;
    gc_tol_t t = tol_of(1e30, 1e30); /* huge tolerance: NaN/Inf rules must still bite */
    assert_true(gc_float_match(NAN, NAN, &t));
    assert_false(gc_float_match(NAN, 1.0, &t));          /* NaN only where expected */
    assert_false(gc_float_match(1.0, NAN, &t));
    assert_true(gc_float_match(INFINITY, INFINITY, &t));
    assert_true(gc_float_match(-INFINITY, -INFINITY, &t));
    assert_false(gc_float_match(-INFINITY, INFINITY, &t)); /* same sign only */
    assert_false(gc_float_match(1e30, INFINITY, &t));
    assert_false(gc_float_match(INFINITY, 1e30, &t));
    assert_false(gc_float_match(NAN, INFINITY, &t));
}

static void test_compare_reports_mismatches(void **state)
{
    (void)state;
    int64_t shape[2] = { 3, 4 };
    float want[12], got[12];
    for (int i = 0; i < 12; i++)
        want[i] = got[i] = (float)i;
    got[5] = 5.5f;   /* [1, 1] */
    got[11] = -1.0f; /* [2, 3] */
    npy_array_t a, b;
    make_f32(&a, 2, shape, got);
    make_f32(&b, 2, shape, want);
    gc_tol_t t = tol_of(1e-5, 1e-6);
    gc_result_t r;
    tpb_err_t err;
    assert_int_equal(gc_compare(&a, &b, &t, &r, &err), 0);
    assert_false(r.pass);
    assert_false(r.exact);
    assert_int_equal(r.count, 12);
    assert_int_equal(r.mismatches, 2);
    assert_int_equal(r.nreported, 2);
    assert_int_equal(r.first[0].index[0], 1);
    assert_int_equal(r.first[0].index[1], 1);
    assert_true(r.first[0].got == 5.5 && r.first[0].want == 5.0);
    assert_int_equal(r.first[1].index[0], 2);
    assert_int_equal(r.first[1].index[1], 3);
    assert_true(fabs(r.max_abs_err - 12.0) < 1e-12); /* |-1 - 11| */
    assert_int_equal(r.max_abs_index[0], 2);
    assert_int_equal(r.max_abs_index[1], 3);
    assert_true(fabs(r.max_rel_err - 12.0 / 11.0) < 1e-9);
    /* loosen: everything passes */
    t.atol = 20;
    assert_int_equal(gc_compare(&a, &b, &t, &r, &err), 0);
    assert_true(r.pass);
    npy_free(&a);
    npy_free(&b);
}

static void test_report_caps_listing(void **state)
{
    (void)state;
    int64_t shape[1] = { 100 };
    float want[100], got[100];
    for (int i = 0; i < 100; i++) {
        want[i] = 1.0f;
        got[i] = 2.0f;
    }
    npy_array_t a, b;
    make_f32(&a, 1, shape, got);
    make_f32(&b, 1, shape, want);
    gc_tol_t t = tol_of(0, 0);
    gc_result_t r;
    tpb_err_t err;
    assert_int_equal(gc_compare(&a, &b, &t, &r, &err), 0);
    assert_int_equal(r.mismatches, 100);
    assert_int_equal(r.nreported, GC_MAX_REPORTED);
    assert_int_equal(r.first[GC_MAX_REPORTED - 1].index[0], GC_MAX_REPORTED - 1);
    npy_free(&a);
    npy_free(&b);
}

static void test_integers_exact(void **state)
{
    (void)state;
    int64_t shape[1] = { 4 };
    npy_array_t a, b;
    tpb_err_t err;
    assert_int_equal(npy_alloc(&a, ISA_DT_INT32, 1, shape, &err), 0);
    assert_int_equal(npy_alloc(&b, ISA_DT_INT32, 1, shape, &err), 0);
    int32_t *x = a.data, *y = b.data;
    for (int i = 0; i < 4; i++)
        x[i] = y[i] = 1000000 + i;
    x[2] = 1000003; /* off by one: a float tolerance would accept this */
    gc_tol_t t = tol_of(1e-3, 10);
    gc_result_t r;
    assert_int_equal(gc_compare(&a, &b, &t, &r, &err), 0);
    assert_true(r.exact);
    assert_false(r.pass);
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.first[0].index[0], 2);
    x[2] = 1000002;
    assert_int_equal(gc_compare(&a, &b, &t, &r, &err), 0);
    assert_true(r.pass);
    npy_free(&a);
    npy_free(&b);
}

static void test_unsigned_and_fp16(void **state)
{
    (void)state;
    int64_t shape[1] = { 2 };
    npy_array_t a, b;
    tpb_err_t err;
    assert_int_equal(npy_alloc(&a, ISA_DT_UINT32, 1, shape, &err), 0);
    assert_int_equal(npy_alloc(&b, ISA_DT_UINT32, 1, shape, &err), 0);
    ((uint32_t *)a.data)[0] = 0xFFFFFFFFu; /* must not read as -1 */
    ((uint32_t *)b.data)[0] = 0xFFFFFFFFu;
    gc_tol_t t = tol_of(0, 0);
    gc_result_t r;
    assert_int_equal(gc_compare(&a, &b, &t, &r, &err), 0);
    assert_true(r.pass);
    npy_free(&a);
    npy_free(&b);
    /* fp16: 0x3C00 = 1.0, 0x3C01 = 1 + 2^-10, 0x7C00 = inf, 0x7E00 = NaN */
    assert_int_equal(npy_alloc(&a, ISA_DT_FP16, 1, shape, &err), 0);
    assert_int_equal(npy_alloc(&b, ISA_DT_FP16, 1, shape, &err), 0);
    uint16_t *x = a.data, *y = b.data;
    x[0] = 0x3C01; y[0] = 0x3C00;
    x[1] = 0x7E00; y[1] = 0x7C00;
    t = tol_of(2e-3, 0);
    assert_int_equal(gc_compare(&a, &b, &t, &r, &err), 0);
    assert_int_equal(r.mismatches, 1); /* 1+2^-10 within 2e-3; NaN vs inf is not */
    assert_int_equal(r.first[0].index[0], 1);
    assert_true(isinf(r.first[0].want));
    npy_free(&a);
    npy_free(&b);
}

static void test_shape_and_dtype_mismatch(void **state)
{
    (void)state;
    int64_t s1[2] = { 2, 3 }, s2[2] = { 3, 2 };
    float v[6] = { 0 };
    npy_array_t a, b, c;
    tpb_err_t err;
    make_f32(&a, 2, s1, v);
    make_f32(&b, 2, s2, v);
    gc_tol_t t = tol_of(1, 1);
    gc_result_t r;
    assert_int_not_equal(gc_compare(&a, &b, &t, &r, &err), 0);
    assert_non_null(strstr(err.msg, "shape mismatch"));
    assert_non_null(strstr(err.msg, "[2, 3]"));
    assert_non_null(strstr(err.msg, "[3, 2]"));
    assert_int_equal(npy_alloc(&c, ISA_DT_INT32, 2, s1, &err), 0);
    assert_int_not_equal(gc_compare(&c, &a, &t, &r, &err), 0);
    assert_non_null(strstr(err.msg, "dtype mismatch"));
    assert_non_null(strstr(err.msg, "int32"));
    assert_non_null(strstr(err.msg, "float32"));
    npy_free(&a);
    npy_free(&b);
    npy_free(&c);
}

static void test_dropout_mode(void **state)
{
    (void)state;
    int64_t shape[1] = { 10 };
    float want[10], got[10];
    for (int i = 0; i < 10; i++) {
        want[i] = (float)(i + 1);
        got[i] = i % 2 ? 0.0f : want[i]; /* half kept */
    }
    npy_array_t a, b;
    make_f32(&a, 1, shape, got);
    make_f32(&b, 1, shape, want);
    gc_tol_t t = tol_of(0, 0);
    t.mode = GC_MODE_DROPOUT;
    t.keep_min = 0.4;
    t.keep_max = 0.6;
    gc_result_t r;
    tpb_err_t err;
    assert_int_equal(gc_compare(&a, &b, &t, &r, &err), 0);
    assert_true(r.pass);
    assert_int_equal(r.kept, 5);
    assert_true(fabs(r.keep_fraction - 0.5) < 1e-12);
    t.keep_min = 0.7;
    t.keep_max = 1.0;
    assert_int_equal(gc_compare(&a, &b, &t, &r, &err), 0);
    assert_false(r.pass);
    assert_false(r.keep_fraction_ok);
    assert_int_equal(r.mismatches, 0);
    /* a value that is neither 0 nor the input is a mismatch */
    npy_free(&a);
    got[3] = 7.0f;
    make_f32(&a, 1, shape, got);
    t.keep_min = 0.0;
    assert_int_equal(gc_compare(&a, &b, &t, &r, &err), 0);
    assert_false(r.pass);
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.first[0].index[0], 3);
    npy_free(&a);
    npy_free(&b);
}

static void test_missing_files(void **state)
{
    fixture_t *f = *state;
    char got[512], want[512];
    path_in(f, "nope.npy", got, sizeof got);
    path_in(f, "want.npy", want, sizeof want);
    int64_t shape[1] = { 1 };
    float v[1] = { 1 };
    gc_tol_t t = tol_of(0, 0);
    gc_result_t r;
    tpb_err_t err;
    assert_int_not_equal(gc_compare_files(got, want, &t, &r, &err), 0);
    assert_non_null(strstr(err.msg, "expected"));
    assert_non_null(strstr(err.msg, "want.npy"));
    write_f32(want, 1, shape, v);
    assert_int_not_equal(gc_compare_files(got, want, &t, &r, &err), 0);
    assert_non_null(strstr(err.msg, "output"));
    assert_non_null(strstr(err.msg, "nope.npy"));
}

/* gc_check_dir: the printed report (verdict lines, multi-dim indices with
 * both values, overall verdict) and the exit status. */
static void test_check_dir_report(void **state)
{
    fixture_t *f = *state;
    char outdir[512], expdir[512], p[600];
    tpb_err_t err;
    path_in(f, "out", outdir, sizeof outdir);
    path_in(f, "expected", expdir, sizeof expdir);
    assert_int_equal(fio_mkdirs(outdir, &err), 0);
    assert_int_equal(fio_mkdirs(expdir, &err), 0);
    int64_t shape[2] = { 2, 2 };
    float want[4] = { 1, 2, 3, 4 }, got[4] = { 1, 2, 3.25f, 4 };
    snprintf(p, sizeof p, "%s/y.npy", expdir);
    write_f32(p, 2, shape, want);
    snprintf(p, sizeof p, "%s/y.npy", outdir);
    write_f32(p, 2, shape, got);
    int32_t iv[3] = { 7, 8, 9 };
    snprintf(p, sizeof p, "%s/idx.npy", expdir);
    write_i32(p, 3, iv);
    snprintf(p, sizeof p, "%s/idx.npy", outdir);
    write_i32(p, 3, iv);
    snprintf(p, sizeof p, "%s/gone.npy", expdir); /* expected but never produced */
    write_i32(p, 3, iv);

    gc_check_opts_t o;
    gc_check_opts_default(&o);
    gc_check_summary_t s;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    assert_non_null(mem);
    int rc = gc_check_dir(mem, outdir, expdir, NULL, &o, &s);
    fclose(mem);
    assert_int_equal(rc, 1);
    assert_int_equal(s.outputs, 3);
    assert_int_equal(s.passed, 1);
    assert_int_equal(s.failed, 1);
    assert_int_equal(s.errors, 1);
    assert_non_null(strstr(buf, "PASS  idx  [3] int32  exact"));
    assert_non_null(strstr(buf, "FAIL  y  [2, 2] float32"));
    assert_non_null(strstr(buf, "1 of 4 elements differ"));
    assert_non_null(strstr(buf, "[1, 0]"));
    assert_non_null(strstr(buf, "3.25 vs 3"));
    assert_non_null(strstr(buf, "ERROR gone"));
    assert_non_null(strstr(buf, "cannot open"));
    assert_non_null(strstr(buf, "overall: FAIL (2 of 3 outputs"));
    free(buf);

    /* --atol override makes y pass; removing the missing one passes all */
    snprintf(p, sizeof p, "%s/gone.npy", expdir);
    unlink(p);
    o.atol_set = true;
    o.atol = 0.5;
    mem = open_memstream(&buf, &len);
    rc = gc_check_dir(mem, outdir, expdir, NULL, &o, &s);
    fclose(mem);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(buf, "overall: PASS (2 outputs)"));
    free(buf);
}

static void test_check_dir_empty_fails(void **state)
{
    fixture_t *f = *state;
    gc_check_opts_t o;
    gc_check_opts_default(&o);
    gc_check_summary_t s;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    int rc = gc_check_dir(mem, f->dir, f->dir, NULL, &o, &s);
    fclose(mem);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(buf, "no expected outputs"));
    free(buf);
}

static void test_case_json(void **state)
{
    (void)state;
    gc_case_t *c = calloc(1, sizeof *c);
    tpb_err_t err;
    snprintf(c->dir, sizeof c->dir, "golden/x");
    gc_tol_default(&c->default_tol);
    const char *ok =
        "{\"description\": \"d\", \"target\": \"trn1\", \"lnc\": 1, \"tags\": [\"quick\"],"
        " \"seed\": 7, \"outputs\": {\"o\": {\"rtol\": 0.01, \"check\": \"dropout\","
        " \"keep_fraction\": [0.3, 0.7]}}, \"tolerance\": {\"atol\": 0.5},"
        " \"cycles\": [100, 200], \"xfail\": \"PE transpose not lowered yet\"}";
    assert_int_equal(gc_case_parse(ok, "case.json", c, &err), 0);
    assert_string_equal(c->target, "trn1");
    assert_true(gc_case_has_tag(c, "quick"));
    assert_false(gc_case_has_tag(c, "full"));
    assert_true(c->has_cycles);
    assert_int_equal(c->cycles_min, 100);
    assert_int_equal(c->cycles_max, 200);
    assert_true(c->xfail);
    assert_string_equal(c->xfail_reason, "PE transpose not lowered yet");
    assert_string_equal(c->kernel, "golden/x/kernel.json");
    const gc_tol_t *t = gc_case_tol(c, "o");
    assert_true(t->rtol == 0.01 && t->atol == 0.5); /* inherits the case atol */
    assert_int_equal(t->mode, GC_MODE_DROPOUT);
    assert_true(t->keep_min == 0.3 && t->keep_max == 0.7);
    assert_true(gc_case_tol(c, "other")->atol == 0.5);

    memset(c, 0, sizeof *c);
    assert_int_not_equal(gc_case_parse("{\"rtoll\": 1}", "case.json", c, &err), 0);
    assert_non_null(strstr(err.msg, "case.json"));
    assert_non_null(strstr(err.msg, "rtoll"));
    memset(c, 0, sizeof *c);
    assert_int_not_equal(gc_case_parse("{\"cycles\": [5, 1]}", "c.json", c, &err), 0);
    assert_non_null(strstr(err.msg, "cycles"));
    memset(c, 0, sizeof *c);
    assert_int_not_equal(gc_case_parse("{\"outputs\": {\"o\": {\"check\": \"fuzzy\"}}}",
                                       "c.json", c, &err), 0);
    assert_non_null(strstr(err.msg, "outputs.o.check"));
    memset(c, 0, sizeof *c);
    assert_int_not_equal(gc_case_parse("{\"lnc\": ", "c.json", c, &err), 0);
    assert_non_null(strstr(err.msg, "invalid JSON"));
    free(c);
}

static void test_case_dir_without_config(void **state)
{
    fixture_t *f = *state;
    gc_case_t *c = calloc(1, sizeof *c);
    tpb_err_t err;
    assert_int_equal(gc_case_load(f->dir, c, &err), 0);
    assert_false(c->xfail);
    assert_false(c->has_cycles);
    assert_int_equal(c->lnc, 1);
    assert_non_null(strstr(c->kernel, "kernel.json"));
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_rule),
        cmocka_unit_test(test_nan_inf_rules),
        cmocka_unit_test(test_compare_reports_mismatches),
        cmocka_unit_test(test_report_caps_listing),
        cmocka_unit_test(test_integers_exact),
        cmocka_unit_test(test_unsigned_and_fp16),
        cmocka_unit_test(test_shape_and_dtype_mismatch),
        cmocka_unit_test(test_dropout_mode),
        cmocka_unit_test_setup_teardown(test_missing_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_dir_report, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_dir_empty_fails, setup, teardown),
        cmocka_unit_test(test_case_json),
        cmocka_unit_test_setup_teardown(test_case_dir_without_config, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
