/* test_sim_split.c - elementwise instructions split by partitions over the
 * --threads pool (sim/rows.c sim_rows_split; docs/simulator.md "Threads"):
 * every split path (TensorCopy on DVE and Activation, TensorTensor,
 * TensorScalarPtr, ScalarTensorTensor, TensorReduce, Activation with its
 * fused reduce, ActivationAcc, Activate2 with pointer immediates, the
 * Activation element loop) run on 97 partitions, which 2, 3 and 7 threads
 * split unevenly, must leave SBUF, PSUM and the accumulator registers
 * byte-identical to one thread; and sim_rows_parts keeps an instruction
 * whose output overlaps an input with another partition mapping on one
 * thread (hand-made operands: the ISA's start-partition rule keeps the
 * operands of one instruction from doing so). */
#include "ops_fixture.h"
#include "ops.h"

#define SB ISA_SPACE_SBUF
#define PS ISA_SPACE_PSUM
#define F32 ISA_DT_FP32
#define BF16 ISA_DT_BF16
#define NP 97u   /* partitions: not a multiple of 2, 3 or 7 */
#define N 200u   /* elements per partition */

/* Deterministic fp32 contents of every SBUF/PSUM byte, with NaN, inf,
 * signed zeros and denormals mixed in. */
static void fill(fx_t *fx)
{
    static const float special[] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f };
    for (unsigned sp = 0; sp < 2; sp++) {
        uint8_t *m = sp ? fx->ctx.psum : fx->ctx.sbuf;
        size_t n = (size_t)128 * (sp ? FX_PSUM_PB : FX_SBUF_PB) / 4;
        for (size_t i = 0; i < n; i++) {
            uint32_t h = (uint32_t)(i * 2654435761u + sp * 977u);
            float v = h % 41 == 0 ? special[(h >> 8) % 6]
                                  : ((float)(h >> 9) / (float)(1u << 23) - 0.5f) * 6.0f;
            memcpy(m + 4 * i, &v, 4);
        }
    }
    for (unsigned p = 0; p < 128; p++)
        fx->acc[p] = (float)p * 0.25f;
}

/* Run d on engine eng with one thread and with each pool; the memories and
 * accumulators must be the same bytes. */
static void check_same(isa_engine_t eng, const isa_decoded_t *d)
{
    fx_t *ref = fx_new("trn2", eng);
    fill(ref);
    if (fx_run(ref, d) != 0)
        fail_msg("%s", ref->err.msg);
    static const unsigned threads[] = { 2, 3, 7 };
    for (unsigned t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        fx_t *fx = fx_new("trn2", eng);
        fill(fx);
        sim_pool_t *pool = sim_pool_new(threads[t], true);
        assert_non_null(pool);
        fx->ctx.pool = pool;
        assert_int_equal(fx_run(fx, d), 0);
        assert_memory_equal(fx->ctx.sbuf, ref->ctx.sbuf, (size_t)128 * FX_SBUF_PB);
        assert_memory_equal(fx->ctx.psum, ref->ctx.psum, (size_t)128 * FX_PSUM_PB);
        assert_memory_equal(fx->acc, ref->acc, sizeof fx->acc);
        sim_pool_destroy(pool);
        fx_free(fx);
    }
    fx_free(ref);
}

static isa_tap_t rows(unsigned space, unsigned dt, uint32_t addr, unsigned start)
{
    return tap1(space, dt, addr, start, NP, N);
}

static void test_copy(void **state)
{
    (void)state;
    isa_decoded_t d = mk(ISA_OP_TENSOR_COPY);
    d.inst.f.COPY.in = rows(SB, F32, 0, 0);
    d.inst.f.COPY.out = rows(SB, BF16, 1000, 0);
    check_same(ISA_ENG_DVE, &d);
    check_same(ISA_ENG_ACT, &d);
    d.inst.f.COPY.in = tap1(PS, F32, 0, 64, 33, N);   /* PSUM -> SBUF, other partitions */
    d.inst.f.COPY.out = tap1(SB, F32, 1000, 0, 33, N);
    check_same(ISA_ENG_DVE, &d);
}

