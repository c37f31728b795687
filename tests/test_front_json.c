/* encoder/frontend_json.c: kernel files -> tile IR.  Example kernels,
 * unrolling, APs, constants and multi-core; the error paths are in
 * test_front_json_errors.c. */
#include "front_json_util.h"

/* NKI accumulate=None: first matmul into a region overwrites, later ones
 * accumulate; other writes start a new group; accumulate takes expressions;
 * is_transpose checks its NKI roles. */
static void test_matmul_nki_defaults(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("st", "[128, 128]", "bfloat16") T("mv", "[128, 512]", "bfloat16")
           TP("ps", "[128, 512]", "float32") T("o", "[128, 512]", "float32")
           TP("ps2", "[128, 512]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [3], 'body': ["
           "  {'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv'},"
           "  {'op': 'nc_matmul', 'dst': 'ps2[:, 0:256]', 'stationary': 'st', 'moving': "
           "'mv[:, 0:256]', 'accumulate': 'i > 0'}]},"
           "{'op': 'tensor_copy', 'dst': 'ps', 'src': 'o'},"
           "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv', "
           "'accumulate': null}", &k);
    unsigned want[] = {0, 0, TIR_F_ACCUMULATE, TIR_F_ACCUMULATE, TIR_F_ACCUMULATE,
                       TIR_F_ACCUMULATE, 0, 0};
    assert_int_equal(k.nops, 8);
    for (int i = 0; i < 8; i++)
        assert_int_equal(k.ops[i].flags & (TIR_F_ACCUMULATE | TIR_F_ACC_AUTO), want[i]);
    tir_kernel_free(&k);
    /* interleaved slices of one PSUM tile (the NKI Library's MX projections
     * write psum[:, q, :] for q = 0..3): separate locations, so separate
     * groups; a write to one slice restarts only that one */
    parses(T("st", "[128, 128]", "bfloat16") T("mv", "[128, 512]", "bfloat16")
           TP("pi", "[128, 4, 128]", "float32") T("o", "[128, 128]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [2], 'body': ["
           "  {'op': 'nc_matmul', 'dst': 'pi[:, 0, :]', 'stationary': 'st', 'moving': 'mv[:, 0:128]'},"
           "  {'op': 'nc_matmul', 'dst': 'pi[:, 1, :]', 'stationary': 'st', 'moving': 'mv[:, 0:128]'},"
           "  {'op': 'nc_matmul', 'dst': 'pi[:, 2, :]', 'stationary': 'st', 'moving': 'mv[:, 0:128]'},"
           "  {'op': 'nc_matmul', 'dst': 'pi[:, 3, :]', 'stationary': 'st', 'moving': 'mv[:, 0:128]'}]},"
           "{'op': 'tensor_copy', 'dst': 'pi[:, 1, :]', 'src': 'o'},"
           "{'op': 'nc_matmul', 'dst': 'pi[:, 1, :]', 'stationary': 'st', 'moving': 'mv[:, 0:128]'},"
           "{'op': 'nc_matmul', 'dst': 'pi[:, 2, :]', 'stationary': 'st', 'moving': 'mv[:, 0:128]'}",
           &k);
    unsigned want_i[] = {0, 0, 0, 0, TIR_F_ACCUMULATE, TIR_F_ACCUMULATE, TIR_F_ACCUMULATE,
                         TIR_F_ACCUMULATE, 0, 0, TIR_F_ACCUMULATE};
    assert_int_equal(k.nops, 11);
    for (int i = 0; i < 11; i++)
        assert_int_equal(k.ops[i].flags & (TIR_F_ACCUMULATE | TIR_F_ACC_AUTO), want_i[i]);
    tir_kernel_free(&k);
    /* a region overlapping an earlier group without matching it */
    fails_with(T("st", "[128, 128]", "bfloat16") T("mv", "[128, 512]", "bfloat16")
               TP("ps", "[128, 512]", "float32")
               "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv'},"
               "{'op': 'nc_matmul', 'dst': 'ps[:, 0:256]', 'stationary': 'st', "
               "'moving': 'mv[:, 0:256]'}",
               "field 'accumulate'", "give accumulate");
    fails_with(T("st", "[128, 128]", "bfloat16") T("mv", "[128, 512]", "bfloat16")
               TP("ps", "[128, 512]", "float32")
               "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv', "
               "'accumulate': 'nope > 0'}",
               "field 'accumulate'", "nope");
    /* is_transpose: dst = stationary.T in stationary's dtype, no accumulate */
    parses(T("d", "[128, 64]", "bfloat16") T("id", "[128, 128]", "bfloat16")
           TP("pt", "[64, 128]", "bfloat16")
           "{'op': 'nc_matmul', 'dst': 'pt', 'stationary': 'd', 'moving': 'id', "
           "'is_transpose': true}", &k);
    assert_int_equal(k.ops[0].flags & (TIR_F_TRANSPOSE | TIR_F_ACCUMULATE), TIR_F_TRANSPOSE);
    tir_kernel_free(&k);
    fails_with(T("d", "[128, 64]", "bfloat16") T("id", "[128, 128]", "bfloat16")
               TP("pt", "[64, 128]", "float32")
               "{'op': 'nc_matmul', 'dst': 'pt', 'stationary': 'd', 'moving': 'id', "
               "'is_transpose': true}",
               "field 'dst'", "stationary dtype");
    fails_with(T("d", "[128, 64]", "bfloat16") T("id", "[128, 128]", "bfloat16")
               TP("pt", "[64, 128]", "bfloat16")
               "{'op': 'nc_matmul', 'dst': 'pt', 'stationary': 'd', 'moving': 'id', "
               "'is_transpose': true, 'accumulate': true}",
               "field 'accumulate'", "cannot accumulate");
    fails_with(T("d", "[128, 64]", "bfloat16") T("id", "[128, 128]", "bfloat16")
               TP("pt", "[128, 64]", "bfloat16")
               "{'op': 'nc_matmul', 'dst': 'pt', 'stationary': 'd', 'moving': 'id', "
               "'is_transpose': true}",
               "field 'dst'", "[64, 128]");
}

/* The op's accumulate flags, or -1 for another kind. */
static int acc_flags(const tir_kernel_t *k, int i, tir_opkind_t kind)
{
    if (k->ops[i].kind != kind)
        return -1;
    return (int)(k->ops[i].flags & (TIR_F_ACCUMULATE | TIR_F_ACC_AUTO));
}

/* NKI mask= on a matmul (fj_mask_mm.c): a mask that keeps a rectangle of
 * dst runs the matmul on that rectangle (dst, moving's columns and
 * stationary's columns cut, accumulate kept), so it may accumulate; the
 * accumulate=None groups are those of the declared dst, masked member
 * first or not; a mask keeping nothing is a noop; one that keeps no
 * rectangle is computed into a compiler tile and copied under the mask
 * when it overwrites, refused when it accumulates. */
#define MM_TILES T("st", "[128, 128]", "float32") T("mv", "[128, 512]", "float32") \
    TP("ps", "[128, 512]", "float32")
#define COLS_LT(n) "{'pattern': [[1, 512]], 'offset': -" #n ", 'cmp_op': 'less'}"
#define ROWS_LT(n) "{'pattern': [[0, 512]], 'channel_multiplier': 1, 'offset': -" #n ", " \
    "'cmp_op': 'less'}"
static void test_matmul_masked(void **state)
{
    (void)state;
    tir_kernel_t k;
    /* K loop on the edge tile: accumulate = (i > 0), columns < 400 */
    parses(MM_TILES
           "{'op': 'for', 'var': 'i', 'range': [2], 'body': ["
           "  {'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv', "
           "   'accumulate': 'i > 0', 'mask': " COLS_LT(400) "}]}", &k);
    assert_int_equal(k.nops, 2);
    for (int i = 0; i < 2; i++) {
        const tir_op_t *op = &k.ops[i];
        assert_int_equal(acc_flags(&k, i, TIR_MATMUL), i ? TIR_F_ACCUMULATE : 0);
        assert_false(op->flags & TIR_F_MASK);
        assert_int_equal(op->dst->offset, 0);
        assert_int_equal(op->dst->count[0], 128);
        assert_int_equal(op->dst->count[1], 400);
        assert_int_equal(op->src[1]->count[1], 400);
        assert_int_equal(op->src[0]->count[1], 128);
    }
    tir_kernel_free(&k);
    /* rows 0..63 x columns 100..399: stationary's columns cut to the rows */
    parses(MM_TILES
           "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv', "
           " 'accumulate': false, 'mask': [" ROWS_LT(64) ", " COLS_LT(400) ", "
           " {'pattern': [[1, 512]], 'offset': -100}]}", &k);
    assert_int_equal(k.nops, 1);
    assert_int_equal(k.ops[0].dst->offset, 100);
    assert_int_equal(k.ops[0].dst->count[0], 64);
    assert_int_equal(k.ops[0].dst->count[1], 300);
    assert_int_equal(k.ops[0].src[0]->count[0], 128);
    assert_int_equal(k.ops[0].src[0]->count[1], 64);
    assert_int_equal(k.ops[0].src[1]->offset, 100);
    assert_int_equal(k.ops[0].src[1]->count[1], 300);
    tir_kernel_free(&k);
    /* accumulate=None: the group is the declared dst's, masked first or
     * last; then a mask keeping nothing (a noop, the group goes on) */
    parses(MM_TILES
           "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv', "
           " 'mask': " COLS_LT(400) "},"
           "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv'},"
           "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv', "
           " 'mask': " ROWS_LT(32) "},"
           "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv', "
           " 'mask': " COLS_LT(0) ", 'name': 'none'},"
           "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv'}", &k);
    int want[] = {0, TIR_F_ACCUMULATE, TIR_F_ACCUMULATE, -1, TIR_F_ACCUMULATE};
    assert_int_equal(k.nops, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(acc_flags(&k, i, TIR_MATMUL), want[i]);
    assert_int_equal(k.ops[3].kind, TIR_NOOP);
    assert_string_equal(k.ops[3].name, "none");
    tir_kernel_free(&k);
    /* no rectangle (causal): an overwriting first member through a compiler
     * tile and a masked copy, still the start of the declared dst's group */
    parses(MM_TILES
           "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv', "
           " 'mask': {'pattern': [[-1, 512]], 'channel_multiplier': 1}},"
           "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv'}", &k);
    assert_int_equal(k.nops, 3);
    assert_int_equal(acc_flags(&k, 0, TIR_MATMUL), 0);
    assert_int_not_equal(k.ops[0].dst->tensor, k.ops[2].dst->tensor);
    assert_int_equal(k.ops[1].kind, TIR_TENSOR_COPY);
    assert_true(k.ops[1].flags & TIR_F_MASK);
    assert_int_equal(acc_flags(&k, 2, TIR_MATMUL), TIR_F_ACCUMULATE);
    tir_kernel_free(&k);
    /* ... but an accumulating one is refused, explicit or inferred */
    fails_with(MM_TILES
               "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv', "
               " 'accumulate': true, 'mask': {'pattern': [[-1, 512]], 'channel_multiplier': 1}}",
               "field 'mask'", "keeps no rectangle of dst");
    fails_with(MM_TILES
               "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv'},"
               "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv', "
               " 'mask': [" COLS_LT(400) ", {'pattern': [[1, 512]], 'offset': -7, "
               "'cmp_op': 'not_equal'}]}",
               "field 'mask'", "not_equal inside the range");
    /* a rectangle the engines cannot start (rows 16..79) */
    fails_with(MM_TILES
               "{'op': 'nc_matmul', 'dst': 'ps', 'stationary': 'st', 'moving': 'mv', "
               " 'accumulate': true, 'mask': [" ROWS_LT(80) ", {'pattern': [[0, 512]], "
               "'channel_multiplier': 1, 'offset': -16}]}",
               "field 'mask'", "kept partitions start");
}
#undef ROWS_LT
#undef COLS_LT
#undef MM_TILES

/* dma_copy keeps its NKI name= (it is built by enc_dma_copy_ex); unary ALU
 * ops need no operand */
static void test_names_and_unary(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("t", "[128, 512]", "float32") T("idx", "[128, 1]", "int32") T("g", "[128, 64]", "float32")
           "{'op': 'dma_copy', 'dst': 't', 'src': 'a[0:128, :]', 'name': 'ld_a'},"
           "{'op': 'dma_copy', 'dst': 'g', 'src': {'tensor': 'tab', 'index': 'idx'}, 'name': 'gat'},"
           "{'op': 'dma_copy', 'dst': 't', 'src': 'a[0:128, :]'},"
           "{'op': 'tensor_scalar', 'dst': 't', 'src': 't', 'op0': 'reciprocal'},"
           "{'op': 'tensor_scalar', 'dst': 't', 'src': 't', 'op0': 'add', 'operand0': 1,"
           " 'op1': 'abs'}", &k);
    assert_string_equal(k.ops[0].name, "ld_a");
    assert_string_equal(k.ops[1].name, "gat");
    assert_int_equal(k.ops[1].kind, TIR_INDIRECT_LOAD);
    assert_string_equal(k.ops[2].name, "dma_copy_2");
    assert_int_equal(k.ops[3].op0, ISA_ALU_RECIPROCAL);
    assert_int_equal(k.ops[4].op1, ISA_ALU_ABS);
    tir_kernel_free(&k);
    fails_with(T("t", "[128, 512]", "float32")
               "{'op': 'tensor_scalar', 'dst': 't', 'src': 't', 'op0': 'add'}",
               "field 'operand0'", "missing");
    /* NKI-named ops: what they do not support is an error naming the field */
    fails_with(T("t", "[128, 512]", "float32") T("p", "[128, 512]", "uint8")
               "{'op': 'nisa.tensor_copy_predicated', 'dst': 't', 'predicate': 'p',"
               " 'reverse_pred': true}",
               "field 'src'", "missing");
    fails_with(T("t", "[128, 512]", "float32") T("m", "[128, 1]", "float32")
               "{'op': 'exponential', 'dst': 't', 'src': 't', 'max_value': 'm', 'reduce_init': 1}",
               "field 'reduce_init'", "load_reduce");
    fails_with(T("t", "[128, 512]", "float32")
               "{'op': 'reciprocal', 'dst': 't', 'src': 't'}", "field 'src'", "unknown field");
    fails_with(T("t", "[128, 600]", "float32") T("s", "[128, 6]", "float32")
               "{'op': 'bn_stats', 'dst': 's', 'data': 't'}", "field 'data'", "> 512");
    /* NKI argument names are accepted next to the kernel-format ones */
    parses(T("p", "[128, 64]", "float32") T("q", "[128, 64]", "float32") T("r", "[128, 1]", "float32")
           "{'op': 'nisa.tensor_tensor', 'dst': 'p', 'data1': 'p', 'data2': 'q', 'operator': 'nl.add'},"
           "{'op': 'nisa.activation', 'dst': 'p', 'data': 'p', 'func': 'nl.exp'},"
           "{'op': 'nisa.tensor_reduce', 'dst': 'r', 'data': 'p', 'operator': 'nl.maximum', 'axis': 1},"
           "{'op': 'nisa.scalar_tensor_tensor', 'dst': 'p', 'data': 'p', 'op0': 'multiply',"
           " 'operand0': 2.0, 'op1': 'add', 'operand1': 'q'}", &k);
    assert_int_equal(k.ops[0].op0, ISA_ALU_ADD);
    assert_int_equal(k.ops[0].src[1]->tensor, k.ops[3].src[1]->tensor);
    assert_int_equal(k.ops[1].func, ISA_ACTFN_EXP);
    assert_int_equal(k.ops[2].reduce_op, ISA_ALU_MAX);
    assert_true(k.ops[3].s0.imm == 2.0);
    tir_kernel_free(&k);
    fails_with(T("p", "[128, 64]", "float32")
               "{'op': 'tensor_tensor', 'dst': 'p', 'data1': 'p', 'in0': 'p', 'data2': 'p', 'operator': 'add'}",
               "field 'data1'", "given twice");
    fails_with(T("t", "[128, 7]", "float32") T("s", "[128, 2]", "float32")
               "{'op': 'bn_aggr', 'dst': 's', 'data': 't'}", "field 'data'", "multiple of 3");
    fails_with(T("t", "[128, 6]", "float32") T("s", "[128, 3]", "float32")
               "{'op': 'bn_aggr', 'dst': 's', 'data': 't'}", "field 'dst'", "[128, 2]");
    fails_with(T("t", "[128, 6]", "float32") T("s", "[128, 2]", "float32")
               "{'op': 'bn_aggr', 'dst': 's', 'data': 't', 'engine': 'act'}", "field 'engine'", NULL);
#define RS_TILES T("t", "[16, 32]", "float32") T("b", "[16, 1]", "float32") \
                 T("i", "[16, 1]", "int32")
    fails_with(RS_TILES "{'op': 'range_select', 'dst': 't', 'on_true_tile': 't', 'comp_op0': "
               "'not_equal', 'comp_op1': 'less', 'bound0': 'b', 'bound1': 'b'}",
               "field 'comp_op0'", "not a range_select comparison");
    fails_with(RS_TILES "{'op': 'range_select', 'dst': 't', 'on_true_tile': 't', 'comp_op0': "
               "'equal', 'comp_op1': 'less', 'bound0': 'b', 'bound1': 'i'}",
               "field 'bound1'", "float32");
    fails_with(RS_TILES "{'op': 'range_select', 'dst': 't', 'on_true_tile': 't', 'comp_op0': "
               "'equal', 'comp_op1': 'less', 'bound0': 'b', 'bound1': 'b', 'reduce_op': 'add'}",
               "field 'reduce_op'", "only maximum");
    fails_with(RS_TILES "{'op': 'range_select', 'dst': 't', 'on_true_tile': 't', 'comp_op0': "
               "'equal', 'comp_op1': 'less', 'bound0': 'b', 'bound1': 'b', 'range_start': 1.5}",
               "field 'range_start'", "not an integer");
    /* 1e30 was cast to int64_t before the check (UBSan, 2026-12-03 sweep) */
    fails_with(RS_TILES "{'op': 'range_select', 'dst': 't', 'on_true_tile': 't', 'comp_op0': "
               "'equal', 'comp_op1': 'less', 'bound0': 'b', 'bound1': 'b', 'range_start': 1e30}",
               "field 'range_start'", "outside the 64-bit integer range");
    fails_with(RS_TILES "{'op': 'range_select', 'dst': 't', 'on_true_tile': 't', 'comp_op0': "
               "'equal', 'comp_op1': 'less', 'bound0': 'b', 'bound1': 'b', 'engine': 'pool'}",
               "field 'engine'", NULL);
#define SR_TILES T("t", "[16, 32]", "float32") T("p", "[16, 32]", "uint8") \
                 T("q", "[16, 32]", "float32") T("i", "[16, 32]", "int32") T("c", "[16, 1]", "int32")
    fails_with(SR_TILES "{'op': 'select_reduce', 'dst': 't', 'predicate': 'q', 'on_true': 't', "
               "'on_false': 0}", "field 'predicate'", "int8, uint8");
    fails_with(SR_TILES "{'op': 'select_reduce', 'dst': 'i', 'predicate': 'p', 'on_true': 'i', "
               "'on_false': 0}", "field 'on_true'", "32-bit integers");
    fails_with(SR_TILES "{'op': 'select_reduce', 'dst': 't', 'predicate': 'p', 'on_true': 't', "
               "'on_false': 'c'}", "field 'on_false'", "float32");
    fails_with(SR_TILES "{'op': 'select_reduce', 'dst': 't', 'predicate': 'p', 'on_true': 't'}",
               "field 'on_false'", "missing");
    fails_with(SR_TILES "{'op': 'select_reduce', 'dst': 't', 'predicate': 'p', 'on_true': 't', "
               "'on_false': 0, 'reduce_op': 'min'}", "field 'reduce_op'", "only maximum");
#undef SR_TILES
#undef RS_TILES
}

/* ---- example kernels ---- */

static void test_tensor_add_example(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t e;
    assert_int_equal(enc_parse_kernel_file(EX "tensor_add.json", NULL, 0, &k, &e), 0);
    assert_string_equal(k.name, "tensor_add");
    assert_string_equal(k.target, "trn2");
    assert_int_equal(k.num_programs, 1);
    /* 3 iterations x (load, load, add, store) */
    assert_int_equal(k.nops, 12);
    static const tir_opkind_t kinds[4] = {TIR_LOAD, TIR_LOAD, TIR_TENSOR_TENSOR, TIR_STORE};
    for (int i = 0; i < 12; i++)
        assert_int_equal(k.ops[i].kind, kinds[i % 4]);
    int a = 0, out = 2;
    assert_string_equal(k.tensors[a].name, "a");
    assert_int_equal(k.tensors[a].kind, TIR_T_INPUT);
    assert_int_equal(k.tensors[out].kind, TIR_T_OUTPUT);
    for (int it = 0; it < 3; it++) {
        const tir_op_t *ld = &k.ops[it * 4], *st = &k.ops[it * 4 + 3];
        int64_t rows = it < 2 ? 128 : 44;     /* 300 = 128 + 128 + 44 */
        assert_int_equal(ld->src[0]->tensor, a);
        assert_int_equal(ld->src[0]->offset, it * 128 * 512);
        assert_int_equal(ld->src[0]->ndim, 2);
        assert_int_equal(ld->src[0]->step[0], 512);
        assert_int_equal(ld->src[0]->count[0], rows);
        assert_int_equal(ld->src[0]->step[1], 1);
        assert_int_equal(ld->src[0]->count[1], 512);
        assert_int_equal(ld->dst->offset, 0);
        assert_int_equal(ld->dst->count[0], rows);
        assert_int_equal(st->dst->tensor, out);
        assert_int_equal(st->dst->offset, it * 128 * 512);
        assert_int_equal(st->dst->count[0], rows);
        assert_string_equal(ld->path, "body[0].body[3]");
        assert_int_equal(k.ops[it * 4 + 2].op0, ISA_ALU_ADD);
    }
    /* a fresh tile per iteration */
    int t0 = k.ops[0].dst->tensor, t1 = k.ops[4].dst->tensor, t2 = k.ops[8].dst->tensor;
    assert_true(t0 != t1 && t1 != t2 && t0 != t2);
    assert_string_equal(k.tensors[t0].name, "ta");
    assert_string_equal(k.tensors[t1].name, "ta#1");
    assert_string_equal(k.tensors[t2].name, "ta#2");
    assert_int_equal(k.tensors[t1].kind, TIR_T_SBUF);
    assert_string_equal(k.tensors[t1].path, "body[0].body[1]");
    tir_kernel_free(&k);
}

static void test_matmul_example(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t e;
    assert_int_equal(enc_parse_kernel_file(EX "matmul.json", NULL, 0, &k, &e), 0);
    assert_int_equal(k.nops, 5);
    const tir_op_t *mm = &k.ops[2];
    assert_int_equal(mm->kind, TIR_MATMUL);
    assert_int_equal(mm->engine, ISA_ENG_PE);
    assert_int_equal(mm->nsrc, 2);
    assert_string_equal(k.tensors[mm->src[0]->tensor].name, "sa");
    assert_string_equal(k.tensors[mm->src[1]->tensor].name, "sb");
    assert_int_equal(k.tensors[mm->dst->tensor].kind, TIR_T_PSUM);
    assert_int_equal(mm->dst->count[0], 128);
    assert_int_equal(mm->dst->count[1], 512);
    assert_int_equal(mm->flags & TIR_F_ACCUMULATE, 0);
    assert_int_equal(k.ops[3].kind, TIR_TENSOR_COPY);
    assert_int_equal(k.ops[3].engine, ISA_ENG_UNASSIGNED);
    tir_kernel_free(&k);
}

static void test_softmax_example(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t e;
    assert_int_equal(enc_parse_kernel_file(EX "softmax.json", NULL, 0, &k, &e), 0);
    assert_int_equal(k.nops, 10);
    const tir_op_t *red = &k.ops[1], *act = &k.ops[2], *ts = &k.ops[3];
    assert_int_equal(red->kind, TIR_TENSOR_REDUCE);
    assert_int_equal(red->reduce_op, ISA_ALU_MAX);
    assert_int_equal(red->rare->axes, 1u);          /* the last (only) free axis */
    assert_true(red->flags & TIR_F_NEGATE);
    assert_int_equal(red->dst->count[0], 128);
    assert_int_equal(red->dst->count[1], 1);
    assert_int_equal(act->kind, TIR_ACTIVATION);
    assert_int_equal(act->engine, ISA_ENG_ACT);
    assert_int_equal(act->func, ISA_ACTFN_EXP);
    assert_false(act->s0.is_ap);
    assert_true(act->s0.imm == 1.0);
    assert_int_equal(act->bias->tensor, red->dst->tensor);
    assert_int_equal(act->reduce_op, ISA_ALU_ADD);
    assert_int_equal(act->rare->reduce_cmd, ISA_REDCMD_RESET_REDUCE);
    assert_string_equal(k.tensors[act->dst2->tensor].name, "sum");
    assert_int_equal(ts->op0, ISA_ALU_DIVIDE);
    assert_true(ts->s0.is_ap);
    assert_int_equal(ts->s0.ap->tensor, act->dst2->tensor);
    assert_int_equal(ts->op1, ISA_ALU_BYPASS);
    /* second iteration reads rows 128..255 */
    assert_int_equal(k.ops[5].src[0]->offset, 128 * 512);
    tir_kernel_free(&k);
}

static void test_attention_example(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t e;
    assert_int_equal(enc_parse_kernel_file(EX "attention.json", "trn1", 0, &k, &e), 0);
    assert_string_equal(k.target, "trn1");
    int n_mm = 0, sel = -1, tr = -1;
    for (int i = 0; i < k.nops; i++) {
        if (k.ops[i].kind == TIR_MATMUL)
            n_mm++;
        if (k.ops[i].kind == TIR_AFFINE_SELECT)
            sel = i;
        if (k.ops[i].kind == TIR_TRANSPOSE)
            tr = i;
    }
    assert_int_equal(n_mm, 2);
    assert_true(sel >= 0 && tr >= 0);
    const tir_op_t *s = &k.ops[sel];
    assert_string_equal(s->name, "causal_mask");
    assert_int_equal(s->engine, ISA_ENG_POOL);
    assert_int_equal(s->rare->pat_ndim, 1);
    assert_int_equal(s->rare->pat_step[0], -1);
    assert_int_equal(s->rare->pat_cm, 1);
    assert_int_equal(s->cmp, ISA_CMP_GE);
    assert_true(s->rare->fill == -30000.0);
    assert_int_equal(k.ops[tr].engine, ISA_ENG_PE);
    /* qk: stationary q [64, 128] */
    assert_int_equal(k.ops[3].kind, TIR_MATMUL);
    assert_string_equal(k.ops[3].name, "qk");
    assert_int_equal(k.ops[3].src[0]->count[0], 64);
    tir_kernel_free(&k);
}

static void test_multicore_example(void **state)
{
    (void)state;
    for (int pid = 0; pid < 2; pid++) {
        tir_kernel_t k;
        tpb_err_t e;
        assert_int_equal(enc_parse_kernel_file(EX "multicore_relu.json", NULL, pid, &k, &e), 0);
        assert_int_equal(k.num_programs, 2);
        assert_int_equal(k.num_cores, 2);
        assert_int_equal(k.nops, 6);
        for (int i = 0; i < 2; i++) {
            assert_int_equal(k.ops[i * 3].src[0]->offset, (pid * 256 + i * 128) * 256);
            assert_int_equal(k.ops[i * 3 + 2].dst->offset, (pid * 256 + i * 128) * 256);
            assert_int_equal(k.ops[i * 3].core, pid);
            assert_int_equal(k.ops[i * 3 + 1].func, ISA_ACTFN_RELU);
        }
        tir_kernel_free(&k);
    }
}

static void test_tir_format(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t e;
    assert_int_equal(enc_parse_kernel_file(EX "tensor_add.json", NULL, 0, &k, &e), 0);
    char *text;
    size_t len;
    assert_int_equal(enc_tir_format(&k, &text, &len, &e), 0);
    assert_int_equal(strlen(text), len);
    assert_non_null(strstr(text, "kernel tensor_add target trn2 program 0/1 cores 1 (9 tensors, 12 ops)\n"));
    assert_non_null(strstr(text, "  %0 a input float32 [300, 512] @inputs[0]\n"));
    assert_non_null(strstr(text, "  %7 ta#2 sbuf float32 [128, 512] @body[0].body[1]\n"));
    assert_non_null(strstr(text, "  #8 load load_8 @body[0].body[3] dst=ta#2{+0; 44x512 512x1} "
                                 "src0=a{+131072; 44x512 512x1}\n"));
    assert_non_null(strstr(text, "  #10 tensor_tensor tensor_tensor_10 @body[0].body[5] "
                                 "dst=ta#2{+0; 44x512 512x1} src0=ta#2{+0; 44x512 512x1} "
                                 "src1=tb#2{+0; 44x512 512x1} op0=add\n"));
    free(text);
    tir_kernel_free(&k);
}

/* ---- language features ---- */

static void test_let_min_and_step(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses("{'op': 'for', 'var': 'i', 'range': [256, 300, 64], 'body': ["
           "  {'op': 'let', 'var': 'r', 'value': 'min(128, 300 - i)'},"
           "  {'op': 'tile', 'name': 't', 'shape': [128, 256], 'dtype': 'float32'},"
           "  {'op': 'load', 'dst': 't[0:r, :]', 'src': 'a[i:i+128, 0:512:2]'}]},"
           "{'op': 'tile', 'name': 'u', 'shape': [128, 4, 8], 'dtype': 'float32'},"
           "{'op': 'load', 'dst': 'u[0:1, 2, :]', 'src': 'a[7, 8:16]'}",
           &k);
    assert_int_equal(k.nops, 2);
    const tir_ap_t *s = k.ops[0].src[0];
    assert_int_equal(s->offset, 256 * 512);
    assert_int_equal(s->count[0], 44);
    assert_int_equal(s->step[1], 2);
    assert_int_equal(s->count[1], 256);
    assert_int_equal(k.ops[0].dst->count[0], 44);
    /* integer index on a free dim drops it; partition dim kept */
    const tir_ap_t *d = k.ops[1].dst;
    assert_int_equal(d->ndim, 2);
    assert_int_equal(d->offset, 2 * 8);
    assert_int_equal(d->count[0], 1);
    assert_int_equal(d->step[0], 32);
    assert_int_equal(d->count[1], 8);
    const tir_ap_t *h = k.ops[1].src[0];
    assert_int_equal(h->ndim, 1);
    assert_int_equal(h->offset, 7 * 512 + 8);
    tir_kernel_free(&k);
}

static void test_many_iterations_scoping(void **state)
{
    (void)state;
    tir_kernel_t k;
    /* an outer tile shadowed by per-iteration tiles, restored after the loop */
    parses(T("t", "[128, 64]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [3000], 'body': ["
           T("t", "[128, 64]", "float32")
           "  {'op': 'memset', 'dst': 't', 'value': 'i'}]},"
           "{'op': 'memset', 'dst': 't', 'value': 7}", &k);
    assert_int_equal(k.nops, 3001);
    assert_string_equal(k.tensors[k.ops[2999].dst->tensor].name, "t#3000");
    assert_true(k.ops[2999].rare->value == 2999.0);
    assert_string_equal(k.tensors[k.ops[3000].dst->tensor].name, "t");
    tir_kernel_free(&k);
}

static void test_raw_ap_and_if(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses("{'op': 'tile', 'name': 't', 'shape': [128, 512], 'dtype': 'float32'},"
           "{'op': 'for', 'var': 'i', 'range': [2], 'body': ["
           "  {'op': 'if', 'cond': 'i == 1', 'body': ["
           "     {'op': 'load', 'dst': 't', 'src': {'tensor': 'a', 'offset': 'i*512', "
           "      'ap': [[512, 128], [1, 512]]}}],"
           "   'else': [{'op': 'memset', 'dst': 't', 'value': 0}]}]}",
           &k);
    assert_int_equal(k.nops, 2);
    assert_int_equal(k.ops[0].kind, TIR_MEMSET);
    assert_string_equal(k.ops[0].path, "body[1].body[0].else[0]");
    assert_int_equal(k.ops[1].kind, TIR_LOAD);
    assert_int_equal(k.ops[1].src[0]->offset, 512);
    assert_int_equal(k.ops[1].src[0]->step[0], 512);
    assert_int_equal(k.ops[1].src[0]->count[0], 128);
    tir_kernel_free(&k);
}

static void test_indirect_and_transpose(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses("{'op': 'tile', 'name': 'idx', 'shape': [128, 1], 'dtype': 'int32'},"
           "{'op': 'tile', 'name': 'g', 'shape': [128, 32], 'dtype': 'float32'},"
           "{'op': 'dma_copy', 'dst': 'g', 'src': {'tensor': 'tab', 'index': 'idx', "
           " 'rows': '0:1000', 'cols': '0:64:2'}, 'oob_mode': 'skip', 'dge_mode': 'sw'},"
           "{'op': 'indirect_save', 'dst': {'tensor': 'tab[:, 32:64]', 'index': 'idx'}, "
           " 'src': 'g', 'rmw_op': 'add'},"
           "{'op': 'tile', 'name': 'tt', 'shape': [32, 128], 'dtype': 'float32'},"
           "{'op': 'dma_transpose', 'dst': 'tt', 'src': 'g'}",
           &k);
    assert_int_equal(k.nops, 3);
    const tir_op_t *l = &k.ops[0], *s = &k.ops[1], *t = &k.ops[2];
    assert_int_equal(l->kind, TIR_INDIRECT_LOAD);
    assert_int_equal(l->rare->index_bound, 1000);
    assert_int_equal(l->src[0]->count[0], 128);
    assert_int_equal(l->src[0]->step[0], 64);
    assert_int_equal(l->src[0]->step[1], 2);
    assert_int_equal(l->src[0]->count[1], 32);
    assert_int_equal(l->rare->oob_mode, ISA_OOB_SKIP);
    assert_true(l->flags & TIR_F_OOB_SKIP);
    assert_int_equal(l->rare->dge_mode, ISA_DGE_SW);
    assert_string_equal(k.tensors[l->index->tensor].name, "idx");
    assert_int_equal(s->kind, TIR_INDIRECT_SAVE);
    assert_true(s->flags & TIR_F_RMW_ADD);
    assert_int_equal(s->dst->offset, 32);
    assert_int_equal(s->rare->index_bound, 1000);
    assert_int_equal(t->kind, TIR_DMA_TRANSPOSE);
    assert_int_equal(t->rare->n_transpose_axes, 2);
    assert_int_equal(t->rare->transpose_axes[0], 1);
    assert_int_equal(t->rare->transpose_axes[1], 0);
    tir_kernel_free(&k);
}

static void test_compute_ops_parse(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses("{'op': 'tile', 'name': 'x', 'shape': [128, 4, 16], 'dtype': 'float32'},"
           "{'op': 'tile', 'name': 'r', 'shape': [128, 16], 'dtype': 'float32'},"
           "{'op': 'tile', 'name': 's', 'shape': [128, 1], 'dtype': 'float32'},"
           "{'op': 'tile', 'name': 'iv', 'shape': [128, 4, 16], 'dtype': 'int32'},"
           "{'op': 'tensor_reduce', 'dst': 'r', 'src': 'x', 'operator': 'add', 'axis': 1},"
           "{'op': 'tensor_reduce', 'dst': 's', 'src': 'x', 'operator': 'max', 'axis': [1, 2],"
           " 'keepdims': true},"
           "{'op': 'tensor_scalar', 'dst': 'x', 'src': 'x', 'op0': 'subtract', 'operand0': 's',"
           " 'reverse0': true, 'op1': 'nl.multiply', 'operand1': 2.5},"
           "{'op': 'iota', 'dst': 'iv', 'pattern': [[16, 4], [1, 16]], 'offset': 3,"
           " 'channel_multiplier': 64},"
           "{'op': 'scalar_tensor_tensor', 'dst': 'r', 'in0': 'r', 'op0': 'multiply',"
           " 'scalar': -1, 'op1': 'add', 'in1': 'r', 'engine': 'gpsimd'},"
           "{'op': 'tensor_tensor_scan', 'dst': 'r', 'in0': 'r', 'in1': 'r', 'initial': 0,"
           " 'op0': 'multiply', 'op1': 'add'},"
           "{'op': 'select', 'dst': 'r', 'pred': 'r', 'on_true': 'r', 'on_false': -5},"
           "{'op': 'dropout', 'dst': 'r', 'src': 'r', 'prob': 0.25}",
           &k);
    assert_int_equal(k.nops, 8);
    assert_int_equal(k.ops[0].rare->axes, 2u);      /* NKI axis 1 of 2 free axes = bit 1 */
    assert_int_equal(k.ops[1].rare->axes, 3u);
    assert_true(k.ops[1].flags & TIR_F_KEEPDIMS);
    const tir_op_t *ts = &k.ops[2];
    assert_true(ts->flags & TIR_F_REV0);
    assert_false(ts->flags & TIR_F_REV1);
    assert_int_equal(ts->op1, ISA_ALU_MULTIPLY);
    assert_true(ts->s1.imm == 2.5);
    const tir_op_t *io = &k.ops[3];
    assert_int_equal(io->rare->pat_ndim, 2);
    assert_int_equal(io->rare->pat_step[0], 16);
    assert_int_equal(io->rare->pat_offset, 3);
    assert_int_equal(io->rare->pat_cm, 64);
    assert_int_equal(k.ops[4].engine, ISA_ENG_POOL);
    assert_int_equal(k.ops[5].engine, ISA_ENG_DVE);
    assert_int_equal(k.ops[6].nsrc, 2);
    assert_true(k.ops[6].rare->fill == -5.0);
    assert_true(k.ops[7].rare->prob == 0.25);
    tir_kernel_free(&k);
}

/* Seed 001: dropout keep_rate (set_keep_rate / is_keep_rate), affine_select
 * reverse_pred (set_reverse_pred) and tensor_reduce per_axis
 * (NeuronReduceMacro) in the kernel format. */
static void test_keep_rate_and_reverse_pred(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("r", "[128, 64]", "float32") T("c", "[128, 1]", "float32")
           "{'op': 'dropout', 'dst': 'r', 'src': 'r', 'keep_rate': 0.75},"
           "{'op': 'dropout', 'dst': 'r', 'src': 'r', 'prob': 0.75},"
           "{'op': 'affine_select', 'dst': 'r', 'on_true': 'r', 'pattern': [[1, 64]],"
           " 'channel_multiplier': -1, 'cmp_op': 'is_ge', 'on_false_value': 0,"
           " 'reverse_pred': true, 'engine': 'vector'},"
           "{'op': 'affine_select', 'dst': 'r', 'on_true': 'r', 'pattern': [[1, 64]],"
           " 'channel_multiplier': -1, 'cmp_op': 'is_ge', 'on_false_value': 0},"
           "{'op': 'tensor_reduce', 'dst': 'c', 'src': 'r', 'operator': 'add', 'axis': 1,"
           " 'keepdims': true, 'per_axis': true}",
           &k);
    assert_int_equal(k.nops, 5);
    assert_true(k.ops[4].flags & TIR_F_PER_AXIS);
    assert_true(k.ops[0].flags & TIR_F_KEEP_RATE);
    assert_true(k.ops[0].s0.imm == 0.75);
    assert_false(k.ops[1].flags & TIR_F_KEEP_RATE);
    assert_true(k.ops[2].flags & TIR_F_REV0);
    assert_int_equal(k.ops[2].engine, ISA_ENG_DVE);
    assert_false(k.ops[3].flags & TIR_F_REV0);
    assert_int_equal(k.ops[3].engine, ISA_ENG_POOL);   /* NKI's GpSimd by default */
    tir_kernel_free(&k);
    fails_with(T("r", "[128, 64]", "float32")
               "{'op': 'dropout', 'dst': 'r', 'src': 'r', 'keep_rate': 0.5, 'prob': 0.5}",
               "keep_rate", "not both");
    fails_with(T("r", "[128, 64]", "float32")
               "{'op': 'dropout', 'dst': 'r', 'src': 'r', 'keep_rate': 1.5}",
               "keep_rate", "outside [0, 1]");
    fails_with(T("r", "[128, 64]", "float32")
               "{'op': 'affine_select', 'dst': 'r', 'on_true': 'r', 'pattern': [[1, 64]],"
               " 'channel_multiplier': -1, 'on_false_value': 0, 'reverse_pred': 2}",
               "reverse_pred", NULL);
}

/* Numeric fields take constant expressions ("1/sqrt(d)"); strings that
 * start with a tile name stay [P,1] accesses. */
static void test_constant_expressions(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("x", "[128, 64]", "float32") T("s", "[128, 1]", "float32")
           "{'op': 'let', 'var': 'd', 'value': 128},"
           "{'op': 'activation', 'dst': 'x', 'src': 'x', 'func': 'copy', 'scale': '1/sqrt(d)'},"
           "{'op': 'for', 'var': 'i', 'range': [0, 2], 'body': ["
           " {'op': 'tensor_scalar', 'dst': 'x', 'src': 'x', 'op0': 'add',"
           "  'operand0': '(i + 1) * 0.25', 'op1': 'multiply', 'operand1': '-2**-3'}]},"
           "{'op': 'tensor_scalar', 'dst': 'x', 'src': 'x', 'op0': 'add', 'operand0': 's',"
           " 'op1': 'add', 'operand1': '7 // 2'},"
           "{'op': 'memset', 'dst': 'x', 'value': '1/4 + max(pi, 3) - pi'},"
           "{'op': 'memset', 'dst': 'x', 'value': 'floor(-2.5) + ceil(0.2) * 10 + trunc(-1.7) * 100'},"
           "{'op': 'memset', 'dst': 'x', 'value': 'fmod(-7, 3) + sign(-0.5) * 10'}",
           &k);
    assert_int_equal(k.nops, 7);
    assert_true(k.ops[5].rare->value == -3.0 + 10.0 - 100.0);
    assert_true(k.ops[6].rare->value == -1.0 - 10.0);   /* fmod keeps the dividend's sign */
    assert_false(k.ops[0].s0.is_ap);
    assert_true(k.ops[0].s0.imm == 1.0 / sqrt(128.0));
    assert_true(k.ops[1].s0.imm == 0.25 && k.ops[1].s1.imm == -0.125);
    assert_true(k.ops[2].s0.imm == 0.5 && k.ops[2].s1.imm == -0.125);
    assert_true(k.ops[3].s0.is_ap);
    assert_true(k.ops[3].s1.imm == 3.0); /* integer grammar first: floor division */
    assert_true(k.ops[4].rare->value == 0.25);
    tir_kernel_free(&k);
    const char *ts = T("x", "[128, 64]", "float32") "{'op': 'tensor_scalar', 'dst': 'x', "
                     "'src': 'x', 'op0': 'add', 'operand0': ";
    char body[512];
    static const struct { const char *arg, *msg; } bad[] = {
        { "'1/0'", "field 'operand0': division by zero at offset 3 of \"1/0\"" },
        { "'sqrt(-1)'", "field 'operand0': the value is not finite" },
        { "'sqrt(2'", "field 'operand0': expected ',' or ')' at offset 6" },
        { "'(2'", "field 'operand0': expected ')' at offset 2" },
        { "'2 +* 3'", "field 'operand0': expected a number, a name or '('" },
        { "'erf(1)'", "unknown function 'erf'" },
        { "'fmod(1, 0)'", "division by zero in fmod()" },
        { "'colx'", "field 'operand0': unknown tensor or tile 'colx'" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(body, sizeof body, "%s%s}", ts, bad[i].arg);
        fails_with(body, bad[i].msg, NULL);
    }
}

static void test_constants(void **state)
{
    (void)state;
    const char *j0 =
        "{'inputs': [], 'outputs': [{'name': 'o', 'shape': [2, 3], 'dtype': 'int32'}],"
        " 'constants': [{'name': 'ident', 'identity': 4, 'dtype': 'bfloat16'},"
        "               {'name': 'c', 'value': [[1, 2, 3], [4, 5, -6]], 'dtype': 'int32'},"
        "               {'name': 'h', 'value': [0.5, -2], 'dtype': 'float16'},"
        "               {'name': 'w', 'file': 'w.npy', 'shape': [128, 64], 'dtype': 'float32'}],"
        " 'body': [{'op': 'tile', 'name': 't', 'shape': [2, 3], 'dtype': 'int32'},"
        "          {'op': 'load', 'dst': 't', 'src': 'c'},"
        "          {'op': 'store', 'dst': 'o', 'src': 't'}]}";
    char *j = dq(j0);
    tir_kernel_t k;
    tpb_err_t e;
    enc_front_opts_t o = {NULL, 0, 0, NULL};
    if (parse_opts(j, &o, &k, &e))
        fail_msg("%s", e.msg);
    free(j);
    assert_int_equal(k.tensors[1].kind, TIR_T_CONSTANT);
    assert_int_equal(k.tensors[1].shape[0], 4);
    const uint16_t *id = k.tensors[1].const_data;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            assert_int_equal(id[r * 4 + c], r == c ? 0x3F80 : 0);
    const int32_t *cv = k.tensors[2].const_data;
    assert_int_equal(cv[0], 1);
    assert_int_equal(cv[5], -6);
    const uint16_t *hv = k.tensors[3].const_data;
    assert_int_equal(hv[0], 0x3800);   /* 0.5 in fp16 */
    assert_int_equal(hv[1], 0xC000);   /* -2 */
    assert_string_equal(k.tensors[4].const_path, EX "/w.npy");
    assert_null(k.tensors[4].const_data);
    tir_kernel_free(&k);
}

static void test_multicore_pid(void **state)
{
    (void)state;
    const char *j0 =
        "{'grid': {'n': 4, 'nc': 2, 'mapping': 'blocked'},"
        " 'inputs': [{'name': 'a', 'shape': [512, 64], 'dtype': 'float32'}],"
        " 'outputs': [{'name': 'o', 'shape': [512, 64], 'dtype': 'float32'}],"
        " 'body': [{'op': 'let', 'var': 'base', 'value': 'pid * 128'},"
        "          {'op': 'tile', 'name': 't', 'shape': [128, 64], 'dtype': 'float32'},"
        "          {'op': 'load', 'dst': 't', 'src': 'a[base:base+128]'},"
        "          {'op': 'store', 'dst': 'o[base:base+128]', 'src': 't'}]}";
    char *j = dq(j0);
    for (int pid = 0; pid < 4; pid++) {
        tir_kernel_t k;
        tpb_err_t e;
        enc_front_opts_t o = {NULL, pid, 0, NULL};
        if (parse_opts(j, &o, &k, &e))
            fail_msg("%s", e.msg);
        assert_int_equal(k.num_programs, 4);
        assert_int_equal(k.num_cores, 2);
        assert_int_equal(k.program_id, pid);
        assert_int_equal(k.nops, 2);
        assert_int_equal(k.ops[0].src[0]->offset, pid * 128 * 64);
        assert_int_equal(k.ops[0].core, pid / 2);
        assert_int_equal(k.ntensors, 3);
        tir_kernel_free(&k);
    }
    tir_kernel_t k;
    tpb_err_t e;
    enc_front_opts_t o = {NULL, 4, 0, NULL};
    assert_int_equal(parse_opts(j, &o, &k, &e), -1);
    assert_non_null(strstr(e.msg, "program id 4 out of range"));
    tir_kernel_free(&k);
    free(j);
    /* a 2-D grid: pid = pid0 * 3 + pid1 */
    const char *g0 =
        "{'grid': [2, 3], 'inputs': [{'name': 'a', 'shape': [6, 64], 'dtype': 'float32'}],"
        " 'body': [{'op': 'tile', 'name': 't', 'shape': [1, 64], 'dtype': 'float32'},"
        "          {'op': 'nl.affine_range', 'var': 'i', 'range': [1], 'body': ["
        "            {'op': 'load', 'dst': 't', 'src': 'a[pid0 * num_programs1 + pid1, :]'}]}]}";
    char *g = dq(g0);
    for (int pid = 0; pid < 6; pid++) {
        enc_front_opts_t go = {NULL, pid, 0, NULL};
        if (parse_opts(g, &go, &k, &e))
            fail_msg("%s", e.msg);
        assert_int_equal(k.num_programs, 6);
        assert_int_equal(k.num_cores, 1);   /* NKI: one core unless an axis has nc() */
        assert_int_equal(k.ops[0].core, 0);
        assert_int_equal(k.ops[0].src[0]->offset, pid * 64);
        tir_kernel_free(&k);
    }
    free(g);
    /* program_id(a) / num_programs(a) and NKI's placement (the SDK's
     * test_nki_spmd_grid): nc(2)*2 blocked, 2*nc(2) interleaved */
    static const struct { const char *axis; int core[8]; } place[] = {
        {"nc(2)*2", {0, 0, 0, 0, 1, 1, 1, 1}},
        {"spmd_dim(nl.nc(2), 2)", {0, 0, 0, 0, 1, 1, 1, 1}},
        {"2*nc(2)", {0, 0, 1, 1, 0, 0, 1, 1}},
        {"spmd_dim(2, nc(2))", {0, 0, 1, 1, 0, 0, 1, 1}},
    };
    for (size_t c = 0; c < sizeof place / sizeof place[0]; c++) {
        char buf[600];
        snprintf(buf, sizeof buf,
                 "{'grid': ['%s', 2], 'inputs': [{'name': 'a', 'shape': [8, 64], 'dtype': 'float32'}],"
                 " 'body': [{'op': 'tile', 'name': 't', 'shape': [1, 64], 'dtype': 'float32'},"
                 "          {'op': 'load', 'dst': 't', 'src': "
                 "'a[nl.program_id(0) * num_programs(1) + program_id(1) + 0 * program_ndim(), :]'}]}",
                 place[c].axis);
        char *gj = dq(buf);
        for (int pid = 0; pid < 8; pid++) {
            enc_front_opts_t go = {NULL, pid, 0, NULL};
            if (parse_opts(gj, &go, &k, &e))
                fail_msg("%s", e.msg);
            assert_int_equal(k.num_programs, 8);
            assert_int_equal(k.num_cores, 2);
            assert_int_equal(k.ops[0].core, place[c].core[pid]);
            assert_int_equal(k.ops[0].src[0]->offset, pid * 64);
            tir_kernel_free(&k);
        }
        free(gj);
    }
    /* control flow on pid: each program (front-end call) takes its own path */
    char *ctl = dq("{'kernel': 'k', 'grid': [3],"
                         " 'inputs': [{'name': 'a', 'shape': [128, 64], 'dtype': 'float32'}],"
                         " 'outputs': [{'name': 'o', 'shape': [128, 64], 'dtype': 'float32'}],"
                         " 'body': [{'op': 'tile', 'name': 't', 'shape': [128, 64],"
                         "  'dtype': 'float32'},"
                         " {'op': 'for', 'var': 'i', 'range': ['pid + 1'], 'body': ["
                         "  {'op': 'load', 'dst': 't', 'src': 'a'}]},"
                         " {'op': 'let', 'var': 'x', 'value': 'pid'},"
                         " {'op': 'if', 'cond': 'x > 1', 'body': ["
                         "  {'op': 'store', 'dst': 'o', 'src': 't'}]}]}");
    for (int pid = 0; pid < 3; pid++) {
        enc_front_opts_t go = {NULL, pid, 0, NULL};
        if (parse_opts(ctl, &go, &k, &e))
            fail_msg("%s", e.msg);
        assert_int_equal(k.nops, pid + 1 + (pid > 1));   /* pid+1 loads, a store if pid > 1 */
        tir_kernel_free(&k);
    }
    free(ctl);
}

/* ---- validation messages (seed literals) through JSON ---- */


/* A flat body's dtype texts: fj_get_dtype keeps the last one decoded, so
 * a repeat, a change back and forth, a prefixed alias and an alias of
 * another type must each still give their own type. */
static void test_flat_dtypes(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("d0", "[128, 4]", "float32") T("d1", "[128, 4]", "float32")
           T("d2", "[128, 4]", "nl.bfloat16") T("d3", "[128, 4]", "bfloat16")
           T("d4", "[128, 4]", "bool") T("d5", "[128, 4]", "float32")
           T("d6", "[128, 4]", "int8") T("d7", "[128, 4]", "bool_")
           "{'op': 'memset', 'dst': 'd0', 'value': 0}", &k);
    static const unsigned want[] = {ISA_DT_FP32, ISA_DT_FP32, ISA_DT_BF16, ISA_DT_BF16,
                                    ISA_DT_UINT8, ISA_DT_FP32, ISA_DT_INT8, ISA_DT_UINT8};
    for (int i = 0; i < 8; i++) {
        char name[4] = {'d', (char)('0' + i), 0};
        int t = -1;
        for (int x = 0; x < k.ntensors; x++)
            if (!strcmp(k.tensors[x].name, name))
                t = x;
        assert_true(t >= 0);
        assert_int_equal(k.tensors[t].dtype, want[i]);
    }
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensor_add_example),
        cmocka_unit_test(test_matmul_example),
        cmocka_unit_test(test_softmax_example),
        cmocka_unit_test(test_attention_example),
        cmocka_unit_test(test_multicore_example),
        cmocka_unit_test(test_tir_format),
        cmocka_unit_test(test_let_min_and_step),
        cmocka_unit_test(test_raw_ap_and_if),
        cmocka_unit_test(test_many_iterations_scoping),
        cmocka_unit_test(test_indirect_and_transpose),
        cmocka_unit_test(test_compute_ops_parse),
        cmocka_unit_test(test_constant_expressions),
        cmocka_unit_test(test_keep_rate_and_reverse_pred),
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_multicore_pid),
        cmocka_unit_test(test_matmul_nki_defaults),
        cmocka_unit_test(test_matmul_masked),
        cmocka_unit_test(test_names_and_unary),
        cmocka_unit_test(test_flat_dtypes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
