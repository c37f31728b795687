/* pe.c - Tensor engine (PE): LdWeights / Matmul and their MX and sparse
 * forms.  The stationary weights live in ctx->pe (128x128 cells, fp32
 * values after dtype conversion).  The PE reads SBUF and writes PSUM only
 * (checked by the operand resolver).  Semantics: docs/semantics.md "PE";
 * costs: docs/timing-compute.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mx_quad.h"
#include "ops.h"
#include "pe_mac.h"
#include "pe_quad.h"

#define PE_DIM 128
#define MX_BLOCK 32
#define SPARSE_GROUP 4

typedef struct {
    unsigned row_pos, col_pos, row_size, col_size;
} pe_tile_t;

static void free_all(sim_opnd_t *o, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sim_opnd_free(&o[i]);
}

/* Tile position/size: multiples of the target's tile granule (32 where
 * 32x32 tiles exist, else 64), inside the 128x128 array. */
static int tile_check(sim_exec_ctx_t *ctx, pe_tile_t t)
{
    unsigned g = ctx->target->pe_has_32_tiles ? 32 : 64;
    if (t.row_size == 0 || t.col_size == 0 || t.row_pos % g || t.col_pos % g ||
        t.row_size % g || t.col_size % g || t.row_pos + t.row_size > PE_DIM ||
        t.col_pos + t.col_size > PE_DIM)
        return sim_fail(ctx, "row_pos/col_pos/row_size/col_size: PE tile rows [%u, +%u) cols "
                        "[%u, +%u) must be non-empty multiples of %u inside the 128x128 array "
                        "on %s", t.row_pos, t.row_size, t.col_pos, t.col_size, g,
                        ctx->target->name);
    return 0;
}

static int perf_check(sim_exec_ctx_t *ctx, unsigned perf)
{
    if (perf == ISA_PERF_NORMAL)
        return 0;
    if (perf == ISA_PERF_DOUBLE_ROW && !ctx->target->pe_double_row)
        return sim_fail(ctx, "perf: double_row is not available on %s", ctx->target->name);
    if (perf != ISA_PERF_DOUBLE_ROW)
        return sim_fail(ctx, "perf: invalid perf mode %u", perf);
    return 0;
}

/* double_row (ARCH3): fp8 only, whole array (no row/column tiling). */
static int double_row_check(sim_exec_ctx_t *ctx, pe_tile_t t, const sim_opnd_t *o)
{
    if (t.row_pos || t.col_pos || t.row_size != PE_DIM || t.col_size != PE_DIM)
        return sim_fail(ctx, "perf: double_row uses the whole 128x128 array (row_pos/col_pos 0, "
                        "sizes 128), not tile rows [%u, +%u) cols [%u, +%u)", t.row_pos,
                        t.row_size, t.col_pos, t.col_size);
    if (isa_dtype_kind(o->dtype) != ISA_DK_F || o->esize != 1)
        return sim_fail(ctx, "%s: double_row is an fp8 mode, not %s", o->name,
                        isa_dtype_name(o->dtype));
    if (o->nfree % 2)
        return sim_fail(ctx, "%s: double_row needs [K, 2, n] data: an even element count "
                        "per partition, not %u", o->name, o->nfree);
    return 0;
}

/* Clear a tile before a load: cells outside the loaded K x M stay zero and
 * are marked not loaded.  The caller writes w and w_loaded of the first
 * k rows x m columns itself (0, 0: nothing), so only the rest of those is
 * cleared; w_dr, sparse_tags and mx_scale only once a load wrote them. */
static void tile_clear(sim_pe_state_t *pe, pe_tile_t t, unsigned k, unsigned m)
{
    for (unsigned r = t.row_pos; r < t.row_pos + t.row_size; r++) {
        unsigned c0 = r - t.row_pos < k ? m : 0; /* columns [0, c0) are written */
        memset(&pe->w[r][t.col_pos + c0], 0, (t.col_size - c0) * sizeof pe->w[0][0]);
        memset(&pe->w_loaded[r][t.col_pos + c0], 0, t.col_size - c0);
        if (!pe->aux_dirty)
            continue;
        memset(&pe->w_dr[r][t.col_pos], 0, t.col_size * sizeof pe->w_dr[0][0]);
        memset(&pe->sparse_tags[r][t.col_pos], 0, t.col_size);
    }
    for (unsigned b = t.row_pos / MX_BLOCK;
         pe->aux_dirty && b < (t.row_pos + t.row_size) / MX_BLOCK; b++)
        memset(&pe->mx_scale[b][t.col_pos], 0, t.col_size);
}

static int fits_tile(sim_exec_ctx_t *ctx, pe_tile_t t, unsigned k, unsigned m, const char *what)
{
    if (k > t.row_size || m > t.col_size)
        return sim_fail(ctx, "%s: %u rows x %u columns do not fit the %ux%u PE tile", what, k,
                        m, t.row_size, t.col_size);
    return 0;
}

/* ---- LdWeights ---- */

/* The raw bits of one partition's m_cols elements (transpose mode copies
 * them).  fp32/bf16 runs were converted into w bit-exactly (a copy, a
 * 16-bit shift), so their bits are w's, taken from the row just written;
 * other dtypes are read back from the source. */
