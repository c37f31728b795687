/* Simulator DMA: descriptors, triggers, queues, casts, accumulate, gather,
 * scatter, OOB, bounds, registers, uninitialised reads, and the DMA timing
 * formula of docs/timing.md. */
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



static void get_f32(sim_t *s, const char *name, float *out, size_t n)
{
    npy_array_t a;
    tpb_err_t err;
    if (sim_get_tensor(s, name, &a, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(a.count, n);
    memcpy(out, a.data, n * 4);
    npy_free(&a);
}

/* HBM a -> SBUF (partition per row) -> HBM out, synchronised by semaphores */
static void test_copy_roundtrip(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[2] = { 4, 16 };
    uint64_t a = tb_tensor(&b, "a", "input", F32, 2, sh);
    uint64_t o = tb_tensor(&b, "out", "output", F32, 2, sh);
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(0, 128, F32, 4, 16, PITCH, 4), tb_hbm(a, F32, 4, 16, 64, 4), 2));
    isa_inst_t t1 = tb_trig(2, 1);
    tb_upd(&t1, 5, ISA_SEMOP_SEM_INC, 0, false);
    tb_add(&b, 0, TB_SP, t1);
    isa_inst_t d2 = tb_dma(tb_hbm(o, F32, 4, 16, 64, 4), tb_sb(0, 128, F32, 4, 16, PITCH, 4), 3);
    tb_add(&b, 0, TB_ACT, d2);
    isa_inst_t t2 = tb_trig(3, 1);
    tb_wait(&t2, 5, 1);
    tb_add(&b, 0, TB_ACT, t2);
    tb_write(&b);
    sim_t *s = tb_load(&b, NULL);
    float in[64], out[64];
    for (int i = 0; i < 64; i++)
        in[i] = (float)i * 0.25f - 3.0f;
    tb_input_f32(s, "a", in, 2, sh);
    tpb_err_t err;
    if (sim_run(s, &err) != 0)
        fail_msg("%s", err.msg);
    get_f32(s, "out", out, 64);
    assert_memory_equal(in, out, sizeof in);
    /* outputs written as .npy */
    char od[600];
    snprintf(od, sizeof od, "%s/outdir", b.dir);
    assert_int_equal(sim_write_outputs(s, od, &err), 0);
    char p[700];
    snprintf(p, sizeof p, "%s/out.npy", od);
    npy_array_t r;
    assert_int_equal(npy_read(p, &r, &err), 0);
    assert_memory_equal(r.data, in, sizeof in);
    npy_free(&r);
    sim_queue_stats_t q[4];
    assert_int_equal(sim_get_queue_stats(s, 0, q, 4), 2);
    assert_int_equal(q[0].queue, 2);
    assert_int_equal(q[0].bytes, 256);
    assert_int_equal(q[0].transfers, 1);
    /* each transfer: 4 partitions on DMA engine 0 (8 partitions per engine),
     * rows of 64 bytes */
    uint64_t d = dma_ps(256, 64);
    assert_int_equal(q[0].busy_cycles, (uint64_t)llround(d * 1.2 / 1000.0));
    sim_free(s);
    tb_free(&b);
}

/* Two transfers of 2048 B each on one partition, same or different queue. */
static uint64_t two_transfers(unsigned q2, unsigned part2)
{
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[1] = { 1024 };
    uint64_t a = tb_tensor(&b, "a", "input", F32, 1, sh);
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(0, 0, F32, 4, 512, 0, 1), tb_hbm(a, F32, 4, 512, 0, 1), 0));
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(part2, 4096, F32, 4, 512, 0, 1), tb_hbm(a + 2048, F32, 4, 512, 0, 1), q2));
    tb_add(&b, 0, TB_SP, tb_trig(0, 1));
    tb_add(&b, 0, TB_SP, tb_trig(q2, 1));
    tb_write(&b);
    sim_t *s = tb_load(&b, NULL);
    float in[1024] = { 0 };
    tb_input_f32(s, "a", in, 1, sh);
    tpb_err_t err;
    if (sim_run(s, &err) != 0)
        fail_msg("%s", err.msg);
    uint64_t c = tb_cycles(s);
    sim_free(s);
    tb_free(&b);
    return c;
}

/* A 3-D descriptor (PseudoDmaDirect3d) moves what its count2 planes as
 * 2-D descriptors move, at the same cost (docs/timing.md: each plane is
 * costed as a 2-D descriptor): a[j, p, 0:32] -> t[p, j, :] for a [4, 8, 64]
 * fp32 input, as one 3-D descriptor or as 8 2-D ones, then stored flat. */
