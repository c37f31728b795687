/* The compact sidecar form (common/sidecar_form.h, docs/artifacts.md
 * "Compact sidecars"):
 *  - jw_t in compact mode writes exactly cJSON_PrintUnformatted's bytes;
 *  - tpb_sidecar_expand turns a compact document into the full one (the
 *    reference written out by hand from the documented rules);
 *  - (the simulator's reader: test_sim_load.c test_compact_form);
 *  - the threshold knob.
 * The end-to-end round trip through tpb compile / sim / dis is
 * tests/sidecar_compact.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "jsonw.h"
#include "sidecar_form.h"
#include "sidecar_texts.h"

static void test_jw_compact_matches_cjson_unformatted(void **state)
{
    (void)state;
    const char *strs[] = {"", "plain", "q\"uote", "back\\slash", "tab\there", "nl\nx", "\x01"};
    const double nums[] = {0, -1, 0.1, 1e300, -3.25, 123456789.125};
    cJSON *root = cJSON_CreateObject();
    jw_t w;
    jw_init(&w);
    jw_set_compact(&w);
    jw_obj_begin(&w);
    jw_key(&w, "empty_arr"), jw_arr_begin(&w), jw_arr_end(&w);
    cJSON_AddArrayToObject(root, "empty_arr");
    jw_key(&w, "empty_obj"), jw_obj_begin(&w), jw_obj_end(&w);
    cJSON_AddObjectToObject(root, "empty_obj");
    cJSON *a = cJSON_AddArrayToObject(root, "debug");
    jw_key(&w, "debug"), jw_arr_begin(&w);
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, strs[i], strs[i]);
        cJSON_AddNumberToObject(o, "n", nums[i % 6]);
        cJSON_AddItemToObject(o, "x", cJSON_CreateArray());
        cJSON_AddItemToArray(a, o);
        jw_obj_begin(&w);
        jw_key(&w, strs[i]), jw_str(&w, strs[i]);
        jw_key(&w, "n"), jw_num(&w, nums[i % 6]);
        jw_key(&w, "x"), jw_arr_begin(&w), jw_arr_end(&w);
        jw_obj_end(&w);
        jw_int(&w, (long long)i);
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)i));
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    assert_int_equal(jw_finish(&w), 0);
    char *ref = cJSON_PrintUnformatted(root);
    assert_string_equal(w.b.buf, ref);
    free(ref);
    cJSON_Delete(root);
    jw_free(&w);
}

static void test_expand_gives_the_full_form(void **state)
{
    (void)state;
    cJSON *c = cJSON_Parse(SIDECAR_COMPACT_TEXT), *f = cJSON_Parse(SIDECAR_FULL_TEXT);
    assert_non_null(c);
    assert_non_null(f);
    assert_true(tpb_sidecar_is_compact(c));
    assert_false(tpb_sidecar_is_compact(f));
    assert_int_equal(tpb_sidecar_expand(c), 0);
    if (!cJSON_Compare(c, f, true)) {
        char *t = cJSON_PrintUnformatted(c);
        fail_msg("expanded: %s", t);
    }
    /* the full form is left alone */
    cJSON *f2 = cJSON_Duplicate(f, true);
    assert_int_equal(tpb_sidecar_expand(f2), 0);
    assert_true(cJSON_Compare(f, f2, true));
    cJSON_Delete(f2);
    cJSON_Delete(c);
    cJSON_Delete(f);
}

static void test_threshold_knob(void **state)
{
    (void)state;
    unsetenv("TPB_SIDECAR_COMPACT_MIN");
    assert_int_equal(tpb_sidecar_compact_min(), TPB_SIDECAR_COMPACT_MIN);
    setenv("TPB_SIDECAR_COMPACT_MIN", "0", 1);
    assert_int_equal(tpb_sidecar_compact_min(), 0);
    setenv("TPB_SIDECAR_COMPACT_MIN", "12x", 1);
    assert_int_equal(tpb_sidecar_compact_min(), TPB_SIDECAR_COMPACT_MIN);
    setenv("TPB_SIDECAR_COMPACT_MIN", "-5", 1);
    assert_int_equal(tpb_sidecar_compact_min(), TPB_SIDECAR_COMPACT_MIN);
    unsetenv("TPB_SIDECAR_COMPACT_MIN");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jw_compact_matches_cjson_unformatted),
        cmocka_unit_test(test_expand_gives_the_full_form),
        cmocka_unit_test(test_threshold_knob),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
