/* test_mask_preds.c - several affine predicates on one instruction (seed
 * 001 enumerate_predicates_in_codegen_order; NKI mask=(i_p < n) & (i_f <
 * m)): up to 4 PredExt prefixes before a TensorScalarPtr, ANDed.  The
 * assembler, the stream decoder, the kernel-file mask list, the lowering
 * and the emitted bundles.  Values against NumPy: tests/python/test_mask_expr.py. */
#include "front_json_util.h"

#include "asm.h"
#include "back_util.h"

/* n PredExt lines (fill/keep given per line) + TensorScalarPtr */
static const char *tsp =
    "TensorScalarPtr in=sbuf[0:8]@0x0:fp32<1x16> out=sbuf[0:8]@0x100:fp32<1x16> op0=add "
    "op1=bypass s0=0x3f800000";

static int assemble(const char *src, isa_asm_result_t *res)
{
    return isa_assemble(src, strlen(src), NULL, res);
}

static void test_decode_and_assemble(void **state)
{
    (void)state;
    char src[2048];
    snprintf(src, sizeof src,
             "PredExt offset=-3 cm=1 cmp=lt step0=0 fill=2 keep=1\n"
             "PredExt offset=-4 cm=0 cmp=ge step0=1 fill=2 keep=1 rev_pred=1\n%s", tsp);
    isa_asm_result_t res;
    if (assemble(src, &res))
        fail_msg("%s", res.diags[0].msg);
    assert_int_equal(res.len, 3 * ISA_BUNDLE_BYTES);
    isa_stream_t s;
    isa_err_t ie;
    assert_int_equal(isa_stream_decode(res.bytes, res.len, ISA_ENG_DVE, &s, &ie), ISA_OK);
    assert_int_equal(s.count, 1);
    const isa_decoded_t *d = &s.insts[0];
    assert_true(d->has_pred);
    assert_int_equal(d->pred.offset, -3);
    assert_int_equal(d->pred.cmp, ISA_CMP_LT);
    assert_int_equal(d->npred_more, 1);
    assert_int_equal(d->pred_more[0].offset, -4);
    assert_int_equal(d->pred_more[0].step0, 1);
    assert_int_equal(d->pred_more[0].cmp, ISA_CMP_GE);
    assert_int_equal(d->pred_more[0].rev_pred, 1);
    assert_int_equal(d->prefix_pc, 0);
    assert_int_equal(d->pc, 2);
    assert_int_equal(s.pc_to_index[1], 0);
    isa_stream_free(&s);
    isa_asm_result_free(&res);

    /* four is the limit */
    char many[4096] = "";
    for (int i = 0; i < 5; i++)
        strcat(many, "PredExt offset=1 cmp=ge fill=0\n");
    strcat(many, tsp);
    assert_int_equal(assemble(many, &res), -1);
    assert_non_null(strstr(res.diags[0].msg, "more than 4 PredExt prefixes"));
    isa_asm_result_free(&res);
    /* the decoder checks the same on raw bundles: 4 assemble, a 5th is spliced in */
    const char *four = strstr(many, "PredExt") + strlen("PredExt offset=1 cmp=ge fill=0\n");
    if (assemble(four, &res))
        fail_msg("%s", res.diags[0].msg);
    assert_int_equal(res.len, 5 * ISA_BUNDLE_BYTES);
    assert_int_equal(isa_stream_decode(res.bytes, res.len, ISA_ENG_DVE, &s, &ie), ISA_OK);
    assert_int_equal(s.insts[0].npred_more, 3);
    isa_stream_free(&s);
    uint8_t buf[6 * ISA_BUNDLE_BYTES];
    memcpy(buf, res.bytes, ISA_BUNDLE_BYTES);
    memcpy(buf + ISA_BUNDLE_BYTES, res.bytes, res.len);
    assert_int_equal(isa_stream_decode(buf, sizeof buf, ISA_ENG_DVE, &s, &ie), ISA_E_PREFIX);
    assert_non_null(strstr(ie.msg, "more than 4 PredExt"));
    isa_asm_result_free(&res);

    /* fill and keep are shared */
    snprintf(src, sizeof src, "PredExt offset=1 cmp=ge fill=0\nPredExt offset=1 cmp=ge fill=1\n%s",
             tsp);
    if (assemble(src, &res))
        fail_msg("%s", res.diags[0].msg);
    assert_int_equal(isa_stream_decode(res.bytes, res.len, ISA_ENG_DVE, &s, &ie), ISA_E_PREFIX);
    assert_non_null(strstr(ie.msg, "must share fill and keep"));
    isa_asm_result_free(&res);
}

