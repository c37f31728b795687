/* validate_int.h - pieces shared by the op validator files (validate.c,
 * validate_dma.c, validate_memo.c): the validation context, the message
 * builder, the check memo's slot and the operand helpers. */
#ifndef TPB_ENC_VALIDATE_INT_H
#define TPB_ENC_VALIDATE_INT_H

#include "builder.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    const tir_kernel_t *k;
    const tpb_target_t *tg;
    const tir_op_t *op;
    tpb_err_t *err;
    enc_check_memo_t *memo;      /* check_ap's passes (builder.h), NULL */
} vctx_t;

static inline int vfail(const vctx_t *v, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline int vfail(const vctx_t *v, const char *field, const char *fmt, ...)
{
    char tmp[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (field)
        return tpb_errf(v->err, "%s (%s): field '%s': %s", v->op->path,
                        tir_op_name(v->op->kind), field, tmp);
    return tpb_errf(v->err, "%s (%s): %s", v->op->path, tir_op_name(v->op->kind), tmp);
}

/* The check memo's slot of record a (builder.h enc_check_memo_t) */
static inline unsigned enc_check_memo_slot(const tir_ap_t *a)
{
    return (unsigned)(((uintptr_t)a >> 3) * 0x9e3779b97f4a7c15ull >> 56) % ENC_CHECK_MEMO;
}

static inline const tir_tensor_t *tens(const vctx_t *v, const tir_ap_t *a)
{
    return a->tensor >= 0 ? &v->k->tensors[a->tensor] : NULL;
}

/* The dtype operand a reads or writes: its dtype view's (NKI
 * tensor.view(dtype)), else its tensor's.  Every dtype rule of an op is
 * about what the engine sees, so the rules read this, not the tensor. */
static inline unsigned odt(const vctx_t *v, const tir_ap_t *a)
{
    return tir_ap_dtype(&v->k->tensors[a->tensor], a);
}

/* dtype classes of the op rules */
static inline bool is_float(unsigned dt)
{
    return isa_dtype_kind(dt) == ISA_DK_F;
}

/* Any of the 8-bit floats (the def's 1-byte F dtypes: e4m3fn, NKI's legacy
 * e4m3, e5m2). */
static inline bool is_fp8(unsigned dt)
{
    return isa_dtype_kind(dt) == ISA_DK_F && isa_dtype_size(dt) == 1;
}

/* The OCP MX element formats (matmul_mx data, quantize_mx output): e4m3fn
 * and e5m2, not NKI's legacy (IEEE-style) float8_e4m3. */
static inline bool is_mx_fp8(unsigned dt)
{
    return dt == ISA_DT_FP8E4M3 || dt == ISA_DT_FP8E5M2;
}

/* NeuronCore-v4's packed MX quads (float8_e5m2_x4, float8_e4m3fn_x4,
 * float4_e2m1fn_x4): matmul_mx data, quantize_mx output (fp8 quads only). */
static inline bool is_quad(unsigned dt) { return isa_dtype_kind(dt) == ISA_DK_X; }

/* tile APs: partitions = count[0], free = the rest */
static inline int64_t ap_parts(const tir_ap_t *a)
{
    return a->ndim > 0 ? a->count[0] : 1;
}

static inline int64_t ap_free(const tir_ap_t *a)
{
    int64_t n = 1;
    for (int d = 1; d < a->ndim; d++)
        n *= a->count[d];
    return n;
}

static inline bool is_tile_kind(tir_tensor_kind_t k)
{
    return k == TIR_T_SBUF || k == TIR_T_PSUM;
}

static inline const char *space_word(tir_tensor_kind_t k)
{
    switch (k) {
    case TIR_T_SBUF: return "SBUF";
    case TIR_T_PSUM: return "PSUM";
    default: return "HBM";
    }
}

static inline int64_t ap_elems(const tir_ap_t *a)
{
    int64_t n = 1;
    for (int d = 0; d < a->ndim; d++)
        n *= a->count[d];
    return n;
}

static inline void shape_str(const tir_ap_t *a, char *buf, size_t n)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, n - o, "[");
    for (int d = 0; d < a->ndim && o < n; d++)
        o += (size_t)snprintf(buf + o, n - o, "%s%lld", d ? ", " : "", (long long)a->count[d]);
    if (o < n)
        snprintf(buf + o, n - o, "]");
}

static inline int need(const vctx_t *v, const tir_ap_t *a, int slot)
{
    if (a->tensor < 0)
        return vfail(v, enc_operand_name(v->op->kind, slot), "operand missing");
    return 0;
}

static inline int need_space(const vctx_t *v, const tir_ap_t *a, int slot,
                             unsigned kinds_mask, const char *what)
{
    const tir_tensor_t *t = tens(v, a);
    if (!t)
        return need(v, a, slot);
    if (!(kinds_mask & (1u << t->kind)))
        return vfail(v, enc_operand_name(v->op->kind, slot), "must be %s ('%s' is in %s)", what,
                     t->name, space_word(t->kind));
    return 0;
}

#define K(x) (1u << TIR_T_##x)
#define HBM_KINDS (K(INPUT) | K(OUTPUT) | K(CONSTANT) | K(SCRATCH))

int enc_validate_dma(const vctx_t *v);   /* validate_dma.c */
/* True only when the op is a plain direct load, store or dma_copy (one
 * source, no other operand, no engine named) that enc_validate_dma and
 * the generic checks would pass, found without the generic walk; false
 * (nothing said) sends it the full way, which finds and words any error.
 * Calls enc_check_ap_memo as the full way does, in its order. */
bool enc_dma_quick_pass(const vctx_t *v);   /* validate_dma.c */
/* check_ap (bounds and tile structure of operand a, slot naming it) through
 * v's memo (validate_ap.c), h: a's slot there (enc_check_memo_slot) */
int enc_check_ap_memo_miss(const vctx_t *v, const tir_ap_t *a, int slot, int64_t bound,
                           unsigned h);

/* A direct DMA: check_ap allows it a partition stride. */
static inline bool enc_direct_dma(const tir_op_t *op)
{
    return (op->kind == TIR_LOAD || op->kind == TIR_STORE || op->kind == TIR_DMA_COPY) &&
           op->rare->remote_core < 0;
}

/* enc_check_ap_memo_miss, its commonest answer (the record's pass in the
 * memo's slot) inline: the call saved registers for the whole check.
 * Always inlined (the compiler made it a function of its own: a call
 * for each answer, ~10 instructions an operand). */
static inline __attribute__((always_inline)) int enc_check_ap_memo(const vctx_t *v,
                                                                   const tir_ap_t *a, int slot,
                                                                   int64_t bound)
{
    const enc_check_memo_t *m = v->memo;
    unsigned h = enc_check_memo_slot(a);
    if (m && m->e[h].ap == a && m->e[h].bound == bound && m->k == v->k && m->tg == v->tg &&
        (m->e[h].any || enc_direct_dma(v->op))) {
        v->memo->hits++;
        return 0;
    }
    return enc_check_ap_memo_miss(v, a, slot, bound, h);
}
/* enc_validate_op_memo without enc_dma_quick_pass (the tests compare the
 * two) */
int enc_validate_op_full(const tir_kernel_t *k, const tpb_target_t *target, const tir_op_t *op,
                         enc_check_memo_t *m, tpb_err_t *err);

/* validate_pe.c: the Tensor-engine ops (matmul family, transposes). */
int enc_check_matmul(const vctx_t *v);
int enc_check_transpose(const vctx_t *v);

#endif