static void test_tensor_tensor(void **state)
{
    (void)state;
    isa_decoded_t d = mk(ISA_OP_TENSOR_TENSOR);
    d.inst.f.TT.in0 = rows(SB, F32, 0, 0);
    d.inst.f.TT.in1 = rows(SB, BF16, 800, 0);
    d.inst.f.TT.out = rows(SB, F32, 1600, 0);
    d.inst.f.TT.op = ISA_ALU_DIVIDE;
    check_same(ISA_ENG_DVE, &d);
    check_same(ISA_ENG_POOL, &d);
    d.inst.f.TT.out = d.inst.f.TT.in0;   /* in place */
    d.inst.f.TT.op = ISA_ALU_MAX;
    check_same(ISA_ENG_DVE, &d);
    /* three first partitions, the same bytes */
    d.inst.f.TT.in0 = tap1(SB, F32, 0, 96, 31, N);
    d.inst.f.TT.in1 = tap1(SB, F32, 0, 32, 31, N);
    d.inst.f.TT.out = tap1(SB, F32, 0, 0, 31, N);
    check_same(ISA_ENG_DVE, &d);
}

static void test_tensor_scalar(void **state)
{
    (void)state;
    isa_decoded_t d = mk(ISA_OP_TENSOR_SCALAR_PTR);
    d.inst.f.TS.in = rows(SB, F32, 0, 0);
    d.inst.f.TS.out = rows(SB, F32, 1600, 0);
    d.inst.f.TS.op0 = ISA_ALU_SUBTRACT;
    d.inst.f.TS.s0 = ptr_bits(SB, F32, 3000);
    d.inst.f.TS.s0_is_ptr = 1;
    d.inst.f.TS.op1 = ISA_ALU_MULTIPLY;
    d.inst.f.TS.s1 = ptr_bits(SB, BF16, 3004);
    d.inst.f.TS.s1_is_ptr = 1;
    check_same(ISA_ENG_DVE, &d);
    check_same(ISA_ENG_ACT, &d);
    /* in place with the scalar inside the rows it rewrites: read once per
     * partition before that partition's writes */
    d.inst.f.TS.out = d.inst.f.TS.in;
    d.inst.f.TS.s0 = ptr_bits(SB, F32, 40);
    check_same(ISA_ENG_DVE, &d);
    /* the scalar column (read from in's partitions) at out's bytes */
    d.inst.f.TS.in = tap1(SB, F32, 0, 64, 40, N);
    d.inst.f.TS.out = tap1(SB, F32, 1600, 0, 40, N);
    d.inst.f.TS.s0 = ptr_bits(SB, F32, 1600);
    d.inst.f.TS.s1_is_ptr = 0;
    d.inst.f.TS.s1 = f2u(0.5f);
    check_same(ISA_ENG_DVE, &d);
}

static void test_stt(void **state)
{
    (void)state;
    isa_decoded_t d = mk(ISA_OP_SCALAR_TENSOR_TENSOR);
    d.inst.f.STT.in0 = rows(SB, F32, 0, 0);
    d.inst.f.STT.in1 = rows(SB, F32, 800, 0);
    d.inst.f.STT.out = rows(SB, BF16, 1600, 0);
    d.inst.f.STT.op0 = ISA_ALU_MULTIPLY;
    d.inst.f.STT.s0 = ptr_bits(SB, F32, 3000);
    d.inst.f.STT.s0_is_ptr = 1;
    d.inst.f.STT.op1 = ISA_ALU_ADD;
    check_same(ISA_ENG_DVE, &d);
}

static void test_reduce(void **state)
{
    (void)state;
    isa_decoded_t d = mk(ISA_OP_TENSOR_REDUCE);
    d.inst.f.RED.in = rows(SB, F32, 0, 0);
    d.inst.f.RED.out = tap1(SB, F32, 3000, 0, NP, 1);
    d.inst.f.RED.op = ISA_ALU_MAX;
    d.inst.f.RED.axes = 1;
    d.inst.f.RED.negate = 1;
    check_same(ISA_ENG_DVE, &d);
    d.inst.f.RED.op = ISA_ALU_ADD;
    d.inst.f.RED.negate = 0;
    check_same(ISA_ENG_POOL, &d);
    /* [NP, 10 x 20] reduced over the inner 20: 10 outputs per partition */
    d.inst.f.RED.in = tap2(SB, BF16, 0, 0, NP, 20, 1, 10, 20);
    d.inst.f.RED.out = tap1(SB, F32, 3000, 0, NP, 10);
    check_same(ISA_ENG_DVE, &d);
    /* the sums at the input's bytes of other partitions */
    d.inst.f.RED.in = tap2(SB, F32, 0, 64, 50, 20, 1, 10, 20);
    d.inst.f.RED.out = tap1(SB, F32, 0, 0, 50, 10);
    check_same(ISA_ENG_DVE, &d);
}

