/* act.c - Activation engine (ScalarE) ops: Activation, Activate2,
 * ActivationAcc, the activation function table and the fused free-axis
 * reduce into the engine's accumulator registers.  Semantics:
 * docs/semantics.md "Activation"; costs: docs/timing-compute.md. */
#include <math.h>
#include <string.h>

#include "ops.h"
#include "vmath.h"

/* every function of enums.def's ACTFN table (ids are not dense by rule) */
bool sim_actfn_valid(unsigned fn) { return isa_enum_name(ISA_FT_ACTFN, fn) != NULL; }

/* 1 / (1 + exp(-x)); vmath_fn.c holds the definitions it vectorises */
static double sigmoid(double x) { return sim_vfn_ref(SIM_VF_SIGMOID, x); }

/* softplus in the overflow-free form max(x,0) + log1p(exp(-|x|)) */
static double softplus(double x) { return fmax(x, 0.0) + log1p(exp(-fabs(x))); }

/* relu in double, rounded once (as every function below); one definition
 * for the element (sim_actfn) and the row (actfn_row) path. */
static inline float relu_f(float xf)
{
    const double x = xf;
    return (float)(isnan(x) ? x : (x > 0.0 ? x : 0.0));
}

/* Each function is evaluated in double from the fp32 argument and rounded
 * to fp32 once, so a NumPy reference (float64 math, one cast) matches. */
float sim_actfn(unsigned fn, float xf)
{
    const double x = xf;
    const double pi = 3.14159265358979323846;
    double r;
    switch (fn) {
    case ISA_ACTFN_COPY: return xf;
    case ISA_ACTFN_EXP: r = exp(x); break;
    case ISA_ACTFN_LOG: r = sim_vfn_ref(SIM_VF_LOG, x); break;
    case ISA_ACTFN_TANH: r = sim_vfn_ref(SIM_VF_TANH, x); break;
    case ISA_ACTFN_SIGMOID: r = sim_vfn_ref(SIM_VF_SIGMOID, x); break;
    case ISA_ACTFN_RELU: return relu_f(xf);
    case ISA_ACTFN_GELU: r = sim_vfn_ref(SIM_VF_GELU, x); break;
    case ISA_ACTFN_GELU_DX:
        r = 0.5 * (1.0 + erf(x / sqrt(2.0))) + x * exp(-0.5 * x * x) / sqrt(2.0 * pi);
        break;
    case ISA_ACTFN_GELU_APPRX_TANH: r = sim_vfn_ref(SIM_VF_GELU_TANH, x); break;
    case ISA_ACTFN_GELU_APPRX_SIGMOID: r = sim_vfn_ref(SIM_VF_GELU_SIGMOID, x); break;
    case ISA_ACTFN_GELU_APPRX_SIGMOID_DX: {   /* d/dz z*s(1.702z) */
        double s = sigmoid(1.702 * x);
        r = s * (1.0 + 1.702 * x * (1.0 - s));
        break;
    }
    case ISA_ACTFN_SILU: r = sim_vfn_ref(SIM_VF_SILU, x); break;
    case ISA_ACTFN_SILU_DX: {
        double s = sigmoid(x);
        r = s * (1.0 + x * (1.0 - s));
        break;
    }
    case ISA_ACTFN_SOFTPLUS: r = softplus(x); break;
    case ISA_ACTFN_MISH: r = x * tanh(softplus(x)); break;
    case ISA_ACTFN_ERF: r = erf(x); break;
    case ISA_ACTFN_ERF_DX: r = 2.0 / sqrt(pi) * exp(-x * x); break;
    case ISA_ACTFN_SQRT: r = sqrt(x); break;
    case ISA_ACTFN_RSQRT: r = 1.0 / sqrt(x); break;
    case ISA_ACTFN_SQUARE: r = x * x; break;
    case ISA_ACTFN_RECIPROCAL: r = 1.0 / x; break;
    case ISA_ACTFN_SIN: r = sin(x); break; /* no range reduction modelled */
    case ISA_ACTFN_ARCTAN: r = atan(x); break;
    case ISA_ACTFN_COS: r = cos(x); break; /* as sin: no range reduction modelled */
    case ISA_ACTFN_TAN: r = tan(x); break;
    case ISA_ACTFN_ABS: return fabsf(xf);
    case ISA_ACTFN_SIGN: r = isnan(x) ? x : (x > 0.0) - (x < 0.0); break;
    case ISA_ACTFN_PRELU: r = x >= 0.0 ? x : 0.0 * x; break;   /* parameter 0: see act_fn */
    default: r = NAN; break;
    }
    return (float)r;
}

