/* sched_pool.c - one block for the synchronise pass's large arrays
 * (sched_pool.h). */
#include "sched_pool.h"

#include <stdint.h>
#include <string.h>

#define POOL_ALIGN 64u

void sched_pool_init(sched_pool_t *p, size_t bytes, tpb_spare_t *spare)
{
    memset(p, 0, sizeof *p);
    if (bytes < TPB_ARRAY_MAP_MIN || !tpb_array_fresh_zero(bytes))
        return;
    p->spare = spare;
    /* a spare as it is: only the blocks asked for zeroed are cleared, at
     * sched_pool_take_zero (compile-live: a 0.5 MiB hash table of a 1.7
     * MiB pool, where the whole pool was cleared) */
    p->base = tpb_spare_take(spare, bytes);
    p->stale = p->base != NULL;
    if (!p->base)
        p->base = tpb_array_zalloc(bytes);
    p->bytes = p->base ? bytes : 0;
}

void sched_pool_free(sched_pool_t *p)
{
    if (p->base)
        tpb_spare_put(p->spare, p->base, p->bytes);
    memset(p, 0, sizeof *p);
}

void *sched_pool_take(sched_pool_t *p, size_t bytes)
{
    if (!p || !p->base || bytes < SCHED_MAP_FROM)
        return NULL;
    size_t at = (p->used + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1);
    if (at > p->bytes || bytes > p->bytes - at)
        return NULL;
    p->used = at + bytes;
    return p->base + at;
}

void *sched_pool_take_zero(sched_pool_t *p, size_t bytes)
{
    void *q = sched_pool_take(p, bytes);
    if (q && p->stale)
        memset(q, 0, bytes);
    return q;
}

bool sched_pool_has(const sched_pool_t *p, const void *q)
{
    if (!p || !p->base || !q)
        return false;
    uintptr_t a = (uintptr_t)q, lo = (uintptr_t)p->base;
    return a >= lo && a - lo < p->bytes;
}

void *sched_array_move(sched_pool_t *p, void *old, size_t old_bytes, size_t keep,
                       size_t new_bytes, size_t *bytes)
{
    bool pooled = sched_pool_has(p, old);
    void *q = sched_pool_take(p, new_bytes);
    if (q) {
        *bytes = new_bytes;
    } else if (!pooled) {
        *bytes = new_bytes;
        return tpb_array_grow(old, old_bytes, *bytes);   /* keeps every byte */
    } else {
        *bytes = new_bytes;
        q = tpb_array_grow(NULL, 0, *bytes);
        if (!q)
            return NULL;
    }
    if (keep)
        memcpy(q, old, keep);
    if (!pooled)
        tpb_array_free(old, old_bytes);
    return q;
}

void sched_array_free(sched_pool_t *p, void *q, size_t bytes)
{
    if (!sched_pool_has(p, q))
        tpb_array_free(q, bytes);
}
