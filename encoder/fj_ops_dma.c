/* fj_ops_dma.c - the data-movement op family of the JSON front-end: DMA, gathers, memset, shuffles (see fj.h). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fj.h"
#include "strutil.h"

/* ---- data movement ---- */



/* The DMA options of a body statement, kept after the first read when
 * dma_qos is a number or absent (the names are constants). */
typedef struct { int dge_mode, oob_mode, qos, rmw; } dma_opts_t;
static const char dma_opts_tag = 0;   /* the memo question */

/* The optional fields a DMA statement names, found in one pass over its
 * keys: a flat body's load or store names none of them, and looking each
 * absent one up cost a pass over the keys per field.  DMA_K_ALL: not
 * known (a kept statement), every field is looked up. */
enum {
    DMA_K_DGE = 1, DMA_K_OOB = 2, DMA_K_QOS = 4, DMA_K_RMW = 8,
    DMA_K_OTHER = 16, DMA_K_SRC_REG = 32, DMA_K_DST_REG = 64,
    DMA_K_OPTS = DMA_K_DGE | DMA_K_OOB | DMA_K_QOS | DMA_K_RMW,
    DMA_K_ALL = 127
};

static unsigned dma_keys(const jx_t *j, const cJSON *o)
{
    /* the FK_* keys of these fields run in the DMA_K_* order */
    _Static_assert(FK_OOB_MODE == FK_DGE_MODE + 1 && FK_DMA_QOS == FK_DGE_MODE + 2 &&
                   FK_RMW_OP == FK_DGE_MODE + 3 && FK_OTHER == FK_DGE_MODE + 4 &&
                   FK_SRC_REG == FK_DGE_MODE + 5 && FK_DST_REG == FK_DGE_MODE + 6 &&
                   FK_N == FK_DGE_MODE + 7 &&
                   DMA_K_DGE == 1 && DMA_K_OOB == 2 && DMA_K_QOS == 4 && DMA_K_RMW == 8 &&
                   DMA_K_OTHER == 16 && DMA_K_SRC_REG == 32 && DMA_K_DST_REG == 64,
                   "DMA keys out of order");
    const fj_keys_t *ks = j->keys;
    if (ks && ks->obj == o)   /* the statement's keys, found in one pass */
        return ks->present >> FK_DGE_MODE & 127u;
    unsigned m = 0;
    for (const cJSON *c = o->child; c && c->string; c = c->next) {   /* fj_field's walk */
        int k = fj_key_index(c->string);
        if (k >= FK_DGE_MODE)
            m |= 1u << (k - FK_DGE_MODE);
    }
    return m;
}

/* op's DMA options (rare fields: written only when they differ, so a
 * plain DMA keeps the shared default record) */
static inline void set_dma_opts(jx_t *j, tir_op_t *op, int dge, int oob, int qos)
{
    if (dge != op->rare->dge_mode || oob != op->rare->oob_mode || qos != op->rare->qos) {
        tir_op_rare_t r = *op->rare;
        r.dge_mode = dge;
        r.oob_mode = oob;
        r.qos = qos;
        op->rare = enc_rare_in(&j->b, &r);
    }
}

