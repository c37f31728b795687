/* Pool ops: Iota, AffineSelect, TensorPartitionReduce, IndirectCopy,
 * PoolGather, TensorTensor's native integer path: semantics, the seed bounds messages, PSUM rejection, costs. */
#include "ops_fixture.h"

#define SB ISA_SPACE_SBUF
#define PS ISA_SPACE_PSUM
#define F32 ISA_DT_FP32
#define I32 ISA_DT_INT32

static void test_iota(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_POOL);
    isa_decoded_t d = mk(ISA_OP_IOTA);
    d.inst.f.IOTA.out = tap2(SB, I32, 0, 32, 2, 3, 1, 2, 3);
    d.inst.f.IOTA.offset = 10;
    d.inst.f.IOTA.cm = 100;
    d.inst.f.IOTA.step0 = 1;
    d.inst.f.IOTA.step1 = 1000;
    assert_int_equal(fx_run(fx, &d), 0);
    /* p is relative to the start partition (32) */
    assert_int_equal(fx_geti(fx, SB, 32, 0, I32, 0), 10);
    assert_int_equal(fx_geti(fx, SB, 33, 0, I32, 5), 10 + 100 + 2 + 1000);
    /* int32 wrap-around, then a float output */
    d.inst.f.IOTA.out = tap1(SB, F32, 64, 0, 1, 2);
    d.inst.f.IOTA.offset = INT32_MAX;
    d.inst.f.IOTA.step0 = 1;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 1), (float)INT32_MIN);
    d.inst.f.IOTA.out.space = PS;
    FX_FAILS(fx, &d, "out", "Pool engine cannot access psum");
    fx_free(fx);
}

static void test_affine_select(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_POOL);
    float v[3] = { 1, 2, 3 };
    for (unsigned p = 0; p < 3; p++)
        fx_put(fx, SB, p, 0, F32, v, 3);
    isa_decoded_t d = mk(ISA_OP_AFFINE_SELECT);
    d.inst.f.AFSEL.in = tap1(SB, F32, 0, 0, 3, 3);
    d.inst.f.AFSEL.out = tap1(SB, ISA_DT_BF16, 64, 0, 3, 3);
    d.inst.f.AFSEL.cm = 1;     /* keep where p - i >= 0 (causal) */
    d.inst.f.AFSEL.step0 = -1;
    d.inst.f.AFSEL.cmp = ISA_CMP_GE;
    d.inst.f.AFSEL.fill = -INFINITY;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, ISA_DT_BF16, 0), 1.0f);
    assert_feq(fx_get(fx, SB, 0, 64, ISA_DT_BF16, 1), -INFINITY);
    assert_feq(fx_get(fx, SB, 2, 64, ISA_DT_BF16, 2), 3.0f);
    assert_feq(fx_get(fx, SB, 1, 64, ISA_DT_BF16, 2), -INFINITY);
    d.inst.f.AFSEL.cmp = ISA_CMP_EQ; /* diagonal only */
    d.inst.f.AFSEL.fill = 0;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 1, 64, ISA_DT_BF16, 1), 2.0f);
    assert_feq(fx_get(fx, SB, 1, 64, ISA_DT_BF16, 0), 0.0f);
    d.inst.f.AFSEL.rev_pred = 1;     /* seed 001 set_reverse_pred: off the diagonal */
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 1, 64, ISA_DT_BF16, 1), 0.0f);
    assert_feq(fx_get(fx, SB, 1, 64, ISA_DT_BF16, 0), 1.0f);
    assert_feq(fx_get(fx, SB, 0, 64, ISA_DT_BF16, 2), 3.0f);
    d.inst.f.AFSEL.rev_pred = 0;
    d.inst.f.AFSEL.cmp = 9;
    FX_FAILS(fx, &d, "cmp");
    fx_free(fx);
}

