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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_efficiency),
        cmocka_unit_test(test_single_engine_32k),
        cmocka_unit_test(test_hbm_share),
        cmocka_unit_test(test_queue_depth),
        cmocka_unit_test(test_queue_slots_in_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
