/* The lowering's per-instruction construction (lower.c lw_inst_new, bir.c
 * bir_block_next / bir_inst_name_body) and lower_direct's memo of the two
 * sides and joint dims (lower_dma.c, lower_ctx_t.dma_memo / dma_use): an
 * instruction is built where it stays, and a DMA answered from the memo is
 * lowered as the full path lowers it, errors included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "back_util.h"
#include "builder.h"
#include "lower.h"

static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

typedef struct {
    tir_kernel_t k;
    bu_run_t r;
    int a, t0, t1;
} fix_t;

/* HBM a [256, 64] fp32; SBUF tiles t0, t1 [128, 64] fp32 (both used, so
 * both placed); lowered once to place them. */
static void fix_init(fix_t *f)
{
    tir_kernel_init(&f->k);
    f->a = BU_T(&f->k, "a", TIR_T_INPUT, ISA_DT_FP32, 256, 64);
    f->t0 = BU_T(&f->k, "t0", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    f->t1 = BU_T(&f->k, "t1", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_TENSOR);
    op.dst = bu_whole(&f->k, f->t1), op.src[0] = bu_whole(&f->k, f->t0);
    op.src[1] = bu_whole(&f->k, f->t0), op.nsrc = 2;
    bu_op(&f->k, &op, "tt");
    assert_int_equal(bu_lower(&f->r, &f->k, trn2(), false), 0);
}

static void fix_free(fix_t *f)
{
    bu_free(&f->r);
    tir_kernel_free(&f->k);
}

static lower_ctx_t ctx_of(fix_t *f)
{
    lower_ctx_t c = {.k = &f->k, .t = trn2(), .m = &f->r.m, .err = &f->r.err, .ident_hbm = -1,
                     .ident_tile = -1};
    lw_tap_memo_clear(&c);
    return c;
}

/* What one lower_dma call appended (or its error). */
typedef struct {
    int rc, n;
    char msg[sizeof(tpb_err_t)];
    uint8_t body[4][256];
    bir_access_t acc[4][4];
    int nacc[4];
    bool desc[4];
    char name[4][BIR_NAME_LEN];
} dma_res_t;

static dma_res_t dma_on(lower_ctx_t *c, const tir_op_t *op)
{
    dma_res_t r;
    memset(&r, 0, sizeof r);
    bir_block_t *b = bir_main_block(c->m);
    int first = b->ninsts;
    c->op = op;
    c->opi = 0;
    c->sub = 0;
    c->err->msg[0] = 0;
    r.rc = lower_dma(c);
    memcpy(r.msg, c->err->msg, sizeof r.msg);
    r.n = b->ninsts - first;
    assert_true(r.n <= 4);
    for (int i = 0; i < r.n; i++) {
        const bir_inst_t *in = &b->insts[first + i];
        assert_true(bir_body_size(in->isa.op) <= sizeof r.body[i]);
        memcpy(r.body[i], bir_body(in), bir_body_size(in->isa.op));
        assert_true(in->nacc <= 4);
        r.nacc[i] = in->nacc;
        if (in->nacc > 0)   /* a descriptor has none (acc NULL) */
            memcpy(r.acc[i], in->acc, (size_t)in->nacc * sizeof *in->acc);
        r.desc[i] = in->is_dma_desc;
        snprintf(r.name[i], sizeof r.name[i], "%s", in->name);
    }
    return r;
}

static void same_res(const dma_res_t *x, const dma_res_t *y)
{
    assert_int_equal(x->rc, y->rc);
    assert_string_equal(x->msg, y->msg);
    assert_int_equal(x->n, y->n);
    assert_memory_equal(x->body, y->body, sizeof x->body);
    assert_memory_equal(x->acc, y->acc, sizeof x->acc);
    assert_memory_equal(x->nacc, y->nacc, sizeof x->nacc);
    assert_memory_equal(x->desc, y->desc, sizeof x->desc);
    assert_memory_equal(x->name, y->name, sizeof x->name);
}

/* A load src -> dst. */
static tir_op_t load_op(const tir_ap_t *src, const tir_ap_t *dst)
{
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.src[0] = src, op.dst = dst, op.nsrc = 1;
    op.name = "ld";
    op.path = "body[0]";
    return op;
}

/* A run of loads through one memo against each on an empty memo: the two
 * halves of a (one pattern at two offsets: one entry), each met again,
 * one stack AP whose contents change at one address, errors between good
 * ones (element counts, a bad qos on a remembered pair, a remembered
 * pattern placed past a's end or past the last partition) and a register
 * offset (never memoised).  Hits are counted, so the run uses the memo. */
static void test_dma_memo_matches_full(void **state)
{
    (void)state;
    fix_t f;
    fix_init(&f);
    lower_ctx_t memo = ctx_of(&f), full = ctx_of(&f);
    const tir_ap_t *lo = bu_in(&f.k, bu_ap(f.a, 0, 2, (int64_t)64, (int64_t)128, (int64_t)1,
                                           (int64_t)64));
    const tir_ap_t *hi = bu_in(&f.k, bu_ap(f.a, 128 * 64, 2, (int64_t)64, (int64_t)128,
                                           (int64_t)1, (int64_t)64));
    const tir_ap_t *w0 = bu_whole(&f.k, f.t0);
    tir_ap_t s = *lo;   /* one stack address, several contents */
    tir_ap_t w1 = *w0;  /* t0 from partition 1: 129 partitions */
    w1.offset = 64;
    for (int i = 0; i < 15; i++) {
        tir_op_t op = load_op(lo, w0);
        switch (i) {
        case 1: op.src[0] = hi; break;
        case 2: break;                                   /* lo again: a hit */
        case 3: op.src[0] = hi; break;                   /* hi again: a hit */
        case 4: op.src[0] = &s; break;                   /* = lo */
        case 5: s.offset = 64; op.src[0] = &s; break;    /* one row further */
        case 6: s.count[0] = 64; op.src[0] = &s; break;  /* 64 rows: element count error */
        case 7: TIR_RARE_SET(&f.k, &op, qos, 300); break;                     /* remembered pair, bad qos */
        case 8: TIR_RARE_SET(&f.k, &op, src_reg, 3); break;                   /* register offset */
        case 9: TIR_RARE_SET(&f.k, &op, src_reg, 3); op.src[0] = hi; break;
        case 10: TIR_RARE_SET(&f.k, &op, dst_reg, 2); break;                  /* SBUF side: an error */
        case 12: s.count[0] = 128; s.offset = 200 * 64; op.src[0] = &s; break;   /* past a's end */
        case 13: op.dst = &w1; break;                    /* past the last partition */
        default: op.src[0] = (i & 1) ? hi : lo; break;
        }
        lw_tap_memo_clear(&full);
        dma_res_t x = dma_on(&memo, &op), y = dma_on(&full, &op);
        same_res(&x, &y);
        assert_int_equal(x.rc, i == 6 || i == 7 || i == 10 || i == 12 || i == 13 ? -1 : 0);
    }
    /* hits: every good one of lo's pattern after the first, at its own
     * offset (1 to 5, 11, 14), the bad qos (7: found, then refused by the
     * op's own check); not the two placed out of bounds (12, 13: found,
     * then the full path's error) */
    assert_int_equal(memo.dma_use.hits, 8);
    assert_int_equal(full.dma_use.hits, 0);
    fix_free(&f);
}

/* A tile declared anew (another tensor, at its own address or another's)
 * finds an earlier tile's entry only when build_side would derive the same
 * geometry: same kind, dtype, shape. */
static void test_dma_memo_other_tensor(void **state)
{
    (void)state;
    fix_t f;
    fix_init(&f);
    lower_ctx_t memo = ctx_of(&f), full = ctx_of(&f);
    const tir_ap_t *lo = bu_in(&f.k, bu_ap(f.a, 0, 2, (int64_t)64, (int64_t)128, (int64_t)1,
                                           (int64_t)64));
    tir_tensor_t *t1 = &f.k.tensors[f.t1];
    bir_mloc_t *m1 = &f.r.m.mlocs[f.t1];
    const bir_mloc_t *m0 = &f.r.m.mlocs[f.t0];
    tir_ap_t p1 = *bu_whole(&f.k, f.t1);
    long hits = 0;
    for (int step = 0; step < 5; step++) {
        switch (step) {
        case 1: m1->addr = m0->addr; break;               /* t0's buffer: the same result */
        case 2: t1->dtype = ISA_DT_BF16; break;           /* other dtype */
        case 3: t1->dtype = ISA_DT_FP32; t1->kind = TIR_T_PSUM; break;
        case 4: t1->kind = TIR_T_SBUF; t1->shape[1] = 32; p1.count[1] = 32; p1.step[0] = 32; break;
        default: break;
        }
        tir_op_t op0 = load_op(lo, bu_whole(&f.k, f.t0)), op1 = load_op(lo, &p1);
        lw_tap_memo_clear(&full);
        dma_res_t x = dma_on(&memo, &op0), y = dma_on(&full, &op0);
        same_res(&x, &y);
        lw_tap_memo_clear(&full);
        hits = memo.dma_use.hits;
        x = dma_on(&memo, &op1), y = dma_on(&full, &op1);
        same_res(&x, &y);
        /* t1 keeps t0's key until its dtype changes */
        assert_int_equal(memo.dma_use.hits - hits, step <= 1 ? 1 : 0);
    }
    fix_free(&f);
}

/* One pattern at more placements than a side keeps (LW_DMA_PLACED),
 * met again in turn: each placed as the full path places it, kept ones
 * copied, new ones replacing the oldest. */
static void test_dma_memo_placements(void **state)
{
    (void)state;
    fix_t f;
    fix_init(&f);
    lower_ctx_t memo = ctx_of(&f), full = ctx_of(&f);
    const tir_ap_t *row[LW_DMA_PLACED + 2], *part[3];
    for (int i = 0; i < LW_DMA_PLACED + 2; i++)
        row[i] = bu_in(&f.k, bu_ap(f.a, (int64_t)i * 64, 2, (int64_t)64, (int64_t)1, (int64_t)1,
                                   (int64_t)64));
    part[0] = bu_in(&f.k, bu_ap(f.t0, 5 * 64, 2, (int64_t)64, (int64_t)1, (int64_t)1,
                                (int64_t)64));
    part[1] = bu_in(&f.k, bu_ap(f.t1, 0, 2, (int64_t)64, (int64_t)1, (int64_t)1, (int64_t)64));
    part[2] = bu_in(&f.k, bu_ap(f.t0, 0, 2, (int64_t)64, (int64_t)1, (int64_t)1, (int64_t)64));
    for (int n = 0; n < 4 * (LW_DMA_PLACED + 2); n++) {
        int r = n < 2 * (LW_DMA_PLACED + 2) ? n % 2 : n % (LW_DMA_PLACED + 2);
        tir_op_t op = load_op(row[r], part[n % 3]);   /* t1 and t0 at one offset */
        lw_tap_memo_clear(&full);
        dma_res_t x = dma_on(&memo, &op), y = dma_on(&full, &op);
        same_res(&x, &y);
        assert_int_equal(x.rc, 0);
    }
    assert_int_equal(memo.dma_use.hits, 4 * (LW_DMA_PLACED + 2) - 1);
    fix_free(&f);
}

/* The memo entry holding a pattern (the one valid entry of a fresh run). */
static const lw_dma_memo_t *only_entry(const lower_ctx_t *c)
{
    const lw_dma_memo_t *e = NULL;
    for (int i = 0; i < LW_DMA_MEMO; i++)
        if (lw_dma_memo_valid(c, i)) {
            assert_null(e);
            e = &c->memo.dma[i];
        }
    assert_non_null(e);
    return e;
}

/* One pattern at a new HBM row each time (the tile side at one offset): a
 * run of LW_DMA_PLACED_MISS_RUN misses rests the HBM side's scan for
 * LW_DMA_PLACED_REST placements, each still placed as the full path
 * places it; then rows met again are kept and copied again. */
static void test_dma_memo_placement_rests(void **state)
{
    (void)state;
    fix_t f;
    fix_init(&f);
    lower_ctx_t memo = ctx_of(&f), full = ctx_of(&f);
    enum { N = 1 + LW_DMA_PLACED_MISS_RUN + LW_DMA_PLACED_REST + 8 };
    _Static_assert(N + 2 <= 256, "a row of a per placement");
    const tir_ap_t *row[N];
    const tir_ap_t *part = bu_in(&f.k, bu_ap(f.t0, 0, 2, (int64_t)64, (int64_t)1, (int64_t)1,
                                             (int64_t)64));
    for (int i = 0; i < N; i++)
        row[i] = bu_in(&f.k, bu_ap(f.a, (int64_t)i * 64, 2, (int64_t)64, (int64_t)1, (int64_t)1,
                                   (int64_t)64));
    for (int n = 0; n < N + 4; n++) {
        /* the last four: rows N-2, N-1 twice (kept once the rest is over) */
        int r = n < N ? n : N - 2 + (n - N) % 2;
        tir_op_t op = load_op(row[r], part);
        lw_tap_memo_clear(&full);
        dma_res_t x = dma_on(&memo, &op), y = dma_on(&full, &op);
        same_res(&x, &y);
        assert_int_equal(x.rc, 0);
        const lw_dma_memo_t *e = only_entry(&memo);
        if (n == LW_DMA_PLACED_MISS_RUN) {   /* rows 1..MISS_RUN: misses */
            assert_int_equal(e->side[0].rest, LW_DMA_PLACED_REST);
            assert_int_equal(e->side[1].rest, 0);   /* the tile side: hits */
        }
        if (n == LW_DMA_PLACED_MISS_RUN + LW_DMA_PLACED_REST)
            assert_int_equal(e->side[0].rest, 0);
        if (n == N + 3)   /* rows N-2, N-1 found again: no run */
            assert_int_equal(e->side[0].misses, 0);
    }
    assert_int_equal(memo.dma_use.hits, N + 3);
    fix_free(&f);
}

/* A run of LW_DMA_MISS_RUN misses rests the memo for LW_DMA_REST0 DMAs,
 * then twice as long while the misses go on; a hit ends the run. */
static void test_dma_memo_rests(void **state)
{
    (void)state;
    fix_t f;
    fix_init(&f);
    lower_ctx_t c = ctx_of(&f);
    /* loads of the first i + 1 elements of a's row 0: each a new pattern */
    const tir_ap_t *row[64], *one[64];
    for (int i = 0; i < 64; i++) {
        row[i] = bu_in(&f.k, bu_ap(f.a, 0, 2, (int64_t)64, (int64_t)1, (int64_t)1,
                                   (int64_t)i + 1));
        one[i] = bu_in(&f.k, bu_ap(f.t0, 0, 2, (int64_t)64, (int64_t)1, (int64_t)1,
                                   (int64_t)i + 1));
    }
    _Static_assert(LW_DMA_MISS_RUN <= 64, "a pattern per miss");
    for (int i = 0; i < LW_DMA_MISS_RUN; i++) {
        tir_op_t op = load_op(row[i], one[i]);
        assert_int_equal(dma_on(&c, &op).rc, 0);
    }
    assert_int_equal(c.dma_use.rest, LW_DMA_REST0);
    assert_int_equal(c.dma_use.backoff, 2 * LW_DMA_REST0);
    /* resting: row 0 again is not looked up */
    tir_op_t again = load_op(row[0], one[0]);
    for (int i = 0; i < LW_DMA_REST0; i++)
        assert_int_equal(dma_on(&c, &again).rc, 0);
    assert_int_equal(c.dma_use.hits, 0);
    assert_int_equal(c.dma_use.rest, 0);
    /* awake: row 0 remembered again (its entry may have been replaced by
     * a later row), then a hit ends the run and the backoff */
    assert_int_equal(dma_on(&c, &again).rc, 0);
    assert_int_equal(dma_on(&c, &again).rc, 0);
    assert_true(c.dma_use.hits >= 1);
    assert_int_equal(c.dma_use.backoff, 0);
    assert_int_equal(c.dma_use.misses, 0);
    /* emptied: nothing remembered, no run */
    lw_tap_memo_clear(&c);
    assert_int_equal(c.dma_use.hits, 0);
    for (int i = 0; i < LW_DMA_MEMO; i++)
        assert_false(lw_dma_memo_valid(&c, i));
    assert_int_equal(dma_on(&c, &again).rc, 0);
    assert_int_equal(c.dma_use.hits, 0);
    fix_free(&f);
}

/* lw_inst_new builds in the block's next slot and lw_emit commits it
 * there; a slot left unemitted is rebuilt from scratch by the next one. */
static void test_inst_in_place(void **state)
{
    (void)state;
    fix_t f;
    fix_init(&f);
    lower_ctx_t c = ctx_of(&f);
    tir_op_t op = load_op(bu_whole(&f.k, f.a), bu_whole(&f.k, f.t0));
    op.name = "nm";
    c.op = &op;
    c.sub = 0;
    bir_block_t *b = bir_main_block(c.m);
    int n = b->ninsts;
    bir_inst_t *in = lw_inst_new(&c, BIR_TENSOR_COPY, ISA_OP_TENSOR_COPY);
    assert_non_null(in);
    assert_ptr_equal(in, &b->insts[n]);
    assert_string_equal(in->name, "nm");
    in->has_pred = true;   /* abandoned with stale fields */
    in->queue = 7;
    bir_inst_t *again = lw_inst_new(&c, BIR_TENSOR_COPY, ISA_OP_TENSOR_COPY);
    assert_ptr_equal(again, in);
    assert_false(again->has_pred);
    assert_int_equal(again->queue, -1);
    assert_string_equal(again->name, "nm.1");
    isa_body_t *body = again->isa.f;
    assert_int_equal(lw_emit(&c, again), 0);
    assert_int_equal(b->ninsts, n + 1);
    assert_ptr_equal(b->insts[n].isa.f, body);
    assert_string_equal(b->insts[n].name, "nm.1");
    fix_free(&f);
}

/* bir_inst_name_body: the name and a zeroed body of the op's size in one
 * block, the body last (a mode setter grows it in place). */
static void test_name_body(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 1, &err), 0);
    bir_inst_t in;
    bir_inst_init(&in, BIR_ACTIVATION, ISA_OP_ACTIVATION);
    assert_true(bir_inst_name_body(&m, &in, "act_12xyz", 6));
    assert_string_equal(in.name, "act_12");
    assert_true((uintptr_t)in.isa.f % _Alignof(isa_body_t) == 0);
    assert_true((const char *)in.isa.f > in.name + 6);
    const uint8_t *p = (const uint8_t *)in.isa.f;
    for (size_t i = 0; i < bir_body_size(ISA_OP_ACTIVATION); i++)
        assert_int_equal(p[i], 0);
    isa_body_t *f = in.isa.f;
    bir_inst_set_is_activate2(&m, &in, true);
    assert_ptr_equal(in.isa.f, f);   /* grown in place */
    assert_false(in.oom);
    bir_module_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dma_memo_matches_full),
        cmocka_unit_test(test_dma_memo_other_tensor),
        cmocka_unit_test(test_dma_memo_rests),
        cmocka_unit_test(test_dma_memo_placements),
        cmocka_unit_test(test_dma_memo_placement_rests),
        cmocka_unit_test(test_inst_in_place),
        cmocka_unit_test(test_name_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
