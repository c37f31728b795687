/* builder_check.c - a loop body statement's op validated once (builder.h
 * enc_op_check_t): the next iteration's op, which differs from it only in
 * its fresh tiles (and their records), passes the checks it passed. */
#include "builder.h"
#include "collective.h"

#include <stddef.h>
#include <string.h>

#define NAPS 10

/* The op's operand records, in a fixed order. */
static void op_aps(const tir_op_t *op, const tir_ap_t *aps[NAPS])
{
    aps[0] = op->dst;
    aps[1] = op->dst2;
    for (int i = 0; i < 4; i++)
        aps[2 + i] = op->src[i];
    aps[6] = op->index;
    aps[7] = op->bias;
    aps[8] = op->s0.ap;
    aps[9] = op->s1.ap;
}

/* Every field of the two ops but name, path and the operand records
 * (compared by the caller), bit for bit (a double's bits: NaN, -0.0).
 * The layout is fixed by tir.h: kind and flags, name and path, eight
 * records, s0, s1, bias, then rare (a pointer: interned, so equal fields
 * are one record) and the one-byte fields to the end. */
static bool same_fields(const tir_op_t *a, const tir_op_t *b)
{
    _Static_assert(offsetof(tir_op_t, flags) == 4 && offsetof(tir_op_t, name) == 8 &&
                       offsetof(tir_op_t, dst) == 24 &&
                       offsetof(tir_op_t, bias) + 8 == offsetof(tir_op_t, rare) &&
                       offsetof(tir_op_t, rare) + 8 == offsetof(tir_op_t, nsrc) &&
                       offsetof(tir_op_t, cmp) + 1 == sizeof(tir_op_t),
                   "tir_op_t layout as same_fields reads it");
    const size_t tail = offsetof(tir_op_t, rare);
    return a->kind == b->kind && a->flags == b->flags && a->s0.is_ap == b->s0.is_ap &&
           a->s1.is_ap == b->s1.is_ap && !memcmp(&a->s0.imm, &b->s0.imm, sizeof a->s0.imm) &&
           !memcmp(&a->s1.imm, &b->s1.imm, sizeof a->s1.imm) &&
           !memcmp((const char *)a + tail, (const char *)b + tail, sizeof *a - tail);
}

/* Two records that validate.c reads the same: the access pattern but for
 * the tensor, over tensors of the same kind, dtype and shape. */
static bool same_ap(const tir_kernel_t *k, const tir_ap_t *a, const tir_ap_t *p)
{
    if (a->tensor < 0 || p->tensor < 0 || a->tensor >= k->ntensors || p->tensor >= k->ntensors)
        return false;
    /* the dims in use only, as validate.c reads them (loops of at most six:
     * cheaper than memcmp calls of the whole arrays, this runs per operand) */
    if (a->ndim != p->ndim || a->offset != p->offset || a->view != p->view || a->ndim < 0 ||
        a->ndim > TIR_MAX_DIMS)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->step[d] != p->step[d] || a->count[d] != p->count[d])
            return false;
    const tir_tensor_t *ta = &k->tensors[a->tensor], *tp = &k->tensors[p->tensor];
    if (ta->kind != tp->kind || ta->dtype != tp->dtype || ta->ndim != tp->ndim ||
        ta->ndim < 0 || ta->ndim > TIR_MAX_DIMS)
        return false;
    for (int d = 0; d < ta->ndim; d++)
        if (ta->shape[d] != tp->shape[d])
            return false;
    return true;
}

/* The slots whose record differs from kept[] (bit i: slot i). */
static unsigned diff_slots(const tir_op_t *op, const tir_ap_t *const kept[NAPS])
{
#define D(i, f) ((unsigned)(op->f != kept[i]) << (i))
    return D(0, dst) | D(1, dst2) | D(2, src[0]) | D(3, src[1]) | D(4, src[2]) | D(5, src[3]) |
           D(6, index) | D(7, bias) | D(8, s0.ap) | D(9, s1.ap);
#undef D
}

