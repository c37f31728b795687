/* validate_rng.c - checks of the random-number ops (rng.h): the NKI
 * docstrings' dtype, shape, memory and engine rules.  NKI restricts some
 * forms to newer NeuronCores than trn2 (rand2; Vector rand_get_state /
 * rand_set_state: NeuronCore-v4); tpbsim accepts them on trn2 (it models no
 * v4 target) and says so in docs/nki-coverage.md.  Errors name the op path
 * and the NKI field: "<path> (<op>): field '<field>': <what>". */
#include "rng.h"

#include <math.h>
#include <string.h>

#include "validate_int.h"

bool enc_is_rng(tir_opkind_t k)
{
    return k == TIR_RNG || k == TIR_RAND2 || k == TIR_RAND_GET_STATE ||
           k == TIR_RAND_SET_STATE || k == TIR_SET_RNG_SEED;
}

int enc_rng_default_engine(tir_opkind_t k)
{
    return k == TIR_RAND_GET_STATE || k == TIR_RAND_SET_STATE ? ISA_ENG_POOL : ISA_ENG_DVE;
}

int enc_rng_state_words(int engine)
{
    return engine == ISA_ENG_DVE ? 24 : 6;
}

static int need_tile(const vctx_t *c, const tir_ap_t *a, const char *field)
{
    if (a->tensor < 0)
        return vfail(c, field, "missing");
    if (ap_parts(a) > 128)
        return vfail(c, field, "%lld partitions; at most 128", (long long)ap_parts(a));
    return 0;
}

/* GpSimd cannot access PSUM (NKI) */
static int pool_not_psum(const vctx_t *c, int engine, const tir_ap_t *a, const char *field)
{
    if (engine == ISA_ENG_POOL && tens(c, a)->kind == TIR_T_PSUM)
        return vfail(c, field, "in PSUM, which GpSimd (engine pool) cannot access; use SBUF "
                     "or engine vector");
    return 0;
}

static int state_shape(const vctx_t *c, int engine, const tir_ap_t *a, const char *field)
{
    unsigned dt = odt(c, a);
    if (dt != ISA_DT_UINT32)
        return vfail(c, field, "dtype %s: the PRNG state is uint32", isa_dtype_numpy_name(dt));
    int w = enc_rng_state_words(engine);
    if (ap_free(a) != w)
        return vfail(c, field, "%lld elements per partition; the %s XORWOW state is %d words "
                     "per partition", (long long)ap_free(a),
                     engine == ISA_ENG_DVE ? "Vector engine's" : "GpSimd engine's", w);
    return 0;
}

static int v3_plus(const vctx_t *c, const tpb_target_t *t)
{
    if (t && t->name && t->name[0] && !strcmp(t->name, "trn1"))
        return vfail(c, "engine", "%s needs NeuronCore-v3+ (target trn2); trn1 is v2",
                     tir_op_name(c->op->kind));
    return 0;
}

static int rand2_bound(const vctx_t *c, const tir_scalar_t *s, const char *field)
{
    if (!s->is_ap) {
        if (!isfinite(s->imm))
            return vfail(c, field, "%g is not a finite number", s->imm);
        return 0;
    }
    unsigned bt = odt(c, s->ap);
    if (ap_free(s->ap) != 1 || ap_parts(s->ap) != ap_parts(c->op->dst))
        return vfail(c, field, "a per-partition value must be a [%lld, 1] tile access (got %lld "
                     "x %lld)", (long long)ap_parts(c->op->dst), (long long)ap_parts(s->ap),
                     (long long)ap_free(s->ap));
    if (bt != ISA_DT_FP32)
        return vfail(c, field, "dtype %s: a tile bound is float32",
                     isa_dtype_numpy_name(bt));
    return 0;
}

int enc_validate_rng(const tir_kernel_t *k, const tpb_target_t *t, const tir_op_t *op,
                     tpb_err_t *err)
{
    vctx_t c = {.k = k, .op = op, .err = err};
    int eng = op->engine == ISA_ENG_UNASSIGNED ? enc_rng_default_engine(op->kind) : op->engine;
    switch (op->kind) {
    case TIR_RNG: {
        if (need_tile(&c, op->dst, "dst") || pool_not_psum(&c, eng, op->dst, "dst"))
            return -1;
        unsigned dt = odt(&c, op->dst);
        if (isa_dtype_kind(dt) == ISA_DK_F)
            return vfail(&c, "dst", "dtype %s: rng writes an integer dtype (int8, int16, int32, "
                         "uint8, uint16, uint32)", isa_dtype_numpy_name(dt));
        if (eng == ISA_ENG_POOL && t && t->name && !strcmp(t->name, "trn1"))
            return vfail(&c, "engine", "NeuronCore-v2 (trn1) runs rng on the Vector engine only");
        return 0;
    }
    case TIR_RAND2:
        if (need_tile(&c, op->dst, "dst") || rand2_bound(&c, &op->s0, "min") ||
            rand2_bound(&c, &op->s1, "max"))
            return -1;
        if (!op->s0.is_ap && !op->s1.is_ap && !(op->s0.imm < op->s1.imm))
            return vfail(&c, "max", "%g is not above min %g (NKI: min < max)", op->s1.imm,
                         op->s0.imm);
        return 0;
    case TIR_RAND_GET_STATE:
        return need_tile(&c, op->dst, "dst") || v3_plus(&c, t) ||
               pool_not_psum(&c, eng, op->dst, "dst") || state_shape(&c, eng, op->dst, "dst");
    case TIR_RAND_SET_STATE:
        if (need_tile(&c, op->src[0], "src_seeds") || v3_plus(&c, t) ||
            state_shape(&c, eng, op->src[0], "src_seeds"))
            return -1;
        if (tens(&c, op->src[0])->kind != TIR_T_SBUF)
            return vfail(&c, "src_seeds", "must be in SBUF");
        return 0;
    case TIR_SET_RNG_SEED: {
        if (need_tile(&c, op->src[0], "src_seeds"))
            return -1;
        const tir_ap_t *s = op->src[0];
        unsigned dt = odt(&c, s);
        if (ap_parts(s) != 1 || ap_free(s) != 1)
            return vfail(&c, "src_seeds", "must be a [1, 1] tile access (got %lld x %lld)",
                         (long long)ap_parts(s), (long long)ap_free(s));
        if (isa_dtype_size(dt) != 4)
            return vfail(&c, "src_seeds", "dtype %s: the seed is a 32-bit value",
                         isa_dtype_numpy_name(dt));
        return 0;
    }
    default:
        return vfail(&c, "op", "not a random-number op");
    }
}