static void test_partition_reduce(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_POOL);
    const float rows[3][2] = { { 1, -5 }, { 2, 7 }, { 3, 0 } };
    for (unsigned p = 0; p < 3; p++)
        fx_put(fx, SB, 32 + p, 0, F32, rows[p], 2);
    isa_decoded_t d = mk(ISA_OP_TENSOR_PARTITION_REDUCE);
    d.inst.f.PRED.in = tap1(SB, F32, 0, 32, 3, 2);
    d.inst.f.PRED.out = tap1(SB, F32, 64, 96, 1, 2);
    d.inst.f.PRED.op = ISA_ALU_ADD;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 96, 64, F32, 0), 6.0f);
    assert_feq(fx_get(fx, SB, 96, 64, F32, 1), 2.0f);
    d.inst.f.PRED.op = ISA_ALU_MAX;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 96, 64, F32, 1), 7.0f);
    d.inst.f.PRED.out.nparts = 2;
    FX_FAILS(fx, &d, "out", "1 partition");
    fx_free(fx);
}

/* NKI local_gather: per core, indices flattened partition-first; each is an
 * element offset into every partition's own data. */
static void test_indirect_copy(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_POOL);
    /* src[p][f] = 100 * (p - 16) + f for the partitions of core 1 */
    for (unsigned q = 0; q < 16; q++) {
        float v[8];
        for (unsigned f = 0; f < 8; f++)
            v[f] = (float)(100 * q + f);
        fx_put(fx, SB, 16 + q, 0, F32, v, 8);
    }
    /* core 1's indices j = 0, 1, 2 sit in partitions 16, 17, 18 (column 0) */
    int64_t idx[3] = { 4, 0, 6 };
    for (unsigned j = 0; j < 3; j++)
        fx_puti(fx, SB, 16 + j, 40, ISA_DT_UINT16, &idx[j], 1);
    int64_t later = 2; /* index 16 (partition 16, column 1): beyond num_valid */
    fx_puti(fx, SB, 16, 42, ISA_DT_UINT16, &later, 1);
    isa_decoded_t d = mk(ISA_OP_INDIRECT_COPY);
    d.inst.f.ICOPY.src = tap1(SB, F32, 0, 0, 32, 8);
    d.inst.f.ICOPY.idx = tap1(SB, ISA_DT_UINT16, 40, 0, 32, 2);
    d.inst.f.ICOPY.out = tap1(SB, F32, 64, 0, 32, 6);
    d.inst.f.ICOPY.elems_per_idx = 2;
    d.inst.f.ICOPY.num_valid = 3;
    assert_int_equal(fx_run(fx, &d), 0);
    const float want[6] = { 4, 5, 0, 1, 6, 7 };
    for (unsigned q = 0; q < 16; q += 5)
        for (unsigned x = 0; x < 6; x++)
            assert_feq(fx_get(fx, SB, 16 + q, 64, F32, x), (float)(100 * q) + want[x]);
    d.inst.f.ICOPY.out.count[0] = 4;
    FX_FAILS(fx, &d, "out", "need 6");
    d.inst.f.ICOPY.out.count[0] = 6;
    d.inst.f.ICOPY.elems_per_idx = 3;
    FX_FAILS(fx, &d, "num_elem_per_idx must be one of [1, 2, 4, 8, 16, 32]");
    d.inst.f.ICOPY.elems_per_idx = 2;
    d.inst.f.ICOPY.num_valid = 5000;
    FX_FAILS(fx, &d, "number of indices per core must be <= 4096");
    d.inst.f.ICOPY.num_valid = 33;
    FX_FAILS(fx, &d, "num_valid_indices cannot exceed total indices per core");
    d.inst.f.ICOPY.num_valid = 3;
    int64_t oob = 7;
    fx_puti(fx, SB, 18, 40, ISA_DT_UINT16, &oob, 1);
    FX_FAILS(fx, &d, "idx", "partition 18", "offset 7");
    d.inst.f.ICOPY.idx.nparts = 64;
    FX_FAILS(fx, &d, "src_buffer and index must have same partition dimension size");
    d.inst.f.ICOPY.idx = tap1(SB, ISA_DT_UINT16, 40, 0, 8, 1);
    FX_FAILS(fx, &d, "idx", "16-partition");
    fx_free(fx);
}

