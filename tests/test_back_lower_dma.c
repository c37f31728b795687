/* DMA lowering: descriptors, casts, complicated and indirect DMAs,
 * transposes and partition broadcast. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "back_util.h"


static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

/* Seed 002 §6: a collective's pull carries its replica groups on every
 * DMA instruction; a peer-SBUF source (the cc-expr gate) gets the
 * relative core field, a peer outside the group is refused. */
static void test_dma_cc_ap(void **state)
{
    (void)state;
    for (int peer = 3; peer >= 2; peer--) {
        tir_kernel_t k;
        tir_kernel_init(&k);
        k.num_cores = 4;
        int s = BU_T(&k, "s", TIR_T_SBUF, ISA_DT_FP32, 128, 16);
        int d = BU_T(&k, "d", TIR_T_SBUF, ISA_DT_FP32, 128, 16);
        tir_op_t op;
        tir_op_init(&op, TIR_DMA_COPY);
        op.dst = bu_whole(&k, d);
        op.src[0] = bu_whole(&k, s);
        op.nsrc = 1;
        op.core = 1;
        const int8_t groups[8] = {0, 1, 0, 1, -1, -1, -1, -1};   /* [[0, 2], [1, 3]] */
        tir_op_rare_t rare = tir_rare_default;
        memcpy(rare.rgroup, groups, sizeof groups);
        rare.remote_core = peer;
        op.rare = bu_rare(&k, rare);
        bu_op(&k, &op, "pull");
        bu_run_t r;
        if (peer == 2) {   /* core 1's group is [1, 3] */
            assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
            assert_non_null(strstr(r.err.msg, "collective peer core 2 is outside replica group 1"));
        } else {
            assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
            bir_inst_t *de = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_DIRECT2D, 0)];
            bir_inst_t *tr = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)];
            assert_int_equal(de->isa.f->DDESC.src.core, 2);   /* 3 - 1 */
            assert_int_equal(de->isa.f->DDESC.dst.core, 0);
            assert_int_equal(bir_rare(de)->nreplica, 4);
            assert_int_equal(bir_rare(tr)->nreplica, 4);
            assert_memory_equal(bir_rare(de)->replica, groups, 4);
            assert_memory_equal(bir_rare(tr)->replica, groups, 4);
        }
        bu_free(&r);
        tir_kernel_free(&k);
    }
}

/* codegenLocalReduceOp (seed 001 s.5.1): the accumulating pull of an HBM
 * all_reduce / reduce_scatter is a Reduce (38) carrying setop, setKind,
 * setLocal(True) and the replica groups; its descriptors are the ones the
 * ordinary DMA builder makes (codegenNdDMAAP), with the add compute op. */
