/* lnc_collective.c - nki.collectives across the cores of one module.
 *
 * Every collective becomes, on each participating core c of its group G
 * (ranks = core ids, G sorted, i = c's index in G, n = |G|), in program
 * order (docs/multicore.md "Collectives"):
 *
 *   ready    COLL_SYNC signal to every peer p that pulls from c (GpSimd):
 *            once c's src is written, p's slot "ready from c" += 1
 *   pulls    per source s: COLL_SYNC wait (SP) slot "ready from s" >= the
 *            count so far, then DMA_COPY piece <- src of rank s (a direct
 *            read of s's SBUF tile, or of its HBM slice) whose last
 *            descriptor increments s's "done" slot when the transfer
 *            completes (the descriptor's remote semaphore)
 *   reduce   TENSOR_TENSOR dst = dst op piece_k   (all_reduce, reduce_scatter)
 *   release  COLL_SYNC wait (GpSimd) "done" >= every pull of c's src so far;
 *            it "writes" src, so nothing overwrites (or reallocates) src
 *            before every peer has read it
 *
 * Slot counts stay exact across collectives because each core's signals and
 * releases run in program order on one engine (GpSimd): c signals "ready"
 * for the next collective only after its release of this one.
 * Every core reduces in the same rank order, so all members get bitwise
 * equal results. */
#include "collective.h"

#include <stdlib.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "target.h"

bool enc_is_collective(tir_opkind_t k)
{
    return k >= TIR_ALL_REDUCE && k <= TIR_RANK_ID;
}

static bool is_tile(const tir_kernel_t *k, const tir_ap_t *a)
{
    tir_tensor_kind_t t = k->tensors[a->tensor].kind;
    return t == TIR_T_SBUF || t == TIR_T_PSUM;
}

