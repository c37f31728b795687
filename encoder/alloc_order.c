/* alloc_order.c - stable order of indices by string (alloc_order.h). */
#include "alloc_order.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/bytehash.h"

typedef struct {
    const char *s;
    int id;   /* distinct-string index */
} dstr_t;

static int cmp_dstr(const void *x, const void *y)
{
    return strcmp(((const dstr_t *)x)->s, ((const dstr_t *)y)->s);   /* distinct: never 0 */
}

/* id[i] := index of s[i] among the distinct strings (first-seen order);
 * d[0..*nd) := the distinct strings.  slot: cap entries, cap a power of two
 * >= 2n. */
static void intern_all(const char *const *s, int n, int *id, dstr_t *d, int *nd, int *slot,
                       uint64_t *hs, size_t cap)
{
    memset(slot, 0xff, cap * sizeof *slot);   /* -1: empty */
    *nd = 0;
    /* the callers' strings are mostly interned (tile paths: one pointer
     * per declaration, met again every loop iteration): one pointer is
     * one string, so a pointer met lately takes its id without a hash */
    enum { NMEMO = 64 };
    struct { const char *p; int id; } memo[NMEMO] = {{0}};
    for (int i = 0; i < n; i++) {
        size_t m = ((uintptr_t)s[i] >> 3) & (NMEMO - 1);
        if (memo[m].p == s[i]) {
            id[i] = memo[m].id;
            continue;
        }
        uint64_t h = tpb_hash_bytes(0x9e3779b97f4a7c15ull, s[i], strlen(s[i]));
        size_t j = (size_t)(h ^ h >> 29) & (cap - 1);
        while (slot[j] >= 0 && (hs[slot[j]] != h || strcmp(d[slot[j]].s, s[i]) != 0))
            j = (j + 1) & (cap - 1);
        if (slot[j] < 0) {
            slot[j] = *nd;
            hs[*nd] = h;
            d[*nd] = (dstr_t){s[i], *nd};
            ++*nd;
        }
        id[i] = slot[j];
        memo[m].p = s[i], memo[m].id = id[i];
    }
}

/* group: all strings distinct -> perm is the identity, no sort (see
 * enc_group_by_str); returns the number of distinct strings or -1. */
static int order_by_str(const char *const *s, int n, int *perm, bool group)
{
    if (n <= 0)
        return 0;
    size_t cap = 16;
    while (cap < 2 * (size_t)n)
        cap *= 2;
    int *id = malloc((size_t)n * sizeof *id), *slot = malloc(cap * sizeof *slot);
    int *start = calloc((size_t)n + 1, sizeof *start);
    dstr_t *d = malloc((size_t)n * sizeof *d);
    uint64_t *hs = malloc((size_t)n * sizeof *hs);
    int rc = -1;
    if (!id || !slot || !start || !d || !hs)
        goto out;
    int nd;
    intern_all(s, n, id, d, &nd, slot, hs, cap);
    if (group && nd == n) {
        for (int i = 0; i < n; i++)
            perm[i] = i;
        rc = n;
        goto out;
    }
    qsort(d, (size_t)nd, sizeof *d, cmp_dstr);
    int *rank = slot;   /* reused: nd <= n < cap */
    for (int r = 0; r < nd; r++)
        rank[d[r].id] = r;
    /* counting sort by rank; within a rank the index order is kept */
    for (int i = 0; i < n; i++)
        start[rank[id[i]] + 1]++;
    for (int r = 0; r < nd; r++)
        start[r + 1] += start[r];
    for (int i = 0; i < n; i++)
        perm[start[rank[id[i]]]++] = i;
    rc = nd;
out:
    free(id), free(slot), free(start), free(d), free(hs);
    return rc;
}

int enc_stable_order_by_str(const char *const *s, int n, int *perm)
{
    return order_by_str(s, n, perm, false) < 0 ? -1 : 0;
}

int enc_group_by_str(const char *const *s, int n, int *perm)
{
    return order_by_str(s, n, perm, true);
}

bool enc_sort_unless_sorted(void *base, size_t n, size_t size,
                            int (*cmp)(const void *, const void *))
{
    const char *b = base;
    for (size_t i = 1; i < n; i++)
        if (cmp(b + (i - 1) * size, b + i * size) > 0) {
            qsort(base, n, size, cmp);
            return true;
        }
    return false;
}