static void test_dma_local_reduce(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    k.num_cores = 2;
    int x = BU_T(&k, "x", TIR_T_INPUT, ISA_DT_FP32, 64, 32);
    int o = BU_T(&k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 64, 32);
    tir_op_t op;
    tir_op_init(&op, TIR_DMA_COPY);
    op.dst = bu_whole(&k, o), op.src[0] = bu_whole(&k, x), op.nsrc = 1;
    op.core = 0;
    const int8_t groups[8] = {0, 0, -1, -1, -1, -1, -1, -1};
    tir_op_rare_t rare = tir_rare_default;
    memcpy(rare.rgroup, groups, sizeof groups);
    op.rare = bu_rare(&k, rare);
    bu_op(&k, &op, "plain");
    op.flags = TIR_F_RMW_ADD;
    TIR_RARE_SET(&k, &op, local_reduce, TIR_REDUCE_SCATTER);
    op.op0 = ISA_ALU_ADD;
    bu_op(&k, &op, "lr");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    bir_inst_t *p = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)];
    bir_inst_t *tr = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 1)];
    assert_int_equal(p->opc, BIR_DMA_COPY);
    assert_int_equal(bir_rare(p)->red_local, 0);
    assert_int_equal(tr->opc, BIR_REDUCE);
    assert_int_equal(BIR_REDUCE, 38);
    assert_string_equal(bir_opcode_name(tr->opc), "Reduce");
    assert_int_equal(bir_rare(tr)->red_op, ISA_ALU_ADD);
    assert_int_equal(bir_rare(tr)->red_kind, BIR_RKIND_REDUCE_SCATTER);
    assert_true(bir_rare(tr)->red_local);
    assert_int_equal(bir_rare(tr)->nreplica, 2);
    assert_memory_equal(bir_rare(tr)->replica, groups, 2);
    bir_inst_t *pd = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_DIRECT2D, 0)];
    bir_inst_t *rd = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_DIRECT2D, 1)];
    assert_int_equal(pd->isa.f->DDESC.compute, ISA_DMAOP_BYPASS);
    assert_int_equal(rd->isa.f->DDESC.compute, ISA_DMAOP_ADD);
    /* the same access pattern as the plain copy: one builder */
    assert_memory_equal(&rd->isa.f->DDESC.src, &pd->isa.f->DDESC.src, sizeof(isa_dap_t));
    assert_memory_equal(&rd->isa.f->DDESC.dst, &pd->isa.f->DDESC.dst, sizeof(isa_dap_t));
    bu_free(&r);
    /* the DMA computes add only */
    k.ops[1].op0 = ISA_ALU_MAX;
    assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_non_null(strstr(r.err.msg, "LocalReduce with operator max: the DMA computes add only"));
    bu_free(&r);
    tir_kernel_free(&k);
}

/* A store nobody pinned is issued by Pool (lower_dma.c store_issuer) also
 * when it sets a DMA option (qos, a register offset), which the op keeps
 * in its rare record since the thirty-third session; a per-kind rare field
 * (a collective transfer's replica groups) keeps the issuer (SP).  With
 * "any rare record" as the test the first two moved to SP (compile_identity:
 * golden dynamic_offset_dma). */
static void test_store_issuer_dma_options(void **state)
{
    (void)state;
    for (int v = 0; v < 4; v++) {
        tir_kernel_t k;
        tir_kernel_init(&k);
        int o = BU_T(&k, "o", TIR_T_OUTPUT, ISA_DT_FP32, 128, 512);
        int t = BU_T(&k, "t", TIR_T_SBUF, ISA_DT_FP32, 128, 512);
        tir_op_t op;
        tir_op_init(&op, TIR_MEMSET);
        op.dst = bu_whole(&k, t), op.engine = ISA_ENG_DVE;
        bu_op(&k, &op, "ms");
        tir_op_init(&op, TIR_STORE);
        op.dst = bu_whole(&k, o);
        op.src[0] = bu_whole(&k, t);
        op.nsrc = 1;
        tir_op_rare_t rare = tir_rare_default;
        if (v == 1)
            rare.qos = 5;
        if (v == 2)
            rare.dge_mode = ISA_DGE_NONE, rare.oob_mode = ISA_OOB_ERROR, rare.dma_scale = 1.0f;
        if (v == 3)
            memset(rare.rgroup, 0, sizeof rare.rgroup);
        op.rare = bu_rare(&k, rare);
        bu_op(&k, &op, "st");
        bu_run_t r;
        assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
        bir_inst_t *tr = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)];
        assert_int_equal(tr->engine, v == 3 ? ISA_ENG_SP : ISA_ENG_POOL);
        bu_free(&r);
        tir_kernel_free(&k);
    }
}

