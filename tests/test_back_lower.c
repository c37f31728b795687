/* Lowering families: instruction sequences and field values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "back_util.h"
#include "builder.h"

static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

/* ---- matmul family ---- */
static void test_matmul_plain(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int w = BU_T(&k, "w", TIR_T_SBUF, ISA_DT_BF16, 128, 64);
    int x = BU_T(&k, "x", TIR_T_SBUF, ISA_DT_BF16, 128, 512);
    int p = BU_T(&k, "p", TIR_T_PSUM, ISA_DT_FP32, 64, 512);
    tir_op_t op;
    tir_op_init(&op, TIR_MATMUL);
    op.dst = bu_whole(&k, p);
    op.src[0] = bu_whole(&k, w);
    op.src[1] = bu_whole(&k, x);
    op.nsrc = 2;
    op.flags = TIR_F_ACCUMULATE | TIR_F_ONEZERO_W | TIR_F_ONEZERO_M;
    bu_op(&k, &op, "mm");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    int li = bu_find(&r, ISA_OP_LDWEIGHTS, 0), mi = bu_find(&r, ISA_OP_MATMUL, 0);
    assert_true(li >= 0 && mi == li + 1);
    bir_inst_t *ld = &bu_block(&r)->insts[li], *mm = &bu_block(&r)->insts[mi];
    assert_int_equal(ld->engine, ISA_ENG_PE);
    assert_int_equal(mm->engine, ISA_ENG_PE);
    assert_int_equal(ld->opc, BIR_LOAD_WEIGHTS);
    assert_int_equal(mm->opc, BIR_MATMULT);
    assert_int_equal(ld->isa.f->LDW.src.nparts, 128);
    assert_int_equal(ld->isa.f->LDW.src.count[0], 64);
    assert_int_equal(ld->isa.f->LDW.row_size, 128);
    assert_int_equal(mm->isa.f->MM.dst.space, ISA_SPACE_PSUM);
    assert_int_equal(mm->isa.f->MM.num_active_partitions, 128);   /* seed 001 setnum_active_channels */
    assert_int_equal(mm->isa.f->MM.dst.nparts, 64);
    assert_int_equal(mm->isa.f->MM.dst.count[0], 512);
    assert_int_equal(mm->isa.f->MM.moving.count[0], 512);
    assert_int_equal(mm->isa.f->MM.accumulate, 1);
    assert_int_equal(ld->isa.f->LDW.onezero, 1);   /* is_weight_onezero */
    assert_int_equal(mm->isa.f->MM.onezero, 1);    /* is_fmap_onezero */
    assert_int_equal(mm->isa.f->MM.dst.addr % 2048, 0);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* An MX matmul "mmx" of whole tiles: p = w.T @ x with scales ws, xs. */
static void mx_op(tir_kernel_t *k, int w, int x, int ws, int xs, int p)
{
    tir_op_t op;
    tir_op_init(&op, TIR_MATMUL_MX);
    op.dst = bu_whole(k, p);
    op.src[0] = bu_whole(k, w), op.src[1] = bu_whole(k, x);
    op.src[2] = bu_whole(k, ws), op.src[3] = bu_whole(k, xs);
    op.nsrc = 4;
    bu_op(k, &op, "mmx");
}

static void test_matmul_mx_sparse(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int w = BU_T(&k, "w", TIR_T_SBUF, ISA_DT_FP8E4M3, 128, 128);
    int x = BU_T(&k, "x", TIR_T_SBUF, ISA_DT_FP8E4M3, 128, 256);
    int ws = BU_T(&k, "ws", TIR_T_SBUF, ISA_DT_UINT8, 4, 128);   /* K/32 partitions */
    int xs = BU_T(&k, "xs", TIR_T_SBUF, ISA_DT_UINT8, 4, 256);
    /* 1:4 sparse: 32 compressed rows stand for the 128 dense rows of x */
    int wsp = BU_T(&k, "wsp", TIR_T_SBUF, ISA_DT_FP8E4M3, 32, 128);
    int tg = BU_T(&k, "tags", TIR_T_SBUF, ISA_DT_UINT8, 32, 128);
    int p = BU_T(&k, "p", TIR_T_PSUM, ISA_DT_FP32, 128, 256);
    mx_op(&k, w, x, ws, xs, p);
    tir_op_t op;
    tir_op_init(&op, TIR_MATMUL_SPARSE);
    op.dst = bu_whole(&k, p);
    op.src[0] = bu_whole(&k, wsp), op.src[1] = bu_whole(&k, x), op.src[2] = bu_whole(&k, tg);
    op.nsrc = 3;
    tir_op_rare_t cr = *op.rare;
    cr.compress_ratio = 4;
    op.rare = bu_rare(&k, cr);
    bu_op(&k, &op, "mms");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_int_equal(bu_count(&r, ISA_OP_LDWEIGHTS_MX), 1);
    assert_int_equal(bu_count(&r, ISA_OP_MATMUL_MX), 1);
    assert_int_equal(bu_count(&r, ISA_OP_LDWEIGHTS_SPARSE), 1);
    assert_int_equal(bu_count(&r, ISA_OP_MATMUL_SPARSE), 1);
    bir_inst_t *ls = &bu_block(&r)->insts[bu_find(&r, ISA_OP_LDWEIGHTS_SPARSE, 0)];
    assert_int_equal(ls->isa.f->LDWSP.compress_ratio, 4);
    assert_int_equal(ls->isa.f->LDWSP.tags.count[0], 128);
    bir_inst_t *mx = &bu_block(&r)->insts[bu_find(&r, ISA_OP_MATMUL_MX, 0)];
    assert_int_equal(mx->isa.f->MMMX.scale.nparts, 4);
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_matmul_errors(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int w = BU_T(&k, "w", TIR_T_SBUF, ISA_DT_BF16, 128, 128);
    int x = BU_T(&k, "x", TIR_T_SBUF, ISA_DT_BF16, 64, 512);
    int p = BU_T(&k, "p", TIR_T_PSUM, ISA_DT_FP32, 128, 512);
    tir_op_t op;
    tir_op_init(&op, TIR_MATMUL);
    op.dst = bu_whole(&k, p), op.src[0] = bu_whole(&k, w), op.src[1] = bu_whole(&k, x);
    op.nsrc = 2;
    bu_op(&k, &op, "bad_mm");
    bu_run_t r;
    assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_non_null(strstr(r.err.msg, "bad_mm"));
    assert_non_null(strstr(r.err.msg, "partitions (K)"));
    bu_free(&r);
    tir_kernel_free(&k);
}

/* NeuronCore-v4 wide matmuls (NKI: moving free size up to the whole
 * PSUM, 4096 float32 / 8192 bfloat16): one LdWeights(MX), then one
 * Matmul(MX) per chunk of <= 512 columns inside one 2 KiB PSUM bank, each
 * with its slices of moving, moving_scale and dst and the op's flags. */
/* A kernel of one plain matmul lowered for target tg: stationary w [128,
 * 64] bf16, moving x [128, n] bf16, dst columns [off, off + n) of a PSUM
 * tile p [64, pcols] of dtype pdt, with the op's flags; *x, *p the tiles.
 * bu_lower's answer (r and k to free). */
static int wide_plain(tir_kernel_t *k, bu_run_t *r, const tpb_target_t *tg, unsigned pdt,
                      int64_t n, int64_t pcols, int64_t off, unsigned flags, int *x, int *p)
{
    tir_kernel_init(k);
    int w = BU_T(k, "w", TIR_T_SBUF, ISA_DT_BF16, 128, 64);
    *x = BU_T(k, "x", TIR_T_SBUF, ISA_DT_BF16, 128, n);
    *p = BU_T(k, "p", TIR_T_PSUM, pdt, 64, pcols);
    tir_op_t op;
    tir_op_init(&op, TIR_MATMUL);
    op.dst = bu_in(k, bu_ap(*p, off, 2, pcols, (int64_t)64, (int64_t)1, n));
    op.src[0] = bu_whole(k, w), op.src[1] = bu_whole(k, *x);
    op.nsrc = 2;
    op.flags = flags;
    bu_op(k, &op, "mm");
    return bu_lower(r, k, tg, true);
}

static void test_matmul_wide(void **state)
{
    (void)state;
    const tpb_target_t *trn3 = tpb_target_get("trn3");
    /* plain, bf16 dst, N = 2048: four Matmuls of 512 (1 KiB each) */
    {
        tir_kernel_t k;
        bu_run_t r;
        int x, p;
        assert_int_equal(wide_plain(&k, &r, trn3, ISA_DT_BF16, 2048, 2048, 0, TIR_F_ACCUMULATE,
                                    &x, &p), 0);
        assert_int_equal(bu_count(&r, ISA_OP_LDWEIGHTS), 1);
        assert_int_equal(bu_count(&r, ISA_OP_MATMUL), 4);
        assert_true(bu_find(&r, ISA_OP_LDWEIGHTS, 0) < bu_find(&r, ISA_OP_MATMUL, 0));
        for (int i = 0; i < 4; i++) {
            const isa_fmt_MM_t *g = &bu_block(&r)->insts[bu_find(&r, ISA_OP_MATMUL, i)].isa.f->MM;
            assert_int_equal(isa_tap_free_elems(&g->moving), 512);
            assert_int_equal(g->moving.addr, r.m.mlocs[x].addr + 1024u * i);
            assert_int_equal(g->dst.nparts, 64);
            assert_int_equal(isa_tap_free_elems(&g->dst), 512);
            assert_int_equal(g->dst.addr, r.m.mlocs[p].addr + 1024u * i);
            assert_int_equal(g->dst.addr / 2048, (g->dst.addr + 1023) / 2048);
            assert_int_equal(g->accumulate, 1);
        }
        bu_free(&r);
        tir_kernel_free(&k);
    }
    /* plain, fp32 dst starting mid-bank (columns 256..1279 of a 2048-wide
     * tile): chunks end at the bank boundaries, 256 + 512 + 256 */
    {
        tir_kernel_t k;
        bu_run_t r;
        int x, p;
        assert_int_equal(wide_plain(&k, &r, trn3, ISA_DT_FP32, 1024, 2048, 256, 0, &x, &p), 0);
        assert_int_equal(bu_count(&r, ISA_OP_LDWEIGHTS), 1);
        assert_int_equal(bu_count(&r, ISA_OP_MATMUL), 3);
        static const unsigned cols[3] = {256, 512, 256}, at[3] = {256, 512, 1024};
        for (int i = 0; i < 3; i++) {
            const isa_fmt_MM_t *g = &bu_block(&r)->insts[bu_find(&r, ISA_OP_MATMUL, i)].isa.f->MM;
            assert_int_equal(isa_tap_free_elems(&g->moving), cols[i]);
            assert_int_equal(g->moving.addr, r.m.mlocs[x].addr + 2u * (at[i] - 256));
            assert_int_equal(g->dst.addr, r.m.mlocs[p].addr + 4u * at[i]);
            assert_int_equal(g->accumulate, 0);
        }
        bu_free(&r);
        tir_kernel_free(&k);
    }
    /* double_row on trn3: moving [K, 2, 1024], also merged as [K, 2048]:
     * two Matmuls, each [K, 2, 512] (the second row 1024 elements on) */
    for (int merged = 0; merged < 2; merged++) {
        tir_kernel_t k;
        tir_kernel_init(&k);
        int w = BU_T(&k, "w", TIR_T_SBUF, ISA_DT_FP8E5M2, 128, 2, 64);
        int x = BU_T(&k, "x", TIR_T_SBUF, ISA_DT_FP8E5M2, 128, 2, 1024);
        int p = BU_T(&k, "p", TIR_T_PSUM, ISA_DT_FP32, 64, 1024);
        tir_op_t op;
        tir_op_init(&op, TIR_MATMUL);
        op.dst = bu_whole(&k, p), op.src[0] = bu_whole(&k, w);
        op.src[1] = merged ? bu_in(&k, bu_ap(x, 0, 2, (int64_t)2048, (int64_t)128, (int64_t)1,
                                             (int64_t)2048))
                           : bu_whole(&k, x);
        op.nsrc = 2;
        op.flags = TIR_F_DOUBLE_ROW;
        bu_op(&k, &op, "mm");
        bu_run_t r;
        assert_int_equal(bu_lower(&r, &k, trn3, true), 0);
        assert_int_equal(bu_count(&r, ISA_OP_MATMUL), 2);
        for (int i = 0; i < 2; i++) {
            const isa_fmt_MM_t *g = &bu_block(&r)->insts[bu_find(&r, ISA_OP_MATMUL, i)].isa.f->MM;
            assert_int_equal(g->perf, ISA_PERF_DOUBLE_ROW);
            assert_int_equal(g->moving.addr, r.m.mlocs[x].addr + 512u * i);
            assert_int_equal(g->moving.ndims, 2);
            assert_int_equal(g->moving.count[0], 512);   /* innermost first */
            assert_int_equal(g->moving.count[1], 2);
            assert_int_equal(g->moving.step[1], 1024);
            assert_int_equal(g->dst.addr, r.m.mlocs[p].addr + 2048u * i);
        }
        bu_free(&r);
        tir_kernel_free(&k);
    }
    /* MX (fp8, K/32 scales), fp32 dst of 1024 columns, moving read as
     * [K, 4, 256]: two MatmulMX with the matching moving and scale halves */
    {
        tir_kernel_t k;
        tir_kernel_init(&k);
        int w = BU_T(&k, "w", TIR_T_SBUF, ISA_DT_FP8E4M3, 128, 128);
        int x = BU_T(&k, "x", TIR_T_SBUF, ISA_DT_FP8E4M3, 128, 4, 256);
        int ws = BU_T(&k, "ws", TIR_T_SBUF, ISA_DT_UINT8, 4, 128);
        int xs = BU_T(&k, "xs", TIR_T_SBUF, ISA_DT_UINT8, 4, 1024);
        int p = BU_T(&k, "p", TIR_T_PSUM, ISA_DT_FP32, 128, 1024);
        mx_op(&k, w, x, ws, xs, p);
        bu_run_t r;
        assert_int_equal(bu_lower(&r, &k, trn3, true), 0);
        assert_int_equal(bu_count(&r, ISA_OP_LDWEIGHTS_MX), 1);
        assert_int_equal(bu_count(&r, ISA_OP_MATMUL_MX), 2);
        for (int i = 0; i < 2; i++) {
            const isa_fmt_MMMX_t *g =
                &bu_block(&r)->insts[bu_find(&r, ISA_OP_MATMUL_MX, i)].isa.f->MMMX;
            assert_int_equal(isa_tap_free_elems(&g->moving), 512);
            assert_int_equal(g->moving.addr, r.m.mlocs[x].addr + 512u * i);
            assert_int_equal(g->scale.nparts, 4);
            assert_int_equal(g->scale.addr, r.m.mlocs[xs].addr + 512u * i);
            assert_int_equal(isa_tap_free_elems(&g->scale), 512);
            assert_int_equal(g->dst.addr, r.m.mlocs[p].addr + 2048u * i);
        }
        bu_free(&r);
        tir_kernel_free(&k);
    }
    /* trn2 (NeuronCore-v3): nc_matmul stays one Matmul inside one bank */
    {
        tir_kernel_t k;
        bu_run_t r;
        int x, p;
        assert_int_not_equal(wide_plain(&k, &r, trn2(), ISA_DT_FP32, 1024, 1024, 0, 0, &x, &p), 0);
        assert_non_null(strstr(r.err.msg, "inside one 2 KiB PSUM bank"));
        bu_free(&r);
        tir_kernel_free(&k);
    }
}

/* ---- activation ---- */
static void test_activation(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 256);
    int b = BU_T(&k, "b", TIR_T_SBUF, ISA_DT_FP32, 128, 256);
    int bias = BU_T(&k, "bias", TIR_T_SBUF, ISA_DT_FP32, 128, 1);
    int red = BU_T(&k, "red", TIR_T_SBUF, ISA_DT_FP32, 128, 1);
    tir_op_t op;
    tir_op_init(&op, TIR_ACTIVATION);
    op.dst = bu_whole(&k, b), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    op.func = ISA_ACTFN_EXP;
    op.s0.imm = 0.5;
    op.bias = bu_whole(&k, bias);
    op.reduce_op = ISA_ALU_ADD;
    op.dst2 = bu_whole(&k, red);
    bu_op(&k, &op, "act");
    op.flags = TIR_F_ACCUMULATE;
    op.reduce_op = ISA_ALU_BYPASS;
    BU_EDIT(&k, op.dst2, tensor, -1);
    bu_op(&k, &op, "acc");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    bir_inst_t *in = &bu_block(&r)->insts[bu_find(&r, ISA_OP_ACTIVATION, 0)];
    assert_int_equal(in->engine, ISA_ENG_ACT);
    assert_int_equal(in->isa.f->ACT.func, ISA_ACTFN_EXP);
    assert_true(in->isa.f->ACT.scale == 0.5f);
    assert_int_equal(in->isa.f->ACT.scale_is_ptr, 0);
    assert_int_equal(in->isa.f->ACT.bias.space, ISA_SPACE_SBUF);
    assert_int_equal(in->isa.f->ACT.red_op, ISA_ALU_ADD);
    assert_int_equal(in->isa.f->ACT.red_cmd, ISA_REDCMD_RESET_REDUCE);
    assert_int_equal(in->isa.f->ACT.red_out.space, ISA_SPACE_SBUF);
    assert_int_equal(bu_count(&r, ISA_OP_ACTIVATION_ACC), 1);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* ---- tensor-scalar family: one emitter ---- */
static void test_tensor_scalar(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int b = BU_T(&k, "b", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int s = BU_T(&k, "s", TIR_T_SBUF, ISA_DT_FP32, 128, 1);
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_SCALAR);
    op.dst = bu_whole(&k, b), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    op.op0 = ISA_ALU_MULTIPLY, op.s0.imm = 2.0;
    op.op1 = ISA_ALU_ADD, op.s1.imm = -1.0;
    op.flags = TIR_F_REV1;
    bu_op(&k, &op, "ts_imm");
    op.s0.is_ap = true, op.s0.ap = bu_whole(&k, s);
    bu_op(&k, &op, "ts_ptr");
    /* affine_select on DVE -> predicated TensorScalarPtr */
    tir_op_init(&op, TIR_AFFINE_SELECT);
    op.dst = bu_whole(&k, b), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    op.engine = ISA_ENG_DVE;
    tir_op_rare_t pr = tir_rare_default;
    pr.pat_offset = -3, pr.pat_cm = 1, pr.pat_ndim = 1, pr.pat_step[0] = -1;
    op.rare = bu_rare(&k, pr);
    op.cmp = ISA_CMP_GE; TIR_RARE_SET(&k, &op, fill, -9.0);
    bu_op(&k, &op, "causal");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    bir_inst_t *t0 = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_SCALAR, 0)];
    assert_int_equal(t0->isa.f->TS.op0, ISA_ALU_MULTIPLY);
    assert_int_equal(t0->isa.f->TS.s0, 0x40000000u);   /* 2.0f */
    assert_int_equal(t0->isa.f->TS.s1, 0xBF800000u);   /* -1.0f */
    assert_int_equal(t0->isa.f->TS.rev1, 1);
    assert_int_equal(t0->isa.f->TS.s0_is_ptr, 0);
    assert_false(t0->has_pred);
    bir_inst_t *t1 = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_SCALAR_PTR, 0)];
    assert_int_equal(t1->isa.f->TS.s0_is_ptr, 1);
    assert_false(t1->has_pred);
    bir_inst_t *t2 = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_SCALAR_PTR, 1)];
    assert_true(t2->has_pred);
    assert_int_equal(bir_rare(t2)->pred.offset, -3);
    assert_int_equal(bir_rare(t2)->pred.cm, 1);
    assert_int_equal(bir_rare(t2)->pred.step0, -1);
    assert_int_equal(bir_rare(t2)->pred.cmp, ISA_CMP_GE);
    assert_true(bir_rare(t2)->pred.fill == -9.0f);
    assert_int_equal(t2->engine, ISA_ENG_DVE);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* Seed 001 set_reverse_pred on both affine_select forms and set_keep_rate
 * on Dropout: the TIR flags reach the instruction bits. */
