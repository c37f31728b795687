/* Memory ports two engines share (sim/port.c, docs/timing.md "Shared
 * ports"): on NeuronCore-v2 (trn1) DVE and GpSimd cannot use SBUF at the
 * same time, nor DVE and Activation PSUM (ARCH2); on NeuronCore-v3 (trn2)
 * DVE's perf mode shares a bus with GpSimd and DVE and Activation collide
 * on one PSUM bank (ARCH3).  Every expectation is a
 * comparison of runs of the same instructions (alone, together, with the
 * sharing switched off), so it follows from the mechanism, not from a
 * number copied from the simulator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim_int.h"
#include "sim_testlib.h"
#include "target.h"

#define N 512u       /* fp32 elements per partition */
#define REGION 2048u /* bytes between tiles: one N-element fp32 tile */

static isa_tap_t tile(unsigned space, unsigned r, unsigned dtype)
{
    return (isa_tap_t){ .addr = r * REGION, .dtype = (uint8_t)dtype, .space = (uint8_t)space,
                        .start = 0, .nparts = 128, .ndims = 1, .step = { 1 }, .count = { N } };
}

/* A TensorCopy from (space a, region ra) to (space b, region rb) of
 * dtype elements; regions are 2 KiB, a PSUM bank each. */
static isa_inst_t copy_dt(unsigned a, unsigned ra, unsigned b, unsigned rb, unsigned dtype)
{
    isa_inst_t in = tb_op(ISA_OP_TENSOR_COPY);
    in.f.COPY.in = tile(a, ra, dtype);
    in.f.COPY.out = tile(b, rb, dtype);
    return in;
}

static isa_inst_t copy(unsigned a, unsigned ra, unsigned b, unsigned rb)
{
    return copy_dt(a, ra, b, rb, ISA_DT_FP32);
}

enum { SB = ISA_SPACE_SBUF, PS = ISA_SPACE_PSUM };

typedef struct {
    unsigned eng;
    isa_inst_t in;
} one_t;

/* Total reference cycles of the given instructions (each on its engine,
 * independent) on `target`, with its port sharing on or off;
 * *port_wait: the port waits of engine `who`. */
