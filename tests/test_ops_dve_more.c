/* DVE ops beyond the elementwise core: reduce, memset, bn_stats/aggr,
 * range_select, select_reduce, the max8 family, transpose32/shuffle,
 * dropout, predicated copy, tensor-load and quantize_mx. */
#include "ops_fixture.h"

#define SB ISA_SPACE_SBUF
#define PS ISA_SPACE_PSUM
#define F32 ISA_DT_FP32

static void test_tensor_reduce(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    /* in: 2 x 3 (dim1 x dim0) per partition: [[1,2,3],[4,5,6]] */
    float v[6] = { 1, 2, 3, 4, 5, 6 };
    fx_put(fx, SB, 0, 0, F32, v, 6);
    isa_decoded_t d = mk(ISA_OP_TENSOR_REDUCE);
    d.inst.f.RED.in = tap2(SB, F32, 0, 0, 1, 3, 1, 2, 3);
    d.inst.f.RED.out = tap1(SB, F32, 64, 0, 1, 2);
    d.inst.f.RED.op = ISA_ALU_ADD;
    d.inst.f.RED.axes = 0x1; /* reduce dim 0: row sums */
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 0), 6.0f);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 1), 15.0f);
    d.inst.f.RED.axes = 0x2; /* reduce dim 1: column max, negated */
    d.inst.f.RED.op = ISA_ALU_MAX;
    d.inst.f.RED.negate = 1;
    d.inst.f.RED.out = tap1(SB, F32, 64, 0, 1, 3);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 0), -4.0f);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 2), -6.0f);
    d.inst.f.RED.axes = 0x3; /* everything: subtract folds left: 1-2-3-4-5-6 */
    d.inst.f.RED.op = ISA_ALU_SUBTRACT;
    d.inst.f.RED.negate = 0;
    d.inst.f.RED.out = tap1(SB, F32, 64, 0, 1, 1);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 0), -19.0f);
    d.inst.f.RED.out = tap1(SB, F32, 64, 0, 1, 2);
    FX_FAILS(fx, &d, "out", "kept dims");
    d.inst.f.RED.axes = 0x4;
    FX_FAILS(fx, &d, "axes");
    d.inst.f.RED.axes = 0x1;
    d.inst.f.RED.op = ISA_ALU_DIVIDE;
    FX_FAILS(fx, &d, "not a reduction op");
    /* bitwise or over uint8 */
    int64_t bits[3] = { 1, 4, 0x10 };
    fx_puti(fx, SB, 0, 128, ISA_DT_UINT8, bits, 3);
    d.inst.f.RED.in = tap1(SB, ISA_DT_UINT8, 128, 0, 1, 3);
    d.inst.f.RED.out = tap1(SB, ISA_DT_UINT8, 140, 0, 1, 1);
    d.inst.f.RED.op = ISA_ALU_BITWISE_OR;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal(fx_geti(fx, SB, 0, 140, ISA_DT_UINT8, 0), 0x15);
    fx_free(fx);
}

static void test_memset(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    isa_decoded_t d = mk(ISA_OP_MEMSET);
    d.inst.f.MEMSET.out = tap1(SB, ISA_DT_BF16, 0, 0, 2, 3);
    d.inst.f.MEMSET.value = 0x3F80;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 1, 0, ISA_DT_BF16, 2), 1.0f);
    d.inst.f.MEMSET.out = tap1(SB, ISA_DT_INT32, 0, 0, 1, 2);
    d.inst.f.MEMSET.value = 0xDEADBEEF;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal((uint32_t)fx_geti(fx, SB, 0, 0, ISA_DT_INT32, 1), 0xDEADBEEFu);
    d.inst.f.MEMSET.out = tap1(SB, ISA_DT_UINT8, 16, 0, 1, 2);
    d.inst.f.MEMSET.value = 0x1234;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal(fx_geti(fx, SB, 0, 16, ISA_DT_UINT8, 1), 0x34);
    /* random: the first XORWOW output of lane 0, slot 0 after seeding with
     * 1 (golden/_xorwow.py: seed_state(1, 0, 0), step) */
    d.inst.f.MEMSET.mode = ISA_MEMSET_RANDOM;
    d.inst.f.MEMSET.out = tap1(SB, ISA_DT_UINT32, 32, 0, 1, 1);
    sim_rng_seed(&fx->rng, 1);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal((uint32_t)fx_geti(fx, SB, 0, 32, ISA_DT_UINT32, 0), 0x1FDC8D72u);
    fx_free(fx);
}

