/* alloc.c - memory layout.
 *
 * HBM: inputs, outputs, constants and scratch tensors packed in declaration
 * order, each 64-byte aligned (enc_hbm_layout; shared by every core).
 *
 * SBUF/PSUM: a tile is live from the first to the last tile-IR op that
 * touches it.  Tiles are placed in order of first use, first-fit at the
 * lowest address not used by any tile whose live range overlaps; so space
 * freed by dead tiles is reused.  Every tile starts at partition 0 and owns
 * [addr, addr + bytes) in each partition.  PSUM tiles of at most 2 KiB per
 * partition never straddle a 2 KiB bank (a matmul output must sit in one
 * bank); larger PSUM tiles start on a bank boundary.  A multi-step reduce
 * gets a scratch partial live for its own op only.
 *
 * Rotating buffers (docs/compiler.md): the instances of a tile declared in
 * a loop body (same declaration path, one per iteration) get up to N
 * buffers, so iteration i+1's loads do not wait for iteration i's
 * consumers.  Placement is modulo: the group's N buffers are placed like
 * tiles live from the first use of instance b (b < N) to the group's last
 * use, and instance j takes buffer j mod N, so a group's addresses repeat
 * with period N and rolled loops see the same addresses in every
 * iteration.  N is the largest value up to the target's maximum (SBUF:
 * sbuf_max_buffers, PSUM: psum_max_buffers = its banks; or --buffers) for
 * which the space fits and which divides the group's instances per
 * iteration of each enclosing rolling candidate loop; N = 1 is plain
 * first fit. */
#include "backend.h"
#include "hugepage.h"
#include "alloc_fit.h"
#include "alloc_live.h"
#include "alloc_order.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HBM_ALIGN 64
#define SBUF_ALIGN 64
#define PSUM_ALIGN 8
#define PSUM_BANK 2048u

uint64_t enc_tensor_elems(const tir_tensor_t *t)
{
    uint64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= (uint64_t)t->shape[d];
    return n;
}

uint64_t enc_tensor_bytes(const tir_tensor_t *t)
{
    return enc_tensor_elems(t) * isa_dtype_size(t->dtype);
}

static bool in_hbm(const tir_tensor_t *t)
{
    return t->kind != TIR_T_SBUF && t->kind != TIR_T_PSUM;
}

int enc_hbm_layout(const tir_kernel_t *k, enc_hbm_layout_t *out, tpb_err_t *err)
{
    return enc_hbm_layout_live(k, NULL, out, err);
}

int enc_hbm_layout_live(const tir_kernel_t *k, const enc_live_t *live, enc_hbm_layout_t *out,
                        tpb_err_t *err)
{
    memset(out, 0, sizeof *out);
    out->addr = calloc((size_t)(k->ntensors > 0 ? k->ntensors : 1), sizeof *out->addr);
    if (!out->addr)
        return tpb_errf(err, "out of memory laying out HBM");
    out->ntensors = k->ntensors;
    static const tir_tensor_kind_t order[] = {TIR_T_INPUT, TIR_T_OUTPUT, TIR_T_CONSTANT,
                                              TIR_T_SCRATCH};
    /* one pass over the (possibly many: a tile per loop iteration) tensors
     * picks the few HBM ones -- or check_kernel's pass over them did,
     * and only the tensors after those it saw are read; they are then
     * placed kind by kind */
    bool given = live && live->hbm_ok && live->ntensors <= k->ntensors;
    int from = given ? live->ntensors : 0, nh = given ? live->nhbm : 0;
    int *hbm = malloc((size_t)(nh + k->ntensors - from + 1) * sizeof *hbm);
    if (!hbm) {
        enc_hbm_layout_free(out);
        return tpb_errf(err, "out of memory laying out HBM");
    }
    if (nh)
        memcpy(hbm, live->hbm, (size_t)nh * sizeof *hbm);
    for (int i = from; i < k->ntensors; i++)
        if (in_hbm(&k->tensors[i]))
            hbm[nh++] = i;
    uint64_t at = 0;
    for (size_t o = 0; o < sizeof order / sizeof order[0]; o++) {
        for (int h = 0; h < nh; h++) {
            const tir_tensor_t *t = &k->tensors[hbm[h]];
            if (t->kind != order[o])
                continue;
            at = (at + HBM_ALIGN - 1) / HBM_ALIGN * HBM_ALIGN;
            out->addr[hbm[h]] = at;
            at += enc_tensor_bytes(t);
        }
    }
    free(hbm);
    out->total = at;
    return 0;
}

void enc_hbm_layout_free(enc_hbm_layout_t *l)
{
    free(l->addr);
    free(l->live_lo);
    free(l->live_hi);
    memset(l, 0, sizeof *l);
}

/* A placement request: live range, size, space. */
typedef struct {
    bir_mloc_t *ml;
    const char *name, *path;
} req_t;

static bool ranges_overlap(const bir_mloc_t *a, const bir_mloc_t *b)
{
    return a->first_use <= b->last_use && b->first_use <= a->last_use;
}

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* Where r may start at the earliest from a: aligned, and for PSUM not
 * straddling a 2 KiB bank (or bank-aligned when larger than one). */
