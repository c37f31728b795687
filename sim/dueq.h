/* dueq.h - the engines with a pending step, in step order (sim.c).
 *
 * An engine step is due at a time t (ps); steps at equal times go in
 * (core, slot) order, i.e. by the engine's due bit (core * 8 + slot).  The
 * set is small (a few engines per core), so it is kept as an array sorted
 * latest first: the first step is the last element (found and removed in
 * O(1)), and an engine that has just run -- usually the latest -- is
 * inserted by a short scan from the end.  This replaces a scan of every due
 * engine per instruction; the order is the same (tests/test_sim_sched.c
 * compares it with that scan on random sequences). */
#ifndef TPB_SIM_DUEQ_H
#define TPB_SIM_DUEQ_H

#include <stdbool.h>
#include <stdint.h>

#define SIM_DUEQ_MAX 64          /* one entry per (core, engine slot) bit */

typedef struct {
    uint64_t t;                  /* ps */
    uint32_t bit;                /* core * 8 + slot: the tie order */
} sim_due_t;

typedef struct {
    sim_due_t v[SIM_DUEQ_MAX];   /* sorted: v[n - 1] steps first */
    unsigned n;
} sim_dueq_t;

/* a steps before b */
static inline bool sim_due_before(sim_due_t a, sim_due_t b)
{
    return a.t != b.t ? a.t < b.t : a.bit < b.bit;
}

/* Add a step (the bit must not be in the set). */
static inline void sim_dueq_insert(sim_dueq_t *q, uint64_t t, unsigned bit)
{
    sim_due_t x = { t, bit };
    unsigned i = q->n++;
    while (i > 0 && sim_due_before(q->v[i - 1], x)) {
        q->v[i] = q->v[i - 1];
        i--;
    }
    q->v[i] = x;
}

/* The first step; the set must not be empty. */
static inline sim_due_t sim_dueq_first(const sim_dueq_t *q)
{
    return q->v[q->n - 1];
}

static inline void sim_dueq_pop(sim_dueq_t *q)
{
    q->n--;
}

/* Remove the step of `bit` if it is in the set. */
static inline void sim_dueq_remove(sim_dueq_t *q, unsigned bit)
{
    unsigned j = q->n;
    while (j > 0 && q->v[j - 1].bit != bit)
        j--;
    if (!j)
        return;
    for (; j < q->n; j++)
        q->v[j - 1] = q->v[j];
    q->n--;
}

#endif
