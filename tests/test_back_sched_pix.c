/* The synchronise pass's producer index (encoder/sched_pix.c): filing a
 * producer through the per-semaphore memo of recent producers (matched by
 * access-set id or by comparing the accesses) must leave every list
 * exactly as the list-by-list filing with its duplicate drop (a model
 * here) leaves it, and the memo must actually be taken; lists start
 * inline, move to slab blocks and then out as they grow; a reserved index grows its
 * hash table straight to the hint after its first small one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sched_pix.h"

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

#define NPROD 3000
#define NSEM 5
#define MODEL_KEYS 512
#define DEDUP 4   /* the list-by-list rule: the last 4 entries are compared */

/* One index list of the model: key, semaphore, producer indices. */
typedef struct {
    uint64_t key;
    int sem;
    int n;
    int v[NPROD];
} mlist_t;

typedef struct {
    mlist_t *l;
    int n;
    bir_inst_t *insts;
    prod_t *prods;
} model_t;

static mlist_t *model_list(model_t *m, uint64_t key, int sem)
{
    for (int i = 0; i < m->n; i++)
        if (m->l[i].key == key && m->l[i].sem == sem)
            return &m->l[i];
    assert_true(m->n < MODEL_KEYS);
    mlist_t *l = &m->l[m->n++];
    l->key = key, l->sem = sem, l->n = 0;
    return l;
}

/* The filing rule as specified: per list, drop the newest of the last
 * DEDUP entries with exactly p's accesses, then append p (once). */
static void model_append(model_t *m, uint64_t key, int sem, int p)
{
    mlist_t *l = model_list(m, key, sem);
    if (l->n && l->v[l->n - 1] == p)
        return;
    const bir_inst_t *in = &m->insts[m->prods[p].inst];
    for (int k = l->n - 1; k >= 0 && k >= l->n - DEDUP; k--)
        if (pix_same_accesses(in, &m->insts[m->prods[l->v[k]].inst])) {
            memmove(&l->v[k], &l->v[k + 1], (size_t)(l->n - k - 1) * sizeof l->v[0]);
            l->n--;
            break;
        }
    l->v[l->n++] = p;
}

static void model_add(model_t *m, int sem, int p)
{
    const bir_inst_t *in = &m->insts[m->prods[p].inst];
    for (int a = 0; a < in->nacc; a++) {
        const bir_access_t *ac = &in->acc[a];
        if (ac->hi <= ac->lo)
            continue;
        pix_range_t pl = pix_place(ac);   /* no summary kept: no query here */
        if (pl.level == PIX_WIDE) {
            model_append(m, pix_key(ac->space, PIX_WIDE, 0, ac->write), sem, p);
            continue;
        }
        for (uint64_t c = pl.c0; c <= pl.c1; c++)
            model_append(m, pix_key(ac->space, pl.level, c, ac->write), sem, p);
    }
}

/* One of a few access patterns: a rotating set of SBUF tiles (one or two
 * chunks, some sharing a chunk), small and large HBM rows, an all-of-HBM
 * range, an empty range, a range of one chunk that differs per producer
 * (its lists grow). */
static bir_access_t pattern(int k, bool write, int p)
{
    bir_access_t a;
    memset(&a, 0, sizeof a);
    a.write = write;
    a.space = ISA_SPACE_SBUF, a.p0 = 0, a.p1 = 128;
    switch (k) {
    case 0: case 1: case 2: case 3:   /* 128-byte tiles, two per 256-byte chunk */
        a.lo = (uint64_t)k * 128, a.hi = a.lo + 128;
        break;
    case 4: case 5:                   /* 512-byte tiles over two chunks */
        a.lo = 1024 + (uint64_t)(k - 4) * 512, a.hi = a.lo + 512;
        break;
    case 6: case 7:                   /* small HBM rows: level 0 (16-byte chunks) */
        a.space = ISA_SPACE_HBM, a.p1 = 1;
        a.lo = 4096 + (uint64_t)(k - 6) * 64, a.hi = a.lo + 64;
        break;
    case 8:                           /* a large HBM range: level 2 (64 KiB chunks) */
        a.space = ISA_SPACE_HBM, a.p1 = 1;
        a.lo = 0, a.hi = 3u << 16;
        break;
    case 9:                           /* all of HBM: the wide list */
        a.space = ISA_SPACE_HBM, a.p1 = 1;
        a.lo = 0, a.hi = BIR_ACCESS_END;
        break;
    case 11:                          /* 128 bytes somewhere in one 256-byte chunk: a new set */
        a.lo = 2048 + (uint64_t)(p * 8 % 120), a.hi = a.lo + 128;
        break;
    default:                          /* touches nothing */
        a.lo = 64, a.hi = 64;
        break;
    }
    return a;
}