/* BNStats / BNAggr (NKI bn_stats / bn_aggr): in = 1..5 -> even {1,3,5}
 * (n 3, mean 3, M2 8), odd {2,4} (n 2, mean 3, M2 2); aggregated: mean 3,
 * variance (8 + 2) / 5 = 2. */
static void test_bn_stats_aggr(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    const float in[5] = { 1, 2, 3, 4, 5 };
    fx_put(fx, SB, 0, 0, F32, in, 5);
    isa_decoded_t d = mk(ISA_OP_BN_STATS);
    d.inst.f.COPY.in = tap1(SB, F32, 0, 0, 1, 5);
    d.inst.f.COPY.out = tap1(SB, F32, 64, 0, 1, 6);
    assert_int_equal(fx_run(fx, &d), 0);
    const float want[6] = { 3, 3, 8, 2, 3, 2 };
    for (unsigned k = 0; k < 6; k++)
        assert_feq(fx_get(fx, SB, 0, 64, F32, k), want[k]);
    isa_decoded_t a = mk(ISA_OP_BN_AGGR);
    a.inst.f.COPY.in = tap1(SB, F32, 64, 0, 1, 6);
    a.inst.f.COPY.out = tap1(SB, F32, 128, 0, 1, 2);
    assert_int_equal(fx_run(fx, &a), 0);
    assert_feq(fx_get(fx, SB, 0, 128, F32, 0), 3.0f);
    assert_feq(fx_get(fx, SB, 0, 128, F32, 1), 2.0f);
    /* errors */
    d.inst.f.COPY.out.count[0] = 5;
    FX_FAILS(fx, &d, "out", "BNStats writes 6");
    d.inst.f.COPY.out.count[0] = 6;
    d.inst.f.COPY.in.count[0] = 513;
    FX_FAILS(fx, &d, "in", "at most 512");
    a.inst.f.COPY.in.count[0] = 5;
    FX_FAILS(fx, &a, "in", "multiple of 3");
    a.inst.f.COPY.in.count[0] = 6;
    a.inst.f.COPY.out.dtype = ISA_DT_INT32;
    FX_FAILS(fx, &a, "out", "of a float dtype");
    fx_free(fx);
}

/* RangeSelect (NKI range_select), start 1: row 0 keeps index+1 in [3, 6)
 * (positions 2..4), row 1 keeps index+1 >= 8 (position 7); the max reduce
 * folds into the accumulator per red_cmd. */
