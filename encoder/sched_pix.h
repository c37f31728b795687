/* sched_pix.h - the synchronise pass's producer records and its memory
 * index of producers (sched_pix.c; the search is in schedule.c).
 *
 * The dependency search of an instruction walks, per semaphore, the
 * producers not implied by what its engine already waited for, newest
 * first.  When an engine never waits on some semaphore (a DVE chain next
 * to a stream of unrelated DMAs, say) that walk reaches back to the start
 * of the program for every instruction: quadratic.  So every producer is
 * also filed by the memory it touches: per (space, chunk of bytes,
 * read/write) a list of producers per semaphore.  A walk that runs long is
 * abandoned and redone on the index, which only visits producers that share
 * a chunk with one of the instruction's accesses.  Both searches give the
 * same answer (per semaphore: the newest conflicting producer above what is
 * known); the index just skips producers that cannot overlap.  Accesses
 * wider than PIX_WIDE_CHUNKS chunks (huge HBM ranges, the all-of-HBM range
 * of a barrier) are filed once, in a per-space "wide" list that every query
 * of that space also scans, and such an access asks every producer.
 *
 * Chunk sizes adapt to the accesses.  With one size, many small tiles or
 * rows share a chunk and each query tests them all (compile-live: 16
 * [1,4] tiles per 256-byte SBUF chunk, 16 rows per 256-byte HBM chunk).
 * So each space has levels of chunks, finest first: 16, 256 bytes (SBUF,
 * PSUM) and 16, 256, 64 KiB (HBM).  An access is filed at its level, the
 * finest one where it spans at most PIX_SMALL_MAX or PIX_FINE_MAX chunks
 * (the coarsest otherwise), in that level's "exact" lists.  A query at level L reads
 * the exact lists of levels L and coarser (its chunks there are as few as
 * at L) and level L's "summary" lists, which hold every producer filed at
 * a finer level, by their level-L chunks: whatever overlaps it shares a
 * chunk of a list it reads.  A summary level is kept only once a query
 * needs it (pix_need_summary fills it from the finer exact lists then):
 * kernels whose accesses are all small file each access once. */
#ifndef TPB_SCHED_PIX_H
#define TPB_SCHED_PIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bir.h"
#include "hugepage.h"
#include "sched_pool.h"

/* A completed producer: semaphore sem reaches value at its completion;
 * its vector clock is its engine's clock at `mark` plus that token.  A
 * DMA producer's semaphore is its queue's, any other's its engine's. */
typedef struct {
    int inst;        /* index in the ORIGINAL order */
    uint32_t mark;   /* sclk_mark of its engine's clock when it was issued */
    uint32_t value;
    uint8_t sem;
    uint8_t engine;
    uint16_t accid;  /* its access-set id (sched_conflict.h); 0: not known yet */
} prod_t;
_Static_assert(sizeof(prod_t) == 16, "prod_t: 16 bytes per producer");

_Static_assert(BIR_MAX_SEMS <= 64, "semaphore sets are 64-bit masks");
#define PIX_WIDE_CHUNKS 4096u   /* coarsest chunks: all of a 192 KiB SBUF partition; 256 MiB of HBM */
#define PIX_LEVELS 3            /* at most, per space (HBM) */
#define PIX_SMALL_MAX 4u        /* level 0: at most 64 bytes in 16-byte chunks */
#define PIX_FINE_MAX 16u        /* HBM level 1: at most 4 KiB in 256-byte chunks */
#define PIX_LAST_LISTS 8        /* pix_last_t: lists remembered per producer */
#define PIX_RECENT 4            /* pix_recent_t: producers remembered per semaphore */
#define PIX_RECENT_MISS_RUN 32  /* pindex_t.recent_rest: misses before a rest */
#define PIX_RECENT_REST 256     /* the first rest (producers) */
#define PIX_RECENT_REST_MAX 16384
#define PIX_SLAB 8              /* a list's storage past its inline entries: entries, from a slab */
#define PIX_SLAB_BLOCKS 1024    /* such blocks per slab */
#define PIX_HINT_MAX ((size_t)1 << 17)   /* pix_reserve: at most 4 MiB of hash table up front */
/* The list kinds of a key: exact lists of level l (code l), the wide
 * list, summary lists of level l (PIX_SUM + l). */
enum { PIX_WIDE = 3, PIX_SUM = 4 };

/* A list of producer indices.  Most lists hold one or two (compile-live:
 * 12 000 lists of one entry): those sit inline, in the 8 bytes a pointer
 * to storage would take, so opening a list writes no other memory; a
 * list that outgrows them moves to a slab block, then a block of its own. */
#define PIX_INLINE 2
typedef struct {
    int n, cap;                    /* cap 0: the entries are inline (at most PIX_INLINE) */
    union {
        int *heap;
        int inl[PIX_INLINE];
    } u;
} ivec_t;
_Static_assert(sizeof(ivec_t) == 16, "ivec_t: the inline entries fill the pointer's room");