/* Random producers whose accesses repeat with short periods (a loop body
 * rotating buffers) and sometimes change: the index and the model hold
 * the same lists.  Returns how many were filed through the memo. */
/* An id per distinct access set (1, 2, ...), or 0 now and then (not
 * known), as the pass's access-set ids. */
static uint32_t set_id(const bir_inst_t *insts, int p, uint32_t *ids, uint32_t *nids, uint32_t *st)
{
    if (lcg(st) % 5 == 0)
        return 0;
    for (int q = 0; q < p; q++)
        if (ids[q] && pix_same_accesses(&insts[p], &insts[q]))
            return ids[q];
    return ++*nids;
}

static uint64_t run_random(uint32_t seed, int npat, bool with_ids, int *longest_out)
{
    model_t m;
    m.l = calloc(MODEL_KEYS, sizeof *m.l);
    m.insts = calloc(NPROD, sizeof *m.insts);
    m.prods = calloc(NPROD, sizeof *m.prods);
    bir_access_t (*acc)[2] = calloc(NPROD, sizeof *acc);   /* the instructions' accesses */
    assert_non_null(acc);
    assert_non_null(m.l);
    assert_non_null(m.insts);
    assert_non_null(m.prods);
    m.n = 0;
    pindex_t x;
    pix_init(&x);
    uint32_t *ids = calloc(NPROD, sizeof *ids), nids = 0;
    assert_non_null(ids);
    pix_ctx_t ctx = {m.insts, m.prods};
    uint32_t st = seed;
    int period[NSEM];
    for (int s = 0; s < NSEM; s++)
        period[s] = 1 + (int)(lcg(&st) % 3);
    uint32_t count[NSEM] = {0};
    for (int p = 0; p < NPROD; p++) {
        int sem = (int)(lcg(&st) % NSEM);
        bir_inst_t *in = &m.insts[p];
        in->nacc = 1 + (int)(lcg(&st) % 2);
        int base = (int)((count[sem] % (uint32_t)period[sem]) + (uint32_t)sem) % npat;
        if (lcg(&st) % 4 == 0)   /* now and then something else */
            base = (int)(lcg(&st) % 13);
        for (int a = 0; a < in->nacc; a++)
            acc[p][a] = pattern(base >= 11 ? 11 : (base + 3 * a) % 11, a == 0, p);
        in->acc = acc[p];
        m.prods[p] = (prod_t){.inst = p, .sem = (uint8_t)sem, .value = ++count[sem]};
        ids[p] = set_id(m.insts, p, ids, &nids, &st);
        m.prods[p].accid = with_ids ? (uint16_t)ids[p] : 0;
        pix_add(&x, in, sem, p, &ctx);
        model_add(&m, sem, p);
    }
    assert_false(x.oom);
    size_t keys = 0;
    int longest = 0;
    for (int i = 0; i < m.n; i++) {
        const mlist_t *l = &m.l[i];
        longest = l->n > longest ? l->n : longest;
        const pbucket_t *b = pix_find(&x, l->key);
        assert_non_null(b);
        const ivec_t *v = pix_list(b, l->sem);
        assert_int_equal(v->n, l->n);
        assert_memory_equal(iv_cv(v), l->v, (size_t)l->n * sizeof l->v[0]);
        assert_true((b->nonempty >> l->sem) & 1);
        bool first = true;   /* distinct keys */
        for (int j = 0; j < i; j++)
            first &= m.l[j].key != l->key;
        keys += first;
    }
    assert_int_equal(x.n, keys);
    assert_true(x.nslabs >= 1);
    *longest_out = longest > *longest_out ? longest : *longest_out;
    uint64_t hits = x.recent_hits;
    pix_free(&x);
    free(m.l);
    free(m.insts);
    free(m.prods);
    free(acc);
    free(ids);
    return hits;
}

static void test_pix_recent_matches_list_filing(void **state)
{
    (void)state;
    uint64_t hits = 0;
    int longest = 0;
    for (uint32_t seed = 1; seed <= 8; seed++)
        for (int npat = 2; npat <= 11; npat += 3)
            hits += run_random(seed, npat, seed & 1, &longest);
    assert_true(hits > 1000);   /* the memo was taken, not only the long way */
    assert_true(longest > 2 * PIX_SLAB);   /* lists outgrew their slab block */
}

