/* isa_plans.c - the planned encoder (isa.h "Encoding many instructions"):
 * per-format plans kept across calls, isa_encode_planned and its delta form
 * isa_encode_planned_from, which encodes an instruction from a similar one
 * encoded before.  Split from isa.c, which keeps the tables, the codec and
 * the plans' construction (isa_plan.h). */
#include "isa.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "isa_plan.h"

/* ------------------------------------------------------- planned encoding */
/* The plans of every format a caller met, built on first use (a format whose
 * plan cannot be allocated is planned on the stack per call instead). */
/* What isa_encode_planned_from needs beyond a format's plan (fields as bits,
 * indices into fld): the fields whose change needs the round trip's operand
 * or register check (a TAP's or a PTR's, a register field: a DAP's check
 * has nothing to test) and the fields with a bit in bytes 0..1 (the opcode
 * and header byte).  `ready`: worked out. */
typedef struct {
    bool ready;
    bool op_clear;       /* no field of the format has a bit in bytes 0..1 */
    uint64_t check[4];
} from_masks_t;

struct isa_plans {
    fmt_plan_t *fmt[ISA_FMT_COUNT];
    from_masks_t from[ISA_FMT_COUNT];
    /* per opcode: 1 when its l2 byte decodes back to it, 2 when not, 0 unknown */
    uint8_t self_l2[ISA_OP_COUNT];
    unsigned long fast_checks, full_checks;   /* isa_encode_planned's round trips */
};

void isa_plans_check_counts(const isa_plans_t *ps, unsigned long *fast, unsigned long *full)
{
    *fast = ps ? ps->fast_checks : 0;
    *full = ps ? ps->full_checks : 0;
}

isa_plans_t *isa_plans_new(void) { return calloc(1, sizeof(isa_plans_t)); }

void isa_plans_free(isa_plans_t *ps)
{
    if (!ps)
        return;
    for (unsigned i = 0; i < ISA_FMT_COUNT; i++)
        free(ps->fmt[i]);
    free(ps);
}

/* The plan of format fmt: the cached one, else built into *one. */
const fmt_plan_t *isa_plans_get(isa_plans_t *ps, isa_format_t fmt, fmt_plan_t *one)
{
    if (ps && !ps->fmt[fmt] && (ps->fmt[fmt] = malloc(sizeof(fmt_plan_t))) != NULL)
        isa_plan_build(ps->fmt[fmt], fmt);
    if (ps && ps->fmt[fmt])
        return ps->fmt[fmt];
    isa_plan_build(one, fmt);
    return one;
}

/* Write the low x->width bits of v at the field's position. */
static void plan_put(uint8_t *b, const plan_field_t *x, uint32_t v)
{
    uint64_t m = (uint64_t)x->mask << x->shift, w = isa_load_le64(b + x->byte);
    w = (w & ~m) | ((uint64_t)(v & x->mask) << x->shift);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(b + x->byte, &w, 8);
#else
    for (unsigned i = 0; i < 8; i++, w >>= 8)
        b[x->byte + i] = (uint8_t)w;
#endif
}

/* isa_encode's checks of one field value, in its order and words. */
static isa_status_t plan_check_value(const plan_field_t *x, const isa_opinfo_t *oi, uint32_t v,
                                     isa_err_t *err)
{
    const isa_field_t *f = x->f;
    if (x->kind == PF_SIGNED) {
        int32_t s = (int32_t)v;
        if (f->width < 32 && (s < -(int32_t)(1u << (f->width - 1)) ||
                              s > (int32_t)(1u << (f->width - 1)) - 1))
            return isa_fail(err, ISA_E_RANGE, 0, f->name,
                            "%s: field '%s' value %d does not fit %u signed bits", oi->mnemonic,
                            f->name, s, f->width);
        return ISA_OK;
    }
    if (f->width < 32 && v >> f->width)
        return isa_fail(err, ISA_E_RANGE, 0, f->name, "%s: field '%s' value %u does not fit %u bits",
                        oi->mnemonic, f->name, v, f->width);
    /* valid holds isa_enum_name's answer for every v < 64; none is >= 64 */
    if (x->kind == PF_ENUM && (v >= 64 || !(x->valid >> v & 1)))
        return isa_fail(err, ISA_E_RANGE, 0, f->name, "%s: field '%s' has invalid %s value %u",
                        oi->mnemonic, f->name, isa_ftype_name(f->type), v);
    return ISA_OK;
}

