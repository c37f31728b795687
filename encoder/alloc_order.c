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

/* The distinct strings met so far: d[0..nd) with their hashes hs, and an
 * open-addressing table slot[cap] of their indices (-1: empty).  Sized by
 * the distinct strings, not by the n indices: a loop's tiles share a few
 * paths, and a table for n (several hundred KiB per 10^5 tiles) was
 * cleared and touched page by page for them. */
typedef struct {
    dstr_t *d;
    uint64_t *hs;
    int *slot;
    size_t cap;   /* a power of two, > 2 nd */
    int nd;
} interner_t;

static void interner_free(interner_t *t)
{
    free(t->d), free(t->hs), free(t->slot);
}

/* The table with cap slots (twice as many as before, or the first),
 * refilled from the hashes kept; -1 when out of memory. */
static int interner_rehash(interner_t *t, size_t cap)
{
    int *slot = malloc(cap * sizeof *slot);
    dstr_t *d = realloc(t->d, cap / 2 * sizeof *d);
    if (d)
        t->d = d;
    uint64_t *hs = d ? realloc(t->hs, cap / 2 * sizeof *hs) : NULL;
    if (hs)
        t->hs = hs;
    if (!slot || !hs) {
        free(slot);
        return -1;
    }
    memset(slot, 0xff, cap * sizeof *slot);   /* -1: empty */
    for (int i = 0; i < t->nd; i++) {
        size_t j = (size_t)(hs[i] ^ hs[i] >> 29) & (cap - 1);
        while (slot[j] >= 0)
            j = (j + 1) & (cap - 1);
        slot[j] = i;
    }
    free(t->slot);
    t->slot = slot;
    t->cap = cap;
    return 0;
}

/* The table's next size: twice the last, or, while every string met so
 * far (seen, t->nd of them) was new, up to eight times the last towards
 * what all n need if they stay new (a flat body's tiles: thousands of
 * paths, each its own) -- a third of the rehashes.  A loop's tiles repeat
 * their paths early and keep the doubling; the factor bounds what a run
 * of new strings that then repeat can oversize the table by. */
static size_t interner_grow(const interner_t *t, int seen, int n)
{
    size_t cap = t->cap ? 2 * t->cap : 64;
    if (t->nd == seen && t->cap)
        while (cap <= 2 * (size_t)n && cap < 8 * t->cap)
            cap *= 2;
    return cap;
}

/* The index of string s (hash h, the seen-th string of n) among the
 * distinct strings, added when new; -1 when out of memory. */
static int interner_id(interner_t *t, const char *s, uint64_t h, int seen, int n)
{
    if (2 * (size_t)(t->nd + 1) >= t->cap && interner_rehash(t, interner_grow(t, seen, n)))
        return -1;
    size_t j = (size_t)(h ^ h >> 29) & (t->cap - 1);
    while (t->slot[j] >= 0 && (t->hs[t->slot[j]] != h || strcmp(t->d[t->slot[j]].s, s) != 0))
        j = (j + 1) & (t->cap - 1);
    if (t->slot[j] < 0) {
        t->slot[j] = t->nd;
        t->hs[t->nd] = h;
        t->d[t->nd] = (dstr_t){s, t->nd};
        t->nd++;
    }
    return t->slot[j];
}

/* id[i] := index of s[i] among the distinct strings (first-seen order),
 * kept in t; -1 when out of memory. */
static int intern_all(const char *const *s, int n, int *id, interner_t *t)
{
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
        if ((id[i] = interner_id(t, s[i], h, i, n)) < 0)
            return -1;
        memo[m].p = s[i], memo[m].id = id[i];
    }
    return 0;
}

/* group: all strings distinct -> perm is the identity, no sort (see
 * enc_group_by_str); returns the number of distinct strings or -1. */
static int order_by_str(const char *const *s, int n, int *perm, bool group, int *scratch)
{
    if (n <= 0)
        return 0;
    interner_t t = {0};
    int *id = scratch ? scratch : malloc((size_t)n * sizeof *id), *start = NULL;
    int rc = -1;
    if (!id || intern_all(s, n, id, &t))
        goto out;
    int nd = t.nd;
    if (group && nd == n) {
        for (int i = 0; i < n; i++)
            perm[i] = i;
        rc = n;
        goto out;
    }
    if (!(start = calloc((size_t)nd + 1, sizeof *start)))
        goto out;
    qsort(t.d, (size_t)nd, sizeof *t.d, cmp_dstr);
    int *rank = t.slot;   /* reused: nd < cap */
    for (int r = 0; r < nd; r++)
        rank[t.d[r].id] = r;
    /* counting sort by rank; within a rank the index order is kept */
    for (int i = 0; i < n; i++)
        start[rank[id[i]] + 1]++;
    for (int r = 0; r < nd; r++)
        start[r + 1] += start[r];
    for (int i = 0; i < n; i++)
        perm[start[rank[id[i]]]++] = i;
    rc = nd;
out:
    if (id != scratch)
        free(id);
    free(start);
    interner_free(&t);
    return rc;
}