static void test_range_select(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    const float fill = -3.40282347e+38f;
    float in0[8], in1[8];
    for (unsigned i = 0; i < 8; i++)
        in0[i] = (float)i, in1[i] = 10.0f + (float)i;
    fx_put(fx, SB, 0, 0, F32, in0, 8);
    fx_put(fx, SB, 1, 0, F32, in1, 8);
    const float b0[2] = { 3, 6 }, b1[2] = { 8, 100 };
    fx_put(fx, SB, 0, 128, F32, b0, 2);
    fx_put(fx, SB, 1, 128, F32, b1, 2);
    isa_decoded_t d = mk(ISA_OP_RANGE_SELECT);
    isa_fmt_RSEL_t *f = &d.inst.f.RSEL;
    f->in = tap1(SB, F32, 0, 0, 2, 8);
    f->out = tap1(SB, F32, 64, 0, 2, 8);
    f->bound0 = ptr(SB, F32, 128);
    f->bound1 = ptr(SB, F32, 132);
    f->red_out = ptr(SB, F32, 136);
    f->cmp0 = ISA_CMP_GE, f->cmp1 = ISA_CMP_LT;
    f->red_op = ISA_ALU_MAX, f->red_cmd = ISA_REDCMD_RESET_REDUCE;
    f->start = 1, f->fill = fill;
    assert_int_equal(fx_run(fx, &d), 0);
    for (unsigned i = 0; i < 8; i++) {
        assert_feq(fx_get(fx, SB, 0, 64, F32, i), i >= 2 && i <= 4 ? in0[i] : fill);
        assert_feq(fx_get(fx, SB, 1, 64, F32, i), i == 7 ? in1[i] : fill);
    }
    assert_feq(fx_get(fx, SB, 0, 136, F32, 0), 4.0f);
    assert_feq(fx_get(fx, SB, 1, 136, F32, 0), 17.0f);
    /* reduce: max(accumulator, row max); eq picks one index per row */
    f->cmp0 = ISA_CMP_EQ, f->cmp1 = ISA_CMP_LE, f->red_cmd = ISA_REDCMD_REDUCE;
    assert_int_equal(fx_run(fx, &d), 0);   /* row 0: index 3 (pos 2); row 1: index 8 */
    assert_feq(fx_get(fx, SB, 0, 64, F32, 2), 2.0f);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 3), fill);
    assert_feq(fx_get(fx, SB, 1, 64, F32, 6), fill);
    assert_feq(fx_get(fx, SB, 1, 64, F32, 7), 17.0f);
    assert_feq(fx_get(fx, SB, 0, 136, F32, 0), 4.0f);
    assert_feq(fx_get(fx, SB, 1, 136, F32, 0), 17.0f);
    /* idle: red_out untouched */
    const float sentinel[1] = { 42 };
    fx_put(fx, SB, 0, 136, F32, sentinel, 1);
    f->red_cmd = ISA_REDCMD_IDLE;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 136, F32, 0), 42.0f);
    /* errors */
    f->cmp1 = ISA_CMP_NE;
    FX_FAILS(fx, &d, "cmp1", "not a RangeSelect comparison");
    f->cmp1 = ISA_CMP_LT;
    f->red_op = ISA_ALU_ADD;
    FX_FAILS(fx, &d, "red_op", "max only");
    f->red_op = ISA_ALU_MAX;
    f->red_cmd = ISA_REDCMD_LOAD_REDUCE;
    f->red_out.space = ISA_SPACE_NONE;
    FX_FAILS(fx, &d, "red_out", "absent");
    fx_free(fx);
}

/* SelectReduce (NKI select_reduce): immediate and [P,1] on_false,
 * reverse_pred, and the max reduce chained through the accumulator. */
static void test_select_reduce(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    const float pred[4] = { 1, 0, 2, 0 }, in[4] = { -7, 5, -3, 9 }, c[1] = { -1 };
    fx_put(fx, SB, 0, 0, ISA_DT_UINT8, pred, 4);
    fx_put(fx, SB, 0, 64, F32, in, 4);
    fx_put(fx, SB, 0, 128, F32, c, 1);
    isa_decoded_t d = mk(ISA_OP_SELECT_REDUCE);
    isa_fmt_SELR_t *f = &d.inst.f.SELR;
    f->pred = tap1(SB, ISA_DT_UINT8, 0, 0, 1, 4);
    f->in = tap1(SB, F32, 64, 0, 1, 4);
    f->out = tap1(SB, F32, 256, 0, 1, 4);
    f->red_out = ptr(SB, F32, 192);
    f->red_op = ISA_ALU_MAX, f->red_cmd = ISA_REDCMD_RESET_REDUCE;
    f->on_false = 0xc1200000u;   /* -10.0f */
    assert_int_equal(fx_run(fx, &d), 0);
    const float want[4] = { -7, -10, -3, -10 };
    for (unsigned i = 0; i < 4; i++)
        assert_feq(fx_get(fx, SB, 0, 256, F32, i), want[i]);
    assert_feq(fx_get(fx, SB, 0, 192, F32, 0), -3.0f);
    /* reverse_pred, [P,1] on_false, reduce: max(-3, max(-1, 5, -1, 9)) = 9 */
    f->rev_pred = 1, f->on_false_is_ptr = 1, f->on_false = ptr_bits(SB, F32, 128);
    f->red_cmd = ISA_REDCMD_REDUCE;
    assert_int_equal(fx_run(fx, &d), 0);
    const float want2[4] = { -1, 5, -1, 9 };
    for (unsigned i = 0; i < 4; i++)
        assert_feq(fx_get(fx, SB, 0, 256, F32, i), want2[i]);
    assert_feq(fx_get(fx, SB, 0, 192, F32, 0), 9.0f);
    /* errors */
    f->red_op = ISA_ALU_MIN;
    FX_FAILS(fx, &d, "red_op", "max only");
    f->red_op = ISA_ALU_MAX;
    f->pred.count[0] = 3;
    FX_FAILS(fx, &d, "pred");
    fx_free(fx);
}

