/* schedule.c - dependencies and semaphores.
 *
 * Engines and DMA queues are assigned in sched_queues.c.
 * Semaphore scheme (docs/compiler.md):
 *   - one semaphore per TPB engine (ids 0..4 in the order PE, Activation,
 *     Pool, DVE, SP) counting that engine's completed instructions: every
 *     instruction that touches memory updates it with sem_inc at complete;
 *   - one semaphore per DMA queue (ids 5..) counting completed transfers:
 *     the DmaTrigger updates it with sem_inc when its transfer completes;
 *   - a consumer waits for sem >= k, k = the producer's running count.
 * Dependencies (RAW, WAR, WAW) come from overlapping address ranges.  An
 * engine runs its own instructions in order, so a dependency between two
 * compute instructions on one engine needs no wait; every other dependency
 * (other engine, or any DMA) gets one.  Waits already implied by an earlier
 * wait on the same engine are dropped.  One wait fits in a bundle header; a
 * Nop bundle on the same engine carries each extra wait.  Every wait names a
 * producer earlier in program order, so program order is a valid schedule
 * and the waits cannot deadlock. */
#include "backend.h"

#include <assert.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hugepage.h"
#include "prefetch.h"
#include "sched_clock.h"
#include "sched_conflict.h"
#include "sched_name.h"
#include "sched_pix.h"


/* A wait that needs its own Nop, placed right before instruction `before`
 * (original order).  The Nops are materialised once, after the walk, so the
 * walk edits the block in place instead of copying every instruction. */
typedef struct {
    int before;
    int sem;
    uint32_t value;
} pending_nop_t;

typedef struct {
    pending_nop_t *v;
    int n, cap;
    int first;   /* the first room: one per producer (compile-mixed: one in five) */
    size_t bytes;          /* v's block (sched_array_free) */
    sched_pool_t *pool;    /* where the first room goes */
} pending_t;

/* Grown with tpb_array_grow, not cleared: a first room of one per producer
 * touches only the pages the Nops fill and is seldom outgrown (doubling
 * from a few hundred copied the list into fresh pages at every step). */
static int pending_add(pending_t *p, int before, int sem, uint32_t value)
{
    if (p->n == p->cap) {
        if (p->cap > INT_MAX / 2)
            return -1;
        int nc = p->cap ? 2 * p->cap : p->first;
        size_t bytes;
        pending_nop_t *q = sched_array_move(p->pool, p->v, p->bytes, (size_t)p->n * sizeof *q,
                                            (size_t)nc * sizeof *q, &bytes);
        if (!q)
            return -1;
        p->v = q, p->cap = nc, p->bytes = bytes;
    }
    p->v[p->n++] = (pending_nop_t){before, sem, value};
    return 0;
}

/* Index of the oldest producer not implied by max(known, need) on its
 * semaphore; producers older than that need no look.  Only semaphores in
 * `open` (known < count) can hold such a producer. */
static int oldest_unimplied(const uint32_t *known, const uint32_t *need, const uint32_t *count,
                            int *const *by_val, uint64_t open)
{
    int stop = INT_MAX;
    for (; open; open &= open - 1) {
        int s = __builtin_ctzll(open);
        uint32_t thr = need[s] > known[s] ? need[s] : known[s];
        if (thr < count[s] && by_val[s][thr + 1] < stop)
            stop = by_val[s][thr + 1];
    }
    return stop;
}

static void set_wait(bir_inst_t *in, int sem, uint32_t v)
{
    in->isa.sync.wait_en = 1;
    in->isa.sync.wait_sem = (uint32_t)sem;
    in->isa.sync.wait_val = v;
}

static bool nop_for(bir_module_t *m, bir_inst_t *nop, const bir_inst_t *in, int sem, uint32_t v)
{
    bir_inst_init(nop, BIR_NOP, ISA_OP_NOP);
    nop->engine = in->engine;
    nop->tir_op = in->tir_op;
    nop->op_kind = "sync";
    /* "wait." and at most 50 bytes of the name (as "wait.%.50s") */
    char name[BIR_NAME_LEN];
    _Static_assert(sizeof name >= 5 + 50 + 1, "room for wait.<50 bytes>");
    size_t n = strnlen(in->name, 50);
    memcpy(name, "wait.", 5);
    memcpy(name + 5, in->name, n);
    name[5 + n] = 0;
    nop->src = in->src;
    set_wait(nop, sem, v);
    return bir_inst_set_name(m, nop, name);
}

/* Insert the pending Nops (sorted by `before`, in wait order) into the
 * block: one pass from the back, every instruction moved once. */