static void ldw_bits(uint32_t *dst, const float *w, const sim_opnd_t *s, unsigned k,
                     uint32_t m_cols, uint32_t run)
{
    if (run) {
        unsigned shift = s->esize == 2 ? 16 : 0;
        for (uint32_t m = 0; m < m_cols; m++) {
            uint32_t u;
            memcpy(&u, &w[m], 4);
            dst[m] = u >> shift;
        }
        return;
    }
    for (uint32_t m = 0; m < m_cols; m++) {
        uint32_t bits = 0;
        memcpy(&bits, sim_el(s, k, m), s->esize);
        dst[m] = bits;
    }
}

static int exec_ldweights(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_LDW_t *f = &d->inst.f.LDW;
    pe_tile_t t = { f->row_pos, f->col_pos, f->row_size, f->col_size };
    bool dr = f->perf == ISA_PERF_DOUBLE_ROW;
    sim_opnd_t s;
    if (tile_check(ctx, t) || perf_check(ctx, f->perf))
        return -1;
    if (sim_opnd_tap(ctx, &s, &f->src, "src", SIM_RD))
        return -1;
    /* double_row: src is [K, 2, M]; element r*M + m of partition k is row
     * r*128 + k of the contraction. */
    uint32_t m_cols = dr ? s.nfree / 2 : s.nfree;
    if ((dr && double_row_check(ctx, t, &s)) || fits_tile(ctx, t, s.nparts, m_cols, "src")) {
        sim_opnd_free(&s);
        return -1;
    }
    sim_pe_state_t *pe = ctx->pe;
    /* fits_tile: k <= row_size, m_cols <= col_size */
    tile_clear(pe, t, ctx->timing_only ? 0 : s.nparts, ctx->timing_only ? 0 : m_cols);
    pe->aux_dirty |= dr;
    uint32_t run = sim_row_run(&s);
    for (unsigned k = 0; k < s.nparts; k++) {
        memset(&pe->w_loaded[t.row_pos + k][t.col_pos], 1, m_cols);
        if (ctx->timing_only)
            continue;
        /* flat element j of partition k: w[k][j], then (double_row) w_dr[k][j - M] */
        for (uint32_t j = 0; j < s.nfree;) {
            float *dst = j < m_cols ? &pe->w[t.row_pos + k][t.col_pos + j] : &pe->w_dr[k][j - m_cols];
            uint32_t end = j < m_cols ? m_cols : s.nfree;
            if (run) { /* fp32/bf16 runs: converted a run at a time */
                uint32_t len = run - j % run;
                len = len < end - j ? len : end - j;
                sim_row_load(dst, &s, k, j, len);
                j += len;
            } else {
                *dst = num_load_f32(sim_el(&s, k, j), s.dtype);
                j++;
            }
        }
        ldw_bits(pe->w_bits[t.row_pos + k] + t.col_pos, pe->w[t.row_pos + k] + t.col_pos, &s, k,
                 m_cols, run);
    }
    pe->w_dtype = s.dtype;
    pe->sparse_ratio = 0;
    pe->double_row = dr;
    pe->quad = 0;
    pe->w_bits_ok = !dr;
    sim_opnd_free(&s);
    return 0;
}

/* ---- LdWeightsMX: w = data * 2^(scale-127) per 32-row block ---- */

static float e8m0_scale(float x, unsigned s)
{
    return s == 255 ? NAN : ldexpf(x, (int)s - 127);
}

static int mx_scale_shape(sim_exec_ctx_t *ctx, const sim_opnd_t *data, const sim_opnd_t *sc)
{
    if (data->dtype != ISA_DT_FP8E4M3 && data->dtype != ISA_DT_FP8E5M2)
        return sim_fail(ctx, "%s: MX data must be fp8e4m3 or fp8e5m2, not %s", data->name,
                        isa_dtype_name(data->dtype));
    if (data->nparts % MX_BLOCK)
        return sim_fail(ctx, "%s: MX K (%u partitions) must be a multiple of 32", data->name,
                        data->nparts);
    if (!isa_mx_scale_dtype(sc->dtype))
        return sim_fail(ctx, "%s: E8M0 scales are fp8e8m0 or uint8, not %s", sc->name,
                        isa_dtype_name(sc->dtype));
    if (sc->nparts != data->nparts / MX_BLOCK || sc->nfree != data->nfree)
        return sim_fail(ctx, "%s: expected %u partitions (one per 32 rows) x %u elements, got "
                        "%u x %u", sc->name, data->nparts / MX_BLOCK, data->nfree, sc->nparts,
                        sc->nfree);
    return 0;
}

