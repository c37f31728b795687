/* encoder/builder.c + validate.c through the C builder API: the same
 * validation messages as the JSON path, sticky errors, scopes, APs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "builder.h"

typedef struct {
    tir_kernel_t k;
    tpb_err_t err;
    enc_builder_t b;
    int a, out, t, u, p, idx, tab;
} fx_t;

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof *f);
    assert_int_equal(enc_builder_init(&f->b, &f->k, "c_kernel", "trn2", &f->err), 0);
    f->a = enc_input(&f->b, "a", ISA_DT_FP32, 2, (int64_t[]){300, 512});
    f->tab = enc_input(&f->b, "tab", ISA_DT_FP32, 2, (int64_t[]){1000, 64});
    f->out = enc_output(&f->b, "out", ISA_DT_FP32, 2, (int64_t[]){300, 512});
    f->t = enc_tile(&f->b, "t", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 512});
    f->u = enc_tile(&f->b, "u", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 64});
    f->p = enc_tile(&f->b, "p", TIR_T_PSUM, ISA_DT_FP32, 2, (int64_t[]){128, 512});
    f->idx = enc_tile(&f->b, "idx", TIR_T_SBUF, ISA_DT_INT32, 2, (int64_t[]){128, 1});
    assert_false(f->b.failed);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    enc_builder_free(&f->b);
    tir_kernel_free(&f->k);
    free(f);
    return 0;
}

static void expect_msg(fx_t *f, const char *needle)
{
    assert_true(f->b.failed);
    if (!strstr(f->err.msg, needle))
        fail_msg("message '%s' lacks '%s'", f->err.msg, needle);
}

static void test_build_tensor_add(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    for (int i = 0; i < 3; i++) {
        int64_t rows = 300 - i * 128 < 128 ? 300 - i * 128 : 128;
        enc_scope_begin(b);
        int ta = enc_tile(b, "ta", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 512});
        enc_slice_t rs[] = {ENC_RANGE(0, rows)};
        enc_slice_t hs[] = {ENC_RANGE(i * 128, (i + 1) * 128)};
        tir_ap_t tap = enc_ap(b, ta, 1, rs, "dst");
        enc_load(b, tap, enc_ap(b, f->a, 1, hs, "src"));
        enc_tensor_tensor(b, tap, tap, tap, ISA_ALU_ADD);
        enc_store(b, enc_ap(b, f->out, 1, hs, "dst"), tap, false);
        enc_scope_end(b);
    }
    assert_false(b->failed);
    assert_int_equal(f->k.nops, 9);
    assert_int_equal(f->k.ops[6].src[0]->offset, 256 * 512);
    assert_int_equal(f->k.ops[6].src[0]->count[0], 44);   /* clipped edge tile */
    assert_int_equal(f->k.ops[6].dst->count[0], 44);
    assert_string_equal(f->k.ops[6].path, "op[6]");
    assert_string_equal(f->k.ops[6].name, "load_6");
    assert_string_equal(f->k.tensors[f->k.ops[6].dst->tensor].name, "ta#2");
    assert_int_equal(f->k.ops[1].engine, ISA_ENG_UNASSIGNED);   /* DVE or Pool: compiler picks */
    assert_int_equal(enc_builder_finish(b), 0);
}

static void test_out_of_scope_and_sticky(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    enc_scope_begin(b);
    int s = enc_tile(b, "s", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 512});
    enc_scope_end(b);
    assert_int_equal(enc_find_tensor(b, "s"), -1);
    enc_set_path(b, "kernel.c:42");
    assert_int_equal(enc_memset(b, enc_ap_none(), 0, ISA_ENG_DVE), -1);
    expect_msg(f, "kernel.c:42 (memset): field 'dst': operand missing");
    /* sticky: the first error stays; later calls do nothing */
    tir_ap_t sap = {.tensor = s, .ndim = 2, .step = {512, 1}, .count = {128, 512}};
    assert_int_equal(enc_memset(b, sap, 0, ISA_ENG_DVE), -1);
    expect_msg(f, "operand missing");
    assert_int_equal(enc_builder_finish(b), -1);
}

/* tir_op_t keeps its enumerations in one byte each: a C caller's value
 * past that range is refused by name where the builder writes it, never
 * cut to a valid one (256 + exp would read as exp), and a value that fits
 * still reaches the validator's own check and words. */
static void test_narrow_fields_range(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    tir_ap_t t = enc_ap_full(b, f->t);
    assert_int_equal(enc_activation(b, t, t, 256 + ISA_ACTFN_EXP, enc_imm(1.0), enc_ap_none()), -1);
    expect_msg(f, "op[0] (activation): field 'func': 257 out of range");
    assert_int_equal(f->k.nops, 0);
}

static void test_narrow_fields_validator(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    tir_ap_t t = enc_ap_full(b, f->t);
    enc_set_path(b, "k.c:7");
    assert_int_equal(enc_activation(b, t, t, 99, enc_imm(1.0), enc_ap_none()), -1);
    expect_msg(f, "k.c:7 (activation): field 'func': invalid activation function 99");
}

static void test_narrow_fields_engine(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    assert_int_equal(enc_memset(b, enc_ap_full(b, f->t), 0, 1000 + ISA_ENG_DVE), -1);
    expect_msg(f, "op[0] (memset): field 'engine': 1005 out of range");
}

static void test_out_of_scope(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    enc_scope_begin(b);
    int s = enc_tile(b, "s", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 512});
    tir_ap_t sap = enc_ap_full(b, s);
    enc_scope_end(b);
    assert_int_equal(enc_memset(b, sap, 0, ISA_ENG_DVE), -1);
    expect_msg(f, "op[0] (memset): field 'dst': tile 's' is used out of its scope");
}

static void test_seed_messages_c(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    /* memset engine */
    assert_int_equal(enc_memset(b, enc_ap_full(b, f->t), 1.0, ISA_ENG_ACT), -1);
    expect_msg(f, "Memset engine can only be Vector or GpSIMD or Unknown.");
}

