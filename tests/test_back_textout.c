/* The text builders the compiler's outputs go through must give the bytes
 * of the reference they replaced (split from test_back_compile_speed.c):
 *  - the streaming JSON writer (common/jsonw.c) against cJSON_Print;
 *  - the printf-free name/path builders (encoder/strutil.h) against the
 *    snprintf calls they replace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cJSON.h"
#include "fileio.h"
#include "jsonw.h"
#include "strutil.h"

/* ---------------------------------------------------------------- jsonw */

/* Build the same document with cJSON and with jw; compare the texts. */
static void expect_same(cJSON *root, jw_t *w)
{
    assert_int_equal(jw_finish(w), 0);
    char *ref = cJSON_Print(root);
    assert_non_null(ref);
    if (strcmp(ref, w->b.buf) != 0)
        print_error("cJSON:\n%s\njw:\n%s\n", ref, w->b.buf);
    assert_string_equal(w->b.buf, ref);
    free(ref);
    cJSON_Delete(root);
    jw_free(w);
}

static void test_jsonw_structure_matches_cjson(void **state)
{
    (void)state;
    cJSON *root = cJSON_CreateObject();
    jw_t w;
    jw_init(&w);
    jw_obj_begin(&w);
    cJSON_AddStringToObject(root, "engine", "DVE");
    jw_key(&w, "engine"), jw_str(&w, "DVE");
    cJSON_AddArrayToObject(root, "empty_arr");
    jw_key(&w, "empty_arr"), jw_arr_begin(&w), jw_arr_end(&w);
    cJSON_AddObjectToObject(root, "empty_obj");
    jw_key(&w, "empty_obj"), jw_obj_begin(&w), jw_obj_end(&w);
    cJSON *a = cJSON_AddArrayToObject(root, "mixed");
    jw_key(&w, "mixed"), jw_arr_begin(&w);
    cJSON_AddItemToArray(a, cJSON_CreateNumber(1));
    jw_int(&w, 1);
    cJSON_AddItemToArray(a, cJSON_CreateString("x"));
    jw_str(&w, "x");
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "pc", 7);
    cJSON_AddItemToObject(o, "inner", cJSON_CreateArray());
    cJSON_AddItemToObject(o, "nested", cJSON_CreateObject());
    cJSON_AddItemToArray(a, o);
    jw_obj_begin(&w);
    jw_key(&w, "pc"), jw_int(&w, 7);
    jw_key(&w, "inner"), jw_arr_begin(&w), jw_arr_end(&w);
    jw_key(&w, "nested"), jw_obj_begin(&w), jw_obj_end(&w);
    jw_obj_end(&w);
    cJSON *a2 = cJSON_CreateArray();
    cJSON_AddItemToArray(a2, cJSON_CreateObject());
    cJSON_AddItemToArray(a2, cJSON_CreateObject());
    cJSON_AddItemToArray(a, a2);
    jw_arr_begin(&w), jw_obj_begin(&w), jw_obj_end(&w), jw_obj_begin(&w), jw_obj_end(&w);
    jw_arr_end(&w);
    jw_arr_end(&w);
    jw_obj_end(&w);
    expect_same(root, &w);
}

static void test_jsonw_strings_match_cjson(void **state)
{
    (void)state;
    /* every byte value 1..255, in keys and in values */
    char all[256];
    for (int i = 1; i < 256; i++)
        all[i - 1] = (char)i;
    all[255] = 0;
    const char *samples[] = {"", "plain", "q\"uote", "back\\slash", "tab\there", "nl\nx",
                             "\b\f\r", "\x01\x1f", "caf\xc3\xa9 \xe2\x82\xac", all};
    cJSON *root = cJSON_CreateObject();
    jw_t w;
    jw_init(&w);
    jw_obj_begin(&w);
    cJSON *arr = cJSON_AddArrayToObject(root, "values");
    jw_key(&w, "values"), jw_arr_begin(&w);
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        cJSON_AddItemToArray(arr, cJSON_CreateString(samples[i]));
        jw_str(&w, samples[i]);
    }
    jw_arr_end(&w);
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        cJSON_AddNumberToObject(root, samples[i], (double)i);
        jw_key(&w, samples[i]), jw_int(&w, (long long)i);
    }
    jw_obj_end(&w);
    expect_same(root, &w);
}

static void test_jsonw_numbers_match_cjson(void **state)
{
    (void)state;
    const double d[] = {0.0, -0.0, 1.0, -1.0, 0.1, -3.25, 1.0 / 3.0, 2.0 / 3.0, 1e300, -1e-300,
                        123456789.125, (double)INT_MAX, (double)INT_MIN, (double)INT_MAX + 1.0,
                        (double)INT_MIN - 1.0, 4294967296.0, 1099511627776.0, 1e15, 1e16,
                        9007199254740993.0, NAN, INFINITY, -INFINITY, 5e-324};
    const long long ll[] = {0, 1, -1, INT_MAX, INT_MIN, (long long)INT_MAX + 1,
                            (long long)INT_MIN - 1, 1LL << 40, -(1LL << 50), 123456789012345LL, 999999999999999LL, -999999999999999LL, 1000000000000000LL};
    cJSON *root = cJSON_CreateArray();
    jw_t w;
    jw_init(&w);
    jw_arr_begin(&w);
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        cJSON_AddItemToArray(root, cJSON_CreateNumber(d[i]));
        jw_num(&w, d[i]);
    }
    for (size_t i = 0; i < sizeof ll / sizeof ll[0]; i++) {
        cJSON_AddItemToArray(root, cJSON_CreateNumber((double)ll[i]));
        jw_int(&w, ll[i]);
    }
    jw_arr_end(&w);
    expect_same(root, &w);
}

