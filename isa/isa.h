/* isa.h - the TPB instruction set, derived from the X-macro tables
 * (engines.def, dtypes.def, enums.def, opcodes.def, fields.def).
 *
 * A bundle is exactly 64 bytes.  isa_decode() turns one bundle into an
 * isa_inst_t (every field by name, in a per-format struct); isa_encode() is
 * its inverse.  isa_stream_decode() decodes a whole .bin and folds the
 * ApExt/PredExt prefixes into the instruction that follows them. */
#ifndef TPB_ISA_H
#define TPB_ISA_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define ISA_BUNDLE_BYTES 64
#define ISA_HEADER_BYTE1 0x10   /* byte 1 of every bundle */
#define ISA_MAX_FREE_DIMS 4
#define ISA_NUM_PARTITIONS 128
#define ISA_NUM_REGS 64          /* 32-bit registers per engine sequencer */
#define ISA_NUM_SEMAPHORES 256   /* per core */
#define ISA_REG_NONE 0xFF        /* DDESC src_reg/dst_reg: no register offset */
#define ISA_DMA_PARTITION_PITCH (1u << 18) /* SBUF/PSUM linear DMA address */
#define ISA_SHUFFLE_KEEP 63      /* StreamShuffle entry: keep destination */

/* ---- engines ---- */
typedef enum {
#define ENGINE(ID, name, value, is_tpb) ISA_ENG_##ID = value,
#include "engines.def"
#undef ENGINE
    ISA_ENG_COUNT
} isa_engine_t;

#define E_PE   (1u << ISA_ENG_PE)
#define E_ACT  (1u << ISA_ENG_ACT)
#define E_POOL (1u << ISA_ENG_POOL)
#define E_DVE  (1u << ISA_ENG_DVE)
#define E_SP   (1u << ISA_ENG_SP)
#define E_TPB_ALL (E_PE | E_ACT | E_POOL | E_DVE | E_SP)

const char *isa_engine_name(isa_engine_t e);           /* "PE", "Activation", ...; "?" if unnamed */
int isa_engine_by_name(const char *name);              /* -1 if unknown */
bool isa_engine_is_tpb(isa_engine_t e);
/* The five TPB engines in stream order PE, Activation, Pool, DVE, SP. */
extern const isa_engine_t isa_tpb_engines[5];

/* ---- dtypes ---- */
typedef enum {
#define DTYPE(ID, value, asm, np, size, kind) ISA_DT_##ID = value,
#include "dtypes.def"
#undef DTYPE
    ISA_DT_COUNT
} isa_dtype_t;

typedef enum { ISA_DK_F, ISA_DK_I, ISA_DK_U, ISA_DK_X, ISA_DK_S } isa_dtype_kind_t;
const char *isa_dtype_name(unsigned dt);               /* asm name, "?" if invalid */
const char *isa_dtype_numpy_name(unsigned dt);         /* "float32", "bfloat16", ... */
int isa_dtype_by_name(const char *name);               /* accepts asm or numpy name; -1 */
/* Element size in bytes, 0 if invalid (inline: used per operand in the
 * simulator's hot loop). */
static inline unsigned isa_dtype_size(unsigned dt)
{
    switch (dt) {
#define DTYPE(ID, value, asm, np, size, kind) case value: return size;
#include "dtypes.def"
#undef DTYPE
    default: return 0;
    }
}
isa_dtype_kind_t isa_dtype_kind(unsigned dt);
bool isa_dtype_valid(unsigned dt);

/* Whether dt is one of the MX-only dtypes: a packed quad (ISA_DK_X) or an
 * E8M0 block scale (ISA_DK_S). */
static inline bool isa_dtype_mx_only(unsigned dt)
{
    isa_dtype_kind_t k = isa_dtype_kind(dt);
    return k == ISA_DK_X || k == ISA_DK_S;
}

/* The dtypes an MX block scale operand takes: fp8e8m0 (NKI
 * float8_e8m0fnu) or uint8 holding the same E8M0 bits (NKI's older form). */
