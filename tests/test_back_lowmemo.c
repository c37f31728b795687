/* The lowering's operand memo (lower.c lw_tap_axes), the back-end's
 * AP-bounds memo (compile.c check_kernel) and the validator's in-place
 * operand shortcut (validate.c check_operands) answer as the full checks
 * do, errors included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "back_util.h"
#include "builder.h"
#include "lower.h"

static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

/* What one lw_tap_axes call gave. */
typedef struct {
    int rc;
    isa_tap_t tap;
    unsigned mapped;
    bir_access_t acc;
    char msg[sizeof(tpb_err_t)];
} tap_res_t;

static tap_res_t tap_on(lower_ctx_t *c, const tir_ap_t *a, unsigned axes, bool write)
{
    tap_res_t r;
    memset(&r, 0, sizeof r);
    bir_inst_t in;
    bir_inst_init(&in, BIR_TENSOR_SCALAR, ISA_OP_TENSOR_SCALAR);
    c->err->msg[0] = 0;
    r.rc = lw_tap_axes(c, &in, a, write, "src", axes, &r.tap, &r.mapped);
    if (r.rc == 0) {
        assert_int_equal(in.nacc, 1);
        r.acc = in.acc[0];
    }
    memcpy(r.msg, c->err->msg, sizeof r.msg);
    return r;
}

static void same_res(const tap_res_t *x, const tap_res_t *y)
{
    assert_int_equal(x->rc, y->rc);
    assert_string_equal(x->msg, y->msg);
    if (x->rc == 0) {
        assert_memory_equal(&x->tap, &y->tap, sizeof x->tap);
        assert_int_equal(x->mapped, y->mapped);
        assert_memory_equal(&x->acc, &y->acc, sizeof x->acc);
    }
}

typedef struct {
    tir_kernel_t k;
    bu_run_t r;
    int a, b;
} fix_t;

/* Two SBUF tiles [128, 8, 16], allocated and lowered (one tensor_copy). */
static void fix_init(fix_t *f)
{
    tir_kernel_init(&f->k);
    f->a = BU_T(&f->k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 8, 16);
    f->b = BU_T(&f->k, "b", TIR_T_SBUF, ISA_DT_BF16, 128, 8, 16);
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_COPY);
    op.dst = bu_whole(&f->k, f->b), op.src[0] = bu_whole(&f->k, f->a), op.nsrc = 1;
    bu_op(&f->k, &op, "cp");
    assert_int_equal(bu_lower(&f->r, &f->k, trn2(), false), 0);
}

static lower_ctx_t ctx_of(fix_t *f)
{
    lower_ctx_t c = {.k = &f->k, .t = trn2(), .m = &f->r.m, .err = &f->r.err, .ident_hbm = -1,
                     .ident_tile = -1};
    c.op = &f->k.ops[0];
    lw_tap_memo_clear(&c);   /* (zeroed: empty already) */
    return c;
}

static void fix_free(fix_t *f)
{
    bu_free(&f->r);
    tir_kernel_free(&f->k);
}

/* A run of calls through one memo against the same calls each on an empty
 * memo: interned operands met again, a stack AP whose contents change at
 * one address, other axes, the write flag, and bad APs between good ones. */