static void test_seed_both_indirect(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    enc_dma_operand_t side = {enc_ap_full(b, f->tab), enc_ap_full(b, f->idx), 1000};
    side.ap.count[0] = 128;
    assert_int_equal(enc_dma_copy_ex(b, &side, &side, ISA_DGE_NONE, ISA_OOB_ERROR,
                                     ISA_ALU_BYPASS, 0), -1);
    expect_msg(f, "(dma_copy): ``src`` and ``dst`` operands cannot both be indirect memory "
                  "accesses");
}

static void test_seed_scatter(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    tir_ap_t table = enc_ap_full(b, f->tab);
    table.count[0] = 128;
    assert_int_equal(enc_indirect_save(b, table, enc_ap_full(b, f->idx), 1000,
                                       enc_ap_full(b, f->u), ISA_ALU_ADD, ISA_OOB_ERROR), 0);
    assert_true(f->k.ops[0].flags & TIR_F_RMW_ADD);
    assert_int_equal(enc_indirect_save(b, table, enc_ap_full(b, f->idx), 1000,
                                       enc_ap_full(b, f->u), ISA_ALU_ADD, ISA_OOB_SKIP), -1);
    expect_msg(f, "scatter add cannot have other modes except for error");
}

static void test_seed_scatter_op(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    tir_ap_t table = enc_ap_full(b, f->tab);
    table.count[0] = 128;
    assert_int_equal(enc_indirect_save(b, table, enc_ap_full(b, f->idx), 1000,
                                       enc_ap_full(b, f->u), ISA_ALU_MAX, ISA_OOB_ERROR), -1);
    expect_msg(f, "scatter op can only support bypass or add for now");
}

/* oob_mode.skip on a direct DMA: a no-op on a static copy (nothing can be
 * out of bounds when it runs); with a register offset moving the access at
 * run time it is the dynamic-address check (taken: the trigger's bounds);
 * refused with the seed's message on dma_transpose (test_seed_messages_dma
 * of test_front_json_errors). */
static void test_seed_oob_direct(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    enc_slice_t s[] = {ENC_RANGE(0, 128), ENC_RANGE(0, 64)};
    assert_true(enc_dma_copy(b, enc_ap_full(b, f->u), enc_ap(b, f->a, 2, s, "src"),
                             ISA_DGE_NONE, ISA_OOB_SKIP, false) >= 0);
    enc_dma_operand_t dst = {.ap = enc_ap(b, f->out, 2, s, "dst"), .index = enc_ap_none()};
    enc_dma_operand_t src = {.ap = enc_ap(b, f->a, 2, s, "src"), .index = enc_ap_none()};
    assert_true(enc_dma_copy_reg(b, &dst, &src, ISA_DGE_NONE, ISA_OOB_SKIP, ISA_ALU_BYPASS,
                                 0, 3, -1) >= 0);
}

static void test_seed_transpose_axes(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    enc_slice_t s[] = {ENC_RANGE(0, 64), ENC_RANGE(0, 128)};
    int t2 = enc_tile(b, "t2", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 64});
    /* the supported one works */
    assert_int_equal(enc_dma_transpose(b, enc_ap_full(b, t2), enc_ap(b, f->a, 2, s, "src"), 2,
                                       (int[]){1, 0}), 0);
    assert_int_equal(enc_dma_transpose(b, enc_ap_full(b, t2), enc_ap(b, f->a, 2, s, "src"), 2,
                                       (int[]){0, 1}), -1);
    expect_msg(f, "field 'axes': (0, 1) provided for 2D transpose, only (1, 0) supported.");
}

static void test_seed_local_gather(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    int ix = enc_tile(b, "ix", TIR_T_SBUF, ISA_DT_UINT16, 2, (int64_t[]){128, 4});
    int d = enc_tile(b, "d", TIR_T_SBUF, ISA_DT_FP32, 3, (int64_t[]){128, 64, 2});
    /* 16 partitions x 4 = 64 indices per core; 2 elements each: dst [P, 64, 2] */
    assert_int_equal(enc_local_gather(b, enc_ap_full(b, d), enc_ap_full(b, f->u),
                                      enc_ap_full(b, ix), 2, 64), 0);
    assert_int_equal(f->k.ops[0].engine, ISA_ENG_POOL);
    assert_int_equal(enc_local_gather(b, enc_ap_full(b, d), enc_ap_full(b, f->u),
                                      enc_ap_full(b, ix), 2, 65), -1);
    expect_msg(f, "field 'num_valid_indices': num_valid_indices cannot exceed total indices per "
                  "core");
}