static int exec_ldweights_mx(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_LDWMX_t *f = &d->inst.f.LDWMX;
    pe_tile_t t = { f->row_pos, f->col_pos, f->row_size, f->col_size };
    sim_opnd_t o[2];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    int rc = -1;
    if (tile_check(ctx, t))
        return -1;
    if (sim_opnd_tap(ctx, &o[0], &f->src, "src", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->scale, "scale", SIM_RD))
        goto done;
    bool quad = isa_dtype_kind(o[0].dtype) == ISA_DK_X;
    if ((quad ? mx_quad_check(ctx, &o[0], &o[1]) : mx_scale_shape(ctx, &o[0], &o[1])) ||
        fits_tile(ctx, t, o[0].nparts, o[0].nfree, "src"))
        goto done;
    if (t.row_pos % MX_BLOCK) {
        sim_fail(ctx, "row_pos: MX blocks need a 32-aligned row position (%u)", t.row_pos);
        goto done;
    }
    sim_pe_state_t *pe = ctx->pe;
    tile_clear(pe, t, 0, 0);
    pe->aux_dirty = 1;
    pe->sparse_ratio = 0;
    pe->double_row = 0;
    pe->w_bits_ok = 0;
    pe->w_dtype = o[0].dtype;
    if (quad) {
        sim_pe_quad_load(ctx, t.row_pos, t.col_pos, &o[0], &o[1]);
        rc = 0;
        goto done;
    }
    pe->quad = 0;
    for (unsigned k = 0; k < o[0].nparts; k++)
        for (uint32_t m = 0; m < o[0].nfree; m++) {
            unsigned r = t.row_pos + k, c = t.col_pos + m;
            pe->w_loaded[r][c] = 1;
            if (ctx->timing_only)
                continue;
            unsigned s = *sim_el(&o[1], k / MX_BLOCK, m);
            pe->w[r][c] = e8m0_scale(num_load_f32(sim_el(&o[0], k, m), o[0].dtype), s);
            if (k % MX_BLOCK == 0)
                pe->mx_scale[r / MX_BLOCK][c] = (int8_t)(s == 255 ? -128 : (int)s - 127);
        }
    rc = 0;
done:
    free_all(o, 2);
    return rc;
}

/* ---- LdWeightsSparse ---- */

static int exec_ldweights_sparse(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_LDWSP_t *f = &d->inst.f.LDWSP;
    pe_tile_t t = { f->row_pos, f->col_pos, f->row_size, f->col_size };
    sim_opnd_t o[2];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    int rc = -1;
    unsigned r = f->compress_ratio;
    if (r != 2 && r != 4)
        return sim_fail(ctx, "compress_ratio: %u is not 2 (2:4) or 4 (1:4)", r);
    if (tile_check(ctx, t))
        return -1;
    unsigned keep = SPARSE_GROUP / r; /* compressed rows per group of 4 */
    if (sim_opnd_tap(ctx, &o[0], &f->src, "src", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->tags, "tags", SIM_RD) || sim_same_shape(ctx, &o[0], &o[1]))
        goto done;
    if (isa_dtype_kind(o[1].dtype) == ISA_DK_F) {
        sim_fail(ctx, "tags: tags need an integer dtype (uint8), not %s", isa_dtype_name(o[1].dtype));
        goto done;
    }
    if (o[0].nparts % keep) {
        sim_fail(ctx, "src: %u compressed rows are not whole groups of %u", o[0].nparts, keep);
        goto done;
    }
    unsigned kdense = o[0].nparts * r;
    if (fits_tile(ctx, t, kdense, o[0].nfree, "src (dense K = rows x compress_ratio)"))
        goto done;
    /* Validate every tag before touching the array. */
    for (unsigned j = 0; j < o[0].nparts; j++)
        for (uint32_t m = 0; m < o[0].nfree; m++) {
            int64_t tag = num_load_i64(sim_el(&o[1], j, m), o[1].dtype);
            if (tag < 0 || tag >= SPARSE_GROUP) {
                sim_fail_data(ctx, "tags: partition %u element %u: tag %lld outside 0..3",
                         o[1].start + j, m, (long long)tag);
                goto done;
            }
            for (unsigned j2 = j - j % keep; j2 < j; j2++)
                if (num_load_i64(sim_el(&o[1], j2, m), o[1].dtype) == tag) {
                    sim_fail_data(ctx, "tags: partitions %u and %u element %u: duplicate tag %lld "
                             "in one group of 4 rows", o[1].start + j2, o[1].start + j, m,
                             (long long)tag);
                    goto done;
                }
        }
    sim_pe_state_t *pe = ctx->pe;
    tile_clear(pe, t, 0, 0);
    pe->aux_dirty = 1;
    for (unsigned k = 0; k < kdense; k++)
        for (uint32_t m = 0; m < o[0].nfree; m++)
            pe->w_loaded[t.row_pos + k][t.col_pos + m] = 1;
    for (unsigned j = 0; j < o[0].nparts; j++)
        for (uint32_t m = 0; m < o[0].nfree; m++) {
            unsigned tag = (unsigned)num_load_i64(sim_el(&o[1], j, m), o[1].dtype);
            unsigned row = t.row_pos + (j / keep) * SPARSE_GROUP + tag;
            pe->sparse_tags[t.row_pos + j][t.col_pos + m] = (uint8_t)tag;
            if (!ctx->timing_only)
                pe->w[row][t.col_pos + m] = num_load_f32(sim_el(&o[0], j, m), o[0].dtype);
        }
    pe->w_dtype = o[0].dtype;
    pe->sparse_ratio = r;
    pe->double_row = 0;
    pe->quad = 0;
    pe->w_bits_ok = 0;
    rc = 0;
done:
    free_all(o, 2);
    return rc;
}

/* ---- Matmul family ---- */

