/* lower_matmul.c - matmul family on PE and the two transposes.
 *
 *   matmul         -> LdWeights(stationary) + Matmul(moving -> PSUM)
 *   matmul_mx      -> LdWeightsMX(+scale)   + MatmulMX(+scale)
 *   matmul_sparse  -> LdWeightsSparse(+tags, compress_ratio) + MatmulSparse
 *   transpose PE   -> LdWeights(src) + Matmul(moving = shared identity,
 *                     transpose mode when dst has src's dtype: a bit-exact
 *                     copy; else a plain matmul that rounds to dst's dtype)
 *                     (dst = src.T @ I; identity loaded once, front of kernel)
 *   matmul transpose (NKI is_transpose) -> the same pair: stationary = data,
 *                     moving = the caller's identity, dst = data.T (trn1 has
 *                     no transpose mode: enc_matmul_flags drops the flag)
 *   transpose DVE  -> one Transpose32 per 32x32 block
 *
 *   A NeuronCore-v4 matmul wider than one Matmul (nc_matmul_mx, and
 *   nc_matmul on pe_v4_matmul targets: up to the whole PSUM) -> one
 *   LdWeights(MX) + one Matmul(MX) per chunk of <= 512 columns inside one
 *   PSUM bank ("wide matmuls" below) */
#include "lower.h"

#include <stdio.h>
#include <string.h>

#define PSUM_BANK_BYTES 2048u

static uint64_t tap_elems_free(const isa_tap_t *t)
{
    uint64_t n = 1;
    for (unsigned i = 0; i < t->ndims; i++)
        n *= t->count[i];
    return n;
}

/* PE geometry fields shared by every LdWeights/Matmul format. */
typedef struct {
    uint32_t row_pos, col_pos, row_size, col_size;
} pe_tile_t;

static int pe_tile(lower_ctx_t *c, pe_tile_t *pt)
{
    const tir_op_t *op = c->op;
    pt->row_pos = (uint32_t)op->rare->tile_pos[0];
    pt->col_pos = (uint32_t)op->rare->tile_pos[1];
    pt->row_size = op->rare->tile_size[0] ? (uint32_t)op->rare->tile_size[0] : 128;
    pt->col_size = op->rare->tile_size[1] ? (uint32_t)op->rare->tile_size[1] : 128;
    if (pt->row_pos + pt->row_size > 128 || pt->col_pos + pt->col_size > 128)
        return lw_err(c, "tile_position (%u,%u) + tile_size (%u,%u) exceeds the 128x128 PE array",
                      pt->row_pos, pt->col_pos, pt->row_size, pt->col_size);
    unsigned g = c->t->pe_has_32_tiles ? 32 : 64;   /* the PE tile granule */
    if (pt->row_pos % g || pt->col_pos % g || pt->row_size % g || pt->col_size % g ||
        !pt->row_size || !pt->col_size)
        return lw_err(c, "tile_position (%u,%u) and tile_size (%u,%u) must be multiples of %u "
                         "on target %s",
                      pt->row_pos, pt->col_pos, pt->row_size, pt->col_size, g, c->t->name);
    return 0;
}

/* A matmul operand's access pattern: when it cannot be encoded the error
 * leads with the notes' codegenMatMulOp literal, then the reason. */
static int mm_tap(lower_ctx_t *c, bir_inst_t *in, const tir_ap_t *a, bool write,
                  const char *role, isa_tap_t *out)
{
    if (!lw_tap(c, in, a, write, role, out))
        return 0;
    const char *why = strstr(c->err->msg, "): ");
    char detail[sizeof c->err->msg];
    snprintf(detail, sizeof detail, "%s", why ? why + 3 : c->err->msg);
    return lw_err(c, "Incorrect access pattern! %s", detail);
}

/* Shape checks common to the family: K partitions agree, M <= 128, dst is
 * PSUM with M partitions and N = moving free elems, inside one 2 KiB bank.
 * With perf_mode double_row the stationary is [K, 2, M] and the moving
 * [K, 2, N] (contraction rows k and 128 + k side by side in partition k,
 * docs/semantics.md), so M and N are half their free sizes. */
