/* The compact sidecar form (common/sidecar_form.h, docs/artifacts.md
 * "Compact sidecars"):
 *  - jw_t in compact mode writes exactly cJSON_PrintUnformatted's bytes;
 *  - tpb_sidecar_expand turns a compact document into the full one (the
 *    reference written out by hand from the documented rules);
 *  - the simulator's reader (scanner and cJSON path) applies the same rules,
 *    also when "debug_form" comes after "debug" (then cJSON decides);
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
#include "sim_int.h"

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

/* pc 0 sync wait; pc 2 an op; pc 3 its second instruction (a continuation:
 * no name); pc 4 halt.  The stream of make_engine (below) has main bundles
 * at pcs 0, 2, 3 and 4 (pc 1 is a prefix). */
#define ENTRIES                                                                            \
    "[{\"name\":\"wait_1\",\"src\":\"body[0]\",\"op\":\"sync\",\"op_index\":1},"               \
    "{\"pc\":2,\"name\":\"copy_2\",\"src\":\"body[1].body[0]\",\"op\":\"tensor_copy\","      \
    "\"op_index\":2,\"buf\":\"t#1/3\"},"                                                      \
    "{\"inst\":\"copy_2.1\"},"                                                                \
    "{\"name\":\"halt\",\"src\":\"\",\"op\":\"sync\"}]"
static const char *compact_text =
    "{\"engine\":\"DVE\",\"debug_form\":\"compact\",\"debug\":" ENTRIES "}";
/* the same with "debug_form" last */
static const char *late_text =
    "{\"engine\":\"DVE\",\"debug\":" ENTRIES ",\"debug_form\":\"compact\"}";

static const char *full_text =
    "{\"engine\":\"DVE\",\"debug\":["
    "{\"pc\":0,\"name\":\"wait_1\",\"inst\":\"wait_1\",\"src\":\"body[0]\",\"op\":\"sync\","
    "\"op_index\":1},"
    "{\"pc\":2,\"name\":\"copy_2\",\"inst\":\"copy_2\",\"src\":\"body[1].body[0]\","
    "\"op\":\"tensor_copy\",\"op_index\":2,\"buf\":\"t#1/3\"},"
    "{\"pc\":3,\"name\":\"copy_2\",\"inst\":\"copy_2.1\",\"src\":\"body[1].body[0]\","
    "\"op\":\"tensor_copy\",\"op_index\":2,\"buf\":\"t#1/3\"},"
    "{\"pc\":4,\"name\":\"halt\",\"inst\":\"halt\",\"src\":\"\",\"op\":\"sync\"}]}";

static void test_expand_gives_the_full_form(void **state)
{
    (void)state;
    cJSON *c = cJSON_Parse(compact_text), *f = cJSON_Parse(full_text);
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

static void make_engine(sim_engine_t *e)
{
    memset(e, 0, sizeof *e);
    uint8_t buf[5][ISA_BUNDLE_BYTES];
    isa_err_t ie;
    isa_inst_t in;
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_NOP;
    assert_int_equal(isa_encode(&in, buf[0], &ie), ISA_OK);
    assert_int_equal(isa_encode(&in, buf[3], &ie), ISA_OK);
    in.op = ISA_OP_HALT;
    assert_int_equal(isa_encode(&in, buf[4], &ie), ISA_OK);
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_TENSOR_COPY;
    isa_tap_t t;
    memset(&t, 0, sizeof t);
    t.dtype = ISA_DT_FP32;
    t.space = ISA_SPACE_SBUF;
    t.nparts = 4;
    t.ndims = 3;
    t.step[0] = 1, t.count[0] = 8;
    t.step[1] = 8, t.count[1] = 2;
    t.step[2] = 16, t.count[2] = 2;
    in.f.COPY.in = t;
    t.addr = 256;
    in.f.COPY.out = t;
    unsigned n = 0;
    uint8_t two[2][ISA_BUNDLE_BYTES];
    assert_int_equal(isa_encode_with_prefixes(&in, two, &n, &ie), ISA_OK);
    assert_int_equal(n, 2);
    memcpy(buf[1], two, sizeof two);
    assert_int_equal(isa_stream_decode(&buf[0][0], sizeof buf, ISA_ENG_UNASSIGNED, &e->stream,
                                       &ie), ISA_OK);
    assert_int_equal(e->stream.count, 4);
}

static void expect(const sim_debug_t *d, const char *name, const char *src, const char *buf)
{
    assert_non_null(d->name);
    assert_string_equal(d->name, name);
    assert_non_null(d->src);
    assert_string_equal(d->src, src);
    if (buf) {
        assert_non_null(d->buf);
        assert_string_equal(d->buf, buf);
    } else {
        assert_null(d->buf);
    }
}

static void parse_and_check(const char *text, bool fast, bool want_scanned)
{
    sim_engine_t e;
    make_engine(&e);
    tpb_err_t err = { { 0 } };
    bool scanned = !want_scanned;
    assert_int_equal(sim_sidecar_parse(&e, "x/DVE.json", (const uint8_t *)text, strlen(text),
                                       fast, &scanned, &err), 0);
    assert_int_equal(scanned, want_scanned);
    assert_non_null(e.debug);
    expect(&e.debug[0], "wait_1", "body[0]", NULL);
    expect(&e.debug[1], "copy_2", "body[1].body[0]", "t#1/3");
    expect(&e.debug[2], "copy_2", "body[1].body[0]", "t#1/3");
    expect(&e.debug[3], "halt", "", NULL);
    sim_debug_free(&e);
    isa_stream_free(&e.stream);
}

static void test_sim_reads_the_compact_form(void **state)
{
    (void)state;
    parse_and_check(compact_text, true, true);
    parse_and_check(compact_text, false, false);
    parse_and_check(full_text, true, true);
    /* "debug_form" after "debug": the scanner hands over to cJSON */
    parse_and_check(late_text, true, false);
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
        cmocka_unit_test(test_sim_reads_the_compact_form),
        cmocka_unit_test(test_threshold_knob),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