static int insert_nops(bir_module_t *m, bir_block_t *b, const pending_t *p, tpb_err_t *err)
{
    if (!p->n)
        return 0;
    int n = b->ninsts, total = n + p->n;
    if (total > b->cap) {
        /* every later pass reads the block: grown in place, 2 MiB pages */
        bir_inst_t *q = tpb_array_grow(b->insts, (size_t)b->cap * sizeof *q,
                                       (size_t)total * sizeof *q);
        if (!q)
            return tpb_errf(err, "out of memory growing block %s", b->name);
        b->insts = q;
        b->cap = total;
    }
    /* invariant: dst_end - src_end == k, the Nops still to place */
    int k = p->n, src_end = n, dst_end = total;
    bool named = true;
    while (k > 0) {
        int before = p->v[k - 1].before;
        int run = src_end - before;
        memmove(&b->insts[dst_end - run], &b->insts[before], (size_t)run * sizeof *b->insts);
        dst_end -= run;
        src_end = before;
        int j = k;
        while (j > 0 && p->v[j - 1].before == before)
            j--;
        const bir_inst_t *in = &b->insts[dst_end];   /* instruction `before`, moved */
        for (int q = j; q < k; q++)
            named &= nop_for(m, &b->insts[dst_end - (k - q)], in, p->v[q].sem, p->v[q].value);
        dst_end -= k - j;
        k = j;
    }
    b->ninsts = total;
    return named ? 0 : tpb_errf(err, "out of memory naming the wait Nops of block %s", b->name);
}

#define PIX_SCAN_BUDGET 16
#define PIX_FAR_FACTOR 4   /* more than 4 budgets of producers to scan: the index at once */
#define PIX_MEMO_SPAN 64   /* search_memo: at most this many producers since the last search */
#define SYNC_PREFETCH 24    /* instructions ahead whose accesses are fetched */

/* An engine's last dependency search (search_memo). */
typedef struct {
    int inst;                        /* the instruction searched; -1: none yet */
    bool is_dma;
    int np;                          /* producers 0..np-1 were searched */
    uint64_t found;                  /* semaphores with a producer (val, giver) */
    uint32_t val[BIR_MAX_SEMS];
    int giver[BIR_MAX_SEMS];
} sync_memo_t;

/* Per-walk state of sched_synchronise. */
typedef struct {
    int nsems;
    sched_pool_t pool;               /* the large blocks below (sched_pool.h) */
    prod_t *prods;                   /* [p], then the by_val entries (one block) */
    size_t prods_bytes;              /* that block's size (tpb_array_free) */
    int *by_val[BIR_MAX_SEMS];       /* [s][v]: producer index whose token is (s, v) */
    uint32_t count[BIR_MAX_SEMS];
    uint32_t room[BIR_MAX_SEMS];     /* producers counted up front per semaphore */
    sclk_t clk;                      /* clk.now[e][s]: engine e waited for sem s >= it */
    uint64_t open[ISA_ENG_COUNT];    /* bit s: known[e][s] < count[s] (sems worth a look) */
    bool used[ISA_ENG_COUNT];
    int engine_sem[ISA_ENG_COUNT];   /* sched_engine_sem, once per engine */
    int np;
    unsigned waits, nops;
    uint64_t tests;                  /* conflicts() calls (enc_stats_t sync_tests) */
    sconf_t *conf;
    pending_t pending;
    pindex_t index;
    int nindexed;                    /* producers 0..nindexed-1 are in the index (index_catch_up) */
    /* search_picks per engine: failures in a row, searches left to skip
     * (a scan abandoned for the walk is work lost: compile-live's would
     * all be, and after a few are, few are tried) */
    uint8_t pick_fails[ISA_ENG_COUNT];
    uint16_t pick_skip[ISA_ENG_COUNT];
    sync_memo_t memo[ISA_ENG_COUNT];
} sync_walk_t;

/* The search's arrays, freed once the walk is done: the Nop insertion
 * that follows grows the block, and the compile's peak memory is the
 * larger of the two. */
static void walk_free_search(sync_walk_t *w)
{
    sched_array_free(&w->pool, w->prods, w->prods_bytes);
    w->prods = NULL;
    memset(w->by_val, 0, sizeof w->by_val);
    sclk_free(&w->clk);
    pix_free(&w->index);
    if (!sched_pool_has(&w->pool, w->pending.v))   /* else kept for the Nops */
        sched_pool_free(&w->pool);   /* after every block that may be in it */
    free(w->conf);
    w->conf = NULL;
}

static void walk_free(sync_walk_t *w)
{
    walk_free_search(w);
    sched_array_free(&w->pool, w->pending.v, w->pending.bytes);
    w->pending.v = NULL;
    sched_pool_free(&w->pool);
}

/* Whether instruction in becomes a producer (sync_inst files it), and on
 * which semaphore. */
static bool producer_sem(const sync_walk_t *w, const bir_module_t *m, const bir_inst_t *in,
                         int *sem)
{
    if (in->nacc <= 0 || in->is_dma_desc || in->preset_upd)
        return false;
    *sem = in->isa.op == ISA_OP_DMA_TRIGGER ? m->queues[in->queue].semaphore
                                            : w->engine_sem[in->engine];
    return true;
}

/* The engines with producers (room counted): their own semaphore's, or
 * their queues' (a DMA trigger runs on its queue's issuing engine).  An
 * engine that only waits is left out: should its log outgrow its first
 * room, it takes pool room another log leaves or a block of its own. */
static unsigned producing_engines(const sync_walk_t *w, const bir_module_t *m)
{
    unsigned engines = 0;
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        if (w->engine_sem[e] >= 0 && w->room[w->engine_sem[e]])
            engines |= 1u << e;
    for (int q = 0; q < m->nqueues; q++)
        if (w->room[m->queues[q].semaphore] && m->queues[q].engine >= 0 &&
            m->queues[q].engine < ISA_ENG_COUNT)
            engines |= 1u << m->queues[q].engine;
    return engines;
}