/* The look at the recent producers rests after a run of misses (every
 * producer's accesses new): the producers filed list by list meanwhile
 * leave the lists exactly as the model (and a replacement) would, and
 * once the rest is over a repeating body is filed through the memo again.
 * Two semaphores; phases of new accesses (a partition each, one chunk),
 * a rotating set of three tiles, new accesses again. */
static void test_pix_recent_rest_matches_list_filing(void **state)
{
    (void)state;
    model_t m;
    m.l = calloc(MODEL_KEYS, sizeof *m.l);
    m.insts = calloc(NPROD, sizeof *m.insts);
    m.prods = calloc(NPROD, sizeof *m.prods);
    bir_access_t *acc = calloc(NPROD, sizeof *acc);
    assert_non_null(m.l);
    assert_non_null(m.insts);
    assert_non_null(m.prods);
    assert_non_null(acc);
    m.n = 0;
    pindex_t x;
    pix_init(&x);
    pix_ctx_t ctx = {m.insts, m.prods};
    uint32_t count[2] = {0, 0};
    for (int p = 0; p < NPROD; p++) {
        int sem = p & 1;
        bool repeat = p >= NPROD / 3 && p < 2 * NPROD / 3;
        bir_access_t *a = &acc[p];
        a->write = true, a->space = ISA_SPACE_SBUF;
        if (repeat) {   /* three tiles in turn (a chunk each): the memo's case */
            a->lo = (uint64_t)(p / 2 % 3) * 256, a->hi = a->lo + 128, a->p0 = 0, a->p1 = 128;
        } else {        /* a partition of its own among the last 100: all new */
            a->lo = 0, a->hi = 128, a->p0 = (unsigned)(p % 100), a->p1 = a->p0 + 1;
        }
        m.insts[p].acc = a, m.insts[p].nacc = 1;
        m.prods[p] = (prod_t){.inst = p, .sem = (uint8_t)sem, .value = ++count[sem]};
        pix_add(&x, &m.insts[p], sem, p, &ctx);
        model_add(&m, sem, p);
    }
    assert_false(x.oom);
    for (int i = 0; i < m.n; i++) {
        const mlist_t *l = &m.l[i];
        const pbucket_t *b = pix_find(&x, l->key);
        assert_non_null(b);
        const ivec_t *v = pix_list(b, l->sem);
        assert_int_equal(v->n, l->n);
        assert_memory_equal(iv_cv(v), l->v, (size_t)l->n * sizeof l->v[0]);
    }
    assert_true(x.recent_rested >= PIX_RECENT_REST);   /* it rested */
    assert_true(x.recent_hits > 100);   /* and looked again */
    pix_free(&x);
    free(m.l);
    free(m.insts);
    free(m.prods);
    free(acc);
}

/* n producers, `per` to a 16-byte SBUF chunk, each with accesses of its
 * own (per 1: compile-live's tiles), on the chunk's semaphore: every chunk
 * opens a list of `per` entries.  Returns how many hash tables were built;
 * the lists are checked. */
static unsigned run_distinct_chunks_slabs(int n, int per, size_t hint, int *nslabs)
{
    bir_inst_t *insts = calloc((size_t)n, sizeof *insts);
    prod_t *prods = calloc((size_t)n, sizeof *prods);
    bir_access_t *acc = calloc((size_t)n, sizeof *acc);
    assert_non_null(insts);
    assert_non_null(prods);
    assert_non_null(acc);
    pindex_t x;
    pix_init(&x);
    pix_reserve(&x, hint);
    pix_ctx_t ctx = {insts, prods};
    for (int p = 0; p < n; p++) {
        int c = p / per, sem = c % NSEM;
        acc[p] = pattern(0, true, p);
        acc[p].lo = (uint64_t)c * 16 + (uint64_t)(p % per), acc[p].hi = acc[p].lo + 1;
        insts[p].acc = &acc[p], insts[p].nacc = 1;
        prods[p] = (prod_t){.inst = p, .sem = (uint8_t)sem, .value = (uint32_t)p + 1};
        pix_add(&x, &insts[p], sem, p, &ctx);
    }
    assert_false(x.oom);
    assert_int_equal(x.n, n / per);
    for (int c = 0; c < n / per; c++) {
        const pbucket_t *b = pix_find(&x, pix_key(ISA_SPACE_SBUF, 0, (uint64_t)c, true));
        assert_non_null(b);
        assert_int_equal(b->nonempty, 1ull << (c % NSEM));
        const ivec_t *v = pix_list(b, c % NSEM);
        assert_int_equal(v->n, per);
        for (int k = 0; k < per; k++)
            assert_int_equal(iv_cv(v)[k], c * per + k);
    }
    unsigned r = x.rehashes;
    *nslabs = x.nslabs;
    pix_free(&x);
    free(insts);
    free(prods);
    free(acc);
    return r;
}

