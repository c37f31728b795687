/* Simulator DMA timing against docs/timing.md: row efficiency, one engine
 * per 32 KiB, the HBM share, queue depth and the queue slots in the trace
 * (split from test_sim_dma.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cJSON.h"
#include "sim_int.h"
#include "sim_testlib.h"
#include "target.h"
#include "dma_timing_ref.h"

#define PITCH ISA_DMA_PARTITION_PITCH
#define F32 ISA_DT_FP32

/* Run a one-core program, return its cycles; busy_ns: DMA engine 0's busy
 * time from the stats JSON (NULL: not wanted). */
static uint64_t run_cycles(tb_t *b, const char *in, int ndim, const int64_t *sh, double *busy_ns)
{
    tb_write(b);
    sim_t *s = tb_load(b, NULL);
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)sh[i];
    float *v = calloc(n, sizeof *v);
    assert_non_null(v);
    tb_input_f32(s, in, v, ndim, sh);
    free(v);
    tpb_err_t err;
    if (sim_run(s, &err) != 0)
        fail_msg("%s", err.msg);
    uint64_t c = tb_cycles(s);
    if (busy_ns) {
        char *js = sim_stats_json(s);
        cJSON *root = cJSON_Parse(js);
        cJSON *core = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "cores"), 0);
        cJSON *e0 = cJSON_GetArrayItem(cJSON_GetObjectItem(core, "dma_engines"), 0);
        assert_non_null(e0);
        *busy_ns = cJSON_GetObjectItem(e0, "busy_ns")->valuedouble;
        cJSON_Delete(root);
        free(js);
    }
    sim_free(s);
    tb_free(b);
    return c;
}

/* The row efficiency table (docs/timing.md worked values). */
static void test_row_efficiency(void **state)
{
    (void)state;
    const tpb_target_t *t = trn2();
    assert_int_equal(sim_dma_row_eff_permille(t, 256), 103);
    assert_int_equal(sim_dma_row_eff_permille(t, 1024), 424);
    assert_int_equal(sim_dma_row_eff_permille(t, 1536), 618);   /* 424 + 389 / 2 */
    assert_int_equal(sim_dma_row_eff_permille(t, 2048), 813);
    assert_int_equal(sim_dma_row_eff_permille(t, 1 << 20), 1000);
    /* a 4-byte run costs what a 32-byte run costs: 32 / 0.014 milli-bytes x 1000 */
    assert_int_equal(sim_dma_row_cost(t, 4, 4), sim_dma_row_cost(t, 32, 32));
    assert_int_equal(sim_dma_row_cost(t, 8, 4), 2 * sim_dma_row_cost(t, 32, 32));
    /* 1 KiB rows take 1000/424 of the peak time */
    assert_int_equal(sim_dma_row_cost(t, 1024, 1024), (1024ull * 1000000 + 423) / 424);
}

/* DMA overview: one engine moves 32 KiB HBM->SBUF in 1416 ns (trn2).  Here
 * 4 partitions x 8 KiB rows on engine 0: busy 32768 / (23 x 0.983) ns; the
 * fixed latency comes on top of the busy time, once. */
static void test_single_engine_32k(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[2] = { 4, 2048 };
    uint64_t a = tb_tensor(&b, "a", "input", F32, 2, sh);
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(0, 0, F32, 4, 2048, PITCH, 4), tb_hbm(a, F32, 4, 2048, 8192, 4), 0));
    tb_add(&b, 0, TB_SP, tb_trig(0, 1));
    double busy = 0;
    uint64_t c = run_cycles(&b, "a", 2, sh, &busy);
    uint64_t want = data_ps(32768, 8192, 1.0);
    assert_true(fabs(busy * 1000.0 - (double)want) <= 1.0);
    assert_true(busy > 1416 * 0.9 && busy < 1416 * 1.1);   /* the published figure, +-10% */
    const tpb_target_t *t = trn2();
    uint64_t sub = (uint64_t)(2 * t->seq_issue_cycles / t->clk_ref * 1000.0 + 0.999);
    assert_int_equal(c, ref_cycles_ceil(sub + dma_ps(32768, 8192)));
}