/* The pool for the walk's large blocks: the producers (`prods` bytes),
 * a clock log per engine with producers (every change of a clock
 * raises a semaphore towards its final count: at most np changes each),
 * the index for about two lists per producer (pix_reserve). */
static void walk_pool(sync_walk_t *w, const bir_module_t *m, size_t prods, unsigned engines, size_t np,
                      size_t lists)
{
    size_t logs = 0;
    for (; engines; engines &= engines - 1)
        logs += sclk_pool_bytes(np < UINT32_MAX ? (uint32_t)np : UINT32_MAX, w->nsems);
    size_t nops = (size_t)w->pending.first * sizeof *w->pending.v + 64;
    sched_pool_init(&w->pool, prods + 64 + logs + nops + pix_pool_bytes(lists), m->spare);
    w->pending.pool = &w->pool;
    w->clk.pool = &w->pool;
    w->index.pool = &w->pool;
}

/* The producer records and by_val in one block sized by a count of the
 * producers per semaphore (a pass over the block): about 20 bytes per
 * producer, pooled (else its own block, tpb_array_grow),
 * where a by_val of n entries per semaphore was a separate block each.
 * Not cleared: entries are written before they are read (prods[p] when
 * producer p is filed, by_val[s][v] when s reaches v >= 1), so only the
 * pages in use become resident. */
static int walk_alloc_producers(sync_walk_t *w, const bir_module_t *m, const bir_block_t *b)
{
    size_t np = 0, nval = 0;
    for (int i = 0; i < b->ninsts; i++) {
        int sem;
        if (producer_sem(w, m, &b->insts[i], &sem))
            w->room[sem]++, np++;
    }
    /* about two accesses per producer (a source, a destination), each
     * opening a list when tiles do not repeat (compile-live); counted on
     * the producers, not the block, whose DMA descriptors (half of
     * compile-live's instructions) file nothing: a reserve for those put
     * the index across a second 2 MiB page */
    size_t naccs = 2 * np;
    pix_reserve(&w->index, naccs);
    for (int s = 0; s < w->nsems; s++)
        nval += (size_t)w->room[s] + 1;   /* values 1..room (0 unused) */
    size_t want = (np ? np : 1) * sizeof *w->prods + nval * sizeof(int);
    w->pending.first = np > 256 && np < INT_MAX ? (int)np : 256;
    walk_pool(w, m, want, producing_engines(w, m), np, naccs);
    w->prods_bytes = want;
    w->prods = sched_pool_take(&w->pool, want);
    if (!w->prods) {
        w->prods_bytes = want;
        w->prods = tpb_array_grow(NULL, 0, w->prods_bytes);
    }
    if (!w->prods)
        return -1;
    int *v = (int *)(w->prods + (np ? np : 1));
    for (int s = 0; s < w->nsems; s++)
        w->by_val[s] = v, v += w->room[s] + 1;
    /* every change of a clock raises a semaphore towards its final count */
    sclk_reserve(&w->clk, np < UINT32_MAX ? (uint32_t)np : UINT32_MAX);
    return 0;
}

static int walk_init(sync_walk_t *w, const bir_module_t *m, const bir_block_t *b)
{
    memset(w, 0, sizeof *w);
    pix_init(&w->index);
    w->nsems = m->nsems;
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        w->memo[e].inst = -1, w->engine_sem[e] = sched_engine_sem(e);
    sclk_init(&w->clk, m->nsems);
    w->conf = sconf_new(b->ninsts);
    if (!w->conf)
        return -1;
    return walk_alloc_producers(w, m, b);
}

/* Whether producer p conflicts with the instruction whose accesses are
 * ax (loaded); p's access-set id is found at its first test. */
static inline bool conflicts(sync_walk_t *w, const bir_block_t *b, accs_t *ax, int p)
{
    w->tests++;
    return sconf_test(w->conf, ax, b->insts, w->prods[p].inst, &w->prods[p].accid);
}

/* Load instruction in's accesses (and their id) into ax, once. */
static void load_accs(sync_walk_t *w, const bir_block_t *b, const bir_inst_t *in, accs_t *ax)
{
    if (!ax->loaded)
        sconf_load(w->conf, ax, b->insts, (int)(in - b->insts));
}

/* What an index search has found so far: per semaphore s in `set`, the
 * newest conflicting producer giver[s] and its value need[s]; above what
 * the engine knows (kn) where s is not in `set` yet.  need[] and giver[]
 * are the search's results, written as it goes (no copy at the end). */
typedef struct {
    const uint32_t *kn;
    uint32_t *need;
    int *giver;
    uint64_t set;
    uint64_t own_bit;   /* the semaphore of in's engine's own compute (in order) */
} ix_found_t;

/* The value a producer on s must pass to improve on what f holds. */
static inline uint32_t ix_floor(const ix_found_t *f, int s)
{
    return f->set >> s & 1u ? f->need[s] : f->kn[s];
}

/* Producer p on s conflicts with in and is above ix_floor: the newest one. */
static inline void ix_take(ix_found_t *f, int s, int p, uint32_t value)
{
    f->need[s] = value, f->giver[s] = p;
    f->set |= 1ull << s;
}

/* Newest producer in list l above value lim that conflicts with in
 * (accesses ax); -1: none. */