static int dma_opts(jx_t *j, const cJSON *o, const char *path, tir_op_t *op, int *rmw,
                    unsigned *keys)
{
    const dma_opts_t *c = fj_stmt_memo(j, o, &dma_opts_tag);
    if (c) {
        set_dma_opts(j, op, c->dge_mode, c->oob_mode, c->qos);
        *rmw = c->rmw;
        return 0;
    }
    *rmw = ISA_ALU_BYPASS;
    *keys = dma_keys(j, o);
    int dge = ISA_DGE_NONE, oob = ISA_OOB_ERROR, qos = 0;
    if ((*keys & DMA_K_OPTS) &&   /* else the four reads below, of absent fields */
        (fj_get_enum(j, o, path, "dge_mode", ISA_FT_DGE, NULL, &dge, ISA_DGE_NONE) ||
         fj_get_enum(j, o, path, "oob_mode", ISA_FT_OOB, NULL, &oob, ISA_OOB_ERROR) ||
         fj_get_int_range(j, o, path, "dma_qos", &qos, 0, -1000000, 1000000) ||
         fj_get_enum(j, o, path, "rmw_op", ISA_FT_ALU, fj_alu_aliases, rmw, ISA_ALU_BYPASS)))
        return -1;
    set_dma_opts(j, op, dge, oob, qos);
    if (!fj_memo_keeps(j))   /* only in a loop */
        return 0;
    const cJSON *q = fj_field(o, "dma_qos");
    dma_opts_t *k = !q || cJSON_IsNumber(q) ? malloc(sizeof *k) : NULL;
    if (k && fj_keep(j, k, free)) {
        *k = (dma_opts_t){dge, oob, qos, *rmw};
        fj_memo_put(j, o, &dma_opts_tag, k);
    } else {
        free(k);
    }
    return 0;
}

/* combine_tiles' broadcast_num_to_memset (seed 004): a bare number where an
 * operand tile is expected becomes a compiler SBUF tile <base>_<what><n> of
 * the given shape and dtype, memset to the number before the op. */
int fj_num_tile(jx_t *j, const char *base, const char *what, unsigned dtype, int ndim,
                const int64_t *shape, double v, tir_ap_t *out)
{
    char name[64];
    snprintf(name, sizeof name, "%.36s_%.8s%d", base, what, j->b.k->ntensors % 100000);
    int tile = enc_own_tile(&j->b, name, TIR_T_SBUF, dtype, ndim, shape);
    if (tile < 0)
        return -1;
    *out = enc_ap_full(&j->b, tile);
    return enc_memset(&j->b, *out, v, ISA_ENG_UNASSIGNED) < 0 ? -1 : 0;
}

/* An operand field of a compute op that may be a bare number: the number
 * becomes a memset tile shaped like the op's (already parsed) dst access, in
 * its dtype (fj_num_tile); anything else is an ordinary access. */
int fj_get_ap_or_num(jx_t *j, const cJSON *o, const char *path, const char *fname,
                     const tir_op_t *op, const tir_ap_t **out)
{
    const cJSON *it = fj_field(o, fname);
    if (!cJSON_IsNumber(it))
        return fj_get_ap(j, o, path, fname, true, out);
    const tir_ap_t *d = op->dst;
    if (d->tensor < 0 || d->ndim < 1)
        return fj_jfail(j, path, fname, "a number operand needs a dst access");
    if (d->count[0] > 128)
        return fj_jfail(j, path, fname, "a number operand fills at most 128 rows (dst has %lld)",
                        (long long)d->count[0]);
    tir_ap_t full;
    if (fj_num_tile(j, op->name[0] ? op->name : "operand", fname,
                    j->b.k->tensors[d->tensor].dtype, d->ndim, d->count, it->valuedouble, &full))
        return -1;
    return fj_intern_ap(j, path, fname, &full, out);
}

/* load/store/dma_copy/indirect_*: the NKI fork on indirect operands */
/* legalize_store_value: store (or dma_copy) of a number = memset of a
 * compiler tile shaped like the destination access ([P, rest],
 * P <= partitions), then a store / copy of that tile
 * (docs/kernel-format.md). */
static int store_scalar(jx_t *j, const cJSON *o, const char *path, const tir_op_t *op)
{
    fj_operand_t dst;
    if (fj_get_operand(j, o, path, "dst", true, false, &dst))
        return -1;
    const tir_ap_t *d = &dst.ap;
    const tir_tensor_t *t = &j->b.k->tensors[d->tensor];
    int64_t shape[2] = {d->ndim > 0 ? d->count[0] : 1, 1};
    for (int i = 1; i < d->ndim; i++)
        shape[1] *= d->count[i];
    if (shape[0] > 128)
        return fj_jfail(j, path, "src", "a stored value fills at most 128 rows (dst has %lld)",
                        (long long)shape[0]);
    tir_ap_t full;
    if (fj_num_tile(j, op->name[0] ? op->name : (op->kind == TIR_STORE ? "store" : "dma_copy"),
                    "value", t->dtype, 2, shape,
                    fj_field(o, "src")->valuedouble, &full))
        return -1;
    if (op->kind == TIR_STORE)
        return enc_store(&j->b, dst.ap, full, false) < 0 ? -1 : 0;
    enc_dma_operand_t dd = {dst.ap, enc_ap_none(), 0}, sd = {full, enc_ap_none(), 0};
    return enc_dma_copy_ex(&j->b, &dd, &sd, op->rare->dge_mode, op->rare->oob_mode,
                           ISA_ALU_BYPASS, op->rare->qos) < 0
               ? -1
               : 0;
}

