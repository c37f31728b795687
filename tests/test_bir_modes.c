/* BIR mode flags (seed 001 "The activation pair" / "The tensor-scalar
 * pointer emitters"): activate2 is the shared builder's BIR Activation with
 * is_activate2 set (setIsActivate2), scalar_tensor_tensor the shared
 * TensorScalarPtr with is_stt set (set_is_scalar_tensor_tensor); codegen
 * picks the ISA opcode (Activate2 0x21, ScalarTensorTensor 0x44) from the
 * flag, and emission refuses an instruction whose ISA op disagrees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <unistd.h>

#include "back_util.h"
#include "fileio.h"

/* a -> t; t2 = activation(t); t3 = activate2(t); t4 = stt(t, t2);
 * t5 = tensor_scalar(t, [P,1] pointer) -> out */
static void build_kernel(tir_kernel_t *k)
{
    tir_kernel_init(k);
    snprintf(k->name, sizeof k->name, "bir_modes");
    int a = BU_T(k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, 64);
    int out = BU_T(k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 128, 64);
    int t[6];
    for (int i = 1; i < 6; i++) {
        char n[8];
        snprintf(n, sizeof n, "t%d", i);
        t[i] = BU_T(k, n, TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    }
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(k, t[1]), op.src[0] = bu_whole(k, a), op.nsrc = 1;
    bu_op(k, &op, "ld");
    tir_op_init(&op, TIR_ACTIVATION);
    op.dst = bu_whole(k, t[2]), op.src[0] = bu_whole(k, t[1]), op.nsrc = 1;
    op.func = ISA_ACTFN_EXP, op.s0.imm = 1.0;
    bu_op(k, &op, "act");
    tir_op_init(&op, TIR_ACTIVATE2);
    op.dst = bu_whole(k, t[3]), op.src[0] = bu_whole(k, t[1]), op.nsrc = 1;
    op.func = ISA_ACTFN_COPY, op.op0 = ISA_ALU_ADD, op.s0.imm = 1.0;
    op.op1 = ISA_ALU_MULTIPLY, op.s1.imm = 3.0;
    bu_op(k, &op, "act2");
    tir_op_init(&op, TIR_SCALAR_TENSOR_TENSOR);
    op.dst = bu_whole(k, t[4]), op.src[0] = bu_whole(k, t[1]), op.src[1] = bu_whole(k, t[2]);
    op.nsrc = 2, op.op0 = ISA_ALU_MULTIPLY, op.s0.imm = 2.0, op.op1 = ISA_ALU_ADD;
    bu_op(k, &op, "stt");
    tir_op_init(&op, TIR_TENSOR_SCALAR);
    op.dst = bu_whole(k, t[5]), op.src[0] = bu_whole(k, t[4]), op.nsrc = 1;
    op.op0 = ISA_ALU_ADD, op.op1 = ISA_ALU_BYPASS;
    op.s0.is_ap = true, op.s0.ap = bu_in(k, bu_ap(t[3], 0, 2, (int64_t)64, (int64_t)128, (int64_t)1,
                                         (int64_t)1));
    bu_op(k, &op, "tsp");
    tir_op_init(&op, TIR_STORE);
    op.dst = bu_whole(k, out), op.src[0] = bu_whole(k, t[5]), op.nsrc = 1;
    bu_op(k, &op, "st");
}

static const bir_inst_t *by_name(bu_run_t *r, const char *name)
{
    bir_block_t *b = bu_block(r);
    for (int i = 0; i < b->ninsts; i++)
        if (!strcmp(b->insts[i].name, name))
            return &b->insts[i];
    fail_msg("no instruction '%s'", name);
    return NULL;
}

/* One GENERATE_ISACODE run over the module: 0, or -1 with err set. */
static int gen_check(bu_run_t *r, tpb_err_t *err)
{
    gen_t g;
    if (gen_init(&g, ENC_GENERATE_ISACODE, &r->m, NULL, false, err))
        return -1;
    int rc = gen_run(&g, err);
    gen_finish(&g, rc == 0, err);
    gen_free(&g);
    return rc;
}

static void test_flags_pick_the_isa_op(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_kernel(&k);
    bu_run_t r;
    int rc = bu_lower(&r, &k, tpb_target_get("trn2"), true);
    if (rc)
        print_error("%s\n", r.err.msg);
    assert_int_equal(rc, 0);
    /* activate2: the shared builder's Activation, flag set, ISA Activate2 */
    const bir_inst_t *x = by_name(&r, "act2");
    assert_int_equal(x->opc, BIR_ACTIVATION);
    assert_true(x->is_activate2);
    assert_false(x->is_stt);
    assert_int_equal(x->isa.op, ISA_OP_ACTIVATE2);
    assert_int_equal(x->isa.l2, 0x21);
    assert_int_equal(x->engines, isa_ops[ISA_OP_ACTIVATE2].engines);
    assert_true(x->isa.f->ACT2.imm1 == 3.0f);
    x = by_name(&r, "act");
    assert_int_equal(x->opc, BIR_ACTIVATION);
    assert_false(x->is_activate2);
    assert_int_equal(x->isa.op, ISA_OP_ACTIVATION);
    /* scalar_tensor_tensor: the shared TensorScalarPtr, is_stt, ISA STT */
    x = by_name(&r, "stt");
    assert_int_equal(x->opc, BIR_TENSOR_SCALAR_PTR);
    assert_true(x->is_stt);
    assert_false(x->is_activate2);
    assert_int_equal(x->isa.op, ISA_OP_SCALAR_TENSOR_TENSOR);
    assert_int_equal(x->isa.l2, 0x44);
    assert_int_equal(x->isa.f->STT.s0, 0x40000000u);   /* 2.0f */
    x = by_name(&r, "tsp");
    assert_int_equal(x->opc, BIR_TENSOR_SCALAR_PTR);
    assert_false(x->is_stt);
    assert_int_equal(x->isa.op, ISA_OP_TENSOR_SCALAR_PTR);
    /* the values 12 and 23 are no BIR opcode any more */
    assert_string_equal(bir_opcode_name((bir_opcode_t)12), "?");
    assert_string_equal(bir_opcode_name((bir_opcode_t)23), "?");
    /* the setter re-derives the op: clearing the flag gives plain Activation */
    bir_inst_t y = *by_name(&r, "act2");
    bir_inst_set_is_activate2(&r.m, &y, false);
    assert_int_equal(y.isa.op, ISA_OP_ACTIVATION);
    assert_int_equal(bir_codegen_isa_op(&y), ISA_OP_ACTIVATION);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* Emission derives the encoding from the flags: a flagged instruction that
 * carries another ISA op is refused, naming the BIR form. */
static void test_emit_checks_the_flag(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_kernel(&k);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, tpb_target_get("trn2"), true), 0);
    tpb_err_t err;
    assert_int_equal(gen_check(&r, &err), 0);
    bir_inst_t *x = (bir_inst_t *)by_name(&r, "stt");
    x->is_stt = false;   /* flag cleared behind the setter's back */
    assert_int_not_equal(gen_check(&r, &err), 0);
    assert_non_null(strstr(err.msg, "'stt': BIR TensorScalarPtr is ISA TensorScalarPtr, not "));
    x->is_stt = true;
    x = (bir_inst_t *)by_name(&r, "act2");
    x->isa.op = ISA_OP_ACTIVATION;
    assert_int_not_equal(gen_check(&r, &err), 0);
    assert_non_null(strstr(err.msg, "BIR Activation is_activate2=1 is ISA Activate2, not "));
    bu_free(&r);
    tir_kernel_free(&k);
}