/* x[k] = sim_actfn(fn, x[k]) for a run, bit for bit: exp, log, tanh,
 * sigmoid, silu, gelu and the approximate gelus through the vectorised kernels
 * (vmath.h); square, reciprocal and sqrt in fp32, which
 * gives the same bits as the double evaluation rounded once (the exact
 * product fits a double; for one division or square root, rounding to
 * double and then to fp32 equals rounding to fp32 directly, as
 * 53 >= 2 * 24 + 2). */
static void actfn_row(unsigned fn, float *x, uint32_t n)
{
    switch (fn) {
    case ISA_ACTFN_EXP: sim_vexp(x, x, n); return;
    case ISA_ACTFN_LOG: sim_vfn(SIM_VF_LOG, x, x, n); return;
    case ISA_ACTFN_TANH: sim_vfn(SIM_VF_TANH, x, x, n); return;
    case ISA_ACTFN_SIGMOID: sim_vfn(SIM_VF_SIGMOID, x, x, n); return;
    case ISA_ACTFN_SILU: sim_vfn(SIM_VF_SILU, x, x, n); return;
    case ISA_ACTFN_GELU_APPRX_TANH: sim_vfn(SIM_VF_GELU_TANH, x, x, n); return;
    case ISA_ACTFN_GELU_APPRX_SIGMOID: sim_vfn(SIM_VF_GELU_SIGMOID, x, x, n); return;
    case ISA_ACTFN_GELU: sim_vfn(SIM_VF_GELU, x, x, n); return;
    case ISA_ACTFN_SQUARE:
        for (uint32_t k = 0; k < n; k++)
            x[k] = x[k] * x[k];
        return;
    case ISA_ACTFN_RECIPROCAL:
        for (uint32_t k = 0; k < n; k++)
            x[k] = 1.0f / x[k];
        return;
    case ISA_ACTFN_SQRT:
        for (uint32_t k = 0; k < n; k++)
            x[k] = sqrtf(x[k]);
        return;
    case ISA_ACTFN_RELU:
        for (uint32_t k = 0; k < n; k++)
            x[k] = relu_f(x[k]);
        return;
    default:
        for (uint32_t k = 0; k < n; k++)
            x[k] = sim_actfn(fn, x[k]);
        return;
    }
}

/* Common operand set of the three activation opcodes. */
typedef struct {
    const isa_tap_t *in, *out;
    const isa_ptr_t *bias, *red_out;
    unsigned func, red_op, red_cmd;
    bool acc_out;          /* ActivationAcc: out += f(...) */
    bool act2;             /* Activate2 pre-ops */
    unsigned op0, op1;
    float imm0, imm1;
    bool scale_is_ptr;
    uint32_t scale_bits;
    bool imm_is_ptr[2];    /* Activate2: imm0/imm1 are [P,1] pointers (bits) */
    bool rev0, rev1;       /* Activate2: imm0 op0 x / imm1 op1 t */
    float relu;            /* Activate2: prelu's parameter (this partition's) */
    bool relu_is_ptr;
    uint32_t relu_bits;    /* the 24-bit field */
    bool bias_is_imm;      /* Activation: bias_imm instead of the bias pointer */
    float bias_imm;
} act_args_t;

/* f(z) with Activate2's prelu parameter */
static float act_fn(const act_args_t *a, float z)
{
    if (a->func == ISA_ACTFN_PRELU && !(z >= 0.0f))
        return isnan(z) ? z : a->relu * z;
    return sim_actfn(a->func, z);
}

