/* A statement's keys found in one pass (sixteenth session, #16): fj.h
 * fj_keys_scan, fj_jfield / fj_kfield and fj_check_fields answering from
 * the table.  The table must give exactly what fj_field gives (the first
 * member of a key, NULL for an absent one), and every object the table
 * lets through unchecked must be one the full check passes: unknown,
 * repeated and renamed keys still reach the full check's messages. */
#include "front_json_util.h"

#include "expr.h"
#include "fj.h"

/* Every name the table knows, in FK_* order. */
static const char *const names[FK_N] = {
    "op", "loc", "comment", "name", "engine", "deps", "schedule", "mask", "dst", "src",
    "shape", "dtype", "buffer", "dge_mode", "oob_mode", "dma_qos", "rmw_op", "other",
    "src_reg", "dst_reg"};

/* fj_jfield and fj_kfield of a scanned object against fj_field, for the
 * table's names and for names outside it (near misses included). */
static void same_as_fj_field(const cJSON *o)
{
    jx_t *j = calloc(1, sizeof *j);
    fj_keys_t ks;
    fj_keys_scan(NULL, o, &ks);
    j->keys = &ks;
    assert_ptr_equal(ks.obj, o);
    for (int k = 0; k < FK_N; k++) {
        assert_ptr_equal(fj_kfield(j, o, k, names[k]), fj_field(o, names[k]));
        assert_ptr_equal(fj_jfield(j, o, names[k]), fj_field(o, names[k]));
    }
    static const char *const others[] = {"", "o", "ops", "d", "ds", "dst_", "src_re", "nam",
                                         "var", "value", "data", "shapes", "x"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        assert_ptr_equal(fj_jfield(j, o, others[i]), fj_field(o, others[i]));
    free(j);
}

static void test_scan_matches_fj_field(void **state)
{
    (void)state;
    /* every table key once, in reverse order: all present, nothing else */
    cJSON *all = cJSON_CreateObject();
    for (int k = FK_N - 1; k >= 0; k--)
        cJSON_AddNumberToObject(all, names[k], k);
    fj_keys_t ks;
    fj_keys_scan(NULL, all, &ks);
    assert_false(ks.other);
    assert_int_equal(ks.present, (1u << FK_N) - 1);
    for (int k = 0; k < FK_N; k++)
        assert_int_equal(ks.it[k]->valueint, k);   /* each name's own index */
    same_as_fj_field(all);
    cJSON_Delete(all);

    const char *texts[] = {
        "{\"op\": \"load\", \"dst\": \"t\", \"src\": \"a[0:1, :]\"}",
        "{\"dst\": 1, \"op\": \"store\", \"dst\": 2, \"src\": 3}",         /* a repeat */
        "{\"op\": \"let\", \"var\": \"i\", \"value\": 3}",                 /* unknown keys */
        "{\"o\": 1, \"ops\": 2, \"dst_\": 3, \"\": 4, \"src_reg\": 5}",    /* near misses */
        "{}"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        cJSON *o = cJSON_Parse(texts[i]);
        assert_non_null(o);
        same_as_fj_field(o);
        fj_keys_scan(NULL, o, &ks);
        assert_int_equal(ks.other, i >= 1 && i <= 3);
        cJSON_Delete(o);
    }
    cJSON *o = cJSON_Parse("{\"dst\": 1, \"op\": 2, \"dst\": 3}");
    fj_keys_scan(NULL, o, &ks);
    assert_int_equal(ks.it[FK_DST]->valueint, 1);   /* the first of a repeated key */
    cJSON_Delete(o);
}

/* The run's cache of key indexes by address answers as the names do,
 * also for one key string met again and for a key the cache holds
 * another string's index in its slot for. */
static void test_key_cache(void **state)
{
    (void)state;
    jx_t *j = calloc(1, sizeof *j);
    cJSON *o = cJSON_Parse("{\"op\": 1, \"var\": 2, \"src\": 3, \"shape\": 4}");
    for (int round = 0; round < 2; round++) {
        fj_keys_t a, b;
        fj_keys_scan(j, o, &a);
        fj_keys_scan(NULL, o, &b);
        assert_int_equal(a.present, b.present);
        assert_int_equal(a.other, b.other);
        assert_ptr_equal(a.it[FK_SRC], b.it[FK_SRC]);
        assert_ptr_equal(a.it[FK_SHAPE], b.it[FK_SHAPE]);
        for (size_t h = 0; h < FJ_KIDX; h++)   /* every slot: another string's answer */
            if (j->kidx[h].k) {
                j->kidx[h].k = "name";
                j->kidx[h].idx = FK_NAME;
            }
    }
    cJSON_Delete(o);
    free(j);
}

/* A member without a key ends fj_field's walk: no table then. */
static void test_keyless_member(void **state)
{
    (void)state;
    cJSON *o = cJSON_Parse("{\"op\": 1, \"dst\": 2}");
    char *key = o->child->string;
    o->child->string = NULL;
    fj_keys_t ks;
    fj_keys_scan(NULL, o, &ks);
    assert_null(ks.obj);
    o->child->string = key;   /* cJSON_Delete frees it */
    cJSON_Delete(o);
}

/* fj_check_fields through the table: a passing object passes, and
 * unknown, repeated or disallowed keys give the full check's messages. */
static void test_check_fields_table(void **state)
{
    (void)state;
    static const char *const allowed[] = {"op", "dst", "src", NULL};
    struct { const char *text; const char *msg; } cases[] = {
        {"{\"op\": 1, \"src\": 2, \"dst\": 3, \"comment\": 4, \"loc\": 5}", NULL},
        {"{\"op\": 1, \"shape\": 2}", "p: field 'shape': unknown field (allowed: op, dst, src)"},
        {"{\"op\": 1, \"var\": 2}", "p: field 'var': unknown field (allowed: op, dst, src)"},
        {"{\"op\": 1, \"dst\": 2, \"dst\": 3}", "p: field 'dst': given twice"},
        {"{\"comment\": 1, \"op\": 1, \"comment\": 3}", "p: field 'comment': given twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tir_kernel_t k;
        tpb_err_t e = {0};
        jx_t *j = calloc(1, sizeof *j);
        enc_builder_init(&j->b, &k, "kernel", NULL, &e);
        cJSON *o = cJSON_Parse(cases[i].text);
        fj_keys_t ks;
        fj_keys_scan(NULL, o, &ks);
        j->keys = &ks;
        int rc = fj_check_fields(j, o, "p", allowed);
        if (!cases[i].msg) {
            assert_int_equal(rc, 0);
        } else {
            assert_int_not_equal(rc, 0);
            assert_non_null(strstr(e.msg, cases[i].msg));
        }
        cJSON_Delete(o);
        free(j->memo);
        enc_builder_free(&j->b);
        tir_kernel_free(&k);
        free(j);
    }
}

/* Whole flat statements: the messages read the same through the table,
 * NKI argument names are renamed (the table is read again after), and a
 * loc replaces the path. */
static void test_flat_statements(void **state)
{
    (void)state;
    fails_with(T("t", "[1, 512]", "float32")
               "{'op': 'load', 'dst': 't', 'src': 'a[0:1, :]', 'shape': [1]}",
               "body[1]: field 'shape': unknown field (allowed: op, name, engine", NULL);
    fails_with(T("t", "[1, 512]", "float32")
               "{'op': 'load', 'dst': 't', 'src': 'a[0:1, :]', 'src': 'a[1:2, :]'}",
               "body[1]: field 'src': given twice", NULL);
    fails_with(T("t", "[1, 512]", "float32") "{'op': 'load', 'src': 'a[0:1, :]'}",
               "body[1]: field 'dst': missing", NULL);
    fails_with(T("t", "[1, 512]", "float32") "{'op': 'load', 'dst': 5, 'src': 'a[0:1, :]'}",
               "body[1]: field 'dst'", NULL);
    fails_with("{'op': 'tile', 'name': 't', 'shape': [1, 512]}",
               "body[0]: field 'dtype': missing", NULL);
    fails_with("{'op': 'tile', 'name': 't', 'shape': [1, 512], 'dtype': 'float32', 'buffer': 'x'}",
               "body[0]: field 'buffer': unknown buffer 'x'", NULL);
    fails_with("{'name': 't'}", "body[0]: field 'op': missing", NULL);
    fails_with("{'op': 7}", "body[0]: field 'op': expected a string, got a number", NULL);
    fails_with(T("t", "[1, 512]", "float32")
               "{'op': 'load', 'dst': 't', 'src': 'a[0:1, :]', 'engine': 'nope'}",
               "field 'engine': unknown engine 'nope'", NULL);
    fails_with(T("t", "[1, 512]", "float32")
               "{'op': 'load', 'dst': 't', 'src': 'zz[0:1, :]', 'loc': 'k.py:12'}",
               "k.py:12: field 'src': unknown tensor or tile 'zz'", NULL);
    fails_with(T("t", "[1, 512]", "float32")
               "{'op': 'load', 'dst': 't', 'src': 'a[0:1, :]', 'rmw_op': 'add'}",
               "field 'rmw_op'", NULL);
    /* NKI names: renamed before the check, so data1/data2 are in0/in1 */
    tir_kernel_t k;
    parses(T("t", "[1, 512]", "float32") T("u", "[1, 512]", "float32")
           "{'op': 'tensor_tensor', 'dst': 't', 'data1': 't', 'data2': 'u', 'operator': 'add'}", &k);
    assert_int_equal(k.ops[k.nops - 1].kind, TIR_TENSOR_TENSOR);
    tir_kernel_free(&k);
    fails_with(T("t", "[1, 512]", "float32")
               "{'op': 'tensor_tensor', 'dst': 't', 'data1': 't', 'in0': 't', 'in1': 't',"
               " 'operator': 'add'}",
               "field 'data1': given twice (also as 'in0')", NULL);
    /* a flat load with dma options, keys in any order */
    parses(T("t", "[1, 512]", "float32")
           "{'src': 'a[3:4, :]', 'dma_qos': 2, 'op': 'load', 'dst': 't', 'oob_mode': 'error'}", &k);
    const tir_op_t *op = &k.ops[k.nops - 1];
    assert_int_equal(op->kind, TIR_LOAD);
    assert_int_equal(op->rare->qos, 2);
    assert_false(op->flags & TIR_F_OOB_SKIP);
    assert_int_equal(op->src[0]->offset, 3 * 512);
    tir_kernel_free(&k);
}

/* The quick operand reader: what enc_parse_slice_operand gives, for the
 * texts it takes; none past max_len (a caller's buffer would cut them). */
static void test_quick_operand(void **state)
{
    (void)state;
    static const char *const quick[] = {"t", "t17", "a[17:18, :]", "a[ 3 : 9 : 2 ,1]", "a[::]",
                                        "a[5]", "a[:7, 2:]", "Az_09[1]", "_Zz9", "q[123456789012345678]",
                                        "gmMN[0009:00010]"};
    for (size_t i = 0; i < sizeof quick / sizeof quick[0]; i++) {
        char n1[64], n2[64], msg[200];
        enc_slice_t s1[ENC_MAX_SLICES], s2[ENC_MAX_SLICES];
        int k1 = -1, k2 = -2;
        bool dep;
        memset(s1, 0, sizeof s1);
        memset(s2, 0, sizeof s2);
        size_t len = strlen(quick[i]);
        assert_true(enc_quick_slice_operand(quick[i], n1, sizeof n1, s1, &k1, len + 1));
        assert_false(enc_quick_slice_operand(quick[i], n1, sizeof n1, s1, &k1, len));
        enc_env_t env;
        enc_env_init(&env);
        assert_int_equal(enc_parse_slice_operand(quick[i], &env, n2, sizeof n2, s2, &k2, &dep, msg,
                                                 sizeof msg), 0);
        enc_env_free(&env);
        assert_string_equal(n1, n2);
        assert_int_equal(k1, k2);
        assert_same_slices(s1, s2, k1);
    }
    static const char *const slow[] = {"a.reshape(3, 4)", "a[i]", "a[-1]", "a[1:2:3:4]", "a[]",
                                       "9a", "a[1] ", "a[1]]", "a[1234567890123456789]",
                                       "a[99999999999999999999999]", "a@b", "`a", "a{1}", "\301a",
                                       "a\xe1[1]", "[1]", "a[1:@]"};
    for (size_t i = 0; i < sizeof slow / sizeof slow[0]; i++) {
        char n[64];
        enc_slice_t sl[ENC_MAX_SLICES];
        int k;
        assert_false(enc_quick_slice_operand(slow[i], n, sizeof n, sl, &k, SIZE_MAX));
    }
}

/* A flat body's paths ("<path>[i]"): written after the path copied once,
 * failing exactly where the joined path would not fit in ENC_PATH_MAX (a
 * no_reorder's loc replaces its path: a 1014-byte loc + ".body" + "[10]"
 * fits, a 1015-byte one fits "[9]" but not "[10]"). */
static void test_long_paths(void **state)
{
    (void)state;
    static const struct { size_t len; int nstmts; bool ok; } cases[] = {
        {1014, 11, true}, {1015, 10, true}, {1015, 11, false}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *body = malloc(cases[c].len + 2048);
        int o = sprintf(body, T("t", "[1, 512]", "float32") "{'op': 'no_reorder', 'loc': '");
        memset(body + o, 'x', cases[c].len);
        o += (int)cases[c].len;
        o += sprintf(body + o, "', 'body': [");
        for (int i = 0; i < cases[c].nstmts; i++)
            o += sprintf(body + o, "%s{'op': 'load', 'dst': 't', 'src': 'a[%d:%d, :]'}", i ? ", " : "",
                         i, i + 1);
        sprintf(body + o, "]}");
        tir_kernel_t k;
        tpb_err_t e;
        if (cases[c].ok) {
            parses(body, &k);
            assert_int_equal(k.nops, cases[c].nstmts);
            tir_kernel_free(&k);
        } else {
            fails(body, &e);
        }
        free(body);
    }
}

/* A loop body's ops take the memo's answers about their own statement
 * through its two slots (fj_stmt_memo_get): each statement's kept fields
 * and constants, asked under two questions (a DMA's options and its
 * operands), every iteration. */
static void test_stmt_memo_slots(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("t", "[1, 512]", "float32") T("u", "[1, 512]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 4], 'body': ["
           " {'op': 'load', 'dst': 't', 'src': 'a[i:i+1, :]', 'dma_qos': 3},"
           " {'op': 'tensor_scalar', 'dst': 'u', 'src': 't', 'op0': 'add', 'operand0': 1.5},"
           " {'op': 'tensor_scalar', 'dst': 't', 'src': 'u', 'op0': 'multiply', 'operand0': 2.5},"
           " {'op': 'store', 'dst': 'out[i:i+1, :]', 'src': 't', 'dma_qos': 5}]}", &k);
    assert_int_equal(k.nops, 16);
    for (int it = 0; it < 4; it++) {
        const tir_op_t *op = &k.ops[4 * it];
        assert_int_equal(op[0].kind, TIR_LOAD);
        assert_int_equal(op[0].rare->qos, 3);
        assert_int_equal(op[0].src[0]->offset, 512 * it);
        assert_int_equal(op[1].kind, TIR_TENSOR_SCALAR);
        assert_int_equal(op[1].op0, ISA_ALU_ADD);
        assert_true(op[1].s0.imm == 1.5);
        assert_int_equal(op[2].op0, ISA_ALU_MULTIPLY);
        assert_true(op[2].s0.imm == 2.5);
        assert_int_equal(op[3].kind, TIR_STORE);
        assert_int_equal(op[3].rare->qos, 5);
        assert_int_equal(op[3].dst->offset, 512 * it);
    }
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_matches_fj_field),
        cmocka_unit_test(test_keyless_member),
        cmocka_unit_test(test_key_cache),
        cmocka_unit_test(test_check_fields_table),
        cmocka_unit_test(test_flat_statements),
        cmocka_unit_test(test_quick_operand),
        cmocka_unit_test(test_long_paths),
        cmocka_unit_test(test_stmt_memo_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