static uint64_t fit_adjust(uint64_t a, uint64_t bytes, uint64_t align, bool psum)
{
    a = align_up(a, align);
    if (psum) {
        if (bytes <= PSUM_BANK && a % PSUM_BANK + bytes > PSUM_BANK)
            a = align_up(a, PSUM_BANK);
        else if (bytes > PSUM_BANK)
            a = align_up(a, PSUM_BANK);
    }
    return a;
}

/* Lowest address for r among the placed tiles live at the same time: one
 * sweep over them in address order (byaddr), moving past every one that
 * overlaps.  Moving to the end of an overlapping tile skips no feasible
 * address, so this is the lowest feasible address (what repeated passes
 * over the tiles in any order converge to, in O(n) instead of O(n^2)). */
static uint64_t first_fit(const req_t *r, bir_mloc_t *const *byaddr, int n, uint64_t align,
                          bool psum)
{
    uint64_t bytes = r->ml->bytes;
    uint64_t a = fit_adjust(0, bytes, align, psum);
    for (int i = 0; i < n; i++) {
        const bir_mloc_t *p = byaddr[i];
        if (!ranges_overlap(p, r->ml))
            continue;
        if (p->addr >= a + bytes)
            break;   /* this and every later tile start above r */
        if (a < p->addr + p->bytes)
            a = fit_adjust(p->addr + p->bytes, bytes, align, psum);
    }
    return a;
}

/* Insert ml into byaddr[0..n) kept sorted by address. */
static void insert_by_addr(bir_mloc_t **byaddr, int n, bir_mloc_t *ml)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (byaddr[mid]->addr <= ml->addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(&byaddr[lo + 1], &byaddr[lo], (size_t)(n - lo) * sizeof *byaddr);
    byaddr[lo] = ml;
}

static int cmp_first_use(const void *x, const void *y)
{
    const req_t *a = x, *b = y;
    if (a->ml->first_use != b->ml->first_use)
        return a->ml->first_use < b->ml->first_use ? -1 : 1;
    return a->ml->tensor < b->ml->tensor ? -1 : a->ml->tensor > b->ml->tensor;
}

/* One integer key per element whose order is a comparator's: (a, b) with
 * a, b >= -1 in the high and low 32 bits; false when one is out of range. */
static bool pair_key(uint64_t *key, int64_t a, int64_t b)
{
    if (a < -1 || b < -1 || a >= INT32_MAX || b >= INT32_MAX)
        return false;
    *key = (uint64_t)(a + 1) << 32 | (uint64_t)(b + 1);
    return true;
}

static bool first_use_key(uint64_t *key, const void *x)
{
    const req_t *r = x;
    return pair_key(key, r->ml->first_use, r->ml->tensor);
}

static void live_names(const req_t *r, bir_mloc_t **placed, int nplaced, const tir_kernel_t *k,
                       char *out, size_t len)
{
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; i < nplaced && n + 80 < len; i++) {
        if (!ranges_overlap(placed[i], r->ml))
            continue;
        const char *nm = placed[i]->tensor >= 0 ? k->tensors[placed[i]->tensor].name : "(scratch)";
        n += (size_t)snprintf(out + n, len - n, "%s%s(%llu)", n ? ", " : "", nm,
                              (unsigned long long)placed[i]->bytes);
    }
}

static int cmp_group(const void *x, const void *y)
{
    const req_t *a = *(const req_t *const *)x, *b = *(const req_t *const *)y;
    int c = strcmp(a->path, b->path);
    if (c)
        return c;
    return cmp_first_use(a, b);
}

/* by[i] := by[perm[i]] for all i, gathered into tmp and copied back.  The
 * loads of a gather are independent (misses overlap), where following the
 * permutation's cycles in place chained one miss to the next (10^5 tiles:
 * a quarter of place_space's time). */
static void permute(req_t **by, const int *perm, int n, req_t **tmp)
{
    for (int i = 0; i < n; i++)
        tmp[i] = by[perm[i]];
    memcpy(by, tmp, (size_t)n * sizeof *by);
}

/* by[0..n) into cmp_group's order.  When by is already in strict
 * first-use order (reqs is sorted so, and each tile is its own tensor) that
 * order is a stable sort by path, done on ranks of the distinct paths
 * instead of a strcmp per compared pair; otherwise qsort as before.
 * scratch: room for n req_t (a path, a rank and an id per entry).
 * *distinct: every path is another (no group: by unchanged), else false. */
static int group_by_path(req_t **by, int n, req_t *scratch, bool *distinct)
{
    *distinct = false;
    bool strict = true;
    for (int i = 1; i < n && strict; i++)
        strict = cmp_first_use(by[i - 1], by[i]) < 0;
    if (!strict) {
        qsort(by, (size_t)n, sizeof *by, cmp_group);
        return 0;
    }
    _Static_assert(sizeof(req_t) >= sizeof(const char *) + 2 * sizeof(int),
                   "group_by_path's scratch");
    _Static_assert(sizeof(req_t *) == sizeof(const char *), "permute's tmp in paths");
    const char **paths = (const char **)(void *)scratch;
    int *perm = (int *)(paths + n), *id = perm + n;
    for (int i = 0; i < n; i++)
        paths[i] = by[i]->path;
    int nd = enc_group_by_str(paths, n, perm, id);   /* n: no groups, by unchanged */
    if (nd >= 0 && nd < n)
        permute(by, perm, n, (req_t **)(void *)paths);   /* paths are read no more */
    *distinct = nd == n;
    return nd < 0 ? -1 : 0;
}