static uint64_t multidim_run(bool d3, float *out, uint64_t *busy)
{
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[3] = { 4, 8, 64 }, osh[2] = { 8, 128 };
    uint64_t a = tb_tensor(&b, "a", "input", F32, 3, sh);
    uint64_t o = tb_tensor(&b, "out", "output", F32, 2, osh);
    unsigned nd = d3 ? 1 : 8;
    for (unsigned p = 0; p < nd; p++) {
        isa_inst_t d = tb_dma(tb_sb(p, 0, F32, 4, 32, 128, 4), tb_hbm(a + p * 256, F32, 4, 32, 2048, 4), 2);
        if (d3) {
            d.op = ISA_OP_DMA_DIRECT3D;
            d.f.D3DESC.count2 = 8;
            d.f.D3DESC.src_step2 = 256;
            d.f.D3DESC.dst_step2 = PITCH;
        }
        tb_add(&b, 0, TB_SP, d);
    }
    isa_inst_t t1 = tb_trig(2, nd);
    tb_upd(&t1, 5, ISA_SEMOP_SEM_INC, 0, false);
    tb_add(&b, 0, TB_SP, t1);
    tb_add(&b, 0, TB_ACT, tb_dma(tb_hbm(o, F32, 4, 128, 512, 8), tb_sb(0, 0, F32, 4, 128, PITCH, 8), 3));
    isa_inst_t t2 = tb_trig(3, 1);
    tb_wait(&t2, 5, 1);
    tb_add(&b, 0, TB_ACT, t2);
    tb_write(&b);
    sim_t *s = tb_load(&b, NULL);
    float in[2048];
    for (int i = 0; i < 2048; i++)
        in[i] = (float)i;
    tb_input_f32(s, "a", in, 3, sh);
    tpb_err_t err;
    if (sim_run(s, &err) != 0)
        fail_msg("%s", err.msg);
    get_f32(s, "out", out, 1024);
    sim_queue_stats_t q[4];
    assert_int_equal(sim_get_queue_stats(s, 0, q, 4), 2);
    assert_int_equal(q[0].queue, 2);
    assert_int_equal(q[0].bytes, 4096);
    *busy = q[0].busy_cycles;
    uint64_t c = tb_cycles(s);
    sim_free(s);
    tb_free(&b);
    return c;
}

static void test_multidim_descriptor(void **state)
{
    (void)state;
    float o3[1024], o2[1024];
    uint64_t b3, b2;
    uint64_t c3 = multidim_run(true, o3, &b3), c2 = multidim_run(false, o2, &b2);
    for (int p = 0; p < 8; p++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 32; k++)
                assert_true(o3[p * 128 + j * 32 + k] == (float)(j * 512 + p * 64 + k));
    assert_memory_equal(o3, o2, sizeof o3);
    /* same transfer time: partitions 0..7 on engine 0, 32 rows of 128 B */
    assert_int_equal(b3, b2);
    assert_int_equal(b3, (uint64_t)llround(dma_ps(4096, 128) * trn2()->clk_ref / 1000.0));
    /* the 3-D form issues 7 descriptor instructions fewer */
    assert_true(c3 < c2);
}

static void test_queue_ordering(void **state)
{
    (void)state;
    const tpb_target_t *t = trn2();
    /* triggers complete at 3 and 4 issue slots: submit times in ps */
    uint64_t sub1 = (uint64_t)(3 * t->seq_issue_cycles / t->clk_ref * 1000.0 + 0.999);
    uint64_t sub2 = (uint64_t)(4 * t->seq_issue_cycles / t->clk_ref * 1000.0 + 0.999);
    uint64_t D = dma_ps(2048, 2048), data = D - dma_ps(0, 1);
    /* same queue, same DMA engine: both in flight (queue depth), so the
     * second fixed latency overlaps the first data phase; the engine runs
     * one transfer's data at a time */
    assert_int_equal(two_transfers(0, 0), ref_cycles_ceil(sub1 + D + data));
    /* same queue, different engines (partition 8 -> engine 1): concurrent,
     * completion in order */
    assert_int_equal(two_transfers(0, 8), ref_cycles_ceil(sub2 + D));
    /* different queues on different DMA engines: concurrent */
    assert_int_equal(two_transfers(1, 8), ref_cycles_ceil(sub2 + D));
    /* different queues sharing DMA engine 0: the fixed latency overlaps, data does not */
    assert_int_equal(two_transfers(1, 1), ref_cycles_ceil(sub1 + D + data));
}

static void test_partition_spread_formula(void **state)
{
    (void)state;
    /* 128 partitions x 64 B: 16 engines x 8 partitions x 64 B = 512 B each */
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[2] = { 128, 16 };
    uint64_t a = tb_tensor(&b, "a", "input", F32, 2, sh);
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(0, 0, F32, 4, 16, PITCH, 128), tb_hbm(a, F32, 4, 16, 64, 128), 0));
    tb_add(&b, 0, TB_SP, tb_trig(0, 1));
    tb_write(&b);
    sim_t *s = tb_load(&b, NULL);
    float in[2048] = { 0 };
    tb_input_f32(s, "a", in, 2, sh);
    tpb_err_t err;
    assert_int_equal(sim_run(s, &err), 0);
    const tpb_target_t *t = trn2();
    uint64_t sub = (uint64_t)(2 * t->seq_issue_cycles / t->clk_ref * 1000.0 + 0.999);
    assert_int_equal(tb_cycles(s), ref_cycles_ceil(sub + dma_ps(512, 64)));
    sim_free(s);
    tb_free(&b);
}

/* One 32x32 bf16 DMA transpose into SBUF partition 0 (2048 bytes), from a
 * dense HBM block or (src_sbuf) a dense block of SBUF partition 1; hw = 0
 * removes the hardware transpose.  Returns the reference cycles. */
