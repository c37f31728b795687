/* builder_names.c - the builder's name index (builder.h): one entry per
 * base name (its newest live tensor and instance count) found through an
 * open-addressing hash; split from builder.c. */
#include "builder.h"
#include "bytehash.h"
#include "hugepage.h"
#include "strutil.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Entry index of a base name of hash h, or -1. */
static int name_find(const enc_builder_t *b, const char *name, uint32_t h)
{
    if (!b->cap_hash)
        return -1;
    uint32_t mask = (uint32_t)b->cap_hash - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        int e = b->hash[i];
        if (e < 0)
            return -1;
        if (su_eq(b->names[e].name, name))   /* short: inline, not a strcmp call */
            return e;
    }
}

static int name_lookup(const enc_builder_t *b, const char *name)
{
    return name_find(b, name, tpb_hash_str(name));
}

/* Entry e of hash h into a set of cap slots. */
static void hash_put(int *hash, int cap, uint32_t h, int e)
{
    uint32_t mask = (uint32_t)cap - 1;
    uint32_t i = h & mask;
    while (hash[i] >= 0)
        i = (i + 1) & mask;
    hash[i] = e;
}

/* The name hash anew with nc slots (a power of two); -1 on out-of-memory. */
static int rehash(enc_builder_t *b, int nc)
{
    int *h = malloc((size_t)nc * sizeof *h);
    if (!h)
        return -1;
    for (int i = 0; i < nc; i++)
        h[i] = -1;
    for (int i = 0; i < b->nnames; i++)
        hash_put(h, nc, tpb_hash_str(b->names[i].name), i);
    free(b->hash);
    b->hash = h;
    b->cap_hash = nc;
    return 0;
}

/* Room for `more` names past the current ones, sized exactly (the doubling
 * of enc_name_entry took 64..4 096 entries through realloc, 2 MiB of mapping
 * for the last, and rehashed six times for a body of 3 000 tile names);
 * nothing when out of memory (enc_name_entry grows as before). */
void enc_reserve_names(enc_builder_t *b, int64_t more)
{
    if (more <= 0 || more > INT_MAX / 4 - b->nnames || b->nnames + more <= b->cap_names)
        return;
    int need = b->nnames + (int)more;
    size_t elem = sizeof *b->names, bytes = tpb_array_room((size_t)need * elem);
    struct enc_name_entry *p = tpb_array_grow(b->names, (size_t)b->cap_names * elem, bytes);
    if (!p)
        return;
    b->names = p;
    b->cap_names = (int)(bytes / elem);
    int nc = b->cap_hash ? b->cap_hash : 128;
    while (nc < 2 * need)
        nc *= 2;
    if (nc > b->cap_hash)
        (void)rehash(b, nc);
}

/* Entry for a base name, created when new; -1 on out-of-memory. */
int enc_name_entry(enc_builder_t *b, const char *name)
{
    uint32_t h = tpb_hash_str(name);
    int e = name_find(b, name, h);
    if (e >= 0)
        return e;
    struct enc_name_entry *grown = tir_array_reserve(b->names, &b->cap_names, b->nnames + 1,
                                                     sizeof *b->names, 64, false);
    /* in the kernel's names: the name's first tensor keeps this copy (add_tensor) */
    const char *copy = tpb_arena_strdup(&b->k->names, name);   /* valid_name: short */
    if (!grown || !copy)
        return -1;
    b->names = grown;
    if (2 * (b->nnames + 1) > b->cap_hash && rehash(b, b->cap_hash ? b->cap_hash * 2 : 128))
        return -1;   /* keep the load factor <= 1/2 */
    e = b->nnames++;
    b->names[e].name = copy;
    b->names[e].head = -1;
    b->names[e].count = 0;
    b->names[e].last_full = NULL;
    b->names[e].inst_str = NULL;
    b->names[e].inst_len = 0;
    hash_put(b->hash, b->cap_hash, h, e);
    return e;
}

bool enc_name_declared(const enc_builder_t *b, const char *name)
{
    int e = name_lookup(b, name);
    return e >= 0 && b->names[e].count > 0;
}

int enc_find_tensor(const enc_builder_t *b, const char *name)
{
    int e = name_lookup(b, name);
    return e >= 0 ? b->names[e].head : -1;   /* the head is always live */
}

int enc_find_tensor_at(const enc_builder_t *b, const char *name, int *slot)
{
    if (*slot > 0 && *slot <= b->nnames)
        return b->names[*slot - 1].head;
    int e = name_lookup(b, name);
    if (e < 0)
        return -1;
    *slot = e + 1;
    return b->names[e].head;
}
