/* dma_move.c - DMA data movement: a transfer's descriptors move their
 * elements when the transfer starts (direct planes and rows, indirect
 * gathers and scatters, casts, DMA compute add, scale), charging bytes to
 * the DMA engines for the timing in dma.c; and the unique_indices check.
 * Exact rules: docs/semantics-dma.md. */
#include "dma_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numeric.h"


/* The cost of the last row shape charged (bytes, run, transpose share):
 * the rows of a descriptor mostly share one shape, so the efficiency curve
 * is read once per shape instead of once per row. */
typedef struct {
    uint64_t bytes, run, cost;   /* cost: after the transpose share */
    unsigned xpermille;
    bool valid;
} row_memo_t;

/* Consecutive charges of one shape to one engine, added in one
 * multiplication when the shape or engine changes (n * cost is the sum of
 * the n per-row ceilings: each row keeps its own rounding). */
typedef struct {
    uint64_t n, bytes, cost, hbm;
    unsigned e;
} pending_t;

typedef struct {
    sim_t *s;
    sim_core_t *c;               /* issuing core */
    sim_xfer_t *x;
    const sim_desc_t *sd;
    uint64_t *eng_bytes;         /* [nengines] */
    uint64_t *eng_cost;          /* [nengines] engine time in milli-bytes at peak */
    uint64_t hbm_bytes;          /* bytes read from or written to HBM */
    unsigned nengines;
    unsigned xpermille;          /* transpose bandwidth share (1000: none) */
    bool add;
    bool scaled;                 /* DDESC scaled: src * scale in fp32 (dma_compute) */
    float scale;
    row_memo_t memo;
    pending_t pend;
    tpb_err_t *err;
} mover_t;