/* The entries of list l. */
static inline int *iv_v(ivec_t *l) { return l->cap ? l->u.heap : l->u.inl; }
static inline const int *iv_cv(const ivec_t *l) { return l->cap ? l->u.heap : l->u.inl; }

/* The lists of one chunk, one per semaphore with producers there (most
 * chunks have one or two: 48 bytes a chunk, not one list per semaphore). */
typedef struct {
    uint64_t nonempty;             /* bit s: a list for semaphore s (never emptied) */
    int nl, capl;                  /* lists; capl 0: the two inline ones */
    union {
        ivec_t inl[2];
        ivec_t *heap;
    } u;                           /* the lists (producer indices, ascending), by semaphore */
} pbucket_t;

/* The lists of bucket b, by ascending semaphore. */
static inline ivec_t *pix_lists(const pbucket_t *b)
{
    return b->capl ? b->u.heap : (ivec_t *)b->u.inl;
}

/* The list of semaphore s in bucket b (bit s of b->nonempty set): its rank
 * among the bucket's few semaphores (a loop, not a popcount: the baseline
 * x86-64 build has no popcnt instruction and would call libgcc). */
static inline ivec_t *pix_list(const pbucket_t *b, int s)
{
    if (b->nl == 1)
        return (ivec_t *)b->u.inl;   /* the common case */
    int r = 0;
    for (uint64_t below = b->nonempty & ((1ull << s) - 1); below; below &= below - 1)
        r++;
    return &pix_lists(b)[r];
}

/* A recent producer filed on a semaphore and the lists it went to.  A
 * next producer on that semaphore with exactly its accesses would be filed
 * in exactly those lists and drop it from each (the same accesses: the
 * newer one dominates); when it is still the last entry of every one, the
 * new producer just takes its place there, without hashing a key or
 * comparing accesses per list.  Loop bodies that rotate a few buffers
 * repeat the accesses of a producer a few back on their semaphore. */
typedef struct {
    int p;                         /* -1: none, or its lists are unknown */
    int nlists;
    uint64_t fp;                   /* pix_fingerprint of its accesses */
    uint32_t gen;                  /* pindex_t.gen when list[] was taken */
    int bucket[PIX_LAST_LISTS];    /* indices into pindex_t.buckets */
    ivec_t *list[PIX_LAST_LISTS];  /* the lists themselves, while gen holds */
} pix_last_t;

typedef struct {
    pix_last_t e[PIX_RECENT];
    unsigned next;                 /* the entry the next slow filing overwrites */
    unsigned used;                 /* the entry filed or replaced last */
    /* pix_add's look here rests after PIX_RECENT_MISS_RUN misses in a row
     * on this semaphore (every producer's accesses new, as compile-live's
     * tiles): its next `rest` producers are filed list by list, which
     * leaves the lists as a replacement would (the duplicate drop removes
     * the same entry); the rest doubles while the misses go on, a hit
     * (on any semaphore: hits_seen, the index's count at this run's
     * start) ends it */
    uint16_t misses, rest, backoff;
    uint64_t hits_seen;
} pix_recent_t;

/* A hash table slot: a key and its bucket, side by side (a probe reads
 * one cache line, and the table is one block). */
typedef struct {
    uint64_t key;                  /* 0 = empty */
    int bucket;                    /* index into pindex_t.buckets */
} pix_slot_t;

/* A slab of list storage: PIX_SLAB entries per block. */
typedef struct {
    int *v;
    int blocks;
} pix_slab_t;

typedef struct {
    pix_slot_t *slots;             /* open addressing */
    size_t cap, n;
    pbucket_t *buckets;
    int nb, capb;
    size_t bucket_bytes;           /* the buckets' block (tpb_array_free) */
    bool oom;
    /* any[space * 2 + write], bit code: a list of that code exists (no
     * lookups for kinds a kernel never files) */
    uint8_t any[16];
    uint8_t sum_on[8];             /* [space], bit l: summary level l is kept */
    /* A list past its inline entries takes its next PIX_SLAB from a
     * slab, not a malloc each; one that outgrows them moves to its own
     * block. */
    pix_slab_t *slabs;
    int nslabs, capslabs, slab_used;   /* blocks taken from the newest slab */
    size_t nheap;                  /* lists and bucket list arrays in blocks of their own */
    /* Bumped whenever a list header may move (the buckets moved, or a
     * list was added to a bucket): a remembered list pointer is used only
     * while it holds. */
    uint32_t gen;
    /* [sem]: made at sem's first slow filing (NULL until then).  Not
     * inline: 23 KiB cleared and set up per compile, most of which never
     * builds the index (compile-mixed), cost a small compile ~70 k
     * instructions and stack pages. */
    pix_recent_t *recent[BIR_MAX_SEMS];
    uint64_t recent_hits;          /* producers filed through `recent` (tests) */
    uint64_t recent_rested;        /* producers filed without that look (tests) */
    size_t hint;                   /* lists expected (pix_reserve), at most PIX_HINT_MAX */
    unsigned rehashes;             /* hash tables built (tests) */
    sched_pool_t *pool;            /* the large blocks' pool (NULL: none) */
} pindex_t;

