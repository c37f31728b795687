/* Start-up and write-back of `tpb sim` without extra copies (docs/performance.md,
 * "Start-up"): HBM gets its 0xFF sentinel everywhere except the ranges of
 * inputs that no other tensor shares; such an input is read from its .npy
 * straight into HBM, and one never bound is filled before the run; outputs
 * are written from HBM after their header.  Every observable byte must be
 * what the plain path gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fileio.h"
#include "lazy.h"
#include "sim_int.h"
#include "sim_testlib.h"

#define F32 ISA_DT_FP32
#define PITCH ISA_DMA_PARTITION_PITCH

static bool all_ff(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0xFF)
            return false;
    return true;
}

static void write_npy(const char *path, unsigned dtype, int ndim, const int64_t *shape,
                      const void *data)
{
    npy_array_t a;
    tpb_err_t err;
    assert_int_equal(npy_alloc(&a, dtype, ndim, shape, &err), 0);
    memcpy(a.data, data, a.count * isa_dtype_size(dtype));
    assert_int_equal(npy_write(path, &a, &err), 0);
    npy_free(&a);
}

/* x -> SBUF -> out; y is an input the kernel never reads; w is an input
 * sharing its bytes with output o2 (so it is filled at load) */
static void build(tb_t *b, uint64_t *ax, uint64_t *ay, uint64_t *aw)
{
    tb_init(b, 1);
    int64_t sh[2] = { 4, 16 }, sy[1] = { 8 };
    *ax = tb_tensor(b, "x", "input", F32, 2, sh);
    uint64_t o = tb_tensor(b, "out", "output", F32, 2, sh);
    *ay = tb_tensor(b, "y", "input", F32, 1, sy);
    uint64_t o2 = tb_tensor(b, "o2", "output", F32, 1, sy);
    tb_tensor(b, "w", "input", F32, 1, sy);
    b->tensors[b->ntensors - 1].addr = *aw = o2 + 8; /* overlaps o2's second half */
    tb_add(b, 0, TB_SP, tb_dma(tb_sb(0, 128, F32, 4, 16, PITCH, 4), tb_hbm(*ax, F32, 4, 16, 64, 4), 2));
    isa_inst_t t1 = tb_trig(2, 1);
    tb_upd(&t1, 5, ISA_SEMOP_SEM_INC, 0, false);
    tb_add(b, 0, TB_SP, t1);
    isa_inst_t d2 = tb_dma(tb_hbm(o, F32, 4, 16, 64, 4), tb_sb(0, 128, F32, 4, 16, PITCH, 4), 3);
    tb_add(b, 0, TB_ACT, d2);
    isa_inst_t t2 = tb_trig(3, 1);
    tb_wait(&t2, 5, 1);
    tb_add(b, 0, TB_ACT, t2);
    tb_write(b);
}

