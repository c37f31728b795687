/* isa.c - tables and the generic table-driven bundle codec. */
#include "isa.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa_plan.h"

/* ------------------------------------------------------------------ names */
static const char *const engine_names[ISA_ENG_COUNT] = {
#define ENGINE(ID, name, value, is_tpb) [value] = name,
#include "engines.def"
#undef ENGINE
};
static const bool engine_tpb[ISA_ENG_COUNT] = {
#define ENGINE(ID, name, value, is_tpb) [value] = is_tpb,
#include "engines.def"
#undef ENGINE
};
const isa_engine_t isa_tpb_engines[5] = {
    ISA_ENG_PE, ISA_ENG_ACT, ISA_ENG_POOL, ISA_ENG_DVE, ISA_ENG_SP
};

const char *isa_engine_name(isa_engine_t e)
{
    /* never NULL: a value engines.def leaves unnamed reads as "?" too */
    return ((unsigned)e < ISA_ENG_COUNT && engine_names[e]) ? engine_names[e] : "?";
}

int isa_engine_by_name(const char *name)
{
    for (int i = 0; i < ISA_ENG_COUNT; i++)
        if (engine_names[i] && strcmp(engine_names[i], name) == 0)
            return i;
    return -1;
}

bool isa_engine_is_tpb(isa_engine_t e)
{
    return (unsigned)e < ISA_ENG_COUNT && engine_tpb[e];
}

typedef struct {
    const char *asm_name, *np_name;
    isa_dtype_kind_t kind;
} dtype_info_t;

static const dtype_info_t dtype_info[ISA_DT_COUNT] = {
#define DTYPE(ID, value, asm, np, size, kind) [value] = {asm, np, ISA_DK_##kind},
#include "dtypes.def"
#undef DTYPE
};

bool isa_alu_is_unary(unsigned op)
{
    return op == ISA_ALU_BITWISE_NOT || op == ISA_ALU_ABS || op == ISA_ALU_RSQRT ||
           op == ISA_ALU_RECIPROCAL || op == ISA_ALU_FLOOR || op == ISA_ALU_CEIL ||
           op == ISA_ALU_TRUNC || op == ISA_ALU_SIGN || op == ISA_ALU_NEGATIVE;
}

bool isa_alu_is_bitwise(unsigned op)
{
    return op >= ISA_ALU_BITWISE_AND && op <= ISA_ALU_RIGHT_SHIFT;
}

bool isa_dtype_valid(unsigned dt) { return dt < ISA_DT_COUNT; }
const char *isa_dtype_name(unsigned dt) { return dt < ISA_DT_COUNT ? dtype_info[dt].asm_name : "?"; }
const char *isa_dtype_numpy_name(unsigned dt) { return dt < ISA_DT_COUNT ? dtype_info[dt].np_name : "?"; }
isa_dtype_kind_t isa_dtype_kind(unsigned dt) { return dt < ISA_DT_COUNT ? dtype_info[dt].kind : ISA_DK_U; }

int isa_dtype_by_name(const char *name)
{
    for (unsigned i = 0; i < ISA_DT_COUNT; i++)
        if (strcmp(dtype_info[i].asm_name, name) == 0 || strcmp(dtype_info[i].np_name, name) == 0)
            return (int)i;
    return -1;
}

/* Enum names, indexed by [field type][value], expanded once from enums.def.
 * A value >= ISA_ENUM_MAX in enums.def fails to compile (initializer out of
 * bounds); a NULL slot is not a member. */
#define ISA_ENUM_MAX 64
_Static_assert(ISA_DT_COUNT <= 64, "decode plans keep valid dtypes in a 64-bit mask");
/* D3DESC starts with DDESC's members at the same offsets (isa.h,
 * isa_op_is_direct_dma): the common initial sequence other code relies on */
#define ISA_SAME_OFF(m) _Static_assert(offsetof(isa_fmt_DDESC_t, m) == offsetof(isa_fmt_D3DESC_t, m), \
                                       "D3DESC." #m " must sit where DDESC." #m " does")
ISA_SAME_OFF(dst);
ISA_SAME_OFF(src);
ISA_SAME_OFF(queue);
ISA_SAME_OFF(transpose);
ISA_SAME_OFF(dge);
ISA_SAME_OFF(compute);
ISA_SAME_OFF(qos);
ISA_SAME_OFF(src_reg);
ISA_SAME_OFF(dst_reg);
ISA_SAME_OFF(bounded);
#undef ISA_SAME_OFF
static const char *const enum_names[ISA_FT_COUNT][ISA_ENUM_MAX] = {
#define ENUMV(E, ID, value, name) [ISA_FT_##E][value] = name,
#include "enums.def"
#undef ENUMV
    [ISA_FT_BOOL] = { "0", "1" },
};

const char *isa_enum_name(isa_ftype_t t, unsigned v)
{
    if (t == ISA_FT_DTYPE)
        return v < ISA_DT_COUNT ? dtype_info[v].asm_name : NULL;
    if ((unsigned)t >= ISA_FT_COUNT || v >= ISA_ENUM_MAX)
        return NULL;
    return enum_names[t][v];
}