/* What the index needs to compare a new producer with filed ones. */
typedef struct {
    const bir_inst_t *insts;   /* the block, original order */
    const prod_t *prods;   /* equal non-zero accid: equal accesses (a shortcut) */
} pix_ctx_t;

/* Chunks c0..c1 of one index level. */
typedef struct {
    unsigned level;
    uint64_t c0, c1;
} pix_range_t;

/* The key of a list: chunk (below 2^48), code (0..7), space, write. */
static inline uint64_t pix_key(unsigned space, unsigned code, uint64_t chunk, bool write)
{
    return (((((chunk << 3) | code) << 3) | (space & 7u)) << 1 | (write ? 1u : 0u)) + 1;
}
/* pix_key(s, c, chunk + 1, w) - pix_key(s, c, chunk, w): a walk over
 * chunks steps its key instead of building each one. */
#define PIX_KEY_CHUNK ((uint64_t)1 << 7)

/* Two instructions touching exactly the same ranges conflict with the
 * same instructions.  The fields of an access fill its 16 bytes (no
 * padding bits), so equal fields are equal bytes: compared as two words,
 * not field by field out of the bit-fields. */
_Static_assert(sizeof(bir_access_t) == 16, "bir_access_t: 8+8+8+48+48+8 bits, no padding");
static inline bool pix_same_accesses(const bir_inst_t *a, const bir_inst_t *b)
{
    if (a->nacc != b->nacc)
        return false;
    for (int i = 0; i < a->nacc; i++) {
        uint64_t x[2], y[2];
        memcpy(x, &a->acc[i], sizeof x);
        memcpy(y, &b->acc[i], sizeof y);
        if (x[0] != y[0] || x[1] != y[1])
            return false;
    }
    return true;
}

/* A hash of an instruction's accesses: equal accesses, equal hashes, so
 * unequal hashes rule a match out without reading the other instruction
 * (compile-live's producers all differ: each recent one was read and
 * compared for every new one).  Worked out only where the access-set ids
 * leave a match open (a loop body's producers match by id, most of
 * compile-mix3's).  All of the accesses, not a word of the first:
 * producers that share their first access still differ here
 * (compile-mix3 took 4 ms more with one word, on fewer instructions). */
static inline uint64_t pix_fingerprint(const bir_inst_t *in)
{
    uint64_t h = (uint64_t)in->nacc;
    for (int i = 0; i < in->nacc; i++) {
        uint64_t x[2];
        memcpy(x, &in->acc[i], sizeof x);
        h = (h ^ x[0]) * 0x9e3779b97f4a7c15ull;
        h = (h ^ x[1]) * 0x9e3779b97f4a7c15ull;
    }
    return h;
}

static inline unsigned pix_nlevels(unsigned space) { return space == ISA_SPACE_HBM ? 3 : 2; }

/* log2 of the chunk size of level l (16 B, 256 B, 64 KiB). */
static inline unsigned pix_shift(unsigned l) { return 4u << l; }

/* The coarsest level's shift (what "wide" is measured in). */
static inline unsigned pix_chunk_shift(unsigned space) { return pix_shift(pix_nlevels(space) - 1); }

/* The home slot of key k in a table of cap slots (a power of 2, at least
 * PIX_RUN).  Neighbouring chunks of one list kind keep neighbouring slots:
 * the rest of the key (its chunk's low PIX_RUN_BITS bits cleared) is
 * hashed to where a run of PIX_RUN slots starts, and those bits pick the
 * slot in the run.  A kernel walking its tiles and rows in address order
 * (compile-live: a new tile and row per DMA) then probes a few cache lines
 * over and over; a hash of the whole key sent every probe of its 0.5 MiB
 * table to a line of its own, a cache miss that was four fifths of the
 * search's time.  The runs start anywhere (the product's high bits), not
 * at multiples of PIX_RUN: sparse runs (one tile in four chunks) then
 * interleave instead of piling onto the same aligned runs. */
#define PIX_RUN_BITS 4
#define PIX_RUN (1u << PIX_RUN_BITS)
_Static_assert(((PIX_SUM + PIX_LEVELS - 1) << 4 | 15) < 127,
               "pix_key: k >> 7 is the chunk (the +1 never carries into it)");
