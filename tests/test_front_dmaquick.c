/* The plain-DMA pass of op validation (validate_dma.c enc_dma_quick_pass,
 * sixteenth session) and the check memo's per-tensor whole-record bits
 * (validate_ap.c): enc_validate_op_memo answers a plain load, store or
 * dma_copy without the generic operand walk.  Every op built here from a
 * grid of operands, kinds, engines and DMA fields gets the same verdict and
 * message through it as through the full checks (enc_validate_op_full);
 * the pass must be taken for the plain ones, and the grid must hold
 * failures of each check the pass stands in for, or the comparison proves
 * little. */
#include "front_memo_fx.h"

#include "builder.h"
#include "validate_int.h"

enum { NREC = 16 };

/* The grid's interned operands (NREC at most), over the fixture's a, t
 * and the tensors declared here. */
typedef struct {
    const tir_ap_t *rec[NREC];
    int nrec;
} grid_t;

/* A record: tensor t at offset off with [step, count] pairs. */
static void add_raw(fx_t *f, grid_t *g, int t, int64_t off, int nd, const int64_t pairs[][2])
{
    tir_ap_t a = tir_ap_none;
    a.tensor = t;
    a.offset = off;
    a.ndim = nd;
    for (int d = 0; d < nd; d++) {
        a.step[d] = pairs[d][0];
        a.count[d] = pairs[d][1];
    }
    g->rec[g->nrec++] = tir_ap_intern(&f->k, &a);
}

static void add_ap(fx_t *f, grid_t *g, int t, int ns, const enc_slice_t *s)
{
    tir_ap_t a = enc_ap(&f->b, t, ns, s, "x");
    assert_false(f->b.failed);
    g->rec[g->nrec++] = tir_ap_intern(&f->k, &a);
}

static void make_grid(fx_t *f, grid_t *g)
{
    enc_builder_t *b = &f->b;
    int64_t hbm[2] = {256, 64};
    int a = f->a, t = f->t;
    int o = enc_output(b, "o", ISA_DT_FP32, 2, hbm);
    int c = enc_shared_constant(b, "c", ISA_DT_FP32, 2, hbm, NULL);
    int p = enc_tile(b, "p", TIR_T_PSUM, ISA_DT_FP32, 2, (int64_t[]){128, 64});
    int r = enc_tile(b, "r", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){1, 4});
    assert_false(b->failed);
    g->nrec = 0;
    enc_slice_t top[2] = {ENC_RANGE(0, 128), ENC_ALL}, row[2] = {ENC_RANGE(7, 8), ENC_RANGE(0, 4)};
    enc_slice_t half[2] = {ENC_RANGE(0, 64), ENC_ALL}, every2[2] = {ENC_RANGE_STEP(0, 128, 2), ENC_ALL};
    add_ap(f, g, t, 0, NULL);        /* 0: whole SBUF tile */
    add_ap(f, g, p, 0, NULL);        /* 1: whole PSUM tile */
    add_ap(f, g, a, 2, top);         /* 2: input rows, t's shape */
    add_ap(f, g, o, 2, top);         /* 3: output rows */
    add_ap(f, g, c, 2, top);         /* 4: constant rows */
    add_ap(f, g, r, 0, NULL);        /* 5: [1, 4] tile */
    add_ap(f, g, a, 2, row);         /* 6: one input row of 4, r's shape */
    add_ap(f, g, a, 2, half);        /* 7: input rows, another shape */
    add_ap(f, g, t, 2, every2);      /* 8: every other partition of t (a direct DMA's only) */
    add_raw(f, g, a, 250 * 64, 2, (const int64_t[][2]){{64, 128}, {1, 64}});   /* 9: past a's end */
    add_raw(f, g, t, 0, 2, (const int64_t[][2]){{64, 128}, {1, 65}});          /* 10: leaves the row */
    add_raw(f, g, t, 0, 2, (const int64_t[][2]){{64, 0}, {1, 64}});            /* 11: count 0 */
    add_raw(f, g, o, 64 * 128, 2, (const int64_t[][2]){{64, 128}, {1, 64}});   /* 12: o's lower rows */
    tir_ap_t bad = tir_ap_none;
    bad.tensor = 99;   /* 13: no such tensor */
    bad.ndim = 1;
    bad.step[0] = bad.count[0] = 1;
    g->rec[g->nrec++] = tir_ap_intern(&f->k, &bad);
    for (int i = 0; i < g->nrec; i++)
        assert_non_null(g->rec[i]);
}