static inline bool isa_mx_scale_dtype(unsigned dt)
{
    return dt == ISA_DT_FP8E8M0 || dt == ISA_DT_UINT8;
}

/* A DMA moves a packed MX quad or an E8M0 scale only into the same dtype,
 * byte for byte and without arithmetic (dst add, scale): a quad is no
 * number, and a scale is read as one only by the MX instructions.  Other
 * dtype pairs convert element by element. */
static inline bool isa_dma_dtypes_ok(unsigned src, unsigned dst, bool arith)
{
    return !(isa_dtype_mx_only(src) || isa_dtype_mx_only(dst)) || (src == dst && !arith);
}

/* ---- small enums (enums.def) ---- */
typedef enum {
#define ENUMV(E, ID, value, name) ISA_##E##_##ID = value,
#include "enums.def"
#undef ENUMV
    ISA_ENUM_DUMMY_
} isa_enum_value_t;

/* field types; the enum kinds index the name tables */
typedef enum {
    ISA_FT_U, ISA_FT_S, ISA_FT_F32, ISA_FT_HEX, ISA_FT_BOOL, ISA_FT_DTYPE,
    ISA_FT_SPACE, ISA_FT_ALU, ISA_FT_ACTFN, ISA_FT_CMP, ISA_FT_SEMOP,
    ISA_FT_REDCMD, ISA_FT_MEMSET, ISA_FT_PERF, ISA_FT_DGE, ISA_FT_OOB,
    ISA_FT_DMAOP, ISA_FT_XPOSE, ISA_FT_COUNT
} isa_ftype_t;

/* Name of value v of an enum field type; NULL when v is not a member. */
const char *isa_enum_name(isa_ftype_t t, unsigned v);
/* Value of name for an enum field type; -1 when unknown. */
int isa_enum_by_name(isa_ftype_t t, const char *name);
/* The start-partition rule of the engines (ARCH2): an access of more than
 * 64 partitions starts at 0, of 33-64 at 0 or 64, of up to 32 at a
 * quadrant (0/32/64/96): its start must be a multiple of this. */
static inline uint64_t isa_start_align(uint64_t nparts)
{
    return nparts > 64 ? 128 : nparts > 32 ? 64 : 32;
}

/* a CMP b (enums.def CMP: BranchCmp, AffineSelect and mask predicates;
 * an unknown cmp is false). */
static inline bool isa_cmp_holds(unsigned cmp, int64_t a, int64_t b)
{
    switch (cmp) {
    case ISA_CMP_EQ: return a == b;
    case ISA_CMP_NE: return a != b;
    case ISA_CMP_GE: return a >= b;
    case ISA_CMP_GT: return a > b;
    case ISA_CMP_LE: return a <= b;
    case ISA_CMP_LT: return a < b;
    default: return false;
    }
}

/* ALU ops that read only their first operand (abs, rsqrt, reciprocal,
 * bitwise_not): the second operand is ignored, so NKI callers omit it. */
bool isa_alu_is_unary(unsigned op);
/* ALU ops on bit patterns (bitwise and / or / xor / not, the shifts): the
 * ALU computes them on the integer bits, every other op through fp32. */
bool isa_alu_is_bitwise(unsigned op);
const char *isa_ftype_name(isa_ftype_t t);             /* "U", "ALU", ... */

/* ---- operand structs (all members 32-bit so the generic codec can store
 * any field with one memcpy) ---- */
typedef struct {
    uint32_t addr;      /* byte offset inside each partition */
    uint32_t dtype;     /* isa_dtype_t */
    uint32_t space;     /* ISA_SPACE_*; NONE = operand absent */
    uint32_t start;     /* first partition */
    uint32_t nparts;    /* partition count, 1..128 */
    uint32_t ndims;     /* free dims in use, 0..4; dim 0 is innermost */
    int32_t  step[ISA_MAX_FREE_DIMS];   /* in elements */
    uint32_t count[ISA_MAX_FREE_DIMS];
} isa_tap_t;

