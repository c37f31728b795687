/* pipe.c - the result pipeline of an engine: results issued but not yet
 * written.
 *
 * On DVE and Activation a compute instruction occupies its engine for
 * max(min_ii, work) cycles; its static overhead is the latency from the
 * end of that issue to its result being written (docs/timing.md "Result
 * latency").  The engine keeps the results in flight here, oldest first,
 * with the memory each one writes: the next instruction that reads or
 * overwrites some of it waits until it is written, one that does not
 * starts as soon as the engine is free.  Results are written in program
 * order, so the last result in flight that an instruction touches is the
 * last one it waits for, and a semaphore update at completion (applied
 * when the result is written) still means "every earlier instruction of
 * this engine is done". */
#include "sim_int.h"

static bool region_meets(const sim_region_t *a, const sim_region_t *b)
{
    return a->space == b->space && a->p0 < b->p1 && b->p0 < a->p1 && a->lo < b->hi &&
           b->lo < a->hi;
}

/* Whether an instruction touching fp reads or overwrites what f writes. */
static bool fly_hits(const sim_fly_t *f, const sim_fp_t *fp)
{
    if (f->all || fp->all)
        return true;
    for (unsigned i = 0; i < f->n; i++)
        for (unsigned j = 0; j < fp->n; j++)
            if (region_meets(&f->r[i], &fp->r[j]))
                return true;
    return false;
}

uint64_t sim_pipe_ready(sim_engine_t *e, const sim_fp_t *fp, uint64_t c0)
{
    /* results written by c0 no longer hold anything back */
    while (e->nfly && e->fly[e->fly0].done <= c0) {
        e->fly0 = (e->fly0 + 1) % SIM_FLY;
        e->nfly--;
    }
    if (!fp || (!fp->n && !fp->all))
        return c0;
    uint64_t r = c0 > e->flush_cycle ? c0 : e->flush_cycle;
    for (unsigned k = e->nfly; k-- > 0;) {
        const sim_fly_t *f = &e->fly[(e->fly0 + k) % SIM_FLY];
        if (fly_hits(f, fp))
            return f->done > r ? f->done : r;
    }
    return r;
}

/* Keep fp's written regions in flight until done. */
static void fly_push(sim_engine_t *e, const sim_fp_t *fp, uint64_t done)
{
    sim_fly_t f = { .done = done, .all = fp->all };
    for (unsigned j = 0; j < fp->n && !f.all; j++) {
        if (!fp->r[j].wr)
            continue;
        if (f.n == SIM_FLY_REGIONS)
            f.all = true;
        else
            f.r[f.n++] = fp->r[j];
    }
    if (!f.n && !f.all)
        return; /* writes no memory */
    if (e->nfly == SIM_FLY) {
        /* full: the oldest result holds back every later instruction that
         * touches memory (conservative; not reached with the targets'
         * min_ii, which bounds the results in flight to two) */
        const sim_fly_t *old = &e->fly[e->fly0];
        if (old->done > e->flush_cycle)
            e->flush_cycle = old->done;
        e->fly0 = (e->fly0 + 1) % SIM_FLY;
        e->nfly--;
    }
    e->fly[(e->fly0 + e->nfly) % SIM_FLY] = f;
    e->nfly++;
}

uint64_t sim_pipe_issue(sim_engine_t *e, const sim_fp_t *fp, uint64_t end, uint64_t lat)
{
    uint64_t done = end + lat;
    if (done < e->retire_cycle)
        done = e->retire_cycle; /* written in program order */
    e->retire_cycle = done;
    if (lat && fp && done > end)
        fly_push(e, fp, done);
    return done;
}