/* Rotation groups: the instances of each loop-declared tile (same
 * declaration path), in first-use order, with a buffer count per group.
 * A group with nb > 1 is placed modulo: nb buffer requests (buf), buffer
 * b live from the first use of instance b to the group's last use, and
 * instance j at buffer j mod nb's address; a group whose instance j + nb
 * starts before instance j ends is placed as single tiles with stretched
 * live ranges instead (rot_apply). */
typedef struct {
    req_t **by;                  /* members, grouped, first-use order within */
    int *start;                  /* [ngroups + 1] */
    unsigned *nb;                /* [ngroups] buffers */
    int ngroups;
    int *orig;                   /* [nr] real last uses */
    bir_mloc_t *buf;             /* [nr] buffer requests (group g: from start[g]) */
    req_t *work;                 /* [nr] this pass's placement requests */
    req_t *base;                 /* the requests orig[] is indexed by */
    bool *mod;                   /* [ngroups] placed modulo */
    uint64_t *div;               /* [ngroups] counts must divide it (0: any) */
    void *block;                 /* work, by and orig, in one (rot_block_bytes) */
    tpb_spare_t *spare;          /* where block comes from and goes back to (NULL: none) */
    size_t n1;                   /* the [nr] arrays' length (at least 1) */
} rot_t;

/* The per-request arrays of place_space (10^5 tiles: megabytes, written
 * whole) in huge pages from TPB_ARRAY_MAP_MIN on; not cleared: every
 * element is written before it is read, so they may take the job's spare
 * mappings (common/spare.h, the module's), and go back to them when the
 * placement is done: the lowering's instruction array and arena, made
 * next, then take these pages instead of clearing fresh ones. */
static void *req_array(tpb_spare_t *spare, size_t n, size_t elem)
{
    void *p = tpb_spare_take(spare, n * elem);
    return p ? p : tpb_array_grow(NULL, 0, n * elem);
}

/* rot_t's block: work [n1], then by [n1], then orig [n1] (alignments
 * falling: each starts aligned). */
static size_t rot_block_bytes(size_t n1)
{
    return n1 * (sizeof(req_t) + sizeof(req_t *) + sizeof(int));
}

static void rot_free(rot_t *r)
{
    tpb_spare_put(r->spare, r->block, rot_block_bytes(r->n1));
    free(r->start);
    free(r->nb);
    free(r->buf);
    free(r->mod);
    free(r->div);
}

/* A tile declared in a dynamic_range body (its instances are first used
 * inside the loop's ops) is not rotated: the body is emitted once for any
 * trip count (docs/compiler.md "Dynamic loops").  The op ranges of the
 * dynamic loops, gathered once per placement: testing every tile against
 * every loop record cost tiles x loops (an unrolled tutorial has tens of
 * thousands of both, and spilling places the kernel once per victim). */
typedef struct {
    int *lo, *hi;   /* [lo, hi) op ranges */
    int n;
} dyn_ranges_t;

static int dyn_ranges(dyn_ranges_t *d, const tir_kernel_t *k)
{
    d->n = 0;
    d->lo = d->hi = NULL;
    int n = 0;
    for (int i = 0; i < k->nloops; i++)
        n += k->loops[i].dynamic;
    if (!n)
        return 0;
    d->lo = malloc((size_t)n * sizeof *d->lo);
    d->hi = malloc((size_t)n * sizeof *d->hi);
    if (!d->lo || !d->hi) {
        free(d->lo);
        free(d->hi);
        return -1;
    }
    for (int i = 0; i < k->nloops; i++) {
        const tir_loop_t *l = &k->loops[i];
        if (l->dynamic) {
            d->lo[d->n] = k->loop_marks[l->first];
            d->hi[d->n++] = k->loop_marks[l->first + l->trips];
        }
    }
    return 0;
}

static bool in_dynamic_loop(const dyn_ranges_t *d, int first_use)
{
    for (int i = 0; i < d->n; i++)
        if (first_use >= d->lo[i] && first_use < d->hi[i])
            return true;
    return false;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b, b = t;
    }
    return a;
}

/* The first of by[a..e) (first-use order) used at or after op lo. */
static int first_from(const rot_t *r, int a, int e, int lo)
{
    while (a < e) {
        int mid = (a + e) / 2;
        if (r->by[mid]->ml->first_use < lo)
            a = mid + 1;
        else
            e = mid;
    }
    return a;
}

/* Instances of group g first used in ops [lo, hi). */
static int64_t count_in(const rot_t *r, int g, int lo, int hi)
{
    int a = first_from(r, r->start[g], r->start[g + 1], lo);
    return first_from(r, a, r->start[g + 1], hi) - a;
}

/* Periods that let rolled loops repeat (docs/compiler.md "Rotating
 * buffers"): for every rolling candidate loop whose iterations each hold
 * the same number c >= 2 of a group's instances, the group's buffer count
 * must divide c, so that each iteration of that loop sees the same
 * buffers (c = 1: the loop declares the tile and rolls N iterations at a
 * time).  r->div[g] = gcd of those c (0: no such loop). */
