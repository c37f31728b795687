/* sched_pix.c - the synchronise pass's memory index of producers
 * (sched_pix.h). */
#include "sched_pix.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

void pix_init(pindex_t *x) { memset(x, 0, sizeof *x); }

/* Forget the producers record r remembers. */
static void recent_clear(pix_recent_t *r)
{
    for (int k = 0; k < PIX_RECENT; k++)
        r->e[k].p = -1;
}

/* Semaphore sem's record of recent producers, made when absent; NULL:
 * out of memory. */
static pix_recent_t *recent_get(pindex_t *x, int sem)
{
    pix_recent_t *r = x->recent[sem];
    if (!r) {
        r = malloc(sizeof *r);
        if (!r)
            return NULL;
        recent_clear(r);
        r->next = r->used = 0;
        r->misses = r->rest = r->backoff = 0;
        r->hits_seen = x->recent_hits;
        x->recent[sem] = r;
    }
    return r;
}

static size_t slab_bytes(int blocks) { return (size_t)blocks * PIX_SLAB * sizeof(int); }

void pix_free(pindex_t *x)
{
    for (int b = 0; b < x->nb && x->nheap; b++) {   /* none: no walk over the buckets */
        pbucket_t *bk = &x->buckets[b];
        for (int k = 0; k < bk->nl; k++)
            if (pix_lists(bk)[k].cap > PIX_SLAB)
                free(pix_lists(bk)[k].u.heap);
        if (bk->capl)
            free(bk->u.heap);
    }
    for (int k = 0; k < x->nslabs; k++)
        sched_array_free(x->pool, x->slabs[k].v, slab_bytes(x->slabs[k].blocks));
    free(x->slabs);
    sched_array_free(x->pool, x->buckets, x->bucket_bytes);
    sched_array_free(x->pool, x->slots, x->cap * sizeof *x->slots);
    for (int s = 0; s < BIR_MAX_SEMS; s++)
        free(x->recent[s]);
    pix_init(x);
}

void pix_reserve(pindex_t *x, size_t lists)
{
    x->hint = lists < PIX_HINT_MAX ? lists : PIX_HINT_MAX;
}

/* The hash table, buckets and slab that table_room, buckets_room and
 * slab_take ask for after their first small ones (hint `lists`). */
size_t pix_pool_bytes(size_t lists)
{
    size_t hint = lists < PIX_HINT_MAX ? lists : PIX_HINT_MAX, table = 2048;
    while (table < 2 * hint)
        table *= 2;
    size_t buckets = hint > 512 ? hint : 512, blocks = hint > PIX_SLAB_BLOCKS ? hint : PIX_SLAB_BLOCKS;
    return table * sizeof(pix_slot_t) + buckets * sizeof(pbucket_t) + slab_bytes((int)blocks) + 3 * 64;
}

/* Room in the hash table for one more key; false: out of memory.  The
 * first table is small (most kernels file a few hundred lists); the one
 * after it is sized for the hint at once, so a kernel whose accesses each
 * open new chunks (compile-live) rehashes once, not at every doubling.
 * A large table is a fresh mapping, zero already (tpb_array_zalloc): only
 * the pages keys land in are touched, none by clearing. */
static bool table_room(pindex_t *x)
{
    if (2 * (x->n + 1) <= x->cap)
        return true;
    size_t nc = x->cap ? 2 * x->cap : 1024;
    while (x->cap && nc < 2 * x->hint)
        nc *= 2;
    pix_slot_t *ns = sched_pool_take_zero(x->pool, nc * sizeof *ns);
    if (!ns)
        ns = tpb_array_zalloc(nc * sizeof *ns);
    if (!ns)
        return false;
    for (size_t i = 0; i < x->cap; i++)
        if (x->slots[i].key) {
            size_t j = pix_hash(x->slots[i].key, nc);
            while (ns[j].key)
                j = (j + 1) & (nc - 1);
            ns[j] = x->slots[i];
        }
    sched_array_free(x->pool, x->slots, x->cap * sizeof *x->slots);
    x->slots = ns, x->cap = nc;
    x->rehashes++;
    return true;
}

