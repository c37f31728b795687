/* sched_clock.h - the synchronise pass's per-engine vector clocks, with
 * past states kept as a log of changes instead of one copy per producer.
 *
 * now[e][s] is the value of semaphore s that engine e is known to have
 * waited for; it only grows.  Each change is appended to e's log, and
 * every SCLK_SPAN changes the whole clock is kept (a checkpoint), so the
 * state at any earlier point (a mark) is a checkpoint plus at most
 * SCLK_SPAN changes.  A producer's vector clock used to be a copy of its
 * engine's clock (4 bytes x semaphores per producer); it is now a mark
 * (4 bytes) and the log costs 5 bytes per change plus a checkpoint per
 * SCLK_SPAN changes -- most producers change one or two semaphores. */
#ifndef TPB_SCHED_CLOCK_H
#define TPB_SCHED_CLOCK_H

#include <stdint.h>

#include "bir.h"
#include "isa.h"
#include "sched_pool.h"

#define SCLK_SPAN 32u
#define SCLK_FIRST 256u   /* a log's first room, in changes */

/* An engine's log: one block (tpb_array_grow) holding val, then ck, then
 * sem, sized for `cap` changes and their checkpoints.  One block, not
 * three: a busy engine's log of a 10^5-producer program is one 2 MiB
 * page, not three blocks that fault in 4 KiB pages. */
typedef struct {
    uint32_t *val;   /* change i: now[sem[i]] became val[i] */
    uint32_t *ck;    /* checkpoint c: the clock after changes 0..c*SCLK_SPAN-1 */
    uint8_t *sem;
    uint32_t n, cap;   /* changes; room for cap of them (and their checkpoints) */
    uint32_t nck;
    size_t bytes;    /* the block's size (tpb_array_free); 0: none yet */
} sclk_log_t;

typedef struct {
    int nsems;
    uint32_t hint;   /* sclk_reserve: the changes a log can reach (0: unknown) */
    uint32_t now[ISA_ENG_COUNT][BIR_MAX_SEMS];
    sclk_log_t log[ISA_ENG_COUNT];
    /* seen[d][s]: the newest mark of engine s's clock merged into engine
     * d's (d's clock is at least that state, clocks only grow): a merge of
     * an older mark changes nothing, a newer one needs only the changes
     * since -- consecutive waits of a loop merge marks a few changes apart */
    uint32_t seen[ISA_ENG_COUNT][ISA_ENG_COUNT];
    sched_pool_t *pool;   /* where the logs sized for the hint go (NULL: none) */
} sclk_t;

void sclk_init(sclk_t *c, int nsems);
void sclk_free(sclk_t *c);
/* At most `changes` changes per engine are expected (the pass: its
 * producers, as every change raises some semaphore towards its final
 * count): a log that outgrows its first small room is sized for that at
 * once instead of doubling (each doubling copied the log into fresh
 * pages); beyond it the log still doubles. */
void sclk_reserve(sclk_t *c, uint32_t changes);
/* The pool room one log sized for `changes` changes of nsems semaphores
 * takes (its block once it outgrows the first room). */
size_t sclk_pool_bytes(uint32_t changes, int nsems);
/* sclk_raise when the log needs room or a checkpoint. */
int sclk_raise_slow(sclk_t *c, int e, int s, uint32_t v);
/* Raise now[e][s] to v (no change when it is already >= v); -1 when out
 * of memory (the clock is then unchanged).  Inline: called for every
 * producer and every semaphore a wait may raise. */
static inline int sclk_raise(sclk_t *c, int e, int s, uint32_t v)
{
    uint32_t *now = c->now[e];
    if (v <= now[s])
        return 0;
    sclk_log_t *l = &c->log[e];
    if (l->n == l->cap || l->n % SCLK_SPAN == 0)
        return sclk_raise_slow(c, e, s, v);
    l->val[l->n] = v;
    l->sem[l->n++] = (uint8_t)s;
    now[s] = v;
    return 0;
}
/* A mark of engine e's clock as it is now. */
static inline uint32_t sclk_mark(const sclk_t *c, int e) { return c->log[e].n; }
/* Raise engine dst's clock to engine src's clock at mark `mark`
 * (elementwise maximum); -1 when out of memory. */
int sclk_merge(sclk_t *c, int dst, int src, uint32_t mark);

#endif
