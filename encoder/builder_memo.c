/* builder_memo.c - operand access patterns through the builder's memos
 * (builder.h enc_ap_memo, enc_ap_memo_interned): an operand text's
 * two-entry memo, a tensor's whole record interned once, and a loop
 * body's new tile taking its previous instance's record and check pass
 * (docs/performance-log.md, the front-end per op, second and third rounds). */
#include "builder.h"
#include "validate_int.h"   /* is_tile_kind */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool same_slice(const enc_slice_t *x, const enc_slice_t *y)
{
    return x->kind == y->kind && x->start == y->start && x->stop == y->stop &&
           x->step == y->step && x->has_start == y->has_start && x->has_stop == y->has_stop;
}

static bool memo_hit(const enc_ap_memo_entry_t *e, const tir_tensor_t *t, int nslices,
                     const enc_slice_t *s)
{
    if (!e->valid || e->tile != is_tile_kind(t->kind) || e->nd != t->ndim || e->ns != nslices)
        return false;
    for (int d = 0; d < t->ndim; d++)   /* (a loop: at most 6 dims, cheaper than a memcmp call) */
        if (e->shape[d] != t->shape[d])
            return false;
    for (int i = 0; i < nslices; i++)
        if (!same_slice(&e->sl[i], &s[i]))
            return false;
    return true;
}

/* enc_ap through m: the entry holding the answer (a hit, or the miss
 * recorded), NULL when not memoised (*out is enc_ap's answer either way). */
static enc_ap_memo_entry_t *memo_ap(enc_builder_t *b, enc_ap_memo_t *m, int tensor, int nslices,
                                    const enc_slice_t *s, const char *field, tir_ap_t *out)
{
    if (!m || b->failed || tensor < 0 || tensor >= b->k->ntensors || nslices < 0 ||
        nslices > TIR_MAX_DIMS || (nslices > 0 && !s)) {
        enc_ap_into(b, tensor, nslices, s, field, out);
        return NULL;
    }
    const tir_tensor_t *t = &b->k->tensors[tensor];
    unsigned first = enc_memo2_first(m->hit);
    for (unsigned n = 0; n < 2; n++) {
        unsigned i = first ^ n;
        if (memo_hit(&m->e[i], t, nslices, s)) {
            enc_memo2_note(m->hit, i);
            *out = m->e[i].ap;
            out->tensor = tensor;
            return &m->e[i];
        }
    }
    enc_ap_into(b, tensor, nslices, s, field, out);
    if (b->failed || t->ndim < 0 || t->ndim > TIR_MAX_DIMS)
        return NULL;
    enc_ap_memo_entry_t *e = &m->e[m->next];
    m->next ^= 1u;
    *e = (enc_ap_memo_entry_t){.valid = true, .tile = is_tile_kind(t->kind), .nd = t->ndim,
                               .ns = nslices, .ap = *out, .itensor = -1};
    memcpy(e->shape, t->shape, (size_t)t->ndim * sizeof *t->shape);
    if (nslices)
        memcpy(e->sl, s, (size_t)nslices * sizeof *s);
    return e;
}

void enc_ap_memo(enc_builder_t *b, enc_ap_memo_t *m, int tensor, int nslices,
                 const enc_slice_t *s, const char *field, tir_ap_t *out)
{
    memo_ap(b, m, tensor, nslices, s, field, out);
}

/* The builder's per-tensor slot for its whole access pattern interned
 * (NULL until set; a tensor not declared through the builder has one too);
 * NULL: out of memory. */
static const tir_ap_t **full_slot(enc_builder_t *b, int tensor)
{
    if (tensor >= b->cap_tensor_info && enc_grow_tensor_info(b, tensor))
        return NULL;
    return &b->tinfo[tensor].full_ap;
}

/* The name entry a tensor was declared under, NULL when none. */
static struct enc_name_entry *tensor_entry(enc_builder_t *b, int tensor)
{
    if (tensor >= b->cap_tensor_info)
        return NULL;
    int e = abs(b->tinfo[tensor].entry1) - 1;   /* retired or not */
    return e >= 0 && e < b->nnames ? &b->names[e] : NULL;
}

/* A tile declared anew (a loop body's next instance) passes the operand
 * checks its name's previous instance passed, when its whole access
 * pattern is that one's but for the tensor (validate.c checks it). */
static void full_alias(enc_builder_t *b, int tensor, const tir_ap_t *r)
{
    struct enc_name_entry *e = tensor_entry(b, tensor);
    if (!e)
        return;
    if (e->last_full && b->check_memo)
        enc_check_memo_alias(b->check_memo, b->k, b->target, e->last_full, r);
    e->last_full = r;
}

/* A new tensor's whole access pattern from its name's previous instance
 * (a loop body's tile declared anew): enc_ap with no slices reads of the
 * tensor only whether it is a tile and its shape (memo_hit keys on the
 * same), so an instance of the same kind and shape has that record but for
 * the tensor (and, the kind being equal too, that record's operand-check
 * pass: full_alias).  False (out untouched) when there is none to
 * take it from. */
static bool full_from_previous(enc_builder_t *b, int tensor, tir_ap_t *out,
                               const tir_ap_t **from)
{
    const struct enc_name_entry *e = tensor_entry(b, tensor);
    const tir_ap_t *prev = e ? e->last_full : NULL;
    if (!prev || prev->tensor < 0 || prev->tensor >= b->k->ntensors || prev->tensor == tensor)
        return false;
    const tir_tensor_t *p = &b->k->tensors[prev->tensor], *t = &b->k->tensors[tensor];
    if (p->kind != t->kind || p->ndim != t->ndim || t->ndim < 0 ||
        t->ndim > TIR_MAX_DIMS)
        return false;
    for (int d = 0; d < t->ndim; d++)
        if (p->shape[d] != t->shape[d])
            return false;
    *out = *prev;
    out->tensor = tensor;
    *from = prev;
    b->full_derived++;
    return true;
}