static void test_max8_family(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    const float in[10] = { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3 };
    fx_put(fx, SB, 0, 0, F32, in, 10);
    isa_decoded_t d = mk(ISA_OP_MAX8);
    d.inst.f.COPY.in = tap1(SB, F32, 0, 0, 1, 10);
    d.inst.f.COPY.out = tap1(SB, F32, 64, 0, 1, 8);
    assert_int_equal(fx_run(fx, &d), 0);
    const float top[8] = { 9, 6, 5, 5, 4, 3, 3, 2 };
    for (unsigned k = 0; k < 8; k++)
        assert_feq(fx_get(fx, SB, 0, 64, F32, k), top[k]);
    d.inst.f.COPY.in.count[0] = 7;
    FX_FAILS(fx, &d, ">= 8");

    /* MaxIndex8: slots 0..7 in order, each the first occurrence no slot
     * before took (duplicates: successive occurrences); missing -> all ones */
    float vals[8] = { 9, 6, 5, 5, 4, 3, 3, 100 };
    fx_put(fx, SB, 0, 128, F32, vals, 8);
    d = mk(ISA_OP_MAX_INDEX8);
    d.inst.f.FIDX.in = tap1(SB, F32, 0, 0, 1, 10);
    d.inst.f.FIDX.out = tap1(SB, ISA_DT_UINT32, 192, 0, 1, 8);
    d.inst.f.FIDX.vals = ptr(SB, F32, 128);
    assert_int_equal(fx_run(fx, &d), 0);
    const int64_t first[8] = { 5, 7, 4, 8, 2, 0, 9, 0xFFFFFFFFll };
    for (unsigned k = 0; k < 8; k++)
        assert_int_equal(fx_geti(fx, SB, 0, 192, ISA_DT_UINT32, k), first[k]);

    /* MatchReplace8 with the top-8 values: each replaces a distinct element */
    fx_put(fx, SB, 0, 128, F32, top, 8);
    d = mk(ISA_OP_MATCH_REPLACE8);
    d.inst.f.MR.in = tap1(SB, F32, 0, 0, 1, 10);
    d.inst.f.MR.out = tap1(SB, F32, 256, 0, 1, 10);
    d.inst.f.MR.vals = ptr(SB, F32, 128);
    d.inst.f.MR.imm = -1.0f;
    assert_int_equal(fx_run(fx, &d), 0);
    const float rep[10] = { -1, 1, -1, 1, -1, -1, -1, -1, -1, -1 };
    for (unsigned k = 0; k < 10; k++)
        assert_feq(fx_get(fx, SB, 0, 256, F32, k), rep[k]);

    /* fused: also the replaced positions */
    d = mk(ISA_OP_MAX_INDEX_AND_MATCH_REPLACE);
    d.inst.f.MIMR.in = tap1(SB, F32, 0, 0, 1, 10);
    d.inst.f.MIMR.out = tap1(SB, F32, 0, 0, 1, 10); /* in place */
    d.inst.f.MIMR.vals = ptr(SB, F32, 128);
    d.inst.f.MIMR.idx = ptr(SB, ISA_DT_UINT32, 320);
    d.inst.f.MIMR.imm = -1.0f;
    assert_int_equal(fx_run(fx, &d), 0);
    /* slots 7..0 (NKI): among duplicates the first occurrence goes to the
     * highest slot (5 at slots 2, 3; 3 at slots 5, 6) */
    const int64_t pos[8] = { 5, 7, 8, 4, 2, 9, 0, 6 };
    for (unsigned k = 0; k < 8; k++)
        assert_int_equal(fx_geti(fx, SB, 0, 320, ISA_DT_UINT32, k), pos[k]);
    for (unsigned k = 0; k < 10; k++)
        assert_feq(fx_get(fx, SB, 0, 0, F32, k), rep[k]);
    /* NKI's nc_match_replace8 example: data [1, 2, 3, 4, 8 x 7], vals
     * [3, 8 x 7] -> dst_idx [2, 10, 9, 8, 7, 6, 5, 4] */
    const float data[11] = { 1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8 };
    const float v8[8] = { 3, 8, 8, 8, 8, 8, 8, 8 };
    fx_put(fx, SB, 0, 0, F32, data, 11);
    fx_put(fx, SB, 0, 128, F32, v8, 8);
    d.inst.f.MIMR.in = tap1(SB, F32, 0, 0, 1, 11);
    d.inst.f.MIMR.out = tap1(SB, F32, 0, 0, 1, 11);
    assert_int_equal(fx_run(fx, &d), 0);
    const int64_t nki_idx[8] = { 2, 10, 9, 8, 7, 6, 5, 4 };
    for (unsigned k = 0; k < 8; k++)
        assert_int_equal(fx_geti(fx, SB, 0, 320, ISA_DT_UINT32, k), nki_idx[k]);
    d.inst.f.MIMR.idx.dtype = F32;
    FX_FAILS(fx, &d, "idx", "integer");
    fx_free(fx);
}