typedef struct {
    uint32_t addr;      /* byte offset inside each partition */
    uint32_t dtype;
    uint32_t space;     /* NONE = pointer absent */
} isa_ptr_t;

typedef struct {
    uint32_t addr;      /* linear byte address in its space */
    uint32_t dtype;
    uint32_t space;
    uint32_t core;      /* core owning an SBUF/PSUM side (sendrecv) */
    int32_t  step[2];   /* in bytes; dim 0 is innermost */
    uint32_t count[2];  /* in elements */
} isa_dap_t;

/* ---- per-format structs, generated from fields.def ---- */
#define ISA_CT_U uint32_t
#define ISA_CT_S int32_t
#define ISA_CT_F32 float
#define ISA_CT_HEX uint32_t
#define ISA_CT_BOOL uint32_t
#define ISA_CT_DTYPE uint32_t
#define ISA_CT_SPACE uint32_t
#define ISA_CT_ALU uint32_t
#define ISA_CT_ACTFN uint32_t
#define ISA_CT_CMP uint32_t
#define ISA_CT_SEMOP uint32_t
#define ISA_CT_REDCMD uint32_t
#define ISA_CT_MEMSET uint32_t
#define ISA_CT_PERF uint32_t
#define ISA_CT_DGE uint32_t
#define ISA_CT_OOB uint32_t
#define ISA_CT_DMAOP uint32_t
#define ISA_CT_XPOSE uint32_t

#define FMT_BEGIN(F, doc) typedef struct {
#define FMT_END(F) char _end; } isa_fmt_##F##_t;
#define FIELD(F, name, byte, bit, width, type) ISA_CT_##type name;
#define TAP(F, name, byte, slot) isa_tap_t name;
#define PTR(F, name, byte) isa_ptr_t name;
#define DAP(F, name, byte) isa_dap_t name;
#include "fields.def"
#undef FMT_BEGIN
#undef FMT_END
#undef FIELD
#undef TAP
#undef PTR
#undef DAP

typedef enum {
#define FMT_BEGIN(F, doc) ISA_FMT_##F,
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
    ISA_FMT_COUNT
} isa_format_t;

/* ---- opcodes ---- */
typedef enum {
#define OPCODE(ID, mn, l2, eng, fmt, cls) ISA_OP_##ID,
#include "opcodes.def"
#undef OPCODE
    ISA_OP_COUNT
} isa_op_t;

typedef enum {
    ISA_CLASS_MATMUL, ISA_CLASS_ACT, ISA_CLASS_VECTOR, ISA_CLASS_POOL,
    ISA_CLASS_DMA, ISA_CLASS_SYNC, ISA_CLASS_CONTROL, ISA_CLASS_PREFIX,
    ISA_CLASS_COUNT
} isa_class_t;
const char *isa_class_name(isa_class_t c);             /* "matmul", "act", ... */

typedef struct {
    isa_op_t op;
    const char *mnemonic;
    uint8_t l2;            /* NEURON_ISA_TPB_OPCODE value */
    uint32_t engines;      /* legality bitmap, bit = 1 << isa_engine_t */
    isa_format_t format;
    isa_class_t cls;
} isa_opinfo_t;

extern const isa_opinfo_t isa_ops[ISA_OP_COUNT];
const isa_opinfo_t *isa_op_by_l2(uint8_t l2);          /* NULL if unknown */
const isa_opinfo_t *isa_op_by_mnemonic(const char *mn);/* case-sensitive; NULL */
/* Whether TAP operand `operand` of op takes a packed MX quad dtype
 * (ISA_DK_X): QuantizeMX out, LdWeightsMX src, MatmulMX moving.  The
 * decoder refuses a quad in any other TAP and in every PTR. */
bool isa_packed_operand(isa_op_t op, const char *operand);
/* Whether TAP operand `operand` of op takes an E8M0 block scale dtype
 * (ISA_DK_S): the `scale` of QuantizeMX, LdWeightsMX and MatmulMX. */