static void test_sentinel_and_direct_input(void **state)
{
    (void)state;
    tb_t b;
    uint64_t ax, ay, aw;
    build(&b, &ax, &ay, &aw);
    sim_t *s = tb_load(&b, NULL);
    /* everything but the lone inputs x and y is the sentinel after load */
    for (unsigned i = 0; i < s->ntensors; i++) {
        const sim_tensor_t *t = &s->tensors[i];
        bool lone = !strcmp(t->name, "x") || !strcmp(t->name, "y");
        assert_int_equal(t->sentinel_pending, lone);
        if (!lone)
            assert_true(all_ff(s->hbm + t->addr, t->bytes));
    }
    float x[64], y[8], bad[9] = { 0 };
    for (int i = 0; i < 64; i++)
        x[i] = (float)i * 0.5f - 7.0f;
    for (int i = 0; i < 8; i++)
        y[i] = (float)(i * i);
    char px[600], py[600], pbad[600], od[600], po[700];
    snprintf(px, sizeof px, "%s/x.npy", b.dir);
    snprintf(py, sizeof py, "%s/y.npy", b.dir);
    snprintf(pbad, sizeof pbad, "%s/bad.npy", b.dir);
    snprintf(od, sizeof od, "%s/outdir", b.dir);
    int64_t sh[2] = { 4, 16 }, sy[1] = { 8 }, sb[1] = { 9 };
    write_npy(px, F32, 2, sh, x);
    write_npy(py, F32, 1, sy, y);
    write_npy(pbad, F32, 1, sb, bad);
    tpb_err_t err;
    /* a file of another shape: the plain path's message, nothing bound */
    assert_int_not_equal(sim_load_input_file(s, "y", pbad, &err), 0);
    assert_non_null(strstr(err.msg, "input 'y': shape (9,) does not match the tensor map's (8,)"));
    assert_non_null(strstr(err.msg, "bad.npy"));
    assert_true(s->tensors[2].sentinel_pending);
    assert_int_equal(sim_load_input_file(s, "x", px, &err), 0);
    assert_false(s->tensors[0].sentinel_pending);
    assert_memory_equal(s->hbm + ax, x, sizeof x);
    /* y never bound: the run refuses, and y's bytes are the sentinel */
    assert_int_not_equal(sim_run(s, &err), 0);
    assert_non_null(strstr(err.msg, "not supplied: y, w"));
    assert_true(all_ff(s->hbm + ay, sizeof y));
    sim_free(s);

    /* bound from files (x, y straight into HBM; w through the overlap path) */
    s = tb_load(&b, NULL);
    assert_int_equal(sim_load_input_file(s, "x", px, &err), 0);
    assert_int_equal(sim_load_input_file(s, "y", py, &err), 0);
    assert_int_equal(sim_load_input_file(s, "w", py, &err), 0);
    assert_memory_equal(s->hbm + ay, y, sizeof y);
    assert_memory_equal(s->hbm + aw, y, sizeof y);
    if (sim_run(s, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(sim_write_outputs(s, od, &err), 0);
    /* out.npy is x; o2.npy is 8 bytes of sentinel then w's first 6 values */
    npy_array_t r;
    snprintf(po, sizeof po, "%s/out.npy", od);
    assert_int_equal(npy_read(po, &r, &err), 0);
    assert_int_equal(r.ndim, 2);
    assert_memory_equal(r.data, x, sizeof x);
    npy_free(&r);
    snprintf(po, sizeof po, "%s/o2.npy", od);
    assert_int_equal(npy_read(po, &r, &err), 0);
    assert_int_equal(r.count, 8);
    assert_true(all_ff(r.data, 8));
    assert_memory_equal((uint8_t *)r.data + 8, y, 24);
    npy_free(&r);
    /* the file is exactly npy_serialize of the same array */
    uint8_t *file, *want;
    size_t flen, wlen;
    assert_int_equal(fio_read_all(po, &file, &flen, &err), 0);
    npy_array_t a = { .dtype = F32, .ndim = 1, .shape = { 8 }, .count = 8,
                      .data = s->hbm + s->tensors[3].addr };
    assert_int_equal(npy_serialize(&a, &want, &wlen, &err), 0);
    assert_int_equal(flen, wlen);
    assert_memory_equal(file, want, wlen);
    free(file);
    free(want);
    sim_free(s);
    tb_free(&b);
}

/* SBUF written by a DMA of 8 bytes into partition 3, then 64 bytes around
 * it copied out: the bytes the kernel never wrote read as the sentinel
 * (lazy.h fills the cell before the write, never after) */
static void test_lazy_sbuf_sentinel(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    int64_t s2[1] = { 2 }, s16[1] = { 16 };
    uint64_t a = tb_tensor(&b, "a", "input", F32, 1, s2);
    uint64_t o = tb_tensor(&b, "out", "output", F32, 1, s16);
    /* partition 3, bytes 4096 + [96, 160): inside one cell */
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(3, 4196, F32, 4, 2, 0, 1), tb_hbm(a, F32, 4, 2, 0, 1), 2));
    isa_inst_t t1 = tb_trig(2, 1);
    tb_upd(&t1, 5, ISA_SEMOP_SEM_INC, 0, false);
    tb_add(&b, 0, TB_SP, t1);
    tb_add(&b, 0, TB_ACT, tb_dma(tb_hbm(o, F32, 4, 16, 0, 1), tb_sb(3, 4192, F32, 4, 16, 0, 1), 3));
    isa_inst_t t2 = tb_trig(3, 1);
    tb_wait(&t2, 5, 1);
    tb_add(&b, 0, TB_ACT, t2);
    tb_write(&b);
    sim_t *s = tb_load(&b, NULL);
    float in[2] = { 1.5f, -2.25f };
    tb_input_f32(s, "a", in, 1, s2);
    tpb_err_t err;
    if (sim_run(s, &err) != 0)
        fail_msg("%s", err.msg);
    const uint8_t *out = s->hbm + o;
    assert_true(all_ff(out, 4));
    assert_memory_equal(out + 4, in, 8);
    assert_true(all_ff(out + 12, 52));
    /* only the cells used were filled: partition 3's second cell */
    assert_int_equal(s->cores[0].sbuf_z.left,
                     (uint64_t)s->cores[0].sbuf_z.nchunks * s->cores[0].sbuf_z.parts - 1);
    sim_free(s);
    tb_free(&b);
}

