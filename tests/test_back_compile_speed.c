/* The compile-time shortcuts must not change a single output byte:
 *  - the Generator's encode cache (same body, new header; bytes past the
 *    op's format struct ignored) and its batched stream writes against
 *    isa_encode run on every instruction, including header values the
 *    encoder rejects on a cache hit, and its guess by stream period;
 *  - the deferred L2 legality check: the first illegal instruction named;
 *  - the scheduler's memory index against its plain backward scan;
 *  - the allocator's address-ordered first fit against the repeated-pass
 *    rule it replaced;
 *  - the allocator's grouping by path (ranks of distinct paths) against a
 *    qsort with strcmp and the index as tie-break;
 *  - enc_compile compiling the caller's kernel without copying it leaves
 *    that kernel untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "alloc_order.h"
#include "back_util.h"
#include "cJSON.h"
#include "fileio.h"
#include "jsonw.h"
#include "strutil.h"

/* ------------------------------------------ dependency search: index */

static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

static uint32_t lcg(uint32_t *st)
{
    *st = *st * 1664525u + 1013904223u;
    return *st >> 8;
}

/* A random kernel: loads/stores of HBM slices, compute on random engines,
 * small tiles and a 32 KiB-per-partition one, barriers (all of HBM: a
 * "wide" access for the index). */
