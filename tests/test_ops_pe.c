/* PE ops: LdWeights/Matmul (accumulate, tiles, K/M checks, transpose), MX
 * and sparse forms, space rules, costs. */
#include "ops_fixture.h"

#define SB ISA_SPACE_SBUF
#define PS ISA_SPACE_PSUM
#define F32 ISA_DT_FP32
#define BF ISA_DT_BF16

static isa_decoded_t ldw(isa_tap_t src, unsigned rp, unsigned cp, unsigned rs, unsigned cs)
{
    isa_decoded_t d = mk(ISA_OP_LDWEIGHTS);
    d.inst.f.LDW.src = src;
    d.inst.f.LDW.row_pos = rp;
    d.inst.f.LDW.col_pos = cp;
    d.inst.f.LDW.row_size = rs;
    d.inst.f.LDW.col_size = cs;
    return d;
}

static isa_decoded_t mm(isa_tap_t mv, isa_tap_t dst, unsigned rp, unsigned cp, unsigned rs,
                        unsigned cs)
{
    isa_decoded_t d = mk(ISA_OP_MATMUL);
    d.inst.f.MM.moving = mv;
    d.inst.f.MM.dst = dst;
    d.inst.f.MM.row_pos = rp;
    d.inst.f.MM.col_pos = cp;
    d.inst.f.MM.row_size = rs;
    d.inst.f.MM.col_size = cs;
    return d;
}

/* w = [[1,2,3],[4,5,6]] (K=2 x M=3), x = [[1,2],[3,4]] (K=2 x N=2):
 * dst[m][n] = sum_k w[k][m] x[k][n] = [[13,18],[17,24],[21,30]]. */
static void test_matmul(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_PE);
    float w0[3] = { 1, 2, 3 }, w1[3] = { 4, 5, 6 }, x0[2] = { 1, 2 }, x1[2] = { 3, 4 };
    fx_put(fx, SB, 0, 0, BF, w0, 3);
    fx_put(fx, SB, 1, 0, BF, w1, 3);
    fx_put(fx, SB, 0, 64, BF, x0, 2);
    fx_put(fx, SB, 1, 64, BF, x1, 2);
    isa_decoded_t l = ldw(tap1(SB, BF, 0, 0, 2, 3), 0, 0, 128, 128);
    assert_int_equal(fx_run(fx, &l), 0);
    isa_decoded_t d = mm(tap1(SB, BF, 64, 0, 2, 2), tap1(PS, F32, 0, 0, 3, 2), 0, 0, 128, 128);
    assert_int_equal(fx_run(fx, &d), 0);
    const float want[3][2] = { { 13, 18 }, { 17, 24 }, { 21, 30 } };
    for (unsigned m = 0; m < 3; m++)
        for (unsigned n = 0; n < 2; n++)
            assert_feq(fx_get(fx, PS, m, 0, F32, n), want[m][n]);
    d.inst.f.MM.accumulate = 1;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, PS, 2, 0, F32, 1), 60.0f);
    /* bf16 dst rounds the sum */
    d.inst.f.MM.accumulate = 0;
    d.inst.f.MM.dst.dtype = BF;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, PS, 0, 0, BF, 0), 13.0f);
    d.inst.f.MM.dst.dtype = ISA_DT_INT32;
    FX_FAILS(fx, &d, "dst", "fp32, bf16 or fp16");
    d.inst.f.MM.dst.dtype = F32;
    /* num_active_partitions (seed 001 setnum_active_channels): 0 or K */
    d.inst.f.MM.num_active_partitions = 2;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, PS, 2, 0, F32, 1), 30.0f);
    d.inst.f.MM.num_active_partitions = 1;
    FX_FAILS(fx, &d, "num_active_partitions", "1 but moving drives 2 partitions");
    d.inst.f.MM.num_active_partitions = 0;
    /* K mismatch: one moving partition, two loaded rows */
    d.inst.f.MM.moving.nparts = 1;
    FX_FAILS(fx, &d, "moving", "more rows");
    d.inst.f.MM.moving.nparts = 2;
    d.inst.f.MM.dst.nparts = 2;
    FX_FAILS(fx, &d, "dst", "more columns");
    d.inst.f.MM.dst.nparts = 4;
    FX_FAILS(fx, &d, "weights", "row 0 col 3", "not loaded");
    d.inst.f.MM.dst.nparts = 3;
    d.inst.f.MM.dst.count[0] = 3;
    FX_FAILS(fx, &d, "dst", "N=2");
    d.inst.f.MM.dst.count[0] = 2;
    /* the output must stay inside one 2 KiB PSUM bank */
    d.inst.f.MM.dst.addr = 2048 - 4;
    FX_FAILS(fx, &d, "dst", "[0x7fc, 0x804)", "bank boundary");
    d.inst.f.MM.dst.addr = 0;
    /* PE writes PSUM only, reads SBUF only */
    d.inst.f.MM.dst.space = SB;
    FX_FAILS(fx, &d, "dst", "PE writes psum only");
    d.inst.f.MM.dst.space = PS;
    d.inst.f.MM.moving.space = PS;
    FX_FAILS(fx, &d, "moving", "PE reads sbuf only");
    fx_free(fx);
}