/* Room for one more bucket (the same first-small-then-hint rule); false:
 * out of memory.  Not cleared: a bucket is set up when it is made.  The
 * lists remembered in x->recent are found again when the buckets move
 * (gen); adding a bucket moves none. */
static bool buckets_room(pindex_t *x)
{
    if (x->nb < x->capb)
        return true;
    size_t nc = x->capb ? 2 * (size_t)x->capb : 256;
    if (x->capb && nc < x->hint)
        nc = x->hint;
    if (nc > INT_MAX)
        return false;
    size_t bytes;
    pbucket_t *nb = sched_array_move(x->pool, x->buckets, x->bucket_bytes,
                                     (size_t)x->nb * sizeof *nb, nc * sizeof *nb, &bytes);
    if (!nb)
        return false;
    if (nb != x->buckets)
        x->gen++;
    x->buckets = nb, x->capb = (int)(bytes / sizeof *nb), x->bucket_bytes = bytes;
    return true;
}

/* The bucket of key; when absent it is made with one list, of semaphore
 * sem, whose one entry is p (*made set; most of compile-live's chunks
 * never get another).  NULL: out of memory. */
static pbucket_t *bucket_get(pindex_t *x, uint64_t key, int sem, int p, bool *made)
{
    size_t i = 0;
    *made = false;
    if (x->cap) {   /* one probe finds the key or the slot it would take */
        for (i = pix_hash(key, x->cap); x->slots[i].key; i = (i + 1) & (x->cap - 1))
            if (x->slots[i].key == key)
                return &x->buckets[x->slots[i].bucket];
    }
    if (x->oom)
        return NULL;
    if (2 * (x->n + 1) > x->cap) {
        if (!table_room(x)) {
            x->oom = true;
            return NULL;
        }
        for (i = pix_hash(key, x->cap); x->slots[i].key; i = (i + 1) & (x->cap - 1))
            ;
    }
    if (!buckets_room(x)) {
        x->oom = true;
        return NULL;
    }
    pbucket_t *b = &x->buckets[x->nb];
    b->nonempty = 1ull << sem;
    b->nl = 1, b->capl = 0;
    b->u.inl[0] = (ivec_t){.n = 1, .cap = 0, .u.inl = {p, 0}};
    x->slots[i] = (pix_slot_t){key, x->nb};
    x->n++, x->nb++;
    *made = true;
    return b;
}

/* A block of PIX_SLAB entries from the newest slab; NULL: out of memory.
 * The first slab is small; the next one has room for the hinted lists at
 * once (one block, not a dozen 32 KiB slabs, when many lists outgrow
 * their inline entries).  Not cleared: a list writes its entries. */
static int *slab_take(pindex_t *x)
{
    if (!x->nslabs || x->slab_used == x->slabs[x->nslabs - 1].blocks) {
        if (x->nslabs == x->capslabs) {
            int nc = x->capslabs ? 2 * x->capslabs : 16;
            pix_slab_t *ns = realloc(x->slabs, (size_t)nc * sizeof *ns);
            if (!ns)
                return NULL;
            x->slabs = ns, x->capslabs = nc;
        }
        size_t blocks = PIX_SLAB_BLOCKS;
        if (x->nslabs && x->hint > blocks)
            blocks = x->hint;
        int *slab = sched_pool_take(x->pool, slab_bytes((int)blocks));
        if (!slab)
            slab = tpb_array_grow(NULL, 0, slab_bytes((int)blocks));
        if (!slab)
            return NULL;
        x->slabs[x->nslabs++] = (pix_slab_t){slab, (int)blocks};
        x->slab_used = 0;
    }
    return &x->slabs[x->nslabs - 1].v[(size_t)x->slab_used++ * PIX_SLAB];
}

/* Room for one more entry in a full list; -1 when out of memory. */
static int list_grow(pindex_t *x, ivec_t *l)
{
    int *nv;
    if (!l->cap) {   /* out of its inline room */
        _Static_assert(PIX_INLINE <= PIX_SLAB, "a slab block holds the inline entries");
        nv = slab_take(x);
        if (nv)
            memcpy(nv, l->u.inl, sizeof l->u.inl);
    } else if (l->cap == PIX_SLAB) {   /* out of its slab block (left unused) */
        nv = malloc((size_t)2 * PIX_SLAB * sizeof *nv);
        if (nv) {
            memcpy(nv, l->u.heap, (size_t)PIX_SLAB * sizeof *nv);
            x->nheap++;
        }
    } else {
        nv = realloc(l->u.heap, (size_t)l->cap * 2 * sizeof *nv);
    }
    if (!nv)
        return -1;
    l->u.heap = nv;
    l->cap = l->cap ? 2 * l->cap : PIX_SLAB;
    return 0;
}

