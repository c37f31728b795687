/* reload.c - SBUF tiles larger than a partition: reload from HBM at each use.
 *
 * A tile whose bytes per partition exceed the SBUF partition size cannot be
 * placed.  When it is a read-only copy of HBM data it does not need to be:
 * the compiler rematerialises it (docs/compiler.md, "Oversize tiles").  The
 * rewrite is exact and is made only when all of these hold:
 *
 *   - every op that writes the tile is a plain copy from an input or
 *     constant HBM tensor that no op of the kernel writes: a direct `load`,
 *     or a `dma_copy` (what Python's nl.load emits) that does nothing a
 *     second run would do differently (plain_copy);
 *   - the loads write disjoint parts of the tile;
 *   - every op that reads the tile reads exactly the part one earlier load
 *     wrote (the same access pattern).
 *
 * Then the loads are dropped and every read gets its own new tile holding
 * just that part, filled by a copy of the matching load placed right before
 * the reading op.  Each new tile is live from its load to its use, so the
 * rotating buffers of alloc.c let the next reload overlap the current use.
 * The values read are identical (same HBM bytes, same load); the cost is
 * one load per use instead of one per part.  Otherwise the tile is refused
 * with the declaration error and the first condition that failed. */
#include "builder.h"
#include "backend.h"
#include "strutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t offset;
    int op;
} rl_load_t;

typedef struct {
    const tir_kernel_t *k;
    rl_load_t *loads;      /* the tile's loads by offset */
    const unsigned char *written;   /* per tensor: some op writes it */
    size_t nloads;
    int t;                 /* the oversize tile */
    uint64_t cap;          /* SBUF bytes per partition */
    char why[300];
} rl_ctx_t;

/* Bytes per partition of a tile AP (dim 0 = partitions). */
static uint64_t part_bytes(const tir_kernel_t *k, const tir_ap_t *a)
{
    uint64_t n = isa_dtype_size(k->tensors[a->tensor].dtype);
    for (int d = 1; d < a->ndim; d++)
        n *= (uint64_t)a->count[d];
    return n;
}

/* written[s]: some op writes tensor s */
static unsigned char *written_tensors(const tir_kernel_t *k)
{
    unsigned char *w = calloc((size_t)k->ntensors + 1, 1);
    for (int i = 0; w && i < k->nops; i++) {
        if (k->ops[i].dst->tensor >= 0)
            w[k->ops[i].dst->tensor] = 1;
        if (k->ops[i].dst2->tensor >= 0)
            w[k->ops[i].dst2->tensor] = 1;
    }
    return w;
}

static int cmp_ld(const void *a, const void *b)
{
    const rl_load_t *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The load of the tile with the same access pattern as `ap`, before op
 * `before`, or -1 (loads are disjoint, so at most one has that offset). */
static int find_load(const rl_ctx_t *c, const tir_ap_t *ap, int before)
{
    size_t lo = 0, hi = c->nloads;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->loads[mid].offset < ap->offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == c->nloads || c->loads[lo].offset != ap->offset)
        return -1;
    int j = c->loads[lo].op;
    return j < before && tir_ap_equal(c->k->ops[j].dst, ap) ? j : -1;
}

#define RL_SLOTS 8

/* A load or dma_copy that moves data only: direct on both sides, no
 * second output, no register offset (the register may hold another value
 * at the reload), no accumulate into its destination, no scale, no remote
 * core and no semaphore it signals.  Run again later on the same HBM
 * bytes, it writes the same values (the source's kind is checked apart). */
static bool plain_copy(const tir_op_t *op)
{
    return (op->kind == TIR_LOAD || op->kind == TIR_DMA_COPY) && op->nsrc == 1 &&
           op->index->tensor < 0 && op->dst2->tensor < 0 && op->rare->src_reg < 0 &&
           op->rare->dst_reg < 0 && !(op->flags & TIR_F_RMW_ADD) && !op->rare->dma_scaled &&
           op->rare->remote_core < 0 && op->rare->sync_core < 0;
}

/* Check the conditions; fill slot_load[i * RL_SLOTS + a] for each read AP
 * a of op i over the tile: the index of the load it reads from. */