static int mover_errf(mover_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int mover_errf(mover_t *m, const char *fmt, ...)
{
    char body[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    sim_engine_t *e = &m->c->eng[m->x->engine_slot];
    return sim_inst_errf(m->err, m->c, e, m->x->trigger_idx,
                         "transfer on queue %u, descriptor %s at pc %u: %s", m->x->queue,
                         isa_ops[m->sd->d->inst.op].mnemonic, m->sd->pc, body);
}

static uint8_t *side_ptr(const sim_t *s, const isa_dap_t *p, int64_t a, uint8_t **init)
{
    if (p->space == ISA_SPACE_HBM) {
        *init = s->hbm_init ? s->hbm_init + a : NULL;
        return s->hbm + a;
    }
    sim_core_t *o = &s->cores[p->core];
    uint64_t off = (uint64_t)(a / PITCH) * space_pb(s, p->space) + (uint64_t)(a % PITCH);
    if (p->space == ISA_SPACE_SBUF) {
        *init = o->sbuf_init ? o->sbuf_init + off : NULL;
        return o->sbuf + off;
    }
    *init = o->psum_init ? o->psum_init + off : NULL;
    return o->psum + off;
}

static bool row_in_one_partition(const isa_dap_t *p, int64_t a, uint32_t n)
{
    if (!on_chip(p->space))
        return true;
    int64_t last = a + (int64_t)p->step[0] * (n - 1);
    return a / PITCH == last / PITCH && last >= a;
}

/* The DMA engine serving partition `part` (the last one takes the rest). */
static unsigned engine_of_part(const mover_t *m, int64_t part)
{
    unsigned ppe = m->s->t->dma_partitions_per_engine;
    unsigned e = (unsigned)(part / (ppe ? ppe : 1));
    return e < m->nengines ? e : m->nengines - 1;
}

static unsigned engine_of(const mover_t *m, const isa_dap_t *dst, int64_t da, const isa_dap_t *src,
                          int64_t sa, uint32_t row)
{
    if (on_chip(dst->space))
        return engine_of_part(m, da / PITCH);
    if (on_chip(src->space))
        return engine_of_part(m, sa / PITCH);
    return row % m->nengines;
}

/* Engine time (milli-bytes at peak, after the transpose share) of a row
 * of `bytes` in runs of `run` bytes, memoised on the last shape. */
static uint64_t row_cost(mover_t *m, uint64_t bytes, uint64_t run)
{
    row_memo_t *r = &m->memo;
    if (r->valid && r->bytes == bytes && r->run == run && r->xpermille == m->xpermille)
        return r->cost;
    uint64_t cost = sim_dma_row_cost(m->s->t, bytes, run);
    if (m->xpermille && m->xpermille != 1000)
        cost = (cost * 1000ull + m->xpermille - 1) / m->xpermille;
    *r = (row_memo_t){ bytes, run, cost, m->xpermille, true };
    return cost;
}

/* Add the pending charges to their engine and the HBM total. */
static void flush_charges(mover_t *m)
{
    pending_t *p = &m->pend;
    if (!p->n)
        return;
    m->eng_bytes[p->e] += p->n * p->bytes;
    m->eng_cost[p->e] += p->n * p->cost;
    m->hbm_bytes += p->n * p->hbm;
    p->n = 0;
}

/* Attribute n rows of `bytes` moved in contiguous runs of `run` bytes to
 * engine e. */
static void charge_n(mover_t *m, unsigned e, uint64_t n, uint64_t bytes, uint64_t run,
                     const isa_dap_t *src, const isa_dap_t *dst)
{
    uint64_t cost = row_cost(m, bytes, run);
    uint64_t hbm = (src->space == ISA_SPACE_HBM ? bytes : 0) +
                   (dst->space == ISA_SPACE_HBM ? bytes : 0);
    pending_t *p = &m->pend;
    if (p->n && p->e == e && p->bytes == bytes && p->cost == cost && p->hbm == hbm) {
        p->n += n;
        return;
    }
    flush_charges(m);
    *p = (pending_t){ n, bytes, cost, hbm, e };
}

static void charge(mover_t *m, unsigned e, uint64_t bytes, uint64_t run, const isa_dap_t *src,
                   const isa_dap_t *dst)
{
    charge_n(m, e, 1, bytes, run, src, dst);
}

/* Every row of side p (n1 rows from address a) lies in one partition when
 * the first does and the rows step by whole partitions (addresses passed
 * the issue-time bounds check, so they are >= 0 and keep their offset). */
static bool side_rows_uniform(const isa_dap_t *p, int64_t a, uint32_t n0, uint32_t n1)
{
    if (!on_chip(p->space))
        return true;
    int64_t end = a + (int64_t)(n1 - 1) * p->step[1];
    return p->step[1] % PITCH == 0 && a >= 0 && end >= 0 && row_in_one_partition(p, a, n0);
}

/* Charge the n1 uniform rows of a plane (side_rows_uniform on both sides)
 * of `bytes` each, as the row loop of move_plane would one by one: row j
 * goes to the engine of its partition (dst side first, then src), or to
 * engine j % nengines when neither side is on chip.  The partition moves
 * by q per row, so each engine gets one block of consecutive rows. */
static void charge_uniform_rows(mover_t *m, const isa_dap_t *src, const isa_dap_t *dst, int64_t sa,
                                int64_t da, uint32_t n1, uint64_t bytes, uint64_t run)
{
    const isa_dap_t *p = on_chip(dst->space) ? dst : on_chip(src->space) ? src : NULL;
    unsigned ne = m->nengines;
    if (!p) {
        for (unsigned e = 0; e < ne && e < n1; e++)
            charge_n(m, e, n1 / ne + (e < n1 % ne), bytes, run, src, dst);
        return;
    }
    unsigned ppe = m->s->t->dma_partitions_per_engine ? m->s->t->dma_partitions_per_engine : 1;
    int64_t a = p == dst ? da : sa, p0 = a / PITCH, q = p->step[1] / PITCH;
    for (uint32_t j = 0; j < n1;) {
        unsigned e = engine_of_part(m, p0 + (int64_t)j * q);
        int64_t last = (int64_t)n1 - 1;   /* the engine's last row */
        if (q > 0 && e + 1 < ne)
            last = ((int64_t)(e + 1) * ppe - 1 - p0) / q;
        else if (q < 0)
            last = (p0 - (int64_t)e * ppe) / -q;
        if (last > (int64_t)n1 - 1)
            last = (int64_t)n1 - 1;
        charge_n(m, e, (uint64_t)(last - j + 1), bytes, run, src, dst);
        j = (uint32_t)(last + 1);
    }
}

static bool all_init(const uint8_t *init, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (!init[i])
            return false;
    return true;
}

/* Move one element: cast through fp32 when dtypes differ (and scale it there
 * when the descriptor is scaled), accumulate with
 * compute=add. */
static int move_elem(mover_t *m, const isa_dap_t *dst, int64_t da, const isa_dap_t *src,
                     int64_t sa)
{
    uint8_t *si, *di;
    uint8_t *sp = side_ptr(m->s, src, sa, &si), *dp = side_ptr(m->s, dst, da, &di);
    unsigned ss = isa_dtype_size(src->dtype), ds = isa_dtype_size(dst->dtype);
    if (si && !all_init(si, ss))
        return mover_errf(m, "read of never-written %s memory at src address 0x%llx (--check-uninit)",
                          space_name(src->space), (unsigned long long)sa);
    if (m->add && di && !all_init(di, ds))
        return mover_errf(m, "accumulate into never-written %s memory at dst address 0x%llx "
                          "(--check-uninit)", space_name(dst->space), (unsigned long long)da);
    if (!m->add && !m->scaled && src->dtype == dst->dtype) {
        memmove(dp, sp, ss);
    } else {
        float v = num_load_f32(sp, src->dtype);
        if (m->scaled)
            v = v * m->scale;
        if (m->add)
            v = num_load_f32(dp, dst->dtype) + v;
        num_store_f32(dp, dst->dtype, v);
    }
    if (di)
        memset(di, 1, ds);
    return 0;
}

static unsigned elem_bytes(const isa_dap_t *a, const isa_dap_t *b)
{
    unsigned x = isa_dtype_size(a->dtype), y = isa_dtype_size(b->dtype);
    return x > y ? x : y;
}

/* Copy a contiguous row with memcpy when nothing else is needed. */
static bool row_fast(const mover_t *m, const isa_dap_t *dst, const isa_dap_t *src)
{
    unsigned size = isa_dtype_size(src->dtype);
    return !m->add && !m->scaled && src->dtype == dst->dtype && src->step[0] == (int32_t)size &&
           dst->step[0] == (int32_t)size && !m->s->opt.check_uninit;
}

/* Contiguous bytes one side of a transpose descriptor covers: the whole
 * descriptor when its two dims tile one dense block (an on-chip side's
 * partition step never does), else the longer dim that steps by one
 * element, else one element. */
static uint64_t side_run(const isa_dap_t *p, unsigned eb)
{
    int64_t z = (int64_t)isa_dtype_size(p->dtype);
    int64_t c0 = p->count[0], c1 = p->count[1];
    if ((p->step[0] == z && p->step[1] == c0 * z) || (p->step[1] == z && p->step[0] == c1 * z))
        return (uint64_t)(c0 * c1) * eb;
    uint64_t r = eb;
    if (p->step[0] == z && (uint64_t)c0 * eb > r)
        r = (uint64_t)c0 * eb;
    if (p->step[1] == z && (uint64_t)c1 * eb > r)
        r = (uint64_t)c1 * eb;
    return r;
}

/* Hardware DMA transpose (docs/timing.md): the transpose unit reads and
 * writes whole blocks, so the run is the longer contiguous extent of the
 * two sides, at the target's transpose share of the bandwidth (source in
 * HBM or on chip).  Without hardware transpose every element is its own
 * run at full share. */
static uint64_t transpose_run(mover_t *m, const isa_dap_t *src, const isa_dap_t *dst, unsigned eb)
{
    const tpb_target_t *t = m->s->t;
    unsigned x = on_chip(src->space) ? t->dma_transpose_sbuf_permille : t->dma_transpose_hbm_permille;
    if (!x)
        return eb;
    m->xpermille = x;
    uint64_t a = side_run(src, eb), b = side_run(dst, eb);
    return a > b ? a : b;
}

/* The sentinel of every on-chip byte a descriptor side may touch, whose
 * pattern starts at address a (lazy.h) */
static void touch_side(const sim_t *s, const isa_dap_t *p, int64_t a)
{
    if (!on_chip(p->space) || p->core >= s->ncores)
        return;
    sim_core_t *o = &s->cores[p->core];
    sim_lazy_touch_dap(p->space == ISA_SPACE_SBUF ? &o->sbuf_z : &o->psum_z, a, p->step,
                       p->count, isa_dtype_size(p->dtype), PITCH);
}

static void touch_sides(const mover_t *m, const isa_dap_t *src, const isa_dap_t *dst)
{
    touch_side(m->s, src, m->sd->src_addr);
    touch_side(m->s, dst, m->sd->dst_addr);
}

/* A destination whose every row is copied whole into one partition (the
 * memmove rows of move_plane) replaces every byte of the sentinel cells
 * its rows cover completely: those are not filled (sim_lazy_cover; the
 * partly covered ones are).  false: touch the destination as usual. */
static bool cover_rows(const mover_t *m, const isa_dap_t *src, const isa_dap_t *dst,
                       int64_t src_addr, int64_t dst_addr, bool uniform)
{
    const sim_t *s = m->s;
    if (!on_chip(dst->space) || dst->core >= s->ncores || dst_addr < 0 ||
        src->count[0] != dst->count[0] || !src->count[0] || !row_fast(m, dst, src))
        return false;
    sim_core_t *o = &s->cores[dst->core];
    sim_lazy_t *z = dst->space == ISA_SPACE_SBUF ? &o->sbuf_z : &o->psum_z;
    uint32_t n0 = dst->count[0];
    int64_t len = (int64_t)n0 * isa_dtype_size(dst->dtype);
    if (uniform && src->count[1] == dst->count[1]) {
        /* every row in one partition at the same bytes (side_rows_uniform):
         * the per-row tests below hold, the covers go partition by partition */
        int64_t off = dst_addr % PITCH;
        sim_lazy_cover_rows(z, dst_addr / PITCH, dst->step[1] / PITCH, dst->count[1], off,
                            off + len);
        return true;
    }
    for (uint32_t j = 0; j < dst->count[1]; j++)
        if (!row_in_one_partition(src, src_addr + (int64_t)j * src->step[1], n0) ||
            !row_in_one_partition(dst, dst_addr + (int64_t)j * dst->step[1], n0))
            return false;
    for (uint32_t j = 0; j < dst->count[1] && z->left; j++) {
        int64_t da = dst_addr + (int64_t)j * dst->step[1];
        if (da < 0)
            return false;
        sim_lazy_cover(z, (unsigned)(da / PITCH), da % PITCH, da % PITCH + len);
    }
    return true;
}

/* Copy one row of n0 elements that lies in one partition on both sides:
 * one memmove when both sides are plain (fast), else element by element. */
static int copy_row(mover_t *m, const isa_dap_t *src, const isa_dap_t *dst, int64_t sa,
                    int64_t da, uint32_t n0, bool fast)
{
    if (fast) {
        uint8_t *si, *di;
        memmove(side_ptr(m->s, dst, da, &di), side_ptr(m->s, src, sa, &si),
                (size_t)n0 * isa_dtype_size(src->dtype));
        return 0;
    }
    for (uint32_t i = 0; i < n0; i++)
        if (move_elem(m, dst, da + (int64_t)i * dst->step[0], src, sa + (int64_t)i * src->step[0]))
            return -1;
    return 0;
}

/* Rows of len bytes, row j from src + j * sstep to dst + j * dstep, in
 * row order, one memmove each (so rows that overlap in one space behave
 * as row by row).  When both sides' rows are adjacent (step == len) the
 * plane is one block on each side and one memmove of it gives the same
 * bytes unless a row overwrites a later row's source before that row
 * reads it: row j writes [d + jL, d + (j + 1)L), row k > j reads from
 * s + kL, so that needs d > s with the blocks overlapping. */
void sim_dma_copy_rows(uint8_t *dst, int64_t dstep, const uint8_t *src, int64_t sstep, uint32_t n,
                       size_t len)
{
    size_t total = (size_t)n * len;
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    if (n > 1 && dstep == (int64_t)len && sstep == (int64_t)len && (d <= s || d >= s + total)) {
        memmove(dst, src, total);
        return;
    }
    for (uint32_t j = 0; j < n; j++)
        memmove(dst + (int64_t)j * dstep, src + (int64_t)j * sstep, len);
}

/* Bytes from one row's start to the next on side p of a plane whose
 * on-chip rows step by whole partitions (side_rows_uniform). */
static int64_t side_row_bytes(const sim_t *s, const isa_dap_t *p)
{
    if (!on_chip(p->space))
        return p->step[1];
    return (int64_t)(p->step[1] / PITCH) * space_pb(s, p->space);
}

/* Copy the rows of a plane whose every row lies in one partition on
 * both sides (side_rows_uniform), as move_plane's row loop does: plain
 * rows from each side's base pointer stepped per row (addresses >= 0, so
 * row j's offset in its partition is the first row's), others element by
 * element. */
static int copy_rows(mover_t *m, const isa_dap_t *src, const isa_dap_t *dst, int64_t src_addr,
                     int64_t dst_addr, bool fast)
{
    if (fast) {
        uint8_t *si, *di;
        uint8_t *sp = side_ptr(m->s, src, src_addr, &si), *dp = side_ptr(m->s, dst, dst_addr, &di);
        sim_dma_copy_rows(dp, side_row_bytes(m->s, dst), sp, side_row_bytes(m->s, src),
                          src->count[1], (size_t)src->count[0] * isa_dtype_size(src->dtype));
        return 0;
    }
    for (uint32_t j = 0; j < src->count[1]; j++)
        if (copy_row(m, src, dst, src_addr + (int64_t)j * src->step[1],
                     dst_addr + (int64_t)j * dst->step[1], src->count[0], fast))
            return -1;
    return 0;
}

/* One 2-D plane of a direct descriptor, its sides starting at src_addr /
 * dst_addr (a PseudoDmaDirect2d is one plane; a PseudoDmaDirect3d's planes
 * are moved and costed one after another exactly as that many 2-D
 * descriptors would be: docs/timing.md). */
static int move_plane(mover_t *m, int64_t src_addr, int64_t dst_addr)
{
    const isa_fmt_DDESC_t *f = &m->sd->d->inst.f.DDESC;
    const isa_dap_t *src = &f->src, *dst = &f->dst;
    unsigned eb = elem_bytes(src, dst);
    bool copy = !m->s->opt.timing_only;
    uint64_t total = dap_elems(src);
    uint32_t n0 = src->count[0], n1 = src->count[1];
    /* every row in one partition on both sides, stepping by whole partitions */
    bool uniform = total && n0 == dst->count[0] && side_rows_uniform(src, src_addr, n0, n1) &&
                   side_rows_uniform(dst, dst_addr, n0, n1);
    if (copy) {
        touch_side(m->s, src, src_addr); /* first: a source in cells the copy covers is filled */
        if (!cover_rows(m, src, dst, src_addr, dst_addr, uniform))
            touch_side(m->s, dst, dst_addr);
    }
    if (!total)
        return 0;
    uint64_t trun = f->transpose ? transpose_run(m, src, dst, eb) : eb;
    if (src->count[0] == dst->count[0]) {
        /* same row shape: row by row */
        bool fast = row_fast(m, dst, src);
        /* a row is one contiguous run when both sides step by one element
         * (a transpose: see transpose_run) */
        bool cs = src->step[0] == (int32_t)isa_dtype_size(src->dtype);
        bool cd = dst->step[0] == (int32_t)isa_dtype_size(dst->dtype);
        uint64_t run = f->transpose ? trun : cs && cd ? (uint64_t)n0 * eb : eb;
        if (uniform) {
            charge_uniform_rows(m, src, dst, src_addr, dst_addr, n1, (uint64_t)n0 * eb, run);
            return copy ? copy_rows(m, src, dst, src_addr, dst_addr, fast) : 0;
        }
        for (uint32_t j = 0; j < n1; j++) {
            int64_t sa = src_addr + (int64_t)j * src->step[1];
            int64_t da = dst_addr + (int64_t)j * dst->step[1];
            if (row_in_one_partition(src, sa, n0) && row_in_one_partition(dst, da, n0)) {
                charge(m, engine_of(m, dst, da, src, sa, j), (uint64_t)n0 * eb, run, src, dst);
                if (copy && copy_row(m, src, dst, sa, da, n0, fast))
                    return -1;
                continue;
            }
            for (uint32_t i = 0; i < n0; i++) {
                int64_t a = sa + (int64_t)i * src->step[0], b = da + (int64_t)i * dst->step[0];
                charge(m, engine_of(m, dst, b, src, a, j), eb, f->transpose ? trun : eb, src, dst);
                if (copy && move_elem(m, dst, b, src, a))
                    return -1;
            }
        }
        return 0;
    }
    /* different row shapes: element k of src to element k of dst */
    uint32_t si = 0, sj = 0, di = 0, dj = 0;
    for (uint64_t k = 0; k < total; k++) {
        int64_t a = src_addr + (int64_t)sj * src->step[1] + (int64_t)si * src->step[0];
        int64_t b = dst_addr + (int64_t)dj * dst->step[1] + (int64_t)di * dst->step[0];
        charge(m, engine_of(m, dst, b, src, a, dj), eb, f->transpose ? trun : eb, src, dst);
        if (copy && move_elem(m, dst, b, src, a))
            return -1;
        if (++si == src->count[0]) { si = 0; sj++; }
        if (++di == dst->count[0]) { di = 0; dj++; }
    }
    return 0;
}

static int move_direct(mover_t *m)
{
    plane_t pl = planes_of(&m->sd->d->inst);
    for (uint32_t k = 0; k < pl.n; k++)
        if (move_plane(m, m->sd->src_addr + (int64_t)k * pl.sstep,
                       m->sd->dst_addr + (int64_t)k * pl.dstep))
            return -1;
    return 0;
}

/* Index j of the idx TAP (partition-major, then free dims outer to inner). */
static int64_t read_index(const mover_t *m, const isa_tap_t *t, uint64_t j, bool *uninit)
{
    uint64_t per = isa_tap_free_elems(t);
    uint64_t p = t->start + j / per, r = j % per;
    int64_t off = 0;
    for (unsigned d = 0; d < t->ndims; d++) {
        off += (int64_t)(r % t->count[d]) * t->step[d];
        r /= t->count[d];
    }
    unsigned size = isa_dtype_size(t->dtype);
    int64_t col = (int64_t)t->addr + off * size;
    sim_lazy_touch(&m->c->sbuf_z, (unsigned)p, 1, col, col + size);
    uint64_t byte = p * m->s->t->sbuf_partition_bytes + (uint64_t)col;
    if (m->c->sbuf_init && !all_init(m->c->sbuf_init + byte, size))
        *uninit = true;
    return num_load_i64(m->c->sbuf + byte, t->dtype);
}

static int move_indirect(mover_t *m)
{
    const isa_fmt_DIND_t *f = &m->sd->d->inst.f.DIND;
    const isa_dap_t *src = &f->src, *dst = &f->dst;
    const isa_dap_t table = isa_dind_table(f), *indexed = &table;
    unsigned eb = elem_bytes(src, dst);
    uint32_t rows = f->scatter ? src->count[1] : dst->count[1], n0 = src->count[0];
    bool copy = !m->s->opt.timing_only;
    /* a gather-transpose (transpose_op xzyw) goes through the transpose
     * unit like a direct transpose (docs/timing.md): each gathered row is
     * one run of its contiguous bytes, at the target's transpose share */
    uint64_t xrun = eb;
    if (m->x->trigger->inst.f.DTRIG.transpose_op == ISA_XPOSE_XZYW) {
        const tpb_target_t *t = m->s->t;
        unsigned x = on_chip(indexed->space) ? t->dma_transpose_sbuf_permille
                                             : t->dma_transpose_hbm_permille;
        if (x) {
            m->xpermille = x;
            if (indexed->step[0] == (int32_t)isa_dtype_size(indexed->dtype))
                xrun = (uint64_t)n0 * eb;
        }
    }
    if (copy)
        touch_sides(m, src, dst);
    for (uint32_t j = 0; j < rows; j++) {
        int64_t ix = j;
        if (copy) {
            bool uninit = false;
            ix = read_index(m, &f->idx, j, &uninit);
            if (uninit)
                return mover_errf(m, "index %u read from never-written SBUF (--check-uninit)", j);
            if (ix < 0 || ix >= (int64_t)indexed->count[1]) {
                if (f->oob == ISA_OOB_SKIP)
                    continue;
                return mover_errf(m,
                                  "index %lld (idx element %u) is out of range [0, %u) of the "
                                  "indexed %s side (oob=error)",
                                  (long long)ix, j, indexed->count[1], f->scatter ? "dst" : "src");
            }
        } else if (j >= indexed->count[1]) {
            continue;
        }
        int64_t sa = m->sd->src_addr + (f->scatter ? (int64_t)j : ix) * src->step[1];
        int64_t da = m->sd->dst_addr + (f->scatter ? ix : (int64_t)j) * dst->step[1];
        /* a gathered/scattered row is one run when both sides are contiguous */
        if (n0 && src->step[0] == (int32_t)isa_dtype_size(src->dtype) &&
            dst->step[0] == (int32_t)isa_dtype_size(dst->dtype) &&
            row_in_one_partition(src, sa, n0) && row_in_one_partition(dst, da, n0))
            charge(m, engine_of(m, dst, da, src, sa, j), (uint64_t)n0 * eb, (uint64_t)n0 * eb, src,
                   dst);
        else
            for (uint32_t i = 0; i < n0; i++)
                charge(m, engine_of(m, dst, da + (int64_t)i * dst->step[0], src,
                                    sa + (int64_t)i * src->step[0], j), eb, xrun, src, dst);
        for (uint32_t i = 0; copy && i < n0; i++) {
            int64_t a = sa + (int64_t)i * src->step[0], b = da + (int64_t)i * dst->step[0];
            if (move_elem(m, dst, b, src, a))
                return -1;
        }
    }
    return 0;
}

/* unique_indices (DmaTrigger unique = 1): the kernel promised that no
 * destination row of the transfer's scatter descriptors repeats (seed 002
 * NeuronIndirectRMW unique_indices); a repeat is an error naming both idx
 * elements, so a wrong promise cannot pass silently. */
typedef struct {
    int64_t addr;
    uint32_t desc, j;
} uniq_row_t;

static int uniq_cmp(const void *a, const void *b)
{
    const uniq_row_t *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int check_unique(mover_t *m)
{
    size_t n = 0, cap = 0;
    uniq_row_t *rows = NULL;
    int rc = 0;
    for (unsigned i = 0; i < m->x->ndesc && !rc; i++) {
        const sim_desc_t *sd = &m->x->descs[i];
        if (sd->d->inst.op != ISA_OP_DMA_INDIRECT2D || !sd->d->inst.f.DIND.scatter)
            continue;
        const isa_fmt_DIND_t *f = &sd->d->inst.f.DIND;
        m->sd = sd;
        for (uint32_t j = 0; j < f->src.count[1]; j++) {
            bool uninit = false;
            int64_t ix = read_index(m, &f->idx, j, &uninit);
            if (uninit || ix < 0 || ix >= (int64_t)isa_dind_table(f).count[1])
                continue;   /* reported by the move itself */
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                uniq_row_t *r = realloc(rows, cap * sizeof *r);
                if (!r) {
                    free(rows);
                    return tpb_errf(m->err, "out of memory (unique_indices check)");
                }
                rows = r;
            }
            rows[n++] = (uniq_row_t){sd->dst_addr + ix * f->dst.step[1], i, j};
        }
    }
    if (n > 1) /* rows is NULL when no index was in range (qsort's pointer must not be) */
        qsort(rows, n, sizeof *rows, uniq_cmp);
    for (size_t k = 1; k < n && !rc; k++)
        if (rows[k].addr == rows[k - 1].addr) {
            m->sd = &m->x->descs[rows[k].desc];
            rc = mover_errf(m, "unique_indices: destination row at 0x%llx is scattered to twice "
                            "(idx element %u of descriptor %u and element %u of descriptor %u)",
                            (unsigned long long)rows[k].addr, rows[k - 1].j, rows[k - 1].desc,
                            rows[k].j, rows[k].desc);
        }
    free(rows);
    return rc;
}


int sim_dma_move_desc(sim_t *s, sim_core_t *c, sim_xfer_t *x, const sim_desc_t *sd, uint64_t *eng,
                      uint64_t *cost, unsigned ne, uint64_t *hbm, tpb_err_t *err)
{
    bool direct = isa_op_is_direct_dma(sd->d->inst.op);
    bool d2 = sd->d->inst.op == ISA_OP_DMA_DIRECT2D;   /* only DDESC has scale */
    unsigned dmaop = direct ? sd->d->inst.f.DDESC.compute : sd->d->inst.f.DIND.compute;
    mover_t m = { .s = s, .c = c, .x = x, .sd = sd, .eng_bytes = eng, .eng_cost = cost,
                  .nengines = ne, .xpermille = 1000, .add = dmaop == ISA_DMAOP_ADD, .err = err,
                  .scaled = d2 && sd->d->inst.f.DDESC.scaled,
                  .scale = d2 ? sd->d->inst.f.DDESC.scale : 1.0f };
    int rc = direct ? move_direct(&m) : move_indirect(&m);
    flush_charges(&m);
    if (rc != 0)
        return -1;
    *hbm += m.hbm_bytes;
    return 0;
}

int sim_dma_check_unique(sim_t *s, sim_core_t *c, sim_xfer_t *x, tpb_err_t *err)
{
    mover_t um = { .s = s, .c = c, .x = x, .sd = &x->descs[0], .err = err };
    return check_unique(&um);
}