static void test_pool_gather(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_POOL);
    float data[4] = { 10, 20, 30, 40 };
    int64_t idx[3] = { 3, 0, 3 };
    fx_put(fx, SB, 0, 0, F32, data, 4);
    fx_puti(fx, SB, 0, 16, ISA_DT_UINT32, idx, 3);
    isa_decoded_t d = mk(ISA_OP_POOL_GATHER);
    d.inst.f.PGATH.data = tap1(SB, F32, 0, 0, 1, 4);
    d.inst.f.PGATH.idx = tap1(SB, ISA_DT_UINT32, 16, 0, 1, 3);
    d.inst.f.PGATH.out = tap1(SB, F32, 64, 0, 1, 3);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 0), 40.0f);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 1), 10.0f);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 2), 40.0f);
    int64_t bad = 4;
    fx_puti(fx, SB, 0, 20, ISA_DT_UINT32, &bad, 1);
    FX_FAILS(fx, &d, "idx", "partition 0 element 1", "index 4");
    d.inst.f.PGATH.idx.dtype = I32;
    FX_FAILS(fx, &d, "idx", "uint32");
    fx_free(fx);
}

static void test_pool_costs(void **state)
{
    (void)state;
    isa_decoded_t d = mk(ISA_OP_IOTA);
    d.inst.f.IOTA.out = tap1(SB, I32, 0, 0, 128, 100);
    assert_int_equal(fx_cost("trn2", ISA_ENG_POOL, &d), 150 + 100);
    d = mk(ISA_OP_AFFINE_SELECT);
    d.inst.f.AFSEL.out = tap1(SB, F32, 0, 0, 128, 512);
    assert_int_equal(fx_cost("trn1", ISA_ENG_POOL, &d), 150 + 512);
    d = mk(ISA_OP_INDIRECT_COPY); /* 150 + nidx * nelem (16 partitions / 16 lanes) */
    d.inst.f.ICOPY.num_valid = 100;
    d.inst.f.ICOPY.elems_per_idx = 4;
    assert_int_equal(fx_cost("trn2", ISA_ENG_POOL, &d), 150 + 400);
    d.inst.f.ICOPY.num_valid = 0; /* all of the core's indices: 16 x 3 */
    d.inst.f.ICOPY.idx = tap1(SB, ISA_DT_UINT16, 0, 0, 128, 3);
    assert_int_equal(fx_cost("trn2", ISA_ENG_POOL, &d), 150 + 48 * 4);
    d = mk(ISA_OP_POOL_GATHER);
    d.inst.f.PGATH.idx = tap1(SB, ISA_DT_UINT32, 0, 0, 128, 64);
    assert_int_equal(fx_cost("trn2", ISA_ENG_POOL, &d), 150 + 64);
    d = mk(ISA_OP_TENSOR_PARTITION_REDUCE); /* N x (min(P,16) + ceil(P/16)) */
    d.inst.f.PRED.in = tap1(SB, F32, 0, 0, 128, 10);
    assert_int_equal(fx_cost("trn2", ISA_ENG_POOL, &d), 150 + 10 * (16 + 8));
    d.inst.f.PRED.in.nparts = 4;
    assert_int_equal(fx_cost("trn2", ISA_ENG_POOL, &d), 150 + 10 * (4 + 1));
}

/* a op b on one engine: 4 elements, in0/in1/out at 0/64/128 of partition 0 */
static int64_t tt_run(fx_t *fx, unsigned op, unsigned dta, unsigned dtb, unsigned dto,
                      const int64_t *a, const int64_t *b, unsigned i)
{
    fx_puti(fx, SB, 0, 0, dta, a, 4);
    fx_puti(fx, SB, 0, 64, dtb, b, 4);
    isa_decoded_t d = mk(ISA_OP_TENSOR_TENSOR);
    d.inst.f.TT.in0 = tap1(SB, dta, 0, 0, 1, 4);
    d.inst.f.TT.in1 = tap1(SB, dtb, 64, 0, 1, 4);
    d.inst.f.TT.out = tap1(SB, dto, 128, 0, 1, 4);
    d.inst.f.TT.op = op;
    assert_int_equal(fx_run(fx, &d), 0);
    return fx_geti(fx, SB, 0, 128, dto, i);
}

/* NKI tensor_tensor on GpSimd with int32/uint32 tiles: native integer
 * arithmetic (add/subtract/multiply modulo 2^32, max/min and comparisons
 * exact); DVE and the other ops go through fp32 (docs/semantics.md §3). */
