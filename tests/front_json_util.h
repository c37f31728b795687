/* front_json_util.h - kernel-text helpers shared by the front-end tests
 * (test_front_json.c, test_front_json_errors.c): kernels are written with '
 * for " and a common header of inputs. */
#ifndef TPB_TESTS_FRONT_JSON_UTIL_H
#define TPB_TESTS_FRONT_JSON_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "jsonread.h"

#include "builder.h"
#include "frontend.h"

#define EX TPB_SOURCE_DIR "/examples/kernels/"

/* tile declarations inside test bodies */
#define T(name, shape, dt) "{'op': 'tile', 'name': '" name "', 'shape': " shape ", 'dtype': '" dt "'},"
#define TP(name, shape, dt) "{'op': 'tile', 'name': '" name "', 'shape': " shape ", 'dtype': '" dt "', 'buffer': 'psum'},"

/* Kernels are written with ' for " to keep them readable here. */
static inline char *dq(const char *s)
{
    char *r = strdup(s);
    for (char *p = r; *p; p++)
        if (*p == '\'')
            *p = '"';
    return r;
}

/* common header: a [300,512] f32, tab [1000,64] f32, out [300,512] f32 */
static inline char *kernel(const char *body)
{
    static const char hdr[] =
        "{'inputs': [{'name': 'a', 'shape': [300, 512], 'dtype': 'float32'},"
        "            {'name': 'tab', 'shape': [1000, 64], 'dtype': 'float32'}],"
        " 'outputs': [{'name': 'out', 'shape': [300, 512], 'dtype': 'float32'}],"
        " 'body': [";
    size_t n = strlen(hdr) + strlen(body) + 8;
    char *s = malloc(n);
    snprintf(s, n, "%s%s]}", hdr, body);
    char *r = dq(s);
    free(s);
    return r;
}

static inline int parse_opts(const char *json, const enc_front_opts_t *o, tir_kernel_t *k, tpb_err_t *e)
{
    return enc_parse_kernel_json_opts(json, strlen(json), "k.json", EX, o, k, e);
}

static inline int parse_body(const char *body, tir_kernel_t *k, tpb_err_t *e)
{
    char *j = kernel(body);
    enc_front_opts_t o = {NULL, 0, 0, NULL};
    int rc = parse_opts(j, &o, k, e);
    free(j);
    return rc;
}

/* The body must fail; its error is left in *e. */
static inline void fails(const char *body, tpb_err_t *e)
{
    tir_kernel_t k;
    memset(e, 0, sizeof *e);
    int rc = parse_body(body, &k, e);
    tir_kernel_free(&k);
    if (rc != -1)
        fail_msg("expected a failure for: %s", body);
}

/* The body must fail with a message containing every needle. */
static inline void fails_with(const char *body, const char *n1, const char *n2)
{
    tpb_err_t e;
    fails(body, &e);
    if (!strstr(e.msg, n1) || (n2 && !strstr(e.msg, n2)))
        fail_msg("message '%s' lacks '%s' / '%s'", e.msg, n1, n2 ? n2 : "");
}

/* The n slices at a and b are the same, field by field. */
static inline void assert_same_slices(const enc_slice_t *a, const enc_slice_t *b, int n)
{
    for (int q = 0; q < n; q++) {
        assert_int_equal(a[q].kind, b[q].kind);
        assert_int_equal(a[q].start, b[q].start);
        assert_int_equal(a[q].stop, b[q].stop);
        assert_int_equal(a[q].step, b[q].step);
        assert_int_equal(a[q].has_start, b[q].has_start);
        assert_int_equal(a[q].has_stop, b[q].has_stop);
    }
}

static inline void parses(const char *body, tir_kernel_t *k)
{
    tpb_err_t e;
    if (parse_body(body, k, &e))
        fail_msg("unexpected failure: %s", e.msg);
}

#endif