/* The bytes of <dir>/nc0/sg0/<name> (malloc'd, NUL-terminated), or NULL. */
static char *slurp(const char *dir, const char *name, size_t *len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/nc0/sg0/%s", dir, name);
    uint8_t *buf;
    tpb_err_t err;
    if (fio_read_all(path, &buf, len, &err))
        return NULL;
    char *s = malloc(*len + 1);
    if (s) {
        memcpy(s, buf, *len);
        s[*len] = 0;
    }
    free(buf);
    return s;
}

static bool stream_has(const char *dir, const char *eng, uint8_t l2)
{
    char name[64];
    snprintf(name, sizeof name, "%s.bin", eng);
    size_t len;
    char *buf = slurp(dir, name, &len);
    bool found = false;
    for (size_t o = 0; buf && o + ISA_BUNDLE_BYTES <= len; o += ISA_BUNDLE_BYTES)
        found |= (uint8_t)buf[o] == l2;
    free(buf);
    return found;
}

static bool file_has(const char *dir, const char *name, const char *needle)
{
    size_t len;
    char *s = slurp(dir, name, &len);
    bool found = s && strstr(s, needle) != NULL;
    free(s);
    return found;
}

/* The streams keep the hardware opcodes; the sidecars name the BIR form. */
static void test_streams_and_sidecars(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_kernel(&k);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/bir_modes_%ld", TPB_BINARY_DIR, (long)getpid());
    art_rmtree(dir);
    assert_int_equal(bu_compile(&k, dir, ENC_RUN_ISA_CHECKS, NULL, NULL), 0);
    assert_true(stream_has(dir, "Activation", 0x21));
    assert_true(stream_has(dir, "Activation", isa_ops[ISA_OP_ACTIVATION].l2));
    assert_true(stream_has(dir, "DVE", 0x44));
    assert_true(file_has(dir, "Activation.json", "\"Activation is_activate2=1\""));
    assert_true(file_has(dir, "DVE.json", "\"TensorScalarPtr is_stt=1\""));
    art_rmtree(dir);
    tir_kernel_free(&k);
}