/* The K x M block used by a matmul must be exactly what was loaded. */
static int weights_check(sim_exec_ctx_t *ctx, pe_tile_t t, unsigned k, unsigned m)
{
    const sim_pe_state_t *pe = ctx->pe;
    if (fits_tile(ctx, t, k, m, "moving/dst (K x M)"))
        return -1;
    for (unsigned r = 0; r < k; r++) {
        const uint8_t *row = &pe->w_loaded[t.row_pos + r][t.col_pos];
        const uint8_t *z = memchr(row, 0, m); /* vectorised: runs once per matmul */
        if (z)
            return sim_fail(ctx, "weights: PE cell row %u col %u was not loaded (matmul "
                            "uses K=%u rows x M=%u cols of tile rows %u, cols %u)",
                            t.row_pos + r, t.col_pos + (unsigned)(z - row), k, m, t.row_pos,
                            t.col_pos);
    }
    if (k < t.row_size && pe->w_loaded[t.row_pos + k][t.col_pos])
        return sim_fail(ctx, "moving: %u partitions (K) but the loaded weights have more rows",
                        k);
    if (m < t.col_size && pe->w_loaded[t.row_pos][t.col_pos + m])
        return sim_fail(ctx, "dst: %u partitions (M) but the loaded weights have more columns",
                        m);
    return 0;
}

/* A matmul writes one PSUM bank (2 KiB = 512 fp32 per partition): its
 * output must not straddle a bank boundary (ARCH2, nc_matmul N <= 512). */
static int psum_bank_check(sim_exec_ctx_t *ctx, const sim_opnd_t *dst)
{
    unsigned banks = ctx->target->psum_banks ? ctx->target->psum_banks : 1;
    uint32_t bank = ctx->psum_pb / banks;
    if (bank == 0 || dst->nfree == 0)
        return 0;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t i = 0; i < dst->nfree; i++) {
        uint32_t off = sim_off(dst, i);
        if (off < lo)
            lo = off;
        if (off + dst->esize > hi)
            hi = off + dst->esize;
    }
    if (lo / bank != (hi - 1) / bank)
        return sim_fail(ctx, "dst: psum bytes [0x%x, 0x%x) cross a %u-byte bank boundary; a "
                        "matmul writes one bank", lo, hi, bank);
    return 0;
}

static int dst_dtype_check(sim_exec_ctx_t *ctx, const sim_opnd_t *dst)
{
    if (dst->dtype != ISA_DT_FP32 && dst->dtype != ISA_DT_BF16 && dst->dtype != ISA_DT_FP16)
        return sim_fail(ctx, "dst: matmul writes fp32, bf16 or fp16 to psum, not %s",
                        isa_dtype_name(dst->dtype));
    return 0;
}

/* Transpose mode (NKI is_transpose): the data were loaded as the
 * stationary weights and the moving tile is an identity (any 0/1 matrix
 * with one 1 per column selects rows), so dst[m][n] = w[k_n][m] where
 * moving[k_n][n] = 1, copied bit-exactly (NaN/Inf payloads kept). */
static int mm_transpose_row(sim_exec_ctx_t *ctx, const sim_opnd_t *mv, uint32_t n, unsigned *kn)
{
    unsigned hits = 0;
    for (unsigned k = 0; k < mv->nparts; k++) {
        float v = num_load_f32(sim_el(mv, k, n), mv->dtype);
        if (v == 1.0f) {
            *kn = k;
            hits++;
        } else if (v != 0.0f) {
            hits = 2;
            break;
        }
    }
    if (hits != 1)
        return sim_fail_data(ctx, "moving: transpose mode streams an identity (0/1 values, one 1 "
                        "per column); column %u is not one", n);
    return 0;
}

static int mm_transpose(sim_exec_ctx_t *ctx, const isa_fmt_MM_t *f, pe_tile_t t)
{
    sim_opnd_t o[2];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    const sim_pe_state_t *pe = ctx->pe;
    int rc = -1;
    if (f->accumulate)
        return sim_fail(ctx, "accumulate: a transpose cannot accumulate");
    if (!pe->w_bits_ok)
        return sim_fail(ctx, "weights: transpose mode needs weights from a plain LdWeights "
                        "(not MX, sparse or double_row)");
    if (sim_opnd_tap(ctx, &o[0], &f->moving, "moving", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->dst, "dst", SIM_WR) || psum_bank_check(ctx, &o[1]))
        goto done;
    unsigned k = o[0].nparts, m = o[1].nparts;
    if (o[1].dtype != pe->w_dtype) {
        sim_fail(ctx, "dst: transpose mode copies the %s weights bit-exactly; dst must be %s, "
                 "not %s", isa_dtype_name(pe->w_dtype), isa_dtype_name(pe->w_dtype),
                 isa_dtype_name(o[1].dtype));
        goto done;
    }
    if (o[1].nfree != o[0].nfree) {
        sim_fail(ctx, "dst: %u elements per partition but moving has N=%u", o[1].nfree,
                 o[0].nfree);
        goto done;
    }
    if (weights_check(ctx, t, k, m))
        goto done;
    if (!ctx->timing_only)
        for (uint32_t n = 0; n < o[0].nfree; n++) {
            unsigned kn = 0;
            if (mm_transpose_row(ctx, &o[0], n, &kn))
                goto done;
            for (unsigned c = 0; c < m; c++) {
                uint32_t bits = pe->w_bits[t.row_pos + kn][t.col_pos + c];
                memcpy(sim_el(&o[1], c, n), &bits, o[1].esize);
            }
        }
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    free_all(o, 2);
    return rc;
}