/* kernel-file mask list -> tile IR -> one TensorScalarPtr with 2 PredExt */
static void test_kernel_mask_list(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("t", "[128, 512]", "float32") T("u", "[128, 512]", "float32")
           "{'op': 'tensor_scalar', 'dst': 'u', 'src': 't', 'op0': 'add', 'operand0': 1,"
           " 'mask': [{'pattern': [[0, 512]], 'offset': -40, 'channel_multiplier': 1,"
           "           'cmp_op': 'less'},"
           "          {'pattern': [[1, 512]], 'offset': -8, 'cmp_op': 'greater_equal'}]}",
           &k);
    const tir_op_t *op = &k.ops[k.nops - 1];
    assert_true(op->flags & TIR_F_MASK);
    assert_int_equal(op->rare->pat_cm, 1);
    assert_int_equal(op->cmp, ISA_CMP_LT);
    assert_int_equal(op->rare->nmask_more, 1);
    assert_int_equal(op->rare->mask_more[0].offset, -8);
    assert_int_equal(op->rare->mask_more[0].step[0], 1);
    assert_int_equal(op->rare->mask_more[0].cmp, ISA_CMP_GE);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, tpb_target_get("trn2"), true), 0);
    const bir_inst_t *in = &bu_block(&r)->insts[bu_find(&r, ISA_OP_TENSOR_SCALAR_PTR, 0)];
    assert_true(in->has_pred);
    assert_int_equal(bir_rare(in)->pred.keep, 1);
    assert_int_equal(bir_rare(in)->pred.offset, -40);
    assert_int_equal(bir_rare(in)->npred_more, 1);
    assert_int_equal(bir_rare(in)->pred_more[0].offset, -8);
    assert_int_equal(bir_rare(in)->pred_more[0].step[0], 1);
    assert_int_equal(bir_rare(in)->pred_more[0].cm, 0);
    bu_free(&r);
    tir_kernel_free(&k);
    /* an op without its own predicate: the masked copy carries both */
    parses(T("t", "[128, 512]", "float32") T("u", "[128, 512]", "float32")
           "{'op': 'activation', 'dst': 'u', 'data': 't', 'func': 'exp',"
           " 'mask': [{'pattern': [[1, 512]], 'cmp_op': 'ge', 'offset': -1},"
           "          {'pattern': [[-1, 512]], 'channel_multiplier': 1, 'cmp_op': 'ge'},"
           "          {'pattern': [[0, 512]], 'channel_multiplier': 1, 'offset': -3, 'cmp_op': 'ne'}]}",
           &k);
    op = &k.ops[k.nops - 1];
    assert_int_equal(op->kind, TIR_TENSOR_COPY);
    assert_int_equal(op->rare->nmask_more, 2);
    assert_int_equal(op->rare->mask_more[1].cmp, ISA_CMP_NE);
    tir_kernel_free(&k);
}

static void test_kernel_mask_errors(void **state)
{
    (void)state;
#define HDR T("t", "[128, 512]", "float32") T("u", "[128, 512]", "float32")
#define ONE "{'pattern': [[1, 512]], 'cmp_op': 'ge'}"
    fails_with(HDR "{'op': 'tensor_scalar', 'dst': 'u', 'src': 't', 'op0': 'add', 'operand0': 1,"
                   " 'mask': [" ONE "," ONE "," ONE "," ONE "," ONE "]}",
               "field 'mask'", "a list of 1 to 4 predicates");
    fails_with(HDR "{'op': 'tensor_scalar', 'dst': 'u', 'src': 't', 'op0': 'add', 'operand0': 1,"
                   " 'mask': []}",
               "field 'mask'", "a list of 1 to 4 predicates");
    fails_with(HDR "{'op': 'tensor_scalar', 'dst': 'u', 'src': 't', 'op0': 'add', 'operand0': 1,"
                   " 'mask': [" ONE ", 3]}",
               "mask[1]", "an affine predicate");
    fails_with(HDR "{'op': 'tensor_scalar', 'dst': 'u', 'src': 't', 'op0': 'add', 'operand0': 1,"
                   " 'mask': [" ONE ", {'pattern': [[1, 16]]}]}",
               "field 'pattern'", "does not match dst");
#undef ONE
#undef HDR
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_and_assemble),
        cmocka_unit_test(test_kernel_mask_list),
        cmocka_unit_test(test_kernel_mask_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