/* device_print (seed 002 codegenNeuronPrintInst: a prefix and a
 * DebugDeviceBuffer): the tile is stored to a compiler-made output tensor
 * print_<prefix> (print_<prefix>_<n> when repeated, e.g. in a loop) that
 * the tensor map marks with the prefix; `tpb sim` prints it after the run
 * and writes it like any output (docs/kernel-format.md). */
static int h_device_print(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    (void)op;
    const char *prefix;
    tir_ap_t src;
    if (fj_get_str(j, o, path, "prefix", &prefix, true) ||
        fj_get_ap_value(j, o, path, "src", true, &src))
        return -1;
    if (strlen(prefix) >= TIR_PRINT_PREFIX_LEN)
        return fj_jfail(j, path, "prefix", "longer than %d characters",
                        TIR_PRINT_PREFIX_LEN - 1);
    char base[48], name[96];
    size_t n = 0;
    for (const char *p = prefix; *p && n < 32; p++)
        base[n++] = isalnum((unsigned char)*p) || *p == '_' ? *p : '_';
    base[n] = 0;
    snprintf(name, sizeof name, "print_%s", base);
    for (int k = 1; enc_name_declared(&j->b, name) && k < 100000; k++)
        snprintf(name, sizeof name, "print_%s_%d", base, k);
    int64_t shape[TIR_MAX_DIMS];
    for (int d = 0; d < src.ndim; d++)
        shape[d] = src.count[d];
    const tir_tensor_t *st = src.tensor >= 0 ? &j->b.k->tensors[src.tensor] : NULL;
    if (!st || (st->kind != TIR_T_SBUF && st->kind != TIR_T_PSUM))
        return fj_jfail(j, path, "src", "device_print prints an SBUF or PSUM tile");
    int t = enc_own_output(&j->b, name, st->dtype, src.ndim, shape);
    if (t < 0)
        return -1;
    if (!(j->b.k->tensors[t].print_prefix = tir_intern(j->b.k, prefix)))
        return fj_jfail(j, path, "prefix", "out of memory");
    return enc_store(&j->b, enc_ap_full(&j->b, t), src, false) < 0 ? -1 : 0;
}

/* load `other` (seed 004: dst.tensor.init_value = other): the fill value of
 * every dst element the load does not reach.  The destination access is
 * memset to `other` first (same engine choice as a memset op), then the load
 * overwrites what it reaches: rows an oob_mode skip gather leaves out keep
 * `other` (docs/kernel-format.md). */
static int load_other(jx_t *j, const cJSON *o, const char *path, const tir_op_t *op,
                      const fj_operand_t *dst, unsigned keys)
{
    if (!(keys & DMA_K_OTHER) || !fj_field(o, "other"))
        return 0;
    double v;
    if (fj_get_num(j, o, path, "other", &v, 0))
        return -1;
    if (op->kind != TIR_LOAD && op->kind != TIR_INDIRECT_LOAD)
        return fj_jfail(j, path, "other", "only a load takes a fill value");
    const tir_tensor_t *t = dst->ap.tensor >= 0 ? &j->b.k->tensors[dst->ap.tensor] : NULL;
    if (!t || t->kind != TIR_T_SBUF || dst->index.tensor >= 0)
        return fj_jfail(j, path, "other", "the load destination must be an SBUF tile");
    return enc_memset(&j->b, dst->ap, v, ISA_ENG_UNASSIGNED) < 0 ? -1 : 0;
}

