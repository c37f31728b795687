/* The DMA plane copy (sim/dma_move.c sim_dma_copy_rows, sim/lazy.c
 * sim_lazy_cover_rows) against row-by-row references: random rows with
 * overlapping ranges, per-plane lazy covers against the per-row loop, and
 * whole descriptors (HBM to SBUF into lazy cells, SBUF to SBUF with rows
 * overlapping across partitions, HBM to HBM in one tensor, rows across
 * partitions taking the element path) against a reference image. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "dma_int.h"
#include "sim_testlib.h"

#define F32 ISA_DT_FP32

static void fill_random(lcg_t *g, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)lcg_next(g, 256);
}

/* Rows in one buffer of 4 KiB, adjacent or strided, source and destination
 * overlapping with dst above, below or apart: the same bytes as one
 * memmove per row in row order.  Fails when adjacent rows are merged into
 * one memmove while a row overwrites a later row's source (dst > src). */
static void test_copy_rows_equals_row_loop(void **state)
{
    (void)state;
    enum { SZ = 4096 };
    uint8_t *a = malloc(SZ), *b = malloc(SZ);
    assert_non_null(a);
    assert_non_null(b);
    lcg_t g = { 7 };
    unsigned merged_overlap = 0;
    for (unsigned trial = 0; trial < 4000; trial++) {
        size_t len = 1 + lcg_next(&g, 64);
        uint32_t n = 1 + lcg_next(&g, 12);
        unsigned kind = trial % 4;
        int64_t ss = (int64_t)len, ds = (int64_t)len;
        if (kind == 1)
            ss += lcg_next(&g, 40);
        else if (kind == 2)
            ds = -(int64_t)(len + lcg_next(&g, 40));
        else if (kind == 3)
            ds = 0;   /* every row onto the same bytes: the last one wins */
        int64_t span = 64 * 13 + 40 * 12;
        int64_t s0 = span + lcg_next(&g, 1024), d0 = s0 + (int64_t)lcg_next(&g, 200) - 100;
        if (kind == 0 && d0 > s0 && d0 < s0 + (int64_t)(n * len))
            merged_overlap++;
        fill_random(&g, a, SZ);
        memcpy(b, a, SZ);
        sim_dma_copy_rows(a + d0, ds, a + s0, ss, n, len);
        for (uint32_t j = 0; j < n; j++)
            memmove(b + d0 + (int64_t)j * ds, b + s0 + (int64_t)j * ss, len);
        if (memcmp(a, b, SZ))
            fail_msg("trial %u: %u rows of %zu, steps %lld / %lld, src %lld dst %lld", trial, n,
                     len, (long long)ss, (long long)ds, (long long)s0, (long long)d0);
    }
    assert_true(merged_overlap > 50);
    free(a);
    free(b);
}

static void lazy_equal(const sim_lazy_t *x, const sim_lazy_t *y, const uint8_t *mx,
                       const uint8_t *my, size_t bytes, unsigned trial)
{
    if (x->left != y->left || x->full != y->full || memcmp(x->done, y->done, sizeof x->done) ||
        memcmp(x->cov, y->cov, sizeof x->cov) || memcmp(mx, my, bytes))
        fail_msg("trial %u: lazy state differs (left %llu / %llu)", trial,
                 (unsigned long long)x->left, (unsigned long long)y->left);
}

/* Random lazy images (some cells filled, some with a written prefix)
 * covered by a plane of rows stepping -3..3 partitions, partly outside the
 * image, byte ranges clamped at either end: state and bytes as after the
 * per-row sim_lazy_cover loop.  Fails when a partition that is not
 * already filled is skipped, or the whole-image shortcut misreads the
 * range. */