static int check_mm_shapes(lower_ctx_t *c, const isa_tap_t *st, const isa_tap_t *mv,
                           const isa_tap_t *dst)
{
    if (dst->space != ISA_SPACE_PSUM)
        return lw_err(c, "dst must be a PSUM tile");
    /* a sparse stationary's Kc compressed rows stand for Kc * r dense ones */
    unsigned k = st->nparts * (c->op->kind == TIR_MATMUL_SPARSE ? c->op->rare->compress_ratio : 1);
    if (k != mv->nparts)
        return lw_err(c, "stationary has %u partitions (K%s) but moving has %u", k,
                      k != st->nparts ? ", dense" : "", mv->nparts);
    uint64_t m = tap_elems_free(st), n = tap_elems_free(mv);
    if (c->op->flags & TIR_F_DOUBLE_ROW) {
        if (m % 2 || n % 2)
            return lw_err(c, "perf_mode double_row needs stationary [K, 2, M] and moving "
                             "[K, 2, N]: even free sizes (stationary has %llu, moving %llu)",
                          (unsigned long long)m, (unsigned long long)n);
        m /= 2;
        n /= 2;
    }
    if (m > 128)
        return lw_err(c, "stationary free size M=%llu exceeds the 128 PE columns",
                      (unsigned long long)m);
    if (dst->nparts != m || tap_elems_free(dst) != n)
        return lw_err(c, "dst is [%u,%llu] but stationary.T @ moving is [%llu,%llu]", dst->nparts,
                      (unsigned long long)tap_elems_free(dst), (unsigned long long)m,
                      (unsigned long long)n);
    uint64_t bytes = n * isa_dtype_size(dst->dtype);
    if (dst->addr / PSUM_BANK_BYTES != (dst->addr + bytes - 1) / PSUM_BANK_BYTES)
        return lw_err(c, "matmul output (%llu bytes per partition at PSUM offset %u) must lie "
                         "inside one 2 KiB PSUM bank",
                      (unsigned long long)bytes, dst->addr);
    if (c->op->flags & TIR_F_DOUBLE_ROW && !c->t->pe_double_row)
        return lw_err(c, "perf_mode double_row is not available on target %s", c->t->name);
    return 0;
}

/* addDoubleRowAP's step rule: in a [K, 2, X] double-row operand the step of
 * the "2" dim must carry the second row past the whole first one (rows in
 * order, not overlapping); the notes' message, verbatim. */
static int check_double_row_step(lower_ctx_t *c, const tir_ap_t *a, const char *role)
{
    int ix = -1;
    for (int d = 1; d < a->ndim; d++)
        if (a->count[d] == 2) {
            ix = d;
            break;
        }
    if (ix < 0)
        return 0;   /* the shape check names the [K, 2, X] requirement */
    int64_t run = 1, lo = 0, hi = 0;
    for (int d = ix + 1; d < a->ndim; d++) {
        run *= a->count[d];
        int64_t span = (a->count[d] - 1) * a->step[d];
        if (span < 0)
            lo += span;
        else
            hi += span;
    }
    if (run > 1 && a->step[ix] <= hi - lo)
        return lw_err(c, "%s: incorrect double row step (%lld; the row spans %lld elements)",
                      role, (long long)a->step[ix], (long long)(hi - lo + 1));
    return 0;
}

/* ---- wide matmuls ----
 * NKI: on NeuronCore-v2/-v3 nc_matmul's moving free size is at most 512,
 * the float32 of one PSUM bank; from v4 nc_matmul and nc_matmul_mx take up
 * to 4096 float32 or 8192 bfloat16 columns, "8x PSUM banks (the entire
 * PSUM)".  One Matmul writes one PSUM bank (docs/semantics.md §6, checked by
 * the simulator), so such a matmul becomes one LdWeights(MX) of the
 * stationary followed by one Matmul(MX) per chunk of at most MM_COLS moving
 * columns whose dst lies inside one bank, each with its slices of moving
 * (and moving_scale) and dst and the op's accumulate flag.  The chunks
 * write disjoint dst columns with the same weights, so together they are
 * the one matmul NKI describes; each is a PE instruction of its own for
 * the timing (docs/compiler.md).  A matmul that fits one Matmul is lowered
 * as before. */
#define MM_COLS 512   /* ARCH2: nc_matmul N <= 512, one PSUM bank of float32 */

static bool mm_may_split(const lower_ctx_t *c, bool transpose)
{
    const tir_op_t *op = c->op;
    return op->kind == TIR_MATMUL_MX ||
           (op->kind == TIR_MATMUL && !transpose && c->t->pe_v4_matmul);
}

static int64_t ap_elems_from(const tir_ap_t *a, int first)
{
    int64_t n = 1;
    for (int d = first; d < a->ndim; d++)
        n *= a->count[d];
    return n;
}

/* The bytes [*lo, *hi) per partition that PSUM access a covers; false when
 * a is no tile access the lowering knows (its tap then names the error). */