/* --threads: the moving tile's conversion is split by rows when each
 * part gets at least this many elements (about 10 us of conversion). */
#define MM_SPLIT_LOAD (1u << 15)

typedef struct {
    const sim_opnd_t *mv;
    float *x;
    uint32_t xn, xs, run;
    unsigned parts;
    sim_pe_fstats_t st[SIM_MAX_THREADS];
} mm_load_t;

/* Part i of the one-pass load: rows [r0, r1), folded into st[i]. */
static void mm_load_part(void *arg, unsigned i)
{
    mm_load_t *l = arg;
    const sim_opnd_t *mv = l->mv;
    unsigned r0 = (unsigned)((uint64_t)mv->nparts * i / l->parts);
    unsigned r1 = (unsigned)((uint64_t)mv->nparts * (i + 1) / l->parts);
    sim_pe_stats_init(&l->st[i]);
    for (unsigned r = r0; r < r1; r++)
        for (uint32_t j = 0; j < l->xn; j += l->run) {
            uint32_t len = l->xn - j < l->run ? l->xn - j : l->run;
            float *dst = l->x + (size_t)r * l->xs + j;
            if (mv->dtype == ISA_DT_FP32)
                sim_pe_load_f32(dst, sim_el(mv, r, j), len, &l->st[i]);
            else
                sim_pe_load_bf16(dst, sim_el(mv, r, j), len, &l->st[i]);
        }
}

/* The parts' scans are an OR, a min and a max: merged in any order they
 * give the one-pass scan's result. */
static void stats_merge(sim_pe_fstats_t *st, const sim_pe_fstats_t *p)
{
    st->or_mant |= p->or_mant;
    st->emin = p->emin < st->emin ? p->emin : st->emin;
    st->emax = p->emax > st->emax ? p->emax : st->emax;
}

/* Convert the moving tile into x (k rows of xn floats, row r at x + r*xs),
 * folding every value into st: fp32/bf16 rows a contiguous run at a time,
 * one pass (split by rows across the pool's threads); other dtypes and
 * MX-scaled data element by element, then scanned. */
static void mm_moving(sim_pool_t *pool, const sim_opnd_t *mv, const sim_opnd_t *scale,
                      float qoff, float *x, uint32_t xn, uint32_t xs, sim_pe_fstats_t *st)
{
    unsigned k = mv->nparts;
    uint32_t run = scale || qoff != 0.0f ? 0 : sim_row_run(mv);
    if (run) {
        mm_load_t l = { .mv = mv, .x = x, .xn = xn, .xs = xs, .run = run };
        l.parts = sim_pool_parts(pool, (uint64_t)k * xn, MM_SPLIT_LOAD);
        l.parts = l.parts < k ? l.parts : (k ? k : 1);
        sim_pool_run(pool, l.parts, mm_load_part, &l);
        for (unsigned i = 0; i < l.parts; i++)
            stats_merge(st, &l.st[i]);
        return;
    }
    for (unsigned r = 0; r < k; r++)
        for (uint32_t j = 0; j < xn; j++) {
            /* ifmap_quant_offset: the moving value relative to its zero
             * point, in fp32, before the multiply */
            float v = num_load_f32(sim_el(mv, r, j), mv->dtype) - qoff;
            x[(size_t)r * xs + j] = scale ? e8m0_scale(v, *sim_el(scale, r / MX_BLOCK, j)) : v;
        }
    for (unsigned r = 0; r < k; r++)
        sim_pe_stats_f32(st, x + (size_t)r * xs, xn);
}

/* The fp32 PSUM rows of dst as a float array (row c at out + c * stride),
 * or NULL when dst is not fp32 with 4-byte aligned contiguous rows. */
static float *mm_direct_out(const sim_opnd_t *dst, size_t *stride)
{
    if (dst->dtype != ISA_DT_FP32 || dst->off || (dst->lstep != 4 && dst->nfree > 1) ||
        dst->pb % 4)
        return NULL;
    uint8_t *p = sim_el(dst, 0, 0);
    if ((uintptr_t)p % _Alignof(float))
        return NULL;
    *stride = dst->pb / 4;
    return (float *)(void *)p;
}

/* --threads: a matmul is split only when each thread gets at least this
 * many multiply-adds: 2^21 take about 40 us in the AVX-512 kernel (~100
 * GFLOP/s), several times a worker's wake-up round trip when a core is
 * free (measured 1-50 us; docs/simulator.md "Threads"), so the split pays
 * from a 128x128x256 matmul on and a 128x128x128 one runs on the caller. */
#define MM_SPLIT_MACS (1u << 21)
/* Output elements per part: a multiple of the widest kernel block. */
#define MM_SPLIT_ALIGN 32u

typedef struct {
    const sim_pe_mac_t *a;
    unsigned parts;
    sim_pe_variant_t v;
} mm_split_t;