static void rot_periods(rot_t *r, const tir_kernel_t *k, const unsigned char *cand)
{
    for (int i = 0; cand && i < k->nloops; i++) {
        const tir_loop_t *l = &k->loops[i];
        if (!cand[i] || l->trips < 2)
            continue;
        const int *mk = &k->loop_marks[l->first];
        for (int g = 0; g < r->ngroups; g++) {
            int64_t c = count_in(r, g, mk[0], mk[1]);
            for (int64_t it = 1; c >= 2 && it < l->trips; it++)
                if (count_in(r, g, mk[it], mk[it + 1]) != c)
                    c = 0;   /* uneven iterations: they differ anyway */
            if (c >= 2)
                r->div[g] = gcd(r->div[g], (uint64_t)c);
        }
    }
}

/* The largest buffer count <= nb that group g may take. */
static unsigned rot_fit_period(const rot_t *r, int g, unsigned nb)
{
    while (nb > 1 && r->div[g] && r->div[g] % nb)
        nb--;
    return nb;
}

static int rot_init(rot_t *r, const tir_kernel_t *k, const unsigned char *cand, req_t *reqs,
                    int nr, unsigned max, tpb_spare_t *spare)
{
    memset(r, 0, sizeof *r);
    size_t n1 = r->n1 = (size_t)(nr > 0 ? nr : 1);
    r->spare = spare;
    r->block = req_array(spare, rot_block_bytes(n1), 1);
    /* start, nb and buf are filled from the front, a group at a time (a
     * few entries of a loop's tiles): malloc'ed, their tails stay untouched */
    r->start = malloc((n1 + 1) * sizeof *r->start);
    r->nb = malloc(n1 * sizeof *r->nb);
    r->buf = malloc(n1 * sizeof *r->buf);   /* written before read (rot_apply) */
    r->base = reqs;
    if (!r->block || !r->start || !r->nb || !r->buf)
        return -1;
    r->work = r->block;
    r->by = (req_t **)(r->work + n1);
    r->orig = (int *)(r->by + n1);
    dyn_ranges_t dyn;
    if (dyn_ranges(&dyn, k))
        return -1;
    int n = 0;
    for (int i = 0; i < nr; i++) {
        r->orig[i] = reqs[i].ml->last_use;
        if (max > 1 && reqs[i].ml->tensor >= 0 && reqs[i].path && reqs[i].path[0] &&
            !in_dynamic_loop(&dyn, reqs[i].ml->first_use))
            r->by[n++] = &reqs[i];
    }
    free(dyn.lo);
    free(dyn.hi);
    /* work is not used before rot_apply: its pages serve the sort */
    bool distinct;
    if (group_by_path(r->by, n, r->work, &distinct))
        return -1;
    /* groups are kept contiguous in by (start[g + 1] ends group g): a tile
     * declared once needs no rotation and is dropped from by, so that it
     * does not join the group before it (every path distinct: no group,
     * no strcmp of each neighbour to find that again) */
    int m = 0;
    r->start[0] = 0;
    for (int g = 0; g < n && !distinct;) {
        int e = g + 1;
        while (e < n && (r->by[e]->path == r->by[g]->path ||   /* interned: mostly */
                         strcmp(r->by[e]->path, r->by[g]->path) == 0))
            e++;
        if (e - g > 1) {
            memmove(&r->by[m], &r->by[g], (size_t)(e - g) * sizeof *r->by);
            m += e - g;
            r->nb[r->ngroups++] = max;
            r->start[r->ngroups] = m;
        }
        g = e;
    }
    size_t ng = (size_t)(r->ngroups > 0 ? r->ngroups : 1);
    r->mod = calloc(ng, sizeof *r->mod);
    r->div = calloc(ng, sizeof *r->div);
    if (!r->mod || !r->div)
        return -1;
    rot_periods(r, k, cand);
    for (int g = 0; g < r->ngroups; g++)
        r->nb[g] = rot_fit_period(r, g, r->nb[g]);
    return 0;
}

/* Buffers group g uses: its count, at most one per instance. */
static int rot_nbe(const rot_t *r, int g)
{
    int n = r->start[g + 1] - r->start[g];
    return (int)r->nb[g] < n ? (int)r->nb[g] : n;
}

/* Group g placed modulo its buffers, when it can be: each instance j
 * starts after every instance up to j - nb (so every earlier one of its
 * buffer) has ended.  Then its nb buffers are set up, buffer b a copy of
 * instance b as large as its largest instance (j = b mod nb) and live to
 * the group's last use, and its instances are marked (rot_nbuf 1).  One
 * pass over the instances for the test and the buffers (a pass each, and
 * one per buffer, re-read them all from memory); a failed test unmarks
 * the instances it passed. */
