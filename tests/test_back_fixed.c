/* Fixed placement (a tile's "addr", docs/kernel-format.md "Fixed
 * placement"): the front-end's checks, the allocator keeping fixed tiles
 * where the kernel put them (overlapping each other if it says so) and
 * placing the others around them, and the scheduler ordering accesses to
 * the shared bytes of two names (WAR, RAW) by address. */
#include "front_json_util.h"
#include "back_util.h"

static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

/* The front-end keeps "addr" (+1 in fixed1; 0 = none) and refuses what
 * no memory can hold, naming the tile and the field. */
static void test_front_addr_checks(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses("{'op': 'tile', 'name': 't', 'shape': [128, 64], 'dtype': 'float32', 'addr': 260},"
           "{'op': 'tile', 'name': 'u', 'shape': [128, 64], 'dtype': 'float32'},"
           "{'op': 'tile', 'name': 'p', 'shape': [128, 128], 'dtype': 'float32', "
           "'buffer': 'psum', 'addr': 6144}", &k);
    int nt = k.ntensors;
    assert_int_equal(k.tensors[nt - 3].fixed1, 261);
    assert_int_equal(k.tensors[nt - 2].fixed1, 0);
    assert_int_equal(k.tensors[nt - 1].fixed1, 6145);
    tir_kernel_free(&k);
    fails_with("{'op': 'tile', 'name': 't', 'shape': [128, 64], 'dtype': 'float32', 'addr': 6}",
               "tile 't': field 'addr'", "not a multiple of the fp32 element size (4 bytes)");
    fails_with("{'op': 'tile', 'name': 't', 'shape': [128, 64], 'dtype': 'float32', 'addr': -64}",
               "tile 't': field 'addr'", "-64 is negative");
    fails_with("{'op': 'tile', 'name': 't', 'shape': [128, 64], 'dtype': 'float32', "
               "'addr': 229184}", "tile 't': field 'addr'",
               "bytes 229184..229440 per partition are past the SBUF partition size");
    fails_with("{'op': 'tile', 'name': 't', 'shape': [128, 64], 'dtype': 'float32', "
               "'addr': 'x'}", "field 'addr'", NULL);
    fails_with("{'op': 'tile', 'name': 'p', 'shape': [128, 64], 'dtype': 'float32', "
               "'buffer': 'psum', 'addr': 16256}", "tile 'p': field 'addr'",
               "past the PSUM partition size (16384 bytes on trn2)");
    fails_with("{'op': 'tile', 'name': 'p', 'shape': [128, 64], 'dtype': 'float32', "
               "'buffer': 'psum', 'addr': 1920}", "tile 'p': field 'addr'",
               "cross a 2 KiB PSUM bank boundary");
    fails_with("{'op': 'tile', 'name': 'p', 'shape': [128, 1024], 'dtype': 'float32', "
               "'buffer': 'psum', 'addr': 1024}", "tile 'p': field 'addr'",
               "not on a 2 KiB PSUM bank boundary");
}

/* The first 32 columns of every partition of tile t. */
static tir_ap_t first32(const tir_kernel_t *k, int t)
{
    return bu_ap(t, 0, 2, k->tensors[t].shape[1], (int64_t)128, (int64_t)1, (int64_t)32);
}

/* Two fixed tiles on the same bytes stay there, live together; a tile
 * without "addr" live at the same time is placed first fit around them. */
static void test_alloc_keeps_fixed_and_fits_around(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, 2048);
    int o = BU_T(&k, "o", TIR_T_OUTPUT, ISA_DT_FP32, 128, 2048);
    int f0 = BU_T(&k, "f0", TIR_T_SBUF, ISA_DT_FP32, 128, 64);     /* 256 B at 4096 */
    int f1 = BU_T(&k, "f1", TIR_T_SBUF, ISA_DT_FP32, 128, 32);     /* 128 B at 4224 */
    int c = BU_T(&k, "c", TIR_T_SBUF, ISA_DT_FP32, 128, 2048);     /* 8 KiB, auto */
    int p = BU_T(&k, "p", TIR_T_PSUM, ISA_DT_FP32, 128, 512);      /* bank 3 */
    int q = BU_T(&k, "q", TIR_T_PSUM, ISA_DT_FP32, 128, 512);      /* auto */
    k.tensors[f0].fixed1 = 4096 + 1;
    k.tensors[f1].fixed1 = 4224 + 1;
    k.tensors[p].fixed1 = 3 * 2048 + 1;
    int ids[] = {f0, f1, c, p, q};
    tir_op_t op;
    for (int i = 0; i < 5; i++) {   /* all written first, all read after: all live together */
        tir_op_init(&op, TIR_MEMSET);
        op.dst = bu_in(&k, first32(&k, ids[i]));
        op.engine = ISA_ENG_DVE;
        bu_op(&k, &op, "m");
    }
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(&k, c), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    bu_op(&k, &op, "ld");
    for (int i = 0; i < 5; i++) {
        tir_op_init(&op, TIR_STORE);
        op.dst = bu_in(&k, bu_ap(o, 0, 2, (int64_t)2048, (int64_t)128, (int64_t)1, (int64_t)32));
        op.src[0] = bu_in(&k, first32(&k, ids[i]));
        op.nsrc = 1;
        bu_op(&k, &op, "st");
    }
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_int_equal(r.m.mlocs[f0].addr, 4096);
    assert_int_equal(r.m.mlocs[f1].addr, 4224);      /* inside f0's bytes: the kernel's choice */
    assert_int_equal(r.m.mlocs[c].addr, 4352);       /* 0 would cross f0: past f0's end */
    assert_int_equal(r.m.mlocs[p].addr, 6144);
    assert_int_equal(r.m.mlocs[q].addr, 0);          /* first fit below the fixed bank */
    assert_int_equal(r.st.sbuf_peak, 4352 + 8192);
    assert_int_equal(r.st.psum_peak, 8192);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* tA and tB are distinct names on the same bytes (fixed at 0).  Program
 * order: load tA; Act reads tA into tC; load tB; DVE reads tB into tD.
 * The second load must wait for Act's read (WAR across names) and DVE
 * for the second load (RAW on tB), as for any space reused by address. */