/* Activate2's pre-ops on one value: (x op0 imm0) op1 imm1, each operand
 * pair swapped by rev0/rev1 */
static float act2_pre(const act_args_t *a, float x)
{
    return sim_alu_f_rev(a->op1, sim_alu_f_rev(a->op0, x, a->imm0, a->rev0), a->imm1, a->rev1);
}

static int check_reduce(sim_exec_ctx_t *ctx, const act_args_t *a)
{
    if (a->red_cmd > ISA_REDCMD_LOAD_REDUCE)
        return sim_fail(ctx, "red_cmd: invalid reduce command %u", a->red_cmd);
    if (a->red_cmd == ISA_REDCMD_IDLE)
        return 0;
    if (!sim_alu_valid(a->red_op) || !sim_alu_is_reduce(a->red_op) ||
        sim_alu_is_bitwise(a->red_op))
        return sim_fail(ctx, "red_op: %s is not an Activation reduction op (add, subtract, "
                        "multiply, max, min, abs_max, abs_min, logical_*)",
                        isa_enum_name(ISA_FT_ALU, a->red_op) ? isa_enum_name(ISA_FT_ALU, a->red_op)
                                                             : "?");
    if (a->red_cmd == ISA_REDCMD_LOAD_REDUCE && a->red_out->space == ISA_SPACE_NONE)
        return sim_fail(ctx, "red_out: load_reduce reads the accumulator from red_out, "
                        "which is absent");
    return 0;
}

/* Fold r into the accumulator of absolute partition q per red_cmd; returns
 * the accumulator value. */
static float apply_red_cmd(sim_exec_ctx_t *ctx, const act_args_t *a, unsigned q, float r,
                           const sim_opnd_t *ro, unsigned p)
{
    float *acc = &ctx->acc[q];
    switch (a->red_cmd) {
    case ISA_REDCMD_RESET: *acc = sim_val_as_f(sim_alu_identity(a->red_op)); break;
    case ISA_REDCMD_REDUCE: *acc = sim_alu_f(a->red_op, *acc, r); break;
    case ISA_REDCMD_RESET_REDUCE: *acc = r; break;
    case ISA_REDCMD_LOAD_REDUCE:
        *acc = sim_alu_f(a->red_op, num_load_f32(sim_el(ro, p, 0), ro->dtype), r);
        break;
    default: break;
    }
    return *acc;
}

/* Row fast path of one partition (fp32/bf16 in and out): the same
 * per-element fp32 steps as the generic loop in act_run, a run at a time. */
typedef struct {
    const act_args_t *a;
    const sim_opnd_t *o;   /* o[0] in, o[1] out */
    float scale, bias;
    bool red;
    float r;               /* running free-axis reduction */
} act_rows_t;

static void act_row(void *arg, unsigned p, uint32_t i, uint32_t n)
{
    act_rows_t *s = arg;
    const act_args_t *a = s->a;
    float x[SIM_ROW_MAX];
    sim_row_load(x, &s->o[0], p, i, n);
    if (a->act2) {
        sim_row_alu_s(a->op0, x, x, a->imm0, a->rev0, n);
        sim_row_alu_s(a->op1, x, x, a->imm1, a->rev1, n);
    } else
        for (uint32_t k = 0; k < n; k++)
            x[k] = x[k] * s->scale;
    if (a->func == ISA_ACTFN_COPY)
        for (uint32_t k = 0; k < n; k++)
            x[k] = x[k] + s->bias;
    else {
        for (uint32_t k = 0; k < n; k++)
            x[k] = x[k] + s->bias;
        if (a->func == ISA_ACTFN_PRELU)   /* its parameter is per partition */
            for (uint32_t k = 0; k < n; k++)
                x[k] = act_fn(a, x[k]);
        else
            actfn_row(a->func, x, n);
    }
    if (a->acc_out) {
        float y[SIM_ROW_MAX];
        sim_row_load(y, &s->o[1], p, i, n);
        for (uint32_t k = 0; k < n; k++)
            x[k] = y[k] + x[k];
    }
    sim_row_store(&s->o[1], p, i, x, n);
    if (s->red) {
        uint32_t k = 0;
        if (i == 0 && n)
            s->r = x[k++];
        s->r = sim_row_fold(a->red_op, s->r, x + k, n - k);
    }
}