/* The remaining seed literals through the C API, one fresh builder each. */
static void test_seed_messages_table(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    int t3 = enc_tile(b, "t3", TIR_T_SBUF, ISA_DT_FP32, 3, (int64_t[]){8, 16, 4});
    int t4 = enc_tile(b, "t4", TIR_T_SBUF, ISA_DT_FP32, 4, (int64_t[]){8, 4, 4, 2});
    int ix = enc_tile(b, "ix", TIR_T_SBUF, ISA_DT_UINT16, 2, (int64_t[]){128, 512});
    int d = enc_tile(b, "d", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 512});
    int small = enc_tile(b, "small", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){64, 64});
    assert_false(b->failed);
    tir_ap_t src3 = enc_ap_raw(b, f->a, 0, 3, (const int64_t[][2]){{512, 4}, {64, 16}, {1, 8}}, "src");
    tir_ap_t src4 = enc_ap_raw(b, f->a, 0, 4,
                               (const int64_t[][2]){{512, 2}, {64, 4}, {8, 4}, {1, 8}}, "src");
    tir_ap_t gsrc = enc_ap_full(b, f->tab);
    gsrc.count[0] = 128;
    struct {
        int which;
        const char *msg;
    } cases[] = {
        {0, "(1, 2, 0) provided for 3D transpose, only (2, 1, 0) supported."},
        {1, "(3, 2, 1, 0) provided for 4D transpose, only (3, 1, 2, 0) supported."},
        {2, "(1, 0) provided for gather transpose, only 3D supported."},
        {3, "``dst_rmw_op`` is not supported indirect memory access on source (``src``) operand"},
        {4, "number of indices per core must be <= 4096"},
        {5, "num_elem_per_idx must be one of [1, 2, 4, 8, 16, 32]"},
        {6, "src_buffer and index must have same partition dimension size"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        b->failed = false;
        f->err.msg[0] = 0;
        int rc = 0;
        switch (cases[i].which) {
        case 0: rc = enc_dma_transpose(b, enc_ap_full(b, t3), src3, 3, (int[]){1, 2, 0}); break;
        case 1: rc = enc_dma_transpose(b, enc_ap_full(b, t4), src4, 4, (int[]){3, 2, 1, 0}); break;
        case 2: {
            tir_op_t op;
            tir_op_init(&op, TIR_DMA_TRANSPOSE);
            op.dst = enc_in(b, enc_ap_full(b, f->u));
            op.src[0] = enc_in(b, gsrc);
            op.nsrc = 1;
            op.index = enc_in(b, enc_ap_full(b, f->idx));
            tir_op_rare_t r = tir_rare_default;
            r.index_bound = 1000;
            r.n_transpose_axes = 2;
            r.transpose_axes[0] = 1;
            op.rare = enc_rare_in(b, &r);
            rc = enc_emit(b, &op);
            break;
        }
        case 3: {
            enc_dma_operand_t dst = {enc_ap_full(b, f->u), enc_ap_none(), 0};
            enc_dma_operand_t src = {gsrc, enc_ap_full(b, f->idx), 1000};
            rc = enc_dma_copy_ex(b, &dst, &src, ISA_DGE_NONE, ISA_OOB_ERROR, ISA_ALU_ADD, 0);
            break;
        }
        case 4: rc = enc_local_gather(b, enc_ap_full(b, d), enc_ap_full(b, f->t), enc_ap_full(b, ix), 1, 0); break;
        case 5: rc = enc_local_gather(b, enc_ap_full(b, d), enc_ap_full(b, f->t), enc_ap_full(b, ix), 3, 16); break;
        default: rc = enc_local_gather(b, enc_ap_full(b, d), enc_ap_full(b, small), enc_ap_full(b, ix), 1, 16); break;
        }
        assert_int_equal(rc, -1);
        if (!strstr(f->err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, f->err.msg, cases[i].msg);
    }
}

static void test_matmul_and_flags(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    int st = enc_tile(b, "st", TIR_T_SBUF, ISA_DT_BF16, 2, (int64_t[]){128, 128});
    int mv = enc_tile(b, "mv", TIR_T_SBUF, ISA_DT_BF16, 2, (int64_t[]){128, 512});
    assert_int_equal(enc_matmul(b, enc_ap_full(b, f->p), enc_ap_full(b, st), enc_ap_full(b, mv),
                                TIR_F_ACCUMULATE), 0);
    const tir_op_t *op = &f->k.ops[0];
    assert_int_equal(op->kind, TIR_MATMUL);
    assert_int_equal(op->engine, ISA_ENG_PE);
    assert_true(op->flags & TIR_F_ACCUMULATE);
    /* [K=128, M=64] x [128, 512] cannot write a [128, 512] PSUM tile */
    enc_slice_t half[] = {ENC_ALL, ENC_RANGE(0, 64)};
    assert_int_equal(enc_matmul(b, enc_ap_full(b, f->p), enc_ap(b, st, 2, half, "stationary"),
                                enc_ap_full(b, mv), 0), -1);
    expect_msg(f, "op[1] (matmul): field 'dst': shape is 128 x 512, expected [M, N] = [64, 512]");
}

/* perf_mode double_row: stationary [K, 2, M], moving [K, 2, N], dst [M, N] */
static void test_matmul_double_row(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    int st = enc_tile(b, "st8", TIR_T_SBUF, ISA_DT_FP8E4M3, 3, (int64_t[]){128, 2, 64});
    int mv = enc_tile(b, "mv8", TIR_T_SBUF, ISA_DT_FP8E4M3, 3, (int64_t[]){128, 2, 512});
    int ps = enc_tile(b, "ps64", TIR_T_PSUM, ISA_DT_FP32, 2, (int64_t[]){64, 512});
    assert_int_equal(enc_matmul(b, enc_ap_full(b, ps), enc_ap_full(b, st), enc_ap_full(b, mv),
                                TIR_F_DOUBLE_ROW), 0);
    assert_true(f->k.ops[0].flags & TIR_F_DOUBLE_ROW);
    /* the whole-free-size view ([M, N] = [128, 1024]) is not the output shape */
    assert_int_equal(enc_matmul(b, enc_ap_full(b, f->p), enc_ap_full(b, st), enc_ap_full(b, mv),
                                TIR_F_DOUBLE_ROW), -1);
    expect_msg(f, "op[1] (matmul): field 'dst': shape is 128 x 512, expected [M, N] = [64, 512]");
}

static void test_matmul_double_row_needs_fp8(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    int st = enc_tile(b, "st16", TIR_T_SBUF, ISA_DT_BF16, 3, (int64_t[]){128, 2, 64});
    int mv = enc_tile(b, "mv16", TIR_T_SBUF, ISA_DT_BF16, 3, (int64_t[]){128, 2, 512});
    int ps = enc_tile(b, "ps64", TIR_T_PSUM, ISA_DT_FP32, 2, (int64_t[]){64, 512});
    assert_int_equal(enc_matmul(b, enc_ap_full(b, ps), enc_ap_full(b, st), enc_ap_full(b, mv),
                                TIR_F_DOUBLE_ROW), -1);
    expect_msg(f, "field 'perf_mode': double_row is a float8 mode (stationary bfloat16, moving "
                  "bfloat16)");
}

static void test_aps(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    enc_slice_t s[] = {ENC_RANGE_STEP(10, 300, 100), ENC_INDEX(7)};
    tir_ap_t a = enc_ap(b, f->a, 2, s, "src");
    assert_false(b->failed);
    assert_int_equal(a.offset, 10 * 512 + 7);
    assert_int_equal(a.ndim, 1);
    assert_int_equal(a.step[0], 100 * 512);
    assert_int_equal(a.count[0], 3);   /* 10, 110, 210 */
    tir_ap_t r = enc_ap_raw(b, f->a, 5, 2, (const int64_t[][2]){{0, 128}, {1, 4}}, "src");
    assert_false(b->failed);
    assert_int_equal(r.step[0], 0);    /* broadcast */
    assert_int_equal(r.offset, 5);
    enc_ap_raw(b, f->a, 0, 1, (const int64_t[][2]){{1, 153601}}, "src");
    expect_msg(f, "field 'src': access pattern reaches elements 0..153600 of 'a' which has "
                  "153600 elements");
}

static void test_tensor_errors(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    enc_input(b, "a", ISA_DT_FP32, 1, (int64_t[]){4});
    expect_msg(f, "input 'a' is declared twice");
}

static void test_identity_and_constants(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    int id = enc_shared_identity_matrix(b, "ident", 3, ISA_DT_FP32);
    assert_true(id >= 0);
    const float *d = f->k.tensors[id].const_data;
    for (int i = 0; i < 9; i++)
        assert_true(d[i] == (i % 4 == 0 ? 1.0f : 0.0f));
    int32_t vals[4] = {1, -2, 3, -4};
    int c = enc_shared_constant(b, "c", ISA_DT_INT32, 2, (int64_t[]){2, 2}, vals);
    assert_memory_equal(f->k.tensors[c].const_data, vals, sizeof vals);
    assert_int_equal(f->k.tensors[c].kind, TIR_T_CONSTANT);
    /* constants cannot be written */
    assert_int_equal(enc_store(b, enc_ap_full(b, c), enc_ap_raw(b, f->u, 0, 2,
                                                                (const int64_t[][2]){{64, 2}, {1, 2}}, "src"),
                               false), -1);
    expect_msg(f, "field 'dst': constant 'c' cannot be written");
}

static void test_activation_and_scalars(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    int s1 = enc_tile(b, "s1", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 1});
    assert_int_equal(enc_activation_reduce(b, enc_ap_full(b, f->t), enc_ap_full(b, f->p),
                                           ISA_ACTFN_EXP, enc_scalar_ap(enc_ap_full(b, s1)),
                                           enc_ap_full(b, s1), ISA_ALU_ADD, enc_ap_full(b, s1)), 0);
    const tir_op_t *op = &f->k.ops[0];
    assert_int_equal(op->engine, ISA_ENG_ACT);
    assert_true(op->s0.is_ap);
    assert_int_equal(op->dst2->tensor, s1);
    assert_int_equal(enc_tensor_scalar(b, enc_ap_full(b, f->t), enc_ap_full(b, f->t),
                                       ISA_ALU_ADD, enc_imm(1), false, ISA_ALU_MULTIPLY,
                                       enc_scalar_ap(enc_ap_full(b, f->u)), true), -1);
    expect_msg(f, "field 'operand1': a per-partition scalar must be a [128, 1] tile access");
}