/* A plain load or store in a loop body (dst and src strings; no other,
 * src_reg, dst_reg): after a successful first read the two operand fields
 * are kept and later iterations read only them, then apply rmw_op as the
 * full read does, in its order (so errors read the same). */
typedef struct {
    const cJSON *dst, *src;
} dma_kept_t;

static const char dma_tag = 0;

/* A plain load/store's flags from oob_mode and rmw_op (bypass or add):
 * 1 (emit the op) or -1. */
static int dma_flags(jx_t *j, const char *path, tir_op_t *op, int rmw)
{
    if (op->rare->oob_mode == ISA_OOB_SKIP)
        op->flags |= TIR_F_OOB_SKIP;
    if (rmw == ISA_ALU_ADD)
        op->flags |= TIR_F_RMW_ADD;
    else if (rmw != ISA_ALU_BYPASS)
        return fj_jfail(j, path, "rmw_op", "only add is supported");
    return 1;
}

static int dma_plain(jx_t *j, const dma_kept_t *c, const char *path, tir_op_t *op, int rmw)
{
    if (fj_intern_ap_str(j, c->dst, path, "dst", &op->dst) ||
        fj_intern_ap_str(j, c->src, path, "src", &op->src[0]))
        return -1;
    if (op->kind == TIR_LOAD && rmw != ISA_ALU_BYPASS)
        return fj_jfail(j, path, "rmw_op", "load has no rmw_op");
    op->nsrc = 1;
    return dma_flags(j, path, op, rmw);
}

static void dma_keep(jx_t *j, const cJSON *o, const tir_op_t *op)
{
    if ((op->kind != TIR_LOAD && op->kind != TIR_STORE) || !fj_memo_keeps(j))
        return;
    const cJSON *dst = fj_field(o, "dst"), *src = fj_field(o, "src");
    if (!cJSON_IsString(dst) || !cJSON_IsString(src) || fj_field(o, "other") ||
        fj_field(o, "src_reg") || fj_field(o, "dst_reg"))
        return;
    dma_kept_t *c = malloc(sizeof *c);
    if (!c || !fj_keep(j, c, free)) {
        free(c);
        return;
    }
    *c = (dma_kept_t){dst, src};
    fj_memo_put(j, o, &dma_tag, c);
}

static int dma_read(jx_t *j, const cJSON *o, const char *path, tir_op_t *op, int rmw,
                    unsigned keys);

static int h_dma(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int rmw;
    unsigned keys = DMA_K_ALL;
    if (dma_opts(j, o, path, op, &rmw, &keys))
        return -1;
    const dma_kept_t *c = fj_stmt_memo(j, o, &dma_tag);
    bool kept = c != NULL;
    /* a plain load or store read whole (keys known: no other, src_reg,
     * dst_reg): what dma_read does with its two strings, in dma_plain's
     * order, which is the same; the operands through fj_intern_ap_str (a
     * tile's whole record interned once, not per op) */
    dma_kept_t f = {NULL, NULL};
    if (!c && (op->kind == TIR_LOAD || op->kind == TIR_STORE) && keys != DMA_K_ALL &&
        !(keys & (DMA_K_OTHER | DMA_K_SRC_REG | DMA_K_DST_REG))) {
        f = (dma_kept_t){fj_kfield(j, o, FK_DST, "dst"), fj_kfield(j, o, FK_SRC, "src")};
        c = fj_is_string(f.dst) && fj_is_string(f.src) ? &f : NULL;
    }
    int rc = c ? dma_plain(j, c, path, op, rmw) : dma_read(j, o, path, op, rmw, keys);
    if (rc == 1 && !kept)   /* read whole: kept for the next iteration */
        dma_keep(j, o, op);
    return rc;
}

/* register-offset (dynamic) DMA, docs/kernel-format.md: src_reg / dst_reg
 * of a load, store or dma_copy into op (-1 when absent) */