/* sim_lazy_touch_dap covers every byte of random 2-D patterns (steps of
 * any sign, across partitions), and a second touch never refills a cell */
static void test_lazy_dap_cover(void **state)
{
    (void)state;
    const unsigned parts = 128;
    uint8_t *mem = malloc((size_t)parts * 300000);
    assert_non_null(mem);
    uint64_t seed = 12345;
    int checked = 0;
    for (int iter = 0; iter < 4000; iter++) {
        /* 4 cells of 4 KiB; or 37 cells of 8 KiB (at most 64 per partition) */
        const uint32_t pb = iter % 2 ? 3 * SIM_LAZY_CHUNK + 512 : 300000;
        memset(mem, 0, (size_t)parts * pb);
        sim_lazy_t z;
        sim_lazy_init(&z, mem, parts, pb);
        int64_t pitch = PITCH;
        int32_t step[2];
        uint32_t count[2];
        int64_t base;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        unsigned es = 1u << ((seed >> 60) % 3);
        {
            unsigned p = (unsigned)(seed >> 33) % parts;
            base = (int64_t)p * pitch + (int64_t)((seed >> 20) % (pb - es));
            count[0] = 1 + (uint32_t)((seed >> 8) % 40);
            count[1] = 1 + (uint32_t)((seed >> 14) % 12);
            int64_t r0 = (int64_t)((seed >> 40) % 64) - 32, r1 = (int64_t)((seed >> 46) % 9) - 4;
            step[0] = (int32_t)(((seed >> 52) & 1) ? r0 * (int64_t)es : r0 * pitch / 16);
            step[1] = (int32_t)(((seed >> 53) & 1) ? r1 * pitch + r0 : r1 * 700);
        }
        bool valid = true; /* the pattern must stay inside the image, as dma.c checks */
        for (uint32_t j = 0; j < count[1] && valid; j++)
            for (uint32_t i = 0; i < count[0] && valid; i++) {
                int64_t a = base + (int64_t)i * step[0] + (int64_t)j * step[1];
                valid = a >= 0 && a / pitch < parts && a % pitch + es <= pb;
            }
        if (!valid)
            continue;
        checked++;
        sim_lazy_touch_dap(&z, base, step, count, es, pitch);
        for (uint32_t j = 0; j < count[1]; j++)
            for (uint32_t i = 0; i < count[0]; i++) {
                int64_t a = base + (int64_t)i * step[0] + (int64_t)j * step[1];
                uint8_t *e = mem + (a / pitch) * pb + a % pitch;
                if (!all_ff(e, es))
                    fail_msg("iter %d: element (%u, %u) at %lld not filled (base %lld steps %d %d "
                             "counts %u %u size %u)", iter, i, j, (long long)a, (long long)base,
                             step[0], step[1], count[0], count[1], es);
            }
        for (uint32_t j = 0; j < count[1]; j++) /* written by the kernel: must survive */
            for (uint32_t i = 0; i < count[0]; i++) {
                int64_t a = base + (int64_t)i * step[0] + (int64_t)j * step[1];
                memset(mem + (a / pitch) * pb + a % pitch, 0x11, es);
            }
        uint64_t left = z.left;
        sim_lazy_touch_dap(&z, base, step, count, es, pitch);
        assert_int_equal(z.left, left);
        for (uint32_t j = 0; j < count[1]; j++)
            for (uint32_t i = 0; i < count[0]; i++) {
                int64_t a = base + (int64_t)i * step[0] + (int64_t)j * step[1];
                assert_int_equal(mem[(a / pitch) * pb + a % pitch], 0x11);
            }
    }
    /* a column filled in every partition answers every later touch of it */
    sim_lazy_t z;
    memset(mem, 0, (size_t)parts * 300000);
    sim_lazy_init(&z, mem, parts, 300000);
    assert_int_equal(z.shift, 13);
    sim_lazy_touch(&z, 0, 128, 0, 100);
    assert_int_equal(z.full, 1);
    assert_true(all_ff(mem + 5 * 300000 + 8000, 192));
    assert_int_equal(mem[5 * 300000 + 8192], 0);
    memset(mem + 5 * 300000, 0x11, 8192);
    sim_lazy_touch(&z, 5, 1, 10, 50);
    sim_lazy_touch(&z, 0, 64, 8000, 8192);
    assert_int_equal(mem[5 * 300000 + 8000], 0x11);
    assert_int_equal(z.left, (uint64_t)128 * 37 - 128);
    free(mem);
    print_message("%d valid patterns checked\n", checked);
    assert_true(checked > 500);
}