/* 128 partitions x 32 KiB: each engine 256 KiB (11.4 us at 23 B/ns), but
 * the 4 MiB also cross the core's HBM share at 362.5 B/ns (11.57 us). */
static void test_hbm_share(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[2] = { 128, 8192 };
    uint64_t a = tb_tensor(&b, "a", "input", F32, 2, sh);
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(0, 0, F32, 4, 8192, PITCH, 128), tb_hbm(a, F32, 4, 8192, 32768, 128), 0));
    tb_add(&b, 0, TB_SP, tb_trig(0, 1));
    uint64_t c = run_cycles(&b, "a", 2, sh, NULL);
    const tpb_target_t *t = trn2();
    uint64_t sub = (uint64_t)(2 * t->seq_issue_cycles / t->clk_ref * 1000.0 + 0.999);
    uint64_t hbm = (uint64_t)ceil(4194304.0 / t->hbm_bytes_per_ns_per_core * 1000.0 - 1e-6);
    assert_true(hbm > data_ps(262144, 32768, 1.0));
    assert_int_equal(c, ref_cycles_ceil(sub + (uint64_t)(t->dma_fixed_latency_ns * 1000.0) + hbm));
}

/* One queue holds dma_queue_depth (8) transfers in flight: 9 one-row
 * transfers on 9 engines; the 9th starts when the 1st completes. */
static void test_queue_depth(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[1] = { 512 };
    uint64_t a = tb_tensor(&b, "a", "input", F32, 1, sh);
    for (unsigned i = 0; i < 9; i++)
        tb_add(&b, 0, TB_SP, tb_dma(tb_sb(8 * i, 0, F32, 4, 512, 0, 1), tb_hbm(a, F32, 4, 512, 0, 1), 0));
    for (unsigned i = 0; i < 9; i++)
        tb_add(&b, 0, TB_SP, tb_trig(0, 1));
    uint64_t c = run_cycles(&b, "a", 1, sh, NULL);
    const tpb_target_t *t = trn2();
    assert_int_equal(t->dma_queue_depth, 8);
    uint64_t sub1 = (uint64_t)(10 * t->seq_issue_cycles / t->clk_ref * 1000.0 + 0.999);
    assert_int_equal(c, ref_cycles_ceil(sub1 + 2 * dma_ps(2048, 2048)));
}


/* Transfers of one queue in flight together sit on separate trace lanes
 * (tid 100 + queue*8 + slot, named "q0 [slot]"). */
static void test_queue_slots_in_trace(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[1] = { 512 };
    uint64_t a = tb_tensor(&b, "a", "input", F32, 1, sh);
    for (unsigned i = 0; i < 3; i++)
        tb_add(&b, 0, TB_SP, tb_dma(tb_sb(8 * i, 0, F32, 4, 512, 0, 1), tb_hbm(a, F32, 4, 512, 0, 1), 0));
    for (unsigned i = 0; i < 3; i++)
        tb_add(&b, 0, TB_SP, tb_trig(0, 1));
    tb_write(&b);
    sim_options_t o;
    sim_options_default(&o);
    o.trace = true;
    sim_t *s = tb_load(&b, &o);
    float in[512] = { 0 };
    tb_input_f32(s, "a", in, 1, sh);
    tpb_err_t err;
    if (sim_run(s, &err))
        fail_msg("%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/trace.json", b.dir);
    assert_int_equal(sim_write_trace(s, path, &err), 0);
    sim_free(s);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    cJSON *root = cJSON_Parse(buf);
    assert_non_null(root);
    int lanes = 0, per_tid[3] = { 0 };
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(root, "traceEvents")) {
        const cJSON *ph = cJSON_GetObjectItem(ev, "ph"), *tid = cJSON_GetObjectItem(ev, "tid");
        if (!tid || tid->valueint < 100 || tid->valueint > 102)
            continue;
        const char *nm = cJSON_GetObjectItem(ev, "name")->valuestring;
        if (!strcmp(ph->valuestring, "M") && !strcmp(nm, "thread_name")) {
            char want[32];
            snprintf(want, sizeof want, "q0 [%d]", tid->valueint - 100);
            assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "args"), "name")->valuestring,
                                want);
            lanes++;
        } else if (!strcmp(ph->valuestring, "X")) {
            per_tid[tid->valueint - 100]++;
        }
    }
    assert_int_equal(lanes, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(per_tid[i], 1);
    cJSON_Delete(root);
    tb_free(&b);
}