bool isa_scale_operand(isa_op_t op, const char *operand);

/* ---- field descriptors (for asm, dis, docs, table checks) ---- */
typedef enum { ISA_OPND_NONE, ISA_OPND_TAP, ISA_OPND_PTR, ISA_OPND_DAP } isa_opnd_kind_t;

typedef struct {
    const char *name;      /* "op", "in0.addr", "in0.step[0]", ... */
    uint16_t bitpos;       /* absolute bit offset in the bundle (byte*8+bit) */
    uint8_t width;         /* bits, 1..32 */
    isa_ftype_t type;
    uint16_t offset;       /* byte offset of the 32-bit member in the format struct */
    const char *operand;   /* operand name for TAP/PTR/DAP subfields, else NULL */
    isa_opnd_kind_t opnd_kind;
    int8_t slot;           /* ApExt operand slot for TAPs, else -1 */
} isa_field_t;

typedef struct {
    const char *name;      /* "TT" */
    const char *doc;
    const isa_field_t *fields;
    unsigned nfields;
    size_t struct_size;
} isa_fmtinfo_t;

extern const isa_fmtinfo_t isa_formats[ISA_FMT_COUNT]; /* ISA_FMT_HDR first */

/* ---- decoded instruction ---- */
typedef isa_fmt_HDR_t isa_sync_t;

/* The body of a decoded instruction: one member per format.  An
 * instruction of format F uses only the first isa_formats[F].struct_size
 * bytes (the compiler's BIR keeps exactly those, encoder/bir.h). */
typedef union {
#define FMT_BEGIN(F, doc) isa_fmt_##F##_t F;
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
} isa_body_t;

typedef struct {
    isa_op_t op;
    uint8_t l2;
    isa_sync_t sync;
    isa_body_t f;
} isa_inst_t;

/* The direct DMA descriptors: PseudoDmaDirect2d and PseudoDmaDirect3d.
 * D3DESC begins with DDESC's members (dst, src, queue, transpose, dge,
 * compute, qos, src_reg, dst_reg, bounded) in the same order and bytes, a common
 * initial sequence of the union `f` (asserted in isa.c): code reading or
 * setting those fields may use `f.DDESC` for either opcode.  Only DDESC has
 * scaled/scale; only D3DESC has count2/src_step2/dst_step2. */
static inline bool isa_op_is_direct_dma(isa_op_t op)
{
    return op == ISA_OP_DMA_DIRECT2D || op == ISA_OP_DMA_DIRECT3D;
}

/* NeuronCore-v4 MX on packed quads (NKI quantize_mx / nc_matmul_mx): a
 * scaling group is 8 data partitions x the 4 lanes of a quad; the scales of
 * the groups of 32-partition quadrant q sit in the first four partitions of
 * the scale operand's quadrant q.  The scale row (relative to the scale
 * operand's first partition) of data partition p (relative to the data's),
 * and the scale partitions `nparts` data partitions need. */
static inline unsigned isa_mx_quad_scale_row(unsigned p) { return 32 * (p / 32) + (p % 32) / 8; }
static inline unsigned isa_mx_quad_scale_rows(unsigned nparts)
{
    return nparts ? isa_mx_quad_scale_row(nparts - 1) + 1 : 0;
}

/* An indirect descriptor's indexed side (the table: src of a gather, dst of
 * a scatter) with its whole row count in count[1]: the DAP's 16-bit count1
 * plus rows_hi * 65536 (tables of up to ISA_DIND_ROWS_MAX rows, such as a
 * large embedding vocabulary).  The encoded DAP holds the low 16 bits. */
#define ISA_DIND_ROWS_MAX ((1u << 21) - 1u)
static inline isa_dap_t isa_dind_table(const isa_fmt_DIND_t *f)
{
    isa_dap_t t = f->scatter ? f->dst : f->src;
    t.count[1] |= f->rows_hi << 16;
    return t;
}