static bool psum_span(lower_ctx_t *c, const tir_ap_t *a, uint64_t *lo, uint64_t *hi)
{
    tir_tensor_t vt;
    const tir_tensor_t *t = tir_ap_tensor(lw_tensor(c, a), a, &vt);
    if (!t || t->kind != TIR_T_PSUM || a->tensor >= c->m->nmlocs || a->offset < 0)
        return false;
    int64_t row = tir_tile_row(t);
    if (row <= 0)
        return false;
    int64_t l = a->offset % row, h = l;
    for (int d = 1; d < a->ndim; d++) {
        int64_t span = (a->count[d] - 1) * a->step[d];
        if (span < 0)
            l += span;
        else
            h += span;
    }
    if (l < 0)
        return false;
    unsigned dsz = isa_dtype_size(t->dtype);
    uint64_t base = c->m->mlocs[a->tensor].addr;
    *lo = base + (uint64_t)l * dsz;
    *hi = base + (uint64_t)(h + 1) * dsz;
    return true;
}

static bool one_bank(uint64_t lo, uint64_t hi)
{
    return lo / PSUM_BANK_BYTES == (hi - 1) / PSUM_BANK_BYTES;
}

/* double_row's moving [K, 2, N] as a pattern whose dims from *first on are
 * the n columns (a dim of 2n that merged the two rows split in two); -1
 * when its free dims do not read as [2, n]. */
static int dr_cols(const tir_ap_t *a, int64_t n, tir_ap_t *out, int *first)
{
    *out = *a;
    int64_t in = 1;   /* elements of the dims inside dim d */
    for (int d = a->ndim - 1; d >= 1; d--) {
        if (in == n) {
            *first = d + 1;
            return 0;
        }
        if (in < n && in * a->count[d] > n) {
            if (n % in || in * a->count[d] != 2 * n || a->ndim >= TIR_MAX_DIMS)
                return -1;
            for (int e = a->ndim; e > d + 1; e--)
                out->step[e] = a->step[e - 1], out->count[e] = a->count[e - 1];
            out->count[d] = 2, out->step[d] = a->step[d] * (n / in);
            out->count[d + 1] = n / in, out->step[d + 1] = a->step[d];
            out->ndim = (int16_t)(a->ndim + 1);
            *first = d + 1;
            return 0;
        }
        in *= a->count[d];
    }
    return -1;
}

/* Columns [c0, c0 + *n) of a, its dims from `first` on read row-major as
 * one run of columns (the dims before it kept whole: the partitions, and
 * double_row's [2]).  One pattern holds whole runs of the inner dims within
 * one index of the outer ones: *n shrinks to the longest such run from c0
 * (one column at least). */
static void ap_cols(const tir_ap_t *a, int first, int64_t c0, int64_t *n, tir_ap_t *out)
{
    *out = *a;
    if (first >= a->ndim) {
        *n = 1;
        return;
    }
    int best = a->ndim - 1;
    int64_t best_len = 0, best_in = 1, in = 1;
    for (int d = a->ndim - 1; d >= first && c0 % in == 0; d--) {
        int64_t left = (a->count[d] - c0 / in % a->count[d]) * in;
        int64_t len = *n / in * in < left ? *n / in * in : left;
        if (len > best_len)
            best = d, best_len = len, best_in = in;
        in *= a->count[d];
    }
    *n = best_len;
    /* dims first..best-1 fixed at their index (dropped), best from its
     * index, the inner ones whole */
    int64_t inner = best_in;
    for (int d = best; d >= first; d--) {
        out->offset += c0 / inner % a->count[d] * a->step[d];
        inner *= a->count[d];
    }
    int k = first;
    out->step[k] = a->step[best];
    out->count[k++] = best_len / best_in;
    for (int d = best + 1; d < a->ndim; d++, k++)
        out->step[k] = a->step[d], out->count[k] = a->count[d];
    for (int d = k; d < a->ndim; d++)
        out->step[d] = 0, out->count[d] = 0;
    out->ndim = (int16_t)k;
}

typedef struct {
    tir_ap_t mov, scale, dst;
    int mfirst;          /* moving's first column dim */
    int64_t cols;        /* N */
} mm_wide_t;

/* Whether the op's matmul needs more than one Matmul, and if so its
 * columns (w: moving with its columns from w->mfirst, double_row's [2, N]
 * read apart).  No: it is lowered as one (its errors as before). */
