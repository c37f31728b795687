/* Robustness: randomly corrupted tile IR must never crash the back-end; every
 * call either succeeds or fails with a message.  Deterministic (fixed seed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

#include "back_util.h"
#include "xorshift.h"

static uint64_t rng_next(uint64_t *s)
{
    return xorshift64(s);
}

static int64_t pick(uint64_t *s, const int64_t *vals, int n) { return vals[rng_next(s) % (uint64_t)n]; }

static void build(tir_kernel_t *k)
{
    tir_kernel_init(k);
    snprintf(k->name, sizeof k->name, "robust");
    int a = BU_T(k, "a", TIR_T_INPUT, ISA_DT_FP32, 256, 64);
    int out = BU_T(k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 256, 64);
    int t = BU_T(k, "t", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int u = BU_T(k, "u", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int w = BU_T(k, "w", TIR_T_SBUF, ISA_DT_BF16, 128, 128);
    int p = BU_T(k, "p", TIR_T_PSUM, ISA_DT_FP32, 128, 64);
    int s = BU_T(k, "s", TIR_T_SBUF, ISA_DT_FP32, 128, 1);
    int ix = BU_T(k, "ix", TIR_T_SBUF, ISA_DT_INT32, 128, 1);
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(k, t), op.src[0] = bu_in(k, bu_ap(a, 0, 2, (int64_t)64, (int64_t)128, (int64_t)1, (int64_t)64));
    op.nsrc = 1;
    bu_op(k, &op, "ld");
    tir_op_init(&op, TIR_ACTIVATION);
    op.dst = bu_whole(k, u), op.src[0] = bu_whole(k, t), op.nsrc = 1, op.func = ISA_ACTFN_EXP;
    op.bias = bu_whole(k, s), op.reduce_op = ISA_ALU_ADD, op.dst2 = bu_whole(k, s);
    bu_op(k, &op, "act");
    tir_op_init(&op, TIR_MATMUL);
    op.dst = bu_whole(k, p), op.src[0] = bu_whole(k, w), op.src[1] = bu_whole(k, u), op.nsrc = 2;
    bu_op(k, &op, "mm");
    tir_op_init(&op, TIR_TENSOR_SCALAR);
    op.dst = bu_whole(k, t), op.src[0] = bu_whole(k, p), op.nsrc = 1;
    op.op0 = ISA_ALU_MULTIPLY, op.s0.is_ap = true, op.s0.ap = bu_whole(k, s);
    bu_op(k, &op, "ts");
    tir_op_init(&op, TIR_TENSOR_REDUCE);
    op.dst = bu_whole(k, s), op.src[0] = bu_whole(k, t), op.nsrc = 1, op.reduce_op = ISA_ALU_MAX;
    TIR_RARE_SET(k, &op, axes, 1);
    bu_op(k, &op, "red");
    tir_op_init(&op, TIR_IOTA);
    op.dst = bu_whole(k, ix);
    tir_op_rare_t pr = tir_rare_default;
    pr.pat_ndim = 1, pr.pat_cm = 1;
    op.rare = bu_rare(k, pr);
    bu_op(k, &op, "iota");
    tir_op_init(&op, TIR_INDIRECT_SAVE);
    op.dst = bu_in(k, bu_ap(out, 0, 2, (int64_t)64, (int64_t)128, (int64_t)1, (int64_t)64));
    op.src[0] = bu_whole(k, t), op.index = bu_whole(k, ix), op.nsrc = 1, op.flags = TIR_F_RMW_ADD;
    bu_op(k, &op, "scatter");
    tir_op_init(&op, TIR_STORE);
    op.dst = bu_in(k, bu_ap(out, 128 * 64, 2, (int64_t)64, (int64_t)128, (int64_t)1, (int64_t)64));
    op.src[0] = bu_whole(k, u), op.nsrc = 1;
    bu_op(k, &op, "st");
}

/* An operand slot of op (its AP is shared: mutate a copy, re-intern). */
static const tir_ap_t **some_ap(tir_op_t *op, uint64_t *s)
{
    switch (rng_next(s) % 6) {
    case 0: return &op->dst;
    case 1: return &op->dst2;
    case 2: return &op->src[rng_next(s) % 4];
    case 3: return &op->index;
    case 4: return &op->bias;
    default: return &op->s0.ap;
    }
}