/* plan_check_value's verdict without its message: an unsigned value fits
 * the mask, a signed one shifted by half the range does (s in
 * [-2^(w-1), 2^(w-1)) exactly when s + 2^(w-1) is in [0, 2^w); w = 32: the
 * mask keeps every bit), an enum's value is also one with a name. */
static inline bool plan_value_fits(const plan_field_t *x, uint32_t v)
{
    uint32_t u = x->kind == PF_SIGNED ? v + (x->mask >> 1) + 1 : v;
    if (u & ~x->mask)
        return false;
    return x->kind != PF_ENUM || (v < 64 && (x->valid >> v & 1));
}

/* plan_check_value, its call (and message) only for a value that does not
 * fit. */
static inline isa_status_t plan_check_fast(const plan_field_t *x, const isa_opinfo_t *oi,
                                           uint32_t v, isa_err_t *err)
{
    return plan_value_fits(x, v) ? ISA_OK : plan_check_value(x, oi, v, err);
}

/* isa_encode through the format's plan: the same checks in the same order
 * (header fields, then the format's, in table order), the same bits, and
 * the same round trip through the decoder (isa_decode_fields with the
 * cached plan, which is what isa_decode runs after building one).
 *
 * The round trip without decoding the bits again, when the bundle decodes
 * as the same opcode and no two fields of the format share a bit
 * (p->disjoint, worked out from the table with the plan): then every bit
 * written is inside a field, so the reserved-bit test finds none; each
 * field reads back as the value written (an unsigned value fits its width,
 * a signed one its range: both checked above, so masking and sign
 * extension give it back), so the enum test repeats plan_check_value's on
 * the same value with the same `valid` set; and the struct the decoder
 * would fill is `dec` below (zero, the fields' values at their places), on
 * which the operand and register checks run as after decoding.  The same
 * status and message as the full round trip; otherwise that runs. */
isa_status_t isa_encode_planned(isa_plans_t *ps, const isa_inst_t *in,
                                uint8_t b[ISA_BUNDLE_BYTES], isa_err_t *err)
{
    if (!ps || (unsigned)in->op >= ISA_OP_COUNT)
        return isa_encode(in, b, err);
    const isa_opinfo_t *oi = &isa_ops[in->op];
    fmt_plan_t one;
    const fmt_plan_t *p = isa_plans_get(ps, oi->format, &one);
    if (p->generic)
        return isa_encode(in, b, err);
    memset(b, 0, ISA_BUNDLE_BYTES);
    b[0] = oi->l2;
    b[1] = ISA_HEADER_BYTE1;
    isa_inst_t dec;   /* what decoding b gives (p->disjoint) */
    memset(&dec, 0, sizeof dec);
    for (unsigned i = 0; i < p->nfld; i++) {
        const plan_field_t *x = &p->fld[i];
        uint32_t v;
        memcpy(&v, (const uint8_t *)in + x->dst, sizeof v);
        if (!v && x->zero_noop)
            continue;
        isa_status_t st = plan_check_fast(x, oi, v, err);
        if (st != ISA_OK)
            return st;
        plan_put(b, x, v);
        memcpy((uint8_t *)&dec + x->dst, &v, sizeof v);
    }
    const isa_opinfo_t *doi;
    isa_status_t st = isa_decode_opcode(b, 0, &doi, err);
    if (st != ISA_OK)
        return st;
    if (doi == oi && p->disjoint) {
        ps->fast_checks++;
        dec.op = oi->op;
        dec.l2 = oi->l2;
        const isa_fmtinfo_t *fi = &isa_formats[oi->format];
        st = plan_check_operands(&dec, fi, p, 0, err);
        return st == ISA_OK ? plan_check_regs(&dec, fi, p, 0, err) : st;
    }
    ps->full_checks++;
    if (doi->format != oi->format)
        p = isa_plans_get(ps, doi->format, &one);
    memset(&dec, 0, sizeof dec);
    return isa_decode_fields(b, 0, doi, p, &dec, err);
}

/* Mark field k (an index into fld; PLAN_NO_FIELD: none) in diff. */
static inline void diff_mark(uint64_t diff[4], unsigned k)
{
    if (k != PLAN_NO_FIELD)
        diff[k >> 6] |= 1ull << (k & 63);
}