static void test_dma_simple(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_INPUT, ISA_DT_FP32, 256, 512);
    int t = BU_T(&k, "t", TIR_T_SBUF, ISA_DT_FP32, 128, 512);
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(&k, t);
    op.src[0] = bu_in(&k, bu_ap(a, 128 * 512, 2, (int64_t)512, (int64_t)128, (int64_t)1, (int64_t)512));
    op.nsrc = 1;
    TIR_RARE_SET(&k, &op, qos, 5);
    bu_op(&k, &op, "ld");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_DIRECT2D), 1);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_TRIGGER), 1);
    bir_inst_t *d = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_DIRECT2D, 0)];
    isa_fmt_DDESC_t *f = &d->isa.f->DDESC;
    /* HBM side: rows of 512 fp32 = 2048 B apart; contiguous run of 512 */
    assert_int_equal(f->src.space, ISA_SPACE_HBM);
    assert_int_equal(f->src.addr, r.hbm.addr[a] + 128 * 512 * 4);
    assert_int_equal(f->src.step[0], 4);
    assert_int_equal(f->src.count[0], 512);
    assert_int_equal(f->src.step[1], 2048);
    assert_int_equal(f->src.count[1], 128);
    /* SBUF side: partition pitch 2^18 */
    assert_int_equal(f->dst.space, ISA_SPACE_SBUF);
    assert_int_equal(f->dst.step[1], ISA_DMA_PARTITION_PITCH);
    assert_int_equal(f->dst.count[1], 128);
    assert_int_equal(f->dst.step[0], 4);
    assert_int_equal(f->qos, 5);
    assert_int_equal(f->transpose, 0);   /* CopyMode Copy = 0 */
    assert_int_equal(f->src_reg, ISA_REG_NONE);
    bir_inst_t *tr = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)];
    assert_int_equal(tr->isa.f->DTRIG.ndesc, 1);
    assert_int_equal(tr->isa.f->DTRIG.queue, f->queue);
    assert_int_equal(tr->engine, ISA_ENG_SP);
    assert_int_equal(tr->opc, BIR_INST_LOAD);      /* a load's trigger is InstLoad (19) */
    assert_int_equal(d->opc, BIR_DMA_DESC);
    assert_string_equal(r.m.queues[f->queue].name, "qSyncIO0");
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_dma_casts(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, 64);
    int t = BU_T(&k, "t", TIR_T_SBUF, ISA_DT_BF16, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(&k, t), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    bu_op(&k, &op, "ld_cast");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    bir_inst_t *d = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_DIRECT2D, 0)];
    /* steps are per side, in that side's bytes */
    assert_int_equal(d->isa.f->DDESC.src.dtype, ISA_DT_FP32);
    assert_int_equal(d->isa.f->DDESC.dst.dtype, ISA_DT_BF16);
    assert_int_equal(d->isa.f->DDESC.src.step[0], 4);
    assert_int_equal(d->isa.f->DDESC.dst.step[0], 2);
    assert_int_equal(d->isa.f->DDESC.src.step[1], 64 * 4);
    assert_int_equal(d->isa.f->DDESC.dst.step[1], ISA_DMA_PARTITION_PITCH);
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_dma_complicated_and_limit(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_INPUT, ISA_DT_FP32, 4, 8, 64);
    int t = BU_T(&k, "t", TIR_T_SBUF, ISA_DT_FP32, 8, 4, 32);
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(&k, t);
    /* a[j, p, 0:32] -> t[p, j, :]: 3 joint dims (p, j, 32 contiguous) */
    op.src[0] = bu_in(&k, bu_ap(a, 0, 3, (int64_t)64, (int64_t)8, (int64_t)512, (int64_t)4, (int64_t)1,
                      (int64_t)32));
    op.nsrc = 1;
    bu_op(&k, &op, "ld3");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    /* complicated (3 joint dims > dma_max_strides 2): ONE multi-dim
     * descriptor, the 3-D wire format picked from the dim count */
    assert_int_equal(bu_count(&r, ISA_OP_DMA_DIRECT2D), 0);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_DIRECT3D), 1);
    bir_inst_t *tr = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)];
    assert_int_equal(tr->isa.f->DTRIG.ndesc, 1);
    bir_inst_t *m3 = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_DIRECT3D, 0)];
    assert_int_equal(m3->opc, BIR_DMA_DESC);   /* one BIR descriptor kind; wire form downstream */
    const isa_fmt_D3DESC_t *g = &m3->isa.f->D3DESC;
    assert_int_equal(g->src.addr, r.hbm.addr[a]);
    assert_int_equal(g->dst.addr, r.m.mlocs[t].addr);
    assert_int_equal(g->src.step[0], 4);
    assert_int_equal(g->src.count[0], 32);
    assert_int_equal(g->src.step[1], 512 * 4);   /* j */
    assert_int_equal(g->dst.step[1], 32 * 4);
    assert_int_equal(g->src.count[1], 4);
    assert_int_equal(g->count2, 8);              /* p: the outer dim, shared */
    assert_int_equal(g->src_step2, 64 * 4);
    assert_int_equal(g->dst_step2, ISA_DMA_PARTITION_PITCH);
    assert_int_equal(g->queue, tr->isa.f->DTRIG.queue);
    assert_int_equal(g->src_reg, ISA_REG_NONE);
    bu_free(&r);
    /* the N-2-D fallback on a target without the 3-D format: inner 2 joint
     * dims per descriptor (j: 4 x 32 elems), outer p enumerated */
    tpb_target_t two = *trn2();
    two.dma_desc_dims = 2;
    assert_int_equal(bu_lower(&r, &k, &two, true), 0);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_DIRECT2D), 8);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_DIRECT3D), 0);
    tr = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)];
    assert_int_equal(tr->isa.f->DTRIG.ndesc, 8);
    bir_inst_t *d3 = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_DIRECT2D, 3)];
    assert_int_equal(d3->isa.f->DDESC.src.addr, r.hbm.addr[a] + 3 * 64 * 4);
    assert_int_equal(d3->isa.f->DDESC.dst.addr, 3 * ISA_DMA_PARTITION_PITCH + r.m.mlocs[t].addr);
    assert_int_equal(d3->isa.f->DDESC.src.step[1], 512 * 4);
    assert_int_equal(d3->isa.f->DDESC.dst.step[1], 32 * 4);
    bu_free(&r);
    /* a scaled transfer (dma_compute) stays 2-D: D3DESC has no scale */
    TIR_RARE_SET(&k, &k.ops[0], dma_scaled, true);
    TIR_RARE_SET(&k, &k.ops[0], dma_scale, 2.0f);
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_DIRECT2D), 8);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_DIRECT3D), 0);
    bu_free(&r);
    TIR_RARE_SET(&k, &k.ops[0], dma_scaled, false);
    /* without the 3-D format, on a target that allows only 4 descriptors
     * per DMA: the 8 descriptors cannot be legalised */
    tpb_target_t small = *trn2();
    small.dma_max_descriptors = 4;
    small.dma_desc_dims = 2;
    assert_int_not_equal(bu_lower(&r, &k, &small, false), 0);
    assert_non_null(strstr(r.err.msg, "Cannot legalize strided load!"));
    bu_free(&r);
    /* and as a store */
    tir_kernel_t k2;
    tir_kernel_init(&k2);
    a = BU_T(&k2, "a", TIR_T_OUTPUT, ISA_DT_FP32, 4, 8, 64);
    t = BU_T(&k2, "t", TIR_T_SBUF, ISA_DT_FP32, 8, 4, 32);
    tir_op_init(&op, TIR_STORE);
    op.src[0] = bu_whole(&k2, t);
    op.dst = bu_in(&k2, bu_ap(a, 0, 3, (int64_t)64, (int64_t)8, (int64_t)512, (int64_t)4, (int64_t)1,
                   (int64_t)32));
    op.nsrc = 1;
    bu_op(&k2, &op, "st3");
    assert_int_not_equal(bu_lower(&r, &k2, &small, false), 0);
    assert_non_null(strstr(r.err.msg, "Cannot legalize strided store!"));
    bu_free(&r);
    tir_kernel_free(&k2);
    tir_kernel_free(&k);
}