static uint64_t transpose_cycles(bool src_sbuf, bool hw)
{
    tb_t b;
    tb_init(&b, 1);
    if (!hw)
        b.tgt.dma_transpose_hbm_permille = b.tgt.dma_transpose_sbuf_permille = 0;
    int64_t sh[2] = { 32, 32 };
    uint64_t a = tb_tensor(&b, "a", "input", ISA_DT_BF16, 2, sh);
    /* dst[c][r] = src[r][c]: dst steps 64 bytes along a row, src 2 bytes */
    isa_dap_t src = src_sbuf ? tb_sb(1, 0, ISA_DT_BF16, 2, 32, 64, 32)
                             : tb_hbm(a, ISA_DT_BF16, 2, 32, 64, 32);
    isa_inst_t d = tb_dma(tb_sb(0, 0, ISA_DT_BF16, 64, 32, 2, 32), src, 0);
    d.f.DDESC.transpose = 1;
    tb_add(&b, 0, TB_SP, d);
    isa_inst_t tr = tb_trig(0, 1);
    tr.f.DTRIG.transpose_op = ISA_XPOSE_XZYW;
    tb_add(&b, 0, TB_SP, tr);
    tb_write(&b);
    sim_options_t o;
    sim_options_default(&o);
    o.timing_only = true;   /* the SBUF source is never written */
    sim_t *s = tb_load(&b, &o);
    tpb_err_t err;
    assert_int_equal(sim_run(s, &err), 0);
    uint64_t cyc = tb_cycles(s);
    sim_free(s);
    tb_free(&b);
    return cyc;
}

/* Hardware DMA transpose (docs/timing.md worked example): both sides are one
 * dense 2048-byte block in one partition, so the run is 2048 bytes
 * (eff 81.3%) at 90% of the engine bandwidth from HBM, 50% from SBUF:
 * 2048 / (23 x 0.813 x 0.9) = 121.7 ns and 2048 / (23 x 0.813 x 0.5) =
 * 219.0 ns after the 1300 ns latency.  Without hardware transpose (trn1)
 * every 2-byte element is its own run, costed as a 32-byte run:
 * 1024 x 32 / (23 x 0.014) = 101 765 ns. */
static void test_transpose_timing(void **state)
{
    (void)state;
    const tpb_target_t *t = trn2();
    assert_int_equal(t->dma_transpose_hbm_permille, 900);
    assert_int_equal(t->dma_transpose_sbuf_permille, 500);
    assert_int_equal(tpb_target_get("trn1")->dma_transpose_hbm_permille, 0);
    uint64_t sub = (uint64_t)(2 * t->seq_issue_cycles / t->clk_ref * 1000.0 + 0.999);
    uint64_t lat = (uint64_t)(t->dma_fixed_latency_ns * 1000.0);
    assert_int_equal(transpose_cycles(false, true), ref_cycles_ceil(sub + lat + data_ps(2048, 2048, 0.9)));
    assert_int_equal(transpose_cycles(true, true), ref_cycles_ceil(sub + lat + data_ps(2048, 2048, 0.5)));
    assert_int_equal(transpose_cycles(false, false),
                     ref_cycles_ceil(sub + lat + 1024 * data_ps(32, 32, 1.0)));
    /* the worked example's figures, to the nanosecond */
    assert_int_equal((uint64_t)(data_ps(2048, 2048, 0.9) / 1000), 121);
    assert_int_equal((uint64_t)(data_ps(2048, 2048, 0.5) / 1000), 219);
}

/* The trigger's transpose_op (TransposeOps, seed 002 setTransposeOp):
 * XZYW (11) and the descriptors' CopyMode transpose bit must agree; no other
 * code can be encoded. */
static int transpose_op_run(unsigned op, bool desc_transpose, tpb_err_t *err)
{
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[2] = { 32, 32 };
    uint64_t a = tb_tensor(&b, "a", "input", ISA_DT_BF16, 2, sh);
    isa_inst_t d = tb_dma(tb_sb(0, 0, ISA_DT_BF16, 64, 32, 2, 32),
                          tb_hbm(a, ISA_DT_BF16, 2, 32, 64, 32), 0);
    d.f.DDESC.transpose = desc_transpose;
    tb_add(&b, 0, TB_SP, d);
    isa_inst_t tr = tb_trig(0, 1);
    tr.f.DTRIG.transpose_op = op;
    tb_add(&b, 0, TB_SP, tr);
    sim_options_t o;
    sim_options_default(&o);
    o.timing_only = true;
    sim_t *s;
    int rc = tb_run(&b, &o, &s, err);
    sim_free(s);
    tb_free(&b);
    return rc;
}

static void test_transpose_op(void **state)
{
    (void)state;
    tpb_err_t err;
    assert_int_equal(transpose_op_run(ISA_XPOSE_XZYW, true, &err), 0);
    assert_int_equal(transpose_op_run(ISA_XPOSE_NONE, false, &err), 0);
    assert_int_equal(transpose_op_run(ISA_XPOSE_NONE, true, &err), -1);
    assert_non_null(strstr(err.msg, "a transpose needs xzyw"));
    assert_int_equal(transpose_op_run(ISA_XPOSE_XZYW, false, &err), -1);
    assert_non_null(strstr(err.msg, "is not a transpose (transpose = 0)"));
    /* other codes cannot be encoded (enum XPOSE) */
    isa_inst_t tr;
    memset(&tr, 0, sizeof tr);
    tr.op = ISA_OP_DMA_TRIGGER;
    tr.f.DTRIG.ndesc = 1;
    tr.f.DTRIG.transpose_op = 5;
    uint8_t bytes[ISA_BUNDLE_BYTES];
    isa_err_t ie;
    assert_int_not_equal(isa_encode(&tr, bytes, &ie), ISA_OK);
    assert_non_null(strstr(ie.msg, "transpose_op"));
}