static int mm_wide(lower_ctx_t *c, bool transpose, const tir_ap_t *mov, const tir_ap_t *scale,
                   const tir_ap_t *dst, mm_wide_t *w, bool *wide)
{
    *wide = false;
    if (!mm_may_split(c, transpose))
        return 0;
    bool dr = c->op->flags & TIR_F_DOUBLE_ROW;
    int64_t n = ap_elems_from(mov, 1);
    uint64_t lo, hi;
    if (n < 1 || (dr && n % 2) || !psum_span(c, dst, &lo, &hi))
        return 0;
    n = dr ? n / 2 : n;
    if (n <= MM_COLS && one_bank(lo, hi))
        return 0;
    *wide = true;
    w->cols = n;
    w->mfirst = 1;
    w->mov = *mov;
    if (dr && dr_cols(mov, n, &w->mov, &w->mfirst))
        return lw_err(c, "perf_mode double_row: moving's free dims must read as [2, N] to be cut "
                         "into Matmuls of at most %d columns (N = %lld)",
                      MM_COLS, (long long)n);
    if (ap_elems_from(dst, 1) != n)
        return lw_err(c, "dst is [%lld,%lld] but stationary.T @ moving has %lld columns",
                      (long long)(dst->ndim ? dst->count[0] : 1), (long long)ap_elems_from(dst, 1),
                      (long long)n);
    if (scale && ap_elems_from(scale, 1) != ap_elems_from(mov, 1))
        return lw_err(c, "MX scales need one E8M0 value per column of their data");
    w->dst = *dst;
    if (scale)
        w->scale = *scale;
    return 0;
}

/* The next chunk of w from column c0 into ch (mov, scale, dst): at most
 * MM_COLS columns, each operand's slice one pattern, dst inside one PSUM
 * bank.  Returns its width. */
static int64_t mm_chunk(lower_ctx_t *c, const mm_wide_t *w, bool scale, int64_t c0,
                        mm_wide_t *ch)
{
    int64_t n = w->cols - c0 < MM_COLS ? w->cols - c0 : MM_COLS;
    for (;;) {
        int64_t was = n;
        ap_cols(&w->mov, w->mfirst, c0, &n, &ch->mov);
        if (scale)
            ap_cols(&w->scale, 1, c0, &n, &ch->scale);
        ap_cols(&w->dst, 1, c0, &n, &ch->dst);
        if (n != was)
            continue;
        uint64_t lo, hi;
        if (n == 1 || !psum_span(c, &ch->dst, &lo, &hi) || one_bank(lo, hi))
            return n;
        n--;
    }
}

/* The Matmul of a plain, sparse or transpose matmul: mov -> dstap with the
 * weights ldw loaded (stationary st); mm made by lw_inst. */
static int plain_mm(lower_ctx_t *c, bir_inst_t *mm, const bir_inst_t *ldw, const isa_tap_t *st,
                    const tir_ap_t *mov, const tir_ap_t *dstap, bool accumulate, bool transpose,
                    const pe_tile_t *pt, uint32_t perf)
{
    const tir_op_t *op = c->op;
    isa_fmt_MM_t *g = &mm->isa.f->MM;
    if (mm_tap(c, mm, mov, false, "moving", &g->moving) ||
        mm_tap(c, mm, dstap, true, "dst", &g->dst))
        return -1;
    if (check_mm_shapes(c, st, &g->moving, &g->dst))
        return -1;
    if (!c->t->pe_ocp_fp8 && (st->dtype == ISA_DT_FP8E4M3 || g->moving.dtype == ISA_DT_FP8E4M3))
        return lw_err(c, "%s dtype float8_e4m3fn (OCP FP8) needs NeuronCore-v4 (NKI nc_matmul); "
                         "target %s takes float8_e4m3 and float8_e5m2",
                      st->dtype == ISA_DT_FP8E4M3 ? "stationary" : "moving", c->t->name);
    g->row_pos = pt->row_pos, g->col_pos = pt->col_pos;
    g->row_size = pt->row_size, g->col_size = pt->col_size;
    g->perf = perf;
    g->accumulate = accumulate;
    g->onezero = !!(op->flags & TIR_F_ONEZERO_M);
    g->transpose = transpose;
    g->ifmap_quant_offset = (uint32_t)op->rare->quant_offset;
    /* seed 001 setnum_active_channels(num_active_partitions): the PE rows
     * the moving data drives, i.e. its partitions (K) */
    g->num_active_partitions = g->moving.nparts;
    if (op->rare->quant_offset && transpose)
        return lw_err(c, "ifmap_quant_offset: a transpose copies the moving identity; no offset");
    if (transpose && g->dst.dtype != st->dtype)
        return lw_err(c, "transpose mode copies stationary bit-exactly: dst must be %s, not %s",
                      isa_dtype_name(st->dtype), isa_dtype_name(g->dst.dtype));
    if (transpose && accumulate)
        return lw_err(c, "a transpose cannot accumulate");
    /* the Matmul reads the weights its LdWeights loaded: keep them together
     * on PE by also charging the stationary read to the Matmul */
    for (int i = 0; i < ldw->nacc; i++)
        bir_inst_access(c->m, mm, &ldw->acc[i]);
    return 0;
}