static void test_hand_built_op_overflow(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    tir_op_t op;
    tir_op_init(&op, TIR_MEMSET);
    op.dst = enc_in(b, (tir_ap_t){.tensor = f->t, .ndim = 3, .step = {0, 0, 0},
                         .count = {(int64_t)1 << 40, (int64_t)1 << 40, 128}});
    assert_int_equal(enc_emit(b, &op), -1);
    expect_msg(f, "op[0] (memset): field 'dst': access pattern is too large");
}

static void test_null_args(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    assert_int_equal(enc_emit(b, NULL), -1);
    expect_msg(f, "no op given");
    b->failed = false;
    assert_int_equal(enc_input(b, "z", ISA_DT_FP32, 2, NULL), -1);
    expect_msg(f, "input 'z': field 'shape': missing");
    b->failed = false;
    tir_ap_t a = enc_ap(b, f->a, 2, NULL, "src");
    assert_int_equal(a.tensor, -1);
    expect_msg(f, "field 'src': no slices given");
    b->failed = false;
    assert_int_equal(enc_tile(b, "bad", TIR_T_INPUT, ISA_DT_FP32, 1, (int64_t[]){4}), -1);
    expect_msg(f, "field 'buffer': must be sbuf or psum");
}

static void test_pool_psum(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    assert_int_equal(enc_tensor_copy(b, enc_ap_full(b, f->t), enc_ap_full(b, f->p), ISA_ENG_POOL),
                     -1);
    expect_msg(f, "op[0] (tensor_copy): field 'src': the Pool (GpSimd) engine cannot access PSUM");
}

/* How oversize_kernel writes the parts of its tile: load, dma_copy (what
 * Python's nl.load emits), dma_copy accumulating (rmw_op add), dma_copy
 * moved by a register. */
enum { W_LOAD, W_COPY, W_COPY_ADD, W_COPY_REG };

static void write_part(enc_builder_t *b, int how, tir_ap_t dst, tir_ap_t src)
{
    enc_dma_operand_t d = {.ap = dst, .index = enc_ap_none()};
    enc_dma_operand_t s = {.ap = src, .index = enc_ap_none()};
    if (how == W_LOAD)
        enc_load(b, dst, src);
    else if (how == W_COPY_REG)
        enc_dma_copy_reg(b, &d, &s, ISA_DGE_NONE, ISA_OOB_ERROR, ISA_ALU_BYPASS, 0, 3, -1);
    else
        enc_dma_copy(b, dst, src, ISA_DGE_NONE, ISA_OOB_ERROR, how == W_COPY_ADD);
}

/* An SBUF tile past the partition size (trn2: 229376 bytes), written only
 * by loads from an input and read part by part, is reloaded at each use
 * (encoder/reload.c, docs/compiler.md "Oversize tiles"). */
