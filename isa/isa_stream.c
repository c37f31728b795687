/* isa_stream.c - decoding a whole .bin stream: prefixes folded into the
 * instruction they extend, one decode plan per format for the stream. */
#include <stdlib.h>
#include <string.h>

#include "hugepage.h"
#include "isa.h"
#include "isa_plan.h"

static isa_status_t fold_apext(isa_inst_t *in, const fmt_plan_t *p, const isa_fmt_APEXT_t *x,
                               size_t offset, isa_err_t *err)
{
    const uint32_t *slots = (const uint32_t *)x;
    bool used = false;
    for (int s = 0; s < 3; s++) {
        isa_tap_t *t = isa_plan_tap(p, in, s);
        bool has = slots[s * 4 + 0] || slots[s * 4 + 1] || slots[s * 4 + 2] || slots[s * 4 + 3];
        if (!t || t->ndims <= 2) {
            if (has)
                return isa_fail(err, ISA_E_PREFIX, offset, "ApExt",
                            "ApExt slot %d is set but operand slot %d of %s has at most 2 dims",
                            s, s, isa_ops[in->op].mnemonic);
            continue;
        }
        used = true;
        t->step[2] = (int32_t)slots[s * 4 + 0];
        t->count[2] = slots[s * 4 + 1];
        t->step[3] = t->ndims > 3 ? (int32_t)slots[s * 4 + 2] : 0;
        t->count[3] = t->ndims > 3 ? slots[s * 4 + 3] : 0;
        if (t->ndims <= 3 && (slots[s * 4 + 2] || slots[s * 4 + 3]))
            return isa_fail(err, ISA_E_PREFIX, offset, "ApExt",
                        "ApExt slot %d sets dim 3 but the operand has 3 dims", s);
        for (unsigned d = 2; d < t->ndims; d++)
            if (t->count[d] == 0)
                return isa_fail(err, ISA_E_RANGE, offset, "ApExt",
                            "ApExt slot %d: count%u is 0", s, d);
    }
    if (!used)
        return isa_fail(err, ISA_E_PREFIX, offset, "ApExt",
                    "ApExt precedes %s, which has no operand with more than 2 free dims",
                    isa_ops[in->op].mnemonic);
    return ISA_OK;
}

static bool needs_apext(isa_inst_t *in, const fmt_plan_t *p)
{
    for (int s = 0; s < 3; s++) {
        const isa_tap_t *t = isa_plan_tap(p, in, s);
        if (t && t->ndims > 2)
            return true;
    }
    return false;
}

static bool sync_is_zero(const isa_sync_t *s)
{
    return !s->wait_en && !s->upd_en && !s->upd_at_read && !s->upd_remote && !s->wait_sem &&
           !s->wait_reg && !s->wait_val && !s->upd_sem && !s->upd_op && !s->upd_core && !s->upd_val;
}

/* One bundle of a stream: decode into *in with the format's cached plan,
 * or with a plan built into *one when there is no cache (a short stream:
 * building the few plans it needs is cheaper than a cache for every
 * format).  Same checks and errors as isa_decode. */
static isa_status_t stream_decode_bundle(const uint8_t *b, size_t off, isa_plans_t *ps,
                                         fmt_plan_t *plans, fmt_plan_t *one, isa_inst_t *in,
                                         const fmt_plan_t **plan, isa_err_t *err)
{
    memset(in, 0, sizeof *in);
    const isa_opinfo_t *oi;
    isa_status_t st = isa_decode_opcode(b, off, &oi, err);
    if (st != ISA_OK)
        return st;
    const fmt_plan_t *p;
    if (ps) {
        p = isa_plans_get(ps, oi->format, one);
    } else {
        fmt_plan_t *q = plans ? &plans[oi->format] : one;
        if (!plans || !q->built)
            isa_plan_build(q, oi->format);
        p = q;
    }
    *plan = p;
    return isa_decode_fields(b, off, oi, p, in, err);
}

/* The 2nd.. PredExt before one instruction (their predicates are ANDed with
 * the first's): at most ISA_MAX_PREDEXT in all, with the first's fill and
 * keep; stored at out->preds_more[at + n] (the array is allocated on the
 * first such prefix, one entry per bundle, so it never moves). */
static isa_status_t more_pred(isa_stream_t *out, size_t nb, size_t at,
                              const isa_fmt_PREDEXT_t *first, const isa_fmt_PREDEXT_t *p,
                              unsigned n, size_t off, isa_err_t *err)
{
    if (n + 1 >= ISA_MAX_PREDEXT)
        return isa_fail(err, ISA_E_PREFIX, off, "prefix", "more than %d PredExt prefixes before "
                    "one instruction", ISA_MAX_PREDEXT);
    if (memcmp(&p->fill, &first->fill, sizeof p->fill) || p->keep != first->keep)
        return isa_fail(err, ISA_E_PREFIX, off, "PredExt", "the PredExt prefixes of one "
                    "instruction must share fill and keep (their predicates are ANDed)");
    if (!out->preds_more && !(out->preds_more = calloc(nb, sizeof *out->preds_more)))
        return isa_fail(err, ISA_E_NOMEM, 0, NULL, "out of memory");
    out->preds_more[at + n] = *p;
    return ISA_OK;
}

isa_status_t isa_stream_decode(const uint8_t *buf, size_t len, isa_engine_t engine,
                               isa_stream_t *out, isa_err_t *err)
{
    return isa_stream_decode_planned(NULL, buf, len, engine, out, err);
}