static void test_cast(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[1] = { 6 };
    uint64_t a = tb_tensor(&b, "a", "input", F32, 1, sh);
    uint64_t o = tb_tensor(&b, "out", "output", F32, 1, sh);
    uint64_t oi = tb_tensor(&b, "outi", "output", ISA_DT_INT32, 1, sh);
    /* fp32 -> bf16 in SBUF -> fp32; fp32 -> int32 */
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(0, 0, ISA_DT_BF16, 2, 6, 0, 1), tb_hbm(a, F32, 4, 6, 0, 1), 0));
    tb_add(&b, 0, TB_SP, tb_dma(tb_hbm(o, F32, 4, 6, 0, 1), tb_sb(0, 0, ISA_DT_BF16, 2, 6, 0, 1), 0));
    tb_add(&b, 0, TB_SP, tb_dma(tb_hbm(oi, ISA_DT_INT32, 4, 6, 0, 1), tb_hbm(a, F32, 4, 6, 0, 1), 0));
    tb_add(&b, 0, TB_SP, tb_trig(0, 1));
    tb_add(&b, 0, TB_SP, tb_trig(0, 2));
    tb_write(&b);
    sim_t *s = tb_load(&b, NULL);
    /* bf16 keeps 8 significant bits: 1+2^-8 ties to 1, 1+3*2^-8 ties to 1+2^-6 */
    float in[6] = { 1.0f, 1.0f + 1.0f / 256, 1.0f + 3.0f / 256, -2.5f, 3.5f, 1.0f + 1.0f / 128 };
    tb_input_f32(s, "a", in, 1, sh);
    tpb_err_t err;
    if (sim_run(s, &err) != 0)
        fail_msg("%s", err.msg);
    float out[6];
    get_f32(s, "out", out, 6);
    float want[6] = { 1.0f, 1.0f, 1.0f + 1.0f / 64, -2.5f, 3.5f, 1.0f + 1.0f / 128 };
    assert_memory_equal(out, want, sizeof want);
    npy_array_t ai;
    assert_int_equal(sim_get_tensor(s, "outi", &ai, &err), 0);
    int32_t wi[6] = { 1, 1, 1, -2, 4, 1 }; /* round half to even */
    assert_memory_equal(ai.data, wi, sizeof wi);
    npy_free(&ai);
    sim_free(s);
    tb_free(&b);
}

static void test_accumulate_and_registers(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[1] = { 8 };
    uint64_t a = tb_tensor(&b, "a", "input", F32, 1, sh);
    uint64_t o = tb_tensor(&b, "out", "output", F32, 1, sh);
    /* out = a; out += a (same queue: in order); then out[0..3] += a[4..7] via src_reg=4 elements */
    tb_add(&b, 0, TB_SP, tb_dma(tb_hbm(o, F32, 4, 8, 0, 1), tb_hbm(a, F32, 4, 8, 0, 1), 0));
    isa_inst_t acc = tb_dma(tb_hbm(o, F32, 4, 8, 0, 1), tb_hbm(a, F32, 4, 8, 0, 1), 0);
    acc.f.DDESC.compute = ISA_DMAOP_ADD;
    tb_add(&b, 0, TB_SP, acc);
    tb_add(&b, 0, TB_SP, tb_reg(ISA_OP_REG_SET, 9, 4));
    isa_inst_t dyn = tb_dma(tb_hbm(o, F32, 4, 4, 0, 1), tb_hbm(a, F32, 4, 4, 0, 1), 0);
    dyn.f.DDESC.compute = ISA_DMAOP_ADD;
    dyn.f.DDESC.src_reg = 9;
    tb_add(&b, 0, TB_SP, dyn);
    tb_add(&b, 0, TB_SP, tb_trig(0, 1)); /* submits only the last one queued? no: ndesc counts back */
    tb_write(&b);
    /* the trigger above submits the last descriptor only; the first two stay
     * queued -> run with a trigger for all three instead */
    b.n[0][TB_SP]--;
    tb_add(&b, 0, TB_SP, tb_trig(0, 3));
    tb_write(&b);
    sim_t *s = tb_load(&b, NULL);
    float in[8] = { 1, 2, 3, 4, 10, 20, 30, 40 };
    tb_input_f32(s, "a", in, 1, sh);
    tpb_err_t err;
    if (sim_run(s, &err) != 0)
        fail_msg("%s", err.msg);
    float out[8];
    get_f32(s, "out", out, 8);
    float want[8] = { 12, 24, 36, 48, 20, 40, 60, 80 };
    assert_memory_equal(out, want, sizeof want);
    sim_free(s);
    tb_free(&b);
}