/* The list of semaphore sem in bucket b, made (empty) when absent; NULL:
 * out of memory. */
static ivec_t *list_make(pindex_t *x, pbucket_t *b, int sem)
{
    uint64_t bit = 1ull << sem;
    if (b->nonempty & bit)
        return pix_list(b, sem);
    int cap = b->capl ? b->capl : 2;
    if (b->nl == cap) {
        ivec_t *nl = malloc((size_t)cap * 2 * sizeof *nl);
        if (!nl)
            return NULL;
        x->nheap += !b->capl;
        memcpy(nl, pix_lists(b), (size_t)b->nl * sizeof *nl);
        if (b->capl)
            free(b->u.heap);
        b->u.heap = nl, b->capl = cap * 2;
    }
    x->gen++;   /* lists after it move */
    ivec_t *base = pix_lists(b);
    int r = 0;   /* its rank: the semaphores below it */
    for (uint64_t below = b->nonempty & (bit - 1); below; below &= below - 1)
        r++;
    if (r < b->nl)   /* most buckets get their first list: nothing moves */
        memmove(&base[r + 1], &base[r], (size_t)(b->nl - r) * sizeof *base);
    memset(&base[r], 0, sizeof base[r]);
    b->nl++;
    b->nonempty |= bit;
    return &base[r];
}

/* Producers among the last entries of a list compared with a new one. */
#define PIX_DEDUP 4

/* Append producer p (instruction in) to a list.  A recent entry on the
 * same semaphore with exactly the same accesses is dropped first: any
 * instruction that conflicts with it conflicts with p, whose value is
 * higher, so a newest-first search never answers with it.  This keeps
 * a chunk's lists short when instructions that never conflict share it
 * (chains on separate small tiles in one chunk, each repeating its
 * accesses), so searching them stays linear in the program. */
static void pix_append(pindex_t *x, uint64_t key, int sem, int p, const bir_inst_t *in,
                       const pix_ctx_t *c, pix_last_t *rec)
{
    bool made;
    pbucket_t *b = bucket_get(x, key, sem, p, &made);
    ivec_t *l = b && made ? b->u.inl : b ? list_make(x, b, sem) : NULL;   /* made: p is in it */
    if (!l) {
        x->oom = true;
        return;
    }
    if (!made) {
        int *v = iv_v(l);
        if (l->n && v[l->n - 1] == p)
            return;   /* another access of p in this chunk */
        for (int k = l->n - 1; k >= 0 && k >= l->n - PIX_DEDUP; k--)
            if (pix_same_accesses(in, &c->insts[c->prods[v[k]].inst])) {
                for (int j = k; j < l->n - 1; j++)   /* at most PIX_DEDUP - 1 moves */
                    v[j] = v[j + 1];
                l->n--;
                break;
            }
        if (l->n == (l->cap ? l->cap : PIX_INLINE)) {
            if (list_grow(x, l)) {
                x->oom = true;
                return;
            }
            v = l->u.heap;
        }
        v[l->n++] = p;
    }
    if (rec->p == p) {   /* p's lists, each once */
        if (rec->nlists < PIX_LAST_LISTS) {
            rec->bucket[rec->nlists] = (int)(b - x->buckets);
            rec->list[rec->nlists++] = l;
        } else {
            rec->p = -1;   /* too many to remember */
        }
    }
    x->any[(key - 1) & 15u] |= (uint8_t)(1u << ((key - 1) >> 4 & 7u));   /* (space, write), code */
}

/* The last entry of recent producer e's list j (e->gen is current). */
static inline int *list_last(const pix_last_t *e, int j)
{
    return &iv_v(e->list[j])[e->list[j]->n - 1];
}

