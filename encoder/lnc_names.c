/* lnc_names.c - a name -> memory-location index over a module's mlocs, for
 * the linker's name unification (copy_allocs) and its missing-input check.
 * Both looked each name up with lnc_find_mloc, a walk over every location:
 * with one location per tile of an unrolled kernel (tens of thousands per
 * core) that was quadratic, and most of a two-core compile (flash_attn_bwd
 * at seq 8192: 3.3 s of its 4.9 s).  The index answers what lnc_find_mloc
 * answers -- the first location of that name -- in O(1). */
#include "lnc.h"
#include "bytehash.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void lnc_names_free(lnc_names_t *x)
{
    free(x->slot);
    memset(x, 0, sizeof *x);
}

/* The slot holding name, or the empty slot where it would go. */
static uint32_t probe(const lnc_names_t *x, const lnc_module_t *m, const char *name)
{
    uint32_t mask = x->cap - 1;
    uint32_t i = tpb_hash_str(name) & mask;
    while (x->slot[i] >= 0 && strcmp(m->mlocs[x->slot[i]].name, name))
        i = (i + 1) & mask;
    return i;
}

/* Room for n names at a load factor of at most 1/2: the slots rebuilt from
 * the x->n locations indexed so far. */
static int reserve(lnc_names_t *x, const lnc_module_t *m, int n, tpb_err_t *err)
{
    if (x->cap && (uint32_t)n * 2 <= x->cap)
        return 0;
    uint32_t cap = 64;
    while (cap < (uint32_t)n * 2)
        cap *= 2;
    int *slot = malloc((size_t)cap * sizeof *slot);
    if (!slot)
        return tpb_errf(err, "out of memory (multi-core link: name index of %d locations)", n);
    for (uint32_t i = 0; i < cap; i++)
        slot[i] = -1;
    lnc_names_t grown = {slot, cap, 0};
    for (int i = 0; i < x->n; i++) {
        uint32_t k = probe(&grown, m, m->mlocs[i].name);
        if (grown.slot[k] < 0)   /* a repeated name keeps its first location */
            grown.slot[k] = i;
    }
    grown.n = x->n;
    free(x->slot);
    *x = grown;
    return 0;
}

int lnc_names_sync(lnc_names_t *x, const lnc_module_t *m, tpb_err_t *err)
{
    if (reserve(x, m, m->nmlocs, err))
        return -1;
    for (; x->n < m->nmlocs; x->n++) {
        uint32_t i = probe(x, m, m->mlocs[x->n].name);
        if (x->slot[i] < 0)   /* a repeated name keeps its first location */
            x->slot[i] = x->n;
    }
    return 0;
}

int lnc_names_find(const lnc_names_t *x, const lnc_module_t *m, const char *name)
{
    return x->cap ? x->slot[probe(x, m, name)] : -1;
}