/* A load "name" of src dims (outer,3,4,16) steps (500,130,33,1) into a tile
 * [outer partitions, 192 contiguous] (none of the dims collapses), lowered
 * into r; *a, *t: the two tensors. */
static void load_4d(tir_kernel_t *k, bu_run_t *r, int64_t outer, const char *name, int *a, int *t)
{
    tir_kernel_init(k);
    *a = BU_T(k, "a", TIR_T_INPUT, ISA_DT_FP32, 8192);
    *t = BU_T(k, "t", TIR_T_SBUF, ISA_DT_FP32, outer, 192);
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(k, *t);
    op.src[0] = bu_in(k, bu_ap(*a, 0, 4, (int64_t)500, outer, (int64_t)130, (int64_t)3,
                               (int64_t)33, (int64_t)4, (int64_t)1, (int64_t)16));
    op.nsrc = 1;
    bu_op(k, &op, name);
    assert_int_equal(bu_lower(r, k, trn2(), true), 0);
}

/* 4 joint dims: more than one 3-D descriptor holds, so the dim past the
 * third is enumerated: count3 PseudoDmaDirect3d under one trigger. */
static void test_dma_multidim_4d(void **state)
{
    (void)state;
    tir_kernel_t k;
    bu_run_t r;
    int a, t;
    load_4d(&k, &r, 8, "ld4", &a, &t);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_DIRECT2D), 0);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_DIRECT3D), 8);
    bir_inst_t *tr = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)];
    assert_int_equal(tr->isa.f->DTRIG.ndesc, 8);
    for (int i = 0; i < 8; i++)   /* one queue for the op's descriptors and its trigger */
        assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_DIRECT3D, i)].isa.f->D3DESC.queue,
                         tr->isa.f->DTRIG.queue);
    const isa_fmt_D3DESC_t *g = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_DIRECT3D, 5)].isa.f->D3DESC;
    assert_int_equal(g->src.addr, r.hbm.addr[a] + 5 * 500 * 4);
    assert_int_equal(g->dst.addr, 5 * ISA_DMA_PARTITION_PITCH + r.m.mlocs[t].addr);
    assert_int_equal(g->src.count[0], 16);
    assert_int_equal(g->src.step[1], 33 * 4);
    assert_int_equal(g->dst.step[1], 16 * 4);
    assert_int_equal(g->src.count[1], 4);
    assert_int_equal(g->count2, 3);
    assert_int_equal(g->src_step2, 130 * 4);
    assert_int_equal(g->dst_step2, 64 * 4);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* An op's instructions are named "<name>", "<name>.1", ...: 12
 * descriptors and a trigger cross from one-digit to two-digit tails. */