static void test_tap_memo_matches_full(void **state)
{
    (void)state;
    fix_t f;
    fix_init(&f);
    lower_ctx_t memo = ctx_of(&f), full = ctx_of(&f);
    const tir_ap_t *wa = bu_whole(&f.k, f.a), *wb = bu_whole(&f.k, f.b);
    tir_ap_t s = *wa;   /* one stack address, several contents */
    const tir_ap_t *seq[] = {wa, wb, wa, &s, &s, &s, &s, &s, wb, wa, &s};
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        switch (i) {
        case 4: s.offset = 32 * 128 + 16; s.count[0] = 32; break;          /* partitions 32..63 */
        case 5: s.step[0] = 64; break;                                      /* not over partitions */
        case 6: s.step[0] = 128; s.offset = 0; s.count[0] = 128; break;     /* valid again */
        case 7: s.offset = 8 * 16; break;                                   /* runs outside the row */
        case 10: s = *wb; s.count[2] = 8; break;
        default: break;
        }
        for (unsigned axes = 0; axes < 3; axes++)
            for (int w = 0; w < 2; w++) {
                lw_tap_memo_clear(&full);
                tap_res_t x = tap_on(&memo, seq[i], axes, w), y = tap_on(&full, seq[i], axes, w);
                same_res(&x, &y);
                if (x.rc == 0)
                    assert_int_equal(x.acc.write, w);
            }
    }
    fix_free(&f);
}

/* A call fills the memo with the AP it answered, and a failing call adds
 * nothing. */
static void test_tap_memo_records(void **state)
{
    (void)state;
    fix_t f;
    fix_init(&f);
    lower_ctx_t c = ctx_of(&f);
    lw_tap_memo_clear(&c);
    tir_ap_t bad = *bu_whole(&f.k, f.a);
    bad.step[0] = 3;
    assert_int_not_equal(tap_on(&c, &bad, 0, false).rc, 0);
    for (int i = 0; i < LW_TAP_MEMO; i++)
        assert_false(lw_tap_memo_valid(&c, i));
    const tir_ap_t *wa = bu_whole(&f.k, f.a);
    tap_res_t x = tap_on(&c, wa, 1, true);
    assert_int_equal(x.rc, 0);
    int found = 0;
    for (int i = 0; i < LW_TAP_MEMO; i++)
        if (lw_tap_memo_valid(&c, i)) {
            found++;
            assert_true(tir_ap_equal(&c.memo.tap[i].ap, wa));
            assert_int_equal(c.memo.tap[i].axes, 1);
            assert_memory_equal(&c.memo.tap[i].tap, &x.tap, sizeof x.tap);
            assert_int_equal(c.memo.tap[i].acc.write, 0);
        }
    assert_int_equal(found, 1);
    fix_free(&f);
}

/* Another tensor (a loop's next tile) finds the entry of an earlier one
 * only when the result is the same: same kind, dtype, row size and
 * address.  Each step compares the memo against the full path; the step
 * that matches all four leaves a's entry only, the one before (same
 * slot, other dtype) b's. */
static void test_tap_memo_other_tensor(void **state)
{
    (void)state;
    fix_t f;
    fix_init(&f);
    lower_ctx_t memo = ctx_of(&f), full = ctx_of(&f);
    tir_tensor_t *tb = &f.k.tensors[f.b];
    bir_mloc_t *mb = &f.r.m.mlocs[f.b];
    const bir_mloc_t *ma = &f.r.m.mlocs[f.a];
    tir_ap_t pa = *bu_whole(&f.k, f.a), pb = pa;
    pb.tensor = f.b;   /* the same pattern over b */
    for (int step = 0; step < 5; step++) {
        switch (step) {
        case 1: mb->addr = ma->addr; break;                 /* same buffer, bf16 */
        case 2: tb->dtype = ISA_DT_FP32; break;             /* now the same in all four */
        case 3: tb->shape[2] = 32; break;                   /* another row size: an error */
        case 4: tb->shape[2] = 16; tb->kind = TIR_T_PSUM; break;
        default: break;
        }
        lw_tap_memo_clear(&memo);
        lw_tap_memo_clear(&full);
        tap_res_t x = tap_on(&memo, &pa, 1, false), y = tap_on(&full, &pa, 1, false);
        same_res(&x, &y);
        lw_tap_memo_clear(&full);
        x = tap_on(&memo, &pb, 1, true), y = tap_on(&full, &pb, 1, true);
        same_res(&x, &y);
        assert_int_equal(x.rc, step == 3 ? -1 : 0);   /* step 3: row 512, dim 0 steps 128 */
        int n = 0, of_a = 0;
        for (int i = 0; i < LW_TAP_MEMO; i++)
            if (lw_tap_memo_valid(&memo, i))
                n++, of_a += memo.memo.tap[i].ap.tensor == f.a;
        if (step == 1)   /* the dtype is not hashed: b's key takes a's slot, b replaced a */
            assert_int_equal(n, 1), assert_int_equal(of_a, 0);
        if (step == 2)   /* b found a's entry: nothing was added */
            assert_int_equal(n, 1), assert_int_equal(of_a, 1);
    }
    fix_free(&f);
}