static bool rot_modulo(rot_t *r, int g)
{
    int s = r->start[g], e = r->start[g + 1], nb = rot_nbe(r, g), last = -1, end = 0;
    if (nb < 2)
        return false;
    for (int j = s, b = 0; j < e; j++, b = b + 1 < nb ? b + 1 : 0) {
        bir_mloc_t *ml = r->by[j]->ml, *bf = &r->buf[s + b];
        if (j >= s + nb) {
            int o = r->orig[r->by[j - nb] - r->base];
            last = o > last ? o : last;
            if (ml->first_use <= last) {
                for (int i = s; i < j; i++)
                    r->by[i]->ml->rot_nbuf = 0;
                return false;
            }
        } else {
            *bf = *ml;   /* before the mark: rot_nbuf 0 */
        }
        end = ml->last_use > end ? ml->last_use : end;
        ml->rot_nbuf = 1;
        bf->bytes = ml->bytes > bf->bytes ? ml->bytes : bf->bytes;
    }
    for (int b = 0; b < nb; b++)
        r->buf[s + b].last_use = end;
    return true;
}

/* Group by[s..e) placed as single tiles: instance j live until the first
 * use of instance j + nb - 1 (or of the group's last one). */
static void rot_stretch(rot_t *r, int s, int e, int nb)
{
    for (int j = s; nb > 1 && j < e - 1; j++) {
        int until = r->by[j + nb - 1 < e - 1 ? j + nb - 1 : e - 1]->ml->first_use;
        if (until > r->by[j]->ml->last_use)
            r->by[j]->ml->last_use = until;
    }
}

/* This pass's requests (r->work, first-use order; returns their count):
 * the single tiles, the buffers of each modulo group, and the instances
 * of the other groups with their live ranges stretched: instance j stays
 * live until the first use of instance j + nb - 1 (or of the group's
 * last instance), so instance j + nb is the first that may take instance
 * j's address. */
static int rot_apply(rot_t *r, req_t *reqs, int nr)
{
    for (int i = 0; i < nr; i++) {
        reqs[i].ml->last_use = r->orig[i];
        reqs[i].ml->rot_buf = 0;
        reqs[i].ml->rot_nbuf = 0;   /* 0: not in a modulo group */
    }
    for (int g = 0; g < r->ngroups; g++) {
        int s = r->start[g], e = r->start[g + 1], nb = rot_nbe(r, g);
        r->mod[g] = rot_modulo(r, g);
        if (!r->mod[g])
            rot_stretch(r, s, e, nb);
    }
    int n = 0;
    for (int i = 0; i < nr; i++)
        if (!reqs[i].ml->rot_nbuf)
            r->work[n++] = reqs[i];
    for (int g = 0; g < r->ngroups; g++)
        for (int b = 0; r->mod[g] && b < rot_nbe(r, g); b++) {
            req_t *q = r->by[r->start[g] + b];
            r->work[n++] = (req_t){&r->buf[r->start[g] + b], q->name, q->path};
        }
    /* in order already unless a modulo group added buffers (a total order) */
    enc_sort_unless_sorted(r->work, (size_t)n, sizeof *r->work, cmp_first_use, first_use_key);
    return n;
}

/* One buffer fewer for the group whose rotation costs the most space
 * (bytes x (buffers - 1); ties: the first in path order).  0: none left. */
static int rot_shrink(rot_t *r)
{
    int best = -1;
    uint64_t cost = 0;
    for (int g = 0; g < r->ngroups; g++) {
        uint64_t c = r->by[r->start[g]]->ml->bytes * (r->nb[g] - 1);
        if (r->nb[g] > 1 && (best < 0 || c > cost))
            best = g, cost = c;
    }
    if (best < 0)
        return 0;
    r->nb[best] = rot_fit_period(r, best, r->nb[best] - 1);
    return 1;
}

static unsigned rot_max(const rot_t *r)
{
    unsigned m = 1;
    for (int g = 0; g < r->ngroups; g++)
        m = r->nb[g] > m ? r->nb[g] : m;
    return m;
}

/* After placement: a modulo group's instances at their buffers'
 * addresses (in the same pass), then each rotated instance's buffer,
 * numbered by its address in the order the group's instances first use
 * them (so with N buffers the instances go 0, 1, .., N-1, 0, ..), out of
 * the group's distinct addresses (docs/artifacts.md, "buf"). */
static int rot_record(const rot_t *r)
{
    for (int g = 0; g < r->ngroups; g++) {
        int s = r->start[g], e = r->start[g + 1], nb = rot_nbe(r, g);
        uint64_t *seen = malloc((size_t)(e - s) * sizeof *seen);
        if (!seen)
            return -1;
        unsigned n = 0;
        for (int j = s, b = 0; j < e; j++, b = b + 1 < nb ? b + 1 : 0) {
            bir_mloc_t *ml = r->by[j]->ml;
            if (r->mod[g])
                ml->addr = r->buf[s + b].addr;
            unsigned f = 0;
            while (f < n && seen[f] != ml->addr)
                f++;
            if (f == n)
                seen[n++] = ml->addr;
            ml->rot_buf = f;
        }
        free(seen);
        for (int j = s; j < e; j++)
            r->by[j]->ml->rot_nbuf = n > 1 ? n : 0;
    }
    return 0;
}

/* The error for request r at address a; the live tiles listed are the
 * placed ones (in placement order) whose live range overlaps it. */