static void test_transpose32_and_shuffle(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    for (unsigned i = 0; i < 32; i++)
        for (unsigned j = 0; j < 64; j++) {
            float v = (float)(i * 100 + j);
            fx_put(fx, SB, 32 + i, 4 * j, F32, &v, 1);
        }
    isa_decoded_t d = mk(ISA_OP_TRANSPOSE32);
    d.inst.f.COPY.in = tap1(SB, F32, 0, 32, 32, 64);
    d.inst.f.COPY.out = tap1(SB, F32, 512, 64, 32, 64);
    assert_int_equal(fx_run(fx, &d), 0);
    /* block 0: out[j][i] = in[i][j]; block 1: out[j][32+i] = in[i][32+j] */
    assert_feq(fx_get(fx, SB, 64 + 5, 512, F32, 3), 305.0f);
    assert_feq(fx_get(fx, SB, 64 + 1, 512, F32, 32 + 2), 233.0f);
    d.inst.f.COPY.in.count[0] = d.inst.f.COPY.out.count[0] = 48;
    FX_FAILS(fx, &d, "Transpose32", "32k partitions", "in [32, 48]");
    /* one partial block (NKI: the Vector engine transposes up to [32, 32]):
     * in [32, 2] -> out [2, 32], out[j][i] = in[i][j] */
    d.inst.f.COPY.in = tap1(SB, F32, 0, 32, 32, 2);
    d.inst.f.COPY.out = tap1(SB, F32, 1024, 96, 2, 32);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 96 + 1, 1024, F32, 5), 501.0f);
    assert_feq(fx_get(fx, SB, 96 + 0, 1024, F32, 31), 3100.0f);
    d.inst.f.COPY.out = tap1(SB, F32, 1024, 96, 2, 31);
    FX_FAILS(fx, &d, "Transpose32", "out [2, 31]");
    d.inst.f.COPY.out = tap1(SB, F32, 1024, 97, 2, 32);
    FX_FAILS(fx, &d, "start partition 97");

    /* StreamShuffle over 4 partitions: m = {3, keep, 0, 1} */
    for (unsigned p = 0; p < 4; p++) {
        float v = (float)(p + 1), z = -1;
        fx_put(fx, SB, p, 0, F32, &v, 1);
        fx_put(fx, SB, p, 64, F32, &z, 1);
    }
    d = mk(ISA_OP_STREAM_SHUFFLE);
    d.inst.f.SHUF.in = tap1(SB, F32, 0, 0, 4, 1);
    d.inst.f.SHUF.out = tap1(SB, F32, 64, 0, 4, 1);
    d.inst.f.SHUF.m0 = 3;
    d.inst.f.SHUF.m1 = ISA_SHUFFLE_KEEP;
    d.inst.f.SHUF.m2 = 0;
    d.inst.f.SHUF.m3 = 1;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 0), 4.0f);
    assert_feq(fx_get(fx, SB, 1, 64, F32, 0), -1.0f);
    assert_feq(fx_get(fx, SB, 2, 64, F32, 0), 1.0f);
    assert_feq(fx_get(fx, SB, 3, 64, F32, 0), 2.0f);
    d.inst.f.SHUF.m2 = 40;
    FX_FAILS(fx, &d, "m2", "40");
    d.inst.f.SHUF.m2 = 7;
    FX_FAILS(fx, &d, "m2", "outside in's 4 partitions");
    d.inst.f.SHUF.m2 = 0;
    d.inst.f.SHUF.out.dtype = ISA_DT_BF16;
    FX_FAILS(fx, &d, "same dtype");
    /* NKI: in and out may differ in partitions: in [1, 2] broadcast to
     * out [32, 2] with every entry 0 */
    uint32_t *m = &d.inst.f.SHUF.m0;
    for (unsigned i = 0; i < 32; i++)
        m[i] = 0;
    const float row[2] = { 7.0f, -8.0f };
    fx_put(fx, SB, 0, 3000, F32, row, 2);
    d.inst.f.SHUF.in = tap1(SB, F32, 3000, 0, 1, 2);
    d.inst.f.SHUF.out = tap1(SB, F32, 2048, 32, 32, 2);
    assert_int_equal(fx_run(fx, &d), 0);
    for (unsigned p = 32; p < 64; p++) {
        assert_feq(fx_get(fx, SB, p, 2048, F32, 0), 7.0f);
        assert_feq(fx_get(fx, SB, p, 2048, F32, 1), -8.0f);
    }
    /* several quadrants, the same mask in each: out partition 32g+i reads
     * in partition 32g+(i^1) */
    for (unsigned p = 0; p < 128; p++) {
        float v = (float)(1000 + p);
        fx_put(fx, SB, p, 3500, F32, &v, 1);
    }
    for (unsigned i = 0; i < 32; i++)
        m[i] = i ^ 1u;
    d.inst.f.SHUF.in = tap1(SB, F32, 3500, 0, 128, 1);
    d.inst.f.SHUF.out = tap1(SB, F32, 3504, 0, 128, 1);
    assert_int_equal(fx_run(fx, &d), 0);
    for (unsigned p = 0; p < 128; p++)
        assert_feq(fx_get(fx, SB, p, 3504, F32, 0), (float)(1000 + (p ^ 1u)));
    /* free sizes must match; starts follow the rule of the active partitions
     * (in of 32 at 32 with out of 64: 64 active, so 0 or 64) */
    d.inst.f.SHUF.out = tap1(SB, F32, 3504, 0, 128, 2);
    FX_FAILS(fx, &d, "2 elements per partition but in has 1");
    d.inst.f.SHUF.in = tap1(SB, F32, 3500, 32, 32, 1);
    d.inst.f.SHUF.out = tap1(SB, F32, 3504, 0, 64, 1);
    for (unsigned i = 0; i < 32; i++)
        m[i] = ISA_SHUFFLE_KEEP;
    FX_FAILS(fx, &d, "start partitions 32, 0", "64 active");
    fx_free(fx);
}