static int scan_list(sync_walk_t *w, const bir_block_t *b, accs_t *ax, const ivec_t *l,
                     uint32_t lim)
{
    const int *v = iv_cv(l);
    for (int k = l->n - 1; k >= 0; k--) {
        if (w->prods[v[k]].value <= lim)
            return -1;   /* older entries have smaller values */
        if (conflicts(w, b, ax, v[k]))
            return v[k];
    }
    return -1;
}

/* Scan every semaphore list of bucket bk but the own one. */
static void scan_bucket_at(sync_walk_t *w, const bir_block_t *b, accs_t *ax,
                           const pbucket_t *bk, ix_found_t *f)
{
    const ivec_t *l = pix_lists(bk);
    for (uint64_t q = bk->nonempty; q; q &= q - 1, l++) {   /* lists in semaphore order */
        int s = __builtin_ctzll(q);
        if (f->own_bit >> s & 1u)
            continue;
        int p = scan_list(w, b, ax, l, ix_floor(f, s));
        if (p >= 0)
            ix_take(f, s, p, w->prods[p].value);
    }
}

/* Most lookups find no bucket (NULL): that test stays at the call site. */
static inline void scan_bucket(sync_walk_t *w, const bir_block_t *b, accs_t *ax,
                               const pbucket_t *bk, ix_found_t *f)
{
    if (bk)
        scan_bucket_at(w, b, ax, bk, f);
}

static uint64_t search_scan(sync_walk_t *w, const bir_block_t *b, const bir_inst_t *in,
                            accs_t *ax, bool is_dma, const uint32_t *kn, uint32_t *need,
                            int *giver);

/* The dependency search on the index: per semaphore, the newest producer
 * above what the engine knows that conflicts with in.  An access is looked
 * up chunk by chunk (plus the space's wide list); a wide one scans every
 * producer instead. */

/* File the producers the index lacks.  Producers are filed only once a
 * search needs the index: a kernel whose searches all end in a short scan
 * (compile-mixed) never builds it.  The index a search reads is the one
 * filing every producer at once would have built (the same additions in
 * the same order, between the same queries). */
static void index_catch_up(sync_walk_t *w, const bir_block_t *b)
{
    pix_ctx_t pc = {b->insts, w->prods};
    for (; w->nindexed < w->np; w->nindexed++) {
        const prod_t *pr = &w->prods[w->nindexed];
        pix_add(&w->index, &b->insts[pr->inst], pr->sem, w->nindexed, &pc);
    }
}

static uint64_t search_index(sync_walk_t *w, const bir_block_t *b, const bir_inst_t *in,
                             accs_t *ax, bool is_dma, const uint32_t *kn, uint32_t *need,
                             int *giver)
{
    index_catch_up(w, b);
    if (w->index.oom)   /* out of memory filing: the scan */
        return search_scan(w, b, in, ax, is_dma, kn, need, giver);
    int own = is_dma ? -1 : w->engine_sem[in->engine];
    ix_found_t f = {kn, need, giver, 0, own < 0 ? 0 : 1ull << own};
    pix_ctx_t pc = {b->insts, w->prods};
    for (int a = 0; a < in->nacc; a++) {
        const bir_access_t *ac = &in->acc[a];
        if (ac->hi <= ac->lo)
            continue;
        pix_range_t pl = pix_place(ac);
        if (pl.level == PIX_WIDE) {
            /* every producer on each semaphore, newest first */
            for (int s = 0; s < w->nsems; s++) {
                if (s == own)
                    continue;   /* same engine, in order */
                for (uint32_t v = w->count[s]; v > ix_floor(&f, s); v--) {
                    int p = w->by_val[s][v];
                    if (conflicts(w, b, ax, p)) {
                        ix_take(&f, s, p, v);
                        break;
                    }
                }
            }
            continue;
        }
        pix_need_summary(&w->index, ac->space, pl.level, &pc);
        if (w->index.oom)   /* out of memory filling it: the scan (it starts afresh) */
            return search_scan(w, b, in, ax, is_dma, kn, need, giver);
        /* writers always; readers too when this access writes */
        unsigned space = ac->space & 7u, last_kind = ac->write ? 0 : 1;
        for (unsigned kind = 1;; kind--) {
            unsigned any = w->index.any[space * 2 + kind];
            if (any >> PIX_WIDE & 1u)   /* most kernels have no wide list */
                scan_bucket(w, b, ax, pix_find(&w->index, pix_key(space, PIX_WIDE, 0, kind)), &f);
            for (unsigned codes = pix_query_codes(any, pl.level); codes; codes &= codes - 1) {
                unsigned code = (unsigned)__builtin_ctz(codes);
                pix_range_t r = pix_code_range(pl, code);
                uint64_t key = pix_key(space, code, r.c0, kind);
                for (uint64_t c = r.c0; c <= r.c1; c++, key += PIX_KEY_CHUNK)
                    scan_bucket(w, b, ax, pix_find(&w->index, key), &f);
            }
            if (kind == last_kind)
                break;
        }
    }
    return f.set;
}

/* Of the semaphores in `open`, those whose count engine known (kn) has
 * not reached (a semaphore outside `open` has been reached already, and
 * known only grows). */