static void test_tiles(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn1", ISA_ENG_PE);
    float one = 1, two = 2;
    fx_put(fx, SB, 0, 0, BF, &one, 1);
    fx_put(fx, SB, 0, 64, BF, &two, 1);
    isa_decoded_t l = ldw(tap1(SB, BF, 0, 0, 1, 1), 0, 32, 32, 32);
    FX_FAILS(fx, &l, "multiples of 64", "trn1");
    l = ldw(tap1(SB, BF, 0, 0, 1, 1), 64, 64, 64, 64);
    assert_int_equal(fx_run(fx, &l), 0);
    isa_decoded_t d = mm(tap1(SB, BF, 64, 0, 1, 1), tap1(PS, F32, 0, 0, 1, 1), 64, 64, 64, 64);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, PS, 0, 0, F32, 0), 2.0f);
    d.inst.f.MM.col_pos = 0; /* a tile that was never loaded */
    FX_FAILS(fx, &d, "weights", "not loaded");
    d.inst.f.MM.col_pos = 64;
    d.inst.f.MM.row_size = 128; /* extends past the array */
    FX_FAILS(fx, &d, "128x128");
    d.inst.f.MM.row_size = 64;
    d.inst.f.MM.perf = ISA_PERF_DOUBLE_ROW;
    FX_FAILS(fx, &d, "perf", "not available on trn1");
    fx_free(fx);
    fx = fx_new("trn2", ISA_ENG_PE);
    fx_put(fx, SB, 0, 0, BF, &one, 1);
    l = ldw(tap1(SB, BF, 0, 0, 1, 1), 96, 32, 32, 32);
    assert_int_equal(fx_run(fx, &l), 0); /* 32x32 tiles exist on trn2 */
    l.inst.f.LDW.src = tap1(SB, BF, 0, 0, 1, 33);
    FX_FAILS(fx, &l, "src", "33 columns");
    l.inst.f.LDW.perf = ISA_PERF_DOUBLE_ROW;
    FX_FAILS(fx, &l, "perf", "whole 128x128 array");
    fx_free(fx);
}

/* Transpose mode (NKI is_transpose): the data are the stationary weights,
 * the moving tile is an identity, dst = data.T bit-exactly. */
static void test_transpose(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_PE);
    float r0[3] = { 1, 2, 3 }, r1[3] = { 4, 5, NAN }, i0[2] = { 1, 0 }, i1[2] = { 0, 1 };
    fx_put(fx, SB, 0, 0, BF, r0, 3);
    fx_put(fx, SB, 1, 0, BF, r1, 3);
    fx_put(fx, SB, 0, 64, BF, i0, 2);
    fx_put(fx, SB, 1, 64, BF, i1, 2);
    isa_decoded_t d = mm(tap1(SB, BF, 64, 0, 2, 2), tap1(PS, BF, 0, 0, 3, 2), 0, 0, 128, 128);
    d.inst.f.MM.transpose = 1;
    FX_FAILS(fx, &d, "weights", "plain LdWeights");
    isa_decoded_t l = ldw(tap1(SB, BF, 0, 0, 2, 3), 0, 0, 128, 128);
    assert_int_equal(fx_run(fx, &l), 0);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, PS, 0, 0, BF, 1), 4.0f);
    assert_feq(fx_get(fx, PS, 1, 0, BF, 0), 2.0f);
    assert_int_equal(memcmp(fx_at(fx, PS, 2, 2), fx_at(fx, SB, 1, 4), 2), 0); /* NaN bits */
    /* a permutation streams rows in its order: dst[m][n] = w[k_n][m] */
    fx_put(fx, SB, 0, 64, BF, i1, 2);
    fx_put(fx, SB, 1, 64, BF, i0, 2);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, PS, 0, 0, BF, 0), 4.0f);
    assert_feq(fx_get(fx, PS, 0, 0, BF, 1), 1.0f);
    float two[2] = { 2, 0 };
    fx_put(fx, SB, 0, 64, BF, two, 2);
    FX_FAILS(fx, &d, "moving", "identity", "column 0");
    fx_put(fx, SB, 0, 64, BF, i0, 2);
    d.inst.f.MM.dst.dtype = F32;
    FX_FAILS(fx, &d, "dst", "bit-exactly", "bf16");
    d.inst.f.MM.dst.dtype = BF;
    d.inst.f.MM.accumulate = 1;
    FX_FAILS(fx, &d, "accumulate");
    fx_free(fx);
}