static int cfail(tpb_err_t *err, const tir_op_t *op, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int cfail(tpb_err_t *err, const tir_op_t *op, const char *field, const char *fmt, ...)
{
    char tmp[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return tpb_errf(err, "%s (%s): field '%s': %s", op->path, tir_op_name(op->kind), field, tmp);
}

static bool same_shape(const tir_ap_t *a, const tir_ap_t *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->count[d] != b->count[d])
            return false;
    return true;
}

int enc_validate_collective(const tir_kernel_t *k, const tir_op_t *op, tpb_err_t *err)
{
    const tir_ap_t *d = op->dst, *s = op->src[0];
    if (k->num_cores < 2)
        return tpb_errf(err, "%s (%s): collectives run across the cores of a multi-core kernel "
                             "(\"grid\": [n] with n >= 2, one program per core); this kernel "
                             "runs on one core",
                        op->path, tir_op_name(op->kind));
    if (d->tensor < 0 || d->tensor >= k->ntensors)
        return cfail(err, op, op->kind == TIR_RANK_ID ? "dst" : "dsts", "operand missing");
    if (op->kind == TIR_RANK_ID) {
        if (k->tensors[d->tensor].kind != TIR_T_SBUF)
            return cfail(err, op, "dst", "'%s' must be an SBUF tile", k->tensors[d->tensor].name);
        return 0;
    }
    if (s->tensor < 0 || s->tensor >= k->ntensors)
        return cfail(err, op, "srcs", "operand missing");
    const tir_tensor_t *dt = &k->tensors[d->tensor], *st = &k->tensors[s->tensor];
    if (d->tensor == s->tensor)
        return cfail(err, op, "dsts", "'%s' is also the source; a collective needs a separate "
                     "destination", dt->name);
    if (dt->kind == TIR_T_PSUM || st->kind == TIR_T_PSUM)
        return cfail(err, op, dt->kind == TIR_T_PSUM ? "dsts" : "srcs",
                     "'%s' is in PSUM; collectives use SBUF or HBM",
                     dt->kind == TIR_T_PSUM ? dt->name : st->name);
    if (dt->kind == TIR_T_CONSTANT)
        return cfail(err, op, "dsts", "constant '%s' cannot be written", dt->name);
    bool dsb = is_tile(k, d), ssb = is_tile(k, s);
    if (dsb != ssb)
        return cfail(err, op, "dsts", "mixes memory spaces (%s); all tensors must be on HBM or "
                     "all on SBUF", dsb ? "dst SBUF, src HBM" : "dst HBM, src SBUF");
    bool reduce = op->kind == TIR_ALL_REDUCE || op->kind == TIR_REDUCE_SCATTER;
    if (reduce && !dsb && op->op0 != ISA_ALU_ADD)
        return cfail(err, op, "operator", "%s on HBM tensors supports add only in tpbsim (the "
                     "pulls accumulate with DMA add); reduce SBUF tiles for maximum/minimum",
                     tir_op_name(op->kind));
    /* collective_permute takes SBUF tiles too: NKI's ring permute
     * (collective_permute_implicit) moves SBUF, its explicit one only HBM
     * (the Python front-end keeps that rule) */
    if (op->kind == TIR_ALL_TO_ALL && dsb)
        return cfail(err, op, "dsts", "%s: tensors must reside on HBM",
                     tir_op_name(op->kind));
    if (dt->dtype != st->dtype)
        return cfail(err, op, "dsts", "dtype differs from srcs ('%s')", st->name);
    int maxdim = op->kind == TIR_ALL_GATHER && dsb ? 1 : 0;
    if (op->rare->coll_dim > maxdim)
        return cfail(err, op, "collective_dim", "%lld: only 0..%lld is supported here",
                     (long long)op->rare->coll_dim, (long long)maxdim);
    if (dsb && op->rare->coll_dim == 1 && (d->ndim != 2 || s->ndim != 2))
        return cfail(err, op, "srcs", "SBUF collectives along dim 1 take 2-D [P, F] tiles "
                     "(got %lld and %lld dims)", (long long)s->ndim, (long long)d->ndim);
    if ((op->kind == TIR_ALL_REDUCE || op->kind == TIR_COLLECTIVE_PERMUTE) && !same_shape(d, s))
        return cfail(err, op, "dsts", "shape differs from srcs");
    return 0;
}

/* ---- groups ---- */

/* Members of the group core `c` belongs to (sorted); 0 when none. */
static int group_of(const tir_op_t *op, int c, int *g)
{
    int n = 0;
    if (op->kind == TIR_COLLECTIVE_PERMUTE) {
        bool in[8] = {false};
        for (int t = 0; t < 8; t++)
            if (op->rare->perm_from[t] >= 0)
                in[t] = in[(int)op->rare->perm_from[t]] = true;
        if (!in[c])
            return 0;
        for (int r = 0; r < 8; r++)
            if (in[r])
                g[n++] = r;
        return n;
    }
    if (op->rare->rgroup[c] < 0)
        return 0;
    for (int r = 0; r < 8; r++)
        if (op->rare->rgroup[r] == op->rare->rgroup[c])
            g[n++] = r;
    return n;
}

static int check_groups(const tir_op_t *op, int ncores, tpb_err_t *err)
{
    int size = -1;
    for (int r = 0; r < 8; r++) {
        int g[8];
        int n = group_of(op, r, g);
        if (n && r >= ncores)
            return cfail(err, op, op->kind == TIR_COLLECTIVE_PERMUTE ? "source_target_pairs"
                                                                   : "replica_group",
                         "rank %lld is not a core of this kernel (it runs on %lld cores)",
                         (long long)r, (long long)ncores);
        if (n && size >= 0 && n != size && op->kind != TIR_COLLECTIVE_PERMUTE)
            return cfail(err, op, "replica_group", "groups differ in size (%lld and %lld); "
                         "tpbsim needs equal groups", (long long)size, (long long)n);
        if (n)
            size = n;
    }
    return 0;
}

static int max_group(const tir_op_t *op)
{
    int m = 0, g[8];
    for (int r = 0; r < 8; r++) {
        int n = group_of(op, r, g);
        m = n > m ? n : m;
    }
    return m;
}

int lnc_coll_ntemps(const tir_kernel_t *k0, const tir_op_t *op)
{
    if ((op->kind != TIR_ALL_REDUCE && op->kind != TIR_REDUCE_SCATTER) ||
        op->dst->tensor < 0 || !is_tile(k0, op->dst))
        return 0;   /* HBM: the pulls accumulate into dst */
    int n = max_group(op);
    return n > 1 ? n - 1 : 0;
}

/* DMA engine time per byte of contiguous runs of `run` bytes, relative:
 * 10^6 / efficiency (a run under 32 B costs what a 32 B run costs). */
static uint64_t run_cost(const tpb_target_t *t, uint64_t run)
{
    uint64_t e = tpb_dma_row_eff_permille(t, run);
    if (run && run < 32)
        e = e * run / 32;
    return 1000000ull / (e ? e : 1);
}

/* An SBUF all_reduce runs as a reduce-scatter then an all-gather along
 * the first free dim (each core reduces one piece of 1/n, then gathers the
 * others' pieces): every element is still reduced in rank order, by one
 * core.  Each core's DMA moves (2n-1)/n of the tensor in rows of 1/n
 * instead of n times the tensor in whole rows; the split is taken when that
 * costs less DMA engine time by the documented row efficiency (docs/
 * timing.md "DMA" rule 5).  Returns the dim, or -1 for the direct form
 * (every core pulls every source whole). */
static int ar_split_dim(const tir_kernel_t *k0, const tir_op_t *op)
{
    int n = max_group(op);
    const tir_ap_t *s = op->src[0];
    if (op->kind != TIR_ALL_REDUCE || op->dst->tensor < 0 || !is_tile(k0, op->dst) || n < 2 ||
        s->ndim < 2 || s->count[1] % n)
        return -1;
    const tpb_target_t *t = tpb_target_get(k0->target);
    if (!t)
        t = tpb_target_default();
    uint64_t row = isa_dtype_size(k0->tensors[s->tensor].dtype);
    for (int d = 1; d < s->ndim; d++)
        row *= (uint64_t)s->count[d];
    uint64_t direct = (uint64_t)n * n * run_cost(t, row);
    uint64_t split = (uint64_t)(2 * n - 1) * run_cost(t, row / (uint64_t)n);
    return split < direct ? 1 : -1;
}

/* Piece idx of n along dim d (count must divide). */
static tir_ap_t ap_piece(const tir_ap_t *a, int d, int n, int idx)
{
    tir_ap_t p = *a;
    p.count[d] = a->count[d] / n;
    p.offset += (int64_t)idx * p.count[d] * a->step[d];
    return p;
}

/* The C-order whole-tile access of a temp with the shape of `like`. */
static tir_ap_t whole(int tensor, const tir_ap_t *like)
{
    tir_ap_t a = *like;
    a.tensor = tensor;
    a.offset = 0;
    int64_t step = 1;
    for (int d = like->ndim - 1; d >= 0; d--) {
        a.step[d] = step;
        step *= like->count[d];
    }
    return a;
}

void lnc_coll_temp(const tir_kernel_t *k0, const tir_op_t *op, int j, int idx, tir_tensor_t *out,
                   char name[TIR_NAME_LEN], char path[TIR_PATH_LEN])
{
    const tir_ap_t *s = op->src[0];
    int sd = ar_split_dim(k0, op);
    tir_ap_t p = op->kind == TIR_REDUCE_SCATTER ? ap_piece(s, op->rare->coll_dim, max_group(op), 0)
               : sd >= 0 ? ap_piece(s, sd, max_group(op), 0)
                         : *s;
    memset(out, 0, sizeof *out);
    snprintf(name, TIR_NAME_LEN, "coll%d.recv%d", j, idx + 1);
    out->name = name;
    out->kind = TIR_T_SBUF;
    out->dtype = k0->tensors[s->tensor].dtype;
    out->ndim = p.ndim;
    for (int d = 0; d < p.ndim; d++)
        out->shape[d] = p.count[d];
    snprintf(path, TIR_PATH_LEN, "%.80s (recv)", op->path);
    out->path = path;
    out->shared_with = -1;
}

/* ---- expansion ---- */

typedef struct {
    const lnc_coll_in_t *in;
    const tir_op_t *op;
    tir_op_t *out;
    int n;
    int rounds;        /* ready signals per peer (2: all_reduce's gather round) */
    bool oom;          /* interning an operand failed */
} xp_t;

/* An operand of an expanded op: ap interned into the core kernel. */
static const tir_ap_t *opnd(xp_t *x, const tir_ap_t *ap)
{
    const tir_ap_t *r = tir_ap_intern(x->in->k, ap);
    x->oom |= !r;
    return r ? r : &tir_ap_none;
}

static tir_op_t *next(xp_t *x, tir_opkind_t kind, const char *what, int r)
{
    tir_op_t *o = &x->out[x->n++];
    tir_op_init(o, kind);
    char name[TIR_NAME_LEN];
    if (r >= 0)
        snprintf(name, sizeof name, "%.40s.%s%d", x->op->name, what, r);
    else
        snprintf(name, sizeof name, "%.40s.%s", x->op->name, what);
    o->name = tir_name(x->in->k, name);   /* the core kernel's copy */
    x->oom |= !o->name;
    if (!o->name)
        o->name = "";
    o->path = x->op->path;   /* interned by the kernel it came from */
    o->core = x->in->core;
    return o;
}

/* Collective slots (tir.h COLL_SYNC): slot 0 counts completed pulls of a
 * core's data by its peers; slot d (1..ncores-1) on core c counts "ready"
 * signals from core (c + d) mod ncores. */
#define SLOT_DONE 0
static int slot_ready(int on, int from, int ncores) { return (from - on + ncores) % ncores; }

/* The engine of a collective's signals and releases: one engine for all of
 * them, so one core's signals leave in program order (NKI's collectives
 * take no engine argument). */
#define SYNC_ENGINE ISA_ENG_POOL

/* o's rare fields := r, interned into the core's kernel */
static void put_rare(xp_t *x, tir_op_t *o, const tir_op_rare_t *r)
{
    const tir_op_rare_t *p = tir_rare_intern(x->in->k, r);
    x->oom |= !p;
    o->rare = p ? p : &tir_rare_default;
}

static void signal_ready(xp_t *x, int peer, const tir_ap_t *data)
{
    tir_op_t *o = next(x, TIR_COLL_SYNC, "ready", peer);
    o->engine = SYNC_ENGINE;
    tir_op_rare_t r = *o->rare;
    r.sync_core = peer;
    r.sync_sem = slot_ready(peer, x->in->core, x->in->ncores);
    put_rare(x, o, &r);
    o->src[0] = opnd(x, data);
    o->nsrc = 1;
}

static void wait_slot(xp_t *x, const char *what, int r, int engine, int slot, uint32_t value,
                      const tir_ap_t *guard)
{
    tir_op_t *o = next(x, TIR_COLL_SYNC, what, r);
    o->engine = (int8_t)engine;
    tir_op_rare_t w = *o->rare;
    w.sync_sem = slot;
    w.sync_val = value;
    put_rare(x, o, &w);
    if (guard)
        o->dst = opnd(x, guard);
}

/* dst <- `src` as rank r's program addresses it (r's SBUF when a tile);
 * from a peer: wait for its ready signal first, and tell it when the
 * transfer has read its data. */
static tir_op_t *pull(xp_t *x, const tir_ap_t *dst, const tir_ap_t *src, int r)
{
    const lnc_coll_in_t *in = x->in;
    if (r != in->core)
        wait_slot(x, "wait", r, ISA_ENG_SP, slot_ready(in->core, r, in->ncores),
                  ++in->sync->ready[r], NULL);
    tir_op_t *p = next(x, TIR_DMA_COPY, "pull", r);
    p->dst = opnd(x, dst);
    p->src[0] = opnd(x, src);
    p->nsrc = 1;
    p->engine = ISA_ENG_SP;
    /* setReplicaGroups (seed 002 §6): every DMA of a collective carries
     * the collective's replica groups (a permute has pairs, not groups) */
    tir_op_rare_t rare = tir_rare_default;
    rare.qos = x->op->rare->qos;
    memcpy(rare.rgroup, x->op->rare->rgroup, sizeof rare.rgroup);
    if (r != in->core) {
        if (is_tile(in->k, src))
            rare.remote_core = r;
        rare.sync_core = r;
        rare.sync_sem = SLOT_DONE;
    }
    put_rare(x, p, &rare);
    return p;
}

static int divisible(const tir_op_t *op, const tir_ap_t *a, int n, const char *field,
                     tpb_err_t *err)
{
    int d = op->rare->coll_dim;
    if (d >= a->ndim || a->count[d] % n)
        return cfail(err, op, field, "dim %lld is not divisible by the group size %lld",
                     (long long)d, (long long)n);
    return 0;
}

static int shapes(const tir_op_t *op, int n, tpb_err_t *err)
{
    const tir_ap_t *d = op->dst, *s = op->src[0];
    int cd = op->rare->coll_dim;
    tir_ap_t big = op->kind == TIR_ALL_GATHER ? *d : *s, small = op->kind == TIR_ALL_GATHER ? *s
                                                                                          : *d;
    if (op->kind == TIR_ALL_TO_ALL) {
        if (!same_shape(d, s))
            return cfail(err, op, "dsts", "shape differs from srcs");
        return divisible(op, s, n, "srcs", err);
    }
    if (divisible(op, &big, n, op->kind == TIR_ALL_GATHER ? "dsts" : "srcs", err))
        return -1;
    tir_ap_t piece = ap_piece(&big, cd, n, 0);
    if (!same_shape(&piece, &small))
        return cfail(err, op, "dsts", "shape must be srcs %s %d pieces along collective_dim",
                     op->kind == TIR_ALL_GATHER ? "times" : "divided into", n);
    return 0;
}

static void reduce_into(xp_t *x, const tir_ap_t *dst, int tmp, const tir_ap_t *like, int r)
{
    tir_op_t *t = next(x, TIR_TENSOR_TENSOR, "reduce", r);
    t->dst = opnd(x, dst);
    t->src[0] = opnd(x, dst);
    tir_ap_t w = whole(tmp, like);
    t->src[1] = opnd(x, &w);
    t->nsrc = 2;
    t->op0 = x->op->op0;
}

/* all_reduce as reduce-scatter + all-gather (ar_split_dim): piece i of
 * every rank's src -> dst piece i (reduced in rank order), a second ready
 * signal once it is reduced, then dst piece k <- rank k's dst piece k. */
static int all_reduce_split(xp_t *x, const int *g, int n, int i)
{
    const tir_op_t *op = x->op;
    const lnc_coll_in_t *in = x->in;
    int sd = ar_split_dim(in->k, op);
    tir_ap_t mine = ap_piece(op->dst, sd, n, i);
    for (int k = 0; k < n; k++) {
        tir_ap_t piece = ap_piece(in->rank_op[g[k]]->src[0], sd, n, i);
        tir_ap_t dst = k == 0 ? mine : whole(in->temps[k - 1], &piece);
        pull(x, &dst, &piece, g[k]);
    }
    tir_ap_t like = ap_piece(op->src[0], sd, n, i);
    for (int k = 1; k < n; k++)
        reduce_into(x, &mine, in->temps[k - 1], &like, g[k]);
    for (int k = 0; k < n; k++)
        if (g[k] != in->core)
            signal_ready(x, g[k], &mine);
    for (int k = 0; k < n; k++)
        if (k != i) {
            tir_ap_t dst = ap_piece(op->dst, sd, n, k);
            tir_ap_t src = ap_piece(in->rank_op[g[k]]->dst, sd, n, k);
            pull(x, &dst, &src, g[k]);
        }
    x->rounds = 2;
    return 0;
}

static int expand_kind(xp_t *x, const int *g, int n, int i, tpb_err_t *err)
{
    const tir_op_t *op = x->op;
    const lnc_coll_in_t *in = x->in;
    int cd = op->rare->coll_dim;
    switch (op->kind) {
    case TIR_ALL_REDUCE: case TIR_REDUCE_SCATTER:
        if (!is_tile(in->k, op->dst)) {   /* HBM, add: dst = src@G[0], then += each */
            for (int k = 0; k < n; k++) {
                const tir_ap_t *s = in->rank_op[g[k]]->src[0];
                tir_ap_t piece = op->kind == TIR_REDUCE_SCATTER ? ap_piece(s, cd, n, i) : *s;
                if (k) {   /* the LocalReduce (seed 001 s.5.1): dst op= piece on the DMA */
                    tir_op_t *p = pull(x, op->dst, &piece, g[k]);
                    p->flags |= TIR_F_RMW_ADD;
                    tir_op_rare_t lr = *p->rare;
                    lr.local_reduce = op->kind;
                    put_rare(x, p, &lr);
                    p->op0 = op->op0;
                } else
                    pull(x, op->dst, &piece, g[k]);
            }
            return 0;
        }
        if (ar_split_dim(in->k, op) >= 0)
            return all_reduce_split(x, g, n, i);
        for (int k = 0; k < n; k++) {   /* rank order: reduction k can start once pull k is in */
            const tir_ap_t *s = in->rank_op[g[k]]->src[0];
            tir_ap_t piece = op->kind == TIR_REDUCE_SCATTER ? ap_piece(s, cd, n, i) : *s;
            tir_ap_t dst = k == 0 ? *op->dst : whole(in->temps[k - 1], &piece);
            pull(x, &dst, &piece, g[k]);
        }
        for (int k = 1; k < n; k++) {
            tir_ap_t piece = op->kind == TIR_REDUCE_SCATTER ? ap_piece(op->src[0], cd, n, i)
                                                            : *op->src[0];
            reduce_into(x, op->dst, in->temps[k - 1], &piece, g[k]);
        }
        return 0;
    case TIR_ALL_GATHER:
        for (int k = 0; k < n; k++) {
            tir_ap_t dst = ap_piece(op->dst, cd, n, k);
            pull(x, &dst, in->rank_op[g[k]]->src[0], g[k]);
        }
        return 0;
    case TIR_ALL_TO_ALL:
        for (int k = 0; k < n; k++) {
            tir_ap_t dst = ap_piece(op->dst, cd, n, k);
            tir_ap_t src = ap_piece(in->rank_op[g[k]]->src[0], cd, n, i);
            pull(x, &dst, &src, g[k]);
        }
        return 0;
    case TIR_COLLECTIVE_PERMUTE: {
        int from = op->rare->perm_from[in->core];
        if (from >= 0)
            pull(x, op->dst, in->rank_op[from]->src[0], from);
        return 0;
    }
    default:
        return tpb_errf(err, "%s: not a collective", op->path);
    }
}

/* Every core must see the same collective: the group, pairs, dimension and
 * operator may not depend on pid (its operands may). */
static int check_agree(const lnc_coll_in_t *in, tpb_err_t *err)
{
    const tir_op_t *a = in->rank_op[in->core];
    for (int r = 0; r < in->ncores; r++) {
        const tir_op_t *b = in->rank_op[r];
        if (!b || b == a)
            continue;
        const char *f = memcmp(a->rare->rgroup, b->rare->rgroup, sizeof a->rare->rgroup) ? "replica_group"
                      : memcmp(a->rare->perm_from, b->rare->perm_from, sizeof a->rare->perm_from)
                          ? "source_target_pairs"
                      : a->rare->coll_dim != b->rare->coll_dim ? "collective_dim"
                      : a->op0 != b->op0 ? "operator" : NULL;
        if (f)
            return cfail(err, a, f, "differs between core %d and core %d (it may not depend on "
                         "pid: every member must agree on the collective)", in->core, r);
    }
    return 0;
}

int lnc_coll_expand(const lnc_coll_in_t *in, tir_op_t *out, tpb_err_t *err)
{
    const tir_op_t *op = in->rank_op[in->core];
    xp_t x = {in, op, out, 0, 1, false};
    if (op->kind == TIR_RANK_ID) {
        tir_op_t *m = next(&x, TIR_MEMSET, "rank", -1);
        m->dst = opnd(&x, op->dst);
        tir_op_rare_t r = *m->rare;
        r.value = in->core;
        put_rare(&x, m, &r);
        m->engine = op->engine;
        return x.oom ? tpb_errf(err, "out of memory (split)") : x.n;
    }
    if (check_agree(in, err) || check_groups(op, in->ncores, err))
        return -1;
    int g[8];
    int n = group_of(op, in->core, g), i = 0;
    if (!n)
        return 0;   /* not a member: the collective does nothing here */
    while (g[i] != in->core)
        i++;
    if (op->kind != TIR_ALL_REDUCE && op->kind != TIR_COLLECTIVE_PERMUTE && shapes(op, n, err))
        return -1;
    /* the peers that pull c's src */
    int pullers[8], np = 0;
    for (int k = 0; k < n; k++) {
        int p = g[k];
        if (p == in->core)
            continue;
        if (op->kind != TIR_COLLECTIVE_PERMUTE || op->rare->perm_from[p] == in->core)
            pullers[np++] = p;
    }
    for (int k = 0; k < np; k++)
        signal_ready(&x, pullers[k], op->src[0]);
    if (expand_kind(&x, g, n, i, err))
        return -1;
    if (np) {   /* every peer has read what it pulls from here (src, and dst's piece) */
        in->sync->done += (uint32_t)(np * x.rounds);
        wait_slot(&x, "release", -1, SYNC_ENGINE, SLOT_DONE, in->sync->done, op->src[0]);
        if (x.rounds > 1)
            wait_slot(&x, "release", -1, SYNC_ENGINE, SLOT_DONE, in->sync->done, op->dst);
    }
    return x.oom ? tpb_errf(err, "out of memory (split)") : x.n;
}

/* ---- one address per pulled tile ----
 * A pull names the peer's tile by this core's address of it (the
 * descriptor's core field picks the peer's SBUF), so every core must place
 * that tile at the same SBUF offset: the role sync_shared_allocations plays
 * for shared DRAM.  The per-core allocators see the same tiles with the same
 * liveness, so they agree; this re-runs each core's allocation and checks. */
int lnc_coll_pin_addresses(tir_kernel_t *core_k, int ncores, const tpb_target_t *t,
                           const enc_hbm_layout_t *hbm, tpb_err_t *err)
{
    int nt = core_k[0].ntensors, rc = 0;
    bool *pulled = calloc((size_t)nt + 1, sizeof *pulled);
    uint64_t *fix = calloc((size_t)nt + 1, sizeof *fix);   /* address + 1; 0: none yet */
    if (!pulled || !fix) {
        free(pulled);
        free(fix);
        return tpb_errf(err, "out of memory (collective addresses)");
    }
    bool any = false;
    for (int c = 0; c < ncores; c++)
        for (int o = 0; o < core_k[c].nops; o++) {
            const tir_op_t *op = &core_k[c].ops[o];
            int i = op->src[0]->tensor;
            if (op->rare->remote_core >= 0 && i >= 0 && i < nt && !core_k[c].tensors[i].fixed1)
                pulled[i] = any = true;
        }
    for (int c = 0; any && c < ncores && !rc; c++) {   /* the first core that places it */
        bir_module_t m;
        enc_stats_t st;
        memset(&st, 0, sizeof st);
        if (bir_module_init(&m, c, core_k[c].ntensors, err)) {
            rc = -1;
            break;
        }
        rc = alloc_kernel(&core_k[c], t, hbm, &m, &st, err);
        for (int i = 0; i < nt && !rc; i++)
            if (pulled[i] && !fix[i] && m.mlocs[i].first_use >= 0)
                fix[i] = m.mlocs[i].addr + 1;
        bir_module_free(&m);
    }
    for (int c = 0; c < ncores && !rc; c++)
        for (int i = 0; i < nt; i++)
            if (fix[i])
                core_k[c].tensors[i].fixed1 = fix[i];
    free(pulled);
    free(fix);
    return rc;
}

int lnc_coll_check_addresses(const tir_kernel_t *core_k, int ncores, const tpb_target_t *t,
                             const enc_hbm_layout_t *hbm, tpb_err_t *err)
{
    int nt = core_k[0].ntensors, rc = 0;
    bool *pulled = calloc((size_t)nt + 1, sizeof *pulled);
    uint64_t *addr = calloc((size_t)nt + 1, sizeof *addr);
    if (!pulled || !addr) {
        free(pulled);
        free(addr);
        return tpb_errf(err, "out of memory (collective addresses)");
    }
    bool any = false;
    for (int c = 0; c < ncores; c++)
        for (int o = 0; o < core_k[c].nops; o++) {
            const tir_op_t *op = &core_k[c].ops[o];
            if (op->rare->remote_core >= 0 && op->src[0]->tensor >= 0 && op->src[0]->tensor < nt)
                pulled[op->src[0]->tensor] = any = true;
        }
    for (int c = 0; any && c < ncores && !rc; c++) {
        bir_module_t m;
        enc_stats_t st;
        memset(&st, 0, sizeof st);
        if (bir_module_init(&m, c, core_k[c].ntensors, err))
            break;
        rc = alloc_kernel(&core_k[c], t, hbm, &m, &st, err);
        for (int i = 0; i < nt && !rc; i++) {
            if (!pulled[i])
                continue;
            if (c == 0)
                addr[i] = m.mlocs[i].addr;
            else if (m.mlocs[i].addr != addr[i])
                rc = tpb_errf(err, "collective: tile '%s' is at SBUF offset 0x%llx on core 0 but "
                                   "0x%llx on core %d; a direct pull needs one address on every "
                                   "core",
                              core_k[c].tensors[i].name, (unsigned long long)addr[i],
                              (unsigned long long)m.mlocs[i].addr, c);
        }
        bir_module_free(&m);
    }
    free(pulled);
    free(addr);
    return rc;
}
