/* sched_conflict.h - the synchronise pass's overlap test between an
 * instruction and a producer, and a cache of its answers per pair of
 * access sets (sched_conflict.c).
 *
 * Whether two instructions conflict depends only on their accesses.  A
 * loop body repeats a few access sets, so the same pairs are tested over
 * and over (compile-mixed: 5 tests per instruction, a few dozen distinct
 * pairs).  Each access set gets an id (a direct-mapped table from the
 * accesses' hash to an id and an instruction that has them; a set that
 * is evicted gets a new id when it comes back, so an id always stands for
 * one set), and a direct-mapped table keeps the answer per pair of ids. */
#ifndef TPB_SCHED_CONFLICT_H
#define TPB_SCHED_CONFLICT_H

#include <stdbool.h>
#include <stdint.h>

#include "bir.h"

/* An instruction's accesses out of their packed bitfields: one
 * instruction's scan tests it against hundreds of producers, and reading
 * the 48-bit fields again for every pair cost most of the scan. */
typedef struct {
    uint64_t lo, hi;
    unsigned space, p0, p1;
    bool write;
} acc_plain_t;

typedef struct {
    bool loaded;                     /* by sconf_load: in and id */
    bool plain;                      /* a[0..n-1] unpacked (at the first plain test) */
    uint32_t id;                     /* access-set id (sconf_id), 0: none */
    const bir_inst_t *in;
    int n;
    acc_plain_t a[BIR_MAX_ACCESS];
} accs_t;

#define SCONF_SETS 4096u     /* access-set table slots at most (a power of 2) */
#define SCONF_PAIRS 4096u    /* answer table slots at most (a power of 2) */
#define SCONF_WINDOW 2048u   /* tests per look at the hit rate */
#define SCONF_OFF 30720u     /* tests done the plain way after a poor window */
#define SCONF_MAX_ID 0xffffu /* ids fit a producer's 16 bits (sconf_reset) */

/* The tables are sized to the block (sconf_new): a block of n
 * instructions has at most n access sets, and the 100 KiB of the full
 * tables (48 KiB of keys cleared up front) cost a small kernel's compile
 * ~20 page faults. */
typedef struct {
    uint64_t *set_hash;              /* [set_mask + 1] */
    int *set_inst;                   /* an instruction with that set (block index) */
    uint32_t *set_id;                /* 0: empty slot */
    uint64_t *pair;                  /* [pair_mask + 1]: id a << 32 | id b; 0: empty */
    bool *pair_hit;                  /* the answer */
    uint32_t set_mask, pair_mask;
    uint32_t next_id;
    /* When pairs do not repeat (every tile its own, compile-live), ids
     * and table upkeep cost more than they save: after a window with
     * fewer than a quarter of the answers from the table, the next
     * SCONF_OFF tests take the plain test (and find no ids). */
    uint64_t tests, off_until;
    uint32_t asked, answered;        /* this window */
    uint64_t from_table;             /* answers taken from the table (tests) */
} sconf_t;

/* New tables for a block of ninsts instructions, every id forgotten and
 * the window state fresh (one block: free() it); NULL when out of memory. */
sconf_t *sconf_new(int ninsts);
/* The id of instruction insts[i]'s access set; 0 when the ids ran out
 * (the owner then forgets every id it holds and calls sconf_reset). */
uint32_t sconf_id(sconf_t *c, const bir_inst_t *insts, int i);
/* Forget every id (both tables); the window state is kept. */
void sconf_reset(sconf_t *c);
/* Point x at instruction insts[i], with the id of its accesses while the
 * table is in use (else 0); they are unpacked at the first plain test
 * (most tests of a loop body are answered by the table). */
void sconf_load(sconf_t *c, accs_t *x, const bir_inst_t *insts, int i);
/* Some access of x and some access of b overlap and one of them writes
 * (bir_access_overlap's test, on x's unpacked fields). */
bool sconf_overlap(accs_t *x, const bir_inst_t *b);
/* The overlap test of a pair not in the table, kept in slot `slot`. */
bool sconf_test_slow(sconf_t *c, accs_t *x, const bir_inst_t *b, size_t slot, uint64_t key);
/* The end of a window of SCONF_WINDOW tests through the table. */
void sconf_window_end(sconf_t *c);

/* sconf_overlap(x, insts[bi]) through the table; *idb: insts[bi]'s id,
 * found here when 0 and the table is in use. */
static inline bool sconf_test(sconf_t *c, accs_t *x, const bir_inst_t *insts, int bi,
                              uint16_t *idb)
{
    if (++c->tests < c->off_until || !x->id)
        return sconf_overlap(x, &insts[bi]);
    if (!*idb && !(*idb = (uint16_t)sconf_id(c, insts, bi)))
        return sconf_overlap(x, &insts[bi]);   /* the ids ran out */
    uint64_t key = (uint64_t)x->id << 32 | *idb;
    size_t slot = (size_t)(((x->id * 0x9e3779b1u) ^ (*idb * 0x85ebca77u)) >> 20) & c->pair_mask;
    bool hit;
    if (c->pair[slot] == key) {
        c->answered++, c->from_table++;
        hit = c->pair_hit[slot];
    } else {
        hit = sconf_test_slow(c, x, &insts[bi], slot, key);
    }
    if (++c->asked == SCONF_WINDOW)
        sconf_window_end(c);
    return hit;
}

#endif
