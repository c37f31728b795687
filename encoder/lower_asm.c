/* lower_asm.c - inline assembly (seed 001 §7.5, docs/compiler.md "Inline
 * assembly"):
 *   inline_asm        -> the named instruction (BIR InlineAsm), its tile
 *                        operands converted like any op's (so dependencies
 *                        and semaphores come from their accesses), its other
 *                        fields set by name;
 *   inline_asm_bytes  -> the given bundle, decoded (it must be a valid
 *                        instruction with an empty synchronisation header);
 *                        the compiler cannot see what it touches, so its
 *                        sync type says how to order it: none (only its
 *                        engine's program order) or barrier (an access to
 *                        all of SBUF, PSUM and HBM, so it follows every
 *                        earlier access and precedes every later one). */
#include "lower.h"

#include <stdint.h>
#include <string.h>

static int asm_bind(lower_ctx_t *c, bir_inst_t *in, int fi, const tir_ap_t *ap, bool write)
{
    const isa_fmtinfo_t *fmt = &isa_formats[isa_ops[in->isa.op].format];
    const isa_field_t *f = &fmt->fields[fi];
    uint8_t *body = (uint8_t *)in->isa.f;
    if (f->opnd_kind == ISA_OPND_TAP)
        return lw_tap(c, in, ap, write, f->operand, (isa_tap_t *)(void *)(body + f->offset));
    return lw_ptr(c, in, ap, write, f->operand, (isa_ptr_t *)(void *)(body + f->offset));
}

static int lower_inline_asm(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    const tir_asm_t *r = op->rare->inl;
    bir_inst_t in;
    lw_inst(c, &in, BIR_INLINE_ASM, (isa_op_t)r->asm_op);
    for (int i = 0; i < op->nsrc; i++)
        if (r->asm_opnd[i] >= 0 && asm_bind(c, &in, r->asm_opnd[i], op->src[i], false))
            return -1;
    if (r->asm_opnd[4] >= 0 && asm_bind(c, &in, r->asm_opnd[4], op->dst, true))
        return -1;
    if (r->asm_opnd[5] >= 0 && asm_bind(c, &in, r->asm_opnd[5], op->dst2, true))
        return -1;
    const isa_fmtinfo_t *fmt = &isa_formats[isa_ops[in.isa.op].format];
    isa_inst_t whole;
    bir_isa_expand(&in, &whole);
    for (int i = 0; i < r->n_asm_attrs; i++)
        isa_field_set(&whole, &fmt->fields[r->asm_attr_field[i]], r->asm_attr_val[i]);
    /* catch a value that does not fit its field here, naming the op */
    uint8_t b[2][ISA_BUNDLE_BYTES];
    unsigned nb;
    isa_err_t e;
    if (isa_encode_with_prefixes(&whole, b, &nb, &e) != ISA_OK)
        return lw_err(c, "%s: %s", isa_ops[in.isa.op].mnemonic, e.msg);
    bir_isa_set(c->m, &in, &whole);   /* out of memory: lw_emit refuses it */
    return lw_emit(c, &in);
}

static int lower_inline_asm_bytes(lower_ctx_t *c)
{
    const tir_asm_t *r = c->op->rare->inl;
    isa_inst_t dec;
    isa_err_t e;
    if (isa_decode(r->asm_bytes, 0, &dec, &e) != ISA_OK)
        return lw_err(c, "asm_bytes: not a valid instruction: %s", e.msg);
    const isa_opinfo_t *oi = &isa_ops[dec.op];
    if (oi->cls > ISA_CLASS_POOL)
        return lw_err(c, "asm_bytes: %s is a %s instruction; inline assembly takes compute "
                      "instructions", oi->mnemonic, isa_class_name(oi->cls));
    static const isa_sync_t none;
    if (memcmp(&dec.sync, &none, sizeof none))
        return lw_err(c, "asm_bytes: bytes 2-11 (the synchronisation header) must be zero; the "
                      "compiler fills them");
    bir_inst_t in;
    lw_inst(c, &in, BIR_INLINE_ASM, dec.op);
    bir_isa_set(c->m, &in, &dec);   /* out of memory: lw_emit refuses it */
    if (r->sync_type == 1) {
        static const bir_access_t all[3] = {
            {.space = ISA_SPACE_SBUF, .p1 = ISA_NUM_PARTITIONS, .hi = BIR_ACCESS_END,
             .write = 1},
            {.space = ISA_SPACE_PSUM, .p1 = ISA_NUM_PARTITIONS, .hi = BIR_ACCESS_END,
             .write = 1},
            {.space = ISA_SPACE_HBM, .p1 = 1, .hi = BIR_ACCESS_END,
             .write = 1},
        };
        for (int i = 0; i < 3; i++)
            bir_inst_access(c->m, &in, &all[i]);
    }
    return lw_emit(c, &in);
}

int lower_asm(lower_ctx_t *c)
{
    if (!c->op->rare->inl)
        return lw_err(c, "inline assembly without its record (tir_new_asm)");
    return c->op->kind == TIR_INLINE_ASM ? lower_inline_asm(c) : lower_inline_asm_bytes(c);
}
