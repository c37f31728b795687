/* test_ops_seq.c - the simulator side of the accumulator and sequence family
 * (sim/dve_tsacc.c, sim/pool_seq.c): the accumulator chaining between
 * instructions, the predicate copies' new modes (sim/dve.c CopyPredicated,
 * PredExt keep) and the errors a hand-made (bad) bundle gets.  The NKI-level
 * behaviour is pinned by the golden cases. */
#include "ops_fixture.h"

#define SB ISA_SPACE_SBUF
#define F32 ISA_DT_FP32
#define I32 ISA_DT_INT32

/* cumulative add over 4 elements, then a Reduce continues from the
 * accumulator; TensorScalarReduce then reads that accumulator too */
static void test_tsacc_chain(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    const float in[4] = { 1, 2, 3, 4 };
    fx_put(fx, SB, 0, 0, F32, in, 4);
    isa_decoded_t d = mk(ISA_OP_TENSOR_SCALAR_CUMULATIVE);
    isa_fmt_TSACC_t *f = &d.inst.f.TSACC;
    f->in = tap1(SB, F32, 0, 0, 1, 4);
    f->out = tap1(SB, F32, 64, 0, 1, 4);
    f->op0 = ISA_ALU_MULTIPLY, f->s0 = f2u(2.0f);
    f->op1 = ISA_ALU_ADD, f->red_cmd = ISA_REDCMD_RESET_REDUCE;
    assert_int_equal(fx_run(fx, &d), 0);
    const float want[4] = { 2, 6, 12, 20 };
    for (unsigned i = 0; i < 4; i++)
        assert_feq(fx_get(fx, SB, 0, 64, F32, i), want[i]);
    f->red_cmd = ISA_REDCMD_REDUCE;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64 + 12, F32, 0), 40.0f);
    /* TensorScalarReduce, reduce: acc (40) + sum(x - 1) = 46, negated out */
    d = mk(ISA_OP_TENSOR_SCALAR_REDUCE);
    f = &d.inst.f.TSACC;
    f->in = tap1(SB, F32, 0, 0, 1, 4);
    f->out = tap1(SB, F32, 64, 0, 1, 4);
    f->op0 = ISA_ALU_SUBTRACT, f->s0 = f2u(1.0f);
    f->op1 = ISA_ALU_ADD, f->red_cmd = ISA_REDCMD_REDUCE, f->negate = 1;
    f->red_out = ptr(SB, F32, 128);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 128, F32, 0), -46.0f);
    assert_feq(fx->acc[0], 46.0f);
    /* bad bundles */
    f->op1 = ISA_ALU_DIVIDE;
    FX_FAILS(fx, &d, "op1");
    f->op1 = ISA_ALU_ADD, f->red_cmd = ISA_REDCMD_IDLE;
    FX_FAILS(fx, &d, "red_cmd");
    f->red_cmd = ISA_REDCMD_RESET_REDUCE, f->op0 = ISA_ALU_BITWISE_AND;
    FX_FAILS(fx, &d, "op0");
    d.inst.op = ISA_OP_TENSOR_SCALAR_CUMULATIVE;
    f->op0 = ISA_ALU_ADD;
    FX_FAILS(fx, &d, "red_out");
    d.inst.op = ISA_OP_EXPONENTIAL;
    FX_FAILS(fx, &d, "op0");
    fx_free(fx);
}

static void test_pool_seq_errors(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_POOL);
    isa_decoded_t d = mk(ISA_OP_GET_SEQUENCE_BOUNDS);
    d.inst.f.COPY.in = tap1(SB, F32, 0, 0, 1, 8);
    d.inst.f.COPY.out = tap1(SB, F32, 64, 0, 1, 15);
    const float ids[8] = { 0 };
    fx_put(fx, SB, 0, 0, F32, ids, 8);
    FX_FAILS(fx, &d, "out", "start and end");
    d = mk(ISA_OP_NONZERO_WITH_COUNT);
    d.inst.f.NZC.in = tap1(SB, F32, 0, 0, 1, 8);
    d.inst.f.NZC.out = tap1(SB, F32, 64, 0, 1, 9);
    FX_FAILS(fx, &d, "out", "int32");
    d.inst.f.NZC.out = tap1(SB, I32, 64, 0, 1, 8);
    FX_FAILS(fx, &d, "out", "one more");
    d = mk(ISA_OP_TOPK);
    isa_fmt_TOPK_t *t = &d.inst.f.TOPK;
    t->in = tap1(SB, ISA_DT_BF16, 0, 0, 24, 2);
    t->out = tap1(SB, ISA_DT_BF16, 64, 0, 24, 4);
    t->idx = tap1(SB, ISA_DT_UINT32, 128, 0, 24, 4);
    t->n = 20;
    for (unsigned p = 0; p < 32; p++)
        fx_put(fx, SB, p, 0, F32, ids, 2);   /* bf16 zeros: initialised bytes */
    FX_FAILS(fx, &d, "in", "16-partition");
    t->in.nparts = t->out.nparts = t->idx.nparts = 16;
    t->n = 40;
    FX_FAILS(fx, &d, "n");
    t->n = 20;
    assert_int_equal(fx_run(fx, &d), 0);
    fx_free(fx);
}

/* CopyPredicated rev_pred + in_is_imm; PredExt keep leaves failing lanes */
static void test_predicate_modes(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    const float pred[4] = { 1, 0, 0, 3 }, out0[4] = { 9, 9, 9, 9 };
    fx_put(fx, SB, 0, 0, F32, pred, 4);
    fx_put(fx, SB, 0, 64, F32, out0, 4);
    isa_decoded_t d = mk(ISA_OP_COPY_PREDICATED);
    isa_fmt_CPRED_t *c = &d.inst.f.CPRED;
    c->pred = tap1(SB, F32, 0, 0, 1, 4);
    c->out = tap1(SB, F32, 64, 0, 1, 4);
    c->rev_pred = 1, c->in_is_imm = 1, c->imm = -2.0f;
    assert_int_equal(fx_run(fx, &d), 0);
    const float want[4] = { 9, -2, -2, 9 };
    for (unsigned i = 0; i < 4; i++)
        assert_feq(fx_get(fx, SB, 0, 64, F32, i), want[i]);
    c->in = tap1(SB, F32, 0, 0, 1, 4);
    FX_FAILS(fx, &d, "in", "in_is_imm");
    /* TensorScalarPtr + PredExt keep: out = x + 1 where i - 2 >= 0 */
    d = mk(ISA_OP_TENSOR_SCALAR_PTR);
    isa_fmt_TS_t *s = &d.inst.f.TS;
    s->in = tap1(SB, F32, 0, 0, 1, 4);
    s->out = tap1(SB, F32, 64, 0, 1, 4);
    s->op0 = ISA_ALU_ADD, s->s0 = f2u(1.0f), s->op1 = ISA_ALU_BYPASS;
    d.has_pred = true;
    d.pred.offset = -2, d.pred.step0 = 1, d.pred.cmp = ISA_CMP_GE, d.pred.keep = 1;
    d.pred.fill = 100.0f;
    assert_int_equal(fx_run(fx, &d), 0);
    const float want2[4] = { 9, -2, 1, 4 };
    for (unsigned i = 0; i < 4; i++)
        assert_feq(fx_get(fx, SB, 0, 64, F32, i), want2[i]);
    fx_free(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tsacc_chain),
        cmocka_unit_test(test_pool_seq_errors),
        cmocka_unit_test(test_predicate_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