static void test_lazy_cover_rows_equals_loop(void **state)
{
    (void)state;
    const unsigned parts = 16;
    const uint32_t pb = 6 * SIM_LAZY_CHUNK + 300;
    uint8_t *ma = calloc(parts, pb), *mb = calloc(parts, pb);
    sim_lazy_t *za = malloc(sizeof *za), *zb = malloc(sizeof *zb);
    assert_non_null(ma);
    assert_non_null(mb);
    assert_non_null(za);
    assert_non_null(zb);
    lcg_t g = { 11 };
    for (unsigned trial = 0; trial < 3000; trial++) {
        memset(ma, 0, (size_t)parts * pb);
        sim_lazy_init(za, ma, parts, pb);
        unsigned pre = lcg_next(&g, 40);
        for (unsigned k = 0; k < pre; k++) {   /* a random history */
            unsigned p = lcg_next(&g, parts);
            int64_t lo = lcg_next(&g, pb), hi = lo + 1 + lcg_next(&g, 3 * SIM_LAZY_CHUNK);
            if (lcg_next(&g, 2))
                sim_lazy_touch(za, p, 1 + lcg_next(&g, parts - p), lo, hi);
            else
                sim_lazy_cover(za, p, lcg_next(&g, 2) ? lo : lo & ~(int64_t)(SIM_LAZY_CHUNK - 1),
                               hi);
        }
        if (trial % 3 == 0)   /* cells 0..2 filled in every partition (full) */
            sim_lazy_touch(za, 0, parts, 0, 3 * SIM_LAZY_CHUNK);
        memcpy(mb, ma, (size_t)parts * pb);
        *zb = *za;
        zb->mem = mb;
        int64_t q = (int64_t)lcg_next(&g, 7) - 3, p0 = (int64_t)lcg_next(&g, parts + 4) - 2;
        uint32_t n = 1 + lcg_next(&g, 20);
        int64_t lo = (int64_t)lcg_next(&g, pb + 200) - 100;
        int64_t hi = lo + (int64_t)lcg_next(&g, 2 * SIM_LAZY_CHUNK + 100);
        sim_lazy_cover_rows(za, p0, q, n, lo, hi);
        for (uint32_t j = 0; j < n && zb->left; j++) {
            int64_t p = p0 + (int64_t)j * q;
            if (p >= 0)
                sim_lazy_cover(zb, (unsigned)p, lo, hi);
        }
        lazy_equal(za, zb, ma, mb, (size_t)parts * pb, trial);
    }
    free(ma);
    free(mb);
    free(za);
    free(zb);
}

/* Byte of a linear address on side p (HBM or the core's SBUF). */
static uint8_t *ref_byte(uint8_t *hbm, uint8_t *sbuf, uint32_t pb, const isa_dap_t *p, int64_t a)
{
    if (p->space == ISA_SPACE_HBM)
        return hbm + a;
    return sbuf + (size_t)(a / PITCH) * pb + (size_t)(a % PITCH);
}

static bool ref_one_partition(const isa_dap_t *p, int64_t a)
{
    return p->space == ISA_SPACE_HBM ||
           a / PITCH == (a + (int64_t)p->step[0] * (p->count[0] - 1)) / PITCH;
}

/* The descriptor row by row on plain images: a row in one partition on
 * both sides with unit steps is one memmove, else element by element. */
static void ref_move(uint8_t *hbm, uint8_t *sbuf, uint32_t pb, const isa_dap_t *src,
                     const isa_dap_t *dst)
{
    for (uint32_t j = 0; j < src->count[1]; j++) {
        int64_t sa = (int64_t)src->addr + (int64_t)j * src->step[1];
        int64_t da = (int64_t)dst->addr + (int64_t)j * dst->step[1];
        if (ref_one_partition(src, sa) && ref_one_partition(dst, da) && src->step[0] == 4 &&
            dst->step[0] == 4) {
            memmove(ref_byte(hbm, sbuf, pb, dst, da), ref_byte(hbm, sbuf, pb, src, sa),
                    4 * (size_t)src->count[0]);
            continue;
        }
        for (uint32_t i = 0; i < src->count[0]; i++)
            memmove(ref_byte(hbm, sbuf, pb, dst, da + (int64_t)i * dst->step[0]),
                    ref_byte(hbm, sbuf, pb, src, sa + (int64_t)i * src->step[0]), 4);
    }
}

/* A random on-chip side: n1 rows one per partition stepping q partitions
 * (q in -3..3), or (rowcross) each row down n0 partitions. */
static isa_dap_t random_sb(lcg_t *g, bool rowcross, int32_t q, uint32_t *n0, uint32_t *n1)
{
    if (rowcross) {
        *n0 = 1 + lcg_next(g, 64);
        return tb_sb(lcg_next(g, 128 - *n0 + 1), 4 * lcg_next(g, 3000), F32, (int32_t)PITCH, *n0,
                     4, *n1);
    }
    uint32_t span = q ? 127 / (uint32_t)abs(q) + 1 : 128;
    if (*n1 > span)
        *n1 = span;
    uint32_t used = (*n1 - 1) * (uint32_t)abs(q);
    uint32_t p0 = lcg_next(g, 128 - used) + (q < 0 ? used : 0);
    return tb_sb(p0, 4 * lcg_next(g, 3000), F32, 4, *n0, q * (int32_t)PITCH, *n1);
}

