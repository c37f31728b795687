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
 * HBM has two chunk sizes.  With only 64 KiB chunks, thousands of small
 * transfers to separate rows of one tensor share a chunk and each query
 * tests them all (quadratic).  So a small HBM access (at most PIX_FINE_MAX
 * 256-byte chunks) is filed per fine chunk (level FINE) and per 64 KiB
 * chunk (level SMALL), a larger one per 64 KiB chunk only (level BIG).  A
 * small query looks up FINE and BIG, a large one BIG and SMALL: whatever
 * overlaps it shares a chunk of a level it reads. */
#ifndef TPB_SCHED_PIX_H
#define TPB_SCHED_PIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bir.h"

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
#define PIX_WIDE_CHUNKS 4096u   /* all of a 192 KiB SBUF partition; 256 MiB of HBM */
#define PIX_WIDE_CHUNK ((1ull << 56) - 1)
#define PIX_FINE_MAX 16u        /* HBM: 4 KiB in 256-byte chunks */
#define PIX_LAST_LISTS 8        /* pix_last_t: lists remembered per producer */
#define PIX_RECENT 4            /* pix_recent_t: producers remembered per semaphore */
#define PIX_SLAB 8              /* a list's first storage: entries, from a slab */
#define PIX_SLAB_BLOCKS 1024    /* such blocks per slab */
enum { PIX_FINE, PIX_BIG, PIX_SMALL };   /* levels (SBUF and PSUM use FINE only) */

typedef struct {
    int *v;
    int n, cap;
} ivec_t;

typedef struct {
    ivec_t by_sem[BIR_MAX_SEMS];   /* producer indices, ascending */
    uint64_t nonempty;             /* bit s: by_sem[s].n > 0 */
} pbucket_t;

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
    int bucket[PIX_LAST_LISTS];    /* indices into pindex_t.buckets */
} pix_last_t;

typedef struct {
    pix_last_t e[PIX_RECENT];
    unsigned next;                 /* the entry the next slow filing overwrites */
    unsigned used;                 /* the entry filed or replaced last */
} pix_recent_t;

typedef struct {
    uint64_t *keys;                /* open addressing; 0 = empty */
    int *slot_bucket;
    size_t cap, n;
    pbucket_t *buckets;
    int nb, capb;
    bool oom;
    uint16_t wide_any;             /* bit space * 2 + write: a wide list exists */
    /* Most lists stay short (compile-live: 12 000 lists of one or two
     * entries): their first PIX_SLAB entries come from slabs, not one
     * malloc each; a list that outgrows them moves to its own block. */
    int **slabs;
    int nslabs, capslabs, slab_used;   /* blocks taken from the newest slab */
    pix_recent_t recent[BIR_MAX_SEMS];
    uint64_t recent_hits;          /* producers filed through `recent` (tests) */
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

static inline uint64_t pix_key(unsigned space, unsigned level, uint64_t chunk, bool write)
{
    return (((((chunk << 2) | level) << 3) | (space & 7u)) << 1 | (write ? 1u : 0u)) + 1;
}

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

static inline unsigned pix_chunk_shift(unsigned space) { return space == ISA_SPACE_HBM ? 16 : 8; }

static inline size_t pix_hash(uint64_t k, size_t cap)
{
    k *= 0x9e3779b97f4a7c15ull;
    return (size_t)(k ^ k >> 31) & (cap - 1);
}

/* The bucket of key, or NULL when absent. */
static inline pbucket_t *pix_find(const pindex_t *x, uint64_t key)
{
    if (x->cap) {
        for (size_t i = pix_hash(key, x->cap);; i = (i + 1) & (x->cap - 1)) {
            if (x->keys[i] == key)
                return &x->buckets[x->slot_bucket[i]];
            if (!x->keys[i])
                break;
        }
    }
    return NULL;
}

/* The wide list's bucket of (space, write), or NULL (most kernels have
 * none: no hash lookup then). */
static inline pbucket_t *pix_find_wide(const pindex_t *x, unsigned space, bool write)
{
    if (!(x->wide_any >> ((space & 7u) * 2 + (write ? 1u : 0u)) & 1u))
        return NULL;
    return pix_find(x, pix_key(space, PIX_FINE, PIX_WIDE_CHUNK, write));
}

/* Whether access a spans PIX_WIDE_CHUNKS chunks or more; its chunks. */
static inline bool pix_access_wide(const bir_access_t *a, uint64_t *c0, uint64_t *c1)
{
    unsigned sh = pix_chunk_shift(a->space);
    *c0 = (uint64_t)a->lo >> sh;
    *c1 = ((uint64_t)a->hi - 1) >> sh;   /* hi > lo here: no wrap */
    return *c1 - *c0 >= PIX_WIDE_CHUNKS;
}

/* The chunk ranges a non-wide access (chunks c0..c1) is filed under
 * (query false) or looked up in (query true); how many (at most 2). */
static inline int pix_ranges(const bir_access_t *a, uint64_t c0, uint64_t c1, bool query,
                             pix_range_t *out)
{
    if (a->space != ISA_SPACE_HBM) {
        out[0] = (pix_range_t){PIX_FINE, c0, c1};
        return 1;
    }
    uint64_t f0 = (uint64_t)a->lo >> 8, f1 = ((uint64_t)a->hi - 1) >> 8;
    if (f1 - f0 + 1 > PIX_FINE_MAX) {   /* large: filed once; asks both coarse levels */
        out[0] = (pix_range_t){PIX_BIG, c0, c1};
        out[1] = (pix_range_t){PIX_SMALL, c0, c1};
        return query ? 2 : 1;
    }
    out[0] = (pix_range_t){PIX_FINE, f0, f1};
    out[1] = (pix_range_t){query ? PIX_BIG : PIX_SMALL, c0, c1};
    return 2;
}

void pix_init(pindex_t *x);
void pix_free(pindex_t *x);
/* The bucket of key, or NULL (absent and !create, or out of memory). */
pbucket_t *pix_bucket(pindex_t *x, uint64_t key, bool create);
/* File producer p (instruction in, semaphore sem) under every chunk its
 * accesses touch; out of memory sets x->oom (the index is then unused). */
void pix_add(pindex_t *x, const bir_inst_t *in, int sem, int p, const pix_ctx_t *ctx);

#endif