static bool reloadable(rl_ctx_t *c, int *slot_load)
{
    const tir_kernel_t *k = c->k;
    int t = c->t;
    uint64_t nbits = enc_tensor_elems(&k->tensors[t]);
    uint8_t *bits = calloc((size_t)(nbits / 8 + 1), 1);
    if (!bits) {
        snprintf(c->why, sizeof c->why, "out of memory");
        return false;
    }
    c->loads = malloc(sizeof *c->loads * (size_t)(k->nops + 1));
    if (!c->loads) {
        free(bits);
        snprintf(c->why, sizeof c->why, "out of memory");
        return false;
    }
    c->nloads = 0;
    for (int i = 0; i < k->nops; i++)
        if (k->ops[i].dst->tensor == t && plain_copy(&k->ops[i]))
            c->loads[c->nloads++] = (rl_load_t){ k->ops[i].dst->offset, i };
    qsort(c->loads, c->nloads, sizeof *c->loads, cmp_ld);
    bool ok = true;
    for (int i = 0; i < k->nops && ok; i++) {
        tir_op_t *op = &k->ops[i];
        if (op->dst->tensor == t || op->dst2->tensor == t) {
            int s = op->src[0]->tensor;
            tir_tensor_kind_t sk = s >= 0 ? k->tensors[s].kind : TIR_T_SBUF;
            if (!plain_copy(op))
                snprintf(c->why, sizeof c->why,
                         "%s (%s) writes it (only plain loads and dma_copy can be reloaded)",
                         op->path, tir_op_name(op->kind));
            else if ((sk != TIR_T_INPUT && sk != TIR_T_CONSTANT) || c->written[s])
                snprintf(c->why, sizeof c->why,
                         "%s (%s) reads '%s', which is not a read-only HBM tensor", op->path,
                         tir_op_name(op->kind), s >= 0 ? k->tensors[s].name : "?");
            else if (op->dst->view || op->src[0]->view)
                snprintf(c->why, sizeof c->why, "%s (%s) writes it through a dtype view",
                         op->path, tir_op_name(op->kind));
            else if (part_bytes(k, op->dst) > c->cap)
                snprintf(c->why, sizeof c->why,
                         "%s (%s) alone writes more than a partition holds", op->path,
                         tir_op_name(op->kind));
            else if (!tir_ap_mark_bits(op->dst, bits, nbits, true))
                snprintf(c->why, sizeof c->why, "%s (%s) writes a part already loaded",
                         op->path, tir_op_name(op->kind));
            else
                continue;
            ok = false;
            break;
        }
        const tir_ap_t *aps[8];
        int n = tir_op_read_aps(op, aps);
        for (int a = 0; a < n && ok; a++) {
            if (aps[a]->tensor != t)
                continue;
            int found = find_load(c, aps[a], i);
            if (found < 0) {
                snprintf(c->why, sizeof c->why,
                         "%s (%s) reads a part of it that no single earlier load wrote",
                         op->path, tir_op_name(op->kind));
                ok = false;
            }
            slot_load[(size_t)i * RL_SLOTS + (size_t)a] = found;
        }
    }
    free(bits);
    free(c->loads);
    c->loads = NULL;
    return ok;
}

/* New tile holding one part: shape = the part's counts. */
static int part_tile(tir_kernel_t *k, int t, int n, const tir_op_t *use, tir_ap_t *ap)
{
    tir_tensor_t nt;
    memset(&nt, 0, sizeof nt);
    const tir_tensor_t *ot = &k->tensors[t];
    char name[TIR_NAME_LEN];   /* tir_add_tensor copies it */
    if ((size_t)snprintf(name, sizeof name, "%.40s.r%d", ot->name, n) >= sizeof name)
        return -1;
    nt.name = name;
    nt.kind = TIR_T_SBUF;
    nt.dtype = ot->dtype;
    nt.ndim = ap->ndim;
    nt.shared_with = -1;
    nt.path = use->path;   /* one rotation group per use site (copied, cut as before) */
    int64_t step = 1;
    for (int d = ap->ndim - 1; d >= 0; d--) {
        nt.shape[d] = ap->count[d];
        ap->step[d] = step;
        step *= ap->count[d];
    }
    ap->offset = 0;
    int id = tir_add_tensor(k, &nt);
    ap->tensor = id;
    return id;
}

/* One pass over the ops: drop the loads of the reloaded tiles (reload[t])
 * and put a load into a new part tile before every read of one. */
