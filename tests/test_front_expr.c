/* encoder/expr.c: integer expressions and slice operands. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "expr.h"

typedef struct {
    enc_env_t env;
} fx_t;

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof *f);
    enc_env_init(&f->env);
    enc_env_push(&f->env, "i", 2, false);
    enc_env_push(&f->env, "pid", 1, true);
    enc_env_push(&f->env, "n", 300, false);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    enc_env_free(&f->env);
    free(f);
    return 0;
}

static int64_t ev(fx_t *f, const char *s)
{
    enc_val_t v;
    char msg[256];
    int rc = enc_expr_eval(s, &f->env, &v, msg, sizeof msg);
    if (rc)
        fail_msg("eval '%s': %s", s, msg);
    return v.v;
}

static void expect_err(fx_t *f, const char *s, const char *needle)
{
    enc_val_t v;
    char msg[256] = "";
    assert_int_equal(enc_expr_eval(s, &f->env, &v, msg, sizeof msg), -1);
    if (!strstr(msg, needle))
        fail_msg("'%s': message '%s' lacks '%s'", s, msg, needle);
}

static void test_arith(void **state)
{
    fx_t *f = *state;
    assert_int_equal(ev(f, "1 + 2 * 3"), 7);
    assert_int_equal(ev(f, "(1 + 2) * 3"), 9);
    assert_int_equal(ev(f, "i*128"), 256);
    assert_int_equal(ev(f, "(i+1)*128"), 384);
    assert_int_equal(ev(f, "-i - -3"), 1);
    /* Python floor semantics */
    assert_int_equal(ev(f, "7 // 2"), 3);
    assert_int_equal(ev(f, "-7 // 2"), -4);
    assert_int_equal(ev(f, "-7 % 2"), 1);
    assert_int_equal(ev(f, "7 % -2"), -1);
    assert_int_equal(ev(f, "min(128, n - i*128)"), 44);
    assert_int_equal(ev(f, "max(1, 5, 3)"), 5);
    assert_int_equal(ev(f, "cdiv(300, 128)"), 3);
    assert_int_equal(ev(f, "cdiv(256, 128)"), 2);
    assert_int_equal(ev(f, "abs(-9)"), 9);
    assert_int_equal(ev(f, "i < 3"), 1);
    assert_int_equal(ev(f, "i >= 3"), 0);
    assert_int_equal(ev(f, "i == 2"), 1);
    assert_int_equal(ev(f, "i != 2"), 0);
    /* one grammar with the number fields: floats inside, an integer out */
    assert_int_equal(ev(f, "floor(n / 128)"), 2);
    assert_int_equal(ev(f, "ceil(n / 128)"), 3);
    assert_int_equal(ev(f, "trunc(-7 / 2)"), -3);
    assert_int_equal(ev(f, "2 ** 10"), 1024);
    assert_int_equal(ev(f, "-2 ** 2"), -4);
    assert_int_equal(ev(f, "sign(-5) * 3"), -3);
    assert_int_equal(ev(f, "0.5 < 1"), 1);
    assert_int_equal(ev(f, "floor(2.5e1)"), 25);
}

static void test_pid_dependence(void **state)
{
    fx_t *f = *state;
    enc_val_t v;
    char msg[128];
    assert_int_equal(enc_expr_eval("i * 4 + 1", &f->env, &v, msg, sizeof msg), 0);
    assert_false(v.pid_dep);
    assert_int_equal(enc_expr_eval("min(4, pid * 2)", &f->env, &v, msg, sizeof msg), 0);
    assert_true(v.pid_dep);
    assert_int_equal(v.v, 2);
}

static void test_errors(void **state)
{
    fx_t *f = *state;
    expect_err(f, "1 // 0", "division by zero");
    expect_err(f, "5 % 0", "division by zero");
    expect_err(f, "cdiv(1, 0)", "division by zero");
    expect_err(f, "9223372036854775807 + 1", "overflow");
    expect_err(f, "99999999999999999999", "too large");
    expect_err(f, "4611686018427387904 * 4", "overflow");
    expect_err(f, "j + 1", "unknown name 'j'");
    expect_err(f, "6 / 2", "use '//'");
    expect_err(f, "1 +", "unexpected end");
    expect_err(f, "1 2", "unexpected '2'");
    expect_err(f, "foo(1)", "unknown function 'foo'");
    expect_err(f, "min(1)", "at least 2");
    expect_err(f, "(1", "expected ')'");
    expect_err(f, "1.5", "only integers");
    expect_err(f, "n / 128", "use '//'");
    expect_err(f, "2 ** -1", "only integers");
    expect_err(f, "2 ** 63", "overflow");
    expect_err(f, "fmod(1, 0)", "division by zero");
    expect_err(f, "", "unexpected end");
    /* deep nesting is an error, not a stack overflow */
    char deep[4096];
    memset(deep, '(', 2000);
    deep[2000] = '1';
    memset(deep + 2001, ')', 2000);
    deep[4001] = 0;
    expect_err(f, deep, "nested too deeply");
    memset(deep, '-', 3000);
    deep[3000] = '1';
    deep[3001] = 0;
    expect_err(f, deep, "nested too deeply");
}