static int lower_matmul_plain(lower_ctx_t *c, const tir_ap_t *stat, const tir_ap_t *mov,
                              const tir_ap_t *dstap, bool accumulate, bool transpose)
{
    const tir_op_t *op = c->op;
    pe_tile_t pt;
    if (pe_tile(c, &pt))
        return -1;
    if (op->flags & TIR_F_DOUBLE_ROW &&
        (check_double_row_step(c, stat, "stationary") || check_double_row_step(c, mov, "moving")))
        return -1;
    bool sparse = op->kind == TIR_MATMUL_SPARSE;
    bir_inst_t ldw, mm;
    lw_inst(c, &ldw, sparse ? BIR_LOAD_WEIGHTS_SPARSE : BIR_LOAD_WEIGHTS,
            sparse ? ISA_OP_LDWEIGHTS_SPARSE : ISA_OP_LDWEIGHTS);
    lw_inst(c, &mm, sparse ? BIR_MATMULT_SPARSE : BIR_MATMULT,
            sparse ? ISA_OP_MATMUL_SPARSE : ISA_OP_MATMUL);
    isa_tap_t st;
    uint32_t perf = op->flags & TIR_F_DOUBLE_ROW ? ISA_PERF_DOUBLE_ROW : ISA_PERF_NORMAL;
    if (sparse) {
        isa_fmt_LDWSP_t *f = &ldw.isa.f->LDWSP;
        if (mm_tap(c, &ldw, stat, false, "stationary", &f->src) ||
            mm_tap(c, &ldw, op->src[2], false, "tags", &f->tags))
            return -1;
        if (op->rare->compress_ratio != 2 && op->rare->compress_ratio != 4)
            return lw_err(c, "compress_ratio %u must be 2 (2:4) or 4 (1:4)", op->rare->compress_ratio);
        if (f->tags.nparts != f->src.nparts ||
            isa_tap_free_elems(&f->tags) != isa_tap_free_elems(&f->src))
            return lw_err(c, "tags must have the shape of the compressed stationary");
        f->compress_ratio = op->rare->compress_ratio;
        f->row_pos = pt.row_pos, f->col_pos = pt.col_pos;
        f->row_size = pt.row_size, f->col_size = pt.col_size;
        st = f->src;
    } else {
        isa_fmt_LDW_t *f = &ldw.isa.f->LDW;
        if (mm_tap(c, &ldw, stat, false, "stationary", &f->src))
            return -1;
        f->row_pos = pt.row_pos, f->col_pos = pt.col_pos;
        f->row_size = pt.row_size, f->col_size = pt.col_size;
        f->perf = perf;
        f->onezero = !!(op->flags & TIR_F_ONEZERO_W);
        st = f->src;
    }
    mm_wide_t w, ch;
    bool wide;
    if (mm_wide(c, transpose, mov, NULL, dstap, &w, &wide))
        return -1;
    if (!wide)
        return plain_mm(c, &mm, &ldw, &st, mov, dstap, accumulate, transpose, &pt, perf) ||
                       lw_emit(c, &ldw) || lw_emit(c, &mm) ? -1 : 0;
    /* one LdWeights, then a Matmul per chunk (the first made above) */
    for (int64_t c0 = 0, k = 0; c0 < w.cols; k++) {
        int64_t n = mm_chunk(c, &w, false, c0, &ch);
        if (k)
            lw_inst(c, &mm, BIR_MATMULT, ISA_OP_MATMUL);
        if (plain_mm(c, &mm, &ldw, &st, &ch.mov, &ch.dst, accumulate, transpose, &pt, perf) ||
            (!k && lw_emit(c, &ldw)) || lw_emit(c, &mm))
            return -1;
        c0 += n;
    }
    return 0;
}

/* A quad data operand (P partitions, a multiple of 32) and its scale
 * operand: partitions through the last group's row (isa_mx_quad_scale_rows)
 * and one scale per data column.  data_what / scale_what name them in the
 * errors (quantize_mx's output and the matmul's two operands). */
int lw_mx_quad_scales(lower_ctx_t *c, const isa_tap_t *data, const isa_tap_t *scale,
                      const char *data_what, const char *scale_what)
{
    unsigned p = data->nparts, rows = isa_mx_quad_scale_rows(p);
    if (p % 32)
        return lw_err(c, "%s: %u partitions; MX quads span whole 32-partition quadrants",
                      data_what, p);
    if (scale->nparts < rows || isa_tap_free_elems(scale) != isa_tap_free_elems(data))
        return lw_err(c, "%s: %u partitions of quads need scales in the first %u partitions "
                         "(four per quadrant) x %llu columns, got %u x %llu",
                      scale_what, p, rows, (unsigned long long)isa_tap_free_elems(data),
                      scale->nparts, (unsigned long long)isa_tap_free_elems(scale));
    return 0;
}