static void test_reverse_pred_keep_rate(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int b = BU_T(&k, "b", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_AFFINE_SELECT);
    op.dst = bu_whole(&k, b), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    tir_op_rare_t pr = tir_rare_default;
    pr.pat_offset = 0, pr.pat_cm = 1, pr.pat_ndim = 1, pr.pat_step[0] = -1;
    op.rare = bu_rare(&k, pr);
    op.cmp = ISA_CMP_GE; TIR_RARE_SET(&k, &op, fill, 0.0); op.flags = TIR_F_REV0;
    op.engine = ISA_ENG_DVE;
    bu_op(&k, &op, "rev_dve");
    op.engine = ISA_ENG_POOL;
    bu_op(&k, &op, "rev_pool");
    op.flags = 0;
    bu_op(&k, &op, "fwd_pool");
    tir_op_init(&op, TIR_DROPOUT);
    op.dst = bu_whole(&k, b), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    tir_op_rare_t dr = *op.rare;
    dr.prob = 0.8;
    op.s0.imm = 0.8, op.rare = bu_rare(&k, dr), op.flags = TIR_F_KEEP_RATE;
    bu_op(&k, &op, "keep");
    op.flags = 0;
    bu_op(&k, &op, "drop");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    bir_inst_t *t = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_SCALAR_PTR, 0)];
    assert_true(t->has_pred);
    assert_int_equal(bir_rare(t)->pred.rev_pred, 1);
    assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_AFFINE_SELECT, 0)].isa.f->AFSEL.rev_pred, 1);
    assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_AFFINE_SELECT, 1)].isa.f->AFSEL.rev_pred, 0);
    const isa_fmt_DROP_t *d0 = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DROPOUT, 0)].isa.f->DROP;
    const isa_fmt_DROP_t *d1 = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DROPOUT, 1)].isa.f->DROP;
    assert_int_equal(d0->is_keep_rate, 1);
    assert_true(d0->prob == 0.8f);
    assert_int_equal(d1->is_keep_rate, 0);
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_tsc_needs_op1(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int s = BU_T(&k, "s", TIR_T_SBUF, ISA_DT_FP32, 128, 1);
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_SCALAR);
    op.dst = bu_whole(&k, a), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    op.op0 = ISA_ALU_ADD;
    op.s1.is_ap = true, op.s1.ap = bu_whole(&k, s);
    bu_op(&k, &op, "ts");
    bu_run_t r;
    assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_non_null(strstr(r.err.msg, "LOGIC FAULT, TSC mode must have op1 set!"));
    bu_free(&r);
    tir_kernel_free(&k);
}