/* ps: the caller's plans (a short stream then costs no plan building). */
isa_status_t isa_stream_decode_planned(isa_plans_t *ps, const uint8_t *buf, size_t len,
                                       isa_engine_t engine, isa_stream_t *out, isa_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (len % ISA_BUNDLE_BYTES)
        return isa_fail(err, ISA_E_SIZE, len - len % ISA_BUNDLE_BYTES, "size",
                    "size %zu is not a multiple of 64 (%zu trailing bytes)", len,
                    len % ISA_BUNDLE_BYTES);
    size_t nb = len / ISA_BUNDLE_BYTES;
    /* a long stream's arrays in huge pages (tpb_array_zalloc): one fault
     * per 2 MiB, not per 4 KiB; isa_stream_free frees them by this size */
    out->nbundles = nb;
    out->insts = tpb_array_zalloc((nb ? nb : 1) * sizeof *out->insts);
    out->pc_to_index = tpb_array_zalloc((nb ? nb : 1) * sizeof *out->pc_to_index);
    bool own = nb > 4 && !ps;   /* a plan per format for this stream */
    fmt_plan_t one, *plans = own ? calloc(ISA_FMT_COUNT, sizeof *plans) : NULL;
    if (!out->insts || !out->pc_to_index || (own && !plans)) {
        free(plans);
        isa_stream_free(out);
        return isa_fail(err, ISA_E_NOMEM, 0, NULL, "out of memory");
    }
    bool have_ext = false, have_pred = false;
    isa_fmt_APEXT_t ext;
    isa_fmt_PREDEXT_t pred;
    unsigned npred_more = 0;
    size_t npred_at = 0;   /* next free entry of out->preds_more */
    size_t first_prefix = 0;
    isa_status_t st = ISA_OK;
    for (size_t i = 0; i < nb; i++) {
        size_t off = i * ISA_BUNDLE_BYTES;
        /* decode in place: a prefix is copied out and its slot reused */
        isa_decoded_t *d = &out->insts[out->count];
        isa_inst_t *in = &d->inst;
        const fmt_plan_t *plan;
        if ((st = stream_decode_bundle(buf + off, off, ps, plans, &one, in, &plan, err)) != ISA_OK)
            goto bad;
        if (engine != ISA_ENG_UNASSIGNED && !(isa_ops[in->op].engines & (1u << engine))) {
            st = isa_fail(err, ISA_E_ENGINE, off, "opcode", "%s is not legal on engine %s",
                      isa_ops[in->op].mnemonic, isa_engine_name(engine));
            goto bad;
        }
        if (isa_ops[in->op].cls == ISA_CLASS_PREFIX) {
            if (!sync_is_zero(&in->sync)) {
                st = isa_fail(err, ISA_E_PREFIX, off, "sync", "%s: a prefix carries no semaphore fields",
                          isa_ops[in->op].mnemonic);
                goto bad;
            }
            if (in->op == ISA_OP_AP_EXT && have_ext) {
                st = isa_fail(err, ISA_E_PREFIX, off, "prefix", "two %s prefixes in a row",
                          isa_ops[in->op].mnemonic);
                goto bad;
            }
            if (!have_ext && !have_pred)
                first_prefix = i;
            if (in->op == ISA_OP_AP_EXT) {
                have_ext = true;
                ext = in->f.APEXT;
            } else if (!have_pred) {
                have_pred = true;
                pred = in->f.PREDEXT;
                npred_more = 0;
            } else if ((st = more_pred(out, nb, npred_at, &pred, &in->f.PREDEXT, npred_more, off,
                                 err)) !=
                       ISA_OK) {
                goto bad;
            } else {
                npred_more++;
            }
            continue;
        }
        if (have_ext) {
            if ((st = fold_apext(in, plan, &ext, off, err)) != ISA_OK)
                goto bad;
        } else if (needs_apext(in, plan)) {
            st = isa_fail(err, ISA_E_PREFIX, off, "ndims",
                      "%s has an operand with more than 2 free dims but no ApExt prefix",
                      isa_ops[in->op].mnemonic);
            goto bad;
        }
        if (have_pred && in->op != ISA_OP_TENSOR_SCALAR_PTR) {
            st = isa_fail(err, ISA_E_PREFIX, off, "PredExt", "PredExt precedes %s; only TensorScalarPtr takes it",
                      isa_ops[in->op].mnemonic);
            goto bad;
        }
        d->pc = (uint32_t)i;
        d->prefix_pc = (uint32_t)((have_ext || have_pred) ? first_prefix : i);
        d->has_pred = have_pred;
        d->npred_more = 0;
        d->pred_more = NULL;
        if (have_pred) {
            d->pred = pred;
            d->npred_more = (uint8_t)npred_more;
            d->pred_more = npred_more ? out->preds_more + npred_at : NULL;
            npred_at += npred_more;
        }
        for (size_t p = d->prefix_pc; p <= i; p++)
            out->pc_to_index[p] = (uint32_t)out->count;
        out->count++;
        have_ext = have_pred = false;
    }
    if (have_ext || have_pred) {
        st = isa_fail(err, ISA_E_PREFIX, first_prefix * ISA_BUNDLE_BYTES, "prefix",
                  "prefix at the end of the stream extends no instruction");
        goto bad;
    }
    free(plans);
    return ISA_OK;
bad:
    free(plans);
    isa_stream_free(out);
    return st;
}

void isa_stream_free(isa_stream_t *s)
{
    free(s->preds_more);
    size_t nb = s->nbundles ? s->nbundles : 1;   /* as isa_stream_decode_planned allocated */
    tpb_array_free(s->insts, nb * sizeof *s->insts);
    tpb_array_free(s->pc_to_index, nb * sizeof *s->pc_to_index);
    memset(s, 0, sizeof *s);
}
