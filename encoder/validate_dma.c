/* validate_dma.c - build-time validation of the DMA ops (load, store,
 * dma_copy, dma_transpose, indirect load/save, sendrecv); the compute ops
 * are in validate.c.  Messages as there. */
#include "validate_int.h"

/* Shapes equal after dropping count-1 dims (DMA operands). */
static bool squeezed_equal(const tir_ap_t *a, const tir_ap_t *b)
{
    if (a->ndim == b->ndim) {   /* mostly the same counts (one compare a dim) */
        int d = 0;
        while (d < a->ndim && a->count[d] == b->count[d])
            d++;
        if (d == a->ndim)
            return true;
    }
    int i = 0, j = 0;
    for (;;) {
        while (i < a->ndim && a->count[i] == 1)
            i++;
        while (j < b->ndim && b->count[j] == 1)
            j++;
        if (i >= a->ndim || j >= b->ndim)
            return i >= a->ndim && j >= b->ndim;
        if (a->count[i] != b->count[j])
            return false;
        i++;
        j++;
    }
}

static int check_oob_direct(const vctx_t *v)
{
    if (tir_oob_skip(v->op))
        return vfail(v, "oob_mode", "oob_mode.skip is not supported for direct memory access. "
                     "Only oob_mode.error is allowed (got oob_mode.skip)");
    return 0;
}

static int check_dma_common(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    if (op->rare->qos < 0 || op->rare->qos > 255)
        return vfail(v, "dma_qos", "%d out of range 0..255", op->rare->qos);
    if (!isa_enum_name(ISA_FT_DGE, (unsigned)op->rare->dge_mode))
        return vfail(v, "dge_mode", "invalid value %d", op->rare->dge_mode);
    if (!isa_enum_name(ISA_FT_OOB, (unsigned)op->rare->oob_mode))
        return vfail(v, "oob_mode", "invalid value %d", op->rare->oob_mode);
    return 0;
}

/* NKI dma_copy: "the total number of data elements in src must match that
 * of dst"; the shapes may differ (elements pair in C order: the lowering's
 * joint dims, or the seed's "Cannot legalize strided ..." when the two
 * patterns have no common dim structure). */
static int check_dma_shapes(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    int64_t nd = ap_elems(op->dst), ns = ap_elems(op->src[0]);
    if (nd != ns) {
        char x[96], y[96];
        shape_str(op->dst, x, sizeof x);
        shape_str(op->src[0], y, sizeof y);
        return vfail(v, "src", "shape %s does not match 'dst' shape %s (%lld elements against "
                     "%lld: a DMA moves equal element counts)", y, x, (long long)ns,
                     (long long)nd);
    }
    return 0;
}

static int check_index_tile(const vctx_t *v, int64_t rows)
{
    const tir_op_t *op = v->op;
    if (need(v, op->index, -3))
        return -1;
    const tir_tensor_t *it = tens(v, op->index);
    if (!is_tile_kind(it->kind))
        return vfail(v, "index", "must be an SBUF tile ('%s' is in %s)", it->name,
                     space_word(it->kind));
    if (it->dtype != ISA_DT_INT32 && it->dtype != ISA_DT_UINT32)
        return vfail(v, "index", "dtype %s not allowed (int32 or uint32)",
                     isa_dtype_numpy_name(it->dtype));
    if (ap_elems(op->index) != rows)
        return vfail(v, "index", "%lld index values for %lld indirect rows",
                     (long long)ap_elems(op->index), (long long)rows);
    if (op->rare->index_bound < 1)
        return vfail(v, "index", "no valid index range (index_bound %lld)",
                     (long long)op->rare->index_bound);
    /* dge_mode hw is the dynamic (DGE vector-indirect) mode: the back-end
     * decides per target (lower_dma.c) */
    return 0;
}