static uint64_t run_on(const char *target, const one_t *v, unsigned n, bool share,
                       bool timing_only, unsigned who, uint64_t *port_wait)
{
    tb_t b;
    tb_init(&b, 1);
    b.tgt = *tpb_target_get(target);
    b.tgt.sbuf_partition_bytes = 32 * 1024;
    if (!share) {
        b.tgt.dve_pool_share_sbuf = b.tgt.dve_act_share_psum = false;
        b.tgt.dve_perf_pool_bus = b.tgt.dve_act_psum_banks = false;
    }
    for (unsigned i = 0; i < n; i++)
        tb_add(&b, 0, v[i].eng, v[i].in);
    sim_options_t o;
    sim_options_default(&o);
    o.timing_only = timing_only;
    sim_t *s;
    tpb_err_t err;
    int rc = tb_run(&b, &o, &s, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    uint64_t c = tb_cycles(s);
    sim_engine_stats_t es;
    sim_get_engine_stats(s, 0, who, &es);
    if (port_wait)
        *port_wait = es.port_wait_cycles;
    sim_free(s);
    tb_free(&b);
    return c;
}

static uint64_t run(const one_t *v, unsigned n, bool share, bool timing_only, unsigned who,
                    uint64_t *port_wait)
{
    return run_on("trn1", v, n, share, timing_only, who, port_wait);
}

static uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* One DVE cycle in reference cycles, rounded up: the most a start moved
 * to the engine's next clock edge can add. */
static uint64_t dve_edge_on(const char *target)
{
    const tpb_target_t *t = tpb_target_get(target);
    return (uint64_t)(t->clk_ref / t->clk_dve) + 1;
}

static uint64_t dve_edge(void) { return dve_edge_on("trn1"); }

/* DVE and Pool copies on different SBUF tiles: side by side without the
 * sharing; with it the later request (DVE: engines at one time step in
 * slot order, Pool first) starts when Pool is done, so the pair takes
 * Pool's time plus DVE's, and DVE's port wait is Pool's time. */
static void test_dve_pool_sbuf(void **state)
{
    (void)state;
    for (int to = 0; to < 2; to++) {
        one_t dve = { TB_DVE, copy(SB, 0, SB, 1) }, pool = { TB_POOL, copy(SB, 2, SB, 3) };
        one_t both[2] = { dve, pool };
        uint64_t td = run(&dve, 1, true, to, TB_DVE, NULL);
        uint64_t tp = run(&pool, 1, true, to, TB_POOL, NULL);
        uint64_t wait;
        assert_int_equal(run(both, 2, false, to, TB_DVE, &wait), umax(td, tp));
        assert_int_equal(wait, 0);
        uint64_t t2 = run(both, 2, true, to, TB_DVE, &wait);
        assert_true(t2 >= td + tp && t2 <= td + tp + dve_edge());
        assert_true(wait >= tp && wait <= tp + dve_edge());
    }
}

/* DVE touching no SBUF (PSUM to PSUM) does not need the SBUF port. */
static void test_dve_psum_only_overlaps_pool(void **state)
{
    (void)state;
    one_t dve = { TB_DVE, copy(PS, 0, PS, 1) }, pool = { TB_POOL, copy(SB, 2, SB, 3) };
    one_t both[2] = { dve, pool };
    uint64_t td = run(&dve, 1, true, false, TB_DVE, NULL);
    uint64_t tp = run(&pool, 1, true, false, TB_POOL, NULL);
    uint64_t wait;
    assert_int_equal(run(both, 2, true, false, TB_DVE, &wait), umax(td, tp));
    assert_int_equal(wait, 0);
}

/* DVE and Activation both reading PSUM: one after the other (Activation,
 * the lower slot, first); Activation reading SBUF only: side by side. */
static void test_dve_act_psum(void **state)
{
    (void)state;
    for (int to = 0; to < 2; to++) {
        one_t dve = { TB_DVE, copy(PS, 0, SB, 1) };
        one_t act_ps = { TB_ACT, copy(PS, 2, SB, 3) }, act_sb = { TB_ACT, copy(SB, 4, SB, 5) };
        uint64_t td = run(&dve, 1, true, to, TB_DVE, NULL);
        uint64_t ta = run(&act_ps, 1, true, to, TB_ACT, NULL);
        one_t both[2] = { dve, act_ps };
        uint64_t wait;
        uint64_t t2 = run(both, 2, true, to, TB_DVE, &wait);
        assert_int_equal(run(both, 2, false, to, TB_DVE, NULL), umax(td, ta));
        /* Activation holds the port for its occupancy, not its result
         * latency: DVE starts once Activation's engine is free */
        const tpb_target_t *t = tpb_target_get("trn1");
        uint64_t act_lat = (uint64_t)(t->act_static_overhead * t->clk_ref / t->clk_act);
        assert_true(t2 > umax(td, ta));
        assert_true(t2 + act_lat + 1 >= td + ta && t2 <= td + ta - act_lat + dve_edge() + 1);
        assert_true(wait > 0);
        one_t side[2] = { dve, act_sb };
        uint64_t ts = run(&act_sb, 1, true, to, TB_ACT, NULL);
        assert_int_equal(run(side, 2, true, to, TB_DVE, &wait), umax(td, ts));
        assert_int_equal(wait, 0);
    }
}

/* The trace gives the waiting instruction's port wait (the engine's
 * whole port wait here: one instruction waited). */
static void test_trace_names_port_wait(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    b.tgt = *tpb_target_get("trn1");
    b.tgt.sbuf_partition_bytes = 32 * 1024;
    tb_add(&b, 0, TB_DVE, copy(SB, 0, SB, 1));
    tb_add(&b, 0, TB_POOL, copy(SB, 2, SB, 3));
    sim_options_t o;
    sim_options_default(&o);
    o.trace = true;
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, &o, &s, &err), 0);
    sim_engine_stats_t es;
    sim_get_engine_stats(s, 0, TB_DVE, &es);
    assert_true(es.port_wait_cycles > 0);
    char path[300];
    snprintf(path, sizeof path, "%s/t.json", b.dir);
    assert_int_equal(sim_write_trace(s, path, &err), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    /* the instruction event's args, not the per-engine statistics */
    char want[64];
    snprintf(want, sizeof want, "\"port_wait_cycles\":%llu,",
             (unsigned long long)es.port_wait_cycles);
    const char *at = strstr(text, "\"name\":\"TensorCopy\"");
    assert_non_null(at);
    assert_non_null(strstr(text, want));
    sim_free(s);
    tb_free(&b);
}