/* r (interned: equal to prev but for the tensor, full_from_previous) over
 * a tensor of prev's kind and shape: kept for enc_op_check when the dtype
 * is prev's too (its same_ap in one look-up). */
static void note_derived(enc_builder_t *b, const tir_ap_t *prev, const tir_ap_t *r)
{
    if (r->tensor != prev->tensor &&
        b->k->tensors[r->tensor].dtype == b->k->tensors[prev->tensor].dtype) {
        unsigned h = enc_derived_slot(r);
        b->derived[h].to = r;
        b->derived[h].from = prev;
    }
}

/* (builder.h) r (interned) is ap_over's answer over its tensor's own shape
 * (enc_ap_into, no dtype view) for a tensor declared here: it passes check_ap
 * (validate_ap.c) by construction, so the builder's check memo is told so
 * and the op naming it next is not checked again (compile-live: every
 * operand is new; 9 000 checks, 2.4 M instructions).  Why it passes:
 * add_tensor let the tensor through only with 1..1 + ISA_MAX_FREE_DIMS
 * dims for a tile (TIR_MAX_DIMS otherwise), every dim 1..2^40, at most
 * 2^40 elements and a tile's partition dim within the target's (checked
 * again here, for a target set later); ap_over keeps each dim's start
 * inside it and its last element before the clipped stop, with positive
 * steps, so the record reaches elements inside the tensor, at most its
 * element count, a tile's dim 0 is the partition dim and its other dims
 * stay inside one partition row.  The one rule that depends on the op: a
 * tile's partition step other than the row (a slice step on dim 0) only a
 * direct DMA may take (`any` false).  A tensor not declared here (entry1
 * 0: no such guarantee) is left to the check. */
void enc_note_built(enc_builder_t *b, const tir_ap_t *r)
{
    enc_check_memo_t *m = b->check_memo;
    int t = r->tensor;
    if (!m || m->k != b->k || m->tg != b->target || r->view || t < 0 ||
        t >= b->cap_tensor_info || !b->tinfo[t].entry1)
        return;
    const tir_tensor_t *tt = &b->k->tensors[t];
    bool any = true;
    if (is_tile_kind(tt->kind)) {
        if (r->ndim < 1 || r->count[0] > (int64_t)b->target->partitions)
            return;
        int64_t row = 1;
        for (int d = 1; d < tt->ndim; d++)
            row *= tt->shape[d];
        any = r->count[0] == 1 || r->step[0] == row;
    }
    enc_check_memo_pass(m, r, any, b->tinfo[t].full_ap == r);
}

const tir_ap_t *enc_ap_interned(enc_builder_t *b, int tensor, int nslices, const enc_slice_t *s,
                                const char *field)
{
    const tir_ap_t **full = NULL;
    struct enc_name_entry *e = NULL;
    if (nslices == 0) {
        /* a whole record: enc_ap_memo_interned's steps without a memo where
         * the answer is new and the name's first (a flat body's tile at its
         * first use: no record to reuse or take over, full_from_previous and
         * full_alias have nothing to do but remember it) */
        if (b->failed || tensor < 0 || tensor >= b->k->ntensors || !(full = full_slot(b, tensor)) ||
            *full || !(e = tensor_entry(b, tensor)) || e->last_full) {
            bool found = full && *full;
            const tir_ap_t *r = enc_ap_memo_interned(b, NULL, tensor, 0, s, field);
            if (r && !found)
                enc_note_built(b, r);
            return r;
        }
    }
    tir_ap_t ap;
    enc_ap_into(b, tensor, nslices, s, field, &ap);
    const tir_ap_t *r = b->failed ? NULL : tir_ap_intern(b->k, &ap);
    if (!r)
        return NULL;
    if (full)
        *full = e->last_full = r;
    enc_note_built(b, r);
    return r;
}

const tir_ap_t *enc_ap_full_interned(enc_builder_t *b, int tensor)
{
    if (b->failed || tensor < 0 || tensor >= b->k->ntensors || tensor >= b->cap_tensor_info)
        return NULL;
    const tir_ap_t *r = b->tinfo[tensor].full_ap;
    b->full_ap_hits += r != NULL;
    return r;
}

const tir_ap_t *enc_ap_memo_interned(enc_builder_t *b, enc_ap_memo_t *m, int tensor, int nslices,
                                     const enc_slice_t *s, const char *field)
{
    /* a tensor's shape and kind never change, so neither does its whole
     * access pattern: one answer per tensor, whichever operand text asks */
    const tir_ap_t **full = NULL;
    if (nslices == 0 && !b->failed && tensor >= 0 && tensor < b->k->ntensors) {
        if (!(full = full_slot(b, tensor)))
            return NULL;
        if (*full) {
            b->full_ap_hits++;
            return *full;
        }
    }
    tir_ap_t ap;
    enc_ap_memo_entry_t *e = NULL;
    const tir_ap_t *prev = NULL;
    bool derived = full && full_from_previous(b, tensor, &ap, &prev);
    if (!derived)
        e = memo_ap(b, m, tensor, nslices, s, field, &ap);
    if (b->failed)
        return NULL;
    if (e && e->iap && e->itensor == tensor)   /* the same tensor and slices as last time */
        return e->iap;
    const tir_ap_t *r = tir_ap_intern(b->k, &ap);
    if (r && e) {
        e->iap = r;
        e->itensor = tensor;
    }
    if (r && full) {
        *full = r;
        full_alias(b, tensor, r);
        if (derived)
            note_derived(b, prev, r);
    }
    return r;
}