static unsigned run_distinct_chunks(int n, size_t hint)
{
    int nslabs;
    return run_distinct_chunks_slabs(n, 1, hint, &nslabs);
}

static void test_pix_reserve_grows_once(void **state)
{
    (void)state;
    /* unreserved: 1 024, 2 048, ... 16 384 slots; reserved: the first
     * table, then one for the hint (also when the hint is short) */
    assert_true(run_distinct_chunks(6000, 0) >= 5);
    assert_int_equal(run_distinct_chunks(6000, 6000), 2);
    assert_int_equal(run_distinct_chunks(6000, 4000), 3);
    assert_int_equal(run_distinct_chunks(300, 6000), 1);   /* small kernels: the small table only */
}

/* Past TPB_ARRAY_MAP_MIN the table (a fresh, zero mapping), the buckets
 * and the list storage are huge-page blocks: filed and found the same,
 * reserved or grown step by step across the threshold.  Lists of one or
 * two entries take no list storage (inline); longer ones take slab
 * blocks: reserved, the small first slab and one for the hint. */
static void test_pix_large_blocks(void **state)
{
    (void)state;
    int nslabs = -1;
    assert_int_equal(run_distinct_chunks_slabs(40000, 1, 40000, &nslabs), 2);
    assert_int_equal(nslabs, 0);
    assert_int_equal(run_distinct_chunks_slabs(80000, PIX_INLINE, 40000, &nslabs), 2);
    assert_int_equal(nslabs, 0);
    int per = PIX_INLINE + 1;
    assert_int_equal(run_distinct_chunks_slabs(40000 * per, per, 40000, &nslabs), 2);
    assert_int_equal(nslabs, 2);
    assert_true(run_distinct_chunks_slabs(40000 * per, per, 0, &nslabs) >= 7);
    assert_int_equal(nslabs, (40000 + PIX_SLAB_BLOCKS - 1) / PIX_SLAB_BLOCKS);
    assert_int_equal(run_distinct_chunks_slabs(3000 * per, per, 3000, &nslabs), 2);   /* below the threshold */
    assert_int_equal(nslabs, 2);
}

/* Neighbouring chunks of one list kind have neighbouring home slots, in
 * runs of PIX_RUN (a walk over tiles in address order probes a few cache
 * lines); the runs of other chunks and other kinds spread over the table. */
static void test_pix_hash_keeps_neighbours(void **state)
{
    (void)state;
    const size_t cap = (size_t)1 << 15;
    unsigned same_run = 0, runs_apart = 0, kinds_apart = 0;
    for (uint64_t c = 4096; c < 4096 + 64 * PIX_RUN; c++)
        for (unsigned kind = 0; kind < 4; kind++) {
            unsigned space = kind & 1 ? ISA_SPACE_SBUF : ISA_SPACE_HBM;
            bool write = kind & 2;
            assert_int_equal(pix_key(space, 0, c + 1, write) - pix_key(space, 0, c, write),
                             PIX_KEY_CHUNK);
            size_t h = pix_hash(pix_key(space, 0, c, write), cap);
            size_t next = pix_hash(pix_key(space, 0, c + 1, write), cap);
            if ((c + 1) % PIX_RUN) {
                assert_int_equal(next, (h + 1) & (cap - 1));
                same_run++;
            } else {
                runs_apart += next != ((h + 1) & (cap - 1));
            }
            /* the other kind at the same chunk: (almost always) another run */
            size_t other = pix_hash(pix_key(space, 0, c, !write), cap);
            kinds_apart += ((other - h) & (cap - 1)) >= PIX_RUN && ((h - other) & (cap - 1)) >= PIX_RUN;
        }
    assert_int_equal(same_run, 4 * 64 * (PIX_RUN - 1));
    assert_true(runs_apart > 4 * 64 * 9 / 10);   /* a new run: (almost always) elsewhere */
    assert_true(kinds_apart > 4 * 64 * PIX_RUN * 9 / 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pix_recent_matches_list_filing),
        cmocka_unit_test(test_pix_recent_rest_matches_list_filing),
        cmocka_unit_test(test_pix_reserve_grows_once),
        cmocka_unit_test(test_pix_large_blocks),
        cmocka_unit_test(test_pix_hash_keeps_neighbours),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