static int dma_regs(jx_t *j, const cJSON *o, const char *path, unsigned keys, tir_op_t *op)
{
    int sr = -1, dr = -1;
    if ((keys & DMA_K_SRC_REG && fj_field(o, "src_reg") &&
         fj_get_int_range(j, o, path, "src_reg", &sr, -1, 0, ISA_NUM_REGS - 1)) ||
        (keys & DMA_K_DST_REG && fj_field(o, "dst_reg") &&
         fj_get_int_range(j, o, path, "dst_reg", &dr, -1, 0, ISA_NUM_REGS - 1)))
        return -1;
    if (sr != op->rare->src_reg || dr != op->rare->dst_reg) {
        tir_op_rare_t r = *op->rare;
        r.src_reg = sr;
        r.dst_reg = dr;
        op->rare = enc_rare_in(&j->b, &r);
    }
    return 0;
}

/* h_dma's full read, after dma_opts */
static int dma_read(jx_t *j, const cJSON *o, const char *path, tir_op_t *op, int rmw,
                    unsigned keys)
{
    if ((op->kind == TIR_STORE || op->kind == TIR_DMA_COPY) &&
        cJSON_IsNumber(fj_field(o, "src"))) {
        if (rmw != ISA_ALU_BYPASS || fj_field(o, "dst_reg") || fj_field(o, "src_reg"))
            return fj_jfail(j, path, "src", "a stored value takes no rmw_op, src_reg or dst_reg");
        return store_scalar(j, o, path, op);
    }
    fj_operand_t dst, src;
    if (fj_get_operand(j, o, path, "dst", true, true, &dst) ||
        fj_get_operand(j, o, path, "src", true, true, &src))
        return -1;
    if (op->kind == TIR_INDIRECT_LOAD && src.index.tensor < 0)
        return fj_jfail(j, path, "src", "indirect_load needs an indirect source "
                     "({\"tensor\", \"index\"})");
    if (op->kind == TIR_INDIRECT_SAVE && dst.index.tensor < 0)
        return fj_jfail(j, path, "dst", "indirect_save needs an indirect destination "
                     "({\"tensor\", \"index\"})");
    if (op->kind == TIR_LOAD && rmw != ISA_ALU_BYPASS)
        return fj_jfail(j, path, "rmw_op", "load has no rmw_op");
    if (load_other(j, o, path, op, &dst, keys))
        return -1;
    bool indirect = src.index.tensor >= 0 || dst.index.tensor >= 0;
    if (op->kind == TIR_LOAD || op->kind == TIR_STORE) {
        if (!indirect) {
            op->dst = enc_in(&j->b, dst.ap);
            op->src[0] = enc_in(&j->b, src.ap);
            op->nsrc = 1;
            if (dma_regs(j, o, path, keys, op))
                return -1;
            return dma_flags(j, path, op, rmw);   /* 1: emit op */
        }
    }
    bool uniq;
    if (fj_get_bool(j, o, path, "unique_indices", &uniq))
        return -1;
    if (uniq && (dst.index.tensor < 0 || rmw != ISA_ALU_ADD))
        return fj_jfail(j, path, "unique_indices", "applies to a scatter-add (an indirect dst "
                        "with rmw_op add)");
    if (op->kind == TIR_DMA_COPY && dma_regs(j, o, path, keys, op))
        return -1;
    enc_dma_operand_t d = {dst.ap, dst.index, dst.bound}, s = {src.ap, src.index, src.bound};
    int at = enc_dma_copy_reg(&j->b, &d, &s, op->rare->dge_mode, op->rare->oob_mode, rmw,
                              op->rare->qos, op->rare->src_reg, op->rare->dst_reg);
    if (at < 0)
        return -1;
    if (uniq)
        j->b.k->ops[at].flags |= TIR_F_UNIQUE_IDX;
    return 0;
}

/* NKI load_transpose2d(dtype=): a dma_transpose whose SBUF dst has another
 * dtype than src transposes into a fresh tile of src's dtype (scoped like
 * any tile of this body) and casts with tensor_copy; the DMA transpose
 * itself never casts.  Returns 0 (emitted here) or 1 (plain op). */