/* trn1's PSUM port is the whole PSUM: different banks still collide. */
static void test_trn1_psum_whole(void **state)
{
    (void)state;
    one_t dve = { TB_DVE, copy(PS, 0, SB, 1) }, act = { TB_ACT, copy(PS, 1, SB, 3) };
    one_t both[2] = { dve, act };
    uint64_t wait;
    run(both, 2, true, false, TB_DVE, &wait);
    assert_true(wait > 0);
}

/* trn2 (v3): DVE and Pool work side by side unless DVE is in perf mode
 * (16-bit float, SBUF to SBUF), whose bus Pool shares: then one after the
 * other, Pool first. */
static void test_trn2_perf_bus(void **state)
{
    (void)state;
    for (int to = 0; to < 2; to++) {
        one_t pool = { TB_POOL, copy(SB, 2, SB, 3) };
        one_t d32 = { TB_DVE, copy(SB, 0, SB, 1) };
        one_t d16 = { TB_DVE, copy_dt(SB, 4, SB, 5, ISA_DT_BF16) };
        uint64_t tp = run_on("trn2", &pool, 1, true, to, TB_POOL, NULL);
        uint64_t t32 = run_on("trn2", &d32, 1, true, to, TB_DVE, NULL);
        uint64_t t16 = run_on("trn2", &d16, 1, true, to, TB_DVE, NULL);
        assert_true(t16 < t32);   /* perf mode */
        uint64_t wait;
        one_t a[2] = { d32, pool }, b[2] = { d16, pool };
        assert_int_equal(run_on("trn2", a, 2, true, to, TB_DVE, &wait), umax(t32, tp));
        assert_int_equal(wait, 0);
        uint64_t t2 = run_on("trn2", b, 2, true, to, TB_DVE, &wait);
        assert_int_equal(run_on("trn2", b, 2, false, to, TB_DVE, NULL), umax(t16, tp));
        assert_true(t2 >= t16 + tp && t2 <= t16 + tp + dve_edge_on("trn2"));
        assert_true(wait >= tp && wait <= tp + dve_edge_on("trn2"));
    }
}

/* trn2 (v3): DVE and Activation reading PSUM collide only on one bank. */
static void test_trn2_psum_banks(void **state)
{
    (void)state;
    one_t dve = { TB_DVE, copy(PS, 0, SB, 1) };
    one_t same = { TB_ACT, copy(PS, 0, SB, 3) }, other = { TB_ACT, copy(PS, 1, SB, 3) };
    uint64_t td = run_on("trn2", &dve, 1, true, false, TB_DVE, NULL);
    uint64_t ta = run_on("trn2", &other, 1, true, false, TB_ACT, NULL);
    uint64_t wait;
    one_t o[2] = { dve, other }, s2[2] = { dve, same };
    assert_int_equal(run_on("trn2", o, 2, true, false, TB_DVE, &wait), umax(td, ta));
    assert_int_equal(wait, 0);
    assert_true(run_on("trn2", s2, 2, true, false, TB_DVE, &wait) > umax(td, ta));
    assert_true(wait > 0);
}

/* The port is the other engine's: a DVE instruction after DVE's own does
 * not wait for it; PE and SP take part in none. */
static void test_own_engine(void **state)
{
    (void)state;
    one_t two[2] = { { TB_DVE, copy(SB, 0, SB, 1) }, { TB_DVE, copy(SB, 2, SB, 3) } };
    uint64_t wait;
    uint64_t shared = run(two, 2, true, false, TB_DVE, &wait);
    assert_int_equal(shared, run(two, 2, false, false, TB_DVE, NULL));
    assert_int_equal(wait, 0);
    const tpb_target_t *t1 = tpb_target_get("trn1");
    assert_false(sim_port_engine(t1, ISA_ENG_PE) || sim_port_engine(t1, ISA_ENG_SP));
    assert_true(sim_port_engine(tpb_target_get("trn2"), ISA_ENG_POOL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dve_pool_sbuf),
        cmocka_unit_test(test_dve_psum_only_overlaps_pool),
        cmocka_unit_test(test_dve_act_psum),
        cmocka_unit_test(test_trace_names_port_wait),
        cmocka_unit_test(test_trn1_psum_whole),
        cmocka_unit_test(test_trn2_perf_bus),
        cmocka_unit_test(test_trn2_psum_banks),
        cmocka_unit_test(test_own_engine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