int enc_stable_order_by_str(const char *const *s, int n, int *perm)
{
    return order_by_str(s, n, perm, false, NULL) < 0 ? -1 : 0;
}

int enc_group_by_str(const char *const *s, int n, int *perm, int *scratch)
{
    return order_by_str(s, n, perm, true, scratch);
}

#define RADIX_BITS 11
#define RADIX (1u << RADIX_BITS)

int enc_sort_by_u64(void *base, size_t n, size_t size, uint64_t *keys)
{
    if (n < 2)
        return 0;
    if (n > UINT32_MAX)
        return -1;
    uint64_t all = 0;
    for (size_t i = 0; i < n; i++)
        all |= keys[i];
    int bits = 0;
    while (bits < 64 && (all >> bits))
        bits++;
    uint64_t *k2 = malloc(n * sizeof *k2);
    uint32_t *idx = malloc(n * sizeof *idx), *idx2 = malloc(n * sizeof *idx2);
    char *tmp = malloc(n * size);
    size_t *count = malloc(RADIX * sizeof *count);
    if (!k2 || !idx || !idx2 || !tmp || !count) {
        free(k2), free(idx), free(idx2), free(tmp), free(count);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = (uint32_t)i;
    uint64_t *kin = keys, *kout = k2;
    for (int shift = 0; shift < bits; shift += RADIX_BITS) {
        memset(count, 0, RADIX * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[kin[i] >> shift & (RADIX - 1)]++;
        size_t sum = 0;
        for (unsigned d = 0; d < RADIX; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t to = count[kin[i] >> shift & (RADIX - 1)]++;
            kout[to] = kin[i];
            idx2[to] = idx[i];
        }
        uint64_t *kt = kin;
        kin = kout, kout = kt;
        uint32_t *it = idx;
        idx = idx2, idx2 = it;
    }
    if (kin != keys)
        memcpy(keys, kin, n * sizeof *keys);
    for (size_t i = 0; i < n; i++)
        memcpy(tmp + i * size, (const char *)base + (size_t)idx[i] * size, size);
    memcpy(base, tmp, n * size);
    free(k2), free(idx), free(idx2), free(tmp), free(count);
    return 0;
}

/* Sort base[0, n) in place, stably: by keys when keyof gives them all,
 * else qsort (glibc's merges stably). */
static void sort_all(char *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
                     bool (*keyof)(uint64_t *key, const void *elem))
{
    uint64_t *keys = keyof ? malloc(n * sizeof *keys) : NULL;
    bool ok = keys != NULL;
    for (size_t j = 0; ok && j < n; j++)
        ok = keyof(&keys[j], base + j * size);
    if (!ok || enc_sort_by_u64(base, n, size, keys))
        qsort(base, n, size, cmp);
    free(keys);
}

bool enc_sort_unless_sorted(void *base, size_t n, size_t size,
                            int (*cmp)(const void *, const void *),
                            bool (*keyof)(uint64_t *key, const void *elem))
{
    char *b = base;
    size_t i = 1;
    while (i < n && cmp(b + (i - 1) * size, b + i * size) <= 0)
        i++;
    if (i >= n)
        return false;
    /* b[0, i) is in order: sort the rest and merge the two (the common
     * case is a few elements appended out of order -- rotating buffers,
     * spill reload tiles -- to a long sorted run).  On ties the run's
     * element goes first, as a stable sort of the whole would put it. */
    char *tmp = malloc(i * size);
    if (!tmp) {
        sort_all(b, n, size, cmp, keyof);
        return true;
    }
    sort_all(b + i * size, n - i, size, cmp, keyof);
    memcpy(tmp, b, i * size);
    size_t x = 0, y = i, o = 0;
    while (x < i && y < n) {
        if (cmp(b + y * size, tmp + x * size) < 0)
            memmove(b + o++ * size, b + y++ * size, size);
        else
            memcpy(b + o++ * size, tmp + x++ * size, size);
    }
    /* what is left of the run (when the rest ran out first; a remainder of
     * the rest is already in its place) */
    memcpy(b + o * size, tmp + x * size, (i - x) * size);
    free(tmp);
    return true;
}
