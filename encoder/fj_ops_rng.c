/* fj_ops_rng.c - the random-number op family of the JSON front-end (see
 * fj.h): NKI rng, rand2, rand_get_state, rand_set_state, set_rng_seed with
 * NKI's parameter names and engine defaults (rng.h).  Semantics:
 * docs/semantics.md "Random numbers". */
#include "fj.h"
#include "rng.h"

static void default_engine(tir_op_t *op)
{
    if (op->engine == ISA_ENG_UNASSIGNED)
        op->engine = enc_rng_default_engine(op->kind);
}

/* rng(dst, engine=vector) / rand_get_state(dst, engine=gpsimd) */
static int h_dst(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst))
        return -1;
    op->nsrc = 0;
    default_engine(op);
    return 1;
}

/* rand_set_state(src_seeds, engine=gpsimd) / set_rng_seed(src_seeds) */
static int h_seeds(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "src_seeds", true, &op->src[0]))
        return -1;
    op->nsrc = 1;
    default_engine(op);
    return 1;
}

/* rand2(dst, min, max): both bounds required, numbers or [P,1] tiles */
static int h_rand2(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst))
        return -1;
    static const char *const bounds[2] = {"min", "max"};
    for (int k = 0; k < 2; k++) {
        if (!fj_field(o, bounds[k]))
            return fj_jfail(j, path, bounds[k], "missing");
        if (fj_get_scalar(j, o, path, bounds[k], k ? &op->s1 : &op->s0, 0))
            return -1;
    }
    op->nsrc = 0;
    default_engine(op);
    return 1;
}

const fj_opdef_t fj_ops_rng[] = {
    {"rng", TIR_RNG, h_dst, {F_COMMON, "dst", NULL}},
    {"rand2", TIR_RAND2, h_rand2, {F_COMMON, "dst", "min", "max", NULL}},
    {"rand_get_state", TIR_RAND_GET_STATE, h_dst, {F_COMMON, "dst", NULL}},
    {"rand_set_state", TIR_RAND_SET_STATE, h_seeds, {F_COMMON, "src_seeds", NULL}},
    {"set_rng_seed", TIR_SET_RNG_SEED, h_seeds, {F_COMMON, "src_seeds", NULL}},
    {NULL, 0, NULL, {NULL}},
};