static int place_error(const tir_kernel_t *k, const req_t *r, bir_mloc_t **placed, int np,
                       bool psum, uint64_t a, uint64_t cap, tpb_err_t *err)
{
    char live[512];
    live_names(r, placed, np, k, live, sizeof live);
    return tpb_errf(err, "%s allocation failed: tile '%s' (%s) needs %llu bytes per "
                         "partition while live over ops %d..%d, but only %llu of %llu "
                         "bytes are free (live: %s)",
                    psum ? "PSUM" : "SBUF", r->name, r->path[0] ? r->path : "?",
                    (unsigned long long)r->ml->bytes, r->ml->first_use, r->ml->last_use,
                    (unsigned long long)(a < cap ? cap - a : 0), (unsigned long long)cap,
                    live[0] ? live : "none");
}

/* Whether place_fit gives the sweep's addresses for reqs: SBUF (one
 * alignment, no bank rule), requests in first-use order with non-empty
 * live ranges and sizes.  Then the tiles live at a request's first use
 * are exactly the placed ones not yet ended, they never overlap each
 * other, and with 64-byte aligned starts two tiles overlap in bytes iff
 * they share a 64-byte granule; so the lowest feasible address is the
 * start of the lowest run of free granules long enough. */
static bool fit_applies(const req_t *reqs, int nr, bool psum, uint64_t cap)
{
    if (psum || cap / SBUF_ALIGN >= (uint64_t)INT_MAX / 4)
        return false;
    for (int i = 0; i < nr; i++) {
        const bir_mloc_t *ml = reqs[i].ml;
        if (ml->bytes == 0 || ml->bytes > cap || ml->first_use > ml->last_use ||
            (i && ml->first_use < reqs[i - 1].ml->first_use))
            return false;
    }
    return true;
}

/* A request's last use and index, ordered by both. */
typedef struct {
    int last, i;
} end_t;

static int cmp_end(const void *x, const void *y)
{
    const end_t *a = x, *b = y;
    if (a->last != b->last)
        return a->last < b->last ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static bool end_key(uint64_t *key, const void *x)
{
    const end_t *e = x;
    return pair_key(key, e->last, e->i);
}

/* fit_applies' case of place_pass: the live tiles are kept as used 64-byte
 * granules in a free-run tree (alloc_fit.h) instead of a list swept per
 * request; a tile's granules are freed once a request starts after its
 * last use (the sweep's filter). */
static int place_fit(const tir_kernel_t *k, req_t *reqs, int nr, bir_mloc_t **placed,
                     uint64_t cap, uint64_t *peak, int *fail_op, tpb_err_t *err)
{
    fit_runs_t fr;
    end_t *ends = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *ends);
    int rc = fit_runs_init(&fr, (int)((cap + SBUF_ALIGN - 1) / SBUF_ALIGN));
    if (rc || !ends) {
        fit_runs_free(&fr);
        free(ends);
        return tpb_errf(err, "out of memory in the allocator");
    }
    for (int i = 0; i < nr; i++)
        ends[i] = (end_t){reqs[i].ml->last_use, i};
    enc_sort_unless_sorted(ends, (size_t)nr, sizeof *ends, cmp_end, end_key);   /* often in order */
    *peak = 0;
    for (int i = 0, e = 0; i < nr; i++) {
        bir_mloc_t *ml = reqs[i].ml;
        /* ended before this first use: placed already (first-use order) */
        for (; e < nr && ends[e].last < ml->first_use && rc == 0; e++) {
            const bir_mloc_t *d = reqs[ends[e].i].ml;
            rc = fit_runs_set(&fr, (int)(d->addr / SBUF_ALIGN),
                              (int)((d->addr + d->bytes + SBUF_ALIGN - 1) / SBUF_ALIGN), false);
        }
        if (rc) {
            rc = tpb_errf(err, "out of memory in the allocator");
            break;
        }
        int need = (int)((ml->bytes + SBUF_ALIGN - 1) / SBUF_ALIGN);
        uint64_t a = (uint64_t)fit_runs_first(&fr, need) * SBUF_ALIGN;
        if (a + ml->bytes > cap) {
            int np = 0;
            for (int j = 0; j < i; j++)
                if (reqs[j].ml->last_use >= ml->first_use)
                    placed[np++] = reqs[j].ml;
            *fail_op = ml->first_use;
            rc = place_error(k, &reqs[i], placed, np, false, a, cap, err);
            break;
        }
        ml->addr = a;
        if (fit_runs_set(&fr, (int)(a / SBUF_ALIGN), (int)(a / SBUF_ALIGN) + need, true)) {
            rc = tpb_errf(err, "out of memory in the allocator");
            break;
        }
        if (a + ml->bytes > *peak)
            *peak = a + ml->bytes;
    }
    fit_runs_free(&fr);
    free(ends);
    return rc;
}

/* The tiles of one space at the addresses the kernel fixed ("addr"):
 * never moved, possibly overlapping each other (the kernel's choice; the
 * scheduler orders their accesses by address like any reused space). */
typedef struct {
    bir_mloc_t **ml;   /* [n], by address */
    int n;
    uint64_t peak;     /* the highest end among them */
} fixed_t;

static int cmp_ml_addr(const void *x, const void *y)
{
    const bir_mloc_t *a = *(bir_mloc_t *const *)x, *b = *(bir_mloc_t *const *)y;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    return (a->tensor > b->tensor) - (a->tensor < b->tensor);
}

/* One first-fit pass over reqs (first-use order) with their current live
 * ranges, around the fixed tiles fx. */
