/* bench_split - time of one elementwise instruction on 128 partitions x W
 * fp32 elements, on one thread and split over a pool of 2 (every
 * instruction split, as with --split-all), best of several runs: where
 * splitting by partitions starts to pay (SIM_ROWS_SPLIT in sim/ops.h,
 * docs/simulator.md "Threads").  Prints µs per instruction; not a test (no
 * timing is asserted anywhere). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops.h"

enum { PB = 64 * 1024, REPS = 15, INNER = 20 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static isa_tap_t rows(uint32_t addr, uint32_t w)
{
    isa_tap_t t = { .addr = addr, .dtype = ISA_DT_FP32, .space = ISA_SPACE_SBUF, .start = 0,
                    .nparts = 128, .ndims = 1, .step = { 1 }, .count = { w } };
    return t;
}

static isa_decoded_t inst(unsigned kind, uint32_t w)
{
    isa_decoded_t d;
    memset(&d, 0, sizeof d);
    isa_ptr_t col = { (uint32_t)PB - 16, ISA_DT_FP32, ISA_SPACE_SBUF }; /* bias: -5.0 */
    switch (kind) {
    case 0:
        d.inst.op = ISA_OP_TENSOR_COPY;
        d.inst.f.COPY.in = rows(0, w);
        d.inst.f.COPY.out = rows(PB / 2, w);
        break;
    case 1:
        d.inst.op = ISA_OP_TENSOR_SCALAR;
        d.inst.f.TS.in = rows(0, w);
        d.inst.f.TS.out = rows(PB / 2, w);
        d.inst.f.TS.op0 = ISA_ALU_MULTIPLY;
        d.inst.f.TS.s0 = 0x3f000000u;  /* 0.5f */
        d.inst.f.TS.op1 = ISA_ALU_ADD;
        d.inst.f.TS.s1 = 0x3f800000u;  /* 1.0f */
        break;
    case 2:
        d.inst.op = ISA_OP_TENSOR_REDUCE;
        d.inst.f.RED.in = rows(0, w);
        d.inst.f.RED.out = rows(PB - 32, 1);
        d.inst.f.RED.op = ISA_ALU_MAX;
        d.inst.f.RED.axes = 1;
        break;
    case 3:
        d = inst(2, w);
        d.inst.f.RED.op = ISA_ALU_ADD;
        return d;
    default:
        d.inst.op = ISA_OP_ACTIVATION;
        d.inst.f.ACT.in = rows(0, w);
        d.inst.f.ACT.out = rows(PB / 2, w);
        d.inst.f.ACT.func = ISA_ACTFN_EXP;
        d.inst.f.ACT.scale = 1.0f;
        d.inst.f.ACT.bias = col;
        d.inst.f.ACT.red_out = (isa_ptr_t){ (uint32_t)PB - 8, ISA_DT_FP32, ISA_SPACE_SBUF };
        d.inst.f.ACT.red_op = ISA_ALU_ADD;
        d.inst.f.ACT.red_cmd = kind == 4 || kind == 6 ? ISA_REDCMD_RESET_REDUCE : ISA_REDCMD_IDLE;
        d.inst.f.ACT.func = kind >= 6 ? ISA_ACTFN_SQUARE : ISA_ACTFN_EXP;
        break;
    }
    d.inst.l2 = isa_ops[d.inst.op].l2;
    return d;
}

/* Best µs per instruction of REPS batches of INNER runs. */
static double time_inst(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const sim_opimpl_t *impl = sim_opimpl(d->inst.op);
    double best = 1e9;
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        for (int k = 0; k < INNER; k++) {
            sim_scratch_reset(ctx->scratch);
            if (impl->exec(ctx, d) != 0) {
                fprintf(stderr, "bench_split: %s\n", ctx->err->msg);
                exit(1);
            }
        }
        double t = (now() - t0) / INNER;
        best = t < best ? t : best;
    }
    return best * 1e6;
}

int main(void)
{
    static const char *names[] = { "tensor_copy", "tensor_scalar", "tensor_reduce max",
                                   "tensor_reduce add", "activation exp+add", "activation exp",
                                   "activation square+add", "activation square" };
    static const uint32_t widths[] = { 64, 128, 256, 512, 1024, 2048, 4096 };
    uint8_t *sbuf = malloc((size_t)128 * PB);
    float acc[128] = { 0 };
    sim_scratch_t scratch = { 0 };
    tpb_err_t err;
    if (!sbuf)
        return 1;
    for (size_t i = 0; i < (size_t)128 * PB / 4; i++) {
        float v = (float)(i % 1000) * 0.01f - 5.0f;
        memcpy(sbuf + 4 * i, &v, 4);
    }
    sim_exec_ctx_t ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.target = tpb_target_get("trn2");
    ctx.engine = ISA_ENG_ACT;
    ctx.sbuf = sbuf;
    ctx.sbuf_pb = PB;
    ctx.acc = acc;
    ctx.scratch = &scratch;
    ctx.err = &err;
    sim_pool_t *pool = sim_pool_new(2, true);
    printf("%-22s %6s %10s %10s %8s\n", "op (128 x W fp32)", "W", "1 thread", "2 threads",
           "speedup");
    for (unsigned kind = 0; kind < 8; kind++)
        for (unsigned wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
            isa_decoded_t d = inst(kind, widths[wi]);
            ctx.pool = NULL;
            double t1 = time_inst(&ctx, &d);
            ctx.pool = pool;
            double t2 = time_inst(&ctx, &d);
            printf("%-22s %6u %8.1f µs %8.1f µs %7.2fx\n", names[kind], widths[wi], t1, t2,
                   t1 / t2);
        }
    sim_pool_destroy(pool);
    sim_scratch_free(&scratch);
    free(sbuf);
    return 0;
}