static void test_activation(void **state)
{
    (void)state;
    isa_decoded_t d = mk(ISA_OP_ACTIVATION);
    d.inst.f.ACT.in = rows(SB, F32, 0, 0);
    d.inst.f.ACT.out = rows(SB, F32, 1600, 0);
    d.inst.f.ACT.func = ISA_ACTFN_EXP;
    d.inst.f.ACT.scale = 0.75f;
    d.inst.f.ACT.bias = ptr(SB, F32, 3000);
    d.inst.f.ACT.red_out = ptr(SB, F32, 3008);
    d.inst.f.ACT.red_op = ISA_ALU_ADD;
    d.inst.f.ACT.red_cmd = ISA_REDCMD_RESET_REDUCE;
    check_same(ISA_ENG_ACT, &d);
    d.inst.f.ACT.red_cmd = ISA_REDCMD_REDUCE;   /* into the accumulators */
    d.inst.f.ACT.func = ISA_ACTFN_SQUARE;
    check_same(ISA_ENG_ACT, &d);
    d.inst.f.ACT.red_cmd = ISA_REDCMD_LOAD_REDUCE;
    d.inst.f.ACT.red_op = ISA_ALU_MAX;
    d.inst.f.ACT.scale_is_ptr = 1;
    d.inst.f.ACT.scale = sim_f32_from_bits(ptr_bits(SB, F32, 3012));
    check_same(ISA_ENG_ACT, &d);
    d.inst.op = ISA_OP_ACTIVATION_ACC;
    check_same(ISA_ENG_ACT, &d);
    /* the element loop: a strided input, tanh in double */
    d = mk(ISA_OP_ACTIVATION);
    d.inst.f.ACT.in = tap1(SB, F32, 0, 0, NP, N);
    d.inst.f.ACT.in.step[0] = 2;
    d.inst.f.ACT.out = rows(SB, BF16, 1600, 0);
    d.inst.f.ACT.func = ISA_ACTFN_GELU_DX;
    d.inst.f.ACT.scale = 1.0f;
    d.inst.f.ACT.red_out = ptr(SB, F32, 3008);
    d.inst.f.ACT.red_op = ISA_ALU_MIN;
    d.inst.f.ACT.red_cmd = ISA_REDCMD_RESET_REDUCE;
    check_same(ISA_ENG_ACT, &d);
    /* in place, bias inside the rows: per partition, read before writes */
    d = mk(ISA_OP_ACTIVATION);
    d.inst.f.ACT.in = d.inst.f.ACT.out = rows(SB, F32, 0, 0);
    d.inst.f.ACT.func = ISA_ACTFN_TANH;
    d.inst.f.ACT.scale = 1.0f;
    d.inst.f.ACT.bias = ptr(SB, F32, 8);
    check_same(ISA_ENG_ACT, &d);
    /* bias (in in's partitions) at out's bytes (in other partitions) */
    d.inst.f.ACT.in = tap1(SB, F32, 0, 64, 50, N);
    d.inst.f.ACT.out = tap1(SB, F32, 1600, 0, 50, N);
    d.inst.f.ACT.bias = ptr(SB, F32, 1600);
    check_same(ISA_ENG_ACT, &d);
}