static int oversize_kernel_by(fx_t *f, int extra, int how)
{
    enc_builder_t *b = &f->b;
    int big = enc_input(b, "big", ISA_DT_FP32, 2, (int64_t[]){60 * 128, 1024});
    int bo = enc_output(b, "bigout", ISA_DT_FP32, 2, (int64_t[]){60 * 128, 1024});
    int T = enc_tile(b, "T", TIR_T_SBUF, ISA_DT_FP32, 3, (int64_t[]){128, 60, 1024});
    assert_false(b->failed);   /* decided at the end of the body */
    for (int i = 0; i < 60; i++) {
        enc_slice_t ts[] = {ENC_ALL, ENC_INDEX(i), ENC_ALL};
        enc_slice_t hs[] = {ENC_RANGE(i * 128, (i + 1) * 128), ENC_ALL};
        write_part(b, how, enc_ap(b, T, 3, ts, "dst"), enc_ap(b, big, 2, hs, "src"));
    }
    if (extra == 1)
        enc_memset(b, enc_ap_full(b, T), 0, ISA_ENG_DVE);
    for (int i = 0; i < 61; i++) {
        int r = i % 60;
        enc_slice_t ts[] = {ENC_ALL, extra == 2 ? ENC_RANGE(0, 2) : ENC_INDEX(r), ENC_ALL};
        enc_slice_t hs[] = {ENC_RANGE(r * 128, (r + (extra == 2 ? 2 : 1)) * 128), ENC_ALL};
        if (extra == 2) {   /* one read spanning two loaded parts */
            const int64_t pairs[3][2] = {{1024, 128}, {128 * 1024, 2}, {1, 1024}};
            enc_store(b, enc_ap_raw(b, bo, 0, 3, pairs, "dst"), enc_ap(b, T, 3, ts, "src"), false);
            break;
        }
        enc_store(b, enc_ap(b, bo, 2, hs, "dst"), enc_ap(b, T, 3, ts, "src"), false);
    }
    assert_false(b->failed);
    return T;
}

static int oversize_kernel(fx_t *f, int extra)
{
    return oversize_kernel_by(f, extra, W_LOAD);
}

/* The 60 loads (of kind `kind`) are gone; each of the 61 stores has its own
 * load of that kind before it. */
static void check_reloaded(fx_t *f, int how, tir_opkind_t kind)
{
    int T = oversize_kernel_by(f, 0, how);
    int n0 = f->k.nops - 121;   /* ops before the kernel's loads */
    assert_int_equal(n0, 0);
    assert_int_equal(enc_builder_complete(&f->b), 0);
    assert_int_equal(f->k.nops, 122);
    for (int i = 0; i < 61; i++) {
        const tir_op_t *ld = &f->k.ops[2 * i], *st = &f->k.ops[2 * i + 1];
        assert_int_equal(ld->kind, kind);
        assert_int_equal(st->kind, TIR_STORE);
        assert_int_not_equal(ld->dst->tensor, T);
        assert_int_equal(st->src[0]->tensor, ld->dst->tensor);
        assert_int_equal(ld->src[0]->offset, (int64_t)(i % 60) * 128 * 1024);   /* same HBM part */
        const tir_tensor_t *p = &f->k.tensors[ld->dst->tensor];
        assert_int_equal(p->kind, TIR_T_SBUF);
        assert_int_equal(p->shape[p->ndim - 1] * 4 * (p->ndim == 3 ? p->shape[1] : 1), 4096);
        char name[32];
        snprintf(name, sizeof name, "T.r%d", i);
        assert_string_equal(p->name, name);
    }
    assert_int_equal(enc_builder_finish(&f->b), 0);
}

static void test_reload_oversize(void **state)
{
    check_reloaded(*state, W_LOAD, TIR_LOAD);
}

/* A dma_copy from the input is the same data movement as a load: reloaded
 * the same way, each reload a copy of that dma_copy. */
static void test_reload_oversize_dma_copy(void **state)
{
    check_reloaded(*state, W_COPY, TIR_DMA_COPY);
}

/* A dma_copy adding into the tile reads what it writes, and one moved by a
 * register reads wherever the register points when it runs: neither is
 * reloaded. */
static void test_reload_oversize_dma_copy_refused(void **state)
{
    fx_t *f = *state;
    oversize_kernel_by(f, 0, W_COPY_ADD);
    assert_int_equal(enc_builder_complete(&f->b), -1);
    expect_msg(f, "cannot be reloaded from HBM: ");
    expect_msg(f, "(dma_copy) writes it (only plain loads and dma_copy can be reloaded)");
}

static void test_reload_oversize_register_refused(void **state)
{
    fx_t *f = *state;
    oversize_kernel_by(f, 0, W_COPY_REG);
    assert_int_equal(enc_builder_complete(&f->b), -1);
    expect_msg(f, "(dma_copy) writes it (only plain loads and dma_copy can be reloaded)");
}

/* Explicit deps name op indices: after the rewrite a dep names the same op
 * at its new index, and a dep on a dropped load is dropped (the reload put
 * before the reading op stands for it). */
static void test_reload_oversize_deps_follow(void **state)
{
    fx_t *f = *state;
    oversize_kernel(f, 0);
    tir_op_t *last = &f->k.ops[120];   /* the 61st store; 61 is the 2nd store, 5 a load */
    assert_int_equal(tir_op_set_deps(&f->k, last, (const int[]){61, 5}, 2), 0);
    assert_int_equal(enc_builder_complete(&f->b), 0);
    const tir_op_t *now = &f->k.ops[121];
    assert_int_equal(now->kind, TIR_STORE);
    assert_int_equal(now->rare->ndeps, 1);
    assert_int_equal(now->rare->deps[0], 3);   /* the 2nd store, after its own reload */
    assert_int_equal(f->k.ops[3].kind, TIR_STORE);
    assert_int_equal(f->k.ops[3].dst->offset, (int64_t)128 * 1024);
    assert_int_equal(enc_builder_finish(&f->b), 0);
}

static void test_reload_oversize_refused(void **state)
{
    fx_t *f = *state;
    oversize_kernel(f, 1);
    assert_int_equal(enc_builder_complete(&f->b), -1);
    expect_msg(f, "sbuf tile 'T': field 'shape': 245760 bytes per partition exceed the SBUF "
                  "partition size (229376 bytes), and it cannot be reloaded from HBM: ");
    expect_msg(f, "(memset) writes it (only plain loads and dma_copy can be reloaded)");
}