static void test_tt_native_int(void **state)
{
    (void)state;
    const unsigned U32 = ISA_DT_UINT32;
    fx_t *fx = fx_new("trn2", ISA_ENG_POOL);
    fx_t *dv = fx_new("trn2", ISA_ENG_DVE);
    const int64_t a[4] = { 16777217, 1000000001, INT32_MAX, -123456789 };
    const int64_t b[4] = { 0, 2, 1, 7 };
    assert_int_equal(tt_run(fx, ISA_ALU_ADD, I32, I32, I32, a, b, 0), 16777217);
    assert_int_equal(tt_run(fx, ISA_ALU_ADD, I32, I32, I32, a, b, 1), 1000000003);
    assert_int_equal(tt_run(fx, ISA_ALU_ADD, I32, I32, I32, a, b, 2), INT32_MIN); /* wraps */
    assert_int_equal(tt_run(fx, ISA_ALU_SUBTRACT, I32, I32, I32, a, b, 3), -123456796);
    /* 1000000001 * 2 = 2000000002 fits; INT32_MAX * 1 exact */
    assert_int_equal(tt_run(fx, ISA_ALU_MULTIPLY, I32, I32, I32, a, b, 1), 2000000002);
    assert_int_equal(tt_run(fx, ISA_ALU_MULTIPLY, I32, I32, I32, a, b, 2), INT32_MAX);
    assert_int_equal(tt_run(fx, ISA_ALU_MAX, I32, I32, I32, a, b, 0), 16777217);
    assert_int_equal(tt_run(fx, ISA_ALU_MIN, I32, I32, I32, a, b, 3), -123456789);
    /* comparisons of values fp32 cannot tell apart */
    const int64_t c[4] = { 16777217, 16777216, 5, 0 };
    const int64_t e[4] = { 16777216, 16777217, 5, 0 };
    assert_int_equal(tt_run(fx, ISA_ALU_IS_GT, I32, I32, I32, c, e, 0), 1);
    assert_int_equal(tt_run(fx, ISA_ALU_EQUAL, I32, I32, I32, c, e, 1), 0);
    assert_int_equal(tt_run(dv, ISA_ALU_EQUAL, I32, I32, I32, c, e, 1), 1); /* fp32 */
    /* uint32: 3 - 5 wraps to 2^32 - 2 on Pool; DVE's fp32 -2 saturates to 0 */
    const int64_t u[4] = { 3, 4000000000, 0, 0 }, v[4] = { 5, 1, 0, 0 };
    assert_int_equal(tt_run(fx, ISA_ALU_SUBTRACT, U32, U32, U32, u, v, 0), 4294967294);
    assert_int_equal(tt_run(dv, ISA_ALU_SUBTRACT, U32, U32, U32, u, v, 0), 0);
    assert_int_equal(tt_run(fx, ISA_ALU_ADD, U32, U32, U32, u, v, 1), 4000000001);
    /* mixed signedness: the values compare (uint32 4e9 > int32 -1) */
    const int64_t m[4] = { -1, 0, 0, 0 };
    assert_int_equal(tt_run(fx, ISA_ALU_MAX, I32, U32, U32, m, u, 1), 4000000000);
    /* DVE: fp32, 16777217 + 0 = 16777216 */
    assert_int_equal(tt_run(dv, ISA_ALU_ADD, I32, I32, I32, a, b, 0), 16777216);
    /* Pool: divide keeps the fp32 path (16777217 / 1 -> 16777216) */
    const int64_t one[4] = { 1, 1, 1, 1 };
    assert_int_equal(tt_run(fx, ISA_ALU_DIVIDE, I32, I32, I32, a, one, 0), 16777216);
    /* another integer dtype in the mix (int16): fp32 path */
    assert_int_equal(tt_run(fx, ISA_ALU_ADD, I32, ISA_DT_INT16, I32, a, b, 0), 16777216);
    fx_free(dv);
    fx_free(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iota),
        cmocka_unit_test(test_affine_select),
        cmocka_unit_test(test_partition_reduce),
        cmocka_unit_test(test_indirect_copy),
        cmocka_unit_test(test_pool_gather),
        cmocka_unit_test(test_pool_costs),
        cmocka_unit_test(test_tt_native_int),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