static void test_dropout_cpred_tload(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    float v[64];
    for (unsigned i = 0; i < 64; i++)
        v[i] = (float)(i + 1);
    fx_put(fx, SB, 0, 0, F32, v, 64);
    isa_decoded_t d = mk(ISA_OP_DROPOUT);
    d.inst.f.DROP.in = tap1(SB, F32, 0, 0, 1, 64);
    d.inst.f.DROP.out = tap1(SB, F32, 512, 0, 1, 64);
    d.inst.f.DROP.prob = 0.0f;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 512, F32, 63), 64.0f);
    d.inst.f.DROP.prob = 1.0f;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 512, F32, 10), 0.0f);
    d.inst.f.DROP.prob = 0.5f;
    assert_int_equal(fx_run(fx, &d), 0);
    unsigned zeros = 0;
    for (unsigned i = 0; i < 64; i++) {
        float x = fx_get(fx, SB, 0, 512, F32, i);
        assert_true(x == 0.0f || x == v[i]); /* kept values are not rescaled */
        zeros += x == 0.0f;
    }
    assert_true(zeros > 8 && zeros < 56);
    d.inst.f.DROP.prob = 1.5f;
    FX_FAILS(fx, &d, "prob");
    /* is_keep_rate (seed 001 set_keep_rate): prob is the keep probability */
    d.inst.f.DROP.is_keep_rate = 1;
    d.inst.f.DROP.prob = 1.0f;
    assert_int_equal(fx_run(fx, &d), 0);
    for (unsigned i = 0; i < 64; i++)
        assert_feq(fx_get(fx, SB, 0, 512, F32, i), v[i]);
    d.inst.f.DROP.prob = 0.0f;
    assert_int_equal(fx_run(fx, &d), 0);
    for (unsigned i = 0; i < 64; i++)
        assert_feq(fx_get(fx, SB, 0, 512, F32, i), 0.0f);
    d.inst.f.DROP.is_keep_rate = 0;

    /* CopyPredicated */
    float pred[4] = { 1, 0, 2, 0 }, in[4] = { 10, 20, 30, 40 }, out[4] = { 0, 0, 0, 0 };
    fx_put(fx, SB, 32, 0, F32, pred, 4);
    fx_put(fx, SB, 32, 64, F32, in, 4);
    fx_put(fx, SB, 32, 128, F32, out, 4);
    d = mk(ISA_OP_COPY_PREDICATED);
    d.inst.f.CPRED.pred = tap1(SB, F32, 0, 32, 1, 4);
    d.inst.f.CPRED.in = tap1(SB, F32, 64, 32, 1, 4);
    d.inst.f.CPRED.out = tap1(SB, F32, 128, 32, 1, 4);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 32, 128, F32, 0), 10.0f);
    assert_feq(fx_get(fx, SB, 32, 128, F32, 1), 0.0f);
    assert_feq(fx_get(fx, SB, 32, 128, F32, 2), 30.0f);

    /* TensorLoad into registers */
    int64_t r[3] = { 7, -1, 65536 };
    fx_puti(fx, SB, 5, 8, ISA_DT_INT32, r, 3);
    d = mk(ISA_OP_TENSOR_LOAD);
    d.inst.f.TLOAD.src = ptr(SB, ISA_DT_INT32, 8);
    d.inst.f.TLOAD.part = 5;
    d.inst.f.TLOAD.reg = 10;
    d.inst.f.TLOAD.count = 3;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal(fx->regs[10], 7);
    assert_int_equal(fx->regs[11], 0xFFFFFFFFu);
    assert_int_equal(fx->regs[12], 65536);
    float fv = 2.5f;
    fx_put(fx, SB, 5, 0, F32, &fv, 1);
    d.inst.f.TLOAD.src = ptr(SB, F32, 0);
    d.inst.f.TLOAD.count = 1;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal(fx->regs[10], 2);
    d.inst.f.TLOAD.reg = 63;
    d.inst.f.TLOAD.count = 2;
    FX_FAILS(fx, &d, "reg", "63..64");
    fx_free(fx);
}

