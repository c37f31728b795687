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
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        sched_array_free(c->pool, c->log[e].val, c->log[e].bytes);
    memset(c->log, 0, sizeof c->log);
}

void sclk_reserve(sclk_t *c, uint32_t changes) { c->hint = changes; }

/* Checkpoints of a log with room for cap changes: one per SCLK_SPAN
 * changes, taken before changes 0, SCLK_SPAN, ... below cap. */
static size_t log_cks(uint32_t cap) { return (size_t)cap / SCLK_SPAN + 1; }

static size_t log_bytes(uint32_t cap, size_t per)
{
    return (size_t)cap * (sizeof(uint32_t) + 1) + log_cks(cap) * per * sizeof(uint32_t);
}

/* Room for one more change: a new block for more changes, the log copied
 * into it (first SCLK_FIRST changes, then the hint, then doubling). */
size_t sclk_pool_bytes(uint32_t changes, int nsems)
{
    uint32_t cap = changes > 2 * SCLK_FIRST ? changes : 2 * SCLK_FIRST;
    return log_bytes(cap, (size_t)(nsems > 0 ? nsems : 1)) + 64;
}

static int log_grow(sclk_log_t *l, size_t per, uint32_t hint, sched_pool_t *pool)
{
    if (l->cap > UINT32_MAX / 2)
        return -1;   /* 2^31 changes: refused as out of memory */
    uint32_t nc = l->cap ? 2 * l->cap : SCLK_FIRST;
    if (l->cap && nc < hint)
        nc = hint;
    if ((size_t)nc > SIZE_MAX / 8 / (per + 1))
        return -1;
    /* not cleared: entries are written before they are read */
    size_t bytes = log_bytes(nc, per);
    uint32_t *val = sched_pool_take(pool, bytes);
    if (!val)
        val = tpb_array_grow(NULL, 0, bytes);
    if (!val)
        return -1;
    uint32_t *ck = val + nc;
    uint8_t *sem = (uint8_t *)(ck + log_cks(nc) * per);
    if (l->n) {
        memcpy(val, l->val, (size_t)l->n * sizeof *val);
        memcpy(ck, l->ck, (size_t)l->nck * per * sizeof *ck);
        memcpy(sem, l->sem, l->n);
    }
    sched_array_free(pool, l->val, l->bytes);
    l->val = val, l->ck = ck, l->sem = sem;
    l->cap = nc, l->bytes = bytes;
    return 0;
}

int sclk_raise_slow(sclk_t *c, int e, int s, uint32_t v)
{
    uint32_t *now = c->now[e];
    if (v <= now[s])
        return 0;
    sclk_log_t *l = &c->log[e];
    size_t per = (size_t)(c->nsems > 0 ? c->nsems : 1);
    if (l->n == l->cap && log_grow(l, per, c->hint, c->pool))
        return -1;
    if (l->n % SCLK_SPAN == 0)   /* the state before change n: checkpoint n / SCLK_SPAN */
        memcpy(&l->ck[(size_t)l->nck++ * per], now, (size_t)c->nsems * sizeof *now);
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