/* Part i of a split matmul: output elements [j0, j1) of every column, each
 * summed over the contraction rows in order exactly as the whole call would
 * (vector lanes never hold partial sums of one element, pe_mac.h), with
 * the variant and the fused/unfused choice made once for the whole call. */
static void mm_part(void *arg, unsigned i)
{
    const mm_split_t *sp = arg;
    sim_pe_mac_t b = *sp->a;
    uint32_t blocks = (b.n + MM_SPLIT_ALIGN - 1) / MM_SPLIT_ALIGN;
    uint32_t j0 = (uint32_t)((uint64_t)blocks * i / sp->parts) * MM_SPLIT_ALIGN;
    uint32_t j1 = (uint32_t)((uint64_t)blocks * (i + 1) / sp->parts) * MM_SPLIT_ALIGN;
    j1 = j1 < b.n ? j1 : b.n;
    if (j0 >= j1)
        return;
    b.x[0] += j0;
    b.x[1] += j0;
    b.out += j0;
    b.n = j1 - j0;
    sim_pe_mac_run(&b, sp->v);
}

/* Row stride of the converted moving tile: whole 64-byte lines, and not a
 * multiple of 1 KiB, where the kernel's column of rows (32 elements of
 * every row) would fall into a few L1 sets and evict itself (measured:
 * a 512-element row stride ran the kernel ~15% slower than 528). */
static uint32_t mm_row_stride(uint32_t xn)
{
    uint32_t xs = (xn + 15u) & ~15u;
    return xs % 256u == 0 ? xs + 16u : xs;
}

/* dst[c][j] (=|+=) sum_r w[row+r][col+c] * x[r][j] (then, double_row, the
 * rows of w_dr against x[r][n + j]), r in order; x optionally scaled by an
 * MX block scale.  The sums run in sim/pe_mac.c. */
static int mm_compute(sim_exec_ctx_t *ctx, pe_tile_t t, const sim_opnd_t *o, bool accumulate,
                      bool dr, int qoff, const float *rscale)
{
    const sim_opnd_t *mv = &o[0], *dst = &o[1];
    const sim_pe_state_t *pe = ctx->pe;
    unsigned k = mv->nparts, m = dst->nparts;
    uint32_t xn = mv->nfree, n = dr ? xn / 2 : xn; /* moving row: n, or 2n in double_row */
    uint32_t xs = mm_row_stride(xn);
    float *x = malloc(((size_t)k * xs + 1) * sizeof *x), *res = NULL;
    if (!x)
        return sim_fail_data(ctx, "out of memory");
    sim_pe_fstats_t xst, ws;
    sim_pe_stats_init(&xst);
    sim_pe_stats_init(&ws);
    mm_moving(ctx->pool, mv, o[2].mem ? &o[2] : NULL, (float)qoff, x, xn, xs, &xst);
    for (unsigned r = 0; r < k; r++) {
        sim_pe_stats_f32(&ws, &pe->w[t.row_pos + r][t.col_pos], m);
        if (dr)
            sim_pe_stats_f32(&ws, &pe->w_dr[r][0], m);
    }
    sim_pe_mac_t a = {
        .w = { &pe->w[t.row_pos][t.col_pos], &pe->w_dr[0][0] }, .x = { x, x + n },
        .wstride = PE_DIM, .xstride = xs, .nseg = dr ? 2 : 1, .k = k, .m = m, .n = n,
        .accumulate = accumulate, .fma = sim_pe_mac_exact(&ws, &xst),
    };
    a.out = rscale ? NULL : mm_direct_out(dst, &a.ostride);
    if (!a.out) {
        res = malloc(((size_t)m * n + 1) * sizeof *res);
        if (!res) {
            free(x);
            return sim_fail_data(ctx, "out of memory");
        }
        a.out = res;
        a.ostride = n;
        a.accumulate = false;
    }
    /* inf/NaN inputs: the reference loop, so NaN payloads propagate as
     * they always did */
    mm_split_t sp = { &a, 1, sim_pe_stats_finite(&ws) && sim_pe_stats_finite(&xst)
                                 ? sim_pe_mac_best() : SIM_PE_SCALAR };
    sp.parts = sim_pool_parts(ctx->pool, (uint64_t)k * m * n * a.nseg, MM_SPLIT_MACS);
    sim_pool_run(ctx->pool, sp.parts, mm_part, &sp);
    for (unsigned c = 0; res && c < m; c++)
        for (uint32_t j = 0; j < n; j++) {
            uint8_t *p = sim_el(dst, c, j);
            float s = res[(size_t)c * n + j];
            if (rscale)   /* MX output scale: the sum times the row's factor, in fp32 */
                s *= rscale[c];
            if (accumulate)
                s = num_load_f32(p, dst->dtype) + s;
            num_store_f32(p, dst->dtype, s);
        }
    free(x);
    free(res);
    return 0;
}