/* ---- reduce: local vs multi-step ---- */
static void test_reduce_local_and_chain(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 8, 16);
    int o = BU_T(&k, "o", TIR_T_SBUF, ISA_DT_FP32, 128, 8);
    /* 5 free dims: [128, 2, 3, 4, 5, 6]; reduce everything but dim 3 */
    int big = BU_T(&k, "big", TIR_T_SBUF, ISA_DT_FP32, 128, 2, 3, 4, 5, 6);
    int o2 = BU_T(&k, "o2", TIR_T_SBUF, ISA_DT_FP32, 128, 4);
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_REDUCE);
    op.dst = bu_whole(&k, o), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    op.reduce_op = ISA_ALU_MAX;
    TIR_RARE_SET(&k, &op, axes, 1);   /* innermost */
    bu_op(&k, &op, "rmax");
    tir_op_init(&op, TIR_TENSOR_REDUCE);
    /* break contiguity between dims so nothing merges: step the tile with a
     * strided innermost dim? all dims of `big` are contiguous, but dims with
     * different reduce status never merge: kept dim 3 (bit 2) separates */
    op.dst = bu_whole(&k, o2), op.src[0] = bu_whole(&k, big), op.nsrc = 1;
    op.reduce_op = ISA_ALU_ADD;
    TIR_RARE_SET(&k, &op, axes, 0x1B);  /* bits 0,1,3,4: dims 5,4,2,1 reduced; dim 3 (bit 2) kept */
    op.flags = TIR_F_NEGATE;
    bu_op(&k, &op, "rchain");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    bir_inst_t *l = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_REDUCE, 0)];
    assert_int_equal(l->isa.f->RED.axes, 1);
    assert_int_equal(l->isa.f->RED.in.count[0], 16);
    assert_int_equal(l->isa.f->RED.in.count[1], 8);
    /* merging: 5,6 (both reduced, contiguous) -> 30; 4 kept; 2,3 (both reduced,
     * contiguous) -> 6: three dims, one local instruction */
    int n = bu_count(&r, ISA_OP_TENSOR_REDUCE);
    assert_int_equal(n, 2);
    bir_inst_t *c = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_REDUCE, 1)];
    assert_int_equal(c->isa.f->RED.in.ndims, 3);
    assert_int_equal(c->isa.f->RED.in.count[0], 30);
    assert_int_equal(c->isa.f->RED.in.count[1], 4);
    assert_int_equal(c->isa.f->RED.in.count[2], 6);
    assert_int_equal(c->isa.f->RED.axes, 0x5);  /* dims 0 and 2 reduced; dim 1 kept */
    assert_int_equal(c->isa.f->RED.negate, 1);
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_reduce_multistep(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    /* [128, 3, 4, 5, 6, 7], reduce dims at bits 4 (outermost, 3), 2 (5), 0 (7);
     * alternating status: nothing merges -> 5 free dims -> multi-step */
    int big = BU_T(&k, "big", TIR_T_SBUF, ISA_DT_FP32, 128, 3, 4, 5, 6, 7);
    int o = BU_T(&k, "o", TIR_T_SBUF, ISA_DT_FP32, 128, 4, 6);
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_REDUCE);
    op.dst = bu_whole(&k, o), op.src[0] = bu_whole(&k, big), op.nsrc = 1;
    op.reduce_op = ISA_ALU_ADD;
    TIR_RARE_SET(&k, &op, axes, 0x15);
    op.flags = TIR_F_NEGATE;
    bu_op(&k, &op, "rms");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    /* 3 first-step reduces (one per outer slice) + 1 fold */
    assert_int_equal(bu_count(&r, ISA_OP_TENSOR_REDUCE), 4);
    const bir_mloc_t *sc = &r.m.op_scratch[0];
    assert_int_equal(sc->bytes, 3 * 24 * 4);
    /* counted (the allocator reads op_scratch only when some op has one)
     * and placed clear of the tiles */
    assert_int_equal(r.m.nscratch, 1);
    const bir_mloc_t *bm = &r.m.mlocs[big], *om = &r.m.mlocs[o];
    assert_true(sc->addr >= bm->addr + bm->bytes || sc->addr + sc->bytes <= bm->addr);
    assert_true(sc->addr >= om->addr + om->bytes || sc->addr + sc->bytes <= om->addr);
    for (int j = 0; j < 3; j++) {
        bir_inst_t *s = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_REDUCE, j)];
        /* only the first steps read the source; they write the partial */
        assert_int_equal(s->isa.f->RED.in.addr, r.m.mlocs[big].addr + (uint64_t)j * 840 * 4);
        assert_int_equal(s->isa.f->RED.out.addr, sc->addr + (uint64_t)j * 24 * 4);
        assert_int_equal(s->isa.f->RED.negate, 0);
    }
    bir_inst_t *f = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_REDUCE, 3)];
    assert_int_equal(f->isa.f->RED.in.addr, sc->addr);
    assert_int_equal(f->isa.f->RED.in.count[1], 3);
    assert_int_equal(f->isa.f->RED.out.addr, r.m.mlocs[o].addr);
    assert_int_equal(f->isa.f->RED.negate, 1);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* seed 001 NeuronReduceMacro granularity (TIR_F_PER_AXIS): one TensorReduce
 * per reduced axis, outermost first; only the first reads the source, the
 * rest fold the partial (ping-pong scratch); negate on the last step only. */