static void test_reload_oversize_refused_span(void **state)
{
    fx_t *f = *state;
    oversize_kernel(f, 2);
    assert_int_equal(enc_builder_complete(&f->b), -1);
    expect_msg(f, "(store) reads a part of it that no single earlier load wrote");
}

/* tir_op_init copies one template: every default the passes rely on
 * (no-tensor APs, -1 ids, bypass ALU ops, keep-all shuffle), the rest zero,
 * and a reused op is fully reset. */
static void test_op_init_defaults(void **state)
{
    (void)state;
    tir_op_t op;
    memset(&op, 0x5a, sizeof op);
    tir_op_init(&op, TIR_TENSOR_SCALAR);
    assert_int_equal(op.kind, TIR_TENSOR_SCALAR);
    assert_string_equal(op.path, "");
    assert_int_equal(op.engine, ISA_ENG_UNASSIGNED);
    const tir_ap_t *aps[] = {op.dst, op.dst2, op.src[0], op.src[1], op.src[2], op.src[3],
                             op.index, op.bias, op.s0.ap, op.s1.ap};
    for (size_t i = 0; i < sizeof aps / sizeof aps[0]; i++) {
        tir_ap_t none;
        memset(&none, 0, sizeof none);
        none.tensor = -1;
        assert_memory_equal(aps[i], &none, sizeof none);
    }
    assert_false(op.s0.is_ap);
    assert_false(op.s1.is_ap);
    assert_true(op.s0.imm == 0 && op.s1.imm == 0);
    assert_int_equal(op.op0, ISA_ALU_BYPASS);
    assert_int_equal(op.op1, ISA_ALU_BYPASS);
    assert_int_equal(op.reduce_op, ISA_ALU_BYPASS);
    assert_int_equal(op.func, ISA_ACTFN_COPY);
    assert_int_equal(op.cmp, ISA_CMP_GE);
    assert_int_equal(op.rare->cmp1, ISA_CMP_GE);
    int minus1[] = {op.rare->barrier_id, op.rare->peer, op.rare->remote_core, op.rare->sync_core, op.rare->sync_sem,
                    op.rare->src_reg, op.rare->dst_reg, op.rare->reg_src, op.rare->s0_reg};
    for (size_t i = 0; i < sizeof minus1 / sizeof minus1[0]; i++)
        assert_int_equal(minus1[i], -1);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(op.rare->rgroup[i], -1);
        assert_int_equal(op.rare->perm_from[i], -1);
    }
    for (int i = 0; i < 32; i++)
        assert_int_equal(op.rare->shuffle_mask[i], 255);
    assert_int_equal(op.nsrc, 0);
    assert_int_equal(op.flags, 0);
    assert_int_equal(op.rare->ndeps, 0);
    assert_int_equal(op.name[0], 0);
    assert_null(op.rare->inl);
    assert_null(op.rare->mask_more);
    assert_int_equal(op.rare->sync_val, 0);
    assert_int_equal(op.rare->local_reduce, 0);
}

/* enc_set_path_slot: the slot keeps the interned path; a stale slot (another
 * statement's path) is corrected, a long path is still truncated, and
 * without a path ops are numbered as before. */
static void test_path_slot(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    tir_ap_t t = enc_ap(b, f->t, 0, NULL, "dst");
    const char *slot = NULL;
    enc_set_path(b, "body[1].body[0]");
    enc_set_path_slot(b, &slot);
    assert_true(enc_memset(b, t, 0, ISA_ENG_DVE) >= 0);
    assert_string_equal(f->k.ops[0].path, "body[1].body[0]");
    assert_ptr_equal(slot, f->k.ops[0].path);
    enc_set_path(b, "body[1].body[0]");
    enc_set_path_slot(b, &slot);
    assert_true(enc_memset(b, t, 0, ISA_ENG_DVE) >= 0);
    assert_ptr_equal(f->k.ops[1].path, f->k.ops[0].path);
    enc_set_path(b, "body[1].body[1]");   /* the slot names another path */
    enc_set_path_slot(b, &slot);
    assert_true(enc_memset(b, t, 0, ISA_ENG_DVE) >= 0);
    assert_string_equal(f->k.ops[2].path, "body[1].body[1]");
    assert_ptr_equal(slot, f->k.ops[2].path);
    char longp[200];
    memset(longp, 'x', sizeof longp - 2);
    longp[sizeof longp - 2] = 'y';
    longp[sizeof longp - 1] = 0;
    for (int i = 3; i < 5; i++) {   /* twice: the truncated copy never matches the path */
        enc_set_path(b, longp);
        enc_set_path_slot(b, &slot);
        assert_true(enc_memset(b, t, 0, ISA_ENG_DVE) >= 0);
        assert_int_equal(strlen(f->k.ops[i].path), TIR_PATH_LEN - 1);
        assert_memory_equal(f->k.ops[i].path, "...", 3);
        assert_int_equal(f->k.ops[i].path[TIR_PATH_LEN - 2], 'y');
    }
    enc_set_path(b, "");
    enc_set_path_slot(b, &slot);
    assert_true(enc_memset(b, t, 0, ISA_ENG_DVE) >= 0);
    assert_true(enc_memset(b, t, 0, ISA_ENG_DVE) >= 0);
    assert_string_equal(f->k.ops[5].path, "op[5]");
    assert_string_equal(f->k.ops[6].path, "op[6]");
    enc_set_path_slot(b, NULL);
    assert_int_equal(enc_builder_finish(b), 0);
}

/* A random slice over an extent n: mostly valid, sometimes an error
 * (index out of range, step 0 or negative, an empty range). */
static enc_slice_t rand_slice(unsigned *seed, int64_t n)
{
    int r = (int)(rand_r(seed) % 64);
    int64_t a = (int64_t)(rand_r(seed) % (unsigned)(n + 2)), c = (int64_t)(rand_r(seed) % (unsigned)(n + 2));
    if (r < 30)
        return ENC_ALL;
    if (r < 40)
        return ENC_INDEX(r == 39 ? n : a % n);
    if (r == 40)
        return ENC_RANGE_STEP(a, c, rand_r(seed) % 2 ? 0 : -1);
    enc_slice_t s = ENC_RANGE_STEP(a < c ? a : c, a < c ? c : a + 1, 1 + (int64_t)(rand_r(seed) % 3));
    s.has_start = r != 41;
    s.has_stop = r != 42;
    return s;
}