/* The MatmulMX of nc_matmul_mx: mov (scales mscale) -> dst with the
 * weights ldw loaded; mm made by lw_inst. */
static int mx_mm(lower_ctx_t *c, bir_inst_t *mm, const bir_inst_t *ldw, const tir_ap_t *mov,
                 const tir_ap_t *mscale, const tir_ap_t *dst, const pe_tile_t *pt)
{
    const tir_op_t *op = c->op;
    const isa_fmt_LDWMX_t *f = &ldw->isa.f->LDWMX;
    isa_fmt_MMMX_t *g = &mm->isa.f->MMMX;
    if (mm_tap(c, mm, mov, false, "moving", &g->moving) ||
        mm_tap(c, mm, mscale, false, "moving_scale", &g->scale) ||
        mm_tap(c, mm, dst, true, "dst", &g->dst))
        return -1;
    if (!isa_mx_scale_dtype(f->scale.dtype) || !isa_mx_scale_dtype(g->scale.dtype))
        return lw_err(c, "MX scales must be float8_e8m0fnu or uint8 (E8M0) tiles");
    if (isa_dtype_kind(f->src.dtype) == ISA_DK_X) {
        /* NeuronCore-v4 quads: scales of 8-partition groups, four per
         * 32-partition quadrant in its first partitions (NKI nc_matmul_mx) */
        if (lw_mx_quad_scales(c, &f->src, &f->scale, "stationary", "stationary_scale") ||
            lw_mx_quad_scales(c, &g->moving, &g->scale, "moving", "moving_scale"))
            return -1;
    } else if (f->src.nparts % 32 || f->scale.nparts != f->src.nparts / 32 ||
               g->scale.nparts != g->moving.nparts / 32)
        return lw_err(c, "MX data need K (%u) a multiple of 32 and scales with K/32 partitions "
                         "(stationary_scale has %u, moving_scale %u)",
                      f->src.nparts, f->scale.nparts, g->scale.nparts);
    if (isa_tap_free_elems(&f->scale) != isa_tap_free_elems(&f->src) ||
        isa_tap_free_elems(&g->scale) != isa_tap_free_elems(&g->moving))
        return lw_err(c, "MX scales need one E8M0 value per column of their data");
    if (check_mm_shapes(c, &f->src, &g->moving, &g->dst))
        return -1;
    g->row_pos = pt->row_pos;
    g->col_pos = pt->col_pos;
    g->row_size = pt->row_size;
    g->col_size = pt->col_size;
    g->accumulate = !!(op->flags & TIR_F_ACCUMULATE);
    if (op->flags & TIR_F_MX_SCALE) {
        /* output scale: immediate fp32, or a pointer read per dst partition */
        if (op->s0.is_ap) {
            isa_tap_t sp;
            if (lw_tap(c, mm, op->s0.ap, false, "scale_ptr", &sp))
                return -1;
            if (sp.start != g->dst.start || sp.nparts != g->dst.nparts || sp.dtype != ISA_DT_FP32)
                return lw_err(c, "scale_ptr must be an fp32 [M,1] access on dst's partitions "
                                 "(%u..%u)", g->dst.start, g->dst.start + g->dst.nparts - 1);
        }
        uint32_t bits, is_ptr;
        if (lw_scalar(c, mm, &op->s0, "scale_ptr", &bits, &is_ptr))
            return -1;
        g->out_scale_en = 1;
        g->out_scale_is_ptr = is_ptr;
        g->out_scale = bits;
    }
    for (int i = 0; i < ldw->nacc; i++)
        bir_inst_access(c->m, mm, &ldw->acc[i]);
    return 0;
}