static void axes_str(const tir_op_t *op, char *buf, size_t n)
{
    size_t o = (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < op->rare->n_transpose_axes && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%d", i ? ", " : "", op->rare->transpose_axes[i]);
    if (o < n)
        snprintf(buf + o, n - o, op->rare->n_transpose_axes == 1 ? ",)" : ")");
}

static bool axes_are(const tir_op_t *op, int n, const int *want)
{
    if (op->rare->n_transpose_axes != n)
        return false;
    for (int i = 0; i < n; i++)
        if (op->rare->transpose_axes[i] != want[i])
            return false;
    return true;
}

static int check_dma_transpose(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    const tir_ap_t *s = op->src[0];
    char ax[64];
    axes_str(op, ax, sizeof ax);
    static const int a2[] = {1, 0}, a3[] = {2, 1, 0}, a4[] = {3, 1, 2, 0};
    bool gather = op->index->tensor >= 0;
    if (gather) {
        if (s->ndim != 3)
            return vfail(v, "axes", "%s provided for gather transpose, only 3D supported.", ax);
        /* the index TAP reads partition-major; NKI reads a [128, N] index
         * column-major (indices.T.flatten()), so N > 1 is refused here and
         * the Python front-end issues one gather-transpose per column */
        if (ap_free(op->index) != 1)
            return vfail(v, "index", "[%lld, %lld]: a gather-transpose takes one index per "
                         "partition ([n, 1]); NKI reads a [128, N] index column-major "
                         "(indices.T.flatten()): write one gather-transpose per column",
                         (long long)ap_parts(op->index), (long long)ap_free(op->index));
    }
    switch (s->ndim) {
    case 2:
        if (!axes_are(op, 2, a2))
            return vfail(v, "axes", "%s provided for 2D transpose, only (1, 0) supported.", ax);
        break;
    case 3:
        if (!axes_are(op, 3, a3))
            return vfail(v, "axes", "%s provided for 3D transpose, only (2, 1, 0) supported.", ax);
        break;
    case 4:
        if (!axes_are(op, 4, a4))
            return vfail(v, "axes", "%s provided for 4D transpose, only (3, 1, 2, 0) supported.",
                         ax);
        break;
    default:
        return vfail(v, "src", "unsupported tile.ndim %d for dma_transpose (2D, 3D or 4D)",
                     s->ndim);
    }
    if (!gather && check_oob_direct(v))
        return -1;
    const tir_tensor_t *st = tens(v, s), *dt = tens(v, op->dst);
    if (st->dtype != dt->dtype)
        return vfail(v, "dst", "dtype %s differs from src dtype %s (a transpose does not cast)",
                     isa_dtype_numpy_name(dt->dtype), isa_dtype_numpy_name(st->dtype));
    unsigned sz = isa_dtype_size(st->dtype);
    if (sz != 2 && sz != 4)
        return vfail(v, "src", "DMA transpose moves 2- or 4-byte elements (%s is %u bytes)",
                     isa_dtype_numpy_name(st->dtype), sz);
    tir_ap_t want = *s;
    for (int i = 0; i < s->ndim; i++)
        want.count[i] = s->count[op->rare->transpose_axes[i]];
    if (!squeezed_equal(&want, op->dst)) {
        char x[96], y[96];
        shape_str(op->dst, x, sizeof x);
        shape_str(&want, y, sizeof y);
        return vfail(v, "dst", "shape %s is not the transposed src shape %s", x, y);
    }
    if (gather && check_index_tile(v, s->count[0]))
        return -1;
    return 0;
}

int enc_validate_dma(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    if (check_dma_common(v))
        return -1;
    /* oob_mode on a direct load / store / dma_copy: skip on a static access
     * is a no-op (its bounds are checked when it compiles, nothing is out of
     * bounds when it runs; the NKI Library's MX MoE passes it so); with a
     * register offset it is the dynamic-address check (the trigger's bounds,
     * lower_dma.c).  NKI's docs refuse it only on dma_transpose (the seed's
     * message, check_oob_direct). */
    switch (op->kind) {
    case TIR_LOAD:
        if (need_space(v, op->src[0], 0, HBM_KINDS, "an HBM tensor") ||
            need_space(v, op->dst, -1, K(SBUF), "an SBUF tile"))
            return -1;
        return check_dma_shapes(v);
    case TIR_STORE:
        if (need_space(v, op->dst, -1, HBM_KINDS, "an HBM tensor") ||
            need_space(v, op->src[0], 0, K(SBUF) | K(PSUM), "an SBUF or PSUM tile"))
            return -1;
        return check_dma_shapes(v);
    case TIR_DMA_COPY:
        if (need(v, op->dst, -1))
            return -1;
        /* a register offset moves an HBM side (docs/kernel-format.md) */
        if ((op->rare->src_reg >= 0 &&
             need_space(v, op->src[0], 0, HBM_KINDS, "an HBM tensor (it has src_reg)")) ||
            (op->rare->dst_reg >= 0 &&
             need_space(v, op->dst, -1, HBM_KINDS, "an HBM tensor (it has dst_reg)")))
            return -1;
        return check_dma_shapes(v);
    case TIR_DMA_TRANSPOSE:
        if (need(v, op->dst, -1))
            return -1;
        return check_dma_transpose(v);
    case TIR_INDIRECT_LOAD: {
        if (need_space(v, op->src[0], 0, HBM_KINDS, "an HBM tensor") ||
            need_space(v, op->dst, -1, K(SBUF), "an SBUF tile"))
            return -1;
        if (op->flags & TIR_F_RMW_ADD)
            return vfail(v, "rmw_op", "``dst_rmw_op`` is not supported indirect memory access "
                         "on source (``src``) operand");
        if (check_index_tile(v, op->src[0]->count[0]))
            return -1;
        return check_dma_shapes(v);
    }
    case TIR_INDIRECT_SAVE: {
        if (need_space(v, op->dst, -1, HBM_KINDS, "an HBM tensor") ||
            need_space(v, op->src[0], 0, K(SBUF) | K(PSUM), "an SBUF or PSUM tile"))
            return -1;
        if (op->op0 != ISA_ALU_BYPASS && op->op0 != ISA_ALU_ADD)
            return vfail(v, "rmw_op", "scatter op can only support bypass or add for now");
        bool add = op->op0 == ISA_ALU_ADD || (op->flags & TIR_F_RMW_ADD);
        if (add && (op->rare->oob_mode != ISA_OOB_ERROR || (op->flags & TIR_F_OOB_SKIP)))
            return vfail(v, "oob_mode", "scatter add cannot have other modes except for error");
        if (check_index_tile(v, op->dst->count[0]))
            return -1;
        return check_dma_shapes(v);
    }
    case TIR_SENDRECV: {
        if (need_space(v, op->dst, -1, K(SBUF), "an SBUF tile") ||
            need_space(v, op->src[0], 0, K(SBUF), "an SBUF tile"))
            return -1;
        if (op->rare->peer < 0 || op->rare->peer >= v->k->num_programs || op->rare->peer == v->k->program_id)
            return vfail(v, "peer", "%d is not another program (num_programs %d, this is %d)",
                         op->rare->peer, v->k->num_programs, v->k->program_id);
        return check_dma_shapes(v);
    }
    default:
        return 0;
    }
}

/* Every operand slot but dst and src[0] absent (the records compared). */
static bool only_dst_src(const tir_op_t *op)
{
    const tir_ap_t *no = &tir_ap_none;
    return op->dst2 == no && op->src[1] == no && op->src[2] == no && op->src[3] == no &&
           op->index == no && op->bias == no && op->s0.ap == no && op->s1.ap == no &&
           !op->s0.is_ap && !op->s1.is_ap;
}

bool enc_dma_quick_pass(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    unsigned dst_kinds, src_kinds;   /* what enc_validate_dma and check_operands allow */
    switch (op->kind) {
    case TIR_LOAD: dst_kinds = K(SBUF), src_kinds = HBM_KINDS; break;
    case TIR_STORE: dst_kinds = HBM_KINDS, src_kinds = K(SBUF) | K(PSUM); break;
    case TIR_DMA_COPY: dst_kinds = src_kinds = ~0u; break;
    default: return false;
    }
    dst_kinds &= ~K(CONSTANT);   /* never written */
    /* an unassigned engine: legal, and never the Pool engine's PSUM rule;
     * dge none and oob error: values enums.def names (the tests pass them) */
    if (op->rare->remote_core >= 0 || op->nsrc != 1 || op->engine != ISA_ENG_UNASSIGNED ||
        (op->kind == TIR_DMA_COPY && (op->rare->src_reg >= 0 || op->rare->dst_reg >= 0)) ||
        !only_dst_src(op) || op->rare->qos < 0 || op->rare->qos > 255 || tir_oob_skip(op) ||
        (op->rare->dge_mode != ISA_DGE_NONE && !isa_enum_name(ISA_FT_DGE, (unsigned)op->rare->dge_mode)) ||
        (op->rare->oob_mode != ISA_OOB_ERROR && !isa_enum_name(ISA_FT_OOB, (unsigned)op->rare->oob_mode)))
        return false;
    const tir_ap_t *d = op->dst, *s = op->src[0];
    int nt = v->k->ntensors;
    if (d->view || s->view)   /* a dtype view: the full way (check_operands' view rule) */
        return false;
    if (d->tensor < 0 || d->tensor >= nt || s->tensor < 0 || s->tensor >= nt ||
        !(dst_kinds & (1u << v->k->tensors[d->tensor].kind)) ||
        !(src_kinds & (1u << v->k->tensors[s->tensor].kind)))
        return false;
    /* check_operands' order; one record twice is checked once there too */
    if (enc_check_ap_memo(v, d, -1, 0) || (s != d && enc_check_ap_memo(v, s, 0, 0)))
        return false;
    return squeezed_equal(d, s);
}