/* Mark the word at byte `at` of isa_inst_t in diff when a and b differ there. */
static inline void diff_word(const fmt_plan_t *p, const uint8_t *x, const uint8_t *y, size_t at,
                             uint64_t diff[4])
{
    uint32_t u, v;
    memcpy(&u, x + at, 4);
    memcpy(&v, y + at, 4);
    if (u != v)
        diff_mark(diff, p->word_fld[at / 4]);
}

/* The fields (indices into p->fld, a bit each) whose 32-bit values differ
 * between a and b: the header and format words compared 8 bytes at a time,
 * a differing word mapped to its field (a word no field is stored in, such
 * as a TAP's dims 2..3, encodes nothing in this bundle). */
static void plan_diff(const fmt_plan_t *p, size_t body, const isa_inst_t *a, const isa_inst_t *b,
                      uint64_t diff[4])
{
    const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
    size_t at = offsetof(isa_inst_t, sync), end = offsetof(isa_inst_t, f) + (body & ~(size_t)3);
    _Static_assert(offsetof(isa_inst_t, f) == offsetof(isa_inst_t, sync) + sizeof(isa_sync_t),
                   "the header and the body are one run of words");
    for (; at + 8 <= end; at += 8) {
        uint64_t u, v;
        memcpy(&u, x + at, 8);
        memcpy(&v, y + at, 8);
        if (u != v) {   /* mostly all equal: the words one by one only here */
            diff_word(p, x, y, at, diff);
            diff_word(p, x, y, at + 4, diff);
        }
    }
    if (at < end)
        diff_word(p, x, y, at, diff);
}

/* Mark field i (an index into fld) in m. */
static void mask_set(uint64_t m[4], unsigned i) { m[i >> 6] |= 1ull << (i & 63); }

/* ps's from_masks_t of format fmt (p: its plan), worked out on first use. */
static const from_masks_t *from_masks(isa_plans_t *ps, isa_format_t fmt, const fmt_plan_t *p)
{
    from_masks_t *m = &ps->from[fmt];
    if (m->ready)
        return m;
    const isa_fmtinfo_t *fi = &isa_formats[fmt];
    unsigned base = isa_formats[ISA_FMT_HDR].nfields;   /* fld: the header's first */
    memset(m, 0, sizeof *m);
    m->op_clear = true;
    for (unsigned i = 0; i < p->nfld; i++)
        m->op_clear &= p->fld[i].f->bitpos >= 16;
    for (unsigned k = 0; k < p->nopnd; k++) {
        isa_opnd_kind_t kind = fi->fields[p->opnd[k]].opnd_kind;
        if (kind != ISA_OPND_TAP && kind != ISA_OPND_PTR)
            continue;   /* isa_check_operand tests nothing else */
        for (unsigned j = 0; j < p->opnd_span[k]; j++)
            mask_set(m->check, base + p->opnd[k] + j);
    }
    for (unsigned k = 0; k < p->nreg; k++)
        mask_set(m->check, base + p->reg[k]);
    m->ready = true;
    return m;
}

/* Whether oi's l2 byte decodes back to oi (isa_op_by_l2), asked once per
 * opcode. */
static bool l2_is_own(isa_plans_t *ps, const isa_opinfo_t *oi)
{
    uint8_t *k = &ps->self_l2[oi->op];
    if (!*k)
        *k = isa_op_by_l2(oi->l2) == oi ? 1 : 2;
    return *k == 1;
}

/* Whether a field of [lo, lo + n) (indices into fld, n <= 32) is in diff. */
static bool diff_any(const uint64_t diff[4], unsigned lo, unsigned n)
{
    uint64_t m = (1ull << n) - 1;
    unsigned q = lo >> 6, sh = lo & 63;
    uint64_t bits = diff[q] >> sh;
    if (sh + n > 64 && q < 3)
        bits |= diff[q + 1] << (64 - sh);
    return (bits & m) != 0;
}

/* The round trip's operand and register checks (plan_check_operands and
 * plan_check_regs, in their order) of the operands and registers with a
 * field in diff: each check reads only its own fields, which for the others
 * are the reference's, which passed. */