static void test_reduce_per_axis(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    /* [128, 3, 4, 5, 6]: reduce axes 1 (3) and 3 (5), keep 4 and 6: the
     * kept dims separate them, so two reduced dims in the access pattern */
    int src = BU_T(&k, "src", TIR_T_SBUF, ISA_DT_FP32, 128, 3, 4, 5, 6);
    int o = BU_T(&k, "o", TIR_T_SBUF, ISA_DT_FP32, 128, 4, 6);
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_REDUCE);
    op.dst = bu_whole(&k, o), op.src[0] = bu_whole(&k, src), op.nsrc = 1;
    op.reduce_op = ISA_ALU_MAX;
    TIR_RARE_SET(&k, &op, axes, 0xA);    /* bit 3 = axis 1 (3), bit 1 = axis 3 (5) */
    op.flags = TIR_F_NEGATE | TIR_F_PER_AXIS;
    bu_op(&k, &op, "per_axis");
    op.flags = TIR_F_NEGATE;
    bu_op(&k, &op, "packed");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_int_equal(bu_count(&r, ISA_OP_TENSOR_REDUCE), 3);   /* 2 steps + 1 packed */
    const bir_mloc_t *sc = &r.m.op_scratch[0];
    assert_int_equal(sc->bytes, 2 * 4 * 5 * 6 * 4);
    bir_inst_t *s0 = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_REDUCE, 0)];
    bir_inst_t *s1 = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_REDUCE, 1)];
    bir_inst_t *pk = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_REDUCE, 2)];
    /* step 1: source [6, 5, 4, 3] (innermost first), reduce the 3 -> partial [6, 5, 4] */
    assert_int_equal(s0->isa.f->RED.in.addr, r.m.mlocs[src].addr);
    assert_int_equal(s0->isa.f->RED.in.ndims, 4);
    assert_int_equal(s0->isa.f->RED.axes, 0x8);
    assert_int_equal(s0->isa.f->RED.out.addr, sc->addr);
    assert_int_equal(s0->isa.f->RED.out.dtype, ISA_DT_FP32);
    assert_int_equal(isa_tap_free_elems(&s0->isa.f->RED.out), 120);
    assert_int_equal(s0->isa.f->RED.negate, 0);
    /* step 2 folds the partial over the 5 into dst, negated */
    assert_int_equal(s1->isa.f->RED.in.addr, sc->addr);
    assert_int_equal(s1->isa.f->RED.in.ndims, 3);
    assert_int_equal(s1->isa.f->RED.in.count[1], 5);
    assert_int_equal(s1->isa.f->RED.axes, 0x2);
    assert_int_equal(s1->isa.f->RED.out.addr, r.m.mlocs[o].addr);
    assert_int_equal(s1->isa.f->RED.negate, 1);
    /* without per_axis: one TensorReduce over both dims */
    assert_int_equal(pk->isa.f->RED.axes, 0xA);
    assert_int_equal(pk->isa.f->RED.in.addr, r.m.mlocs[src].addr);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* ---- memset / max8 family / select ---- */