/* ---- compile.c check_kernel: operand bounds, first bad op named ---- */

/* load t <- a; n tensor_scalar t <- t (one shared interned AP); store. */
static void chain(tir_kernel_t *k, int n)
{
    tir_kernel_init(k);
    int a = BU_T(k, "a", TIR_T_INPUT, ISA_DT_FP32, 1, 4);
    int o = BU_T(k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 1, 4);
    int t = BU_T(k, "t", TIR_T_SBUF, ISA_DT_FP32, 1, 4);
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(k, t), op.src[0] = bu_whole(k, a), op.nsrc = 1;
    bu_op(k, &op, "ld");
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "ts%d", i);
        tir_op_init(&op, TIR_TENSOR_SCALAR);
        op.dst = op.src[0] = bu_whole(k, t), op.nsrc = 1;
        op.op0 = ISA_ALU_ADD, op.s0.imm = 1.0, op.engine = ISA_ENG_DVE;
        bu_op(k, &op, name);
    }
    tir_op_init(&op, TIR_STORE);
    op.dst = bu_whole(k, o), op.src[0] = bu_whole(k, t), op.nsrc = 1;
    bu_op(k, &op, "st");
}

static void compile_err(const tir_kernel_t *k, const char *want)
{
    enc_options_t o = {NULL, "trn2", ENC_GENERATE_ISACODE, false, 0, false, false, false, false, 0, NULL};
    tpb_err_t err;
    assert_int_not_equal(enc_compile_staged(k, &o, NULL, NULL, &err), 0);
    assert_string_equal(err.msg, want);
}

static void test_check_kernel_memo(void **state)
{
    (void)state;
    tir_kernel_t k;
    chain(&k, 6);
    assert_int_equal(bu_compile(&k, NULL, ENC_GENERATE_ISACODE, NULL, NULL), 0);
    /* a bad operand after ops that shared a checked one */
    BU_EDIT(&k, k.ops[4].src[0], offset, -1);
    compile_err(&k, "op 4 'ts3' (body[4]): access offset -1 out of range");
    /* the same bad record shared by ops 2 and 4: op 2 is named */
    k.ops[2].dst = k.ops[4].src[0];
    compile_err(&k, "op 2 'ts1' (body[2]): access offset -1 out of range");
    /* a good record met before and after a bad one in the same slot */
    k.ops[2].dst = k.ops[1].dst;
    BU_EDIT(&k, k.ops[4].src[0], offset, 0);
    BU_EDIT(&k, k.ops[5].dst, count[1], 0);
    compile_err(&k, "op 5 'ts4' (body[5]): access dim 1 has count 0");
    /* a bad record in the last slot, past the absent ones (&tir_ap_none) */
    tir_ap_t bad = *k.ops[1].dst;
    bad.offset = -1;
    k.ops[1].s1.ap = bu_in(&k, bad);
    compile_err(&k, "op 1 'ts0' (body[1]): access offset -1 out of range");
    tir_kernel_free(&k);
}

/* ---- validate.c: one record named twice by an op (dst = src) ---- */

static void validate_msg(const tir_kernel_t *k, const tir_op_t *op, const char *want)
{
    tpb_err_t err;
    err.msg[0] = 0;
    int rc = enc_validate_op(k, trn2(), op, &err);
    if (!want) {
        assert_int_equal(rc, 0);
        return;
    }
    assert_int_not_equal(rc, 0);
    assert_string_equal(err.msg, want);
}