static void test_untriggered_warning_and_trigger_errors(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[1] = { 8 };
    uint64_t a = tb_tensor(&b, "a", "scratch", F32, 1, sh);
    tb_add(&b, 0, TB_SP, tb_dma(tb_hbm(a, F32, 4, 4, 0, 1), tb_hbm(a + 16, F32, 4, 4, 0, 1), 1));
    tb_add(&b, 0, TB_SP, tb_dma(tb_hbm(a, F32, 4, 4, 0, 1), tb_hbm(a + 16, F32, 4, 4, 0, 1), 1));
    tb_add(&b, 0, TB_SP, tb_trig(1, 1));
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    sim_summary_t sum;
    sim_get_summary(s, &sum);
    assert_int_equal(sum.warnings, 1);
    assert_non_null(strstr(sim_warning(s, 0), "queue 1: 1 DMA descriptor(s) queued but never triggered"));
    sim_free(s);
    /* a consumer waiting for a transfer that was never triggered: deadlock
     * report points at the queued descriptors */
    b.n[0][TB_SP]--;
    isa_inst_t w = tb_op(ISA_OP_NOP);
    tb_wait(&w, 4, 1);
    tb_add(&b, 0, TB_PE, w);
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "deadlock"));
    assert_non_null(strstr(err.msg, "core 0 PE instruction 0 (pc 0) Nop: waits for S4 >= 1"));
    assert_non_null(strstr(err.msg, "note: core 0 queue 1 has 2 DMA descriptor(s) queued but never triggered"));
    sim_free(s);
    b.n[0][TB_PE]--;
    tb_add(&b, 0, TB_SP, tb_trig(1, 3));
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "core 0 SP instruction 2 (pc 2) DmaTrigger: ndesc 3 but only 2"));
    sim_free(s);
    tb_free(&b);
}

/* idx (int32) comes from HBM through SBUF partition 0; gather table rows */
static sim_t *run_indirect(tb_t *b, bool scatter, unsigned oob, unsigned compute, const int32_t *idx,
                           tpb_err_t *err, int *rc)
{
    tb_init(b, 1);
    int64_t tsh[2] = { 8, 4 }, ish[1] = { 5 }, rsh[2] = { 5, 4 };
    uint64_t tab = tb_tensor(b, "table", "input", F32, 2, tsh);
    uint64_t ix = tb_tensor(b, "idx", "input", ISA_DT_INT32, 1, ish);
    uint64_t rows = tb_tensor(b, "rows", "input", F32, 2, rsh);
    uint64_t out = tb_tensor(b, "out", "output", F32, 2, scatter ? tsh : rsh);
    /* idx -> SBUF p0 offset 0; initialise out (scatter: from table) */
    tb_add(b, 0, TB_SP, tb_dma(tb_sb(0, 0, ISA_DT_INT32, 4, 5, 0, 1), tb_hbm(ix, ISA_DT_INT32, 4, 5, 0, 1), 0));
    if (scatter)
        tb_add(b, 0, TB_SP, tb_dma(tb_hbm(out, F32, 4, 32, 0, 1), tb_hbm(tab, F32, 4, 32, 0, 1), 0));
    else
        tb_add(b, 0, TB_SP, tb_dma(tb_hbm(out, F32, 4, 20, 0, 1), tb_hbm(rows, F32, 4, 20, 0, 1), 0));
    isa_inst_t t = tb_trig(0, 2);
    tb_upd(&t, 1, ISA_SEMOP_SEM_INC, 0, false);
    tb_add(b, 0, TB_SP, t);
    isa_inst_t g = tb_op(ISA_OP_DMA_INDIRECT2D);
    if (scatter) {
        g.f.DIND.src = tb_hbm(rows, F32, 4, 4, 16, 5);
        g.f.DIND.dst = tb_hbm(out, F32, 4, 4, 16, 8);
    } else {
        g.f.DIND.src = tb_hbm(tab, F32, 4, 4, 16, 8);
        g.f.DIND.dst = tb_hbm(out, F32, 4, 4, 16, 5);
    }
    g.f.DIND.idx = (isa_tap_t){ .addr = 0, .dtype = ISA_DT_INT32, .space = ISA_SPACE_SBUF,
                                .start = 0, .nparts = 1, .ndims = 1, .step = { 1 }, .count = { 5 } };
    g.f.DIND.queue = 4;
    g.f.DIND.scatter = scatter;
    g.f.DIND.oob = oob;
    g.f.DIND.compute = compute;
    tb_wait(&g, 1, 1);
    tb_add(b, 0, TB_SP, g);
    tb_add(b, 0, TB_SP, tb_trig(4, 1));
    tb_write(b);
    sim_t *s = tb_load(b, NULL);
    float tv[32], rv[20];
    for (int i = 0; i < 32; i++)
        tv[i] = (float)(100 + i);
    for (int i = 0; i < 20; i++)
        rv[i] = (float)(i + 1) * 0.5f;
    tb_input_f32(s, "table", tv, 2, tsh);
    tb_input_f32(s, "rows", rv, 2, rsh);
    npy_array_t ia;
    assert_int_equal(npy_alloc(&ia, ISA_DT_INT32, 1, ish, err), 0);
    memcpy(ia.data, idx, 5 * 4);
    assert_int_equal(sim_set_input(s, "idx", &ia, err), 0);
    npy_free(&ia);
    *rc = sim_run(s, err);
    return s;
}

static void test_gather_with_skip(void **state)
{
    (void)state;
    tb_t b;
    tpb_err_t err;
    int rc;
    int32_t idx[5] = { 3, 0, 9, 7, -1 };
    sim_t *s = run_indirect(&b, false, ISA_OOB_SKIP, ISA_DMAOP_BYPASS, idx, &err, &rc);
    if (rc)
        fail_msg("%s", err.msg);
    float out[20];
    get_f32(s, "out", out, 20);
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 4; i++) {
            /* out-of-range rows keep what was there (rows input) */
            float want = (idx[j] >= 0 && idx[j] < 8) ? (float)(100 + idx[j] * 4 + i)
                                                      : (float)(j * 4 + i + 1) * 0.5f;
            assert_true(out[j * 4 + i] == want);
        }
    sim_free(s);
    tb_free(&b);
}

