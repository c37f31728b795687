/* dueq.h - the engines with a pending step, in step order (sim.c).
 *
 * An engine step is due at a time t (ps); steps at equal times go in
 * (core, slot) order, i.e. by the engine's due bit (core * 8 + slot).  The
 * set is small (a few engines per core), so it is kept sorted in a ring,
 * first step at the head: taking it is O(1), and an engine that has just
 * run -- usually the latest -- is inserted at the tail after one compare
 * (engines that interleave round-robin never shift).  This replaces a scan
 * of every due engine per instruction; the order is the same
 * (tests/test_sim_sched.c compares it with that scan on random sequences). */
#ifndef TPB_SIM_DUEQ_H
#define TPB_SIM_DUEQ_H

#include <stdbool.h>
#include <stdint.h>

#define SIM_DUEQ_MAX 64          /* one entry per (core, engine slot) bit; a power of 2 */

typedef struct {
    uint64_t t;                  /* ps */
    uint32_t bit;                /* core * 8 + slot: the tie order */
} sim_due_t;

typedef struct {
    sim_due_t v[SIM_DUEQ_MAX];   /* v[(head + k) % MAX], k < n: in step order */
    unsigned head, n;
} sim_dueq_t;

#define SIM_DUEQ_AT(q, k) ((q)->v[((q)->head + (k)) & (SIM_DUEQ_MAX - 1)])

/* a steps before b */
static inline bool sim_due_before(sim_due_t a, sim_due_t b)
{
    return a.t != b.t ? a.t < b.t : a.bit < b.bit;
}

/* Add a step (the bit must not be in the set). */
static inline void sim_dueq_insert(sim_dueq_t *q, uint64_t t, unsigned bit)
{
    sim_due_t x = { t, bit };
    unsigned k = q->n++;
    while (k > 0 && sim_due_before(x, SIM_DUEQ_AT(q, k - 1))) {
        SIM_DUEQ_AT(q, k) = SIM_DUEQ_AT(q, k - 1);
        k--;
    }
    SIM_DUEQ_AT(q, k) = x;
}

/* The first step; the set must not be empty. */
static inline sim_due_t sim_dueq_first(const sim_dueq_t *q)
{
    return q->v[q->head];
}

static inline void sim_dueq_pop(sim_dueq_t *q)
{
    q->head = (q->head + 1) & (SIM_DUEQ_MAX - 1);
    q->n--;
}

/* Remove the step of `bit` if it is in the set. */
static inline void sim_dueq_remove(sim_dueq_t *q, unsigned bit)
{
    unsigned k = 0;
    while (k < q->n && SIM_DUEQ_AT(q, k).bit != bit)
        k++;
    if (k == q->n)
        return;
    for (; k + 1 < q->n; k++)
        SIM_DUEQ_AT(q, k) = SIM_DUEQ_AT(q, k + 1);
    q->n--;
}

#endif