/* One Activation instruction's partitions: each computed on its own, so
 * ranges of them may run on different threads (sim_rows_split). */
typedef struct {
    sim_exec_ctx_t *ctx;
    const act_args_t *a;
    const sim_opnd_t *o;   /* in, out, bias, scale, red_out, imm0, imm1, relu */
    uint32_t len;          /* sim_row_len, 0: the element loop */
    bool red;
} act_job_t;

/* Partition p: its scale, bias and Activate2 pointer immediates, the
 * elements, then the fused reduce into accumulator st + p and red_out. */
static void act_partition(const act_job_t *j, unsigned p)
{
    const sim_opnd_t *o = j->o;
    act_args_t pa = *j->a;
    const act_args_t *a = &pa;
    float scale = a->scale_is_ptr ? num_load_f32(sim_el(&o[3], p, 0), o[3].dtype)
                                  : sim_f32_from_bits(a->scale_bits);
    float bias = a->bias_is_imm ? a->bias_imm
                 : o[2].mem ? num_load_f32(sim_el(&o[2], p, 0), o[2].dtype) : 0.0f;
    if (a->imm_is_ptr[0])
        pa.imm0 = num_load_f32(sim_el(&o[5], p, 0), o[5].dtype);
    if (a->imm_is_ptr[1])
        pa.imm1 = num_load_f32(sim_el(&o[6], p, 0), o[6].dtype);
    if (a->relu_is_ptr)
        pa.relu = num_load_f32(sim_el(&o[7], p, 0), o[7].dtype);
    float r = 0.0f;
    if (j->len) {
        act_rows_t rows = { a, o, scale, bias, j->red, 0.0f };
        sim_rows_part(&o[1], j->len, p, act_row, &rows);
        r = rows.r;
    } else
        for (uint32_t i = 0; i < o[0].nfree; i++) {
            float x = num_load_f32(sim_el(&o[0], p, i), o[0].dtype);
            float z = a->act2 ? act2_pre(a, x) : x * scale;
            float y = act_fn(a, z + bias);
            uint8_t *dst = sim_el(&o[1], p, i);
            if (a->acc_out)
                y = num_load_f32(dst, o[1].dtype) + y;
            num_store_f32(dst, o[1].dtype, y);
            if (j->red)
                r = i == 0 ? y : sim_alu_f(a->red_op, r, y);
        }
    if (j->red) {
        float v = apply_red_cmd(j->ctx, a, o[0].start + p, r, &o[4], p);
        if (o[4].mem)
            num_store_f32(sim_el(&o[4], p, 0), o[4].dtype, v);
    }
}

/* Work per element in SIM_ROWS_SPLIT's units (~0.3 ns on one thread;
 * tests/bench_split): the row's load, scale, bias and store 1; the
 * vectorised functions (vmath.h) 3 more; square, reciprocal, sqrt and copy
 * nothing more; the others, sim_actfn per element, 6 more; the element
 * loop 4 more; a fused reduce that folds element after element (all but
 * max/min) 2 more; Activate2's pre-ops and ActivationAcc's read 1 each. */
static uint64_t act_weight(const act_args_t *a, uint32_t len)
{
    uint64_t w = 1;
    switch (a->func) {
    case ISA_ACTFN_EXP: case ISA_ACTFN_LOG: case ISA_ACTFN_TANH: case ISA_ACTFN_SIGMOID:
    case ISA_ACTFN_SILU: case ISA_ACTFN_GELU: case ISA_ACTFN_GELU_APPRX_TANH:
    case ISA_ACTFN_GELU_APPRX_SIGMOID:
        w += 3;
        break;
    case ISA_ACTFN_COPY: case ISA_ACTFN_SQUARE: case ISA_ACTFN_RECIPROCAL: case ISA_ACTFN_SQRT:
        break;
    default:
        w += 6;
        break;
    }
    if (!len)
        w += 4;
    if (a->red_cmd != ISA_REDCMD_IDLE && a->red_op != ISA_ALU_MAX && a->red_op != ISA_ALU_MIN)
        w += 2;
    return w + a->act2 + a->acc_out;
}