static inline size_t pix_hash(uint64_t k, size_t cap)
{
    uint64_t run = (k & ~((uint64_t)(PIX_RUN - 1) << 7)) * 0x9e3779b97f4a7c15ull;
    return (size_t)((run >> 29) + (k >> 7 & (PIX_RUN - 1))) & (cap - 1);
}

/* The bucket of key, or NULL when absent. */
static inline pbucket_t *pix_find(const pindex_t *x, uint64_t key)
{
    if (x->cap) {
        for (size_t i = pix_hash(key, x->cap);; i = (i + 1) & (x->cap - 1)) {
            if (x->slots[i].key == key)
                return &x->buckets[x->slots[i].bucket];
            if (!x->slots[i].key)
                break;
        }
    }
    return NULL;
}

/* Where a non-empty access is filed: its level and its chunks there (code
 * = level), the finest level where it spans at most PIX_SMALL_MAX (level
 * 0) or PIX_FINE_MAX (level 1) chunks, else the coarsest; code PIX_WIDE
 * when it spans PIX_WIDE_CHUNKS coarsest chunks or more. */
static inline pix_range_t pix_place(const bir_access_t *a)
{
    uint64_t lo = a->lo, last = (uint64_t)a->hi - 1;   /* hi > lo here: no wrap */
    if ((last >> 4) - (lo >> 4) < PIX_SMALL_MAX)
        return (pix_range_t){0, lo >> 4, last >> 4};
    unsigned top = pix_chunk_shift(a->space);
    if (top == 8 || (last >> 8) - (lo >> 8) < PIX_FINE_MAX) {
        if ((last >> 8) - (lo >> 8) >= PIX_WIDE_CHUNKS)   /* SBUF, PSUM: level 1 is the top */
            return (pix_range_t){PIX_WIDE, 0, 0};
        return (pix_range_t){1, lo >> 8, last >> 8};
    }
    if ((last >> 16) - (lo >> 16) >= PIX_WIDE_CHUNKS)
        return (pix_range_t){PIX_WIDE, 0, 0};
    return (pix_range_t){2, lo >> 16, last >> 16};
}

/* Chunks r (of level `from`) as chunks of the coarser level `to`, code `code`. */
static inline pix_range_t pix_coarsen(pix_range_t r, unsigned from, unsigned code, unsigned to)
{
    unsigned d = pix_shift(to) - pix_shift(from);
    return (pix_range_t){code, r.c0 >> d, r.c1 >> d};
}

/* The codes of the lists of one kind that a query by a non-wide access
 * at level `level` reads (the wide list aside), as a bit set: the exact
 * lists of that level and coarser ones, the summary of that level; only
 * codes with a list (`any`: x->any of the space and kind, where no level
 * above the space's top is set).  Summary `level` must be kept
 * (pix_need_summary).  One mask, not a loop over the levels: most queries
 * read one code. */
static inline unsigned pix_query_codes(unsigned any, unsigned level)
{
    unsigned exact = (1u << PIX_WIDE) - (1u << level);   /* levels level..PIX_LEVELS-1 */
    return any & (exact | 1u << (PIX_SUM + level));
}

/* The chunks of code `code` (of pix_query_codes) that a query at place pl
 * reads: pl's chunks coarsened to an exact level, or pl's own in the
 * summary of its level. */
static inline pix_range_t pix_code_range(pix_range_t pl, unsigned code)
{
    if (code >= PIX_SUM || code == pl.level)   /* pl's own chunks (no shift to work out) */
        return (pix_range_t){code, pl.c0, pl.c1};
    return pix_coarsen(pl, pl.level, code, code);
}

void pix_init(pindex_t *x);
/* The pool room the large blocks of an index reserved for `lists` lists
 * (pix_reserve) can take: its hinted hash table, buckets and first slab. */
size_t pix_pool_bytes(size_t lists);
void pix_free(pindex_t *x);
/* Expect about `lists` lists (the block's non-empty accesses: each opens
 * at least one): the hash table and bucket array, once past their first
 * small size, grow to that at once. */
void pix_reserve(pindex_t *x, size_t lists);
/* File producer p (instruction in, semaphore sem) under every chunk its
 * accesses touch; out of memory sets x->oom (the index is then unused). */
void pix_add(pindex_t *x, const bir_inst_t *in, int sem, int p, const pix_ctx_t *ctx);
/* Keep summary level l of space from now on (filled from the finer exact
 * lists the first time); a query at level l needs it.  Out of memory sets
 * x->oom. */
void pix_summary_fill(pindex_t *x, unsigned space, unsigned l, const pix_ctx_t *ctx);
static inline void pix_need_summary(pindex_t *x, unsigned space, unsigned l, const pix_ctx_t *ctx)
{
    if (l > 0 && !(x->sum_on[space & 7u] >> l & 1u))
        pix_summary_fill(x, space, l, ctx);
}

#endif
