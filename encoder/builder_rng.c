/* builder_rng.c - typed builders of the random-number ops (builder.h);
 * each fills a tir_op_t (tir.h) and hands it to enc_emit(). */
#include "builder.h"
#include "rng.h"

static int emit_rng(enc_builder_t *b, tir_opkind_t kind, tir_ap_t dst, tir_ap_t src, int engine)
{
    tir_op_t op;
    tir_op_init(&op, kind);
    op.dst = dst;
    op.src[0] = src;
    op.nsrc = src.tensor >= 0 ? 1 : 0;
    op.engine = engine == ISA_ENG_UNASSIGNED ? enc_rng_default_engine(kind) : engine;
    return enc_emit(b, &op);
}

int enc_rng(enc_builder_t *b, tir_ap_t dst, int engine)
{
    return emit_rng(b, TIR_RNG, dst, enc_ap_none(), engine);
}

int enc_rand_get_state(enc_builder_t *b, tir_ap_t dst, int engine)
{
    return emit_rng(b, TIR_RAND_GET_STATE, dst, enc_ap_none(), engine);
}

int enc_rand_set_state(enc_builder_t *b, tir_ap_t src_seeds, int engine)
{
    return emit_rng(b, TIR_RAND_SET_STATE, enc_ap_none(), src_seeds, engine);
}

int enc_set_rng_seed(enc_builder_t *b, tir_ap_t src_seeds)
{
    return emit_rng(b, TIR_SET_RNG_SEED, enc_ap_none(), src_seeds, ISA_ENG_DVE);
}

int enc_rand2(enc_builder_t *b, tir_ap_t dst, tir_scalar_t min, tir_scalar_t max)
{
    tir_op_t op;
    tir_op_init(&op, TIR_RAND2);
    op.dst = dst;
    op.nsrc = 0;
    op.s0 = min;
    op.s1 = max;
    op.engine = ISA_ENG_DVE;
    return enc_emit(b, &op);
}