static int transpose_cast(jx_t *j, tir_op_t *op)
{
    const tir_kernel_t *k = j->b.k;
    int s = op->src[0]->tensor, d = op->dst->tensor;
    if (s < 0 || d < 0 || op->index->tensor >= 0 || k->tensors[s].dtype == k->tensors[d].dtype ||
        k->tensors[d].kind != TIR_T_SBUF)
        return 1;
    tir_ap_t final = *op->dst;
    int t = enc_own_tile(&j->b, "dma_transpose_cast", TIR_T_SBUF, k->tensors[s].dtype,
                         final.ndim, final.count);
    if (t < 0)
        return -1;
    op->dst = enc_in(&j->b, enc_ap_full(&j->b, t));
    if (enc_emit(&j->b, op) < 0)
        return -1;
    return enc_tensor_copy(&j->b, final, enc_ap_full(&j->b, t), ISA_ENG_UNASSIGNED) < 0 ? -1 : 0;
}

static int h_dma_transpose(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int rmw;
    unsigned keys;
    if (dma_opts(j, o, path, op, &rmw, &keys))
        return -1;
    if (rmw != ISA_ALU_BYPASS)
        return fj_jfail(j, path, "rmw_op", "dma_transpose has no rmw_op");
    fj_operand_t src;
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_get_operand(j, o, path, "src", true, true, &src))
        return -1;
    op->src[0] = enc_in(&j->b, src.ap);
    op->nsrc = 1;
    op->index = enc_in(&j->b, src.index);
    {
        tir_op_rare_t rb = *op->rare;
        rb.index_bound = src.bound;
        op->rare = enc_rare_in(&j->b, &rb);
    }
    if (op->rare->oob_mode == ISA_OOB_SKIP)
        op->flags |= TIR_F_OOB_SKIP;
    const cJSON *ax = fj_field(o, "axes");
    tir_op_rare_t r = *op->rare;
    if (!ax) {   /* default: the supported permutation for the rank */
        static const int def[5][4] = {{0}, {0}, {1, 0}, {2, 1, 0}, {3, 1, 2, 0}};
        int n = src.ap.ndim;
        r.n_transpose_axes = n >= 2 && n <= 4 ? n : 0;
        for (int i = 0; i < r.n_transpose_axes; i++)
            r.transpose_axes[i] = def[n][i];
        op->rare = enc_rare_in(&j->b, &r);
        return transpose_cast(j, op);
    }
    if (!cJSON_IsArray(ax))
        return fj_jfail(j, path, "axes", "expected an array of integers, got %s", fj_type_name(ax));
    int n = cJSON_GetArraySize(ax);
    if (n > 4)
        return fj_jfail(j, path, "axes", "%d axes (at most 4)", n);
    int i = 0;
    for (const cJSON *c = ax->child; c; c = c->next, i++) {
        int64_t v;
        if (fj_get_int_item(j, c, path, "axes", &v, NULL))
            return -1;
        if (v < 0 || v > 7)
            return fj_jfail(j, path, "axes", "axis %lld out of range", (long long)v);
        r.transpose_axes[i] = (int)v;
    }
    r.n_transpose_axes = n;
    op->rare = enc_rare_in(&j->b, &r);
    return transpose_cast(j, op);
}

static int h_local_gather(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    const char *srcname = fj_field(o, "src_buffer") ? "src_buffer" : "src";
    tir_op_rare_t r = *op->rare;
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_get_ap(j, o, path, srcname, true, &op->src[0]) ||
        fj_get_ap(j, o, path, "index", true, &op->index) ||
        fj_get_int_range(j, o, path, "num_elem_per_idx", &r.num_elem_per_idx, 1, -1000000, 1000000) ||
        fj_get_int_range(j, o, path, "num_valid_indices", &r.num_valid, 0, -1000000, 1000000000))
        return -1;
    op->rare = enc_rare_in(&j->b, &r);
    op->nsrc = 1;
    return 1;
}