static void test_dma_inst_names(void **state)
{
    (void)state;
    tir_kernel_t k;
    bu_run_t r;
    int a, t;
    load_4d(&k, &r, 12, "ld", &a, &t);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_DIRECT3D), 12);
    const char *want[] = {"ld", "ld.1", "ld.2", "ld.9", "ld.10", "ld.11", "ld.12"};
    const int at[] = {0, 1, 2, 9, 10, 11, 12};
    for (int i = 0; i < 7; i++) {
        const bir_inst_t *in = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_DIRECT3D, 0) + at[i]];
        assert_string_equal(in->name, want[i]);
    }
    bu_free(&r);
    tir_kernel_free(&k);
}

/* Partition-AP re-derivation (seed 002 tonga_partition_ap): a load into
 * every other partition names 64 partitions over a hull of 127, so the
 * tile side's partition step is re-derived as 2 partitions; a contiguous
 * access keeps its own one-partition step.  The validator accepts the
 * stride on direct DMAs only. */
static void test_dma_partition_stride(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_INPUT, ISA_DT_FP32, 64, 16);
    int t = BU_T(&k, "t", TIR_T_SBUF, ISA_DT_FP32, 128, 16);
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_in(&k, bu_ap(t, 16, 2, (int64_t)32, (int64_t)64, (int64_t)1, (int64_t)16));   /* t[1:128:2] */
    op.src[0] = bu_whole(&k, a);
    op.nsrc = 1;
    bu_op(&k, &op, "ld_odd");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_DIRECT2D), 1);
    bir_inst_t *d = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_DIRECT2D, 0)];
    const isa_fmt_DDESC_t *f = &d->isa.f->DDESC;
    assert_int_equal(f->dst.addr, ISA_DMA_PARTITION_PITCH + r.m.mlocs[t].addr);
    assert_int_equal(f->dst.step[1], 2 * ISA_DMA_PARTITION_PITCH);
    assert_int_equal(f->dst.count[1], 64);
    assert_int_equal(f->dst.step[0], 4);
    assert_int_equal(f->src.step[1], 64);
    /* the trigger's write range: the hull, partitions 1..127 */
    bir_inst_t *tr = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)];
    bool found = false;
    for (int i = 0; i < tr->nacc; i++)
        if (tr->acc[i].write) {
            assert_int_equal(tr->acc[i].p0, 1);
            assert_int_equal(tr->acc[i].p1, 128);
            found = true;
        }
    assert_true(found);
    bu_free(&r);
    /* a stride that is not a whole number of partitions stays refused */
    BU_EDIT(&k, k.ops[0].dst, step[0], 24);
    assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_non_null(strstr(r.err.msg, "must step over partitions"));
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_dma_indirect(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int tab = BU_T(&k, "table", TIR_T_INPUT, ISA_DT_FP32, 1000, 64);
    int out = BU_T(&k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 1000, 64);
    int idx = BU_T(&k, "idx", TIR_T_SBUF, ISA_DT_INT32, 128, 1);
    int t = BU_T(&k, "t", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_INDIRECT_LOAD);
    op.dst = bu_whole(&k, t);
    op.src[0] = bu_in(&k, bu_ap(tab, 0, 2, (int64_t)64, (int64_t)128, (int64_t)1, (int64_t)64));
    op.index = bu_whole(&k, idx);
    op.nsrc = 1;
    TIR_RARE_SET(&k, &op, oob_mode, ISA_OOB_SKIP);
    bu_op(&k, &op, "gather");
    tir_op_init(&op, TIR_INDIRECT_SAVE);
    op.src[0] = bu_whole(&k, t);
    op.dst = bu_in(&k, bu_ap(out, 0, 2, (int64_t)64, (int64_t)128, (int64_t)1, (int64_t)64));
    op.index = bu_whole(&k, idx);
    op.nsrc = 1;
    op.flags = TIR_F_RMW_ADD;
    bu_op(&k, &op, "scatter_add");
    bu_run_t r;
    int rc = bu_lower(&r, &k, trn2(), true);
    if (rc)
        print_error("%s\n", r.err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_INDIRECT2D), 2);
    bir_inst_t *g = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_INDIRECT2D, 0)];
    assert_int_equal(g->engine, ISA_ENG_POOL);
    assert_int_equal(g->isa.f->DIND.scatter, 0);
    assert_int_equal(g->isa.f->DIND.oob, ISA_OOB_SKIP);
    assert_int_equal(g->isa.f->DIND.src.step[1], 64 * 4);     /* row pitch */
    assert_int_equal(g->isa.f->DIND.src.count[1], 1000);      /* reachable rows */
    assert_int_equal(g->isa.f->DIND.src.count[0], 64);
    assert_int_equal(g->isa.f->DIND.dst.count[1], 128);
    assert_int_equal(g->isa.f->DIND.idx.nparts, 128);
    bir_inst_t *s = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_INDIRECT2D, 1)];
    assert_int_equal(s->isa.f->DIND.scatter, 1);
    assert_int_equal(s->isa.f->DIND.compute, ISA_DMAOP_ADD);
    /* L1 opcodes of the triggers: gather = GenericIndirectLoad, scatter-add =
     * DMACopy with the add compute op (seed 002's RMW fork) */
    assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)].opc,
                     BIR_GENERIC_INDIRECT_LOAD);
    assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 1)].opc, BIR_DMA_COPY);
    bu_free(&r);
    /* a plain scatter (overwrite) is GenericIndirectSave */
    k.ops[1].flags = 0;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 1)].opc,
                     BIR_GENERIC_INDIRECT_SAVE);
    bu_free(&r);
    k.ops[1].flags = TIR_F_RMW_ADD;
    /* scatter-add in dynamic (DGE vector-indirect) mode is refused on trn2 */
    TIR_RARE_SET(&k, &k.ops[1], dge_mode, ISA_DGE_HW);
    assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_non_null(strstr(r.err.msg, "IndirectRMW does not support dynamic DMA mode"));
    bu_free(&r);
    /* a gather with dge_mode hw: the dynamic form (dge hw, OOB skip) on trn2,
     * the standard form (dge sw) on trn1, which has no vector-indirect DGE */
    TIR_RARE_SET(&k, &k.ops[1], dge_mode, ISA_DGE_NONE);
    TIR_RARE_SET(&k, &k.ops[0], dge_mode, ISA_DGE_HW);
    TIR_RARE_SET(&k, &k.ops[0], oob_mode, ISA_OOB_ERROR);
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    g = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_INDIRECT2D, 0)];
    assert_int_equal(g->isa.f->DIND.dge, ISA_DGE_HW);
    assert_int_equal(g->isa.f->DIND.oob, ISA_OOB_SKIP);
    bu_free(&r);
    assert_int_equal(bu_lower(&r, &k, tpb_target_get("trn1"), true), 0);
    g = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_INDIRECT2D, 0)];
    assert_int_equal(g->isa.f->DIND.dge, ISA_DGE_SW);
    assert_int_equal(g->isa.f->DIND.oob, ISA_OOB_ERROR);
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_dma_transpose(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_INPUT, ISA_DT_BF16, 64, 128);
    int t = BU_T(&k, "t", TIR_T_SBUF, ISA_DT_BF16, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_DMA_TRANSPOSE);
    op.dst = bu_whole(&k, t), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    tir_op_rare_t rare = tir_rare_default;
    rare.n_transpose_axes = 2, rare.transpose_axes[0] = 1, rare.transpose_axes[1] = 0;
    op.rare = bu_rare(&k, rare);
    bu_op(&k, &op, "dt");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    bir_inst_t *d = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_DIRECT2D, 0)];
    assert_int_equal(d->engine, ISA_ENG_POOL);
    assert_int_equal(d->isa.f->DDESC.transpose, 1);   /* CopyMode Transpose */
    assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)].opc, BIR_DMA_COPY);
    /* setTransposeOp(XZYW): TransposeOps 11 on the transfer's trigger */
    assert_int_equal(bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)].isa.f->DTRIG.transpose_op,
                     11);
    assert_int_equal(ISA_XPOSE_XZYW, 11);
    /* dst[p, j] = src[j, p]: src walks columns: inner step = a row (256 B) */
    assert_int_equal(d->isa.f->DDESC.src.step[0], 128 * 2);
    assert_int_equal(d->isa.f->DDESC.src.step[1], 2);
    bu_free(&r);
    k.ops[0].engine = ISA_ENG_SP;
    assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_non_null(strstr(r.err.msg, "pinned to the Pool engine"));
    bu_free(&r);
    k.ops[0].engine = ISA_ENG_UNASSIGNED;
    rare.transpose_axes[0] = 0;
    k.ops[0].rare = bu_rare(&k, rare);
    assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_non_null(strstr(r.err.msg, "[3,1,2,0]"));
    bu_free(&r);
    tir_kernel_free(&k);
}