static uint64_t open_sems(const sync_walk_t *w, const uint32_t *kn, uint64_t open)
{
    for (uint64_t q = open; q; q &= q - 1) {
        int s = __builtin_ctzll(q);
        if (kn[s] >= w->count[s])
            open &= ~(1ull << s);
    }
    return open;
}

#define OPEN_LOG_MAX 8   /* open_after: more changes than this, open_sems */

/* open_sems after waits raised engine e's clock: only the semaphores the
 * clock changed since `mark` (its log) can have been reached, as open[e]
 * was exact before (every raise elsewhere is followed by open_stop or
 * clears its bit).  A store of compile-live changes one or two, of a
 * dozen open semaphores. */
static uint64_t open_after(const sync_walk_t *w, int e, uint64_t open, uint32_t mark)
{
    const sclk_log_t *l = &w->clk.log[e];
    const uint32_t *kn = w->clk.now[e];
    if (l->n - mark > OPEN_LOG_MAX)
        return open_sems(w, kn, open);
    uint64_t left = open;
    for (uint32_t k = mark; k < l->n; k++) {
        unsigned s = l->sem[k];
        if (kn[s] >= w->count[s])
            left &= ~(1ull << s);
    }
    assert(left == open_sems(w, kn, open));   /* debug builds: the tests check it */
    return left;
}

/* Producer p against instruction in (accesses ax, loaded at the first
 * test): skipped when what the engine knows or already needs implies it,
 * or when it ran earlier on the same engine (in order); else, when their
 * accesses conflict, it becomes the giver of its semaphore (true). */
static inline bool test_producer(sync_walk_t *w, const bir_block_t *b, const bir_inst_t *in,
                                 bool is_dma, accs_t *ax, int p, const uint32_t *kn,
                                 uint32_t *need, int *giver, uint64_t *needs)
{
    const prod_t *pr = &w->prods[p];
    uint32_t nd = *needs >> pr->sem & 1u ? need[pr->sem] : 0;   /* need[] is valid under needs */
    uint32_t thr = nd > kn[pr->sem] ? nd : kn[pr->sem];
    /* skipped: a compute producer of in's engine (in is not a DMA) */
    if (thr >= pr->value || (!is_dma && pr->sem == w->engine_sem[in->engine]))
        return false;
    load_accs(w, b, in, ax);
    if (!conflicts(w, b, ax, p))
        return false;
    need[pr->sem] = pr->value;
    giver[pr->sem] = p;
    *needs |= 1ull << pr->sem;
    return true;
}

/* The dependency search of instruction in: per semaphore s, the newest
 * conflicting producer (giver[s]) whose value (need[s]) is above what the
 * engine knows (kn); bit s of the result: one was found.  The plain
 * backward scan over the producers: the reference the tests compare
 * search_walk and the index with (scan budget INT_MAX). */
static uint64_t search_scan(sync_walk_t *w, const bir_block_t *b, const bir_inst_t *in,
                            accs_t *ax, bool is_dma, const uint32_t *kn, uint32_t *need,
                            int *giver)
{
    /* scan back only while some older producer is not yet implied by what
     * this engine knows or already needs (oldest_unimplied reads need[]
     * of every open semaphore: cleared here) */
    memset(need, 0, BIR_MAX_SEMS * sizeof *need);
    uint64_t open = w->open[in->engine], needs = 0;   /* needs: bit s: need[s] set */
    int stop = oldest_unimplied(kn, need, w->count, w->by_val, open);
    for (int p = w->np - 1; p >= stop; p--)
        if (test_producer(w, b, in, is_dma, ax, p, kn, need, giver, &needs))
            stop = oldest_unimplied(kn, need, w->count, w->by_val, open);
    return needs;
}

/* The dependency search per semaphore: the answer for semaphore s is the
 * newest producer on s above what the engine knows that conflicts with
 * in, independent of the other semaphores, so each open semaphore's
 * producers are walked newest first down to the known value (by_val),
 * stopping at the first conflict.  This tests exactly the producers the
 * backward scan over all producers tests (search_scan; it also steps over
 * every implied producer in between and recomputes where to stop after
 * each find).  More than scan_budget producers to walk: the index. */
static uint64_t search_walk(sync_walk_t *w, const bir_block_t *b, const bir_inst_t *in,
                            accs_t *ax, bool is_dma, const uint32_t *kn, uint32_t *need, int *giver,
                            int scan_budget)
{
    uint64_t open = w->open[in->engine];
    if (!is_dma)   /* its own engine's producers run before it, in order */
        open &= ~(1ull << w->engine_sem[in->engine]);
    /* producers above what is known, counted only up to where the choice
     * below is made (past `far`: the index, or the walk when out of memory,
     * whatever the rest adds; many open DMA queues made this loop the
     * pass's largest one on compile-live) */
    int64_t total = 0, far = PIX_FAR_FACTOR * (int64_t)(scan_budget > 0 ? scan_budget : 0);
    for (uint64_t q = open; q && total <= far; q &= q - 1) {
        int s = __builtin_ctzll(q);
        total += w->count[s] > kn[s] ? w->count[s] - kn[s] : 0;
    }
    if (!total)
        return 0;
    load_accs(w, b, in, ax);
    /* a walk far past the budget is rarely cut short by what it finds:
     * the index at once (same answer) */
    if (total > scan_budget && !w->index.oom &&
        (total > PIX_FAR_FACTOR * (int64_t)scan_budget || scan_budget == 0))
        return search_index(w, b, in, ax, is_dma, kn, need, giver);
    int budget = scan_budget;
    uint64_t needs = 0;
    for (uint64_t q = open; q; q &= q - 1) {
        int s = __builtin_ctzll(q);
        for (uint32_t v = w->count[s]; v > kn[s]; v--) {
            if (--budget < 0 && !w->index.oom)   /* its answer replaces what was found */
                return search_index(w, b, in, ax, is_dma, kn, need, giver);
            int p = w->by_val[s][v];
            if (conflicts(w, b, ax, p)) {
                need[s] = v, giver[s] = p;
                needs |= 1ull << s;
                break;
            }
        }
    }
    return needs;
}