static void act_span(void *arg, unsigned part, unsigned p0, unsigned p1)
{
    (void)part;
    for (unsigned p = p0; p < p1; p++)
        act_partition(arg, p);
}

static uint32_t f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static int act_run(sim_exec_ctx_t *ctx, const act_args_t *a)
{
    sim_opnd_t o[8]; /* in, out, bias, scale, red_out, imm0, imm1, relu */
    sim_opnds_absent(o, sizeof o / sizeof o[0]);
    int rc = -1;
    if (!sim_actfn_valid(a->func))
        return sim_fail(ctx, "func: invalid activation function %u", a->func);
    if (a->act2 && (!sim_alu_valid(a->op0) || !sim_alu_valid(a->op1) ||
                    sim_alu_is_bitwise(a->op0) || sim_alu_is_bitwise(a->op1)))
        return sim_fail(ctx, "op0/op1: Activate2 needs arithmetic ALU ops (got %u, %u)",
                        a->op0, a->op1);
    if (check_reduce(ctx, a))
        return -1;
    if (sim_opnd_tap(ctx, &o[0], a->in, "in", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], a->out, "out", a->acc_out ? SIM_RW : SIM_WR) ||
        sim_same_shape(ctx, &o[1], &o[0]))
        goto done;
    /* per-partition scalars are on the output's partitions (the engine's
     * lanes): an input moved across quadrants/halves does not move them
     * (docs/semantics.md "PTR operand") */
    unsigned st = o[1].start, np = o[1].nparts;
    if (a->bias_is_imm && a->bias->space != ISA_SPACE_NONE) {
        rc = sim_fail(ctx, "bias: both an immediate (bias_is_imm) and a pointer");
        goto done;
    }
    if (a->bias->space != ISA_SPACE_NONE &&
        sim_opnd_ptr(ctx, &o[2], a->bias, st, np, 1, "bias", SIM_RD))
        goto done;
    isa_ptr_t sp = sim_ptr_from_bits(a->scale_bits);
    if (a->scale_is_ptr && sim_opnd_ptr(ctx, &o[3], &sp, st, np, 1, "scale", SIM_RD))
        goto done;
    for (int k = 0; k < 2; k++) {
        if (!a->imm_is_ptr[k])
            continue;
        isa_ptr_t ip = sim_ptr_from_bits(f32_bits(k ? a->imm1 : a->imm0));
        if (sim_opnd_ptr(ctx, &o[5 + k], &ip, st, np, 1, k ? "imm1" : "imm0", SIM_RD))
            goto done;
    }
    if (a->relu_is_ptr) {
        isa_ptr_t rp = { a->relu_bits & 0x3FFFFu, (a->relu_bits >> 18) & 0xFu,
                         a->relu_bits >> 22 };
        if (sim_opnd_ptr(ctx, &o[7], &rp, st, np, 1, "relu", SIM_RD))
            goto done;
    }
    bool red = a->red_cmd != ISA_REDCMD_IDLE;
    if (red && a->red_out->space != ISA_SPACE_NONE &&
        sim_opnd_ptr(ctx, &o[4], a->red_out, st, np, 1, "red_out",
                     a->red_cmd == ISA_REDCMD_LOAD_REDUCE ? SIM_RW : SIM_WR))
        goto done;
    const sim_opnd_t *ins[1] = { &o[0] };
    uint32_t len = ctx->timing_only ? 0 : sim_row_len(&o[1], ins, 1);
    if (!ctx->timing_only) {
        act_job_t j = { ctx, a, o, len, red };
        unsigned parts = 1;
        if (np > 1) { /* one partition is never split: no need to weigh it */
            const sim_opnd_t *all[8];
            for (unsigned k = 0; k < 8; k++)
                all[k] = &o[k];
            /* o[4] (red_out) and the accumulator registers are per partition */
            uint64_t work = sim_opnd_elems(&o[0]) * act_weight(a, len);
            parts = sim_rows_parts(ctx, all, 8, np, work);
        }
        sim_rows_split(ctx->pool, parts, np, act_span, &j);
    }
    sim_opnd_mark(&o[1]);
    sim_opnd_mark(&o[4]);
    rc = 0;