static void test_validate_in_place(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int u = BU_T(&k, "u", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int w = BU_T(&k, "w", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_SCALAR);
    op.path = "body[0]";
    op.op0 = ISA_ALU_ADD, op.s0.imm = 1.0, op.engine = ISA_ENG_DVE, op.nsrc = 1;
    op.dst = op.src[0] = bu_whole(&k, u);
    validate_msg(&k, &op, NULL);
    /* the shared record is bad: named at its first slot */
    tir_ap_t bad = *bu_whole(&k, u);
    bad.offset = 64;
    op.dst = op.src[0] = bu_in(&k, bad);
    validate_msg(&k, &op, "body[0] (tensor_scalar): field 'dst': access pattern reaches "
                          "elements 64..8255 of 'u' which has 8192 elements");
    /* a good dst, then another (bad) record as src: still checked */
    op.dst = bu_whole(&k, w);
    validate_msg(&k, &op, "body[0] (tensor_scalar): field 'src': access pattern reaches "
                          "elements 64..8255 of 'u' which has 8192 elements");
    /* the record passed as dst is then a good src, and a bad in1 after it */
    tir_op_init(&op, TIR_TENSOR_TENSOR);
    op.path = "body[1]";
    op.op0 = ISA_ALU_ADD, op.engine = ISA_ENG_DVE, op.nsrc = 2;
    op.dst = op.src[0] = bu_whole(&k, u);
    op.src[1] = bu_in(&k, bad);
    validate_msg(&k, &op, "body[1] (tensor_tensor): field 'in1': access pattern reaches "
                          "elements 64..8255 of 'u' which has 8192 elements");
    op.src[1] = op.dst;
    validate_msg(&k, &op, NULL);
    tir_kernel_free(&k);
}

/* An op's first instruction takes the op's own name string (the sidecar
 * writer then sees the two are one by address, lower.c lw_inst); a name of
 * BIR_NAME_LEN - 1 bytes (the longest a tile-IR name has) is copied, as a
 * longer one would be cut. */
static void test_first_inst_takes_op_name(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 16);
    int b = BU_T(&k, "b", TIR_T_SBUF, ISA_DT_FP32, 128, 16);
    char longname[BIR_NAME_LEN];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    _Static_assert(BIR_NAME_LEN <= TIR_NAME_LEN, "a tile-IR name of BIR_NAME_LEN - 1 bytes");
    const char *names[] = {"cp", longname};
    for (int i = 0; i < 2; i++) {
        tir_op_t op;
        tir_op_init(&op, TIR_TENSOR_COPY);
        op.dst = bu_whole(&k, i ? a : b), op.src[0] = bu_whole(&k, i ? b : a), op.nsrc = 1;
        assert_int_equal(bu_op(&k, &op, names[i]), i);
    }
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    const bir_block_t *blk = bir_main_block(&r.m);
    int seen[2] = {0, 0};
    for (int i = 0; i < blk->ninsts; i++) {
        const bir_inst_t *in = &blk->insts[i];
        if (in->tir_op < 0 || seen[in->tir_op]++)
            continue;
        const char *own = k.ops[in->tir_op].name;
        if (in->tir_op == 0) {
            assert_ptr_equal(in->name, own);
        } else {
            assert_ptr_not_equal(in->name, own);
            assert_string_equal(in->name, own);
        }
    }
    assert_int_equal(seen[0] > 0 && seen[1] > 0, 1);
    bu_free(&r);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tap_memo_matches_full),
        cmocka_unit_test(test_tap_memo_records),
        cmocka_unit_test(test_tap_memo_other_tensor),
        cmocka_unit_test(test_check_kernel_memo),
        cmocka_unit_test(test_validate_in_place),
        cmocka_unit_test(test_first_inst_takes_op_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