static int h_gather_flattened(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "data", true, &op->src[0]) ||
        fj_get_ap(j, o, path, "indices", true, &op->index))
        return -1;
    op->nsrc = 1;
    return 1;
}

static int h_memset(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool rnd;
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_rare_num(j, o, path, "value", op, offsetof(tir_op_rare_t, value), 0) ||
        fj_get_bool(j, o, path, "random", &rnd))
        return -1;
    if (!fj_field(o, "value") && !rnd)
        return fj_jfail(j, path, "value", "missing");
    if (rnd)
        op->flags |= TIR_F_RANDOM;
    return 1;
}

static int h_stream_shuffle(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "src", true, &op->src[0]))
        return -1;
    op->nsrc = 1;
    const cJSON *m = fj_field(o, "shuffle_mask");
    if (!cJSON_IsArray(m) || cJSON_GetArraySize(m) != 32)
        return fj_jfail(j, path, "shuffle_mask", "expected 32 integers (255 = keep)");
    int i = 0;
    tir_op_rare_t r = *op->rare;
    for (const cJSON *c = m->child; c; c = c->next, i++) {
        int64_t v;
        if (fj_get_int_item(j, c, path, "shuffle_mask", &v, NULL))
            return -1;
        if (v < 0 || v > 255)
            return fj_jfail(j, path, "shuffle_mask", "entry %d is %lld (0..31 or 255)", i, (long long)v);
        r.shuffle_mask[i] = (uint8_t)v;
    }
    op->rare = enc_rare_in(&j->b, &r);
    return 1;
}

static int h_ltr(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "src", true, &op->src[0]) ||
        fj_rare_int_range(j, o, path, "reg", op, offsetof(tir_op_rare_t, reg), -1, 0,
                          ISA_NUM_REGS - 1))
        return -1;
    if (!fj_field(o, "reg"))
        return fj_jfail(j, path, "reg", "missing");
    op->nsrc = 1;
    return 1;
}

int fj_h_dst_src(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "src", true, &op->src[0]))
        return -1;
    op->nsrc = 1;
    return 1;
}

/* NKI dma_compute(dst, srcs, reduce_op, scales=None, unique_indices=True,
 * oob_mode=error): dst = sum srcs[i] * scales[i] on the DMA engine
 * (enc_dma_compute).  reduce_op add only (NKI); direct operands only: the
 * indirect read-modify-write forms are dma_copy's rmw_op add. */
static int h_dma_compute(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int red, oob;
    bool uniq = true;
    const cJSON *srcs = fj_field(o, "srcs"), *sc = fj_field(o, "scales");
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_get_enum(j, o, path, "reduce_op", ISA_FT_ALU, fj_alu_aliases, &red, -1) ||
        fj_get_enum(j, o, path, "oob_mode", ISA_FT_OOB, NULL, &oob, ISA_OOB_ERROR) ||
        (fj_field(o, "unique_indices") && fj_get_bool(j, o, path, "unique_indices", &uniq)))
        return -1;
    if (red < 0)
        return fj_jfail(j, path, "reduce_op", "missing (NKI: nl.add)");
    if (red != ISA_ALU_ADD)
        return fj_jfail(j, path, "reduce_op", "%s: only add is supported (NKI)",
                        isa_enum_name(ISA_FT_ALU, (unsigned)red));
    if (!uniq)
        return fj_jfail(j, path, "unique_indices", "false is not supported (NKI)");
    if (!cJSON_IsArray(srcs) || cJSON_GetArraySize(srcs) < 1)
        return fj_jfail(j, path, "srcs", "expected a non-empty list of tensors");
    int n = cJSON_GetArraySize(srcs);
    if (n > ENC_DMA_COMPUTE_MAX_SRCS)
        return fj_jfail(j, path, "srcs", "%d sources; at most %d", n, ENC_DMA_COMPUTE_MAX_SRCS);
    if (sc && !cJSON_IsNull(sc) && (!cJSON_IsArray(sc) || cJSON_GetArraySize(sc) != n))
        return fj_jfail(j, path, "scales", "expected a list of %d numbers (one per source) or "
                        "null", n);
    tir_ap_t ap[ENC_DMA_COMPUTE_MAX_SRCS];
    double scale[ENC_DMA_COMPUTE_MAX_SRCS];
    const cJSON *it = srcs->child, *s = sc && cJSON_IsArray(sc) ? sc->child : NULL;
    for (int i = 0; i < n; i++, it = it->next) {
        fj_operand_t opd;
        if (fj_operand_item(j, it, path, "srcs", true, &opd))
            return -1;
        if (opd.index.tensor >= 0)
            return fj_jfail(j, path, "srcs", "source %d is indirect: the read-modify-write "
                            "forms are not supported here (scatter-add: dma_copy rmw_op add)", i);
        ap[i] = opd.ap;
        scale[i] = 1.0;
        if (s) {
            char msg[300];
            if (cJSON_IsNumber(s))
                scale[i] = s->valuedouble;
            else if (!cJSON_IsString(s) ||
                     fj_eval_number(j, s->valuestring, &scale[i], msg, sizeof msg))
                return fj_jfail(j, path, "scales", "entry %d: expected a number", i);
            s = s->next;
        }
    }
    if (oob != ISA_OOB_ERROR)
        return fj_jfail(j, path, "oob_mode", "skip applies to indirect accesses only");
    return enc_dma_compute(&j->b, *op->dst, ap, scale, n) < 0 ? -1 : 0;
}