/* A miss of pix_replace_recent on r: a run of PIX_RECENT_MISS_RUN with no
 * hit anywhere in the index (pindex_t.recent_hits unchanged) makes r rest,
 * longer each time.  Out of the hit path, which stays as it was. */
__attribute__((noinline)) static void recent_missed(pindex_t *x, pix_recent_t *r)
{
    if (r->hits_seen != x->recent_hits) {   /* a hit since: a new run */
        r->hits_seen = x->recent_hits;
        r->misses = 0;
        r->backoff = 0;
    }
    if (++r->misses >= PIX_RECENT_MISS_RUN) {
        r->misses = 0;
        r->rest = r->backoff ? r->backoff : PIX_RECENT_REST;
        r->backoff = r->rest < PIX_RECENT_REST_MAX / 2 ? (uint16_t)(2 * r->rest)
                                                       : (uint16_t)PIX_RECENT_REST_MAX;
    }
}

/* Producer p has exactly the accesses of a recent one on its semaphore
 * that is still the last entry of each of its lists: p takes its place
 * there (what pix_append would do list by list: the dedup finds it at the
 * end of each); whether it could.  *fp: in's fingerprint where *have_fp
 * is set (worked out here only when needed). */
static bool pix_replace_recent(pindex_t *x, const bir_inst_t *in, int sem, int p,
                               const pix_ctx_t *ctx, uint64_t *fp, bool *have_fp)
{
    pix_recent_t *r = x->recent[sem];
    if (!r)
        return false;   /* no producer filed on sem yet */
    if (r->rest) {   /* resting: filed list by list (pix_recent_t.rest) */
        r->rest--;
        x->recent_rested++;
        return false;
    }
    uint16_t id = ctx->prods[p].accid;
    for (unsigned k = 0; k < PIX_RECENT; k++) {   /* the last one used first */
        pix_last_t *e = &r->e[(r->used + k) % PIX_RECENT];
        if (e->p < 0)
            continue;
        if (!id || id != ctx->prods[e->p].accid) {   /* equal ids: equal accesses */
            if (!*have_fp)   /* hashed at the first entry the ids leave open */
                *fp = pix_fingerprint(in), *have_fp = true;
            if (e->fp != *fp || !pix_same_accesses(in, &ctx->insts[ctx->prods[e->p].inst]))
                continue;   /* other accesses */
        }
        if (e->gen != x->gen) {   /* lists moved since: their new places */
            for (int j = 0; j < e->nlists; j++)
                e->list[j] = pix_list(&x->buckets[e->bucket[j]], sem);
            e->gen = x->gen;
        }
        /* p takes its place at the end of each list; undone when one of
         * them has had a producer on sem filed since (a newer one with
         * these accesses, or one sharing a chunk) */
        int j = 0;
        for (; j < e->nlists; j++) {
            int *last = list_last(e, j);
            if (*last != e->p)
                break;
            *last = p;
        }
        if (j < e->nlists) {
            while (j-- > 0)
                *list_last(e, j) = e->p;
            continue;
        }
        e->p = p;
        r->used = (unsigned)(e - r->e);
        x->recent_hits++;
        return true;
    }
    recent_missed(x, r);
    return false;
}

/* File p list by list (pix_add when no recent producer's place is
 * taken): kept out of pix_add, whose common path in a loop body is the
 * replacement alone, so that path does not save and restore the
 * registers this loop needs. */