static int place_pass(const tir_kernel_t *k, req_t *reqs, int nr, const fixed_t *fx,
                      bir_mloc_t **placed, bir_mloc_t **byaddr, bool psum, uint64_t cap,
                      uint64_t *peak, int *fail_op, tpb_err_t *err)
{
    if (!fx->n && fit_applies(reqs, nr, psum, cap))
        return place_fit(k, reqs, nr, placed, cap, peak, fail_op, err);
    /* the fixed tiles are placed before any request: live ones are in the
     * way of every request (they drop out as the others do) */
    int np = fx->n;
    int rc = 0;
    *peak = fx->peak;
    if (np) {   /* fx->ml is NULL without fixed tiles (memcpy's arguments must not be) */
        memcpy(placed, fx->ml, (size_t)np * sizeof *placed);
        memcpy(byaddr, fx->ml, (size_t)np * sizeof *byaddr);   /* sorted by address */
    }
    for (int i = 0; i < nr; i++) {
        /* requests come in first-use order: a placed tile whose live range
         * ended before this one starts can never overlap a later one */
        int keep = 0;
        for (int j = 0; j < np; j++)
            if (placed[j]->last_use >= reqs[i].ml->first_use)
                placed[keep++] = placed[j];
        keep = 0;
        for (int j = 0; j < np; j++)
            if (byaddr[j]->last_use >= reqs[i].ml->first_use)
                byaddr[keep++] = byaddr[j];
        np = keep;
        uint64_t a = first_fit(&reqs[i], byaddr, np, psum ? PSUM_ALIGN : SBUF_ALIGN, psum);
        if (a + reqs[i].ml->bytes > cap) {
            *fail_op = reqs[i].ml->first_use;
            rc = place_error(k, &reqs[i], placed, np, psum, a, cap, err);
            break;
        }
        reqs[i].ml->addr = a;
        insert_by_addr(byaddr, np, reqs[i].ml);
        placed[np++] = reqs[i].ml;
        if (a + reqs[i].ml->bytes > *peak)
            *peak = a + reqs[i].ml->bytes;
    }
    return rc;
}

static int place_space(const tir_kernel_t *k, const tpb_target_t *t, bir_module_t *m,
                       const unsigned char *cand, unsigned space, unsigned max, uint64_t *peak,
                       unsigned *used, tpb_err_t *err)
{
    bool psum = space == ISA_SPACE_PSUM;
    uint64_t cap = psum ? t->psum_partition_bytes : t->sbuf_partition_bytes;
    /* the requests, counted first: sized to the tiles of this space, not to
     * every tensor and op (10^5 ops with a few tiles would clear megabytes) */
    int n = psum ? 0 : m->nscratch, nfix = 0;
    for (int i = 0; i < m->nmlocs; i++) {
        bool here = m->mlocs[i].space == space && m->mlocs[i].first_use >= 0;
        n += here;
        nfix += here && k->tensors[i].fixed1;
    }
    size_t n1 = (size_t)(n > 0 ? n : 1);
    req_t *reqs = req_array(m->spare, n1, sizeof *reqs);
    /* placed and byaddr: filled from the front; the free-run path
     * (place_fit) reads neither unless placement fails */
    bir_mloc_t **placed = malloc(n1 * sizeof *placed);
    bir_mloc_t **byaddr = malloc(n1 * sizeof *byaddr);
    fixed_t fx = {nfix ? malloc((size_t)nfix * sizeof *fx.ml) : NULL, 0, 0};
    rot_t rot;
    memset(&rot, 0, sizeof rot);
    int rc = -1;
    if (!reqs || !placed || !byaddr || (nfix && !fx.ml)) {
        rc = tpb_errf(err, "out of memory in the allocator");
        goto out;
    }
    int nr = 0;
    for (int i = 0; i < m->nmlocs; i++) {
        bir_mloc_t *ml = &m->mlocs[i];
        if (ml->space != space || ml->first_use < 0)
            continue;
        if (k->tensors[i].fixed1) {   /* checked against the memory by enc_tile_place */
            ml->addr = k->tensors[i].fixed1 - 1;
            ml->rot_buf = ml->rot_nbuf = 0;
            fx.ml[fx.n++] = ml;
            fx.peak = ml->addr + ml->bytes > fx.peak ? ml->addr + ml->bytes : fx.peak;
        } else {
            reqs[nr++] = (req_t){ml, k->tensors[i].name, k->tensors[i].path};
        }
    }
    if (fx.n > 1)
        qsort(fx.ml, (size_t)fx.n, sizeof *fx.ml, cmp_ml_addr);
    for (int i = 0; !psum && m->nscratch && i < m->nops; i++)
        if (m->op_scratch[i].bytes)
            reqs[nr++] = (req_t){&m->op_scratch[i], k->ops[i].kind == TIR_DROPOUT
                                     ? "(dropout random numbers)" : "(multi-step reduce partial)",
                                 k->ops[i].path};
    /* tiles are mostly declared in the order they are first used: sort
     * only when they are not (the order is total, so the result is the
     * same either way) */
    enc_sort_unless_sorted(reqs, (size_t)nr, sizeof *reqs, cmp_first_use, first_use_key);
    if (rot_init(&rot, k, cand, reqs, nr, max, m->spare)) {
        rc = tpb_errf(err, "out of memory in the allocator");
        goto out;
    }
    for (;;) {
        int nw = rot_apply(&rot, reqs, nr);
        int fail_op = -1;
        rc = place_pass(k, rot.work, nw, &fx, placed, byaddr, psum, cap, peak, &fail_op, err);
        if (rc && !psum)
            m->sbuf_fail_op = fail_op;   /* where spilling starts (encoder/spill.c) */
        if (rc == 0 || !rot_shrink(&rot))
            break;
    }
    *used = rot_max(&rot);
    if (rc == 0 && rot_record(&rot))   /* also spreads a modulo group's instances */
        rc = tpb_errf(err, "out of memory in the allocator");
    for (int j = 0; j < nr; j++)
        reqs[j].ml->last_use = rot.orig[j];
out:
    free(fx.ml);
    rot_free(&rot);
    tpb_spare_put(m->spare, reqs, n1 * sizeof *reqs);
    free(placed);
    free(byaddr);
    return rc;
}