static void test_jsonw_unbalanced_is_an_error(void **state)
{
    (void)state;
    jw_t w;
    jw_init(&w);
    jw_obj_begin(&w);
    jw_key(&w, "a");
    jw_arr_begin(&w);
    assert_int_not_equal(jw_finish(&w), 0);
    jw_arr_end(&w);
    jw_obj_end(&w);
    assert_int_equal(jw_finish(&w), 0);
    jw_free(&w);
}

/* Streaming to a file gives the same text as the in-memory buffer, across
 * many chunk boundaries; a failing sink is reported. */
static void test_jsonw_sink_matches_buffer(void **state)
{
    (void)state;
    char path[4200];
    snprintf(path, sizeof path, "%s/back_speed_sink_%ld.json", TPB_BINARY_DIR, (long)getpid());
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    jw_t a, b;
    jw_init(&a);
    jw_init_file(&b, f);
    jw_t *ws[] = {&a, &b};
    for (int k = 0; k < 2; k++) {
        jw_t *w = ws[k];
        jw_obj_begin(w);
        jw_key(w, "debug");
        jw_arr_begin(w);
        for (int i = 0; i < 20000; i++) {
            jw_obj_begin(w);
            jw_key(w, "pc"), jw_int(w, i);
            jw_key(w, "name"), jw_str(w, i % 7 ? "tensor_scalar" : "tab\there \"q\"");
            jw_obj_end(w);
        }
        jw_arr_end(w);
        jw_obj_end(w);
        assert_int_equal(jw_finish(w), 0);
    }
    assert_int_equal(fclose(f), 0);
    assert_true(b.b.cap < a.b.len); /* it really streamed */
    uint8_t *buf;
    size_t len;
    tpb_err_t err;
    assert_int_equal(fio_read_all(path, &buf, &len, &err), 0);
    assert_int_equal(len, a.b.len);
    assert_memory_equal(buf, a.b.buf, len);
    free(buf);
    unlink(path);
    jw_free(&a);
    jw_free(&b);
    /* a sink that cannot take the text */
    FILE *full = fopen("/dev/full", "wb");
    if (full) {
        jw_init_file(&b, full);
        jw_arr_begin(&b);
        for (int i = 0; i < 100000; i++)
            jw_str(&b, "some text to fill the chunk");
        jw_arr_end(&b);
        assert_int_not_equal(jw_finish(&b), 0);
        assert_true(b.b.io_error);
        jw_free(&b);
        fclose(full);
    }
}

/* ------------------------------------------------------------- strutil */

/* Every string length 0..40 (the short copies of smallfmt.h: 0-3, 4-7,
 * 8-16 bytes and past them) and a long one, every cap 1..48 and some
 * larger, numbers at every digit count: the same bytes as snprintf, and
 * nothing written past cap. */
static void test_strutil_matches_snprintf(void **state)
{
    (void)state;
    char longs[300];
    memset(longs, 'x', sizeof longs - 1);
    longs[sizeof longs - 1] = 0;
    char pre[41][48];
    const char *strs[43];
    size_t ns = 0;
    for (size_t n = 0; n <= 40; n++) {
        for (size_t i = 0; i < n; i++)
            pre[n][i] = (char)('a' + (int)((i * 7 + n) % 26));
        pre[n][n] = 0;
        strs[ns++] = pre[n];
    }
    strs[ns++] = "body[4].body[0]";
    strs[ns++] = longs;
    const long long vals[] = {0, 7, -3, 9, 10, 99, 100, 1234567, 99999999, 100000000,
                              2147483647, -2147483648LL, LLONG_MAX, LLONG_MIN};
    size_t caps[52], nc = 0;
    for (size_t c = 1; c <= 48; c++)
        caps[nc++] = c;
    caps[nc++] = 64, caps[nc++] = 96, caps[nc++] = 1024;
    for (size_t si = 0; si < ns; si++)
        for (size_t ci = 0; ci < nc; ci++) {
            size_t cap = caps[ci];
            char a[1100], b[1100];
            memset(a, 'Z', sizeof a), memset(b, 'Z', sizeof b);
            int ref = snprintf(a, cap, "%s", strs[si]);
            assert_int_equal(su_copy(b, cap, strs[si]), (size_t)ref);
            assert_memory_equal(a, b, sizeof a);
            for (size_t vi = 0; vi < sizeof vals / sizeof vals[0]; vi++) {
                memset(a, 'Z', sizeof a), memset(b, 'Z', sizeof b);
                ref = snprintf(a, cap, "%.50s.%lld", strs[si], vals[vi]);
                assert_int_equal(su_join_int(b, cap, strs[si], 50, '.', vals[vi], 0), (size_t)ref);
                assert_memory_equal(a, b, sizeof a);
                ref = snprintf(a, cap, "%s[%lld]", strs[si], vals[vi]);
                assert_int_equal(su_join_int(b, cap, strs[si], -1, '[', vals[vi], ']'), (size_t)ref);
                assert_memory_equal(a, b, sizeof a);
            }
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jsonw_structure_matches_cjson),
        cmocka_unit_test(test_jsonw_strings_match_cjson),
        cmocka_unit_test(test_jsonw_numbers_match_cjson),
        cmocka_unit_test(test_jsonw_unbalanced_is_an_error),
        cmocka_unit_test(test_jsonw_sink_matches_buffer),
        cmocka_unit_test(test_strutil_matches_snprintf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