static void test_memset_fill_bits(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_BF16, 128, 64);
    int b = BU_T(&k, "b", TIR_T_SBUF, ISA_DT_INT16, 128, 64);
    int c = BU_T(&k, "c", TIR_T_SBUF, ISA_DT_FP8E4M3, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_MEMSET);
    op.dst = bu_whole(&k, a); TIR_RARE_SET(&k, &op, value, 1.0);
    bu_op(&k, &op, "m0");
    op.dst = bu_whole(&k, b); TIR_RARE_SET(&k, &op, value, -2.0);
    bu_op(&k, &op, "m1");
    op.dst = bu_whole(&k, c); TIR_RARE_SET(&k, &op, value, 448.0);
    bu_op(&k, &op, "m2");
    op.flags = TIR_F_RANDOM;
    bu_op(&k, &op, "m3");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    bir_block_t *bl = bu_block(&r);
    assert_int_equal(bl->insts[0].isa.f->MEMSET.value, 0x3F80);   /* bf16 1.0 */
    assert_int_equal(bl->insts[1].isa.f->MEMSET.value, 0xFFFE);   /* int16 -2 */
    assert_int_equal(bl->insts[2].isa.f->MEMSET.value, 0x7E);     /* e4m3fn 448 = 0 1111 110 */
    assert_int_equal(bl->insts[2].isa.f->MEMSET.mode, ISA_MEMSET_CONST);
    assert_int_equal(bl->insts[3].isa.f->MEMSET.mode, ISA_MEMSET_RANDOM);
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_max8_family_and_select(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int v = BU_T(&k, "v", TIR_T_SBUF, ISA_DT_FP32, 128, 8);
    int ix = BU_T(&k, "ix", TIR_T_SBUF, ISA_DT_UINT32, 128, 8);
    int o = BU_T(&k, "o", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int pr = BU_T(&k, "pr", TIR_T_SBUF, ISA_DT_UINT8, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_MAX8);
    op.dst = bu_whole(&k, v), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    bu_op(&k, &op, "max8");
    tir_op_init(&op, TIR_MATCH_REPLACE8);
    op.dst = bu_whole(&k, o), op.src[0] = bu_whole(&k, a), op.src[1] = bu_whole(&k, v), op.nsrc = 2;
    TIR_RARE_SET(&k, &op, value, -1e30);
    bu_op(&k, &op, "mr");
    op.dst2 = bu_whole(&k, ix);
    bu_op(&k, &op, "mr_idx");
    tir_op_init(&op, TIR_SELECT);
    op.dst = bu_whole(&k, o), op.src[0] = bu_whole(&k, pr), op.src[1] = bu_whole(&k, a), op.nsrc = 2;
    TIR_RARE_SET(&k, &op, fill, 3.0);
    bu_op(&k, &op, "sel");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(bu_count(&r, ISA_OP_MAX8), 1);
    assert_int_equal(bu_count(&r, ISA_OP_MATCH_REPLACE8), 1);
    assert_int_equal(bu_count(&r, ISA_OP_MAX_INDEX_AND_MATCH_REPLACE), 1);
    bir_inst_t *f = &bu_block(&r)->insts[bu_find(&r, ISA_OP_MAX_INDEX_AND_MATCH_REPLACE, 0)];
    assert_int_equal(f->isa.f->MIMR.idx.addr, r.m.mlocs[ix].addr);
    assert_int_equal(f->isa.f->MIMR.vals.addr, r.m.mlocs[v].addr);
    assert_true(f->isa.f->MIMR.imm == -1e30f);
    /* select with an immediate on_false: Memset then CopyPredicated */
    int ms = bu_find(&r, ISA_OP_MEMSET, 0), cp = bu_find(&r, ISA_OP_COPY_PREDICATED, 0);
    assert_true(ms >= 0 && cp > ms);
    assert_int_equal(bu_block(&r)->insts[ms].isa.f->MEMSET.value, 0x40400000u);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* The BIR (L1 InstructionType) values the reference notes pin (seeds
 * 000/001/004), and the max8 family's lowering onto them. */
static void test_bir_numbering(void **state)
{
    (void)state;
    static const struct { bir_opcode_t o; int v; const char *n; } pins[] = {
        {BIR_INST_LOAD, 19, "InstLoad"}, {BIR_DMA_COPY, 32, "DMACopy"},
        {BIR_GENERIC_INDIRECT_LOAD, 42, "GenericIndirectLoad"},
        {BIR_GENERIC_INDIRECT_SAVE, 44, "GenericIndirectSave"},
        {BIR_TENSOR_LOAD, 75, "TensorLoad"}, {BIR_TENSOR_STORE, 76, "TensorStore"},
        {BIR_CORE_BARRIER, 87, "CoreBarrier"}, {BIR_MAX, 88, "Max"},
        {BIR_MAX_INDEX, 89, "MaxIndex"}, {BIR_MATCH_REPLACE, 90, "MatchReplace"},
        {BIR_MAX_INDEX_MATCH_REPLACE, 91, "MaxIndexAndMatchReplace"},
        {BIR_QUANTIZE_MX, 96, "QuantizeMx"}, {BIR_INST_LOOP, 105, "InstLoop"},
    };
    for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++) {
        assert_int_equal((int)pins[i].o, pins[i].v);
        assert_string_equal(bir_opcode_name(pins[i].o), pins[i].n);
    }
    /* no two BIR opcodes share a value (the switch in bir_opcode_name would
     * not compile otherwise); and the lowering uses them */
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int v = BU_T(&k, "v", TIR_T_SBUF, ISA_DT_FP32, 128, 8);
    int ix = BU_T(&k, "ix", TIR_T_SBUF, ISA_DT_UINT32, 128, 8);
    tir_op_t op;
    tir_op_init(&op, TIR_MAX8);
    op.dst = bu_whole(&k, v), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    bu_op(&k, &op, "max8");
    tir_op_init(&op, TIR_FIND_INDEX8);
    op.dst = bu_whole(&k, ix), op.src[0] = bu_whole(&k, a), op.src[1] = bu_whole(&k, v), op.nsrc = 2;
    bu_op(&k, &op, "fi8");
    int ix16 = BU_T(&k, "ix16", TIR_T_SBUF, ISA_DT_UINT16, 128, 8);   /* the uint16 index view */
    op.dst = bu_whole(&k, ix16);
    bu_op(&k, &op, "fi8_u16");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_MAX8, 0)].opc, BIR_MAX);
    assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_MAX_INDEX8, 0)].opc, BIR_MAX_INDEX);
    assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_MAX_INDEX8, 1)].isa.f->FIDX.out.dtype,
                     ISA_DT_UINT16);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* clip_scalar (seed 001, the max8 family's immediates): 1e300 on a bf16
 * operand is bf16's largest finite value, -1e300 on fp8e4m3 is -448; an
 * infinity stays one where the dtype has it. */
static void test_match_replace_imm_clipped(void **state)
{
    (void)state;
    assert_true(lw_clip_scalar(1e300, ISA_DT_BF16) == 3.3895313892515355e38);
    assert_true(lw_clip_scalar(-1e300, ISA_DT_FP8E4M3) == -448.0);
    assert_true(lw_clip_scalar(70000.0, ISA_DT_FP16) == 65504.0);
    assert_true(lw_clip_scalar(-5.0, ISA_DT_UINT8) == 0.0);
    assert_true(lw_clip_scalar(2.5, ISA_DT_FP32) == 2.5);
    /* infinities pass on float dtypes that have them (NKI's imm=-inf),
     * clamp on fp8e4m3 (no inf) and the integers */
    assert_true(lw_clip_scalar(-INFINITY, ISA_DT_FP32) == -INFINITY);
    assert_true(lw_clip_scalar(INFINITY, ISA_DT_BF16) == INFINITY);
    assert_true(lw_clip_scalar(-INFINITY, ISA_DT_FP16) == -INFINITY);
    assert_true(lw_clip_scalar(INFINITY, ISA_DT_FP8E5M2) == INFINITY);
    assert_true(lw_clip_scalar(-INFINITY, ISA_DT_FP8E4M3) == -448.0);
    assert_true(lw_clip_scalar(-INFINITY, ISA_DT_INT8) == -128.0);
    assert_true(lw_clip_scalar(INFINITY, ISA_DT_UINT16) == 65535.0);
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_BF16, 128, 64);
    int v = BU_T(&k, "v", TIR_T_SBUF, ISA_DT_BF16, 128, 8);
    int o = BU_T(&k, "o", TIR_T_SBUF, ISA_DT_BF16, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_MATCH_REPLACE8);
    op.dst = bu_whole(&k, o), op.src[0] = bu_whole(&k, a), op.src[1] = bu_whole(&k, v), op.nsrc = 2;
    TIR_RARE_SET(&k, &op, value, 1e300);
    bu_op(&k, &op, "mr");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    float imm = bu_block(&r)->insts[bu_find(&r, ISA_OP_MATCH_REPLACE8, 0)].isa.f->MR.imm;
    assert_true(imm == (float)3.3895313892515355e38);
    assert_false(isinf(imm));
    bu_free(&r);
    tir_kernel_free(&k);
}

