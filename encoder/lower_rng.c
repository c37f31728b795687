/* lower_rng.c - the random-number ops, one instruction each, on the op's
 * engine (its NKI default when none is given, rng.h):
 *
 *   rng             -> Rng (out)
 *   rand2           -> Rand2 (out, min/max immediate or [P,1] pointer)
 *   rand_get_state  -> RandGetState (out)
 *   rand_set_state  -> RandSetState (in)
 *   set_rng_seed    -> SetRngSeed (in, Vector) */
#include "lower.h"
#include "rng.h"

static void pin_engine(lower_ctx_t *c, bir_inst_t *in)
{
    if (c->op->engine == ISA_ENG_UNASSIGNED)
        in->engine = enc_rng_default_engine(c->op->kind);
}

static int lower_out(lower_ctx_t *c, bir_opcode_t opc, isa_op_t isa_op)
{
    bir_inst_t in;
    lw_inst(c, &in, opc, isa_op);
    if (lw_tap(c, &in, c->op->dst, true, "dst", &in.isa.f->RNG.out))
        return -1;
    pin_engine(c, &in);
    return lw_emit(c, &in);
}

static int lower_in(lower_ctx_t *c, bir_opcode_t opc, isa_op_t isa_op)
{
    bir_inst_t in;
    lw_inst(c, &in, opc, isa_op);
    if (lw_tap(c, &in, c->op->src[0], false, "src_seeds", &in.isa.f->RSTATE.in))
        return -1;
    pin_engine(c, &in);
    return lw_emit(c, &in);
}

static int lower_rand2(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_RAND2, ISA_OP_RAND2);
    isa_fmt_RAND2_t *f = &in.isa.f->RAND2;
    if (lw_tap(c, &in, op->dst, true, "dst", &f->out) ||
        lw_scalar(c, &in, &op->s0, "min", &f->min, &f->min_is_ptr) ||
        lw_scalar(c, &in, &op->s1, "max", &f->max, &f->max_is_ptr))
        return -1;
    in.engine = ISA_ENG_DVE;
    return lw_emit(c, &in);
}

int lower_rng(lower_ctx_t *c)
{
    switch (c->op->kind) {
    case TIR_RNG: return lower_out(c, BIR_RNG, ISA_OP_RNG);
    case TIR_RAND_GET_STATE: return lower_out(c, BIR_RAND_GET_STATE, ISA_OP_RAND_GET_STATE);
    case TIR_RAND_SET_STATE: return lower_in(c, BIR_RAND_SET_STATE, ISA_OP_RAND_SET_STATE);
    case TIR_SET_RNG_SEED: return lower_in(c, BIR_SET_RNG_SEED, ISA_OP_SET_RNG_SEED);
    case TIR_RAND2: return lower_rand2(c);
    default: return lw_err(c, "not a random-number op");
    }
}