/* The MX fixture both MX tests share: 32 x 1 ones as weights (sbuf 0) and
 * moving data (sbuf 16) with E8M0 scales s_w (sbuf 32) and s_x (sbuf 48);
 * the weights are loaded and *d is the MatmulMX of them into psum 0. */
static fx_t *mx_setup(int64_t s_w, int64_t s_x, isa_decoded_t *d)
{
    fx_t *fx = fx_new("trn2", ISA_ENG_PE);
    float one = 1.0f;
    for (unsigned p = 0; p < 32; p++) {
        fx_put(fx, SB, p, 0, ISA_DT_FP8E4M3, &one, 1);
        fx_put(fx, SB, p, 16, ISA_DT_FP8E4M3, &one, 1);
    }
    fx_puti(fx, SB, 0, 32, ISA_DT_UINT8, &s_w, 1);
    fx_puti(fx, SB, 0, 48, ISA_DT_UINT8, &s_x, 1);
    isa_decoded_t l = mk(ISA_OP_LDWEIGHTS_MX);
    l.inst.f.LDWMX.src = tap1(SB, ISA_DT_FP8E4M3, 0, 0, 32, 1);
    l.inst.f.LDWMX.scale = tap1(SB, ISA_DT_UINT8, 32, 0, 1, 1);
    l.inst.f.LDWMX.row_size = l.inst.f.LDWMX.col_size = 128;
    assert_int_equal(fx_run(fx, &l), 0);
    *d = mk(ISA_OP_MATMUL_MX);
    d->inst.f.MMMX.moving = tap1(SB, ISA_DT_FP8E4M3, 16, 0, 32, 1);
    d->inst.f.MMMX.scale = tap1(SB, ISA_DT_UINT8, 48, 0, 1, 1);
    d->inst.f.MMMX.dst = tap1(PS, F32, 0, 0, 1, 1);
    d->inst.f.MMMX.row_size = d->inst.f.MMMX.col_size = 128;
    return fx;
}

static void test_mx(void **state)
{
    (void)state;
    isa_decoded_t d;
    fx_t *fx = mx_setup(128, 126, &d); /* 2^1 and 2^-1 */
    assert_feq(fx->pe.w[31][0], 2.0f);
    assert_int_equal(fx->pe.mx_scale[0][0], 1);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, PS, 0, 0, F32, 0), 32.0f); /* 32 x (1*2) x (1*0.5) */
    d.inst.f.MMMX.moving.dtype = BF;
    FX_FAILS(fx, &d, "moving", "fp8");
    d.inst.f.MMMX.moving.dtype = ISA_DT_FP8E4M3;
    d.inst.f.MMMX.scale.nparts = 2;
    FX_FAILS(fx, &d, "scale", "one per 32 rows");
    fx_free(fx);
}

/* MatmulMX output scale (seed 001 MX scale / scale_ptr): the fp32 sum times
 * an immediate factor, or one per dst partition read through a pointer */
static void test_mx_out_scale(void **state)
{
    (void)state;
    isa_decoded_t d;
    fx_t *fx = mx_setup(127, 127, &d); /* 2^0 */
    float three = 3.0f;
    fx_put(fx, SB, 0, 64, F32, &three, 1);
    d.inst.f.MMMX.out_scale = 0x3e800000u; /* 0.25, not enabled */
    FX_FAILS(fx, &d, "out_scale");
    d.inst.f.MMMX.out_scale_en = 1;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, PS, 0, 0, F32, 0), 8.0f); /* 32 x 0.25 */
    /* pointer: fp32 3.0 at sbuf partition 0, offset 64 (addr | dtype << 24 | space << 28) */
    d.inst.f.MMMX.out_scale_is_ptr = 1;
    d.inst.f.MMMX.out_scale = 64u | (uint32_t)F32 << 24 | (uint32_t)SB << 28;
    d.inst.f.MMMX.accumulate = 1;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, PS, 0, 0, F32, 0), 8.0f + 96.0f);
    fx_free(fx);
}

