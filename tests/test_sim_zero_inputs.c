/* sim_bind_zero_inputs (sim/loader.c): every unbound input reads zero,
 * in a functional and a --timing-only load, and an input range never
 * written is left as the zeroed mapping's untouched pages (a fuzzed
 * kernel with a 2.6 GB input took 2.5 GB of memory to zero it:
 * tests/fuzz/regress/kernel_sim/zero-inputs-huge-input.json). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "sim_testlib.h"

/* Resident bytes of this process (/proc/self/statm), 0 when unknown. */
static uint64_t resident(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%llu %llu", &size, &res) != 2)
            res = 0;
        fclose(f);
    }
    return (uint64_t)res * 4096;
}

#define BIG ((int64_t)256 << 20)   /* fp32 elements: a 1 GiB input */

static void check(bool timing_only)
{
    tb_t b;
    tb_init(&b, 1);
    tb_tensor(&b, "a", "input", ISA_DT_FP32, 2, (int64_t[]){ 128, 64 });
    tb_tensor(&b, "big", "input", ISA_DT_FP32, 1, (int64_t[]){ BIG });
    tb_tensor(&b, "out", "output", ISA_DT_FP32, 2, (int64_t[]){ 128, 64 });
    tb_add(&b, 0, TB_SP, tb_op(ISA_OP_NOP));
    tb_write(&b);
    sim_options_t o;
    sim_options_default(&o);
    o.timing_only = timing_only;
    sim_t *s = tb_load(&b, &o);
    uint64_t before = resident();
    sim_bind_zero_inputs(s);
    uint64_t after = resident();
    /* the 1 GiB input is not touched (a few pages of slack) */
    if (before && after)
        assert_true(after < before + ((uint64_t)64 << 20));
    tpb_err_t err;
    assert_int_equal(sim_run(s, &err), 0);
    npy_array_t a;
    assert_int_equal(sim_get_tensor(s, "a", &a, &err), 0);
    const float *v = (const float *)a.data;
    for (int i = 0; i < 128 * 64; i++)
        assert_true(v[i] == 0.0f);
    npy_free(&a);
    sim_free(s);
    tb_free(&b);
}

static void test_functional(void **state)
{
    (void)state;
    check(false);
}

static void test_timing_only(void **state)
{
    (void)state;
    check(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_functional),
        cmocka_unit_test(test_timing_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