/* One variation of an op's fields besides its two operands. */
static void vary(tir_kernel_t *k, tir_op_t *op, int v, const tir_ap_t *other)
{
    switch (v) {
    case 1: op->engine = ISA_ENG_POOL; break;
    case 2: op->engine = ISA_ENG_SP; break;
    case 3: op->engine = ISA_ENG_PE; break;       /* illegal for a DMA */
    case 4: TIR_RARE_SET(k, op, oob_mode, 1); break;              /* skip */
    case 5: op->flags |= TIR_F_OOB_SKIP; break;
    case 6: TIR_RARE_SET(k, op, qos, 256); break;
    case 7: TIR_RARE_SET(k, op, dge_mode, 9); break;
    case 8: TIR_RARE_SET(k, op, oob_mode, 9); break;
    case 9: TIR_RARE_SET(k, op, remote_core, 0); break;
    case 10: op->src[1] = other; break;           /* beyond nsrc: still checked */
    case 11: op->nsrc = 2, op->src[1] = other; break;
    case 12: op->s0.is_ap = true; break;          /* a scalar tile operand missing */
    case 13: op->s1.ap = other, op->s1.is_ap = true; break;
    case 14: op->index = other; break;
    case 15: op->nsrc = 0; break;
    default: break;
    }
}

enum { NVARY = 16 };

/* Every op of the grid through both ways: the same verdict and message,
 * the memos of the two given the same calls (a fresh pair per op kind). */
static void test_same_verdicts(void **state)
{
    fx_t *f = *state;
    grid_t g;
    make_grid(f, &g);
    static const tir_opkind_t kinds[] = {TIR_LOAD, TIR_STORE, TIR_DMA_COPY, TIR_TENSOR_COPY};
    long quick = 0, passes = 0, fails = 0;
    for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
        enc_check_memo_t *m1 = calloc(1, sizeof *m1), *m2 = calloc(1, sizeof *m2);
        for (int v = 0; v < NVARY; v++)
            for (int d = 0; d < g.nrec; d++)
                for (int s = 0; s < g.nrec; s++) {
                    tir_op_t op;
                    tir_op_init(&op, kinds[ki]);
                    op.path = "body[0]";
                    op.name = "x";
                    op.dst = g.rec[d];
                    op.src[0] = g.rec[s];
                    op.nsrc = 1;
                    vary(&f->k, &op, v, g.rec[(d + s + 1) % g.nrec]);
                    tpb_err_t e1 = {{0}}, e2 = {{0}};
                    long q = m2->quick;
                    int full = enc_validate_op_full(&f->k, NULL, &op, m1, &e1);
                    int fast = enc_validate_op_memo(&f->k, NULL, &op, m2, &e2);
                    if (full != fast || strcmp(e1.msg, e2.msg))
                        fail_msg("kind %d vary %d dst %d src %d: full %d '%s', quick way %d '%s'",
                                 (int)kinds[ki], v, d, s, full, e1.msg, fast, e2.msg);
                    quick += m2->quick - q;
                    passes += full == 0;
                    fails += full != 0;
                }
        free(m1);
        free(m2);
    }
    /* plain loads and stores took the pass; most of the grid fails */
    assert_true(quick >= 8);
    assert_true(quick < passes);   /* engine-named ones passed the full way */
    assert_true(fails > 4 * passes);
}

/* The pass itself: taken for a plain load (whole tile, row slice) and a
 * plain store, refused (false, nothing decided) for a constant written, a
 * Pool engine, a second source and a mismatched shape. */