/* DgeComputeOp (seed 002 / N-03): the BIR side carries the notes' enum
 * (bypass 0, add 2), codegen writes the descriptors' 1-bit wire field
 * (bypass 0, add 1); emission refuses a descriptor where they disagree. */
static void test_dge_compute_add_is_2(void **state)
{
    (void)state;
    assert_int_equal(BIR_DGE_COMPUTE_BYPASS, 0);
    assert_int_equal(BIR_DGE_COMPUTE_ADD, 2);
    assert_int_equal(bir_dge_compute_wire(BIR_DGE_COMPUTE_ADD), ISA_DMAOP_ADD);
    assert_int_equal(ISA_DMAOP_ADD, 1);
    assert_int_equal(bir_dge_compute_wire(BIR_DGE_COMPUTE_BYPASS), ISA_DMAOP_BYPASS);
    tir_kernel_t k;
    tir_kernel_init(&k);
    int out = BU_T(&k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 1000, 64);
    int acc = BU_T(&k, "acc", TIR_T_OUTPUT, ISA_DT_FP32, 128, 64);
    int idx = BU_T(&k, "idx", TIR_T_SBUF, ISA_DT_INT32, 128, 1);
    int t = BU_T(&k, "t", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_INDIRECT_SAVE);   /* scatter-add: indirect descriptor */
    op.src[0] = bu_whole(&k, t);
    op.dst = bu_in(&k, bu_ap(out, 0, 2, (int64_t)64, (int64_t)128, (int64_t)1, (int64_t)64));
    op.index = bu_whole(&k, idx);
    op.nsrc = 1;
    op.flags = TIR_F_RMW_ADD;
    bu_op(&k, &op, "scatter_add");
    tir_op_init(&op, TIR_STORE);           /* store with rmw add: direct descriptors */
    op.dst = bu_whole(&k, acc), op.src[0] = bu_whole(&k, t), op.nsrc = 1;
    op.flags = TIR_F_RMW_ADD;
    bu_op(&k, &op, "st_add");
    tir_op_init(&op, TIR_STORE);           /* plain store: bypass */
    op.dst = bu_whole(&k, acc), op.src[0] = bu_whole(&k, t), op.nsrc = 1;
    bu_op(&k, &op, "st");
    bu_run_t r;
    int rc = bu_lower(&r, &k, tpb_target_get("trn2"), true);
    if (rc)
        print_error("%s\n", r.err.msg);
    assert_int_equal(rc, 0);
    bir_block_t *b = bu_block(&r);
    int seen[3] = {0, 0, 0};   /* scatter_add, st_add, st descriptors + triggers */
    for (int i = 0; i < b->ninsts; i++) {
        bir_inst_t *x = &b->insts[i];
        int o = x->tir_op;
        if (o < 0 || (x->isa.op != ISA_OP_DMA_DIRECT2D && x->isa.op != ISA_OP_DMA_INDIRECT2D &&
                      x->isa.op != ISA_OP_DMA_TRIGGER))
            continue;
        unsigned want = o == 2 ? BIR_DGE_COMPUTE_BYPASS : BIR_DGE_COMPUTE_ADD;
        assert_int_equal(x->dge_compute, want);
        if (x->isa.op == ISA_OP_DMA_INDIRECT2D)
            assert_int_equal(x->isa.f->DIND.compute, 1);
        else if (x->isa.op == ISA_OP_DMA_DIRECT2D)
            assert_int_equal(x->isa.f->DDESC.compute, o == 2 ? 0 : 1);
        seen[o]++;
    }
    assert_true(seen[0] >= 2 && seen[1] >= 2 && seen[2] >= 2);
    tpb_err_t err;
    assert_int_equal(gen_check(&r, &err), 0);
    /* the wire value written straight as the BIR value 2 would not fit the bit:
     * a descriptor whose wire field is not the map of its DgeComputeOp is refused */
    bir_inst_t *d = &b->insts[bu_find(&r, ISA_OP_DMA_INDIRECT2D, 0)];
    d->dge_compute = BIR_DGE_COMPUTE_BYPASS;
    assert_int_not_equal(gen_check(&r, &err), 0);
    assert_non_null(strstr(err.msg, "DgeComputeOp 0 is wire compute 0, not 1"));
    bu_free(&r);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags_pick_the_isa_op),
        cmocka_unit_test(test_emit_checks_the_flag),
        cmocka_unit_test(test_streams_and_sidecars),
        cmocka_unit_test(test_dge_compute_add_is_2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
