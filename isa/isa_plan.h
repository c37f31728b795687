/* isa_plan.h - internal to isa/: the per-format decode plans shared by the
 * bundle codec (isa.c), the stream decoder (isa_stream.c) and the planned
 * encoder (isa_plans.c).  Not part of the public ISA API. */
#ifndef TPB_ISA_PLAN_H
#define TPB_ISA_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "isa.h"

#define PLAN_MAX_FIELDS 128
#define PLAN_MAX_HDR_FIELDS 32
#define PLAN_NO_FIELD 0xFF
_Static_assert(PLAN_MAX_HDR_FIELDS + PLAN_MAX_FIELDS < PLAN_NO_FIELD, "word_fld holds a field index");
/* One field as the decode loop needs it: 8 little-endian bundle bytes
 * from `byte`, shifted right by `shift` and masked, land at byte `dst` of
 * isa_inst_t.  byte <= 56 and shift + width <= 64 (see plan_field). */
typedef enum { PF_PLAIN, PF_SIGNED, PF_ENUM } plan_fkind_t;
typedef struct {
    const isa_field_t *f;               /* for the enum check and its error */
    uint64_t valid;                     /* enums: bit v set = isa_enum_name(type, v) */
    uint32_t mask;
    uint16_t dst;
    uint8_t byte, shift, width, kind;
    /* a 0 in this field changes nothing isa_encode_planned writes or checks:
     * 0 passes its checks, the format's fields share no bit and this one is
     * clear of the header bytes, so writing 0 into the cleared bundle (and
     * the cleared `dec`) is a no-op; most fields of an instruction are 0.
     * (With today's table every field of every instruction format
     * qualifies; the conditions keep it right if the table changes.) */
    bool zero_noop;
    /* 0 is a valid value (not an enum without a name for 0): decoding it
     * into the caller's zeroed struct writes nothing new */
    bool zero_ok;
} plan_field_t;
typedef struct {
    bool built;
    bool generic;                       /* too many fields: use the helpers */
    bool disjoint;                      /* no bit belongs to two fields (header
                                           and format): isa_encode_planned's
                                           round trip needs no decode */
    uint8_t used[ISA_BUNDLE_BYTES];     /* header + format bits */
    uint8_t nopnd, nreg;
    uint8_t opnd[PLAN_MAX_FIELDS];      /* format field index of each ".addr" */
    uint8_t opnd_span[PLAN_MAX_FIELDS]; /* its fields: that one and the next span - 1 */
    uint8_t reg[PLAN_MAX_FIELDS];       /* format field index of each register */
    bool reg_none_ok[PLAN_MAX_FIELDS];  /* src_reg / dst_reg accept 0xFF */
    const isa_field_t *tap_slot[3];     /* ApExt slot -> TAP ".addr", or NULL */
    /* per 32-bit word of isa_inst_t: the index in fld of the field stored
     * there, PLAN_NO_FIELD for none (isa_encode_planned_from's diff) */
    uint8_t word_fld[sizeof(isa_inst_t) / 4];
    unsigned nfld;                      /* header then format fields (not generic) */
    plan_field_t fld[PLAN_MAX_HDR_FIELDS + PLAN_MAX_FIELDS]; /* last: not cleared */
} fmt_plan_t;


/* Shared by isa.c and isa_plans.c: 8 bundle bytes as a little-endian
 * number; the decoder's structural check of one operand (f: its ".addr"
 * field); the operand and register checks through a plan; the TAP of ApExt
 * slot `slot` found by name. */
static inline uint64_t isa_load_le64(const uint8_t *b)
{
    uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&v, b, 8);
#else
    for (unsigned i = 8; i-- > 0;)
        v = (v << 8) | b[i];
#endif
    return v;
}
isa_status_t isa_check_operand(const isa_inst_t *in, const isa_field_t *f, size_t offset,
                               isa_err_t *err);
isa_status_t plan_check_operands(const isa_inst_t *in, const isa_fmtinfo_t *fi,
                                 const fmt_plan_t *p, size_t offset, isa_err_t *err);
isa_status_t plan_check_regs(const isa_inst_t *in, const isa_fmtinfo_t *fi, const fmt_plan_t *p,
                             size_t offset, isa_err_t *err);
const isa_tap_t *isa_tap_by_slot(const isa_inst_t *in, const isa_fmtinfo_t *fi, int slot);

/* Fill *err (when not NULL) and return st. */
isa_status_t isa_fail(isa_err_t *err, isa_status_t st, size_t offset, const char *field,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The plan of format fmt kept in ps (built on first use), or built into
 * *one when it cannot be allocated. */
const fmt_plan_t *isa_plans_get(isa_plans_t *ps, isa_format_t fmt, fmt_plan_t *one);
/* Work out the plan of format fmt from the field table. */
void isa_plan_build(fmt_plan_t *p, isa_format_t fmt);
/* The TAP of ApExt slot s of `in`, or NULL. */
isa_tap_t *isa_plan_tap(const fmt_plan_t *p, isa_inst_t *in, int s);
/* isa_decode's header and opcode checks; *oi gets the opcode. */
isa_status_t isa_decode_opcode(const uint8_t b[ISA_BUNDLE_BYTES], size_t offset,
                               const isa_opinfo_t **oi, isa_err_t *err);
/* The rest of isa_decode once the opcode is known (out already zeroed). */
isa_status_t isa_decode_fields(const uint8_t b[ISA_BUNDLE_BYTES], size_t offset,
                               const isa_opinfo_t *oi, const fmt_plan_t *p, isa_inst_t *out,
                               isa_err_t *err);

#endif