/* enc_ap_memo gives enc_ap's access pattern (every byte) and message for
 * random tensors (tiles and HBM, shapes repeating between tensors) and
 * slices; a tensor of another id with the same shape is a hit that leaves
 * the memo's replacement slot alone. */
static void test_ap_memo(void **state)
{
    (void)state;
    unsigned seed = 16;
    int hits = 0;
    for (int round = 0; round < 300; round++) {
        tir_kernel_t k1, k2;
        tpb_err_t e1, e2;
        enc_builder_t b1, b2;
        memset(&k1, 0, sizeof k1);
        memset(&k2, 0, sizeof k2);
        assert_int_equal(enc_builder_init(&b1, &k1, "m", "trn2", &e1), 0);
        assert_int_equal(enc_builder_init(&b2, &k2, "m", "trn2", &e2), 0);
        enc_ap_memo_t m;
        memset(&m, 0, sizeof m);
        int ids[8];
        for (int i = 0; i < 8; i++) {
            int64_t sh[3] = {1 + (int64_t)(rand_r(&seed) % 2) * 63, 1 + (int64_t)(rand_r(&seed) % 3),
                             4};
            int nd = 1 + (int)(rand_r(&seed) % 3);
            char nm[8];
            snprintf(nm, sizeof nm, "t%d", i);
            bool tile = rand_r(&seed) % 2;
            ids[i] = tile ? enc_tile(&b1, nm, TIR_T_SBUF, ISA_DT_FP32, nd, sh)
                          : enc_input(&b1, nm, ISA_DT_FP32, nd, sh);
            int id2 = tile ? enc_tile(&b2, nm, TIR_T_SBUF, ISA_DT_FP32, nd, sh)
                           : enc_input(&b2, nm, ISA_DT_FP32, nd, sh);
            assert_int_equal(ids[i], id2);
        }
        for (int call = 0; call < 40 && !b1.failed; call++) {
            int t = ids[rand_r(&seed) % 8];
            const tir_tensor_t *tt = &k1.tensors[t];
            enc_slice_t sl[TIR_MAX_DIMS];
            int ns = (int)(rand_r(&seed) % (unsigned)(tt->ndim + 1));
            for (int d = 0; d < ns; d++)
                sl[d] = rand_slice(&seed, tt->shape[d]);
            unsigned next = m.next;
            bool was = m.e[0].valid || m.e[1].valid;
            tir_ap_t x;
            enc_ap_memo(&b1, &m, t, ns, sl, "src", &x);
            tir_ap_t y = enc_ap(&b2, t, ns, sl, "src");
            assert_int_equal(b1.failed, b2.failed);
            assert_memory_equal(&x, &y, sizeof x);
            if (b1.failed)
                assert_string_equal(e1.msg, e2.msg);
            else if (was && m.next == next)
                hits++;
        }
        enc_builder_free(&b1);
        enc_builder_free(&b2);
        tir_kernel_free(&k1);
        tir_kernel_free(&k2);
    }
    if (hits < 100)
        fail_msg("only %d memo hits", hits);
    /* a NULL memo is enc_ap */
    tir_kernel_t k;
    tpb_err_t e;
    enc_builder_t b;
    memset(&k, 0, sizeof k);
    assert_int_equal(enc_builder_init(&b, &k, "m", "trn2", &e), 0);
    int a = enc_tile(&b, "a", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 8});
    int c = enc_tile(&b, "c", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 8});
    enc_ap_memo_t m;
    memset(&m, 0, sizeof m);
    tir_ap_t x, y, z;
    enc_ap_memo(&b, &m, a, 0, NULL, "dst", &x);
    enc_ap_memo(&b, NULL, c, 0, NULL, "dst", &y);
    assert_int_equal(m.next, 1);
    enc_ap_memo(&b, &m, c, 0, NULL, "dst", &z);   /* a hit: another tile, same shape */
    assert_int_equal(m.next, 1);
    assert_memory_equal(&y, &z, sizeof y);
    assert_int_equal(x.tensor, a);
    assert_int_equal(z.tensor, c);
    enc_builder_free(&b);
    tir_kernel_free(&k);
}

/* enc_find_tensor_at with a kept slot answers as enc_find_tensor through
 * declarations, shadowing in nested scopes, scope ends (out of scope: -1)
 * and a name looked up before it is declared (the slot stays unknown). */
static void test_find_tensor_at(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    const char *names[] = {"x", "t", "y", "a"};
    int slot[4] = {0, 0, 0, 0};
    int checks = 0;
    for (int it = 0; it < 6; it++) {
        for (int n = 0; n < 4; n++) {
            assert_int_equal(enc_find_tensor_at(b, names[n], &slot[n]), enc_find_tensor(b, names[n]));
            checks++;
        }
        enc_scope_begin(b);
        if (it > 0)
            enc_tile(b, "x", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 4});
        enc_tile(b, "t", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 4});   /* shadows f->t */
        for (int n = 0; n < 4; n++)
            assert_int_equal(enc_find_tensor_at(b, names[n], &slot[n]), enc_find_tensor(b, names[n]));
        enc_scope_begin(b);
        enc_tile(b, "x", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 4});
        for (int n = 0; n < 4; n++)
            assert_int_equal(enc_find_tensor_at(b, names[n], &slot[n]), enc_find_tensor(b, names[n]));
        enc_scope_end(b);
        for (int n = 0; n < 4; n++)
            assert_int_equal(enc_find_tensor_at(b, names[n], &slot[n]), enc_find_tensor(b, names[n]));
        enc_scope_end(b);
    }
    assert_false(b->failed);
    assert_int_equal(enc_find_tensor_at(b, "x", &slot[0]), -1);   /* out of scope */
    assert_true(slot[0] > 0);
    assert_int_equal(slot[2], 0);                                 /* never declared */
    assert_int_equal(enc_find_tensor_at(b, "t", &slot[1]), f->t);
    assert_int_equal(checks, 24);
}