int alloc_kernel(const tir_kernel_t *k, const tpb_target_t *t, const enc_hbm_layout_t *hbm,
                 bir_module_t *m, enc_stats_t *st, tpb_err_t *err)
{
    return alloc_kernel_buffers(k, t, hbm, m, st, 0, err);
}

int alloc_kernel_buffers(const tir_kernel_t *k, const tpb_target_t *t,
                         const enc_hbm_layout_t *hbm, bir_module_t *m, enc_stats_t *st,
                         int buffers, tpb_err_t *err)
{
    return alloc_kernel_loops(k, t, hbm, m, st, buffers, NULL, err);
}

int alloc_kernel_loops(const tir_kernel_t *k, const tpb_target_t *t, const enc_hbm_layout_t *hbm,
                       bir_module_t *m, enc_stats_t *st, int buffers, const unsigned char *cand,
                       tpb_err_t *err)
{
    return alloc_kernel_live(k, t, hbm, m, st, buffers, cand, NULL, err);
}

int alloc_kernel_live(const tir_kernel_t *k, const tpb_target_t *t, const enc_hbm_layout_t *hbm,
                      bir_module_t *m, enc_stats_t *st, int buffers, const unsigned char *cand,
                      const enc_live_t *live, tpb_err_t *err)
{
    tpb_array_free(m->op_scratch, (size_t)(m->nops > 0 ? m->nops : 0) * sizeof *m->op_scratch);
    m->op_scratch = NULL;   /* (an earlier call's) */
    m->nops = k->nops;
    m->nscratch = 0;
    /* the tensors first: the same pass finds the shared identity's tile
     * (enc_ident_tile) that the liveness pass needs, instead of a pass of
     * its own over 10^5 tiles; a bad tile's error still comes after the
     * liveness pass's (the order the two passes had) */
    int bad = -1;
    m->ident_tile = -1;
    for (int i = 0; i < k->ntensors; i++) {
        const tir_tensor_t *tt = &k->tensors[i];
        bir_mloc_t *ml = &m->mlocs[i];
        if (in_hbm(tt)) {
            ml->space = ISA_SPACE_HBM;
            ml->addr = hbm && i < hbm->ntensors ? hbm->addr[i] : 0;
            ml->bytes = enc_tensor_bytes(tt);
            ml->partitions = 1;
            continue;
        }
        ml->space = tt->kind == TIR_T_SBUF ? ISA_SPACE_SBUF : ISA_SPACE_PSUM;
        if (m->ident_tile < 0 && enc_is_ident_tile(tt))
            m->ident_tile = i;
        if (tt->ndim < 1 || tt->shape[0] < 1 || tt->shape[0] > (int64_t)t->partitions) {
            if (bad < 0)
                bad = i;
            continue;
        }
        ml->partitions = (unsigned)tt->shape[0];
        ml->bytes = enc_tensor_bytes(tt) / (uint64_t)tt->shape[0];
    }
    if (alloc_liveness(k, t, m, live))
        return tpb_errf(err, "out of memory in the allocator");
    if (bad >= 0) {
        const tir_tensor_t *tt = &k->tensors[bad];
        return tpb_errf(err, "tile '%s' (%s): partition dim %lld must be 1..%u", tt->name,
                        tt->path, tt->ndim >= 1 ? (long long)tt->shape[0] : 0LL,
                        t->partitions);
    }
    uint64_t sp = 0, pp = 0;
    unsigned smax = t->sbuf_max_buffers, pmax = t->psum_max_buffers, sb = 1, pb = 1;
    if (buffers > 0) {
        smax = smax < (unsigned)buffers ? smax : (unsigned)buffers;
        pmax = pmax < (unsigned)buffers ? pmax : (unsigned)buffers;
    }
    if (place_space(k, t, m, cand, ISA_SPACE_SBUF, smax, &sp, &sb, err) ||
        place_space(k, t, m, cand, ISA_SPACE_PSUM, pmax, &pp, &pb, err))
        return -1;
    if (st) {
        st->sbuf_buffers = sb;
        st->psum_buffers = pb;
        st->sbuf_peak = sp;
        st->psum_peak = pp;
        st->hbm_bytes = hbm ? hbm->total : 0;
    }
    return 0;
}