static void test_quantize_mx(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    float x[96] = { 0 };
    x[0] = 3.0f; /* block 0: amax 3 -> floor(log2) = 1 -> scale 1 - 8 + 127 = 120 */
    x[1] = 1.0f;
    x[2] = -0.5f;
    x[64] = 3.9f; /* block 2: scale 120 again; 3.9 * 128 = 499.2 saturates to 448 */
    fx_put(fx, SB, 0, 0, F32, x, 96);
    isa_decoded_t d = mk(ISA_OP_QUANTIZE_MX);
    d.inst.f.QMX.in = tap1(SB, F32, 0, 0, 1, 96);
    d.inst.f.QMX.out = tap1(SB, ISA_DT_FP8E4M3, 512, 0, 1, 96);
    d.inst.f.QMX.scale = tap1(SB, ISA_DT_UINT8, 1024, 0, 1, 3);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal(fx_geti(fx, SB, 0, 1024, ISA_DT_UINT8, 0), 120);
    assert_int_equal(fx_geti(fx, SB, 0, 1024, ISA_DT_UINT8, 1), 0); /* all-zero block */
    assert_int_equal(fx_geti(fx, SB, 0, 1024, ISA_DT_UINT8, 2), 120);
    assert_feq(fx_get(fx, SB, 0, 512, ISA_DT_FP8E4M3, 0), 384.0f);
    assert_feq(fx_get(fx, SB, 0, 512, ISA_DT_FP8E4M3, 1), 128.0f);
    assert_feq(fx_get(fx, SB, 0, 512, ISA_DT_FP8E4M3, 2), -64.0f);
    assert_feq(fx_get(fx, SB, 0, 512, ISA_DT_FP8E4M3, 64), 448.0f);
    d.inst.f.QMX.scale.count[0] = 2;
    FX_FAILS(fx, &d, "scale", "one per 32");
    fx_free(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensor_reduce),
        cmocka_unit_test(test_memset),
        cmocka_unit_test(test_bn_stats_aggr),
        cmocka_unit_test(test_range_select),
        cmocka_unit_test(test_select_reduce),
        cmocka_unit_test(test_max8_family),
        cmocka_unit_test(test_transpose32_and_shuffle),
        cmocka_unit_test(test_dropout_cpred_tload),
        cmocka_unit_test(test_quantize_mx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