done:
    for (unsigned k = 0; k < 8; k++)
        sim_opnd_free(&o[k]);
    return rc;
}

static act_args_t act_args(const isa_fmt_ACT_t *f, bool acc_out)
{
    act_args_t a = { &f->in, &f->out, &f->bias, &f->red_out, f->func, f->red_op, f->red_cmd,
                     acc_out, false, 0, 0, 0.0f, 0.0f, f->scale_is_ptr != 0, f32_bits(f->scale),
                     {false, false}, false, false, 0.0f, false, 0, f->bias_is_imm != 0,
                     f->bias_imm };
    return a;
}

static int exec_activation(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    act_args_t a = act_args(&d->inst.f.ACT, false);
    return act_run(ctx, &a);
}

static int exec_activation_acc(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    act_args_t a = act_args(&d->inst.f.ACT, true);
    return act_run(ctx, &a);
}

static int exec_activate2(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_ACT2_t *f = &d->inst.f.ACT2;
    act_args_t a = { &f->in, &f->out, &f->bias, &f->red_out, f->func, f->red_op, f->red_cmd,
                     false, true, f->op0, f->op1, f->imm0, f->imm1, false, f32_bits(1.0f),
                     {f->imm0_is_ptr != 0, f->imm1_is_ptr != 0}, f->rev0 != 0, f->rev1 != 0,
                     sim_f32_from_bits(f->relu << 8), f->relu_is_ptr != 0, f->relu, false, 0.0f };
    if ((a.rev0 && a.op0 == ISA_ALU_BYPASS) || (a.rev1 && a.op1 == ISA_ALU_BYPASS))
        return sim_fail(ctx, "rev0/rev1: a reversed operand needs its op (not bypass)");
    return act_run(ctx, &a);
}

/* COST: activation max(MIN_II, N); with a fused reduce + MIN_II.  v4's
 * ScalarE perf mode (ARCH4: 256 bf16/fp16/fp8 elements per cycle, else
 * 128) divides the work when the input and output are such dtypes. */
static uint64_t act_cost(const tpb_target_t *t, uint64_t work, const isa_tap_t *in,
                         const isa_tap_t *out, unsigned red_cmd)
{
    unsigned f = t->act_perf_mode_factor;
    if (f > 1 && sim_dt_is_perf(t, in->dtype) && sim_dt_is_perf(t, out->dtype))
        work = (work + f - 1) / f;
    return sim_cost_act(t, work) + (red_cmd != ISA_REDCMD_IDLE ? t->min_ii : 0);
}

static uint64_t cost_activation(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    const isa_fmt_ACT_t *f = &d->inst.f.ACT;
    return act_cost(t, sim_tap_n(&f->in), &f->in, &f->out, f->red_cmd);
}

/* ActivationAcc also reads out: two input streams, 2N. */
static uint64_t cost_activation_acc(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    const isa_fmt_ACT_t *f = &d->inst.f.ACT;
    return act_cost(t, 2 * sim_tap_n(&f->in), &f->in, &f->out, f->red_cmd);
}

static uint64_t cost_activate2(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    const isa_fmt_ACT2_t *f = &d->inst.f.ACT2;
    return act_cost(t, sim_tap_n(&f->in), &f->in, &f->out, f->red_cmd);
}

static const sim_opimpl_t impl_act = { exec_activation, cost_activation };
static const sim_opimpl_t impl_act2 = { exec_activate2, cost_activate2 };
static const sim_opimpl_t impl_actacc = { exec_activation_acc, cost_activation_acc };

const sim_opimpl_t *sim_act_impl(isa_op_t op)
{
    switch (op) {
    case ISA_OP_ACTIVATION: return &impl_act;
    case ISA_OP_ACTIVATE2: return &impl_act2;
    case ISA_OP_ACTIVATION_ACC: return &impl_actacc;
    default: return NULL;
    }
}