/* [*lo, *hi) bytes of a descriptor side's 2-D pattern p placed at address
 * a (steps in bytes, either sign; an empty dim adds nothing). */
static inline void isa_dap_span(const isa_dap_t *p, int64_t a, int64_t *lo, int64_t *hi)
{
    int64_t mn = a, mx = a;
    for (int k = 0; k < 2; k++) {
        int64_t ext = (int64_t)p->step[k] * (p->count[k] ? (int64_t)p->count[k] - 1 : 0);
        if (ext < 0)
            mn += ext;
        else
            mx += ext;
    }
    *lo = mn;
    *hi = mx + (int64_t)isa_dtype_size(p->dtype);
}

/* ---- errors ---- */
typedef enum {
    ISA_OK = 0,
    ISA_E_HEADER,        /* byte 1 is not 0x10 */
    ISA_E_OPCODE,        /* unknown L2 opcode */
    ISA_E_RESERVED,      /* a reserved bit is set */
    ISA_E_RANGE,         /* a field value is out of range */
    ISA_E_SIZE,          /* stream size not a multiple of 64 */
    ISA_E_PREFIX,        /* prefix misuse (dangling, wrong consumer, missing ApExt) */
    ISA_E_ENGINE,        /* opcode not legal on this engine */
    ISA_E_NOMEM,
} isa_status_t;

typedef struct {
    isa_status_t status;
    size_t offset;        /* byte offset of the bundle in its stream */
    const char *field;    /* field name, or NULL */
    char msg[256];        /* full human message, without file name */
} isa_err_t;

const char *isa_strerror(isa_status_t s);

/* Decode one bundle (no prefix folding: TAP dims 2-3 are zero).  `offset` is
 * only used for the error report.  Checks: header byte, known opcode,
 * reserved bits zero, enum/dtype values valid, TAP shape (nparts 1..128,
 * start+nparts <= 128, ndims <= 4). */
isa_status_t isa_decode(const uint8_t b[ISA_BUNDLE_BYTES], size_t offset,
                        isa_inst_t *out, isa_err_t *err);

/* Encode; fails with ISA_E_RANGE (naming the field) when a value does not fit
 * its width or an enum value is invalid.  Prefix-carried TAP dims (2-3) are not
 * written: see isa_encode_with_prefixes(). */
isa_status_t isa_encode(const isa_inst_t *in, uint8_t b[ISA_BUNDLE_BYTES],
                        isa_err_t *err);

/* Encode an instruction plus the prefixes it needs (an ApExt when any TAP has
 * ndims > 2).  Writes up to 2 bundles into out; *nbundles gets the count.
 * PredExt bundles are produced by the caller (they carry extra semantics). */
isa_status_t isa_encode_with_prefixes(const isa_inst_t *in,
                                      uint8_t out[2][ISA_BUNDLE_BYTES],
                                      unsigned *nbundles, isa_err_t *err);

/* Encoding many instructions: the per-format plans (field positions, masks,
 * enum sets, operand and register fields) that isa_encode and isa_decode
 * work out from the tables on every call are kept here, built on first use.
 * isa_encode_planned / isa_encode_with_prefixes_planned give exactly the
 * bytes, status and message of isa_encode / isa_encode_with_prefixes,
 * round trip through the decoder's checks included (ps NULL: the same
 * functions without a cache).  Not thread-safe: one per thread. */
typedef struct isa_plans isa_plans_t;
isa_plans_t *isa_plans_new(void);   /* NULL when out of memory */
void isa_plans_free(isa_plans_t *ps);
/* How many of isa_encode_planned's round trips through the decoder's
 * checks were taken without decoding (*fast) and by decoding (*full). */
void isa_plans_check_counts(const isa_plans_t *ps, unsigned long *fast, unsigned long *full);
isa_status_t isa_encode_planned(isa_plans_t *ps, const isa_inst_t *in,
                                uint8_t b[ISA_BUNDLE_BYTES], isa_err_t *err);