/* Whole descriptors through the simulator against ref_move on copies of
 * the images taken before the run: HBM to SBUF into never-touched (lazy)
 * cells, the image compared after filling every cell (so bytes not
 * written must read as the sentinel); SBUF to SBUF with the destination
 * the source shifted by whole rows (rows overlap across partitions; row
 * order matters); HBM to HBM inside one tensor, rows adjacent, the
 * destination above or below the source; rows across partitions on the
 * SBUF side (the element path). */
static void test_planes_match_reference(void **state)
{
    (void)state;
    lcg_t g = { 23 };
    for (unsigned trial = 0; trial < 48; trial++) {
        unsigned kind = trial % 4;
        uint32_t n0 = 1 + lcg_next(&g, 300), n1 = 1 + lcg_next(&g, 40);
        int32_t q = (int32_t)lcg_next(&g, 7) - 3;
        tb_t b;
        tb_init(&b, 1);
        int64_t sh[1] = { 65536 };
        uint64_t a = tb_tensor(&b, "a", "input", F32, 1, sh);
        isa_dap_t src, dst;
        if (kind == 0 || kind == 3) {   /* HBM to SBUF (3: rows across partitions) */
            dst = random_sb(&g, kind == 3, q, &n0, &n1);
            src = tb_hbm(a + 4 * lcg_next(&g, 1000), F32, 4, n0, 4 * (int32_t)n0, n1);
        } else if (kind == 1) {         /* SBUF to SBUF, shifted by k rows */
            if (!q)
                q = 1;
            src = random_sb(&g, false, q, &n0, &n1);
            dst = src;
            int64_t k = (int64_t)lcg_next(&g, 5) - 2;
            int64_t p0 = (int64_t)src.addr / PITCH, plast = p0 + (int64_t)(n1 - 1) * q;
            int64_t lo = (p0 < plast ? p0 : plast) + k * q, hi = (p0 > plast ? p0 : plast) + k * q;
            int64_t shift = k * q * (int64_t)PITCH;   /* whole rows, or some bytes in place */
            if (k == 0 || lo < 0 || hi > 127)
                shift = 4 * ((int64_t)lcg_next(&g, 9) - 4);
            dst.addr = (int64_t)src.addr + shift >= 0 ? (uint64_t)((int64_t)src.addr + shift)
                                                      : src.addr;
        } else {                        /* HBM to HBM, one tensor */
            n0 = 1 + lcg_next(&g, 64);
            uint64_t s0 = a + 4 * (1000 + lcg_next(&g, 1000));
            uint64_t d0 = s0 + 4 * lcg_next(&g, 2 * n0 + 1) - 4 * n0;
            src = tb_hbm(s0, F32, 4, n0, 4 * (int32_t)n0, n1);
            dst = tb_hbm(d0, F32, 4, n0, 4 * (int32_t)n0, n1);
        }
        tb_add(&b, 0, TB_SP, tb_dma(dst, src, 0));
        tb_add(&b, 0, TB_SP, tb_trig(0, 1));
        tb_write(&b);
        sim_t *s = tb_load(&b, NULL);
        float *in = malloc(sizeof(float) * 65536);
        assert_non_null(in);
        fill_random(&g, (uint8_t *)in, sizeof(float) * 65536);
        tb_input_f32(s, "a", in, 1, sh);
        free(in);
        sim_core_t *c = &s->cores[0];
        uint32_t pb = s->t->sbuf_partition_bytes;
        size_t sbytes = (size_t)128 * pb;
        if (kind == 1) {   /* a filled image of random bytes: no lazy cells */
            sim_lazy_touch(&c->sbuf_z, 0, 128, 0, pb);
            fill_random(&g, c->sbuf, sbytes);
        }
        size_t hsz = a + 4 * 65536;
        uint8_t *rh = malloc(hsz), *rs = malloc(sbytes);
        assert_non_null(rh);
        assert_non_null(rs);
        memcpy(rh, s->hbm, hsz);
        if (kind == 1)
            memcpy(rs, c->sbuf, sbytes);
        else
            memset(rs, 0xFF, sbytes);   /* the sentinel every untouched byte reads as */
        ref_move(rh, rs, pb, &src, &dst);
        tpb_err_t err;
        if (sim_run(s, &err))
            fail_msg("trial %u: %s", trial, err.msg);
        sim_lazy_touch(&c->sbuf_z, 0, 128, 0, pb);
        if (memcmp(rh, s->hbm, hsz) || memcmp(rs, c->sbuf, sbytes))
            fail_msg("trial %u (kind %u, %u x %u, q %d): memory differs from row by row", trial,
                     kind, n1, n0, q);
        free(rh);
        free(rs);
        sim_free(s);
        tb_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_rows_equals_row_loop),
        cmocka_unit_test(test_lazy_cover_rows_equals_loop),
        cmocka_unit_test(test_planes_match_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
