/* sched_clock.c - per-engine vector clocks with a log of past states
 * (sched_clock.h). */
#include "sched_clock.h"

#include "../common/hugepage.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void sclk_init(sclk_t *c, int nsems)
{
    memset(c, 0, sizeof *c);
    c->nsems = nsems;
}

void sclk_free(sclk_t *c)
{
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        sclk_log_t *l = &c->log[e];
        tpb_array_free(l->val, (size_t)l->cap * sizeof *l->val);
        tpb_array_free(l->sem, (size_t)l->capsem * sizeof *l->sem);
        tpb_array_free(l->ck, (size_t)l->capck * (size_t)(c->nsems > 0 ? c->nsems : 1) * sizeof *l->ck);
    }
    memset(c->log, 0, sizeof c->log);
}

/* Room for one more change (and its checkpoint when one is due). */
static int log_reserve(sclk_log_t *l, int nsems)
{
    if (l->n == l->cap) {
        if (l->cap > UINT32_MAX / 2)
            return -1;   /* 2^31 changes: refused as out of memory */
        uint32_t nc = l->cap ? 2 * l->cap : 256;
        /* the logs of a 10^5-instruction program reach megabytes: grown
         * in huge pages (tpb_array_grow), a fault per 2 MiB */
        uint8_t *ns = tpb_array_grow(l->sem, (size_t)l->capsem * sizeof *ns, (size_t)nc * sizeof *ns);
        if (!ns)
            return -1;
        l->sem = ns, l->capsem = nc;
        uint32_t *nv = tpb_array_grow(l->val, (size_t)l->cap * sizeof *nv, (size_t)nc * sizeof *nv);
        if (!nv)
            return -1;
        l->val = nv, l->cap = nc;
    }
    if (l->n % SCLK_SPAN == 0 && l->nck == l->capck) {
        if (l->capck > UINT32_MAX / 2)
            return -1;
        uint32_t nc = l->capck ? 2 * l->capck : 16;
        size_t per = (size_t)(nsems > 0 ? nsems : 1);
        uint32_t *nk = tpb_array_grow(l->ck, (size_t)l->capck * per * sizeof *nk,
                                      (size_t)nc * per * sizeof *nk);
        if (!nk)
            return -1;
        l->ck = nk, l->capck = nc;
    }
    return 0;
}

int sclk_raise_slow(sclk_t *c, int e, int s, uint32_t v)
{
    uint32_t *now = c->now[e];
    if (v <= now[s])
        return 0;
    sclk_log_t *l = &c->log[e];
    if (log_reserve(l, c->nsems))
        return -1;
    if (l->n % SCLK_SPAN == 0)   /* the state before change n: checkpoint n / SCLK_SPAN */
        memcpy(&l->ck[(size_t)l->nck++ * (size_t)c->nsems], now, (size_t)c->nsems * sizeof *now);
    l->val[l->n] = v;
    l->sem[l->n++] = (uint8_t)s;
    now[s] = v;
    return 0;
}

/* Raise dst's clock to at least entries [from, to) of src's log. */
static int replay(sclk_t *c, int dst, int src, uint32_t from, uint32_t to)
{
    const sclk_log_t *l = &c->log[src];
    const uint32_t *now = c->now[dst];
    for (uint32_t i = from; i < to; i++)
        if (l->val[i] > now[l->sem[i]] && sclk_raise(c, dst, l->sem[i], l->val[i]))
            return -1;
    return 0;
}

int sclk_merge(sclk_t *c, int dst, int src, uint32_t mark)
{
    uint32_t seen = c->seen[dst][src];
    if (dst == src || mark <= seen)
        return 0;   /* dst's clock is at least that state already */
    /* the newest checkpoint at or before the mark, then the changes after
     * it; or, when fewer, the changes since the last merged mark (dst holds
     * that state).  Only values above dst's go through sclk_raise (most do
     * not); the log is read by index, as dst's log may grow. */
    uint32_t ck = (mark - 1) / SCLK_SPAN, from = ck * SCLK_SPAN;
    if (mark - seen > (mark - from) + (uint32_t)c->nsems) {
        const sclk_log_t *l = &c->log[src];
        const uint32_t *now = c->now[dst];
        for (int s = 0; s < c->nsems; s++) {
            uint32_t v = l->ck[(size_t)ck * (size_t)c->nsems + (size_t)s];
            if (v > now[s] && sclk_raise(c, dst, s, v))
                return -1;
        }
        seen = from;
    }
    if (replay(c, dst, src, seen, mark))
        return -1;
    c->seen[dst][src] = mark;
    return 0;
}