isa_status_t isa_encode_with_prefixes_planned(isa_plans_t *ps, const isa_inst_t *in,
                                              uint8_t out[2][ISA_BUNDLE_BYTES],
                                              unsigned *nbundles, isa_err_t *err);
/* The same results when a similar instruction was encoded before: `ref`,
 * of the same opcode, which isa_encode_planned encoded into ref_b (ISA_OK);
 * only the fields that differ from ref's are checked and written (an
 * unrolled kernel's instances differ in an address or two).  Any other ref
 * (NULL, another opcode) just encodes `in`. */
isa_status_t isa_encode_planned_from(isa_plans_t *ps, const isa_inst_t *in, const isa_inst_t *ref,
                                     const uint8_t ref_b[ISA_BUNDLE_BYTES],
                                     uint8_t b[ISA_BUNDLE_BYTES], isa_err_t *err);
/* isa_encode_with_prefixes_planned with the main bundle encoded from ref
 * (its main bundle ref_b) by isa_encode_planned_from. */
isa_status_t isa_encode_with_prefixes_from(isa_plans_t *ps, const isa_inst_t *in,
                                           const isa_inst_t *ref,
                                           const uint8_t ref_b[ISA_BUNDLE_BYTES],
                                           uint8_t out[2][ISA_BUNDLE_BYTES], unsigned *nbundles,
                                           isa_err_t *err);

/* Generic field access by descriptor (value as raw 32 bits). */
uint32_t isa_field_get(const isa_inst_t *in, const isa_field_t *f);
void isa_field_set(isa_inst_t *in, const isa_field_t *f, uint32_t v);
/* Field lookup by name in the instruction's format or the header. */
const isa_field_t *isa_field_by_name(isa_format_t fmt, const char *name);
/* Pointer to the format struct inside an isa_inst_t. */
void *isa_inst_body(isa_inst_t *in);
const void *isa_inst_body_const(const isa_inst_t *in);

/* ---- streams ---- */
typedef struct {
    isa_inst_t inst;      /* prefixes folded in */
    uint32_t pc;          /* bundle index of this instruction in its stream */
    uint32_t prefix_pc;   /* bundle index of its first prefix, == pc if none */
    bool has_pred;        /* a PredExt was folded in */
    isa_fmt_PREDEXT_t pred;
    /* further PredExt prefixes of the same instruction (ANDed with pred; same
     * fill and keep): npred_more entries owned by the stream, NULL if none */
    uint8_t npred_more;
    const isa_fmt_PREDEXT_t *pred_more;
} isa_decoded_t;

/* PredExt prefixes one TensorScalarPtr may carry (their predicates are ANDed) */
#define ISA_MAX_PREDEXT 4

typedef struct {
    isa_decoded_t *insts; /* prefixes are not listed as separate entries */
    size_t count;
    uint32_t *pc_to_index;/* bundle index -> insts index (prefix bundles map
                             to the instruction they extend); nbundles entries */
    size_t nbundles;
    isa_fmt_PREDEXT_t *preds_more; /* the 2nd.. PredExt of each instruction (allocated
                             on the first one, nbundles entries: never moves) */
} isa_stream_t;

/* Decode a whole stream; `engine` (a TPB engine) is checked against each
 * opcode's legality bitmap unless it is ISA_ENG_UNASSIGNED. */
isa_status_t isa_stream_decode(const uint8_t *buf, size_t len, isa_engine_t engine,
                               isa_stream_t *out, isa_err_t *err);
/* The same with the caller's per-format plans (isa_plans_t): the same
 * results; a stream of a few bundles then builds no plan. */
isa_status_t isa_stream_decode_planned(isa_plans_t *ps, const uint8_t *buf, size_t len,
                                       isa_engine_t engine, isa_stream_t *out, isa_err_t *err);
void isa_stream_free(isa_stream_t *s);

/* Number of elements addressed by a TAP (partitions x free counts) and by its
 * free dims alone. */
uint64_t isa_tap_free_elems(const isa_tap_t *t);

#endif