/* The efficiency look-up as a walk over the curve's segments (the
 * definition; target.c finds the segment directly from the run's leading
 * zeros). */
static unsigned eff_by_walk(const tpb_target_t *t, uint64_t run)
{
    const uint16_t *e = t->dma_row_eff_permille;
    if (!e)
        return 1000;
    if (run >= (32ull << (TPB_DMA_EFF_POINTS - 1)))
        return e[TPB_DMA_EFF_POINTS - 1];
    if (run < 32)
        return e[0];
    unsigned k = 0;
    while ((32ull << (k + 1)) <= run)
        k++;
    uint64_t lo = 32ull << k;
    return (unsigned)(e[k] + (uint64_t)(e[k + 1] - e[k]) * (run - lo) / lo);
}

/* The direct segment look-up equals the walk for every run up to 2^20, at
 * and around every point of the curve, and for huge runs, on every target. */
static void test_eff_lookup_equals_walk(void **state)
{
    (void)state;
    const char *names[] = { "trn1", "trn2", "trn3" };
    for (unsigned n = 0; n < 3; n++) {
        const tpb_target_t *t = tpb_target_get(names[n]);
        assert_non_null(t);
        for (uint64_t run = 0; run <= (1u << 20); run++)
            if (tpb_dma_row_eff_permille(t, run) != eff_by_walk(t, run))
                fail_msg("%s: run %llu: %u, walk %u", names[n], (unsigned long long)run,
                         tpb_dma_row_eff_permille(t, run), eff_by_walk(t, run));
        for (unsigned k = 0; k < 64; k++)
            for (int d = -1; d <= 1; d++) {
                uint64_t run = (1ull << k) + (uint64_t)(int64_t)d;
                assert_int_equal(tpb_dma_row_eff_permille(t, run), eff_by_walk(t, run));
            }
        assert_int_equal(tpb_dma_row_eff_permille(t, UINT64_MAX), eff_by_walk(t, UINT64_MAX));
    }
}

/* Expected per-engine bytes and cost of one direct descriptor, row by row
 * and element by element as docs/timing.md charges them: a row inside one
 * partition on both sides is one run of its bytes when both sides step by
 * one element, else runs of one element; a row across partitions is
 * charged element by element; each row or element rounds on its own and
 * goes to the engine of its SBUF partition (destination first), or to
 * engine row % engines from HBM to HBM. */
typedef struct {
    uint64_t bytes[SIM_DMA_MAX_ENGINES], cost[SIM_DMA_MAX_ENGINES];
} eng_ref_t;

static unsigned ref_engine(const tpb_target_t *t, const isa_dap_t *src, int64_t sa,
                           const isa_dap_t *dst, int64_t da, uint32_t row)
{
    int64_t a = dst->space == ISA_SPACE_SBUF ? da : sa;
    if (dst->space != ISA_SPACE_SBUF && src->space != ISA_SPACE_SBUF)
        return row % t->dma_engines;
    unsigned e = (unsigned)(a / PITCH / t->dma_partitions_per_engine);
    return e < t->dma_engines ? e : t->dma_engines - 1;
}

static bool ref_one_partition(const isa_dap_t *p, int64_t a)
{
    return p->space != ISA_SPACE_SBUF || a / PITCH == (a + p->step[0] * (p->count[0] - 1)) / PITCH;
}

static void ref_charges(const tpb_target_t *t, const isa_dap_t *src, const isa_dap_t *dst,
                        eng_ref_t *r)
{
    uint32_t n0 = src->count[0];
    for (uint32_t j = 0; j < src->count[1]; j++) {
        int64_t sa = (int64_t)src->addr + (int64_t)j * src->step[1];
        int64_t da = (int64_t)dst->addr + (int64_t)j * dst->step[1];
        if (ref_one_partition(src, sa) && ref_one_partition(dst, da)) {
            uint64_t bytes = 4ull * n0;
            uint64_t run = src->step[0] == 4 && dst->step[0] == 4 ? bytes : 4;
            unsigned e = ref_engine(t, src, sa, dst, da, j);
            r->bytes[e] += bytes;
            r->cost[e] += sim_dma_row_cost(t, bytes, run);
            continue;
        }
        for (uint32_t i = 0; i < n0; i++) {
            unsigned e = ref_engine(t, src, sa + (int64_t)i * src->step[0], dst,
                                    da + (int64_t)i * dst->step[0], j);
            r->bytes[e] += 4;
            r->cost[e] += sim_dma_row_cost(t, 4, 4);
        }
    }
}