/* DMA rows that start a fresh cell (sim_lazy_cover): 16 bytes written at the
 * start of partition 3's second cell leave it unfilled, and a later read of
 * 64 bytes there still sees the sentinel after them (the fill starts after
 * the written prefix); two 2 KiB rows fill partition 5's second cell whole
 * and it is never filled; one row past a gap (partition 7, bytes 100..116
 * of the cell) fills the cell first. */
static void test_lazy_cover_rows(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    int64_t s4[1] = { 4 }, s16[1] = { 16 }, s1k[1] = { 1024 }, s32[1] = { 32 };
    uint64_t a = tb_tensor(&b, "a", "input", F32, 1, s4);
    uint64_t w = tb_tensor(&b, "w", "input", F32, 1, s1k);
    uint64_t o = tb_tensor(&b, "out", "output", F32, 1, s16);
    uint64_t o2 = tb_tensor(&b, "o2", "output", F32, 1, s1k);
    uint64_t o3 = tb_tensor(&b, "o3", "output", F32, 1, s32);
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(3, 4096, F32, 4, 4, 0, 1), tb_hbm(a, F32, 4, 4, 0, 1), 2));
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(5, 4096, F32, 4, 512, 0, 1), tb_hbm(w, F32, 4, 512, 0, 1), 2));
    tb_add(&b, 0, TB_SP,
           tb_dma(tb_sb(5, 6144, F32, 4, 512, 0, 1), tb_hbm(w + 2048, F32, 4, 512, 0, 1), 2));
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(7, 4196, F32, 4, 4, 0, 1), tb_hbm(a, F32, 4, 4, 0, 1), 2));
    isa_inst_t t1 = tb_trig(2, 4);
    tb_upd(&t1, 5, ISA_SEMOP_SEM_INC, 0, false);
    tb_add(&b, 0, TB_SP, t1);
    tb_add(&b, 0, TB_ACT, tb_dma(tb_hbm(o, F32, 4, 16, 0, 1), tb_sb(3, 4096, F32, 4, 16, 0, 1), 3));
    tb_add(&b, 0, TB_ACT,
           tb_dma(tb_hbm(o2, F32, 4, 1024, 0, 1), tb_sb(5, 4096, F32, 4, 1024, 0, 1), 3));
    tb_add(&b, 0, TB_ACT, tb_dma(tb_hbm(o3, F32, 4, 32, 0, 1), tb_sb(7, 4096, F32, 4, 32, 0, 1), 3));
    isa_inst_t t2 = tb_trig(3, 3);
    tb_wait(&t2, 5, 1);
    tb_add(&b, 0, TB_ACT, t2);
    tb_write(&b);
    sim_t *s = tb_load(&b, NULL);
    float in[4] = { 1.5f, -2.25f, 3.0f, 7.0f }, wv[1024];
    for (int i = 0; i < 1024; i++)
        wv[i] = (float)i * 0.5f - 100.0f;
    tb_input_f32(s, "a", in, 1, s4);
    tb_input_f32(s, "w", wv, 1, s1k);
    tpb_err_t err;
    if (sim_run(s, &err) != 0)
        fail_msg("%s", err.msg);
    assert_memory_equal(s->hbm + o, in, 16);
    assert_true(all_ff(s->hbm + o + 16, 48));
    assert_memory_equal(s->hbm + o2, wv, sizeof wv);
    assert_true(all_ff(s->hbm + o3, 100));
    assert_memory_equal(s->hbm + o3 + 100, in, 16);
    assert_true(all_ff(s->hbm + o3 + 116, 12));
    const sim_lazy_t *z = &s->cores[0].sbuf_z;
    assert_int_equal(z->left, (uint64_t)z->nchunks * z->parts - 3);
    assert_int_equal(z->cov[5][1], SIM_LAZY_CHUNK); /* done by the two rows, never filled */
    assert_int_equal(z->done[5], 2);
    sim_free(s);
    tb_free(&b);
}