static int lower_matmul_mx(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    pe_tile_t pt;
    if (pe_tile(c, &pt))
        return -1;
    bir_inst_t ldw, mm;
    lw_inst(c, &ldw, BIR_LOAD_WEIGHTS_MX, ISA_OP_LDWEIGHTS_MX);
    lw_inst(c, &mm, BIR_MATMULT_MX, ISA_OP_MATMUL_MX);
    isa_fmt_LDWMX_t *f = &ldw.isa.f->LDWMX;
    if (mm_tap(c, &ldw, op->src[0], false, "stationary", &f->src) ||
        mm_tap(c, &ldw, op->src[2], false, "stationary_scale", &f->scale))
        return -1;
    f->row_pos = pt.row_pos;
    f->col_pos = pt.col_pos;
    f->row_size = pt.row_size;
    f->col_size = pt.col_size;
    mm_wide_t w, ch;
    bool wide;
    if (mm_wide(c, false, op->src[1], op->src[3], op->dst, &w, &wide))
        return -1;
    if (!wide)
        return mx_mm(c, &mm, &ldw, op->src[1], op->src[3], op->dst, &pt) || lw_emit(c, &ldw) ||
                       lw_emit(c, &mm) ? -1 : 0;
    /* one LdWeightsMX, then a MatmulMX per chunk (the first made above) */
    for (int64_t c0 = 0, k = 0; c0 < w.cols; k++) {
        int64_t n = mm_chunk(c, &w, true, c0, &ch);
        if (k)
            lw_inst(c, &mm, BIR_MATMULT_MX, ISA_OP_MATMUL_MX);
        if (mx_mm(c, &mm, &ldw, &ch.mov, &ch.scale, &ch.dst, &pt) || (!k && lw_emit(c, &ldw)) ||
            lw_emit(c, &mm))
            return -1;
        c0 += n;
    }
    return 0;
}

int lower_matmul(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    if (op->kind == TIR_MATMUL_MX)
        return lower_matmul_mx(c);
    return lower_matmul_plain(c, op->src[0], op->src[1], op->dst,
                              !!(op->flags & TIR_F_ACCUMULATE), !!(op->flags & TIR_F_TRANSPOSE));
}

/* ---- transpose ---- */

bool lower_pe_transpose_needs_identity(const tir_kernel_t *k, const tir_op_t *op)
{
    if (op->kind != TIR_TRANSPOSE || op->engine == ISA_ENG_DVE)
        return false;
    int s = op->src[0]->tensor, d = op->dst->tensor;
    if (s < 0 || d < 0 || s >= k->ntensors || d >= k->ntensors)
        return false;
    return true;
}

static int transpose_pe(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    if (c->ident_tile < 0)
        return lw_err(c, "internal: PE transpose without the shared identity tile");
    const tir_tensor_t *src = lw_tensor(c, op->src[0]);
    if (!src)
        return lw_err(c, "src: missing operand");
    int64_t k = op->src[0]->ndim >= 1 ? op->src[0]->count[0] : 1;
    /* moving = identity[0:K, 0:K] */
    tir_ap_t id;
    memset(&id, 0, sizeof id);
    id.tensor = c->ident_tile;
    id.offset = 0;
    id.ndim = 2;
    id.step[0] = 128, id.count[0] = k;
    id.step[1] = 1, id.count[1] = k;
    return lower_matmul_plain(c, op->src[0], &id, op->dst, false,
                              lw_tensor(c, op->dst) &&
                                  lw_dtype(c, op->dst) == lw_dtype(c, op->src[0]));
}