/* A random SBUF side of n1 rows of n0 elements: one row per partition
 * stepping by q in -3..3 partitions (unit or 2-element steps), or rows
 * down the partitions (each row across n0 partitions). */
static isa_dap_t random_sbuf(lcg_t *g, unsigned kind, uint32_t *n0, uint32_t *n1)
{
    if (kind == 2) {
        *n0 = 1 + lcg_next(g, 64);
        return tb_sb(lcg_next(g, 128 - *n0 + 1), 4 * lcg_next(g, 100), F32, (int32_t)PITCH, *n0,
                     4, *n1);
    }
    int32_t q = (int32_t)lcg_next(g, 7) - 3;
    uint32_t span = q ? 127 / (uint32_t)abs(q) + 1 : 128;   /* rows that fit */
    if (*n1 > span)
        *n1 = span;
    uint32_t used = (*n1 - 1) * (uint32_t)abs(q);
    uint32_t p0 = lcg_next(g, 128 - used);
    if (q < 0)
        p0 += used;
    return tb_sb(p0, 4 * lcg_next(g, 64), F32, kind == 0 ? 4 : 8, *n0, q * (int32_t)PITCH, *n1);
}

/* Random descriptor shapes (row lengths from 1 element, runs under 32 B,
 * strided rows, rows across partitions, partition steps from -3 to 3,
 * rows starting mid-engine; HBM to SBUF, SBUF to HBM, HBM to HBM): every
 * engine's bytes and busy time equal the per-row sum of the reference, in
 * timing-only and functional runs. */
static void test_uniform_rows_charge_per_row(void **state)
{
    (void)state;
    lcg_t g = { 16 };
    for (unsigned trial = 0; trial < 90; trial++) {
        tb_t b;
        tb_init(&b, 1);
        const tpb_target_t *t = &b.tgt;
        unsigned dir = trial % 3, kind = (trial / 3) % 3;
        uint32_t n0 = 1 + lcg_next(&g, trial % 2 ? 12 : 300);
        uint32_t n1 = 1 + lcg_next(&g, 40);
        isa_dap_t sb = random_sbuf(&g, kind, &n0, &n1);
        int64_t sh[2] = { n1, n0 };
        uint64_t a = tb_tensor(&b, "a", "input", F32, 2, sh);
        uint64_t o = tb_tensor(&b, "o", "output", F32, 2, sh);
        isa_dap_t ha = tb_hbm(a, F32, 4, n0, 4 * (int32_t)n0, n1);
        isa_dap_t ho = tb_hbm(o, F32, kind == 1 ? 8 : 4, kind == 1 ? (n0 + 1) / 2 : n0,
                              4 * (int32_t)n0, n1);
        isa_dap_t src = dir == 1 ? sb : ha, dst = dir == 0 ? sb : dir == 1 ? ho : ho;
        if (dir == 2)   /* HBM to HBM: the output side's shape, strided or not */
            src.count[0] = dst.count[0];
        else if (dir == 1)
            dst = tb_hbm(o, F32, 4, n0, 4 * (int32_t)n0, n1);
        tb_add(&b, 0, TB_SP, tb_dma(dst, src, 0));
        tb_add(&b, 0, TB_SP, tb_trig(0, 1));
        tb_write(&b);
        sim_options_t opt;
        sim_options_default(&opt);
        opt.timing_only = trial % 4 < 2;
        sim_t *s = tb_load(&b, &opt);
        float *in = calloc((size_t)n0 * n1, sizeof *in);
        assert_non_null(in);
        if (!opt.timing_only)
            tb_input_f32(s, "a", in, 2, sh);
        free(in);
        tpb_err_t err;
        if (sim_run(s, &err))
            fail_msg("trial %u: %s", trial, err.msg);
        eng_ref_t r = { { 0 }, { 0 } };
        ref_charges(t, &src, &dst, &r);
        for (unsigned e = 0; e < t->dma_engines; e++) {
            if (s->cores[0].dma_engine_bytes[e] != r.bytes[e] ||
                s->cores[0].dma_engine_busy_ps[e] != (r.bytes[e] ? sim_dma_cost_ps(t, r.cost[e]) : 0))
                fail_msg("trial %u (dir %u kind %u, %u x %u), engine %u: %llu bytes %llu ps, "
                         "reference %llu bytes %llu ps", trial, dir, kind, n1, n0, e,
                         (unsigned long long)s->cores[0].dma_engine_bytes[e],
                         (unsigned long long)s->cores[0].dma_engine_busy_ps[e],
                         (unsigned long long)r.bytes[e],
                         (unsigned long long)(r.bytes[e] ? sim_dma_cost_ps(t, r.cost[e]) : 0));
        }
        sim_free(s);
        tb_free(&b);
    }
}