/* The search of an instruction with exactly the accesses (and the DMA-ness)
 * of this engine's previous search, memo m: among the producers m saw, the
 * newest conflicting one per semaphore is m's answer, still needed if above
 * what the engine knows now (known only grows); only the producers filed
 * since are tested.  A chain of instructions repeating their tiles (a loop
 * body on one engine) thus tests a few producers instead of a search. */
static uint64_t search_memo(sync_walk_t *w, const bir_block_t *b, const bir_inst_t *in,
                            accs_t *ax, bool is_dma, const sync_memo_t *m, const uint32_t *kn, uint32_t *need,
                            int *giver)
{
    uint64_t needs = 0;
    for (uint64_t q = m->found; q; q &= q - 1) {
        int s = __builtin_ctzll(q);
        if (m->val[s] > kn[s])
            need[s] = m->val[s], giver[s] = m->giver[s], needs |= 1ull << s;
    }
    for (int p = w->np - 1; p >= m->np; p--)   /* newest first, as the scan */
        test_producer(w, b, in, is_dma, ax, p, kn, need, giver, &needs);
    return needs;
}

/* Drop from *open the semaphores whose count kn (an engine's clock) has
 * reached; return the oldest producer kn does not imply on the others,
 * those in `skip` aside (INT_MAX: none).  open_sems and oldest_unimplied
 * in one loop. */
static int open_stop(const sync_walk_t *w, const uint32_t *kn, uint64_t *open, uint64_t skip)
{
    int stop = INT_MAX;
    for (uint64_t q = *open; q; q &= q - 1) {
        int s = __builtin_ctzll(q);
        if (kn[s] >= w->count[s])
            *open &= ~(1ull << s);
        else if (!(skip >> s & 1u) && w->by_val[s][kn[s] + 1] < stop)
            stop = w->by_val[s][kn[s] + 1];
    }
    return stop;
}

#define PICK_LAZY 8   /* search_picks: producers scanned before the stop is known */

/* The waits of in, engine e, straight from a short backward scan over
 * the producers.  The newest producer (over all semaphores) that conflicts
 * with in and is not implied by what e knows is the first wait the
 * per-semaphore search would lead to (sync_inst waits for the largest
 * giver first); its wait is made at once (e's clock raised and merged),
 * the clock it leaves decides which older producers are still not
 * implied, the next conflicting one of those is the next wait, and so on
 * down to the oldest producer not implied.  Only the waits are found, not
 * every semaphore's newest conflicting producer, most of which the first
 * wait implies (compile-mixed: ten producers tested per instruction for
 * about one wait).  Each wait goes to wsem/wval[*nw].  1: done; 0: the
 * scan would visit more than `visits` producers (the waits made so far
 * stand; a search from the clock they left finds the rest, as the
 * producers they imply drop out of it); -1: out of memory. */
static int search_picks(sync_walk_t *w, const bir_block_t *b, const bir_inst_t *in, accs_t *ax,
                        bool is_dma, int *wsem, uint32_t *wval, int *nw, int visits)
{
    int e = in->engine;
    const uint32_t *kn = w->clk.now[e];
    int own = is_dma ? -1 : w->engine_sem[e];
    uint64_t skip = own < 0 ? 0 : 1ull << own;
    /* down to lo: the stop (the oldest producer the clock does not imply)
     * once known, else the newest PICK_LAZY producers (most waits are
     * among them, and the stop after the wait is the one needed), and
     * never below the floor; below the stop every producer is implied */
    int p = w->np - 1, stop = -1, floor = w->np - visits;   /* stop < 0: not known yet */
    int lo = w->np - PICK_LAZY > floor ? w->np - PICK_LAZY : floor;
    if (lo < 0)
        lo = 0;
    for (;;) {
        for (; p >= lo; p--) {
            const prod_t *pr = &w->prods[p];
            if (pr->value <= kn[pr->sem] || pr->sem == own)
                continue;   /* implied, or in order on in's engine */
            load_accs(w, b, in, ax);
            if (!conflicts(w, b, ax, p))
                continue;
            wsem[*nw] = pr->sem, wval[(*nw)++] = pr->value;
            if (sclk_raise(&w->clk, e, pr->sem, pr->value) ||
                sclk_merge(&w->clk, e, pr->engine, pr->mark))
                return -1;
            stop = open_stop(w, kn, &w->open[e], skip);
            lo = stop > floor ? stop : floor;
        }
        if (stop >= 0)
            break;
        stop = open_stop(w, kn, &w->open[e], skip);
        lo = stop > floor ? stop : floor;
    }
    return p < stop ? 1 : 0;   /* else the floor came first */
}