static isa_status_t changed_checks(const isa_inst_t *in, const fmt_plan_t *p,
                                   const uint64_t diff[4], isa_err_t *err)
{
    const isa_fmtinfo_t *fi = &isa_formats[isa_ops[in->op].format];
    unsigned base = isa_formats[ISA_FMT_HDR].nfields;   /* fld: the header's first */
    for (unsigned k = 0; k < p->nopnd; k++)
        if (diff_any(diff, base + p->opnd[k], p->opnd_span[k])) {
            isa_status_t st = isa_check_operand(in, &fi->fields[p->opnd[k]], 0, err);
            if (st != ISA_OK)
                return st;
        }
    for (unsigned k = 0; k < p->nreg; k++) {
        unsigned i = base + p->reg[k];
        if (!(diff[i >> 6] >> (i & 63) & 1))
            continue;
        const isa_field_t *f = &fi->fields[p->reg[k]];
        uint32_t v;
        memcpy(&v, (const uint8_t *)&in->f + f->offset, sizeof v);
        bool none_ok = p->reg_none_ok[k];
        if (v >= ISA_NUM_REGS && !(none_ok && v == ISA_REG_NONE))
            return plan_check_regs(in, fi, p, 0, err);   /* its message */
    }
    return ISA_OK;
}

/* isa_encode_planned(ps, in, b, err) when `ref`, an instruction of the same
 * opcode, was encoded by it into ref_b with ISA_OK: the same bytes, status
 * and message with only the fields that differ checked and rewritten.
 * Why that is the same: the fields share no bit (p->disjoint), so every bit
 * of the bundle is the opcode's or one field's; a field equal in both
 * writes ref's bits and passed (or, 0 and zero_noop, skipped) the same
 * check for ref, so the first field failing for `in` in table order is
 * among the differing ones, visited in table order.  The round trip's
 * operand and register checks run on `in` itself: they read only field
 * members (a TAP's ten, a PTR's three, the register fields), whose bytes
 * are those isa_encode_planned's `dec` holds.  Anything else (another
 * opcode, a generic or overlapping format, a header byte that no longer
 * decodes to this opcode) takes isa_encode_planned. */
static isa_status_t planned_from(isa_plans_t *ps, const fmt_plan_t *p, const isa_inst_t *in,
                                 const isa_inst_t *ref, const uint8_t ref_b[ISA_BUNDLE_BYTES],
                                 uint8_t b[ISA_BUNDLE_BYTES], isa_err_t *err)
{
    if (p->generic || !p->disjoint)
        return isa_encode_planned(ps, in, b, err);
    const isa_opinfo_t *oi = &isa_ops[in->op];
    uint64_t diff[4] = {0};
    _Static_assert(PLAN_MAX_HDR_FIELDS + PLAN_MAX_FIELDS <= 256, "diff has a bit per field");
    plan_diff(p, isa_formats[oi->format].struct_size, in, ref, diff);
    memcpy(b, ref_b, ISA_BUNDLE_BYTES);
    for (unsigned q = 0; q < 4; q++)
        for (uint64_t m = diff[q]; m; m &= m - 1) {
            const plan_field_t *x = &p->fld[q * 64 + (unsigned)__builtin_ctzll(m)];
            uint32_t v;
            memcpy(&v, (const uint8_t *)in + x->dst, sizeof v);
            isa_status_t st = plan_check_fast(x, oi, v, err);
            if (st != ISA_OK)
                return st;
            plan_put(b, x, v);
        }
    const from_masks_t *fm = from_masks(ps, oi->format, p);
    /* no field has a bit in bytes 0..1: they are ref_b's, oi's l2 and the
     * header byte, which decode to oi when its l2 is its own */
    if (!fm->op_clear || !l2_is_own(ps, oi)) {
        const isa_opinfo_t *doi;
        isa_status_t st = isa_decode_opcode(b, 0, &doi, err);
        if (st != ISA_OK || doi != oi)
            return isa_encode_planned(ps, in, b, err);
    }
    ps->fast_checks++;
    uint64_t checked = (diff[0] & fm->check[0]) | (diff[1] & fm->check[1]) |
                       (diff[2] & fm->check[2]) | (diff[3] & fm->check[3]);
    return checked ? changed_checks(in, p, diff, err) : ISA_OK;
}

isa_status_t isa_encode_planned_from(isa_plans_t *ps, const isa_inst_t *in, const isa_inst_t *ref,
                                     const uint8_t ref_b[ISA_BUNDLE_BYTES],
                                     uint8_t b[ISA_BUNDLE_BYTES], isa_err_t *err)
{
    if (!ps || !ref || ref->op != in->op || (unsigned)in->op >= ISA_OP_COUNT)
        return isa_encode_planned(ps, in, b, err);
    fmt_plan_t one;
    return planned_from(ps, isa_plans_get(ps, isa_ops[in->op].format, &one), in, ref, ref_b, b,
                        err);
}