/* Op names are the kernel's strings: a name the caller passes (in the op
 * or by enc_set_name) is copied, cut to TIR_NAME_LEN - 1 bytes as the
 * array cut it, and shared by ops with the same name; generated names
 * are exact "<op>_<index>" copies. */
static void test_op_names_owned(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    char buf[128];
    memset(buf, 'q', sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    tir_op_t op;
    for (int i = 0; i < 2; i++) {
        tir_op_init(&op, TIR_TENSOR_COPY);
        op.dst = enc_in(b, enc_ap_full(b, f->t));
        op.src[0] = op.dst, op.nsrc = 1;
        op.name = buf;
        assert_true(enc_emit(b, &op) >= 0);
    }
    enc_set_name(b, "nm");
    tir_op_init(&op, TIR_TENSOR_COPY);
    op.dst = op.src[0] = enc_in(b, enc_ap_full(b, f->t)), op.nsrc = 1;
    assert_true(enc_emit(b, &op) >= 0);
    tir_op_init(&op, TIR_TENSOR_COPY);
    op.dst = op.src[0] = enc_in(b, enc_ap_full(b, f->t)), op.nsrc = 1;
    assert_true(enc_emit(b, &op) >= 0);
    memset(buf, 'x', sizeof buf - 1);   /* the kernel kept its own copy */
    const tir_op_t *o = &f->k.ops[f->k.nops - 4];
    assert_int_equal(strlen(o[0].name), TIR_NAME_LEN - 1);
    assert_int_equal(o[0].name[0], 'q');
    assert_ptr_equal(o[1].name, o[0].name);
    assert_string_equal(o[2].name, "nm");
    char want[TIR_NAME_LEN];
    snprintf(want, sizeof want, "tensor_copy_%d", f->k.nops - 1);
    assert_string_equal(o[3].name, want);
    assert_false(b->failed);
}

/* Generated op names "<op>_<index>": the index's digits follow on from
 * the previous name's (9 -> 10, 99 -> 100) and are formatted anew after an
 * op the builder did not name (the index then skips one). */
static void test_op_names_generated(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    tir_op_t op;
    for (int i = 0; i < 205; i++) {
        tir_op_init(&op, TIR_TENSOR_COPY);
        op.dst = op.src[0] = enc_in(b, enc_ap_full(b, f->t)), op.nsrc = 1;
        if (i == 150) {   /* appended as it is: its name is not generated */
            op.name = "raw";
            assert_true(tir_add_op(&f->k, &op) >= 0);
            continue;
        }
        int at = f->k.nops;
        assert_true(enc_emit(b, &op) >= 0);
        char want[TIR_NAME_LEN];
        snprintf(want, sizeof want, "tensor_copy_%d", at);
        assert_string_equal(f->k.ops[at].name, want);
    }
    assert_false(b->failed);
}

/* enc_reserve_names sizes the name entries and their hash for a flat
 * body's tiles at once: no growth while they are declared, and every name,
 * old and new, is found.  Reserving tensors does not reserve names (a
 * loop's 10^5 tiles are a few names: sizing names for them cost mixed 300
 * page faults). */
static void test_reserve_names(void **state)
{
    fx_t *f = *state;
    int before = f->b.nnames, cap0 = f->b.cap_names, hcap0 = f->b.cap_hash;
    enc_builder_reserve(&f->b, 10, 100000);
    assert_int_equal(f->b.cap_names, cap0);
    assert_int_equal(f->b.cap_hash, hcap0);
    enc_reserve_names(&f->b, 3000);
    int cap = f->b.cap_names, hcap = f->b.cap_hash;
    const struct enc_name_entry *names = f->b.names;
    assert_true(cap >= before + 3000);
    assert_true(hcap >= 2 * (before + 3000));
    assert_int_equal(hcap & (hcap - 1), 0);
    for (int i = 0; i < 3000; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "r%d", i);
        assert_true(enc_tile(&f->b, nm, TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){1, 4}) >= 0);
    }
    assert_ptr_equal(f->b.names, names);
    assert_int_equal(f->b.cap_names, cap);
    assert_int_equal(f->b.cap_hash, hcap);
    assert_int_equal(enc_find_tensor(&f->b, "t"), f->t);
    assert_int_equal(enc_find_tensor(&f->b, "a"), f->a);
    assert_true(enc_find_tensor(&f->b, "r2999") >= 0);
    assert_int_equal(enc_find_tensor(&f->b, "r3000"), -1);
}

#define FX(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        FX(test_build_tensor_add), FX(test_out_of_scope_and_sticky), FX(test_out_of_scope),
        FX(test_narrow_fields_range), FX(test_narrow_fields_validator),
        FX(test_narrow_fields_engine),
        FX(test_seed_messages_c), FX(test_seed_both_indirect), FX(test_seed_scatter),
        FX(test_seed_scatter_op), FX(test_seed_oob_direct), FX(test_seed_transpose_axes),
        FX(test_seed_local_gather), FX(test_seed_messages_table), FX(test_matmul_and_flags), FX(test_matmul_double_row),
        FX(test_matmul_double_row_needs_fp8), FX(test_aps),
        FX(test_tensor_errors), FX(test_identity_and_constants), FX(test_activation_and_scalars),
        FX(test_pool_psum), FX(test_hand_built_op_overflow), FX(test_null_args),
        FX(test_reload_oversize), FX(test_reload_oversize_deps_follow),
        FX(test_reload_oversize_refused), FX(test_reload_oversize_refused_span),
        FX(test_reload_oversize_dma_copy), FX(test_reload_oversize_dma_copy_refused),
        FX(test_reload_oversize_register_refused),
        cmocka_unit_test(test_op_init_defaults), FX(test_path_slot), FX(test_op_names_owned),
        cmocka_unit_test(test_ap_memo), FX(test_reserve_names), FX(test_op_names_generated),
        FX(test_find_tensor_at),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