#define PICK_BACKOFF_MAX 6   /* after failures in a row: skip up to 2^6 searches */

/* Whether engine e's search tries search_picks first. */
static bool picks_worth(sync_walk_t *w, int e)
{
    if (!w->pick_skip[e])
        return true;
    w->pick_skip[e]--;
    return false;
}

/* Engine e's search_picks finished (done) or was abandoned. */
static void picks_learn(sync_walk_t *w, int e, bool done)
{
    if (done) {
        w->pick_fails[e] = 0;
    } else {
        if (w->pick_fails[e] < PICK_BACKOFF_MAX)
            w->pick_fails[e]++;
        w->pick_skip[e] = (uint16_t)(1u << w->pick_fails[e]);
    }
}

/* The waits for what the search found (needs, need, giver), appended to
 * wsem/wval[*nw]: the strongest producer first, as what its completion
 * implies (transitively) may make the other waits redundant; open[]
 * refreshed after.  -1: out of memory.  Apart from sync_inst: most
 * compile-mixed instructions find their waits in search_picks. */
__attribute__((noinline)) static int wait_needs(sync_walk_t *w, const bir_inst_t *in,
                                                uint64_t needs, const uint32_t *need,
                                                const int *giver, int *wsem, uint32_t *wval,
                                                int *nw)
{
    int e = in->engine;
    const uint32_t *kn = w->clk.now[e];
    uint32_t mark = sclk_mark(&w->clk, e);   /* open_after: the changes since */
    int first = *nw;
    for (;;) {
        int best = -1;
        for (uint64_t q = needs; q; q &= q - 1) {   /* ascending: same ties as a full loop */
            int s2 = __builtin_ctzll(q);
            if (need[s2] > kn[s2] && (best < 0 || giver[s2] > giver[best]))
                best = s2;
        }
        if (best < 0)
            break;
        wsem[*nw] = best, wval[(*nw)++] = need[best];
        const prod_t *g = &w->prods[giver[best]];
        if (sclk_raise(&w->clk, e, best, need[best]) || sclk_merge(&w->clk, e, g->engine, g->mark) ||
            sclk_raise(&w->clk, e, g->sem, g->value))
            return -1;
    }
    if (*nw > first)
        w->open[e] = open_after(w, e, w->open[e], mark);
    return 0;
}

/* Waits and the completion update of instruction i (in place). */
static int sync_inst(sync_walk_t *w, bir_module_t *m, bir_block_t *b, int i, int scan_budget)
{
    bir_inst_t *in = &b->insts[i];
    bool is_dma = in->isa.op == ISA_OP_DMA_TRIGGER;
    if (w->conf->next_id >= SCONF_MAX_ID) {
        /* the 16-bit access-set ids ran out (65 535 sets): every producer
         * forgets its id before they are handed out again (at most once
         * per 65 535 new sets, so O(1) per instruction) */
        for (int p = 0; p < w->np; p++)
            w->prods[p].accid = 0;
        sconf_reset(w->conf);
    }
    /* collect the largest needed value per semaphore (and who gives it) */
    uint32_t need[BIR_MAX_SEMS];   /* need[s] is valid where bit s of `needs` is set */
    int giver[BIR_MAX_SEMS];
    const uint32_t *kn = w->clk.now[in->engine];
    sync_memo_t *mm = &w->memo[in->engine];
    uint64_t needs;
    accs_t ax;
    ax.loaded = false;   /* at the first test: many instructions test none */
    int nw = 0;          /* waits made (wsem, wval) */
    int wsem[BIR_MAX_SEMS];
    uint32_t wval[BIR_MAX_SEMS];
    /* INT_MAX: the plain scan, no shortcut (what the tests compare with) */
    if (!w->open[in->engine])
        needs = 0;   /* every producer implied by what the engine knows: no search */
    else if (scan_budget < INT_MAX && mm->inst >= 0 && mm->is_dma == is_dma &&
             w->np - mm->np <= PIX_MEMO_SPAN && pix_same_accesses(&b->insts[mm->inst], in))
        needs = search_memo(w, b, in, &ax, is_dma, mm, kn, need, giver);
    else if (scan_budget == INT_MAX)
        needs = search_scan(w, b, in, &ax, is_dma, kn, need, giver);   /* the tests' reference */
    else {
        int done = 0;
        if (scan_budget > 0 && picks_worth(w, in->engine)) {
            int visits = scan_budget < INT_MAX / 2 ? 2 * scan_budget : INT_MAX;
            done = search_picks(w, b, in, &ax, is_dma, wsem, wval, &nw, visits);
            if (done < 0)
                return -1;
            picks_learn(w, in->engine, done > 0);
        }
        /* after the waits search_picks made, every producer they do not
         * imply is above what the engine knows now: the memo below may
         * record the answer from this clock (it only grows) */
        needs = done ? 0 : search_walk(w, b, in, &ax, is_dma, kn, need, giver, scan_budget);
    }
    mm->inst = i, mm->is_dma = is_dma, mm->np = w->np, mm->found = needs;
    for (uint64_t q = needs; q; q &= q - 1) {
        int s = __builtin_ctzll(q);
        mm->val[s] = need[s], mm->giver[s] = giver[s];
    }
    if (needs && wait_needs(w, in, needs, need, giver, wsem, wval, &nw))
        return -1;
    for (int k = 0; k < nw; k++) {
        int s2 = wsem[k];
        w->waits++;
        if (k == nw - 1 && !in->preset_wait) {
            set_wait(in, s2, wval[k]);
        } else {
            w->nops++;
            if (pending_add(&w->pending, i, s2, wval[k]))
                return -1;
        }
    }
    if (in->preset_upd)
        return 0;   /* a remote signal: no local producer (its update is preset) */
    /* completion update */
    int sem = is_dma ? m->queues[in->queue].semaphore : w->engine_sem[in->engine];
    if (w->count[sem] == w->room[sem])
        return -1;   /* not counted up front (producer_sem): cannot happen */
    in->isa.sync.upd_en = 1;
    in->isa.sync.upd_sem = (uint32_t)sem;
    in->isa.sync.upd_op = ISA_SEMOP_SEM_INC;
    in->isa.sync.upd_val = 1;
    in->isa.sync.upd_at_read = 0;
    w->count[sem]++;
    /* known <= the old count < the new one; unrolled (once per producer:
     * the vector loop's own count and branch were half of its 32
     * instructions) */
#pragma GCC unroll 8
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        w->open[e] |= 1ull << sem;
    w->by_val[sem][w->count[sem]] = w->np;
    prod_t *pr = &w->prods[w->np++];
    pr->inst = i, pr->engine = (uint8_t)in->engine;
    pr->sem = (uint8_t)sem, pr->value = w->count[sem];
    pr->mark = sclk_mark(&w->clk, in->engine);
    pr->accid = ax.loaded ? (uint16_t)ax.id : 0;   /* else found at its first test */
    if (!is_dma) {   /* later instructions of this engine follow it in order */
        if (sclk_raise(&w->clk, in->engine, sem, w->count[sem]))
            return -1;
        w->open[in->engine] &= ~(1ull << sem);
    }
    if (is_dma)
        m->queues[in->queue].transfers++;
    return 0;
}