static int rewrite(tir_kernel_t *k, const unsigned char *reload, const int *slot_load,
                   tpb_err_t *err)
{
    size_t nuse = 0;
    for (size_t i = 0; i < (size_t)k->nops * RL_SLOTS; i++)
        nuse += slot_load[i] >= 0;
    int cap = (int)((size_t)k->nops + nuse + 1);   /* nuse < nops * RL_SLOTS */
    tir_op_t *ops = tir_ops_new(cap);
    int *newpos = malloc(sizeof *newpos * ((size_t)k->nops + 1));
    int *at = malloc(sizeof *at * ((size_t)k->nops + 1));   /* each op's own new index */
    if (!ops || !newpos || !at) {
        tir_array_free(ops, cap, sizeof *ops);
        free(newpos);
        free(at);
        return tpb_errf(err, "out of memory reloading oversize tiles");
    }
    int n = 0, parts = 0;
    for (int i = 0; i < k->nops; i++) {
        newpos[i] = n;
        tir_op_t op = k->ops[i];
        at[i] = -1;
        if (op.dst->tensor >= 0 && reload[op.dst->tensor])
            continue;   /* a load (plain_copy), reloaded at each use, which a dep on it
                           is met by: dropped */
        const tir_ap_t **aps[RL_SLOTS];
        int na = tir_op_read_slots(&op, aps);
        for (int a = 0; a < na; a++) {
            int j = slot_load[(size_t)i * RL_SLOTS + (size_t)a];
            if (j < 0)
                continue;
            tir_op_t ld = k->ops[j];
            int t = (*aps[a])->tensor;
            tir_ap_t part = *ld.dst;
            if (part_tile(k, t, parts++, &op, &part) < 0) {
                tir_array_free(ops, cap, sizeof *ops);
                free(newpos);
                free(at);
                return tpb_errf(err, "%s: cannot name a reload tile of '%s'", op.path,
                                k->tensors[t].name);
            }
            if (!(ld.dst = tir_ap_intern(k, &part))) {
                tir_array_free(ops, cap, sizeof *ops);
                free(newpos);
                free(at);
                return tpb_errf(err, "out of memory reloading oversize tiles");
            }
            *aps[a] = ld.dst;
            ops[n++] = ld;
        }
        at[i] = n;
        ops[n++] = op;
    }
    newpos[k->nops] = n;
    tir_ops_replace(k, ops, n, cap, newpos, at);   /* loop records and deps follow */
    free(newpos);
    free(at);
    return 0;
}

int enc_reload_oversize(tir_kernel_t *k, const tpb_target_t *target, tpb_err_t *err)
{
    int nt = k->ntensors;   /* tiles added here fit */
    unsigned char *w = written_tensors(k), *reload = calloc((size_t)nt + 1, 1);
    int *slot_load = malloc(sizeof *slot_load * ((size_t)k->nops * RL_SLOTS + 1));
    if (!w || !reload || !slot_load) {
        free(w);
        free(reload);
        free(slot_load);
        return tpb_errf(err, "out of memory");
    }
    for (size_t i = 0; i < (size_t)k->nops * RL_SLOTS; i++)
        slot_load[i] = -1;
    int rc = 0;
    bool any = false;
    for (int t = 0; t < nt && !rc; t++) {
        const tir_tensor_t *tt = &k->tensors[t];
        if (tt->kind != TIR_T_SBUF)
            continue;
        uint64_t bytes = enc_tensor_bytes(tt) / (uint64_t)tt->shape[0];
        if (bytes <= target->sbuf_partition_bytes)
            continue;
        rl_ctx_t c = { .k = k, .t = t, .cap = target->sbuf_partition_bytes, .written = w };
        if (reloadable(&c, slot_load)) {
            reload[t] = 1;
            any = true;
            continue;
        }
        char base[TIR_NAME_LEN];
        su_copy(base, sizeof base, tt->name);
        char *hash = strchr(base, '#');
        if (hash)
            *hash = 0;
        rc = tpb_errf(err,
                      "%s%ssbuf tile '%s': field 'shape': %llu bytes per partition exceed "
                      "the SBUF partition size (%llu bytes), and it cannot be reloaded "
                      "from HBM: %s",
                      tt->path, tt->path[0] ? ": " : "", base, (unsigned long long)bytes,
                      (unsigned long long)target->sbuf_partition_bytes, c.why);
    }
    if (!rc && any)
        rc = rewrite(k, reload, slot_load, err);
    free(w);
    free(reload);
    free(slot_load);
    return rc ? -1 : 0;
}