static void test_sparse(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_PE);
    /* 2:4 sparsity: compressed rows 5 and 7 at dense rows 1 and 3 */
    float w0 = 5, w1 = 7, x[4] = { 1, 10, 100, 1000 };
    int64_t t0 = 1, t1 = 3;
    fx_put(fx, SB, 0, 0, BF, &w0, 1);
    fx_put(fx, SB, 1, 0, BF, &w1, 1);
    fx_puti(fx, SB, 0, 8, ISA_DT_UINT8, &t0, 1);
    fx_puti(fx, SB, 1, 8, ISA_DT_UINT8, &t1, 1);
    for (unsigned p = 0; p < 4; p++)
        fx_put(fx, SB, p, 16, F32, &x[p], 1);
    isa_decoded_t d = mm(tap1(SB, F32, 16, 0, 4, 1), tap1(PS, F32, 0, 0, 1, 1), 0, 0, 128, 128);
    d.inst.op = ISA_OP_MATMUL_SPARSE;
    FX_FAILS(fx, &d, "LdWeightsSparse");
    isa_decoded_t l = mk(ISA_OP_LDWEIGHTS_SPARSE);
    l.inst.f.LDWSP.src = tap1(SB, BF, 0, 0, 2, 1);
    l.inst.f.LDWSP.tags = tap1(SB, ISA_DT_UINT8, 8, 0, 2, 1);
    l.inst.f.LDWSP.row_size = l.inst.f.LDWSP.col_size = 128;
    l.inst.f.LDWSP.compress_ratio = 2;
    assert_int_equal(fx_run(fx, &l), 0);
    assert_feq(fx->pe.w[1][0], 5.0f);
    assert_feq(fx->pe.w[2][0], 0.0f);
    assert_int_equal(fx->pe.sparse_ratio, 2);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, PS, 0, 0, F32, 0), 7050.0f); /* 5*10 + 7*1000 */
    fx_puti(fx, SB, 1, 8, ISA_DT_UINT8, &t0, 1);
    FX_FAILS(fx, &l, "tags", "duplicate tag");
    int64_t bad = 4;
    fx_puti(fx, SB, 1, 8, ISA_DT_UINT8, &bad, 1);
    FX_FAILS(fx, &l, "tags", "outside 0..3");
    l.inst.f.LDWSP.compress_ratio = 3;
    FX_FAILS(fx, &l, "compress_ratio");
    fx_free(fx);
}

/* double_row: stationary [K, 2, M], moving [K, 2, N]; the contraction
 * runs over both rows of every partition. */
static void test_double_row(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_PE);
    const unsigned E4 = ISA_DT_FP8E4M3;
    float w0[2] = { 1, 2 }, w1[2] = { 3, 4 }; /* partition p: [r=0, r=1], M = 1 */
    float x0[4] = { 1, 2, 10, 20 }, x1[4] = { 3, 4, 30, 40 }; /* [r=0: n0 n1, r=1: n0 n1] */
    fx_put(fx, SB, 0, 0, E4, w0, 2);
    fx_put(fx, SB, 1, 0, E4, w1, 2);
    fx_put(fx, SB, 0, 16, E4, x0, 4);
    fx_put(fx, SB, 1, 16, E4, x1, 4);
    isa_decoded_t l = ldw(tap1(SB, E4, 0, 0, 2, 2), 0, 0, 128, 128);
    l.inst.f.LDW.perf = ISA_PERF_DOUBLE_ROW;
    assert_int_equal(fx_run(fx, &l), 0);
    isa_decoded_t d = mm(tap1(SB, E4, 16, 0, 2, 4), tap1(PS, F32, 0, 0, 1, 2), 0, 0, 128, 128);
    FX_FAILS(fx, &d, "perf", "must use it too");
    d.inst.f.MM.perf = ISA_PERF_DOUBLE_ROW;
    assert_int_equal(fx_run(fx, &d), 0);
    /* n0: 1*1 + 3*3 + 2*10 + 4*30; n1: 1*2 + 3*4 + 2*20 + 4*40 */
    assert_feq(fx_get(fx, PS, 0, 0, F32, 0), 150.0f);
    assert_feq(fx_get(fx, PS, 0, 0, F32, 1), 214.0f);
    d.inst.f.MM.moving.count[0] = 3;
    FX_FAILS(fx, &d, "moving", "even");
    d.inst.f.MM.moving.count[0] = 4;
    d.inst.f.MM.col_size = 64;
    FX_FAILS(fx, &d, "whole 128x128 array");
    d.inst.f.MM.col_size = 128;
    d.inst.f.MM.moving.dtype = BF;
    FX_FAILS(fx, &d, "moving", "fp8");
    d.inst.f.MM.moving.dtype = E4;
    d.inst.f.MM.transpose = 1;
    FX_FAILS(fx, &d, "transpose");
    /* a plain load resets the mode */
    l.inst.f.LDW.perf = ISA_PERF_NORMAL;
    d.inst.f.MM.transpose = 0;
    assert_int_equal(fx_run(fx, &l), 0);
    FX_FAILS(fx, &d, "needs weights loaded with perf=double_row");
    fx_free(fx);
}