/* Run one HBM -> SBUF descriptor; expect the issue-time bounds error. */
static void expect_dst_oob(isa_dap_t dst, const char *want)
{
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[1] = { 4096 };
    uint64_t a = tb_tensor(&b, "a", "input", F32, 1, sh);
    tb_add(&b, 0, TB_SP, tb_dma(dst, tb_hbm(a, F32, 4, dst.count[0], 0, dst.count[1]), 0));
    tb_add(&b, 0, TB_SP, tb_trig(0, 1));
    sim_options_t o;
    sim_options_default(&o);
    o.timing_only = true;
    sim_t *s = NULL;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, &o, &s, &err), -1);
    if (!strstr(err.msg, want))
        fail_msg("want \"%s\" in: %s", want, err.msg);
    sim_free(s);
    tb_free(&b);
}

/* The bounds check of a whole row pattern from its first and last rows
 * still reports the first bad row's address when only a later row is out
 * of bounds: rows down the partitions past the last one, rows stepping up
 * through negative addresses, rows inside one partition past its end. */
static void test_oob_later_row_caught(void **state)
{
    (void)state;
    tb_t tb;
    tb_init(&tb, 1);
    uint32_t pb = tb.tgt.sbuf_partition_bytes;   /* the test builder's SBUF */
    tb_free(&tb);
    /* rows at partitions 125..128: partition 128 (row 3) does not exist */
    expect_dst_oob(tb_sb(125, 64, F32, 4, 16, (int32_t)PITCH, 4),
                   "sbuf address 0x2000040 (partition 128, offset 64");
    /* the same, every other partition: row 2 at partition 128 */
    expect_dst_oob(tb_sb(124, 0, F32, 4, 16, 2 * (int32_t)PITCH, 3),
                   "(partition 128, offset 0");
    /* rows from partition 1 down: row 2 is below address 0 */
    expect_dst_oob(tb_sb(1, 8, F32, 4, 16, -(int32_t)PITCH, 3), "(partition -1, offset -262136");
    /* 64-byte rows inside partition 3 whose last one ends past the
     * partition: its highest element (offset pb - 32 + 60) is reported */
    char want[96];
    snprintf(want, sizeof want, "(partition 3, offset %u", pb + 28);
    expect_dst_oob(tb_sb(3, pb - 3 * 64 + 32, F32, 4, 16, 64, 3), want);
    /* rows in one partition with a negative row step whose last row starts
     * before offset 0 of partition 3: it crosses into partition 2 */
    expect_dst_oob(tb_sb(3, 100, F32, 4, 16, -64, 3), "(partition 2, offset");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_efficiency),
        cmocka_unit_test(test_single_engine_32k),
        cmocka_unit_test(test_hbm_share),
        cmocka_unit_test(test_queue_depth),
        cmocka_unit_test(test_queue_slots_in_trace),
        cmocka_unit_test(test_eff_lookup_equals_walk),
        cmocka_unit_test(test_uniform_rows_charge_per_row),
        cmocka_unit_test(test_oob_later_row_caught),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