int isa_enum_by_name(isa_ftype_t t, const char *name)
{
    if (t == ISA_FT_DTYPE)
        return isa_dtype_by_name(name);
    if ((unsigned)t >= ISA_FT_COUNT)
        return -1;
    for (unsigned i = 0; i < ISA_ENUM_MAX; i++)
        if (enum_names[t][i] && strcmp(enum_names[t][i], name) == 0)
            return (int)i;
    return -1;
}

const char *isa_ftype_name(isa_ftype_t t)
{
    static const char *const n[ISA_FT_COUNT] = {
        "U", "S", "F32", "HEX", "BOOL", "DTYPE", "SPACE", "ALU", "ACTFN", "CMP",
        "SEMOP", "REDCMD", "MEMSET", "PERF", "DGE", "OOB", "DMAOP", "XPOSE"
    };
    return (unsigned)t < ISA_FT_COUNT ? n[t] : "?";
}

const char *isa_class_name(isa_class_t c)
{
    static const char *const n[ISA_CLASS_COUNT] = {
        "matmul", "act", "vector", "pool", "dma", "sync", "control", "prefix"
    };
    return (unsigned)c < ISA_CLASS_COUNT ? n[c] : "?";
}

/* ---------------------------------------------------------------- opcodes */
const isa_opinfo_t isa_ops[ISA_OP_COUNT] = {
#define OPCODE(ID, mn, l2, eng, fmt, cls) \
    [ISA_OP_##ID] = { ISA_OP_##ID, mn, l2, eng, ISA_FMT_##fmt, ISA_CLASS_##cls },
#include "opcodes.def"
#undef OPCODE
};

/* l2 opcode byte -> ISA_OP_ + 1 (0: no opcode).  Two opcodes with one l2
 * byte would initialise an entry twice, which -Werror (gcc -Woverride-init
 * in -Wextra, clang -Winitializer-overrides) refuses. */
static const uint16_t op_of_l2[256] = {
#define OPCODE(ID, mn, l2, eng, fmt, cls) [l2] = ISA_OP_##ID + 1,
#include "opcodes.def"
#undef OPCODE
};

const isa_opinfo_t *isa_op_by_l2(uint8_t l2)
{
    return op_of_l2[l2] ? &isa_ops[op_of_l2[l2] - 1] : NULL;
}

const isa_opinfo_t *isa_op_by_mnemonic(const char *mn)
{
    for (unsigned i = 0; i < ISA_OP_COUNT; i++)
        if (strcmp(isa_ops[i].mnemonic, mn) == 0)
            return &isa_ops[i];
    return NULL;
}

/* ---------------------------------------------------------------- fields */
#define FOFF(F, member) ((uint16_t)offsetof(isa_fmt_##F##_t, member))

#define FMT_BEGIN(F, doc) static const isa_field_t fields_##F[] = {
#define FMT_END(F) { NULL, 0, 0, 0, 0, NULL, ISA_OPND_NONE, -1 } };
#define FIELD(F, name, byte, bit, width, type) \
    { #name, (uint16_t)((byte) * 8 + (bit)), width, ISA_FT_##type, FOFF(F, name), NULL, ISA_OPND_NONE, -1 },
#define TAP(F, name, byte, slot)                                                       \
    { #name ".addr",   (uint16_t)((byte) * 8),       24, ISA_FT_HEX,   (uint16_t)(FOFF(F, name) + offsetof(isa_tap_t, addr)),   #name, ISA_OPND_TAP, slot }, \
    { #name ".dtype",  (uint16_t)((byte) * 8 + 24),   4, ISA_FT_DTYPE, (uint16_t)(FOFF(F, name) + offsetof(isa_tap_t, dtype)),  #name, ISA_OPND_TAP, slot }, \
    { #name ".space",  (uint16_t)((byte) * 8 + 28),   2, ISA_FT_SPACE, (uint16_t)(FOFF(F, name) + offsetof(isa_tap_t, space)),  #name, ISA_OPND_TAP, slot }, \
    { #name ".start",  (uint16_t)((byte) * 8 + 30),   7, ISA_FT_U,     (uint16_t)(FOFF(F, name) + offsetof(isa_tap_t, start)),  #name, ISA_OPND_TAP, slot }, \
    { #name ".nparts", (uint16_t)((byte) * 8 + 37),   8, ISA_FT_U,     (uint16_t)(FOFF(F, name) + offsetof(isa_tap_t, nparts)), #name, ISA_OPND_TAP, slot }, \
    { #name ".ndims",  (uint16_t)((byte) * 8 + 45),   3, ISA_FT_U,     (uint16_t)(FOFF(F, name) + offsetof(isa_tap_t, ndims)),  #name, ISA_OPND_TAP, slot }, \
    { #name ".step[0]",  (uint16_t)(((byte) + 6) * 8),  16, ISA_FT_S, (uint16_t)(FOFF(F, name) + offsetof(isa_tap_t, step[0])),  #name, ISA_OPND_TAP, slot }, \
    { #name ".count[0]", (uint16_t)(((byte) + 8) * 8),  16, ISA_FT_U, (uint16_t)(FOFF(F, name) + offsetof(isa_tap_t, count[0])), #name, ISA_OPND_TAP, slot }, \
    { #name ".step[1]",  (uint16_t)(((byte) + 10) * 8), 16, ISA_FT_S, (uint16_t)(FOFF(F, name) + offsetof(isa_tap_t, step[1])),  #name, ISA_OPND_TAP, slot }, \
    { #name ".count[1]", (uint16_t)(((byte) + 12) * 8), 16, ISA_FT_U, (uint16_t)(FOFF(F, name) + offsetof(isa_tap_t, count[1])), #name, ISA_OPND_TAP, slot },
#define PTR(F, name, byte)                                                             \
    { #name ".addr",  (uint16_t)((byte) * 8),      24, ISA_FT_HEX,   (uint16_t)(FOFF(F, name) + offsetof(isa_ptr_t, addr)),  #name, ISA_OPND_PTR, -1 }, \
    { #name ".dtype", (uint16_t)((byte) * 8 + 24),  4, ISA_FT_DTYPE, (uint16_t)(FOFF(F, name) + offsetof(isa_ptr_t, dtype)), #name, ISA_OPND_PTR, -1 }, \
    { #name ".space", (uint16_t)((byte) * 8 + 28),  2, ISA_FT_SPACE, (uint16_t)(FOFF(F, name) + offsetof(isa_ptr_t, space)), #name, ISA_OPND_PTR, -1 },
#define DAP(F, name, byte)                                                             \
    { #name ".addr",     (uint16_t)((byte) * 8),            32, ISA_FT_HEX,   (uint16_t)(FOFF(F, name) + offsetof(isa_dap_t, addr)),     #name, ISA_OPND_DAP, -1 }, \
    { #name ".dtype",    (uint16_t)(((byte) + 4) * 8),       4, ISA_FT_DTYPE, (uint16_t)(FOFF(F, name) + offsetof(isa_dap_t, dtype)),    #name, ISA_OPND_DAP, -1 }, \
    { #name ".space",    (uint16_t)(((byte) + 4) * 8 + 4),   2, ISA_FT_SPACE, (uint16_t)(FOFF(F, name) + offsetof(isa_dap_t, space)),    #name, ISA_OPND_DAP, -1 }, \
    { #name ".core",     (uint16_t)(((byte) + 5) * 8),       3, ISA_FT_U,     (uint16_t)(FOFF(F, name) + offsetof(isa_dap_t, core)),     #name, ISA_OPND_DAP, -1 }, \
    { #name ".step[0]",  (uint16_t)(((byte) + 6) * 8),      32, ISA_FT_S,     (uint16_t)(FOFF(F, name) + offsetof(isa_dap_t, step[0])),  #name, ISA_OPND_DAP, -1 }, \
    { #name ".count[0]", (uint16_t)(((byte) + 10) * 8),     16, ISA_FT_U,     (uint16_t)(FOFF(F, name) + offsetof(isa_dap_t, count[0])), #name, ISA_OPND_DAP, -1 }, \
    { #name ".step[1]",  (uint16_t)(((byte) + 12) * 8),     32, ISA_FT_S,     (uint16_t)(FOFF(F, name) + offsetof(isa_dap_t, step[1])),  #name, ISA_OPND_DAP, -1 }, \
    { #name ".count[1]", (uint16_t)(((byte) + 16) * 8),     16, ISA_FT_U,     (uint16_t)(FOFF(F, name) + offsetof(isa_dap_t, count[1])), #name, ISA_OPND_DAP, -1 },
#include "fields.def"
#undef FMT_BEGIN
#undef FMT_END
#undef FIELD
#undef TAP
#undef PTR
#undef DAP

const isa_fmtinfo_t isa_formats[ISA_FMT_COUNT] = {
#define FMT_BEGIN(F, doc) [ISA_FMT_##F] = { #F, doc, fields_##F, \
    (unsigned)(sizeof(fields_##F) / sizeof(fields_##F[0]) - 1), sizeof(isa_fmt_##F##_t) },
#define FMT_END(F)
#define FIELD(F, name, byte, bit, width, type)
#define TAP(F, name, byte, slot)
#define PTR(F, name, byte)
#define DAP(F, name, byte)
#include "fields.def"
#undef FMT_BEGIN
#undef FMT_END
#undef FIELD
#undef TAP
#undef PTR
#undef DAP
};

/* ------------------------------------------------------------ bit access */
/* 8 bundle bytes as a little-endian number, on any host */
static uint32_t get_bits(const uint8_t *b, unsigned pos, unsigned width)
{
    uint64_t v = 0;
    unsigned first = pos / 8, last = (pos + width - 1) / 8;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (first + 8 <= ISA_BUNDLE_BYTES) /* one load: pos % 8 + width <= 39 bits */
        memcpy(&v, b + first, 8);
    else
#endif
        for (unsigned i = last + 1; i-- > first;)
            v = (v << 8) | b[i];
    v >>= pos % 8;
    return (uint32_t)(width == 32 ? v : (v & ((1ull << width) - 1)));
}

/* Write the low `width` bits of value at bit position pos (LSB first), a
 * byte-sized piece at a time. */
static void put_bits(uint8_t *b, unsigned pos, unsigned width, uint32_t value)
{
    while (width) {
        unsigned off = pos % 8, n = 8 - off < width ? 8 - off : width;
        uint8_t mask = (uint8_t)(((1u << n) - 1u) << off);
        b[pos / 8] = (uint8_t)((b[pos / 8] & ~mask) | ((value << off) & mask));
        value >>= n; /* n <= 8 */
        pos += n;
        width -= n;
    }
}

static bool field_in_header(const isa_field_t *f)
{
    const isa_fmtinfo_t *h = &isa_formats[ISA_FMT_HDR];
    return f >= h->fields && f < h->fields + h->nfields;
}

void *isa_inst_body(isa_inst_t *in) { return &in->f; }
const void *isa_inst_body_const(const isa_inst_t *in) { return &in->f; }

uint32_t isa_field_get(const isa_inst_t *in, const isa_field_t *f)
{
    const uint8_t *base = field_in_header(f) ? (const uint8_t *)&in->sync
                                              : (const uint8_t *)&in->f;
    uint32_t v;
    memcpy(&v, base + f->offset, sizeof v);
    return v;
}

void isa_field_set(isa_inst_t *in, const isa_field_t *f, uint32_t v)
{
    uint8_t *base = field_in_header(f) ? (uint8_t *)&in->sync : (uint8_t *)&in->f;
    memcpy(base + f->offset, &v, sizeof v);
}

const isa_field_t *isa_field_by_name(isa_format_t fmt, const char *name)
{
    const isa_fmtinfo_t *fi[2] = { &isa_formats[ISA_FMT_HDR], &isa_formats[fmt] };
    for (int k = 0; k < 2; k++)
        for (unsigned i = 0; i < fi[k]->nfields; i++)
            if (strcmp(fi[k]->fields[i].name, name) == 0)
                return &fi[k]->fields[i];
    return NULL;
}

const char *isa_strerror(isa_status_t s)
{
    switch (s) {
    case ISA_OK: return "ok";
    case ISA_E_HEADER: return "bad header byte";
    case ISA_E_OPCODE: return "unknown opcode";
    case ISA_E_RESERVED: return "reserved bits set";
    case ISA_E_RANGE: return "field out of range";
    case ISA_E_SIZE: return "size is not a multiple of 64";
    case ISA_E_PREFIX: return "prefix misuse";
    case ISA_E_ENGINE: return "opcode not legal on this engine";
    case ISA_E_NOMEM: return "out of memory";
    }
    return "?";
}

#include <stdarg.h>
isa_status_t isa_fail(isa_err_t *err, isa_status_t st, size_t offset,
                      const char *field, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->status = st;
        err->offset = offset;
        err->field = field;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return st;
}

static bool ftype_is_enum(isa_ftype_t t)
{
    return t == ISA_FT_DTYPE || t == ISA_FT_BOOL || t >= ISA_FT_SPACE;
}

static int32_t sign_extend(uint32_t v, unsigned width)
{
    if (width >= 32)
        return (int32_t)v;
    uint32_t m = 1u << (width - 1);
    return (int32_t)((v ^ m) - m);
}

/* The compute operands that take a packed MX quad dtype (ISA_DK_X): what
 * QuantizeMX writes and the two PE MX instructions read.  Every other TAP
 * and every PTR would read or write a quad as one number. */
bool isa_packed_operand(isa_op_t op, const char *operand)
{
    return (op == ISA_OP_QUANTIZE_MX && !strcmp(operand, "out")) ||
           (op == ISA_OP_LDWEIGHTS_MX && !strcmp(operand, "src")) ||
           (op == ISA_OP_MATMUL_MX && !strcmp(operand, "moving"));
}

bool isa_scale_operand(isa_op_t op, const char *operand)
{
    return (op == ISA_OP_QUANTIZE_MX || op == ISA_OP_LDWEIGHTS_MX || op == ISA_OP_MATMUL_MX) &&
           !strcmp(operand, "scale");
}

/* Structural checks of one operand after its subfields were decoded; f is
 * its ".addr" subfield. */
isa_status_t isa_check_operand(const isa_inst_t *in, const isa_field_t *f, size_t offset,
                                  isa_err_t *err)
{
    const uint8_t *body = (const uint8_t *)&in->f;
    if (f->opnd_kind == ISA_OPND_TAP) {
        const isa_tap_t *t = (const isa_tap_t *)(body + f->offset);
        if (t->space == ISA_SPACE_NONE) {
            if (t->addr || t->dtype || t->start || t->nparts || t->ndims ||
                t->step[0] || t->count[0] || t->step[1] || t->count[1])
                return isa_fail(err, ISA_E_RANGE, offset, f->operand,
                            "operand '%s' is absent (space none) but has fields set", f->operand);
            return ISA_OK;
        }
        if (t->space == ISA_SPACE_HBM)
            return isa_fail(err, ISA_E_RANGE, offset, f->operand,
                        "operand '%s': compute engines cannot address hbm", f->operand);
        if (t->nparts < 1 || t->nparts > ISA_NUM_PARTITIONS)
            return isa_fail(err, ISA_E_RANGE, offset, f->operand,
                        "operand '%s': nparts %u not in 1..128", f->operand, t->nparts);
        if (t->start + t->nparts > ISA_NUM_PARTITIONS)
            return isa_fail(err, ISA_E_RANGE, offset, f->operand,
                        "operand '%s': partitions %u..%u exceed 128", f->operand,
                        t->start, t->start + t->nparts - 1);
        if (t->ndims > ISA_MAX_FREE_DIMS)
            return isa_fail(err, ISA_E_RANGE, offset, f->operand,
                        "operand '%s': ndims %u > 4", f->operand, t->ndims);
        if (isa_dtype_kind(t->dtype) == ISA_DK_X && !isa_packed_operand(in->op, f->operand))
            return isa_fail(err, ISA_E_RANGE, offset, f->operand,
                        "operand '%s': packed MX dtype %s is taken only by QuantizeMX out, "
                        "LdWeightsMX src and MatmulMX moving", f->operand,
                        isa_dtype_name(t->dtype));
        if (isa_dtype_kind(t->dtype) == ISA_DK_S && !isa_scale_operand(in->op, f->operand))
            return isa_fail(err, ISA_E_RANGE, offset, f->operand,
                        "operand '%s': MX scale dtype %s is taken only by the scale of "
                        "QuantizeMX, LdWeightsMX and MatmulMX", f->operand,
                        isa_dtype_name(t->dtype));
        for (unsigned d = 0; d < 2; d++) {
            if (d < t->ndims && t->count[d] == 0)
                return isa_fail(err, ISA_E_RANGE, offset, f->operand,
                            "operand '%s': count[%u] is 0", f->operand, d);
            if (d >= t->ndims && (t->count[d] || t->step[d]))
                return isa_fail(err, ISA_E_RANGE, offset, f->operand,
                            "operand '%s': dim %u set beyond ndims %u", f->operand, d, t->ndims);
        }
    } else if (f->opnd_kind == ISA_OPND_PTR) {
        const isa_ptr_t *p = (const isa_ptr_t *)(body + f->offset);
        if (p->space == ISA_SPACE_NONE && (p->addr || p->dtype))
            return isa_fail(err, ISA_E_RANGE, offset, f->operand,
                        "pointer '%s' is absent (space none) but has fields set", f->operand);
        if (p->space == ISA_SPACE_HBM)
            return isa_fail(err, ISA_E_RANGE, offset, f->operand,
                        "pointer '%s': compute engines cannot address hbm", f->operand);
        if (p->space != ISA_SPACE_NONE && isa_dtype_mx_only(p->dtype))
            return isa_fail(err, ISA_E_RANGE, offset, f->operand,
                        "pointer '%s': %s dtype %s is no scalar", f->operand,
                        isa_dtype_kind(p->dtype) == ISA_DK_X ? "packed MX" : "MX scale",
                        isa_dtype_name(p->dtype));
    }
    return ISA_OK;
}

/* check_operand for every operand of the format, at its ".addr" subfield. */
static isa_status_t check_operands(const isa_inst_t *in, const isa_fmtinfo_t *fi,
                                   size_t offset, isa_err_t *err)
{
    for (unsigned i = 0; i < fi->nfields; i++) {
        const isa_field_t *f = &fi->fields[i];
        if (!f->operand || strstr(f->name, ".addr") == NULL)
            continue;
        isa_status_t st = isa_check_operand(in, f, offset, err);
        if (st != ISA_OK)
            return st;
    }
    return ISA_OK;
}

/* Register-index fields (reg, src_reg, dst_reg) must name one of the 64
 * sequencer registers; src_reg/dst_reg also accept 0xFF = none. */
static isa_status_t check_regs(const isa_inst_t *in, const isa_fmtinfo_t *fi,
                               size_t offset, isa_err_t *err)
{
    for (unsigned i = 0; i < fi->nfields; i++) {
        const isa_field_t *f = &fi->fields[i];
        bool none_ok = strcmp(f->name, "src_reg") == 0 || strcmp(f->name, "dst_reg") == 0;
        if (!none_ok && strcmp(f->name, "reg") != 0)
            continue;
        uint32_t v = isa_field_get(in, f);
        if (v >= ISA_NUM_REGS && !(none_ok && v == ISA_REG_NONE))
            return isa_fail(err, ISA_E_RANGE, offset, f->name,
                        "field '%s': register %u not in 0..63%s", f->name, v,
                        none_ok ? " or 255 (none)" : "");
    }
    return ISA_OK;
}

/* Set bits [pos, pos + width) of b, a byte at a time; true when one of
 * them was set already. */
static bool mark_bits(uint8_t *b, unsigned pos, unsigned width)
{
    bool again = false;
    for (unsigned p = pos, end = pos + width; p < end;) {
        unsigned bit = p % 8, n = 8 - bit < end - p ? 8 - bit : end - p;
        uint8_t m = (uint8_t)(((1u << n) - 1u) << bit);
        again |= (b[p / 8] & m) != 0;
        b[p / 8] |= m;
        p += n;
    }
    return again;
}

/* ----------------------------------------------------------- decode plans */
/* What decoding a bundle of one format needs beyond the field table, worked
 * out from the table once: the bits some field owns (the rest are reserved),
 * the operand ".addr" subfields (one structural check per operand), the
 * register-index fields and the TAP of each ApExt slot.  isa_decode builds
 * one per call; isa_stream_decode keeps one per format for a whole stream,
 * so the per-bundle work is no longer name matching.  The results are the
 * same as the name-based helpers above (check_operands, check_regs,
 * tap_by_slot), which stay as the fallback for a format with more fields
 * than a plan holds.  The plan types are in isa_plan.h. */
/* The values of enum type t that have a name (isa_enum_name not NULL), a
 * bit each: every one is below 64 (ISA_ENUM_MAX; dtypes: the assertion
 * above).  Read from the tables directly, not through 64 calls of
 * isa_enum_name per field: a compile builds a plan per format it meets. */
static uint64_t enum_valid_mask(isa_ftype_t t)
{
    uint64_t m = 0;
    if (t == ISA_FT_DTYPE) {
        for (unsigned v = 0; v < ISA_DT_COUNT; v++)
            m |= (uint64_t)(dtype_info[v].asm_name != NULL) << v;
    } else if ((unsigned)t < ISA_FT_COUNT) {
        for (unsigned v = 0; v < ISA_ENUM_MAX; v++)
            m |= (uint64_t)(enum_names[t][v] != NULL) << v;
    }
    return m;
}

static plan_field_t plan_field(const isa_field_t *f, size_t base)
{
    unsigned byte = f->bitpos / 8 <= ISA_BUNDLE_BYTES - 8 ? f->bitpos / 8 : ISA_BUNDLE_BYTES - 8;
    plan_field_t x = {
        .f = f, .mask = f->width >= 32 ? 0xFFFFFFFFu : (1u << f->width) - 1,
        .dst = (uint16_t)(base + f->offset), .byte = (uint8_t)byte,
        .shift = (uint8_t)(f->bitpos - byte * 8), .width = f->width,
        .kind = f->type == ISA_FT_S ? PF_SIGNED : ftype_is_enum(f->type) ? PF_ENUM : PF_PLAIN,
    };
    if (x.kind == PF_ENUM)
        x.valid = enum_valid_mask(f->type);
    return x;
}

void isa_plan_build(fmt_plan_t *p, isa_format_t fmt)
{
    const isa_fmtinfo_t *h = &isa_formats[ISA_FMT_HDR], *fi = &isa_formats[fmt];
    memset(p, 0, offsetof(fmt_plan_t, fld));
    p->built = true;
    p->used[0] = p->used[1] = 0xFF;
    for (unsigned i = 0; i < h->nfields; i++)
        mark_bits(p->used, h->fields[i].bitpos, h->fields[i].width);
    for (unsigned i = 0; i < fi->nfields; i++)
        mark_bits(p->used, fi->fields[i].bitpos, fi->fields[i].width);
    uint8_t own[ISA_BUNDLE_BYTES] = {0};   /* which field bits are taken already */
    bool overlap = false;
    for (unsigned i = 0; i < h->nfields; i++)
        overlap |= mark_bits(own, h->fields[i].bitpos, h->fields[i].width);
    for (unsigned i = 0; i < fi->nfields; i++)
        overlap |= mark_bits(own, fi->fields[i].bitpos, fi->fields[i].width);
    p->disjoint = !overlap;
    if (fi->nfields > PLAN_MAX_FIELDS || h->nfields > PLAN_MAX_HDR_FIELDS) {
        p->generic = true;
        return;
    }
    for (unsigned i = 0; i < h->nfields; i++)
        p->fld[p->nfld++] = plan_field(&h->fields[i], offsetof(isa_inst_t, sync));
    for (unsigned i = 0; i < fi->nfields; i++)
        p->fld[p->nfld++] = plan_field(&fi->fields[i], offsetof(isa_inst_t, f));
    memset(p->word_fld, PLAN_NO_FIELD, sizeof p->word_fld);
    for (unsigned i = 0; i < p->nfld; i++)   /* every member is 32 bits, 4-aligned */
        p->word_fld[p->fld[i].dst / 4] = (uint8_t)i;
    for (unsigned i = 0; i < p->nfld; i++) {
        plan_field_t *x = &p->fld[i];
        x->zero_ok = x->kind != PF_ENUM || (x->valid & 1);
        x->zero_noop = p->disjoint && x->f->bitpos >= 16 && x->zero_ok;
    }
    for (unsigned i = 0; i < fi->nfields; i++) {
        const isa_field_t *f = &fi->fields[i];
        if (f->operand && strstr(f->name, ".addr")) {
            unsigned j = i + 1;   /* an operand's fields follow its ".addr" */
            while (j < fi->nfields && fi->fields[j].operand &&
                   !strcmp(fi->fields[j].operand, f->operand))
                j++;
            p->opnd_span[p->nopnd] = (uint8_t)(j - i);
            p->opnd[p->nopnd++] = (uint8_t)i;
        }
        bool none_ok = strcmp(f->name, "src_reg") == 0 || strcmp(f->name, "dst_reg") == 0;
        if (none_ok || strcmp(f->name, "reg") == 0) {
            p->reg_none_ok[p->nreg] = none_ok;
            p->reg[p->nreg++] = (uint8_t)i;
        }
    }
    for (int s = 0; s < 3; s++)
        for (unsigned i = 0; i < fi->nfields && !p->tap_slot[s]; i++)
            if (fi->fields[i].opnd_kind == ISA_OPND_TAP && fi->fields[i].slot == s &&
                strstr(fi->fields[i].name, ".addr"))
                p->tap_slot[s] = &fi->fields[i];
}

/* The TAP of ApExt slot s of `in`, or NULL (tap_by_slot through a plan). */
isa_tap_t *isa_plan_tap(const fmt_plan_t *p, isa_inst_t *in, int s)
{
    if (p->generic)
        return (isa_tap_t *)isa_tap_by_slot(in, &isa_formats[isa_ops[in->op].format], s);
    return p->tap_slot[s] ? (isa_tap_t *)((uint8_t *)&in->f + p->tap_slot[s]->offset) : NULL;
}

/* check_operands, visiting only the ".addr" subfields the plan lists. */
isa_status_t plan_check_operands(const isa_inst_t *in, const isa_fmtinfo_t *fi,
                                        const fmt_plan_t *p, size_t offset, isa_err_t *err)
{
    if (p->generic)
        return check_operands(in, fi, offset, err);
    for (unsigned k = 0; k < p->nopnd; k++) {
        isa_status_t st = isa_check_operand(in, &fi->fields[p->opnd[k]], offset, err);
        if (st != ISA_OK)
            return st;
    }
    return ISA_OK;
}

/* check_regs, visiting only the register fields the plan lists. */
isa_status_t plan_check_regs(const isa_inst_t *in, const isa_fmtinfo_t *fi,
                                    const fmt_plan_t *p, size_t offset, isa_err_t *err)
{
    if (p->generic)
        return check_regs(in, fi, offset, err);
    for (unsigned k = 0; k < p->nreg; k++) {
        const isa_field_t *f = &fi->fields[p->reg[k]];
        uint32_t v;
        memcpy(&v, (const uint8_t *)&in->f + f->offset, sizeof v);
        bool none_ok = p->reg_none_ok[k];
        if (v >= ISA_NUM_REGS && !(none_ok && v == ISA_REG_NONE))
            return isa_fail(err, ISA_E_RANGE, offset, f->name,
                        "field '%s': register %u not in 0..63%s", f->name, v,
                        none_ok ? " or 255 (none)" : "");
    }
    return ISA_OK;
}

/* The header and opcode checks of isa_decode; *oi gets the opcode. */
isa_status_t isa_decode_opcode(const uint8_t b[ISA_BUNDLE_BYTES], size_t offset,
                               const isa_opinfo_t **oi, isa_err_t *err)
{
    if (b[1] != ISA_HEADER_BYTE1)
        return isa_fail(err, ISA_E_HEADER, offset, "header",
                    "field 'header': byte 1 is 0x%02x, expected 0x10", b[1]);
    *oi = isa_op_by_l2(b[0]);
    if (!*oi)
        return isa_fail(err, ISA_E_OPCODE, offset, "opcode",
                    "field 'opcode': unknown opcode 0x%02x", b[0]);
    return ISA_OK;
}

/* The rest of isa_decode once the opcode is known (out already zeroed). */
isa_status_t isa_decode_fields(const uint8_t b[ISA_BUNDLE_BYTES], size_t offset,
                               const isa_opinfo_t *oi, const fmt_plan_t *p,
                               isa_inst_t *out, isa_err_t *err)
{
    out->op = oi->op;
    out->l2 = oi->l2;
    uint64_t stray = 0; /* any reserved bit, 8 bytes at a time */
    for (unsigned i = 0; i < ISA_BUNDLE_BYTES; i += 8) {
        uint64_t w, u;
        memcpy(&w, b + i, 8);
        memcpy(&u, p->used + i, 8);
        stray |= w & ~u;
    }
    for (unsigned i = 0; stray && i < ISA_BUNDLE_BYTES; i++)
        if (b[i] & ~p->used[i]) {
            unsigned bit = 0;
            while (!((b[i] & ~p->used[i]) >> bit & 1u))
                bit++;
            return isa_fail(err, ISA_E_RESERVED, offset, "reserved",
                        "%s: reserved bit %u of byte %u is set", oi->mnemonic, bit, i);
        }

    const isa_fmtinfo_t *parts[2] = { &isa_formats[ISA_FMT_HDR], &isa_formats[oi->format] };
    uint8_t *base[2] = { (uint8_t *)&out->sync, (uint8_t *)&out->f };
    for (unsigned i = 0; i < p->nfld; i++) { /* the plan's fields, in table order */
        const plan_field_t *x = &p->fld[i];
        uint32_t v = (uint32_t)(isa_load_le64(b + x->byte) >> x->shift) & x->mask;
        if (!v && x->zero_ok)
            continue;   /* out is zeroed (every caller clears it) */
        if (x->kind == PF_SIGNED)
            v = (uint32_t)sign_extend(v, x->width);
        else if (x->kind == PF_ENUM && (v >= 64 || !(x->valid >> v & 1)))
            return isa_fail(err, ISA_E_RANGE, offset, x->f->name,
                        "%s: field '%s' has invalid %s value %u", oi->mnemonic,
                        x->f->name, isa_ftype_name(x->f->type), v);
        memcpy((uint8_t *)out + x->dst, &v, sizeof v);
    }
    for (int k = 0; k < 2 && p->generic; k++) {
        for (unsigned i = 0; i < parts[k]->nfields; i++) {
            const isa_field_t *f = &parts[k]->fields[i];
            uint32_t v = get_bits(b, f->bitpos, f->width);
            if (f->type == ISA_FT_S)
                v = (uint32_t)sign_extend(v, f->width);
            else if (ftype_is_enum(f->type) && !isa_enum_name(f->type, v))
                return isa_fail(err, ISA_E_RANGE, offset, f->name,
                            "%s: field '%s' has invalid %s value %u", oi->mnemonic,
                            f->name, isa_ftype_name(f->type), v);
            memcpy(base[k] + f->offset, &v, sizeof v);
        }
    }
    isa_status_t st = plan_check_operands(out, parts[1], p, offset, err);
    if (st == ISA_OK)
        st = plan_check_regs(out, parts[1], p, offset, err);
    return st;
}

isa_status_t isa_decode(const uint8_t b[ISA_BUNDLE_BYTES], size_t offset,
                        isa_inst_t *out, isa_err_t *err)
{
    memset(out, 0, sizeof *out);
    const isa_opinfo_t *oi;
    isa_status_t st = isa_decode_opcode(b, offset, &oi, err);
    if (st != ISA_OK)
        return st;
    fmt_plan_t plan;
    isa_plan_build(&plan, oi->format);
    return isa_decode_fields(b, offset, oi, &plan, out, err);
}

isa_status_t isa_encode(const isa_inst_t *in, uint8_t b[ISA_BUNDLE_BYTES], isa_err_t *err)
{
    memset(b, 0, ISA_BUNDLE_BYTES);
    if ((unsigned)in->op >= ISA_OP_COUNT)
        return isa_fail(err, ISA_E_OPCODE, 0, "opcode", "field 'opcode': invalid op %d", (int)in->op);
    const isa_opinfo_t *oi = &isa_ops[in->op];
    b[0] = oi->l2;
    b[1] = ISA_HEADER_BYTE1;
    const isa_fmtinfo_t *parts[2] = { &isa_formats[ISA_FMT_HDR], &isa_formats[oi->format] };
    for (int k = 0; k < 2; k++) {
        for (unsigned i = 0; i < parts[k]->nfields; i++) {
            const isa_field_t *f = &parts[k]->fields[i];
            uint32_t v = isa_field_get(in, f);
            if (f->type == ISA_FT_S) {
                int32_t s = (int32_t)v;
                if (f->width < 32) {
                    int32_t lo = -(int32_t)(1u << (f->width - 1)), hi = (int32_t)(1u << (f->width - 1)) - 1;
                    if (s < lo || s > hi)
                        return isa_fail(err, ISA_E_RANGE, 0, f->name,
                                    "%s: field '%s' value %d does not fit %u signed bits",
                                    oi->mnemonic, f->name, s, f->width);
                }
            } else if (f->width < 32 && v >> f->width) {
                return isa_fail(err, ISA_E_RANGE, 0, f->name,
                            "%s: field '%s' value %u does not fit %u bits",
                            oi->mnemonic, f->name, v, f->width);
            }
            if (ftype_is_enum(f->type) && !isa_enum_name(f->type, v))
                return isa_fail(err, ISA_E_RANGE, 0, f->name, "%s: field '%s' has invalid %s value %u",
                            oi->mnemonic, f->name, isa_ftype_name(f->type), v);
            put_bits(b, f->bitpos, f->width, v);
        }
    }
    /* round-trip through the decoder's structural checks */
    isa_inst_t tmp;
    return isa_decode(b, 0, &tmp, err);
}

const isa_tap_t *isa_tap_by_slot(const isa_inst_t *in, const isa_fmtinfo_t *fi, int slot)
{
    const uint8_t *body = (const uint8_t *)&in->f;
    for (unsigned i = 0; i < fi->nfields; i++)
        if (fi->fields[i].opnd_kind == ISA_OPND_TAP && fi->fields[i].slot == slot &&
            strstr(fi->fields[i].name, ".addr"))
            return (const isa_tap_t *)(body + fi->fields[i].offset);
    return NULL;
}

uint64_t isa_tap_free_elems(const isa_tap_t *t)
{
    uint64_t n = 1;
    for (unsigned d = 0; d < t->ndims && d < ISA_MAX_FREE_DIMS; d++)
        n *= t->count[d];
    return n;
}