static void test_slices(void **state)
{
    fx_t *f = *state;
    char name[64], msg[256];
    enc_slice_t s[ENC_MAX_SLICES];
    int n;
    bool dep;
    assert_int_equal(enc_parse_slice_operand("a[i*128:(i+1)*128, 0:512:2]", &f->env, name,
                                             sizeof name, s, &n, &dep, msg, sizeof msg), 0);
    assert_string_equal(name, "a");
    assert_int_equal(n, 2);
    assert_int_equal(s[0].kind, ENC_SL_RANGE);
    assert_int_equal(s[0].start, 256);
    assert_int_equal(s[0].stop, 384);
    assert_int_equal(s[0].step, 1);
    assert_int_equal(s[1].step, 2);
    assert_false(dep);

    assert_int_equal(enc_parse_slice_operand("  t  ", &f->env, name, sizeof name, s, &n, &dep,
                                             msg, sizeof msg), 0);
    assert_string_equal(name, "t");
    assert_int_equal(n, 0);

    assert_int_equal(enc_parse_slice_operand("x[3, :, ::4, min(i, 1):]", &f->env, name,
                                             sizeof name, s, &n, &dep, msg, sizeof msg), 0);
    assert_int_equal(n, 4);
    assert_int_equal(s[0].kind, ENC_SL_INDEX);
    assert_int_equal(s[0].start, 3);
    assert_int_equal(s[1].kind, ENC_SL_RANGE);
    assert_false(s[1].has_start);
    assert_false(s[1].has_stop);
    assert_int_equal(s[2].step, 4);
    assert_true(s[3].has_start);
    assert_int_equal(s[3].start, 1);
    assert_false(s[3].has_stop);

    assert_int_equal(enc_parse_slice_operand("y[nl.ds(i*128, 128), ds(min(i, 3), 8)]", &f->env,
                                             name, sizeof name, s, &n, &dep, msg, sizeof msg), 0);
    assert_int_equal(n, 2);
    assert_int_equal(s[0].kind, ENC_SL_RANGE);
    assert_int_equal(s[0].start, 256);
    assert_int_equal(s[0].stop, 384);
    assert_int_equal(s[1].start, 2);
    assert_int_equal(s[1].stop, 10);

    assert_int_equal(enc_parse_slice_operand("y[pid*64:]", &f->env, name, sizeof name, s, &n,
                                             &dep, msg, sizeof msg), 0);
    assert_true(dep);

    static const char *const bad[][2] = {
        {"a[1:2", "missing ']'"}, {"a[1] x", "after ']'"}, {"[1]", "expected a tensor"},
        {"a(1)", "expected '['"}, {"a[1:2:3:4]", "too many ':'"}, {"a[q]", "unknown name 'q'"},
        {"a[]", "empty index"}, {"a[1,,2]", "empty index"}, {"3a", "expected a tensor"},
        {"a[ds(1)]", "ds() takes (start, size)"}, {"a[ds(1, 0)]", "size 0 must be >= 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        msg[0] = 0;
        assert_int_equal(enc_parse_slice_operand(bad[i][0], &f->env, name, sizeof name, s, &n,
                                                 &dep, msg, sizeof msg), -1);
        if (!strstr(msg, bad[i][1]))
            fail_msg("'%s': '%s' lacks '%s'", bad[i][0], msg, bad[i][1]);
    }
}

/* The plain operands a flat body is made of take a shortcut in
 * enc_parse_slice_operand; enc_slice_operand_compile never does: both must
 * read every text alike (result, name, slices, message). */
static void same_as_compiled(fx_t *f, const char *text)
{
    char n1[16], n2[16], m1[256] = "", m2[256] = "";
    enc_slice_t s1[ENC_MAX_SLICES], s2[ENC_MAX_SLICES];
    memset(s1, 0x5a, sizeof s1);
    memset(s2, 0x5a, sizeof s2);
    int k1 = -7, k2 = -7;
    bool d1 = true, d2 = true;
    enc_slice_prog_t *prog = NULL;
    int r1 = enc_parse_slice_operand(text, &f->env, n1, sizeof n1, s1, &k1, &d1, m1, sizeof m1);
    int r2 = enc_slice_operand_compile(text, &f->env, n2, sizeof n2, s2, &k2, &d2, m2, sizeof m2,
                                       &prog);
    enc_slice_prog_free(prog);
    if (r1 != r2 || strcmp(m1, m2))
        fail_msg("'%s': %d '%s' vs %d '%s'", text, r1, m1, r2, m2);
    if (r1)
        return;
    assert_string_equal(n1, n2);
    assert_int_equal(k1, k2);
    assert_int_equal(d1, d2);
    for (int i = 0; i < k1; i++)
        if (memcmp(&s1[i], &s2[i], sizeof s1[i]))
            fail_msg("'%s': slice %d differs", text, i);
}

static void test_plain_operands(void **state)
{
    fx_t *f = *state;
    static const char *const texts[] = {
        "a", "t0", "_x9", "a[5:6, :]", "a[0:1,:]", "out[2999:3000, :]", "a[3]", "a[3, 4]",
        "a[:]", "a[::]", "a[::2]", "a[1::3]", "a[:7]", "a[ 1 : 2 ]", "a[1 :2, 3: 4 , :]",
        "a[007:010]", "a[123456789012345678]", "a[1234567890123456789]",
        "a[9999999999999999999]", "a[99999999999999999999:1]", "a[1,2,3,4,5,6,7,8]",
        "a[1,2,3,4,5,6,7,8,9]", "a[]", "a[1,]", "a[,1]", "a[ ]", "a[1 2]", "a[1:2:3:4]",
        "a[1]]", "a[1] ", "a[1", " a[1]", "a [1]", "a[-1]", "a[1a]", "a[0x10]", "a[i]",
        "a[i:i+1, :]", "a[\t1]", "abcdefghijklmno", "abcdefghijklmnop[1]", "3a", "a.b", "",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        same_as_compiled(f, texts[i]);
    char wide[600] = "a[";   /* an item of 512+ bytes: "too long" either way */
    memset(wide + 2, ' ', 560);
    memcpy(wide + 562, "1]", 3);
    same_as_compiled(f, wide);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_arith, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pid_dependence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plain_operands, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