static void test_pe_costs(void **state)
{
    (void)state;
    isa_decoded_t d = mm(tap1(SB, BF, 0, 0, 128, 512), tap1(PS, F32, 0, 0, 128, 512), 0, 0, 128, 128);
    /* max(min(64, M), N); fp32 x4, x2 with onezero or transpose */
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &d), 512);
    d.inst.f.MM.moving.count[0] = 16;
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &d), 64);
    d.inst.f.MM.dst.nparts = 32;
    assert_int_equal(fx_cost("trn1", ISA_ENG_PE, &d), 32);
    d.inst.f.MM.dst.nparts = 128;
    d.inst.f.MM.moving.nparts = 1; /* fewer partitions: no speed-up */
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &d), 64);
    d.inst.f.MM.moving.count[0] = 512;
    d.inst.f.MM.moving.dtype = F32;
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &d), 2048);
    d.inst.f.MM.onezero = 1;
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &d), 1024);
    d.inst.f.MM.onezero = 0;
    d.inst.f.MM.transpose = 1;
    d.inst.f.MM.moving.nparts = 128;
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &d), 1024);
    d.inst.op = ISA_OP_MATMUL_SPARSE;
    d.inst.f.MM.transpose = 0;
    d.inst.f.MM.moving.dtype = BF;
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &d), 512);
    /* LdWeights: ceil(max(K, M) / 4), fp32 x4 */
    isa_decoded_t l = ldw(tap1(SB, BF, 0, 0, 128, 128), 0, 0, 128, 128);
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &l), 32);
    l.inst.f.LDW.src.dtype = F32;
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &l), 128);
    l.inst.f.LDW.src = tap1(SB, BF, 0, 0, 10, 3);
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &l), 3);
    l.inst.f.LDW.src = tap1(SB, ISA_DT_FP8E4M3, 0, 0, 128, 256);
    l.inst.f.LDW.perf = ISA_PERF_DOUBLE_ROW; /* loads 2 x 128 values per partition */
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &l), 64);
    d.inst.f.MM.moving = tap1(SB, ISA_DT_FP8E4M3, 0, 0, 128, 1024);
    d.inst.f.MM.perf = ISA_PERF_DOUBLE_ROW; /* K=256 in the time of K=128 */
    d.inst.op = ISA_OP_MATMUL;
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &d), 512);
    isa_decoded_t x = mk(ISA_OP_LDWEIGHTS_SPARSE);
    x.inst.f.LDWSP.src = tap1(SB, BF, 0, 0, 64, 128);
    x.inst.f.LDWSP.compress_ratio = 2;
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &x), 32);
    x = mk(ISA_OP_LDWEIGHTS_MX);
    x.inst.f.LDWMX.src = tap1(SB, ISA_DT_FP8E4M3, 0, 0, 128, 64);
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &x), 32);
    x = mk(ISA_OP_MATMUL_MX);
    x.inst.f.MMMX.moving = tap1(SB, ISA_DT_FP8E4M3, 0, 0, 128, 256);
    x.inst.f.MMMX.dst = tap1(PS, F32, 0, 0, 128, 256);
    assert_int_equal(fx_cost("trn2", ISA_ENG_PE, &x), 256);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_tiles),
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_mx),
        cmocka_unit_test(test_mx_out_scale),
        cmocka_unit_test(test_sparse),
        cmocka_unit_test(test_double_row),
        cmocka_unit_test(test_pe_costs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