/* generateCopyAct: a float tensor_copy on the Activation engine is an
 * identity Activation; an integer one stays TensorCopy; on DVE TensorCopy. */
static void test_copy_on_act_is_identity_activation(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int b = BU_T(&k, "b", TIR_T_SBUF, ISA_DT_BF16, 128, 64);
    int i = BU_T(&k, "i", TIR_T_SBUF, ISA_DT_INT32, 128, 64);
    int j = BU_T(&k, "j", TIR_T_SBUF, ISA_DT_INT32, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_COPY);
    op.dst = bu_whole(&k, b), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    op.engine = ISA_ENG_ACT;
    bu_op(&k, &op, "cast_act");
    op.dst = bu_whole(&k, j), op.src[0] = bu_whole(&k, i);
    bu_op(&k, &op, "int_act");
    op.engine = ISA_ENG_DVE;
    op.dst = bu_whole(&k, b), op.src[0] = bu_whole(&k, a);
    bu_op(&k, &op, "cast_dve");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(bu_count(&r, ISA_OP_ACTIVATION), 1);
    bir_inst_t *x = &bu_block(&r)->insts[bu_find(&r, ISA_OP_ACTIVATION, 0)];
    assert_int_equal(x->opc, BIR_ACTIVATION);
    assert_int_equal(x->engine, ISA_ENG_ACT);
    assert_int_equal(x->isa.f->ACT.func, ISA_ACTFN_COPY);
    assert_true(x->isa.f->ACT.scale == 1.0f);
    assert_int_equal(x->isa.f->ACT.bias.space, ISA_SPACE_NONE);
    assert_int_equal(x->isa.f->ACT.red_cmd, ISA_REDCMD_IDLE);
    assert_int_equal(x->isa.f->ACT.out.dtype, ISA_DT_BF16);
    assert_int_equal(bu_count(&r, ISA_OP_TENSOR_COPY), 2);
    assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_COPY, 0)].engine, ISA_ENG_ACT);
    assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_COPY, 1)].engine, ISA_ENG_DVE);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* NKI tensor_scalar on the Scalar engine with a [P,1] operand: the
 * identity Activation's scale / bias (multiply+add, multiply alone with the
 * immediate bias -0.0 -- none on trn1, add alone with scale 1). */
static void ts_act_op(tir_kernel_t *k, int dst, int src, int op0, const tir_scalar_t *s0, int op1,
                      const tir_scalar_t *s1, const char *name)
{
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_SCALAR);
    op.dst = bu_whole(k, dst), op.src[0] = bu_whole(k, src), op.nsrc = 1;
    op.engine = ISA_ENG_ACT;
    op.op0 = op0, op.s0 = *s0, op.op1 = op1, op.s1 = *s1;
    bu_op(k, &op, name);
}

static const isa_fmt_ACT_t *ts_act_lowered(bu_run_t *r, int n)
{
    bir_inst_t *in = &bu_block(r)->insts[bu_find(r, ISA_OP_ACTIVATION, n)];
    assert_int_equal(in->engine, ISA_ENG_ACT);
    assert_int_equal(in->isa.f->ACT.func, ISA_ACTFN_COPY);
    assert_int_equal(in->isa.f->ACT.red_cmd, ISA_REDCMD_IDLE);
    return &in->isa.f->ACT;
}

static void test_tensor_scalar_ptr_on_act(void **state)
{
    (void)state;
    const tpb_target_t *tg[2] = {trn2(), tpb_target_get("trn1")};
    for (int t = 0; t < 2; t++) {
        tir_kernel_t k;
        tir_kernel_init(&k);
        int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
        int b = BU_T(&k, "b", TIR_T_SBUF, ISA_DT_BF16, 128, 64);
        int s = BU_T(&k, "s", TIR_T_SBUF, ISA_DT_FP32, 128, 1);
        int u = BU_T(&k, "u", TIR_T_SBUF, ISA_DT_FP32, 128, 1);
        tir_scalar_t ps = {.is_ap = true, .ap = bu_whole(&k, s)};
        tir_scalar_t pu = {.is_ap = true, .ap = bu_whole(&k, u)};
        tir_scalar_t two = tir_scalar_imm(2.0), none = tir_scalar_imm(0.0);
        ts_act_op(&k, b, a, ISA_ALU_MULTIPLY, &ps, ISA_ALU_ADD, &pu, "mul_add");
        ts_act_op(&k, b, a, ISA_ALU_MULTIPLY, &two, ISA_ALU_ADD, &pu, "imm_mul_add");
        ts_act_op(&k, b, a, ISA_ALU_MULTIPLY, &ps, ISA_ALU_BYPASS, &none, "mul");
        ts_act_op(&k, b, a, ISA_ALU_ADD, &pu, ISA_ALU_BYPASS, &none, "add");
        ts_act_op(&k, b, a, ISA_ALU_SUBTRACT, &two, ISA_ALU_BYPASS, &none, "sub_imm");
        bu_run_t r;
        assert_int_equal(bu_lower(&r, &k, tg[t], true), 0);
        assert_int_equal(bu_count(&r, ISA_OP_ACTIVATION), 4);
        assert_int_equal(bu_count(&r, ISA_OP_TENSOR_SCALAR_PTR), 0);
        /* immediates alone: a TensorScalar on ACT, as before */
        assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_SCALAR, 0)].engine,
                         ISA_ENG_ACT);
        const isa_fmt_ACT_t *f = ts_act_lowered(&r, 0);
        assert_int_equal(f->scale_is_ptr, 1);
        assert_int_equal(f->bias.space, ISA_SPACE_SBUF);
        assert_int_equal(f->bias_is_imm, 0);
        assert_int_equal(f->out.dtype, ISA_DT_BF16);
        f = ts_act_lowered(&r, 1);
        assert_int_equal(f->scale_is_ptr, 0);
        assert_true(f->scale == 2.0f);
        assert_int_equal(f->bias.space, ISA_SPACE_SBUF);
        f = ts_act_lowered(&r, 2);   /* x * s + -0.0: -0 products stay -0 (v3 on) */
        assert_int_equal(f->scale_is_ptr, 1);
        assert_int_equal(f->bias.space, ISA_SPACE_NONE);
        assert_int_equal(f->bias_is_imm, t == 0);
        if (t == 0)
            assert_true(f->bias_imm == 0.0f && signbit(f->bias_imm));
        f = ts_act_lowered(&r, 3);   /* x * 1 + u */
        assert_int_equal(f->scale_is_ptr, 0);
        assert_true(f->scale == 1.0f);
        assert_int_equal(f->bias.space, ISA_SPACE_SBUF);
        bu_free(&r);
        tir_kernel_free(&k);
    }
}