/* sim_lazy_cover on its own: the written prefix grows with rows that start
 * where it ends (or overlap it), a gap fills the cell, a touch fills only
 * the bytes after the prefix, and a short last cell counts as covered at
 * the image's end */
static void test_lazy_cover_unit(void **state)
{
    (void)state;
    const uint32_t pb = 2 * SIM_LAZY_CHUNK + 100;
    uint8_t *mem = calloc(4, pb);
    assert_non_null(mem);
    sim_lazy_t z;
    sim_lazy_init(&z, mem, 4, pb);
    uint64_t left = z.left;
    sim_lazy_cover(&z, 1, 0, 1000);
    memset(mem + pb, 0x22, 1000);
    sim_lazy_cover(&z, 1, 500, 3000); /* overlaps the prefix: extends it */
    memset(mem + pb + 500, 0x33, 2500);
    assert_int_equal(z.cov[1][0], 3000);
    assert_int_equal(z.left, left);
    sim_lazy_touch(&z, 1, 1, 0, 10);
    assert_int_equal(mem[pb + 499], 0x22);
    assert_int_equal(mem[pb + 2999], 0x33);
    assert_true(all_ff(mem + pb + 3000, SIM_LAZY_CHUNK - 3000));
    assert_int_equal(z.left, left - 1);
    sim_lazy_cover(&z, 2, 10, 20); /* a gap: the whole cell is filled */
    assert_true(all_ff(mem + 2 * pb, SIM_LAZY_CHUNK));
    assert_int_equal(z.left, left - 2);
    sim_lazy_cover(&z, 0, 2 * SIM_LAZY_CHUNK, pb); /* the short last cell */
    assert_int_equal(z.done[0], 4);
    assert_int_equal(mem[2 * SIM_LAZY_CHUNK], 0);
    sim_lazy_cover(&z, 3, 0, pb); /* every cell of a partition, none filled */
    assert_int_equal(z.done[3], 7);
    assert_int_equal(z.left, left - 6);
    for (uint32_t i = 0; i < pb; i++)
        assert_int_equal(mem[3 * pb + i], 0);
    free(mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sentinel_and_direct_input),
        cmocka_unit_test(test_lazy_sbuf_sentinel),
        cmocka_unit_test(test_lazy_dap_cover),
        cmocka_unit_test(test_lazy_cover_rows),
        cmocka_unit_test(test_lazy_cover_unit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