static void build_random(tir_kernel_t *k, uint32_t seed, int nops)
{
    tir_kernel_init(k);
    snprintf(k->name, sizeof k->name, "random_%u", seed);
    int a = BU_T(k, "a", TIR_T_INPUT, ISA_DT_FP32, 512, 64);
    int out = BU_T(k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 512, 64);
    int big_in = BU_T(k, "big", TIR_T_INPUT, ISA_DT_FP32, 128, 8192);
    int tiles[5];
    tiles[0] = BU_T(k, "t0", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tiles[1] = BU_T(k, "t1", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tiles[2] = BU_T(k, "t2", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tiles[3] = BU_T(k, "t3", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int wide = BU_T(k, "wide", TIR_T_SBUF, ISA_DT_FP32, 128, 8192);
    tiles[4] = wide;
    const int engines[] = {ISA_ENG_DVE, ISA_ENG_ACT, ISA_ENG_POOL};
    uint32_t st = seed;
    tir_op_t op;
    for (int i = 0; i < 4; i++) {   /* every tile defined first */
        tir_op_init(&op, TIR_LOAD);
        op.dst = bu_whole(k, tiles[i]);
        op.src[0] = bu_in(k, bu_ap(a, (int64_t)(i % 4) * 128 * 64, 2, (int64_t)64, (int64_t)128, (int64_t)1,
                          (int64_t)64));
        op.nsrc = 1;
        bu_op(k, &op, "ld0");
    }
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(k, wide), op.src[0] = bu_whole(k, big_in), op.nsrc = 1;
    bu_op(k, &op, "ldw");
    for (int i = 0; i < nops; i++) {
        uint32_t r = lcg(&st) % 10;
        int d = tiles[lcg(&st) % 4], s0 = tiles[lcg(&st) % 4];
        int64_t row = (int64_t)(lcg(&st) % 4) * 128 * 64;
        if (r < 2) {
            tir_op_init(&op, TIR_LOAD);
            op.dst = bu_whole(k, d);
            op.src[0] = bu_in(k, bu_ap(a, row, 2, (int64_t)64, (int64_t)128, (int64_t)1, (int64_t)64));
            op.nsrc = 1;
            bu_op(k, &op, "ld");
        } else if (r < 3) {
            tir_op_init(&op, TIR_STORE);
            op.dst = bu_in(k, bu_ap(out, row, 2, (int64_t)64, (int64_t)128, (int64_t)1, (int64_t)64));
            op.src[0] = bu_whole(k, s0);
            op.nsrc = 1;
            bu_op(k, &op, "st");
        } else if (r < 4) {
            /* touch the wide tile: a slice of it to/from a small one */
            tir_op_init(&op, TIR_TENSOR_COPY);
            int64_t col = (int64_t)(lcg(&st) % 128) * 64;
            tir_ap_t wslice = bu_ap(wide, col, 2, (int64_t)8192, (int64_t)128, (int64_t)1, (int64_t)64);
            if (lcg(&st) & 1)
                op.dst = bu_in(k, wslice), op.src[0] = bu_whole(k, s0);
            else
                op.dst = bu_whole(k, d), op.src[0] = bu_in(k, wslice);
            op.nsrc = 1;
            op.engine = engines[lcg(&st) % 3];
            bu_op(k, &op, "cp");
        } else if (r < 7) {
            tir_op_init(&op, TIR_TENSOR_SCALAR);
            op.dst = bu_whole(k, d), op.src[0] = bu_whole(k, s0), op.nsrc = 1;
            op.op0 = ISA_ALU_ADD, op.s0.imm = 1.0;
            op.engine = engines[lcg(&st) % 3];
            bu_op(k, &op, "ts");
        } else if (r == 9 && lcg(&st) % 3 == 0) {
            /* a barrier: modelled as touching all of HBM (a "wide" access) */
            tir_op_init(&op, TIR_CORE_BARRIER);
            tir_op_rare_t br = *op.rare;
            br.barrier_id = 0, br.barrier_cores = 1;
            op.rare = bu_rare(k, br);
            op.engine = engines[lcg(&st) % 3];
            bu_op(k, &op, "bar");
        } else {
            tir_op_init(&op, TIR_TENSOR_TENSOR);
            op.dst = bu_whole(k, d), op.src[0] = bu_whole(k, s0);
            op.src[1] = bu_in(k, bu_full(k, tiles[lcg(&st) % 4]));
            op.nsrc = 2;
            op.op0 = ISA_ALU_ADD;
            op.engine = lcg(&st) & 1 ? ISA_ENG_DVE : ISA_ENG_POOL;
            bu_op(k, &op, "tt");
        }
    }
    tir_op_init(&op, TIR_STORE);
    op.dst = bu_in(k, bu_ap(out, 0, 2, (int64_t)64, (int64_t)128, (int64_t)1, (int64_t)64));
    op.src[0] = bu_whole(k, tiles[0]);
    op.nsrc = 1;
    bu_op(k, &op, "st_end");
}

static int lower_and_sync(bu_run_t *r, const tir_kernel_t *k, int budget)
{
    if (bu_lower(r, k, trn2(), false))
        return -1;
    if (sched_assign_engines(&r->m, trn2(), &r->err) || sched_assign_queues(&r->m, trn2(), &r->err))
        return -1;
    return sched_synchronise_budget(&r->m, &r->st, budget, &r->err);
}

/* The memory index finds exactly the waits the plain backward scan finds. */
static void test_sync_index_matches_scan(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= 12; seed++) {
        tir_kernel_t k;
        build_random(&k, seed, 150);
        bu_run_t lin, idx;
        int rc = lower_and_sync(&lin, &k, INT_MAX);
        if (rc)
            print_error("seed %u: %s\n", seed, lin.err.msg);
        assert_int_equal(rc, 0);
        assert_int_equal(lower_and_sync(&idx, &k, 0), 0);
        bir_block_t *a = bu_block(&lin), *b = bu_block(&idx);
        assert_int_equal(a->ninsts, b->ninsts);
        assert_true(lin.st.waits > 10);   /* the kernel does synchronise */
        assert_int_equal(lin.st.waits, idx.st.waits);
        assert_int_equal(lin.st.nops, idx.st.nops);
        for (int i = 0; i < a->ninsts; i++) {
            assert_string_equal(a->insts[i].name, b->insts[i].name);
            assert_memory_equal(&a->insts[i].isa.sync, &b->insts[i].isa.sync,
                                sizeof a->insts[i].isa.sync);
        }
        bu_free(&lin);
        bu_free(&idx);
        tir_kernel_free(&k);
    }
}

/* Three [1,4] chains on DVE, Activation and Pool whose tiles share one
 * index chunk, with a reader of all three now and then: the index (whose
 * lists drop producers repeating a newer one's accesses) finds exactly
 * the plain scan's waits. */
static void build_chains(tir_kernel_t *k, int iters)
{
    tir_kernel_init(k);
    snprintf(k->name, sizeof k->name, "chains");
    int x = BU_T(k, "x", TIR_T_INPUT, ISA_DT_FP32, 1, 4);
    int t[4];
    for (int i = 0; i < 4; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "t%d", i);
        t[i] = BU_T(k, nm, TIR_T_SBUF, ISA_DT_FP32, 1, 4);
    }
    const int engines[] = {ISA_ENG_DVE, ISA_ENG_ACT, ISA_ENG_POOL};
    tir_op_t op;
    for (int i = 0; i < 4; i++) {
        tir_op_init(&op, TIR_LOAD);
        op.dst = bu_whole(k, t[i]), op.src[0] = bu_whole(k, x), op.nsrc = 1;
        bu_op(k, &op, "ld");
    }
    for (int it = 0; it < iters; it++)
        for (int c = 0; c < 3; c++) {
            tir_op_init(&op, TIR_TENSOR_SCALAR);
            op.dst = bu_whole(k, t[c]);
            /* every 7th step of a chain reads the next chain's tile */
            op.src[0] = bu_in(k, bu_full(k, it % 7 == 6 ? t[(c + 1) % 3] : t[c]));
            op.nsrc = 1;
            op.op0 = ISA_ALU_MULTIPLY, op.s0.imm = 0.5;
            op.engine = engines[c];
            bu_op(k, &op, "ts");
        }
}

static void test_sync_index_chains_match_scan(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_chains(&k, 400);
    bu_run_t lin, idx;
    assert_int_equal(lower_and_sync(&lin, &k, INT_MAX), 0);
    assert_int_equal(lower_and_sync(&idx, &k, 0), 0);
    bir_block_t *a = bu_block(&lin), *b = bu_block(&idx);
    assert_int_equal(a->ninsts, b->ninsts);
    assert_true(lin.st.waits > 100);
    assert_int_equal(lin.st.waits, idx.st.waits);
    assert_int_equal(lin.st.nops, idx.st.nops);
    for (int i = 0; i < a->ninsts; i++)
        assert_memory_equal(&a->insts[i].isa.sync, &b->insts[i].isa.sync,
                            sizeof a->insts[i].isa.sync);
    bu_free(&lin);
    bu_free(&idx);
    tir_kernel_free(&k);
}

/* ------------------------------------------------- allocator first fit */

/* The allocator's first placement rule as it was specified (and coded)
 * before the address-ordered sweep: from 0, pass over the live placed tiles
 * moving past each overlapping one, until a pass moves nothing. */
static uint64_t ref_first_fit(const bir_mloc_t *r, bir_mloc_t **placed, int n, uint64_t align,
                              bool psum)
{
    uint64_t a = 0;
    for (;;) {
        a = (a + align - 1) / align * align;
        if (psum && (r->bytes > 2048 || a % 2048 + r->bytes > 2048))
            a = (a + 2047) / 2048 * 2048;
        bool moved = false;
        for (int i = 0; i < n; i++) {
            const bir_mloc_t *p = placed[i];
            if (!(p->first_use <= r->last_use && r->first_use <= p->last_use))
                continue;
            if (a < p->addr + p->bytes && p->addr < a + r->bytes)
                a = p->addr + p->bytes, moved = true;
        }
        if (!moved)
            return a;
    }
}

/* Random tiles (SBUF and PSUM, many sizes) with random live ranges: the
 * allocator's addresses equal the reference rule's. */
static void test_alloc_matches_reference_first_fit(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= 20; seed++) {
        uint32_t st = seed * 7919u;
        tir_kernel_t k;
        tir_kernel_init(&k);
        int nt = 40;
        int tiles[40];
        for (int i = 0; i < nt; i++) {
            bool ps = lcg(&st) % 5 == 0;   /* PSUM is 16 KiB: fewer, smaller (some > a bank) */
            int64_t w = ps ? 1 + lcg(&st) % (lcg(&st) % 4 ? 300 : 700) : 1 + lcg(&st) % 900;
            char nm[16];
            snprintf(nm, sizeof nm, "t%d", i);
            tiles[i] = BU_T(&k, nm, ps ? TIR_T_PSUM : TIR_T_SBUF, ISA_DT_FP32, 128, w);
        }
        /* ops over random tiles: each touches 1-2 tiles -> random live ranges */
        for (int o = 0; o < 120; o++) {
            tir_op_t op;
            tir_op_init(&op, TIR_MEMSET);
            op.dst = bu_in(&k, bu_full(&k, tiles[lcg(&st) % nt]));
            if (lcg(&st) & 1)
                op.dst2 = bu_in(&k, bu_full(&k, tiles[lcg(&st) % nt]));
            bu_op(&k, &op, "touch");
        }
        bir_module_t m;
        tpb_err_t err;
        assert_int_equal(bir_module_init(&m, 0, k.ntensors, &err), 0);
        enc_stats_t es;
        memset(&es, 0, sizeof es);
        int rc = alloc_kernel(&k, trn2(), NULL, &m, &es, &err);
        if (rc)
            print_error("seed %u: %s\n", seed, err.msg);
        assert_int_equal(rc, 0);
        /* the reference over the same request order (first use, then index) */
        for (int sp = 0; sp < 2; sp++) {
            unsigned space = sp ? ISA_SPACE_PSUM : ISA_SPACE_SBUF;
            bir_mloc_t ref[40], *placed[40];
            int order[40], nr = 0, np = 0;
            for (int i = 0; i < nt; i++)
                if (m.mlocs[tiles[i]].space == space && m.mlocs[tiles[i]].first_use >= 0)
                    order[nr++] = i;
            for (int x = 1; x < nr; x++)   /* insertion sort by (first_use, index) */
                for (int y = x; y > 0 && m.mlocs[tiles[order[y - 1]]].first_use >
                                             m.mlocs[tiles[order[y]]].first_use; y--) {
                    int tmp = order[y];
                    order[y] = order[y - 1], order[y - 1] = tmp;
                }
            for (int x = 0; x < nr; x++) {
                ref[x] = m.mlocs[tiles[order[x]]];
                int keep = 0;
                for (int j = 0; j < np; j++)
                    if (placed[j]->last_use >= ref[x].first_use)
                        placed[keep++] = placed[j];
                np = keep;
                ref[x].addr = ref_first_fit(&ref[x], placed, np, sp ? 8 : 64, sp);
                assert_int_equal(ref[x].addr, m.mlocs[tiles[order[x]]].addr);
                placed[np++] = &ref[x];
            }
        }
        bir_module_free(&m);
        tir_kernel_free(&k);
    }
}

/* -------------------------------------------------------- path grouping */

typedef struct {
    const char *s;
    int i;
} sidx_t;

static int cmp_sidx(const void *x, const void *y)
{
    const sidx_t *a = x, *b = y;
    int c = strcmp(a->s, b->s);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* Random paths from a few shapes (shared prefixes, "" and lengths past 8
 * bytes, many repeats): the rank-based order equals the strcmp order with
 * equal paths kept in index order. */
static void test_path_order_matches_strcmp_sort(void **state)
{
    (void)state;
    static const char *const base[] = {"",         "body[1]",         "body[1].body[0]",
                                       "body[10]", "body[1].body[10]", "body[2].body[3].body[4]",
                                       "b",        "body[1].body[0]x"};
    enum { NB = sizeof base / sizeof base[0] };
    for (uint32_t seed = 1; seed <= 30; seed++) {
        uint32_t st = seed * 2654435761u;
        int n = (int)(lcg(&st) % 3000);
        const char **s = malloc((size_t)(n ? n : 1) * sizeof *s);
        sidx_t *ref = malloc((size_t)(n ? n : 1) * sizeof *ref);
        int *perm = malloc((size_t)(n ? n : 1) * sizeof *perm);
        char(*own)[40] = malloc((size_t)(n ? n : 1) * sizeof *own);
        assert_non_null(s), assert_non_null(ref), assert_non_null(perm), assert_non_null(own);
        int ndistinct = 1 + (int)(lcg(&st) % 200);
        int first[200];
        for (int v = 0; v < 200; v++)
            first[v] = -1;
        for (int i = 0; i < n; i++) {
            /* a private copy (equal strings at different addresses) or,
             * every other time, the first copy's pointer (interned paths:
             * enc_stable_order_by_str's pointer memo) */
            uint32_t v = lcg(&st) % (uint32_t)ndistinct;
            snprintf(own[i], sizeof own[i], "%s%s%u", base[v % NB], v % 3 ? "." : "",
                     v % 3 ? v : 0u);
            if (first[v] < 0)
                first[v] = i;
            s[i] = lcg(&st) % 2 ? own[first[v]] : own[i];
            ref[i] = (sidx_t){s[i], i};
        }
        qsort(ref, (size_t)n, sizeof *ref, cmp_sidx);
        assert_int_equal(enc_stable_order_by_str(s, n, perm), 0);
        for (int i = 0; i < n; i++)
            assert_int_equal(perm[i], ref[i].i);
        free(s), free(ref), free(perm), free(own);
    }
}

/* ---------------------------------------------------------- encode cache */

/* load; 6 x (t += 1) on DVE; 3 x predicated select on DVE (PredExt);
 * 3 x an add with 3 free dims (ApExt) on Pool; store. */
static void build_repetitive(tir_kernel_t *k)
{
    tir_kernel_init(k);
    snprintf(k->name, sizeof k->name, "cache_test");
    int a = BU_T(k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, 64);
    int out = BU_T(k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 128, 64);
    int t = BU_T(k, "t", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int u = BU_T(k, "u", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int v = BU_T(k, "v", TIR_T_SBUF, ISA_DT_FP32, 128, 4, 4, 4);
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(k, t), op.src[0] = bu_whole(k, a), op.nsrc = 1;
    bu_op(k, &op, "ld");
    for (int i = 0; i < 6; i++) {
        tir_op_init(&op, TIR_TENSOR_SCALAR);
        op.dst = bu_whole(k, t), op.src[0] = bu_whole(k, t), op.nsrc = 1;
        op.op0 = ISA_ALU_ADD, op.s0.imm = 1.0, op.engine = ISA_ENG_DVE;
        bu_op(k, &op, "inc");
    }
    for (int i = 0; i < 3; i++) {
        tir_op_init(&op, TIR_AFFINE_SELECT);
        op.dst = bu_whole(k, u), op.src[0] = bu_whole(k, t), op.nsrc = 1;
        op.engine = ISA_ENG_DVE;
        tir_op_rare_t pr = tir_rare_default;
        pr.pat_offset = -3, pr.pat_cm = 1, pr.pat_ndim = 1, pr.pat_step[0] = -1;
        op.rare = bu_rare(k, pr);
        op.cmp = ISA_CMP_GE; TIR_RARE_SET(k, &op, fill, -9.0);
        bu_op(k, &op, "sel");
        tir_op_init(&op, TIR_TENSOR_TENSOR);
        op.dst = bu_in(k, bu_ap(v, 0, 4, (int64_t)64, (int64_t)128, (int64_t)1, (int64_t)4, (int64_t)4,
                       (int64_t)4, (int64_t)16, (int64_t)4));
        op.src[0] = bu_in(k, bu_ap(u, 0, 4, (int64_t)64, (int64_t)128, (int64_t)16, (int64_t)4,
                          (int64_t)4, (int64_t)4, (int64_t)1, (int64_t)4));
        op.src[1] = op.src[0];
        BU_EDIT(k, op.src[1], tensor, t);
        op.nsrc = 2;
        op.op0 = ISA_ALU_ADD, op.engine = ISA_ENG_POOL;
        bu_op(k, &op, "add3");
    }
    tir_op_init(&op, TIR_STORE);
    op.dst = bu_whole(k, out), op.src[0] = bu_whole(k, u), op.nsrc = 1;
    bu_op(k, &op, "st");
}

/* Give every instruction its own header values (as the scheduler would
 * over a long unrolled loop). */
static void vary_headers(bir_block_t *b)
{
    for (int i = 0; i < b->ninsts; i++) {
        bir_sync_t *s = &b->insts[i].isa.sync;
        s->wait_en = 1;
        s->wait_sem = (uint32_t)(i % 7);
        s->wait_val = 1000u + 37u * (uint32_t)i;
        s->upd_en = (uint32_t)(i & 1);
        s->upd_sem = (uint32_t)(i % 5);
        s->upd_val = (uint32_t)i;
    }
}

/* What isa_encode makes of instruction `in`: [PredExt] [ApExt] main. */
static unsigned reference_bundles(const bir_inst_t *in, uint8_t out[3][ISA_BUNDLE_BYTES])
{
    isa_err_t ie;
    unsigned n = 0;
    memset(out, 0, 3 * ISA_BUNDLE_BYTES);
    if (in->has_pred) {
        isa_inst_t p;
        memset(&p, 0, sizeof p);
        p.op = ISA_OP_PRED_EXT;
        p.l2 = isa_ops[ISA_OP_PRED_EXT].l2;
        p.f.PREDEXT = bir_rare(in)->pred;
        assert_int_equal(isa_encode(&p, out[n++], &ie), ISA_OK);
    }
    unsigned k = 0;
    isa_inst_t whole;
    bir_isa_expand(in, &whole);
    assert_int_equal(isa_encode_with_prefixes(&whole, (uint8_t(*)[ISA_BUNDLE_BYTES])out[n], &k, &ie),
                     ISA_OK);
    return n + k;
}

static void tmpdir(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "%s/back_speed_%s_%ld", TPB_BINARY_DIR, tag, (long)getpid());
    art_rmtree(out);
}

/* Generate the lowered kernel's streams (mode 1) and compare each engine's
 * bytes with isa_encode run on every instruction; the cache's hit count. */
static unsigned streams_match_isa_encode_recent(bu_run_t *r, const char *tag, bool need_pred_apext,
                                               unsigned *recent)
{
    bir_block_t *b = bu_block(r);
    char dir[4096];
    tmpdir(dir, sizeof dir, tag);
    tpb_err_t err;
    assert_int_equal(fio_mkdirs(dir, &err), 0);
    gen_t g;
    assert_int_equal(gen_init(&g, ENC_RUN_ISA_CHECKS, &r->m, dir, false, &err), 0);
    int rc = gen_run(&g, &err);
    if (rc)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    unsigned hits = g.cache_hits;
    if (recent)
        *recent = g.cache_recent_hits;
    assert_int_equal(gen_finish(&g, true, &err), 0);
    gen_free(&g);
    /* each engine's stream == the reference encoding of its instructions */
    bool saw_pred = false, saw_apext = false;
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        if (!isa_engine_is_tpb((isa_engine_t)e))
            continue;
        char p[4200];
        snprintf(p, sizeof p, "%s/%s.bin", dir, isa_engine_name((isa_engine_t)e));
        uint8_t *buf = NULL;
        size_t len = 0, at = 0;
        if (!fio_exists(p))
            continue;
        assert_int_equal(fio_read_all(p, &buf, &len, &err), 0);
        for (int i = 0; i < b->ninsts; i++) {
            if (b->insts[i].engine != e)
                continue;
            uint8_t ref[3][ISA_BUNDLE_BYTES];
            unsigned nb = reference_bundles(&b->insts[i], ref);
            saw_pred |= b->insts[i].has_pred;
            saw_apext |= nb - b->insts[i].has_pred > 1;
            assert_true(at + nb * ISA_BUNDLE_BYTES <= len);
            assert_memory_equal(buf + at, ref, nb * ISA_BUNDLE_BYTES);
            at += nb * ISA_BUNDLE_BYTES;
        }
        assert_int_equal(at, len);
        free(buf);
    }
    if (need_pred_apext) {
        assert_true(saw_pred);
        assert_true(saw_apext);
    }
    art_rmtree(dir);
    return hits;
}

static unsigned streams_match_isa_encode(bu_run_t *r, const char *tag, bool need_pred_apext)
{
    return streams_match_isa_encode_recent(r, tag, need_pred_apext, NULL);
}

static void test_encode_cache_bytes_match_isa_encode(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_repetitive(&k);
    bu_run_t r;
    int rc = bu_lower(&r, &k, trn2(), true);
    if (rc)
        print_error("%s\n", r.err.msg);
    assert_int_equal(rc, 0);
    vary_headers(bu_block(&r));
    /* the repeated bodies were served from the cache */
    assert_true(streams_match_isa_encode(&r, "cache", true) >= 10);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* A cache hit whose BIR header is byte for byte the one the entry was
 * filled with takes the entry's bundles as they are (no expansion, no
 * patch); any other header, including one that differs only in the flags
 * byte's unused bits, is patched field by field.  Both give isa_encode's
 * bytes: the headers alternate between two sets of values, and every
 * third instruction carries the first set with the spare flag bits set. */
static void test_encode_cache_same_header(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_repetitive(&k);
    bu_run_t r;
    int rc = bu_lower(&r, &k, trn2(), true);
    if (rc)
        print_error("%s\n", r.err.msg);
    assert_int_equal(rc, 0);
    bir_block_t *b = bu_block(&r);
    bir_sync_t one, two;
    memset(&one, 0, sizeof one);
    memset(&two, 0, sizeof two);
    one.wait_en = 1, one.wait_sem = 3, one.wait_val = 77, one.upd_en = 1, one.upd_sem = 2;
    one.upd_val = 1, one.upd_op = ISA_SEMOP_SEM_INC;
    two = one;
    two.wait_val = 78, two.upd_sem = 4;
    bir_sync_t odd = one;   /* one's values, other bytes: the flags byte's spare bits */
    unsigned char *ob = (unsigned char *)&odd;
    unsigned char keep = ob[sizeof odd - 1];
    ob[sizeof odd - 1] = (unsigned char)(keep | 0xf0u);
    bool spare = odd.wait_en == one.wait_en && odd.upd_en == one.upd_en &&
                 odd.upd_at_read == one.upd_at_read && odd.upd_remote == one.upd_remote;
    if (!spare)   /* another bit layout: the bits are fields; no such variant */
        odd = one;
    for (int i = 0; i < b->ninsts; i++)
        b->insts[i].isa.sync = i % 3 == 2 ? odd : i % 2 ? two : one;
    assert_true(streams_match_isa_encode(&r, "samehdr", true) >= 10);
    /* every instruction with the first set: the hits need no patch */
    for (int i = 0; i < b->ninsts; i++)
        b->insts[i].isa.sync = one;
    assert_true(streams_match_isa_encode(&r, "samehdr1", true) >= 10);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* More distinct bodies (immediates) than the encode cache's 4 096 slots,
 * twice: its entry array grows to full size, slots collide and replace
 * entries, the second pass hits the survivors; streams are isa_encode's. */
static void test_encode_cache_many_bodies(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, 64);
    int t = BU_T(&k, "t", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(&k, t), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    bu_op(&k, &op, "ld");
    for (int i = 0; i < 2 * 5000; i++) {
        tir_op_init(&op, TIR_TENSOR_SCALAR);
        op.dst = bu_whole(&k, t), op.src[0] = bu_whole(&k, t), op.nsrc = 1;
        op.op0 = ISA_ALU_ADD, op.s0.imm = (double)(i % 5000), op.engine = ISA_ENG_DVE;
        bu_op(&k, &op, "inc");
    }
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    vary_headers(bu_block(&r));
    unsigned hits = streams_match_isa_encode(&r, "many", false);
    assert_true(hits > 0 && hits < 5000);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* Streams longer than the generator's per-stream batch (GEN_BIN_BUF, 256
 * bundles): 400 instructions on each of three engines reach the files
 * whole and in order; the encode cache guesses each engine's entry from
 * the period of its stream (gen_t.recent). */
static void test_long_streams_match_isa_encode(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_chains(&k, 400);
    bu_run_t r;
    int rc = bu_lower(&r, &k, trn2(), true);
    if (rc)
        print_error("%s\n", r.err.msg);
    assert_int_equal(rc, 0);
    vary_headers(bu_block(&r));
    /* each chain's stream repeats every 7 instructions (the 7th reads
     * another tile): after learning that period the cache entry is found
     * by guessing (the 1 200 tensor ops less a few wrong guesses) */
    unsigned recent = 0;
    assert_true(streams_match_isa_encode_recent(&r, "long", false, &recent) >= 1100);
    if (recent < 1100)
        fail_msg("only %u of the cache hits were guessed", recent);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* The cache key is the opcode and the bytes of the op's format struct,
 * which is all a BIR body holds (exact size, encoder/bir.h).  The
 * lowering's equal bodies are one shared copy (bir_inst_share): two
 * instructions of one ISA op point at one body exactly when their bodies
 * are equal (the six adds: one), and the repeated bodies still hit, with
 * the bytes isa_encode gives. */
static void test_encode_cache_keys_the_exact_body(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_repetitive(&k);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    bir_block_t *b = bu_block(&r);
    vary_headers(b);
    int n = 0, adds = 0;
    const isa_body_t *add = NULL;
    for (int i = 0; i < b->ninsts; i++) {
        const bir_inst_t *x = &b->insts[i];
        if (!x->isa.f)
            continue;
        n++;
        if (x->isa.op == ISA_OP_TENSOR_SCALAR) {
            adds++;
            if (!add)
                add = x->isa.f;
            assert_ptr_equal(x->isa.f, add);
        }
        for (int j = 0; j < i; j++) {
            const bir_inst_t *y = &b->insts[j];
            if (!y->isa.f || y->isa.op != x->isa.op)
                continue;
            bool same = memcmp(x->isa.f, y->isa.f, bir_body_size(x->isa.op)) == 0;
            assert_int_equal(same, x->isa.f == y->isa.f);
        }
    }
    assert_true(n > 10);
    assert_int_equal(adds, 6);
    assert_true(streams_match_isa_encode(&r, "exact", true) >= 10);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* The queue pass writes each DMA's queue into its body: the lowering's
 * eight equal loads share one descriptor body and one trigger body, and
 * after the pass every descriptor and trigger carries its own queue, the
 * ones on one queue still sharing a body (bir_inst_body_share), the old
 * shared body unchanged. */
static void test_queue_write_keeps_shared_bodies(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    snprintf(k.name, sizeof k.name, "queue_share");
    int a = BU_T(&k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, 64);
    int t = BU_T(&k, "t", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tir_op_t op;
    for (int i = 0; i < 8; i++) {
        tir_op_init(&op, TIR_LOAD);
        op.dst = bu_whole(&k, t), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
        bu_op(&k, &op, "ld");
    }
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    bir_block_t *b = bu_block(&r);
    const isa_body_t *first[2] = {NULL, NULL};   /* descriptor, trigger */
    int n[2] = {0, 0};
    for (int i = 0; i < b->ninsts; i++) {
        const bir_inst_t *x = &b->insts[i];
        int w = x->isa.op == ISA_OP_DMA_TRIGGER;
        if (!w && !isa_op_is_direct_dma(x->isa.op))
            continue;
        if (!first[w])
            first[w] = x->isa.f;
        assert_ptr_equal(x->isa.f, first[w]);
        n[w]++;
    }
    assert_int_equal(n[0], 8);
    assert_int_equal(n[1], 8);
    isa_body_t before[2];
    memcpy(&before[0], first[0], sizeof(isa_fmt_DDESC_t));
    memcpy(&before[1], first[1], sizeof(isa_fmt_DTRIG_t));
    assert_int_equal(sched_assign_engines(&r.m, trn2(), &r.err), 0);
    assert_int_equal(sched_assign_queues(&r.m, trn2(), &r.err), 0);
    unsigned queues = 0;
    for (int i = 0; i < b->ninsts; i++) {
        const bir_inst_t *x = &b->insts[i];
        int w = x->isa.op == ISA_OP_DMA_TRIGGER;
        if (!w && !isa_op_is_direct_dma(x->isa.op))
            continue;
        assert_int_equal(w ? x->isa.f->DTRIG.queue : x->isa.f->DDESC.queue, x->queue);
        queues |= 1u << x->queue;
        for (int j = 0; j < i; j++)
            if (b->insts[j].isa.op == x->isa.op)
                assert_int_equal(b->insts[j].isa.f == x->isa.f, b->insts[j].queue == x->queue);
    }
    assert_true(__builtin_popcount(queues) >= 2);   /* the loads rotate over queues */
    assert_memory_equal(first[0], &before[0], sizeof(isa_fmt_DDESC_t));
    assert_memory_equal(first[1], &before[1], sizeof(isa_fmt_DTRIG_t));
    bu_free(&r);
    tir_kernel_free(&k);
}

/* DMAs that all differ (each row of a tensor loaded into its own tile):
 * after BIR_SHARE_MISS_RUN misses the lowering stops remembering their
 * bodies, so most are their instruction's own (body_shared false), and
 * the queue pass writes those in place -- no second copy per DMA; the
 * remembered ones get a copy.  Every body carries its queue either way. */
static void test_queue_write_own_bodies_in_place(void **state)
{
    (void)state;
    enum { ROWS = 96 };
    tir_kernel_t k;
    tir_kernel_init(&k);
    snprintf(k.name, sizeof k.name, "queue_own");
    int a = BU_T(&k, "a", TIR_T_INPUT, ISA_DT_FP32, ROWS, 4);
    tir_op_t op;
    for (int i = 0; i < ROWS; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "t%d", i);
        int t = BU_T(&k, nm, TIR_T_SBUF, ISA_DT_FP32, 1, 4);
        tir_op_init(&op, TIR_LOAD);
        op.dst = bu_whole(&k, t);
        op.src[0] = bu_in(&k, bu_ap(a, 4 * i, 2, (int64_t)4, (int64_t)1, (int64_t)1, (int64_t)4));
        op.nsrc = 1;
        bu_op(&k, &op, "ld");
    }
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    bir_block_t *b = bu_block(&r);
    const isa_body_t **was = calloc((size_t)b->ninsts, sizeof *was);
    assert_non_null(was);
    bool *was_shared = calloc((size_t)b->ninsts, sizeof *was_shared);
    assert_non_null(was_shared);
    int own = 0, shared = 0;
    for (int i = 0; i < b->ninsts; i++) {
        was[i] = b->insts[i].isa.f;
        was_shared[i] = b->insts[i].body_shared;
        if (isa_op_is_direct_dma(b->insts[i].isa.op))
            b->insts[i].body_shared ? shared++ : own++;
    }
    assert_true(own >= ROWS / 2);
    assert_true(shared >= 1);
    assert_int_equal(sched_assign_engines(&r.m, trn2(), &r.err), 0);
    assert_int_equal(sched_assign_queues(&r.m, trn2(), &r.err), 0);
    int moved = 0;
    for (int i = 0; i < b->ninsts; i++) {
        const bir_inst_t *x = &b->insts[i];
        if (!isa_op_is_direct_dma(x->isa.op))
            continue;
        assert_int_equal(x->isa.f->DDESC.queue, x->queue);
        if (!was_shared[i])
            assert_ptr_equal(x->isa.f, was[i]);   /* written in place */
        moved += x->isa.f != was[i];
    }
    assert_true(moved < ROWS / 2);
    free(was);
    free(was_shared);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* A header value the encoder rejects fails on a cache hit exactly as it
 * does without the cache (same message), in modes 1 and 2. */
/* The L2 legality check: instructions whose opcode is illegal on their
 * engine (two TensorScalars moved to PE) fail the walk after it ends, the
 * first of them named, with legal ones before, between and after. */
static void test_illegal_engine_first_reported(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_repetitive(&k);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    bir_block_t *b = bu_block(&r);
    int ts[8], n = 0;
    for (int i = 0; i < b->ninsts && n < 8; i++)
        if (b->insts[i].isa.op == ISA_OP_TENSOR_SCALAR)
            ts[n++] = i;
    assert_true(n >= 5);
    const isa_opinfo_t *oi = isa_op_by_l2(isa_ops[ISA_OP_TENSOR_SCALAR].l2);
    assert_non_null(oi);
    assert_false(oi->engines & (1u << ISA_ENG_PE));
    b->insts[ts[1]].engine = ISA_ENG_PE;
    b->insts[ts[3]].engine = ISA_ENG_PE;
    char dir[4096];
    tmpdir(dir, sizeof dir, "illegal");
    tpb_err_t err;
    assert_int_equal(fio_mkdirs(dir, &err), 0);
    gen_t g;
    assert_int_equal(gen_init(&g, ENC_RUN_ISA_CHECKS, &r.m, dir, false, &err), 0);
    assert_int_not_equal(gen_run(&g, &err), 0);
    assert_int_equal(g.nchecks, 2);   /* only the failing checks waited */
    char want[64];
    snprintf(want, sizeof want, "instruction %d '", ts[1]);
    if (!strstr(err.msg, want) || !strstr(err.msg, "is not legal on PE"))
        fail_msg("unexpected message: %s", err.msg);
    gen_finish(&g, false, &err);
    gen_free(&g);
    art_rmtree(dir);
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_encode_cache_bad_header_same_error(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_repetitive(&k);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    bir_block_t *b = bu_block(&r);
    int last = -1;
    for (int i = 0; i < b->ninsts; i++)
        if (b->insts[i].isa.op == ISA_OP_TENSOR_SCALAR)
            last = i;   /* the 6th add: its body is cached by then */
    assert_true(last >= 0);
    /* (bir_sync_t holds each field in its ISA width or a little more:
     * values past the width of the fields stored wider) */
    struct {
        uint8_t *field;
        uint8_t value;
    } bad[] = {{&b->insts[last].isa.sync.upd_core, 9u},   /* 3-bit field */
               {&b->insts[last].isa.sync.wait_reg, 20u},  /* 4-bit field */
               {&b->insts[last].isa.sync.upd_op, 15u}};   /* not a SEMOP value */
    char dir[4096];
    tmpdir(dir, sizeof dir, "badhdr");
    tpb_err_t err;
    assert_int_equal(fio_mkdirs(dir, &err), 0);
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        uint8_t keep = *bad[c].field;
        *bad[c].field = bad[c].value;
        isa_err_t ie;
        uint8_t tmp[2][ISA_BUNDLE_BYTES];
        unsigned nb;
        isa_inst_t whole;
        bir_isa_expand(&b->insts[last], &whole);
        assert_int_not_equal(isa_encode_with_prefixes(&whole, tmp, &nb, &ie), ISA_OK);
        const int modes[] = {ENC_RUN_ISA_CHECKS, ENC_GENERATE_ISACODE};
        for (int mi = 0; mi < 2; mi++) {
            gen_t g;
            assert_int_equal(gen_init(&g, modes[mi], &r.m, dir, false, &err), 0);
            assert_int_not_equal(gen_run(&g, &err), 0);
            assert_true(g.cache_hits > 0);
            char want[256];
            snprintf(want, sizeof want, "instruction %d '%s'", last, b->insts[last].name);
            assert_non_null(strstr(err.msg, want));
            assert_non_null(strstr(err.msg, ie.msg));
            gen_finish(&g, false, &err);
            gen_free(&g);
        }
        *bad[c].field = keep;
    }
    art_rmtree(dir);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* ------------------------------------------------ the caller's kernel */

static void test_compile_leaves_kernel_untouched(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_repetitive(&k);
    size_t ob = (size_t)k.nops * sizeof *k.ops, tb = (size_t)k.ntensors * sizeof *k.tensors;
    void *ops = malloc(ob), *ts = malloc(tb);
    assert_non_null(ops);
    assert_non_null(ts);
    memcpy(ops, k.ops, ob);
    memcpy(ts, k.tensors, tb);
    tir_kernel_t head = k;
    char dir[4096];
    tmpdir(dir, sizeof dir, "untouched");
    enc_options_t o = {dir, "trn2", ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    enc_stats_t st;
    tpb_err_t err;
    int rc = enc_compile(&k, &o, &st, &err);
    if (rc)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_memory_equal(&head, &k, sizeof k);
    assert_memory_equal(ops, k.ops, ob);
    assert_memory_equal(ts, k.tensors, tb);
    free(ops);
    free(ts);
    art_rmtree(dir);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_cache_bytes_match_isa_encode),
        cmocka_unit_test(test_encode_cache_same_header),
        cmocka_unit_test(test_long_streams_match_isa_encode),
        cmocka_unit_test(test_encode_cache_keys_the_exact_body),
        cmocka_unit_test(test_queue_write_keeps_shared_bodies),
        cmocka_unit_test(test_queue_write_own_bodies_in_place),
        cmocka_unit_test(test_encode_cache_bad_header_same_error),
        cmocka_unit_test(test_illegal_engine_first_reported),
        cmocka_unit_test(test_compile_leaves_kernel_untouched),
        cmocka_unit_test(test_sync_index_matches_scan),
        cmocka_unit_test(test_sync_index_chains_match_scan),
        cmocka_unit_test(test_alloc_matches_reference_first_fit),
        cmocka_unit_test(test_path_order_matches_strcmp_sort),
        cmocka_unit_test(test_encode_cache_many_bodies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