__attribute__((noinline)) static void pix_file(pindex_t *x, const bir_inst_t *in, uint64_t fp,
                                               int sem, int p, const pix_ctx_t *ctx)
{
    pix_recent_t *r = recent_get(x, sem);
    if (!r) {
        x->oom = true;
        return;
    }
    pix_last_t *rec = &r->e[r->next];
    r->used = r->next;
    r->next = (r->next + 1) % PIX_RECENT;
    rec->p = p, rec->nlists = 0, rec->fp = fp;   /* pix_append records the lists */
    uint32_t gen = x->gen;
    for (int a = 0; a < in->nacc; a++) {
        const bir_access_t *ac = &in->acc[a];
        if (ac->hi <= ac->lo)
            continue;   /* touches nothing */
        pix_range_t pl = pix_place(ac);
        if (pl.level == PIX_WIDE) {
            pix_append(x, pix_key(ac->space, PIX_WIDE, 0, ac->write), sem, p, in, ctx, rec);
            continue;
        }
        uint64_t key = pix_key(ac->space, pl.level, pl.c0, ac->write);
        for (uint64_t c = pl.c0; c <= pl.c1; c++, key += PIX_KEY_CHUNK)
            pix_append(x, key, sem, p, in, ctx, rec);
        unsigned on = x->sum_on[ac->space & 7u];   /* the summaries kept above its level */
        for (unsigned l = pl.level + 1; on && l < pix_nlevels(ac->space); l++) {
            if (!(on >> l & 1u))
                continue;
            pix_range_t r = pix_coarsen(pl, pl.level, PIX_SUM + l, l);
            key = pix_key(ac->space, r.level, r.c0, ac->write);
            for (uint64_t c = r.c0; c <= r.c1; c++, key += PIX_KEY_CHUNK)
                pix_append(x, key, sem, p, in, ctx, rec);
        }
    }
    /* lists that moved while it was filed are found again when it is used
     * (pix_replace_recent: a gen other than the current one) */
    rec->gen = gen == x->gen ? gen : x->gen - 1;
}

void pix_add(pindex_t *x, const bir_inst_t *in, int sem, int p, const pix_ctx_t *ctx)
{
    uint64_t fp;
    bool have_fp = false;
    if (x->oom || !pix_replace_recent(x, in, sem, p, ctx, &fp, &have_fp))
        pix_file(x, in, have_fp ? fp : pix_fingerprint(in), sem, p, ctx);
}

/* One entry of a summary being filled: producer p on sem goes to the
 * summary list of key. */
typedef struct {
    int p, sem;
    uint64_t key;
} pix_fill_t;

static int fill_cmp(const void *a, const void *b)
{
    const pix_fill_t *x = a, *y = b;
    return (x->p > y->p) - (x->p < y->p);
}

void pix_summary_fill(pindex_t *x, unsigned space, unsigned l, const pix_ctx_t *ctx)
{
    if (x->oom)
        return;
    space &= 7u;
    x->sum_on[space] |= (uint8_t)(1u << l);
    /* every entry of the finer exact lists, by its level-l chunk */
    size_t n = 0, cap = 0;
    pix_fill_t *e = NULL;
    for (size_t i = 0; i < x->cap; i++) {
        uint64_t k = x->slots[i].key - 1;
        unsigned code = (unsigned)(k >> 4 & 7u);
        if (!x->slots[i].key || (k >> 1 & 7u) != space || code >= l)
            continue;   /* empty slot, another space, not finer */
        bool write = k & 1u;
        uint64_t chunk = (k >> 7) >> (pix_shift(l) - pix_shift(code));
        const pbucket_t *b = &x->buckets[x->slots[i].bucket];
        const ivec_t *v = pix_lists(b);
        for (uint64_t q = b->nonempty; q; q &= q - 1, v++) {   /* lists in semaphore order */
            int sem = __builtin_ctzll(q);
            for (int j = 0; j < v->n; j++) {
                if (n == cap) {
                    size_t nc = cap ? 2 * cap : 256;
                    pix_fill_t *ne = realloc(e, nc * sizeof *ne);
                    if (!ne) {
                        free(e);
                        x->oom = true;
                        return;
                    }
                    e = ne, cap = nc;
                }
                e[n++] = (pix_fill_t){iv_cv(v)[j], sem, pix_key(space, PIX_SUM + l, chunk, write)};
            }
        }
    }
    /* appended in producer order: every list stays ascending */
    if (n)   /* e is NULL when there is nothing to fill */
        qsort(e, n, sizeof *e, fill_cmp);
    pix_last_t none = {.p = -1};
    for (size_t i = 0; i < n && !x->oom; i++)
        pix_append(x, e[i].key, e[i].sem, e[i].p,
                   &ctx->insts[ctx->prods[e[i].p].inst], ctx, &none);
    free(e);
    /* the recent producers' remembered lists lack the new summary lists */
    for (int s = 0; s < BIR_MAX_SEMS; s++)
        if (x->recent[s])
            recent_clear(x->recent[s]);
}