/* The validator: on trn2 the Scalar engine's tensor_scalar is multiply+add,
 * multiply or add only (NKI), naming the field; elsewhere a [P,1] operand
 * needs one of those; trn1 has no immediate bias for a [P,1] operand0. */
static void ts_act_refused(const char *target, int op0, bool p0, int op1, bool p1,
                           const char *want)
{
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int s = BU_T(&k, "s", TIR_T_SBUF, ISA_DT_FP32, 128, 1);
    tir_scalar_t ps = {.is_ap = true, .ap = bu_whole(&k, s)}, one = tir_scalar_imm(1.0);
    ts_act_op(&k, a, a, op0, p0 ? &ps : &one, op1, p1 ? &ps : &one, "ts");
    tpb_err_t err = {0};
    int rc = enc_validate_op(&k, tpb_target_get(target), &k.ops[0], &err);
    if (!want)
        assert_int_equal(rc, 0);
    else if (rc == 0 || !strstr(err.msg, want))
        fail_msg("%s: '%s' lacks '%s'", target, err.msg, want);
    tir_kernel_free(&k);
}

static void test_tensor_scalar_act_combinations(void **state)
{
    (void)state;
    const char *trn2_only = "the Scalar engine on trn2 runs tensor_scalar only as op0=multiply "
                            "with op1=add, op0=multiply alone (op1=None) or op0=add alone";
    ts_act_refused("trn2", ISA_ALU_SUBTRACT, false, ISA_ALU_BYPASS, false, "field 'op0'");
    ts_act_refused("trn2", ISA_ALU_SUBTRACT, true, ISA_ALU_BYPASS, false, trn2_only);
    ts_act_refused("trn2", ISA_ALU_MULTIPLY, true, ISA_ALU_SUBTRACT, false, "field 'op1'");
    ts_act_refused("trn2", ISA_ALU_ADD, false, ISA_ALU_ADD, false, "field 'op1'");
    ts_act_refused("trn2", ISA_ALU_MULTIPLY, true, ISA_ALU_ADD, false, NULL);
    ts_act_refused("trn2", ISA_ALU_ADD, true, ISA_ALU_BYPASS, false, NULL);
    for (int t = 0; t < 2; t++) {
        const char *tg = t ? "trn3" : "trn1";
        ts_act_refused(tg, ISA_ALU_SUBTRACT, false, ISA_ALU_MAX, false, NULL);
        ts_act_refused(tg, ISA_ALU_SUBTRACT, true, ISA_ALU_BYPASS, false, "field 'operand0'");
        ts_act_refused(tg, ISA_ALU_MULTIPLY, false, ISA_ALU_SUBTRACT, true, "field 'operand1'");
        ts_act_refused(tg, ISA_ALU_MULTIPLY, true, ISA_ALU_ADD, true, NULL);
    }
    ts_act_refused("trn1", ISA_ALU_MULTIPLY, true, ISA_ALU_ADD, false,
                   "field 'operand1': with a [P, 1] operand0");
    ts_act_refused("trn3", ISA_ALU_MULTIPLY, true, ISA_ALU_ADD, false, NULL);
}

/* load_tensor_to_register without an engine is EngineType.ALL: one
 * TensorLoad (L1 75) per TPB engine, same register and source; with an
 * engine, only that one. */
static void test_tload_all_engines(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_INT32, 128, 4);
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD_TENSOR_TO_REGISTER);
    op.src[0] = bu_in(&k, bu_ap(a, 2, 2, (int64_t)4, (int64_t)1, (int64_t)1, (int64_t)2));
    op.nsrc = 1;
    TIR_RARE_SET(&k, &op, reg, 7);
    bu_op(&k, &op, "ltr");
    op.engine = ISA_ENG_ACT;
    bu_op(&k, &op, "ltr_act");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(bu_count(&r, ISA_OP_TENSOR_LOAD), 6);
    unsigned seen = 0;
    for (int i = 0; i < 5; i++) {
        bir_inst_t *t = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_LOAD, i)];
        assert_int_equal(t->opc, BIR_TENSOR_LOAD);
        assert_int_equal(t->isa.f->TLOAD.reg, 7);
        assert_int_equal(t->isa.f->TLOAD.count, 2);
        assert_int_equal(t->isa.f->TLOAD.src.addr, r.m.mlocs[a].addr + 2 * 4);
        seen |= 1u << t->engine;
    }
    for (int e = 0; e < 5; e++)
        assert_true(seen >> isa_tpb_engines[e] & 1u);
    assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_LOAD, 5)].engine, ISA_ENG_ACT);
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_tap_limits(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 40000);
    int b = BU_T(&k, "b", TIR_T_SBUF, ISA_DT_FP32, 128, 2);
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_COPY);
    op.dst = bu_whole(&k, b);
    op.src[0] = bu_in(&k, bu_ap(a, 0, 2, (int64_t)40000, (int64_t)128, (int64_t)39999, (int64_t)2));
    op.nsrc = 1;
    bu_op(&k, &op, "far");
    bu_run_t r;
    assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_non_null(strstr(r.err.msg, "16-bit step"));
    bu_free(&r);
    /* the start-partition rule (ARCH2): 32 partitions at 16, one at 1 and
     * 40 at 32 are refused; 32 at 64, one at 96 and 40 at 64 are not */
    static const int64_t bad[][2] = { {16, 32}, {1, 1}, {32, 40} }, good[][2] = { {64, 32}, {96, 1}, {64, 40} };
    for (int i = 0; i < 3; i++) {
        const int64_t *c = bad[i];
        k.ops[0].src[0] = bu_in(&k, bu_ap(a, c[0] * 40000, 2, (int64_t)40000, c[1], (int64_t)1, (int64_t)2));
        k.ops[0].dst = bu_in(&k, bu_ap(b, c[0] * 2, 2, (int64_t)2, c[1], (int64_t)1, (int64_t)2));
        assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
        char want[96];
        snprintf(want, sizeof want, "starts at partition %lld, which is not allowed for %lld partitions",
                 (long long)c[0], (long long)c[1]);
        assert_non_null(strstr(r.err.msg, want));
        bu_free(&r);
        c = good[i];
        k.ops[0].src[0] = bu_in(&k, bu_ap(a, c[0] * 40000, 2, (int64_t)40000, c[1], (int64_t)1, (int64_t)2));
        k.ops[0].dst = bu_in(&k, bu_ap(b, c[0] * 2, 2, (int64_t)2, c[1], (int64_t)1, (int64_t)2));
        assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
        bu_free(&r);
    }
    /* another start partition for dst: the cross-quadrant movement (ARCH2) */
    k.ops[0].src[0] = bu_in(&k, bu_ap(a, 0, 2, (int64_t)40000, (int64_t)32, (int64_t)1, (int64_t)2));
    k.ops[0].dst = bu_in(&k, bu_ap(b, 32 * 2, 2, (int64_t)2, (int64_t)32, (int64_t)1, (int64_t)2));
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    bu_free(&r);
    /* partition count mismatch */
    k.ops[0].src[0] = bu_in(&k, bu_ap(a, 0, 2, (int64_t)40000, (int64_t)64, (int64_t)1, (int64_t)1));
    k.ops[0].dst = bu_in(&k, bu_ap(b, 0, 2, (int64_t)2, (int64_t)32, (int64_t)1, (int64_t)2));
    assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_non_null(strstr(r.err.msg, "tensorcopy src start_partition(0) or dst start_partition(0) "
                                      "mismatch (64 vs 32 partitions)"));
    bu_free(&r);
    /* tensor_tensor: dst may start elsewhere (partition 64), and so may
     * either input (each by the movement rule: autocomp's RoPE reference,
     * run on trn1 hardware, adds partitions 64..127 to 0..63) */
    tir_op_t tt;
    tir_op_init(&tt, TIR_TENSOR_TENSOR);
    tt.src[0] = bu_in(&k, bu_ap(b, 0, 2, (int64_t)2, (int64_t)32, (int64_t)1, (int64_t)2));
    tt.src[1] = bu_in(&k, bu_ap(b, 0, 2, (int64_t)2, (int64_t)32, (int64_t)1, (int64_t)2));
    tt.dst = bu_in(&k, bu_ap(b, 64 * 2, 2, (int64_t)2, (int64_t)32, (int64_t)1, (int64_t)2));
    tt.nsrc = 2, tt.name = k.ops[0].name, tt.path = k.ops[0].path;
    k.ops[0] = tt;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    bu_free(&r);
    k.ops[0].src[1] = bu_in(&k, bu_ap(b, 32 * 2, 2, (int64_t)2, (int64_t)32, (int64_t)1, (int64_t)2));
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    bu_free(&r);
    /* an input whose start the movement rule refuses: 48 partitions from 16 */
    k.ops[0].src[0] = bu_in(&k, bu_ap(b, 16 * 2, 2, (int64_t)2, (int64_t)48, (int64_t)1, (int64_t)2));
    k.ops[0].src[1] = bu_in(&k, bu_ap(b, 0, 2, (int64_t)2, (int64_t)48, (int64_t)1, (int64_t)2));
    k.ops[0].dst = bu_in(&k, bu_ap(b, 0, 2, (int64_t)2, (int64_t)48, (int64_t)1, (int64_t)2));
    assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_non_null(strstr(r.err.msg, "starts at partition 16"));
    bu_free(&r);
    /* SBUF rows 0.. plus PSUM rows 32.. (the NKI Library's qkv_tkg
     * accumulating array-tiled PSUM) */
    k.ops[0].src[0] = bu_in(&k, bu_ap(b, 0, 2, (int64_t)2, (int64_t)32, (int64_t)1, (int64_t)2));
    k.ops[0].dst = bu_in(&k, bu_ap(b, 64 * 2, 2, (int64_t)2, (int64_t)32, (int64_t)1, (int64_t)2));
    int ps = BU_T(&k, "ps", TIR_T_PSUM, ISA_DT_FP32, 128, 2);
    k.ops[0].src[1] = bu_in(&k, bu_ap(ps, 32 * 2, 2, (int64_t)2, (int64_t)32, (int64_t)1, (int64_t)2));
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_dve_transpose_blocks(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 64, 32);
    int b = BU_T(&k, "b", TIR_T_SBUF, ISA_DT_FP32, 32, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_TRANSPOSE);
    op.dst = bu_whole(&k, b), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    op.engine = ISA_ENG_DVE;
    bu_op(&k, &op, "tr");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(bu_count(&r, ISA_OP_TRANSPOSE32), 2);
    bir_inst_t *t1 = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TRANSPOSE32, 1)];
    /* block (32..63, 0..31) of a -> block (0..31, 32..63) of b */
    assert_int_equal(t1->isa.f->COPY.in.start, 32);
    assert_int_equal(t1->isa.f->COPY.out.start, 0);
    assert_int_equal(t1->isa.f->COPY.out.addr, r.m.mlocs[b].addr + 32 * 4);
    assert_int_equal(t1->engine, ISA_ENG_DVE);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* enableLDWOpt: an LdWeights identical to the previous one is dropped only
 * when nothing wrote the weights' memory and no other weight user came
 * between. */