const fj_opdef_t fj_ops_dma[] = {
    {"load", TIR_LOAD, h_dma, {F_COMMON, "dst", "src", "dge_mode", "oob_mode", "dma_qos", "src_reg", "other", NULL}},
    {"store", TIR_STORE, h_dma, {F_COMMON, "dst", "src", "rmw_op", "dge_mode", "oob_mode", "dma_qos", "dst_reg", "unique_indices", NULL}},
    {"dma_copy", TIR_DMA_COPY, h_dma, {F_COMMON, "dst", "src", "rmw_op", "dge_mode", "oob_mode", "dma_qos", "src_reg", "dst_reg", "unique_indices", NULL}},
    {"dma_transpose", TIR_DMA_TRANSPOSE, h_dma_transpose, {F_COMMON, "dst", "src", "axes", "dge_mode", "oob_mode", "dma_qos", NULL}},
    {"indirect_load", TIR_INDIRECT_LOAD, h_dma, {F_COMMON, "dst", "src", "dge_mode", "oob_mode", "dma_qos", "other", NULL}},
    {"device_print", TIR_STORE, h_device_print, {F_COMMON, "prefix", "src", NULL}},
    {"indirect_save", TIR_INDIRECT_SAVE, h_dma, {F_COMMON, "dst", "src", "rmw_op", "dge_mode", "oob_mode", "dma_qos", "unique_indices", NULL}},
    {"local_gather", TIR_LOCAL_GATHER, h_local_gather, {F_COMMON, "dst", "src", "src_buffer", "index", "num_elem_per_idx", "num_valid_indices", NULL}},
    {"gather_flattened", TIR_GATHER_FLATTENED, h_gather_flattened, {F_COMMON, "dst", "data", "indices", NULL}},
    {"memset", TIR_MEMSET, h_memset, {F_COMMON, "dst", "value", "random", NULL}},
    {"stream_shuffle", TIR_STREAM_SHUFFLE, h_stream_shuffle, {F_COMMON, "dst", "src", "shuffle_mask", NULL}},
    {"load_tensor_to_register", TIR_LOAD_TENSOR_TO_REGISTER, h_ltr, {F_COMMON, "src", "reg", NULL}},
    {"broadcast_partition", TIR_BROADCAST_PARTITION, fj_h_dst_src, {F_COMMON, "dst", "src", NULL}},
    {"dma_compute", TIR_DMA_COPY, h_dma_compute, {F_COMMON, "dst", "srcs", "reduce_op", "scales", "unique_indices", "oob_mode", NULL}},
    {NULL, 0, NULL, {NULL}},
};
