/* common/jsonread: the arena variants (tpb_json_parse_arena,
 * tpb_json_read_file_arena) against the cJSON ones on the same texts --
 * same result, same message, equal trees -- and the simulator's loader,
 * which reads tensor-map.json and def.json through them, giving the
 * messages the cJSON path gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jsonarena_diff.h"
#include "jsonread.h"
#include "sim_int.h"
#include "sim_testlib.h"

typedef struct {
    const char *s;
    size_t n;
} text_t;

#define T(lit) { lit, sizeof lit - 1 }

/* Both parsers on s[0..n): same rc and message; on success equal trees,
 * the arena's nodes in the arena. */
static void check_same(const char *s, size_t n)
{
    cJSON *c = NULL, *a = NULL;
    tpb_err_t ec = { { 0 } }, ea = { { 0 } };
    tpb_arena_t arena = { 0 };
    int rc = tpb_json_parse((const uint8_t *)s, n, "p.json", &c, &ec);
    int ra = tpb_json_parse_arena(&arena, (const uint8_t *)s, n, "p.json", &a, &ea);
    if (rc != ra)
        fail_msg("<%.*s>: cJSON rc %d '%s', arena rc %d '%s'", (int)n, s, rc, ec.msg, ra, ea.msg);
    if (rc) {
        assert_null(a);
        assert_string_equal(ec.msg, ea.msg);
    } else {
        assert_non_null(a);
        assert_non_null(arena.head); /* the nodes came from the arena */
        const char *d = node_diff(c, a);
        if (d)
            fail_msg("<%.*s>: trees differ: %s", (int)n, s, d);
    }
    cJSON_Delete(c);
    tpb_arena_free(&arena);
}

static void test_parse_arena_same_as_cjson(void **state)
{
    (void)state;
    static const text_t texts[] = {
        T("{\"a\": [1, 2.5, -3e2, true, false, null, \"s\\u00e9\\n\"], \"b\": {}}"),
        T("  [ ]  \n"), T("\"x\""), T("0"), T("{\"a\": 1, \"a\": 2}"),
        T("{} trailing"), T("[1] ,"), T("{\"a\": }"), T("{\"a\" 1}"), T("[1, 2"),
        T("\"unterminated"), T(""), T("   "), T("nul"), T("{\"k\": \"\x01\"}"),
        T("[1]\0[2]"), T("{\"a\": 1}\0"), T("[\"a\\q\"]"), T("-"), T("01"),
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        check_same(texts[i].s, texts[i].n);
    /* deeper than cJSON's limit, and just inside it */
    for (int depth = CJSON_NESTING_LIMIT - 1; depth <= CJSON_NESTING_LIMIT + 1; depth++) {
        char *deep = malloc(2 * (size_t)depth + 1);
        assert_non_null(deep);
        memset(deep, '[', (size_t)depth);
        memset(deep + depth, ']', (size_t)depth);
        check_same(deep, 2 * (size_t)depth);
        check_same(deep, 2 * (size_t)depth - 1);
        free(deep);
    }
}

static void test_read_file_arena(void **state)
{
    (void)state;
    char path[] = "/tmp/tpb_jsonread_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fclose(f); /* empty */
    cJSON *c = NULL, *a = NULL;
    tpb_err_t ec = { { 0 } }, ea = { { 0 } };
    tpb_arena_t arena = { 0 };
    assert_int_not_equal(tpb_json_read_file(path, &c, &ec), 0);
    assert_int_not_equal(tpb_json_read_file_arena(&arena, path, &a, &ea), 0);
    assert_string_equal(ec.msg, ea.msg);
    assert_non_null(strstr(ea.msg, "empty file"));
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"x\": [1, \"two\"]}\n", f);
    fclose(f);
    assert_int_equal(tpb_json_read_file(path, &c, &ec), 0);
    assert_int_equal(tpb_json_read_file_arena(&arena, path, &a, &ea), 0);
    assert_null(node_diff(c, a));
    cJSON_Delete(c);
    tpb_arena_free(&arena);
    remove(path);
    assert_int_not_equal(tpb_json_read_file_arena(&arena, path, &a, &ea), 0); /* no file */
    assert_null(a);
    tpb_arena_free(&arena);
}

/* sim_load's message for a file `rel` holding `text` is the cJSON
 * parser's message for that text and path. */
static void check_loader_message(const char *rel, const char *text)
{
    tb_t b;
    tb_init(&b, 1);
    tb_add(&b, 0, TB_SP, tb_op(ISA_OP_NOP));
    tb_write(&b);
    tb_write_file(&b, rel, text);
    char path[600];
    snprintf(path, sizeof path, "%s/%s", b.dir, rel);
    cJSON *c = NULL;
    tpb_err_t want = { { 0 } }, got = { { 0 } };
    assert_int_not_equal(tpb_json_parse((const uint8_t *)text, strlen(text), path, &c, &want), 0);
    sim_t *s = NULL;
    assert_int_not_equal(sim_load(b.dir, NULL, &s, &got), 0);
    assert_string_equal(got.msg, want.msg);
    tb_free(&b);
}

static void test_loader_messages(void **state)
{
    (void)state;
    static const char *const bad[] = { "{\"tensors\": [ {\"name\": \"a\"", "{} x", "[[[[1]]]]]" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        check_loader_message("tensor-map.json", bad[i]);
        check_loader_message("nc0/sg0/def.json", bad[i]);
        check_loader_message("nc0/sg0/SP.json", bad[i]);
    }
    char *deep = malloc(4001);
    assert_non_null(deep);
    memset(deep, '[', 2000);
    memset(deep + 2000, ']', 2000);
    deep[4000] = 0;
    check_loader_message("tensor-map.json", deep);
    check_loader_message("nc0/sg0/def.json", deep);
    free(deep);
}

/* def.json names outlive the arena the tree was read into. */
static void test_loader_def_names(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    tb_add(&b, 0, TB_SP, tb_op(ISA_OP_NOP));
    tb_write(&b);
    tb_write_file(&b, "nc0/sg0/def.json",
                  "{\"semaphores\": [{\"id\": 3, \"name\": \"ready\"}], "
                  "\"queues\": [{\"id\": 1, \"name\": \"q_in\"}]}");
    sim_t *s = NULL;
    tpb_err_t err = { { 0 } };
    if (sim_load(b.dir, NULL, &s, &err) != 0)
        fail_msg("%s", err.msg);
    assert_string_equal(s->cores[0].sem[3].name, "ready");
    assert_string_equal(s->cores[0].queues[1].name, "q_in");
    sim_free(s);
    tb_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_arena_same_as_cjson),
        cmocka_unit_test(test_read_file_arena),
        cmocka_unit_test(test_loader_messages),
        cmocka_unit_test(test_loader_def_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