static void test_sched_orders_two_names_on_one_address(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, 64);
    int b = BU_T(&k, "b", TIR_T_INPUT, ISA_DT_FP32, 128, 64);
    int o = BU_T(&k, "o", TIR_T_OUTPUT, ISA_DT_FP32, 128, 64);
    int o2 = BU_T(&k, "o2", TIR_T_OUTPUT, ISA_DT_FP32, 128, 64);
    int ta = BU_T(&k, "tA", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int tb = BU_T(&k, "tB", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int tc = BU_T(&k, "tC", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int td = BU_T(&k, "tD", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    k.tensors[ta].fixed1 = k.tensors[tb].fixed1 = 1;
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(&k, ta), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    bu_op(&k, &op, "ldA");
    tir_op_init(&op, TIR_TENSOR_SCALAR);
    op.dst = bu_whole(&k, tc), op.src[0] = bu_whole(&k, ta), op.nsrc = 1;
    op.op0 = ISA_ALU_MULTIPLY, op.s0.imm = 2.0, op.engine = ISA_ENG_ACT;
    bu_op(&k, &op, "readA");
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(&k, tb), op.src[0] = bu_whole(&k, b), op.nsrc = 1;
    bu_op(&k, &op, "ldB");
    tir_op_init(&op, TIR_TENSOR_TENSOR);
    op.dst = bu_whole(&k, td), op.src[0] = bu_whole(&k, tb), op.src[1] = bu_whole(&k, tb);
    op.nsrc = 2, op.op0 = ISA_ALU_ADD, op.engine = ISA_ENG_DVE;
    bu_op(&k, &op, "readB");
    tir_op_init(&op, TIR_STORE);
    op.dst = bu_whole(&k, o), op.src[0] = bu_whole(&k, tc), op.nsrc = 1;
    bu_op(&k, &op, "st");
    tir_op_init(&op, TIR_STORE);
    op.dst = bu_whole(&k, o2), op.src[0] = bu_whole(&k, td), op.nsrc = 1;
    bu_op(&k, &op, "st2");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(r.m.mlocs[ta].addr, 0);
    assert_int_equal(r.m.mlocs[tb].addr, 0);
    assert_true(r.m.mlocs[tc].addr >= 256 && r.m.mlocs[td].addr >= 256);
    bir_block_t *blk = bu_block(&r);
    bir_inst_t *ldb = &blk->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 1)];
    bir_inst_t *rb = NULL;
    for (int i = 0; i < blk->ninsts; i++)
        if (!strcmp(blk->insts[i].name, "readB"))
            rb = &blk->insts[i];
    assert_non_null(rb);
    /* WAR: the load into tB waits for Act's read of tA (its first completion) */
    assert_int_equal(ldb->isa.sync.wait_en, 1);
    assert_int_equal(ldb->isa.sync.wait_sem, sched_engine_sem(ISA_ENG_ACT));
    assert_int_equal(ldb->isa.sync.wait_val, 1);
    /* RAW: DVE's read of tB waits for that load's transfer */
    assert_int_equal(rb->isa.sync.wait_en, 1);
    assert_int_equal(rb->isa.sync.wait_sem, r.m.queues[ldb->queue].semaphore);
    bu_free(&r);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_front_addr_checks),
        cmocka_unit_test(test_alloc_keeps_fixed_and_fits_around),
        cmocka_unit_test(test_sched_orders_two_names_on_one_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