static int mm_run(sim_exec_ctx_t *ctx, pe_tile_t t, const isa_tap_t *mv, const isa_tap_t *dt,
                  const isa_tap_t *scale, bool accumulate, bool dr, int qoff,
                  const float *rscale)
{
    sim_opnd_t o[3];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    int rc = -1;
    if (sim_opnd_tap(ctx, &o[0], mv, "moving", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], dt, "dst", SIM_WR) ||
        /* accumulate reads PSUM inside the array's write path: allowed */
        (accumulate && sim_opnd_check_init(ctx, &o[1])) ||
        (scale && sim_opnd_tap(ctx, &o[2], scale, "scale", SIM_RD)))
        goto done;
    bool quad = isa_dtype_kind(o[0].dtype) == ISA_DK_X;
    if (quad && !scale) {   /* the decoder refuses this; instructions built in memory may not */
        sim_fail(ctx, "moving: packed MX quads are read only by MatmulMX");
        goto done;
    }
    if ((scale && (quad ? mx_quad_check(ctx, &o[0], &o[2]) : mx_scale_shape(ctx, &o[0], &o[2]))) ||
        dst_dtype_check(ctx, &o[1]) || psum_bank_check(ctx, &o[1]))
        goto done;
    if (quad != (ctx->pe->quad != 0)) {
        sim_fail(ctx, quad ? "moving: MX quads need weights loaded by LdWeightsMX from quads"
                           : "weights: loaded by LdWeightsMX from packed quads; only a MatmulMX "
                             "of quad moving data reads them");
        goto done;
    }
    if (dr != (ctx->pe->double_row != 0)) {
        sim_fail(ctx, dr ? "perf: double_row matmul needs weights loaded with perf=double_row"
                         : "perf: the weights were loaded with perf=double_row; the matmul "
                           "must use it too");
        goto done;
    }
    if (dr && double_row_check(ctx, t, &o[0]))
        goto done;
    unsigned k = o[0].nparts, m = o[1].nparts;
    uint32_t n = dr ? o[0].nfree / 2 : o[0].nfree;
    if (o[1].nfree != n) {
        sim_fail(ctx, "dst: %u elements per partition but moving has N=%u", o[1].nfree, n);
        goto done;
    }
    if (weights_check(ctx, t, k, m))
        goto done;
    if (!ctx->timing_only &&
        (quad ? sim_pe_quad_matmul(ctx, t.row_pos, t.col_pos, &o[0], &o[2], &o[1], accumulate,
                                   rscale)
              : mm_compute(ctx, t, o, accumulate, dr, qoff, rscale)))
        goto done;
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    free_all(o, 3);
    return rc;
}

/* num_active_partitions (seed 001 setnum_active_channels): the PE rows the
 * moving data drives.  0 = not stated (the moving partitions); otherwise it
 * must name exactly the moving operand's partitions (K). */
static int active_check(sim_exec_ctx_t *ctx, const isa_fmt_MM_t *f)
{
    if (f->num_active_partitions && f->num_active_partitions != f->moving.nparts)
        return sim_fail(ctx, "num_active_partitions: %u but moving drives %u partitions (K)",
                        f->num_active_partitions, f->moving.nparts);
    return 0;
}

static int exec_matmul(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_MM_t *f = &d->inst.f.MM;
    pe_tile_t t = { f->row_pos, f->col_pos, f->row_size, f->col_size };
    if (perf_check(ctx, f->perf) || active_check(ctx, f))
        return -1;
    if (f->transpose && f->perf == ISA_PERF_DOUBLE_ROW)
        return sim_fail(ctx, "perf: double_row cannot be combined with transpose");
    if (tile_check(ctx, t))
        return -1;
    if (f->transpose && f->ifmap_quant_offset)
        return sim_fail(ctx, "ifmap_quant_offset: a transpose copies bit-exactly (no offset)");
    if (f->transpose)
        return mm_transpose(ctx, f, t);
    return mm_run(ctx, t, &f->moving, &f->dst, NULL, f->accumulate != 0,
                  f->perf == ISA_PERF_DOUBLE_ROW, (int32_t)f->ifmap_quant_offset, NULL);
}

static int exec_matmul_sparse(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_MM_t *f = &d->inst.f.MM;
    pe_tile_t t = { f->row_pos, f->col_pos, f->row_size, f->col_size };
    if (f->transpose)
        return sim_fail(ctx, "transpose: a sparse matmul cannot transpose");
    if (perf_check(ctx, f->perf) || active_check(ctx, f) || tile_check(ctx, t))
        return -1;
    if (f->perf == ISA_PERF_DOUBLE_ROW)
        return sim_fail(ctx, "perf: double_row cannot be combined with a sparse matmul");
    if (ctx->pe->sparse_ratio == 0)
        return sim_fail(ctx, "weights: MatmulSparse needs weights loaded by LdWeightsSparse");
    return mm_run(ctx, t, &f->moving, &f->dst, NULL, f->accumulate != 0, false,
                  (int32_t)f->ifmap_quant_offset, NULL);
}