static void test_gather_oob_error(void **state)
{
    (void)state;
    tb_t b;
    tpb_err_t err;
    int rc;
    int32_t idx[5] = { 3, 0, 8, 7, 1 };
    sim_t *s = run_indirect(&b, false, ISA_OOB_ERROR, ISA_DMAOP_BYPASS, idx, &err, &rc);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err.msg, "index 8 (idx element 2) is out of range [0, 8)"));
    assert_non_null(strstr(err.msg, "oob=error"));
    assert_non_null(strstr(err.msg, "core 0 SP instruction 4 (pc 4) DmaTrigger: transfer on queue 4, descriptor PseudoDmaIndirect2d at pc 3"));
    sim_free(s);
    tb_free(&b);
}

static void test_scatter_and_scatter_add(void **state)
{
    (void)state;
    tb_t b;
    tpb_err_t err;
    int rc;
    int32_t idx[5] = { 6, 1, 6, 20, 2 };
    for (int add = 0; add < 2; add++) {
        sim_t *s = run_indirect(&b, true, ISA_OOB_SKIP, add ? ISA_DMAOP_ADD : ISA_DMAOP_BYPASS, idx,
                                &err, &rc);
        if (rc)
            fail_msg("%s", err.msg);
        float out[32], want[32];
        for (int i = 0; i < 32; i++)
            want[i] = (float)(100 + i);
        for (int j = 0; j < 5; j++) {
            if (idx[j] < 0 || idx[j] >= 8)
                continue;
            for (int i = 0; i < 4; i++) {
                float v = (float)(j * 4 + i + 1) * 0.5f;
                if (add)
                    want[idx[j] * 4 + i] += v;
                else
                    want[idx[j] * 4 + i] = v;
            }
        }
        get_f32(s, "out", out, 32);
        assert_memory_equal(out, want, sizeof want);
        sim_free(s);
        tb_free(&b);
    }
}

static void test_bounds_violations(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[1] = { 16 };
    uint64_t a = tb_tensor(&b, "a", "scratch", F32, 1, sh);
    tb_add(&b, 0, TB_SP, tb_op(ISA_OP_NOP));
    isa_inst_t r = tb_dma(tb_sb(0, 0, F32, 4, 16, 0, 1), tb_hbm(a + 8, F32, 4, 16, 0, 1), 0);
    tb_add(&b, 0, TB_SP, r);
    sim_t *s;
    tpb_err_t err;
    /* statically known: refused at load, as the read leaves tensor a
     * (sim/hbmcheck.c) */
    tb_write(&b);
    sim_options_t opt;
    sim_options_default(&opt);
    opt.target = &b.tgt;
    assert_int_equal(sim_load(b.dir, &opt, &s, &err), -1);
    assert_null(s);
    assert_non_null(strstr(err.msg, "SP.bin: core 0 SP instruction 1 (pc 1) PseudoDmaDirect2d: "
                                    "operand src reads HBM bytes [8, 72), which is not inside a "
                                    "tensor of tensor-map.json"));
    assert_non_null(strstr(err.msg, "nearest tensor 'a' (scratch) declares HBM bytes [0, 64)"));
    /* with a register offset (r0 = 0) the address is known only at run
     * time: the load-time audit skips it, the issue-time bounds check fires */
    b.n[0][TB_SP]--;
    r.f.DDESC.src_reg = 0;
    tb_add(&b, 0, TB_SP, r);
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "core 0 SP instruction 1 (pc 1) PseudoDmaDirect2d: operand src: HBM address"));
    assert_non_null(strstr(err.msg, "outside HBM (64 bytes)"));
    sim_free(s);

    /* SBUF: offset past the partition size */
    b.n[0][TB_SP]--;
    uint32_t pb = b.tgt.sbuf_partition_bytes;
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(3, pb - 8, F32, 4, 16, 0, 1), tb_hbm(a, F32, 4, 16, 0, 1), 0));
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "operand dst: sbuf address"));
    assert_non_null(strstr(err.msg, "partition 3"));
    assert_non_null(strstr(err.msg, "outside sbuf of core 0"));
    sim_free(s);

    /* partition 128 does not exist */
    b.n[0][TB_SP]--;
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(0, 0, F32, 4, 4, PITCH, 4), tb_hbm(a, F32, 4, 4, 16, 4), 0));
    b.prog[0][TB_SP][1].f.DDESC.dst.addr = 126 * PITCH;
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "partition 128"));
    sim_free(s);

    /* element counts must match; a remote core that does not exist */
    b.n[0][TB_SP]--;
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(0, 0, F32, 4, 4, 0, 1), tb_hbm(a, F32, 4, 5, 0, 1), 0));
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "element counts differ"));
    sim_free(s);
    b.n[0][TB_SP]--;
    r = tb_dma(tb_sb(0, 0, F32, 4, 4, 0, 1), tb_hbm(a, F32, 4, 4, 0, 1), 0);
    r.f.DDESC.dst.core = 1;
    tb_add(&b, 0, TB_SP, r);
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "core 1 owns the sbuf side"));
    sim_free(s);
    /* transpose needs 2- or 4-byte elements */
    b.n[0][TB_SP]--;
    r = tb_dma(tb_sb(0, 0, ISA_DT_INT8, 1, 4, 0, 1), tb_hbm(a, ISA_DT_INT8, 1, 4, 0, 1), 0);
    r.f.DDESC.transpose = 1;
    tb_add(&b, 0, TB_SP, r);
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "transpose needs 2- or 4-byte"));
    sim_free(s);
    /* negative register offset */
    b.n[0][TB_SP]--;
    tb_add(&b, 0, TB_SP, tb_reg(ISA_OP_REG_SET, 3, -100));
    r = tb_dma(tb_sb(0, 0, F32, 4, 4, 0, 1), tb_hbm(a, F32, 4, 4, 0, 1), 0);
    r.f.DDESC.src_reg = 3;
    tb_add(&b, 0, TB_SP, r);
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "instruction 2 (pc 2) PseudoDmaDirect2d: operand src: HBM address -400"));
    sim_free(s);
    tb_free(&b);
}