/* same_ap, first through the builder's record of a whole AP taken from
 * the previous instance's (a loop body's fresh tile: the kept op's
 * record, refreshed at each hit, is that previous instance's). */
static bool same_ap_of(enc_builder_t *b, const tir_ap_t *a, const tir_ap_t *p)
{
    unsigned h = enc_derived_slot(a);
    if (b->derived[h].to == a && b->derived[h].from == p) {
        b->derived_hits++;
        return true;
    }
    return same_ap(b->k, a, p);
}

/* Two operands name one tensor in op exactly where they did in the kept
 * op (diff: the slots whose record changed, within used).  A pair of
 * unchanged slots holds the kept records: only the pairs with a changed
 * slot are compared, each once (two changed slots: from the lower). */
static bool same_sharing(const tir_ap_t *const aps[NAPS], const tir_ap_t *const kept[NAPS],
                         unsigned diff, unsigned used)
{
    for (unsigned m = diff; m; m &= m - 1) {
        int i = __builtin_ctz(m);
        for (unsigned o = used & ~(diff & ((2u << i) - 1)); o; o &= o - 1) {
            int j = __builtin_ctz(o);
            if ((aps[i]->tensor == aps[j]->tensor) != (kept[i]->tensor == kept[j]->tensor))
                return false;
        }
    }
    return true;
}

/* op's records against a kept op's (used: its present ones): each the
 * same record or same_ap, and two operands naming one tensor exactly
 * where the kept op's did; on a match the kept records become op's (they
 * pass the same). */
static bool same_operands(enc_builder_t *b, const tir_op_t *op, const tir_ap_t *kept[NAPS],
                          unsigned used)
{
    unsigned diff = diff_slots(op, kept);
    if (!diff)
        return true;
    if (diff & ~used)   /* an operand the kept op did not have */
        return false;
    const tir_ap_t *aps[NAPS];
    op_aps(op, aps);
    for (unsigned m = diff; m; m &= m - 1)
        if (!same_ap_of(b, aps[__builtin_ctz(m)], kept[__builtin_ctz(m)]))   /* or now absent */
            return false;
    if (!same_sharing(aps, kept, diff, used))
        return false;
    for (unsigned m = diff; m; m &= m - 1)
        kept[__builtin_ctz(m)] = aps[__builtin_ctz(m)];
    return true;
}

bool enc_op_check_hit(enc_builder_t *b, enc_op_check_t *rec, const tir_op_t *op)
{
    if (rec->k != b->k || rec->tg != b->target || op->rare->inl || op->rare->mask_more ||
        enc_is_collective(op->kind))
        return false;
    unsigned first = enc_memo2_first(rec->hit);   /* the entry likely to pass */
    for (unsigned n = 0; n < 2; n++) {
        unsigned e = first ^ n;
        if (rec->e[e].valid && same_fields(op, &rec->e[e].op) &&
            same_operands(b, op, rec->e[e].aps, rec->e[e].used)) {
            enc_memo2_note(rec->hit, e);
            return true;
        }
    }
    return false;
}

void enc_op_check_keep(const enc_builder_t *b, enc_op_check_t *rec, const tir_op_t *op)
{
    if (rec->k != b->k || rec->tg != b->target) {
        memset(rec, 0, sizeof *rec);
        rec->k = b->k;
        rec->tg = b->target;
    }
    unsigned e = rec->next;
    rec->next ^= 1u;
    rec->e[e].valid = true;
    op_aps(op, rec->e[e].aps);
    rec->e[e].used = 0;
    for (int i = 0; i < NAPS; i++)
        rec->e[e].used |= (unsigned)(rec->e[e].aps[i] != &tir_ap_none) << i;
    rec->e[e].op = *op;
}

void enc_set_op_check(enc_builder_t *b, enc_op_check_t *rec)
{
    b->op_check = rec;
}