static void mutate(tir_kernel_t *k, uint64_t *s)
{
    static const int64_t nums[] = {-70000, -5, -1, 0, 1, 2, 3, 7, 8, 31, 32, 64, 127, 128, 129,
                                   255, 256, 4096, 65535, 65536, 1 << 20, (int64_t)1 << 33,
                                   INT64_MAX, INT64_MIN};
    const int N = (int)(sizeof nums / sizeof nums[0]);
    tir_op_t *op = &k->ops[rng_next(s) % (uint64_t)k->nops];
    const tir_ap_t **slot = some_ap(op, s);
    tir_ap_t ap = **slot, *a = &ap;
    switch (rng_next(s) % 14) {
    case 0: a->count[rng_next(s) % TIR_MAX_DIMS] = pick(s, nums, N); break;
    case 1: a->step[rng_next(s) % TIR_MAX_DIMS] = pick(s, nums, N); break;
    case 2: a->offset = pick(s, nums, N); break;
    case 3: a->tensor = (int)(rng_next(s) % (uint64_t)(k->ntensors + 2)) - 1; break;
    case 4: a->ndim = (int)(rng_next(s) % 9) - 1; break;
    case 5: op->engine = (int)(rng_next(s) % 10) - 1; break;
    case 6: op->kind = (tir_opkind_t)(rng_next(s) % (TIR_OP_COUNT + 2)); break;
    case 7: op->flags = (unsigned)rng_next(s); break;
    case 8: TIR_RARE_SET(k, op, axes, (unsigned)rng_next(s) & 0x3F); break;
    case 9: op->op0 = (int)(rng_next(s) % 40) - 2, op->reduce_op = (int)(rng_next(s) % 40); break;
    case 10: op->func = (int)(rng_next(s) % 40); TIR_RARE_SET(k, op, reduce_cmd, (int)(rng_next(s) % 9)); break;
    case 11: k->tensors[rng_next(s) % (uint64_t)k->ntensors].dtype = (unsigned)(rng_next(s) % 16); break;
    case 12: k->tensors[rng_next(s) % (uint64_t)k->ntensors].shape[rng_next(s) % 2] = pick(s, nums, N); break;
    default: {
        tir_op_rare_t r = *op->rare;
        r.dge_mode = (int)(rng_next(s) % 5) - 1, r.qos = (int)pick(s, nums, N);
        r.pat_ndim = (int)(rng_next(s) % 7) - 1, r.pat_step[0] = pick(s, nums, N);
        r.tile_pos[0] = (int)(rng_next(s) % 200);
        r.n_transpose_axes = (int)(rng_next(s) % 6);
        op->rare = bu_rare(k, r);
        break;
    }
    }
    *slot = bu_in(k, ap);
}

static void test_random_corruption(void **state)
{
    (void)state;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    int ok = 0, failed = 0;
    for (int iter = 0; iter < 600; iter++) {
        tir_kernel_t k;
        build(&k);
        int nmut = 1 + (int)(rng_next(&seed) % 3);
        for (int i = 0; i < nmut; i++)
            mutate(&k, &seed);
        enc_options_t o = {NULL, "trn2", iter % 2 ? ENC_GENERATE_ISACODE : ENC_COLLECT_OPCODES,
                           false, 0, false, false, false, false, 0, NULL};
        enc_stats_t st;
        tpb_err_t err;
        err.msg[0] = 0;
        if (enc_compile(&k, &o, &st, &err) == 0) {
            ok++;
        } else {
            failed++;
            assert_true(err.msg[0] != 0);
        }
        tir_kernel_free(&k);
    }
    /* the corpus exercises both outcomes */
    assert_true(ok > 0);
    assert_true(failed > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_corruption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