/* Drains: the issuing engine waits for its queues' last transfer; then
 * every used engine halts. */
static int append_tail(sync_walk_t *w, bir_module_t *m, bir_block_t *b, tpb_err_t *err)
{
    for (int q = 0; q < m->nqueues; q++) {
        const bir_queue_t *qu = &m->queues[q];
        if (!qu->transfers || w->clk.now[qu->engine][qu->semaphore] >= w->count[qu->semaphore])
            continue;
        bir_inst_t nop;
        bir_inst_init(&nop, BIR_NOP, ISA_OP_NOP);
        nop.engine = qu->engine;
        char name[BIR_NAME_LEN];
        sched_name_cat(name, sizeof name, "drain.", qu->name);
        bir_inst_set_name(m, &nop, name);   /* out of memory: the append refuses it */
        set_wait(&nop, qu->semaphore, w->count[qu->semaphore]);
        w->waits++;
        w->nops++;
        if (bir_block_append(b, &nop, err) < 0)
            return -1;
    }
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        if (!w->used[e])
            continue;
        bir_inst_t h;
        bir_inst_init(&h, BIR_HALT, ISA_OP_HALT);
        h.engine = e;
        h.name = "halt";
        if (bir_block_append(b, &h, err) < 0)
            return -1;
    }
    return 0;
}

int sched_synchronise(bir_module_t *m, enc_stats_t *st, tpb_err_t *err)
{
    return sched_synchronise_budget(m, st, PIX_SCAN_BUDGET, err);
}

int sched_synchronise_budget(bir_module_t *m, enc_stats_t *st, int scan_budget, tpb_err_t *err)
{
    bir_block_t *b = bir_main_block(m);
    int n = b->ninsts;
    sync_walk_t w;
    tpb_heap_trim();   /* the lowering's freed blocks: the walk takes fresh pages */
    if (walk_init(&w, m, b)) {
        walk_free(&w);
        return tpb_errf(err, "out of memory in the scheduler");
    }
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        bir_inst_t *in = &b->insts[i];
        /* the access lists sit in the arena with each instruction's name
         * and body, a few lines apart: fetched ahead, their first read
         * (the memo's comparison) no longer waits for memory */
        if (i + SYNC_PREFETCH < n)
            TPB_PREFETCH(b->insts[i + SYNC_PREFETCH].acc);
        w.used[in->engine] = true;
        if (in->nacc > 0 && !in->is_dma_desc && sync_inst(&w, m, b, i, scan_budget))
            rc = tpb_errf(err, "out of memory in the scheduler");
    }
    walk_free_search(&w);   /* the tail reads only clk.now, count and used */
    tpb_heap_trim();        /* before the Nops take fresh pages */
    if (!rc && (insert_nops(m, b, &w.pending, err) || append_tail(&w, m, b, err)))
        rc = -1;
    if (!rc && st) {
        st->sems = (unsigned)m->nsems;
        st->queues = (unsigned)m->nqueues;
        st->waits = w.waits;
        st->nops = w.nops;
        st->sync_tests = w.tests;
    }
    walk_free(&w);
    return rc;
}