static void test_activate2(void **state)
{
    (void)state;
    isa_decoded_t d = mk(ISA_OP_ACTIVATE2);
    isa_fmt_ACT2_t *f = &d.inst.f.ACT2;
    f->in = rows(SB, BF16, 0, 0);
    f->out = rows(SB, F32, 1600, 0);
    f->func = ISA_ACTFN_PRELU;
    f->op0 = ISA_ALU_SUBTRACT;
    f->op1 = ISA_ALU_MULTIPLY;
    f->imm0_is_ptr = f->imm1_is_ptr = 1;
    f->imm0 = sim_f32_from_bits(ptr_bits(SB, F32, 3000));
    f->imm1 = sim_f32_from_bits(ptr_bits(SB, F32, 3004));
    f->rev0 = 1;
    f->relu_is_ptr = 1;
    f->relu = 3008 | (F32 << 18) | (SB << 22);
    f->red_out = ptr(SB, F32, 3012);
    f->red_op = ISA_ALU_ADD;
    f->red_cmd = ISA_REDCMD_RESET_REDUCE;
    check_same(ISA_ENG_ACT, &d);
}

/* sim_rows_parts on hand-made operands: the overlap rule and the size
 * threshold. */
static sim_opnd_t opnd(uint8_t *mem, unsigned start, unsigned nparts, int64_t lo, int64_t hi,
                       sim_access_t acc)
{
    sim_opnd_t o;
    memset(&o, 0, sizeof o);
    o.mem = mem;
    o.start = start;
    o.nparts = nparts;
    o.lo = lo;
    o.hi = hi;
    o.acc = acc;
    return o;
}

static void test_parts_rule(void **state)
{
    (void)state;
    uint8_t sbuf[1], psum[1];
    sim_exec_ctx_t ctx;
    memset(&ctx, 0, sizeof ctx);
    const sim_opnd_t *ops[2];
    sim_opnd_t in = opnd(sbuf, 0, 96, 0, 800, SIM_RD), out = opnd(sbuf, 1, 96, 0, 800, SIM_WR);
    ops[0] = &in;
    ops[1] = &out;
    assert_int_equal(sim_rows_parts(&ctx, ops, 2, 96, 1u << 30), 1); /* no pool */
    ctx.pool = sim_pool_new(3, true);
    assert_non_null(ctx.pool);
    assert_int_equal(sim_rows_parts(&ctx, ops, 2, 96, 1), 1);     /* shifted overlap */
    out.lo = 800, out.hi = 1600;                                    /* other bytes */
    assert_int_equal(sim_rows_parts(&ctx, ops, 2, 96, 1), 3);
    out.lo = 0, out.hi = 800, out.mem = psum;                       /* other memory */
    assert_int_equal(sim_rows_parts(&ctx, ops, 2, 96, 1), 3);
    out.mem = sbuf, out.start = 96, out.nparts = 32;                /* other partitions */
    assert_int_equal(sim_rows_parts(&ctx, ops, 2, 96, 1), 3);
    out.start = 0;                                                  /* in place */
    assert_int_equal(sim_rows_parts(&ctx, ops, 2, 96, 1), 3);
    out.start = 1, in.acc = SIM_WR, out.acc = SIM_RD;               /* either one written */
    assert_int_equal(sim_rows_parts(&ctx, ops, 2, 96, 1), 1);
    in.acc = SIM_RD;
    out.mem = NULL;                                                 /* absent operand */
    assert_int_equal(sim_rows_parts(&ctx, ops, 2, 96, 1), 3);
    assert_int_equal(sim_rows_parts(&ctx, ops, 2, 2, 1), 2);        /* at most np */
    sim_pool_destroy(ctx.pool);
    /* without --split-all: one part per SIM_ROWS_SPLIT elements */
    ctx.pool = sim_pool_new(3, false);
    assert_non_null(ctx.pool);
    assert_int_equal(sim_rows_parts(&ctx, ops, 2, 128, 2 * (uint64_t)SIM_ROWS_SPLIT - 1), 1);
    assert_int_equal(sim_rows_parts(&ctx, ops, 2, 128, 2 * (uint64_t)SIM_ROWS_SPLIT), 2);
    assert_int_equal(sim_rows_parts(&ctx, ops, 2, 128, 64 * (uint64_t)SIM_ROWS_SPLIT), 3);
    sim_pool_destroy(ctx.pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_tensor_tensor),
        cmocka_unit_test(test_tensor_scalar),
        cmocka_unit_test(test_stt),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_activation),
        cmocka_unit_test(test_activate2),
        cmocka_unit_test(test_parts_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