/* The TAP of ApExt slot s of `in` (p: its format's plan, or NULL). */
static inline const isa_tap_t *slot_tap(const fmt_plan_t *p, const isa_fmtinfo_t *fi,
                                        const isa_inst_t *in, int s)
{
    if (!p)
        return isa_tap_by_slot(in, fi, s);
    if (p->generic)
        return isa_plan_tap(p, (isa_inst_t *)in, s);
    return p->tap_slot[s] ? (const isa_tap_t *)((const uint8_t *)&in->f + p->tap_slot[s]->offset)
                          : NULL;
}

/* isa_encode_with_prefixes_planned, the main bundle encoded from `ref` and
 * its main bundle ref_b when ref is not NULL (isa_encode_planned_from). */
static isa_status_t encode_with_prefixes(isa_plans_t *ps, const isa_inst_t *in,
                                         const isa_inst_t *ref,
                                         const uint8_t ref_b[ISA_BUNDLE_BYTES],
                                         uint8_t out[2][ISA_BUNDLE_BYTES], unsigned *nbundles,
                                         isa_err_t *err)
{
    *nbundles = 0;
    if ((unsigned)in->op >= ISA_OP_COUNT) /* before indexing isa_ops */
        return isa_encode(in, out[0], err);
    const isa_fmtinfo_t *fi = &isa_formats[isa_ops[in->op].format];
    fmt_plan_t one;
    const fmt_plan_t *p = ps ? isa_plans_get(ps, isa_ops[in->op].format, &one) : NULL;
    bool need_ext = false;
    isa_inst_t ext;
    uint32_t *slots = (uint32_t *)&ext.f.APEXT; /* o0_step2,o0_count2,o0_step3,o0_count3,o1_... */
    /* a planned format without a TAP in an ApExt slot needs no look */
    bool taps = !p || p->generic || p->tap_slot[0] || p->tap_slot[1] || p->tap_slot[2];
    for (int s = 0; taps && s < 3; s++) {
        const isa_tap_t *t = slot_tap(p, fi, in, s);
        if (!t || t->ndims <= 2)
            continue;
        if (!need_ext) {   /* all isa_encode reads of it */
            memset(&ext, 0, offsetof(isa_inst_t, f) + sizeof ext.f.APEXT);
            ext.op = ISA_OP_AP_EXT;
        }
        need_ext = true;
        slots[s * 4 + 0] = (uint32_t)t->step[2];
        slots[s * 4 + 1] = t->count[2];
        slots[s * 4 + 2] = (uint32_t)(t->ndims > 3 ? t->step[3] : 0);
        slots[s * 4 + 3] = t->ndims > 3 ? t->count[3] : 0;
    }
    unsigned n = 0;
    isa_status_t st;
    if (need_ext) {
        if ((st = isa_encode_planned(ps, &ext, out[n++], err)) != ISA_OK)
            return st;
    }
    if (ref && p && ref->op == in->op)   /* isa_encode_planned_from with p */
        st = planned_from(ps, p, in, ref, ref_b, out[n++], err);
    else
        st = ref ? isa_encode_planned_from(ps, in, ref, ref_b, out[n++], err)
                 : isa_encode_planned(ps, in, out[n++], err);
    if (st != ISA_OK)
        return st;
    *nbundles = n;
    return ISA_OK;
}

/* isa_encode_with_prefixes; ps NULL: isa_encode and the table walk. */
isa_status_t isa_encode_with_prefixes_planned(isa_plans_t *ps, const isa_inst_t *in,
                                              uint8_t out[2][ISA_BUNDLE_BYTES],
                                              unsigned *nbundles, isa_err_t *err)
{
    return encode_with_prefixes(ps, in, NULL, NULL, out, nbundles, err);
}

isa_status_t isa_encode_with_prefixes_from(isa_plans_t *ps, const isa_inst_t *in,
                                           const isa_inst_t *ref,
                                           const uint8_t ref_b[ISA_BUNDLE_BYTES],
                                           uint8_t out[2][ISA_BUNDLE_BYTES], unsigned *nbundles,
                                           isa_err_t *err)
{
    return encode_with_prefixes(ps, in, ref, ref_b, out, nbundles, err);
}

isa_status_t isa_encode_with_prefixes(const isa_inst_t *in, uint8_t out[2][ISA_BUNDLE_BYTES],
                                      unsigned *nbundles, isa_err_t *err)
{
    return isa_encode_with_prefixes_planned(NULL, in, out, nbundles, err);
}