static void test_check_uninit(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[1] = { 16 };
    uint64_t a = tb_tensor(&b, "scr", "scratch", F32, 1, sh);
    uint64_t o = tb_tensor(&b, "out", "output", F32, 1, sh);
    tb_add(&b, 0, TB_SP, tb_dma(tb_hbm(o, F32, 4, 16, 0, 1), tb_hbm(a, F32, 4, 16, 0, 1), 0));
    tb_add(&b, 0, TB_SP, tb_trig(0, 1));
    sim_options_t opt;
    sim_options_default(&opt);
    opt.check_uninit = true;
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, &opt, &s, &err), -1);
    assert_non_null(strstr(err.msg, "never-written hbm memory at src address 0x0"));
    sim_free(s);
    /* without the check the sentinel (0xFF bytes = NaN) is copied */
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    float out[16];
    get_f32(s, "out", out, 16);
    for (int i = 0; i < 16; i++)
        assert_true(isnan(out[i]));
    sim_free(s);
    tb_free(&b);
}

/* Load-time audit of HBM reads (sim/hbmcheck.c): a pattern whose rows lie
 * in two tensors passes even when its bounding range spans both; an HBM
 * destination of a compute=add DMA is read, so it is audited too. */
static void test_hbm_read_audit(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    int64_t sh[1] = { 16 };
    uint64_t x = tb_tensor(&b, "x", "scratch", F32, 1, sh);
    uint64_t y = tb_tensor(&b, "y", "scratch", F32, 1, sh);
    assert_true(y > x);
    b.hbm_bytes = 4096; /* room past y for the unaudited write below */
    tb_add(&b, 0, TB_SP, tb_dma(tb_sb(0, 0, F32, 4, 16, (int32_t)PITCH, 2),
                                tb_hbm(x, F32, 4, 16, (int32_t)(y - x), 2), 0));
    tb_add(&b, 0, TB_SP, tb_trig(0, 1));
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    sim_free(s);

    b.n[0][TB_SP] = 0;
    isa_inst_t r = tb_dma(tb_hbm(y + 8, F32, 4, 16, 0, 1), tb_sb(0, 0, F32, 4, 16, 0, 1), 0);
    tb_add(&b, 0, TB_SP, r);
    tb_add(&b, 0, TB_SP, tb_trig(0, 1));
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0); /* a plain write is not audited */
    sim_free(s);
    b.prog[0][TB_SP][0].f.DDESC.compute = ISA_DMAOP_ADD;
    tb_write(&b);
    sim_options_t opt;
    sim_options_default(&opt);
    opt.target = &b.tgt;
    assert_int_equal(sim_load(b.dir, &opt, &s, &err), -1);
    char want[160];
    snprintf(want, sizeof want, "operand dst (compute=add) reads HBM bytes [%llu, %llu)",
             (unsigned long long)(y + 8), (unsigned long long)(y + 72));
    assert_non_null(strstr(err.msg, want));
    assert_non_null(strstr(err.msg, "nearest tensor 'y' (scratch)"));
    /* a PseudoDmaDirect3d is audited plane by plane: plane 0 reads x; plane
     * 1 starts 32 bytes into y and runs 32 bytes past its end */
    b.n[0][TB_SP] = 0;
    isa_inst_t p3 = tb_dma(tb_sb(0, 0, F32, 4, 16, 0, 1), tb_hbm(x, F32, 4, 16, 0, 1), 0);
    p3.op = ISA_OP_DMA_DIRECT3D;
    p3.f.D3DESC.count2 = 2;
    p3.f.D3DESC.src_step2 = (int32_t)(y - x) + 32;
    p3.f.D3DESC.dst_step2 = (int32_t)PITCH;
    tb_add(&b, 0, TB_SP, p3);
    tb_add(&b, 0, TB_SP, tb_trig(0, 1));
    tb_write(&b);
    assert_int_equal(sim_load(b.dir, &opt, &s, &err), -1);
    snprintf(want, sizeof want, "operand src reads HBM bytes [%llu, %llu)",
             (unsigned long long)(y + 32), (unsigned long long)(y + 96));
    assert_non_null(strstr(err.msg, want));
    tb_free(&b);
}