static void test_quick_cases(void **state)
{
    fx_t *f = *state;
    grid_t g;
    make_grid(f, &g);
    enc_check_memo_t *m = calloc(1, sizeof *m);
    tpb_err_t e = {{0}};
    tir_op_t op;
    vctx_t v = {&f->k, tpb_target_default(), &op, &e, m};
    struct { tir_opkind_t kind; int d, s, vary; bool want; } cases[] = {
        {TIR_LOAD, 0, 2, 0, true},   {TIR_LOAD, 5, 6, 0, true},  {TIR_STORE, 3, 0, 0, true},
        {TIR_STORE, 3, 1, 0, true},  {TIR_LOAD, 8, 7, 0, true},  {TIR_STORE, 4, 0, 0, false},
        {TIR_LOAD, 0, 2, 1, false},  {TIR_LOAD, 0, 2, 11, false}, {TIR_LOAD, 0, 7, 0, false},
        {TIR_LOAD, 0, 9, 0, false},  {TIR_LOAD, 10, 2, 0, false}, {TIR_DMA_COPY, 0, 0, 0, true},
        {TIR_LOAD, 13, 2, 0, false}, {TIR_STORE, 2, 0, 0, true},  {TIR_LOAD, 0, 0, 0, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tir_op_init(&op, cases[i].kind);
        op.path = "p";
        op.dst = g.rec[cases[i].d];
        op.src[0] = g.rec[cases[i].s];
        op.nsrc = 1;
        vary(&f->k, &op, cases[i].vary, g.rec[6]);
        if (enc_dma_quick_pass(&v) != cases[i].want)
            fail_msg("case %zu: pass %d", i, !cases[i].want);
    }
    free(m);
}

/* A tile's whole record passes its checks once (the check memo's
 * per-tensor bit): 300 tiles loaded, then stored, as the live bench kernel
 * does; the memo's 256 slots alone keep few of them.  The bit is the
 * builder kernel's only: the same store validated with the memo for
 * another kernel is checked again. */
static void test_whole_pass_kept(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t err;
    enc_builder_t b;
    assert_int_equal(enc_builder_init(&b, &k, "whole", "trn2", &err), 0);
    enum { N = 300 };
    int a = enc_input(&b, "a", ISA_DT_FP32, 2, (int64_t[]){N, 4});
    int o = enc_output(&b, "o", ISA_DT_FP32, 2, (int64_t[]){N, 4});
    const tir_ap_t *full[N];
    for (int i = 0; i < N; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "t%d", i);
        int t = enc_tile(&b, nm, TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){1, 4});
        full[i] = enc_ap_memo_interned(&b, NULL, t, 0, NULL, "dst");
        assert_non_null(full[i]);
    }
    for (int i = 0; i < N; i++) {
        enc_slice_t row[2] = {ENC_RANGE(i, i + 1), ENC_ALL};
        assert_true(enc_load(&b, *full[i], enc_ap(&b, a, 2, row, "src")) >= 0);
    }
    long h = b.check_memo->hits;
    for (int i = 0; i < N; i++) {
        enc_slice_t row[2] = {ENC_RANGE(i, i + 1), ENC_ALL};
        assert_true(enc_store(&b, enc_ap(&b, o, 2, row, "dst"), *full[i], false) >= 0);
    }
    assert_int_equal(b.check_memo->hits - h, N);   /* each store's source */
    /* the memo taken to another kernel forgets the bits */
    tir_op_t op = k.ops[k.nops - 1];
    tir_kernel_t k2 = k;
    h = b.check_memo->hits;
    assert_int_equal(enc_validate_op_memo(&k2, NULL, &op, b.check_memo, &err), 0);
    assert_int_equal(b.check_memo->hits, h);
    assert_false(b.failed);
    enc_builder_free(&b);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_same_verdicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quick_cases, setup, teardown),
        cmocka_unit_test(test_whole_pass_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