/* DMAIndirectTranspose (seed 002 s.3): src [n, 1, 32] gathered by index
 * (dim 0), dst [32, 1, n] = the gathered rows transposed, in ONE indirect
 * descriptor: a gather descriptor on Pool, OOB skip forced,
 * a DMACopy trigger with transpose_op XZYW; the tile side's row step crosses
 * partitions and its per-index step is one element. */
static void test_dma_gather_transpose(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int tab = BU_T(&k, "table", TIR_T_INPUT, ISA_DT_FP32, 100, 1, 32);
    int idx = BU_T(&k, "idx", TIR_T_SBUF, ISA_DT_INT32, 128, 1);
    int t = BU_T(&k, "t", TIR_T_SBUF, ISA_DT_FP32, 32, 1, 128);
    tir_op_t op;
    tir_op_init(&op, TIR_DMA_TRANSPOSE);
    op.dst = bu_whole(&k, t);
    op.src[0] = bu_in(&k, bu_ap(tab, 0, 3, (int64_t)32, (int64_t)128, (int64_t)32, (int64_t)1, (int64_t)1,
                      (int64_t)32));
    op.index = bu_whole(&k, idx);
    op.nsrc = 1;
    tir_op_rare_t rare = tir_rare_default;
    rare.n_transpose_axes = 3, rare.transpose_axes[0] = 2, rare.transpose_axes[1] = 1;
    rare.transpose_axes[2] = 0;
    op.rare = bu_rare(&k, rare);
    bu_op(&k, &op, "gt");
    bu_run_t r;
    int rc = bu_lower(&r, &k, trn2(), true);
    if (rc)
        print_error("%s\n", r.err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_INDIRECT2D), 1);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_DIRECT2D), 0);
    bir_inst_t *g = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_INDIRECT2D, 0)];
    assert_int_equal(g->engine, ISA_ENG_POOL);
    assert_int_equal(g->isa.f->DIND.scatter, 0);
    assert_int_equal(g->isa.f->DIND.oob, ISA_OOB_SKIP);
    assert_int_equal(g->isa.f->DIND.src.count[0], 32);               /* one row */
    assert_int_equal(g->isa.f->DIND.src.step[1], 32 * 4);            /* row pitch */
    assert_int_equal(g->isa.f->DIND.dst.step[0], ISA_DMA_PARTITION_PITCH);   /* row -> partitions */
    assert_int_equal(g->isa.f->DIND.dst.step[1], 4);                 /* index j -> column j */
    assert_int_equal(g->isa.f->DIND.dst.count[1], 128);
    bir_inst_t *tr = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)];
    assert_int_equal(tr->opc, BIR_DMA_COPY);   /* notes: DMACopy with a transpose mode */
    assert_int_equal(tr->isa.f->DTRIG.transpose_op, ISA_XPOSE_XZYW);
    bu_free(&r);
    /* pinned to Pool; software DGE only */
    k.ops[0].engine = ISA_ENG_SP;
    assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_non_null(strstr(r.err.msg, "pinned to the Pool engine"));
    bu_free(&r);
    k.ops[0].engine = ISA_ENG_UNASSIGNED;
    TIR_RARE_SET(&k, &k.ops[0], dge_mode, ISA_DGE_HW);
    assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_non_null(strstr(r.err.msg, "software DGE"));
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_broadcast_partition(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 1, 64);
    int b = BU_T(&k, "b", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_BROADCAST_PARTITION);
    op.dst = bu_whole(&k, b), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    bu_op(&k, &op, "bc");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, tpb_target_get("trn1"), true), 0);
    assert_int_equal(bu_count(&r, ISA_OP_DMA_DIRECT2D), 1);
    bir_inst_t *d = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_DIRECT2D, 0)];
    assert_int_equal(d->isa.f->DDESC.src.step[1], 0);     /* the same row for every partition */
    assert_int_equal(d->isa.f->DDESC.src.count[1], 128);
    assert_int_equal(d->isa.f->DDESC.dst.step[1], ISA_DMA_PARTITION_PITCH);
    assert_int_equal(d->isa.f->DDESC.src.count[0], 64);
    bu_free(&r);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dma_simple),
        cmocka_unit_test(test_dma_cc_ap),
        cmocka_unit_test(test_dma_local_reduce),
        cmocka_unit_test(test_dma_casts),
        cmocka_unit_test(test_dma_complicated_and_limit),
        cmocka_unit_test(test_dma_multidim_4d),
        cmocka_unit_test(test_dma_inst_names),
        cmocka_unit_test(test_dma_partition_stride),
        cmocka_unit_test(test_dma_indirect),
        cmocka_unit_test(test_dma_transpose),
        cmocka_unit_test(test_dma_gather_transpose),
        cmocka_unit_test(test_broadcast_partition),
        cmocka_unit_test(test_store_issuer_dma_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