static int transpose_dve(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t probe;
    bir_inst_init(&probe, BIR_TRANSPOSE32, ISA_OP_TRANSPOSE32);
    isa_tap_t s, d;
    if (lw_tap(c, &probe, op->src[0], false, "src", &s) ||
        lw_tap(c, &probe, op->dst, true, "dst", &d))
        return -1;
    if (s.ndims > 1 || d.ndims > 1)
        return lw_err(c, "DVE transpose takes 2-D [P,F] operands");
    uint32_t P = s.nparts, F = s.ndims ? s.count[0] : 1;
    uint32_t dF = d.ndims ? d.count[0] : 1;
    if (d.nparts != F || dF != P)
        return lw_err(c, "dst is [%u,%u] but src.T is [%u,%u]", d.nparts, dF, F, P);
    /* NKI: the Vector engine reads and writes SBUF or PSUM */
    if ((s.space != ISA_SPACE_SBUF && s.space != ISA_SPACE_PSUM) ||
        (d.space != ISA_SPACE_SBUF && d.space != ISA_SPACE_PSUM))
        return lw_err(c, "DVE transpose operands must be SBUF or PSUM tiles");
    /* NKI: the Vector engine transposes [32, 32] or smaller; larger tiles
     * go block by block, the last row / column of blocks partial */
    if (s.start % 32 || d.start % 32)
        return lw_err(c, "DVE transpose blocks start at a 32-partition quadrant: [%u,%u] has "
                         "start partitions %u, %u; use the PE transpose otherwise",
                      P, F, s.start, d.start);
    unsigned dsz = isa_dtype_size(s.dtype);
    /* one Transpose32 per 32x32 block: src block (bi, bj) -> dst block (bj, bi) */
    for (uint32_t bi = 0; bi < P; bi += 32) {
        for (uint32_t bj = 0; bj < F; bj += 32) {
            uint32_t np = P - bi < 32 ? P - bi : 32, nf = F - bj < 32 ? F - bj : 32;
            bir_inst_t in;
            lw_inst(c, &in, BIR_TRANSPOSE32, ISA_OP_TRANSPOSE32);
            isa_tap_t *a = &in.isa.f->COPY.in, *b = &in.isa.f->COPY.out;
            *a = s;
            a->start = s.start + bi, a->nparts = np;
            a->addr = s.addr + bj * (uint32_t)s.step[0] * dsz;
            a->ndims = 1, a->count[0] = nf;
            *b = d;
            b->start = d.start + bj, b->nparts = nf;
            b->addr = d.addr + bi * (uint32_t)(d.ndims ? d.step[0] : 1) * isa_dtype_size(d.dtype);
            b->ndims = 1, b->count[0] = np;
            b->step[0] = d.ndims ? d.step[0] : 1;
            /* a count of 1 may come with step 0: step 1 so that the
             * accesses below span the element */
            if (nf == 1)
                a->step[0] = 1;
            if (np == 1)
                b->step[0] = 1;
            bir_access_t ra = {.space = a->space, .p0 = a->start, .p1 = a->start + np,
                               .lo = a->addr,
                               .hi = a->addr + (uint64_t)nf * (uint32_t)a->step[0] * dsz,
                               .write = 0};
            bir_access_t wa = {.space = b->space, .p0 = b->start, .p1 = b->start + nf,
                               .lo = b->addr,
                               .hi = b->addr + (uint64_t)np * (uint32_t)b->step[0] *
                                                   isa_dtype_size(b->dtype),
                               .write = 1};
            bir_inst_access(c->m, &in, &ra);
            bir_inst_access(c->m, &in, &wa);
            in.engine = ISA_ENG_DVE;
            if (bir_block_append(bir_main_block(c->m), &in, c->err) < 0)
                return -1;
        }
    }
    return 0;
}

int lower_transpose(lower_ctx_t *c)
{
    int eng = c->op->engine;
    if (eng == ISA_ENG_DVE)
        return transpose_dve(c);
    if (eng != ISA_ENG_PE && eng != ISA_ENG_UNASSIGNED)
        return lw_err(c, "transpose runs on PE (via the identity) or DVE (Transpose32), not %s",
                      isa_engine_name((isa_engine_t)eng));
    return transpose_pe(c);
}

/* ---- enableLDWOpt ----
 * The notes name the flag (captured next to dumpBinPerInst) but not what it
 * does; this is the design here.  PE keeps the weights of its last
 * LdWeights until the next weight load, so a second LdWeights with the same
 * fields (source, dtype, tile position, perf, onezero) is redundant when,
 * between the two in program order, nothing writes the weights' memory and
 * no other PE instruction loads weights or uses them differently (MX,
 * sparse, transpose-mode Matmul).  The Matmul after a removed LdWeights
 * already carries the stationary read (lower_matmul_plain), so its
 * dependencies are unchanged. */
static bool writes_over(const bir_inst_t *in, const bir_inst_t *ldw)
{
    for (int i = 0; i < in->nacc; i++)
        for (int j = 0; j < ldw->nacc; j++)
            if (in->acc[i].write && bir_access_overlap(&in->acc[i], &ldw->acc[j]))
                return true;
    return false;
}

static bool breaks_weights(const bir_inst_t *in)
{
    switch (in->isa.op) {
    case ISA_OP_LDWEIGHTS_MX:
    case ISA_OP_LDWEIGHTS_SPARSE:
    case ISA_OP_MATMUL_MX:
    case ISA_OP_MATMUL_SPARSE:
        return true;
    case ISA_OP_MATMUL:
        return in->isa.f->MM.transpose != 0;
    default:
        return false;
    }
}

int lw_ldw_opt(bir_module_t *m)
{
    bir_block_t *b = bir_main_block(m);
    int last = -1, out = 0, removed = 0;
    for (int i = 0; i < b->ninsts; i++) {
        bir_inst_t *in = &b->insts[i];
        bool drop = false;
        if (in->isa.op == ISA_OP_LDWEIGHTS) {
            drop = last >= 0 && memcmp(&b->insts[last].isa.f->LDW, &in->isa.f->LDW,
                                       sizeof in->isa.f->LDW) == 0;
            if (!drop)
                last = out;   /* index after compaction */
        } else if (last >= 0 && (breaks_weights(in) || writes_over(in, &b->insts[last]))) {
            last = -1;
        }
        if (drop) {
            removed++;
            continue;
        }
        if (out != i)
            b->insts[out] = *in;
        out++;
    }
    b->ninsts = out;
    return removed;
}