static void test_ldw_opt(void **state)
{
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        tir_kernel_t k;
        tir_kernel_init(&k);
        int w = BU_T(&k, "w", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
        int x = BU_T(&k, "x", TIR_T_SBUF, ISA_DT_FP32, 128, 512);
        int p1 = BU_T(&k, "p1", TIR_T_PSUM, ISA_DT_FP32, 64, 512);
        int p2 = BU_T(&k, "p2", TIR_T_PSUM, ISA_DT_FP32, 64, 512);
        tir_op_t op;
        tir_op_init(&op, TIR_MATMUL);
        op.dst = bu_whole(&k, p1), op.src[0] = bu_whole(&k, w), op.src[1] = bu_whole(&k, x);
        op.nsrc = 2;
        bu_op(&k, &op, "mm1");
        if (variant == 1) {   /* the weights' memory is rewritten in between */
            tir_op_t ms;
            tir_op_init(&ms, TIR_MEMSET);
            ms.dst = bu_whole(&k, w); TIR_RARE_SET(&k, &ms, value, 1.0);
            bu_op(&k, &ms, "ms");
        }
        if (variant == 2) {   /* a transpose-mode Matmul uses PE differently */
            /* NKI is_transpose roles: stationary = data [64, 128], moving =
             * an identity [64, 64], dst = data.T [128, 64] */
            int t = BU_T(&k, "t", TIR_T_SBUF, ISA_DT_FP32, 64, 128);
            int id = BU_T(&k, "id", TIR_T_SBUF, ISA_DT_FP32, 64, 64);
            int pt = BU_T(&k, "pt", TIR_T_PSUM, ISA_DT_FP32, 128, 64);
            tir_op_t tr;
            tir_op_init(&tr, TIR_MATMUL);
            tr.flags |= TIR_F_TRANSPOSE;
            tr.dst = bu_whole(&k, pt), tr.src[0] = bu_whole(&k, t), tr.src[1] = bu_whole(&k, id);
            tr.nsrc = 2;
            bu_op(&k, &tr, "tr");
        }
        op.dst = bu_whole(&k, p2);
        bu_op(&k, &op, "mm2");
        bu_run_t r;
        assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
        /* the transpose-mode Matmul loads its data as weights too */
        int ldw = variant == 2 ? 3 : 2;
        assert_int_equal(bu_count(&r, ISA_OP_LDWEIGHTS), ldw);
        int removed = lw_ldw_opt(&r.m);
        assert_int_equal(removed, variant == 0 ? 1 : 0);
        assert_int_equal(bu_count(&r, ISA_OP_LDWEIGHTS), variant == 0 ? 1 : ldw);
        assert_int_equal(bu_count(&r, ISA_OP_MATMUL), variant == 2 ? 3 : 2);
        bu_free(&r);
        tir_kernel_free(&k);
    }
}

/* codegenNoOp: a noop lowers to nothing. */
static void test_noop_emits_nothing(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 4);
    tir_op_t op;
    tir_op_init(&op, TIR_MEMSET);
    op.dst = bu_whole(&k, a); TIR_RARE_SET(&k, &op, value, 1.0);
    bu_op(&k, &op, "ms");
    tir_op_init(&op, TIR_NOOP);
    bu_op(&k, &op, "nothing");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_int_equal(bu_block(&r)->ninsts, 1);
    bu_free(&r);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_plain),
        cmocka_unit_test(test_matmul_mx_sparse),
        cmocka_unit_test(test_matmul_errors),
        cmocka_unit_test(test_matmul_wide),
        cmocka_unit_test(test_activation),
        cmocka_unit_test(test_tensor_scalar),
        cmocka_unit_test(test_reverse_pred_keep_rate),
        cmocka_unit_test(test_tsc_needs_op1),
        cmocka_unit_test(test_reduce_local_and_chain),
        cmocka_unit_test(test_reduce_multistep),
        cmocka_unit_test(test_reduce_per_axis),
        cmocka_unit_test(test_memset_fill_bits),
        cmocka_unit_test(test_max8_family_and_select),
        cmocka_unit_test(test_bir_numbering),
        cmocka_unit_test(test_ldw_opt),
        cmocka_unit_test(test_noop_emits_nothing),
        cmocka_unit_test(test_tload_all_engines),
        cmocka_unit_test(test_copy_on_act_is_identity_activation),
        cmocka_unit_test(test_tensor_scalar_ptr_on_act),
        cmocka_unit_test(test_tensor_scalar_act_combinations),
        cmocka_unit_test(test_match_replace_imm_clipped),
        cmocka_unit_test(test_tap_limits),
        cmocka_unit_test(test_dve_transpose_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