static int exec_matmul_mx(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_MMMX_t *f = &d->inst.f.MMMX;
    pe_tile_t t = { f->row_pos, f->col_pos, f->row_size, f->col_size };
    if (tile_check(ctx, t))
        return -1;
    if (ctx->pe->double_row)
        return sim_fail(ctx, "perf: the weights were loaded with perf=double_row; MatmulMX "
                        "cannot use them");
    if (!f->out_scale_en)
        return f->out_scale || f->out_scale_is_ptr
                   ? sim_fail(ctx, "out_scale: set but out_scale_en is 0")
                   : mm_run(ctx, t, &f->moving, &f->dst, &f->scale, f->accumulate != 0, false, 0,
                            NULL);
    /* the output scale: one factor per dst partition (immediate: the same) */
    unsigned m = f->dst.nparts;
    float rs[ISA_NUM_PARTITIONS];
    if (m > ISA_NUM_PARTITIONS)
        m = ISA_NUM_PARTITIONS;
    if (f->out_scale_is_ptr) {
        sim_opnd_t sp;
        sim_opnds_none(&sp, 1);
        isa_ptr_t p = sim_ptr_from_bits(f->out_scale);
        if (sim_opnd_ptr(ctx, &sp, &p, f->dst.start, m, 1, "out_scale", SIM_RD)) {
            sim_opnd_free(&sp);
            return -1;
        }
        for (unsigned c = 0; c < m; c++)
            rs[c] = num_load_f32(sim_el(&sp, c, 0), sp.dtype);
        sim_opnd_free(&sp);
    } else {
        for (unsigned c = 0; c < m; c++)
            rs[c] = sim_f32_from_bits(f->out_scale);
    }
    return mm_run(ctx, t, &f->moving, &f->dst, &f->scale, f->accumulate != 0, false, 0, rs);
}

/* ---- costs (PE cycles) ---- */

/* Fast LoadStationary: up to pe_ls_speedup x faster than a matmul of the
 * same free size (PERF): ceil(max(K, M) / speedup), fp32 x pe_fp32_factor. */
static uint64_t ls_cost(const tpb_target_t *t, const isa_tap_t *src, unsigned rows)
{
    uint64_t m = sim_tap_n(src);
    uint64_t k = rows;
    uint64_t c = ((k > m ? k : m) + t->pe_ls_speedup - 1) / t->pe_ls_speedup;
    if (c == 0)
        c = 1;
    return src->dtype == ISA_DT_FP32 ? c * t->pe_fp32_factor : c;
}

static uint64_t cost_ldweights(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    /* double_row: the free size counts both rows, so it loads 2M values */
    return ls_cost(t, &d->inst.f.LDW.src, d->inst.f.LDW.src.nparts);
}

static uint64_t cost_ldweights_mx(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return ls_cost(t, &d->inst.f.LDWMX.src, d->inst.f.LDWMX.src.nparts);
}

static uint64_t cost_ldweights_sparse(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    const isa_fmt_LDWSP_t *f = &d->inst.f.LDWSP;
    return ls_cost(t, &f->src, f->src.nparts * (f->compress_ratio ? f->compress_ratio : 1));
}

/* COST: max(min(64, N_stationary), N_moving) with N_stationary = M (dst
 * partitions), 64 = MM_INIT_LATENCY; fp32 x pe_fp32_factor (x half that
 * with onezero, and for transposes: ARCH3 "2x faster for FP32"). */
static uint64_t mm_cost(const tpb_target_t *t, const isa_tap_t *mv, const isa_tap_t *dst,
                        bool onezero, bool transpose, bool dr)
{
    /* double_row: the [K, 2, N] moving data take the time of one K=128
     * instruction of free size N (ARCH3) */
    uint64_t n = dr ? sim_tap_n(mv) / 2 : sim_tap_n(mv);
    uint64_t m = dst->nparts;
    uint64_t floor = m < t->pe_mm_init_latency ? m : t->pe_mm_init_latency;
    uint64_t c = n > floor ? n : floor;
    if (mv->dtype == ISA_DT_FP32) {
        unsigned f = t->pe_fp32_factor;
        if (onezero || transpose)
            f = f / 2 ? f / 2 : 1;
        c *= f;
    }
    return c;
}

static uint64_t cost_matmul(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    const isa_fmt_MM_t *f = &d->inst.f.MM;
    return mm_cost(t, &f->moving, &f->dst, f->onezero != 0, f->transpose != 0,
                   f->perf == ISA_PERF_DOUBLE_ROW);
}

static uint64_t cost_matmul_mx(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    const isa_fmt_MMMX_t *f = &d->inst.f.MMMX;
    return mm_cost(t, &f->moving, &f->dst, false, false, false);
}

static const sim_opimpl_t impl_ldw = { exec_ldweights, cost_ldweights };
static const sim_opimpl_t impl_mm = { exec_matmul, cost_matmul };
static const sim_opimpl_t impl_ldwmx = { exec_ldweights_mx, cost_ldweights_mx };
static const sim_opimpl_t impl_mmmx = { exec_matmul_mx, cost_matmul_mx };
static const sim_opimpl_t impl_ldwsp = { exec_ldweights_sparse, cost_ldweights_sparse };
static const sim_opimpl_t impl_mmsp = { exec_matmul_sparse, cost_matmul };

const sim_opimpl_t *sim_pe_impl(isa_op_t op)
{
    switch (op) {
    case ISA_OP_LDWEIGHTS: return &impl_ldw;
    case ISA_OP_MATMUL: return &impl_mm;
    case ISA_OP_LDWEIGHTS_MX: return &impl_ldwmx;
    case ISA_OP_MATMUL_MX: return &impl_mmmx;
    case ISA_OP_LDWEIGHTS_SPARSE: return &impl_ldwsp;
    case ISA_OP_MATMUL_SPARSE: return &impl_mmsp;
    default: return NULL;
    }
}
