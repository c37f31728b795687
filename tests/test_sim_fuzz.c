/* Robustness: random (but decodable) control, sync and DMA programs on two
 * cores must never crash or hang the simulator — every run ends in success
 * or a clean error (run under ASan/UBSan by scripts/test). Deterministic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim_testlib.h"
#include "target.h"
#include "xorshift.h"

static uint64_t rnd(uint64_t *s)
{
    return xorshift64(s);
}

static const isa_op_t fuzz_ops[] = {
    ISA_OP_NOP, ISA_OP_HALT, ISA_OP_CALL, ISA_OP_RETURN, ISA_OP_JUMP, ISA_OP_BRANCH_CMP,
    ISA_OP_REG_SET, ISA_OP_REG_ADD, ISA_OP_CORE_BARRIER, ISA_OP_DMA_TRIGGER,
    ISA_OP_DMA_DIRECT2D, ISA_OP_DMA_INDIRECT2D,
};

/* small values make interesting programs more likely than full-range ones */
static uint32_t field_value(uint64_t *r, const isa_field_t *f)
{
    uint32_t mask = f->width >= 32 ? 0xFFFFFFFFu : (1u << f->width) - 1;
    switch (rnd(r) % 4) {
    case 0: return (uint32_t)rnd(r) & mask;
    case 1: return (uint32_t)(rnd(r) % 4) & mask;
    case 2: return (uint32_t)(rnd(r) % 300) & mask;
    default: return 0;
    }
}

static isa_inst_t random_inst(uint64_t *r)
{
    isa_inst_t in = tb_op(fuzz_ops[rnd(r) % (sizeof fuzz_ops / sizeof *fuzz_ops)]);
    const isa_fmtinfo_t *parts[2] = { &isa_formats[ISA_FMT_HDR], &isa_formats[isa_ops[in.op].format] };
    for (int k = 0; k < 2; k++)
        for (unsigned i = 0; i < parts[k]->nfields; i++)
            isa_field_set(&in, &parts[k]->fields[i], field_value(r, &parts[k]->fields[i]));
    return in;
}

static void test_random_programs(void **state)
{
    (void)state;
    uint64_t r = 0x9E3779B97F4A7C15ull;
    int ok = 0, errors = 0;
    /* trn2 with small memories: the same rules, much less to allocate */
    tpb_target_t small = *tpb_target_get("trn2");
    small.sbuf_partition_bytes = 4096;
    small.psum_partition_bytes = 2048;
    for (int iter = 0; iter < 40; iter++) {
        tb_t b;
        tb_init(&b, 2);
        int64_t sh[1] = { 1024 };
        tb_tensor(&b, "a", "scratch", ISA_DT_FP32, 1, sh);
        for (unsigned c = 0; c < 2; c++)
            for (unsigned e = 0; e < 5; e++) {
                unsigned n = 1 + (unsigned)(rnd(&r) % 8);
                for (unsigned i = 0; i < n; i++) {
                    isa_inst_t in;
                    uint8_t out[2][ISA_BUNDLE_BYTES];
                    unsigned nb;
                    isa_err_t ie;
                    int tries = 0;
                    do
                        in = random_inst(&r);
                    while (isa_encode_with_prefixes(&in, out, &nb, &ie) != ISA_OK && ++tries < 50);
                    if (tries < 50)
                        tb_add(&b, c, e, in);
                }
            }
        sim_options_t o;
        sim_options_default(&o);
        o.target = &small;
        o.max_cycles = 200000;
        o.trace = iter % 2;
        o.check_uninit = iter % 3 == 0;
        sim_t *s = NULL;
        tpb_err_t err;
        tb_write(&b);
        if (sim_load(b.dir, &o, &s, &err) != 0) {
            errors++;
        } else {
            if (sim_run(s, &err) == 0)
                ok++;
            else
                errors++;
            assert_true(strlen(err.msg) < sizeof err.msg);
            if (o.trace) {
                char p[600];
                snprintf(p, sizeof p, "%s/t.json", b.dir);
                assert_int_equal(sim_write_trace(s, p, &err), 0);
            }
            char *st = sim_stats_json(s);
            assert_non_null(st);
            free(st);
            sim_free(s);
        }
        tb_free(&b);
    }
    /* both outcomes occur: the generator is not degenerate */
    assert_true(ok + errors == 40);
    assert_true(errors > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_programs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