static void test_timing_only_keeps_timing(void **state)
{
    (void)state;
    uint64_t cyc[2];
    for (int r = 0; r < 2; r++) {
        tb_t b;
        tb_init(&b, 1);
        int64_t sh[2] = { 32, 64 };
        uint64_t a = tb_tensor(&b, "a", "input", F32, 2, sh);
        uint64_t o = tb_tensor(&b, "out", "output", F32, 2, sh);
        tb_add(&b, 0, TB_SP, tb_dma(tb_sb(0, 0, F32, 4, 64, PITCH, 32), tb_hbm(a, F32, 4, 64, 256, 32), 0));
        isa_inst_t t = tb_trig(0, 1);
        tb_upd(&t, 0, ISA_SEMOP_SEM_INC, 0, false);
        tb_add(&b, 0, TB_SP, t);
        isa_inst_t d = tb_dma(tb_hbm(o, F32, 4, 64, 256, 32), tb_sb(0, 0, F32, 4, 64, PITCH, 32), 1);
        tb_wait(&d, 0, 1);
        tb_add(&b, 0, TB_SP, d);
        tb_add(&b, 0, TB_SP, tb_trig(1, 1));
        tb_write(&b);
        sim_options_t o2;
        sim_options_default(&o2);
        o2.timing_only = r == 1;
        sim_t *s = tb_load(&b, &o2);
        float in[2048] = { 1 };
        tb_input_f32(s, "a", in, 2, sh);
        tpb_err_t err;
        assert_int_equal(sim_run(s, &err), 0);
        cyc[r] = tb_cycles(s);
        float out[2048];
        get_f32(s, "out", out, 2048);
        assert_true(r == 0 ? out[0] == 1.0f : isnan(out[0]));
        sim_free(s);
        tb_free(&b);
    }
    assert_int_equal(cyc[0], cyc[1]);
}

/* core 0 sends a tile into core 1's SBUF (remote DAP core) and signals core
 * 1 with a remote semaphore update -- on the trigger, or on the descriptor
 * (its remote semaphore) -- at completion; core 1 waits for it and stores
 * the tile.  Returns the loaded simulator after the run (caller frees). */
static sim_t *run_remote_copy(tb_t *b, bool on_descriptor)
{
    tb_init(b, 2);
    int64_t sh[2] = { 8, 32 };
    uint64_t a = tb_tensor(b, "a", "input", F32, 2, sh);
    uint64_t o = tb_tensor(b, "out", "output", F32, 2, sh);
    isa_dap_t remote = tb_sb(4, 64, F32, 4, 32, PITCH, 8);
    remote.core = 1;
    isa_inst_t de = tb_dma(remote, tb_hbm(a, F32, 4, 32, 128, 8), 0);
    isa_inst_t t = tb_trig(0, 1);
    tb_upd_remote(on_descriptor ? &de : &t, 1, 2, ISA_SEMOP_SEM_INC, 0);
    tb_add(b, 0, TB_SP, de);
    tb_add(b, 0, TB_SP, t);
    isa_dap_t local1 = tb_sb(4, 64, F32, 4, 32, PITCH, 8);
    local1.core = 1;
    isa_inst_t d = tb_dma(tb_hbm(o, F32, 4, 32, 128, 8), local1, 0);
    tb_wait(&d, 2, 1);
    tb_add(b, 1, TB_SP, d);
    tb_add(b, 1, TB_SP, tb_trig(0, 1));
    tb_write(b);
    sim_t *s = tb_load(b, NULL);
    float in[256], out[256];
    for (int i = 0; i < 256; i++)
        in[i] = (float)(i * 3 % 17) - 4.0f;
    tb_input_f32(s, "a", in, 2, sh);
    tpb_err_t err;
    if (sim_run(s, &err))
        fail_msg("%s", err.msg);
    get_f32(s, "out", out, 256);
    assert_memory_equal(in, out, sizeof in);
    return s;
}

static void test_sendrecv_two_cores(void **state)
{
    (void)state;
    tb_t b;
    sim_t *s = run_remote_copy(&b, false);
    sim_free(s);
    tb_free(&b);
}

/* A descriptor's remote semaphore (upd_remote on the descriptor, the NEFF
 * descriptor's remote_semaphores): it fires once, on the peer core, when
 * the transfer that carries the descriptor completes -- not when the
 * descriptor instruction issues. */
static void test_descriptor_remote_semaphore(void **state)
{
    (void)state;
    tb_t b;
    sim_t *s = run_remote_copy(&b, true);
    const sim_sem_t *S = &s->cores[1].sem[2];
    assert_int_equal(S->value, 1);                        /* once, not at issue too */
    assert_int_equal(S->last_writer.core, 0);
    assert_true(S->last_writer.tid >= SIM_DMA_LANE_TID);  /* by core 0's DMA transfer */
    assert_int_equal(s->cores[0].sem[2].value, 0);        /* nothing local */
    sim_free(s);
    tb_free(&b);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_roundtrip),
        cmocka_unit_test(test_queue_ordering),
        cmocka_unit_test(test_multidim_descriptor),
        cmocka_unit_test(test_partition_spread_formula),
        cmocka_unit_test(test_transpose_timing),
        cmocka_unit_test(test_transpose_op),
        cmocka_unit_test(test_cast),
        cmocka_unit_test(test_accumulate_and_registers),
        cmocka_unit_test(test_untriggered_warning_and_trigger_errors),
        cmocka_unit_test(test_gather_with_skip),
        cmocka_unit_test(test_gather_oob_error),
        cmocka_unit_test(test_scatter_and_scatter_add),
        cmocka_unit_test(test_bounds_violations),
        cmocka_unit_test(test_check_uninit),
        cmocka_unit_test(test_hbm_read_audit),
        cmocka_unit_test(test_timing_only_keeps_timing),
        cmocka_unit_test(test_sendrecv_two_cores),
        cmocka_unit_test(test_descriptor_remote_semaphore),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
