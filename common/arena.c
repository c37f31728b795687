/* arena.c - a bump allocator (arena.h). */
#include "arena.h"

#include "hugepage.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A chunk: its header, then `size` bytes of records. */
struct tpb_arena_chunk {
    tpb_arena_chunk_t *prev;
    size_t size;
    alignas(max_align_t) unsigned char data[];
};

/* Chunks (header included) start at 4 KiB and grow 4x up to 4 MiB: a
 * module with a handful of instructions stays small; from TPB_ARRAY_MAP_MIN
 * on each chunk is a 2 MiB-aligned mapping of its own in huge pages
 * (tpb_array_grow) and uses all of it (tpb_array_room), so 10^5
 * instructions' names and accesses cost a few page faults, not one per
 * 4 KiB. */
#define CHUNK_MIN ((size_t)4 << 10)
#define CHUNK_MAX ((size_t)4 << 20)

static size_t chunk_bytes(const tpb_arena_chunk_t *c) { return sizeof *c + c->size; }

static int new_chunk(tpb_arena_t *a, size_t need)
{
    size_t total = a->head ? chunk_bytes(a->head) * 4 : CHUNK_MIN;
    if (total > CHUNK_MAX)
        total = CHUNK_MAX;
    if (need > SIZE_MAX - sizeof(tpb_arena_chunk_t))
        return -1;
    if (total < sizeof(tpb_arena_chunk_t) + need)
        total = sizeof(tpb_arena_chunk_t) + need;
    total = tpb_array_room(total);   /* a mapping's whole 2 MiB pages */
    tpb_arena_chunk_t *c = tpb_spare_take(a->spare, total);
    bool stale = c != NULL;
    if (!c && !(c = tpb_array_grow(NULL, 0, total)))
        return -1;
    size_t size = total - sizeof *c;
    c->prev = a->head;
    c->size = size;
    a->head = c;
    a->used = 0;
    a->head_zero = !stale && tpb_array_fresh_zero(total);   /* records only: the header is written */
    return 0;
}

/* n bytes aligned to `align`, not cleared; NULL when out of memory. */
static void *take(tpb_arena_t *a, size_t n, size_t align)
{
    size_t at = a->head ? (a->used + align - 1) & ~(align - 1) : 0;
    if (!a->head || at > a->head->size || n > a->head->size - at) {
        if (new_chunk(a, n))
            return NULL;
        at = 0;
    }
    void *p = a->head->data + at;
    a->used = at + n;
    return p;
}

void *tpb_arena_alloc(tpb_arena_t *a, size_t n, size_t align)
{
    void *p = take(a, n, align);
    if (p && !a->head_zero)
        memset(p, 0, n);
    return p;
}

void *tpb_arena_extend(tpb_arena_t *a, void *p, size_t old_n, size_t new_n, size_t align)
{
    unsigned char *end = p ? (unsigned char *)p + old_n : NULL;
    if (p && a->head && end == a->head->data + a->used && new_n - old_n <= a->head->size - a->used) {
        if (!a->head_zero)
            memset(end, 0, new_n - old_n);
        a->used += new_n - old_n;
        return p;
    }
    void *q = tpb_arena_alloc(a, new_n, align);
    if (q && old_n)
        memcpy(q, p, old_n);
    return q;
}

void *tpb_arena_copy(tpb_arena_t *a, const void *src, size_t n, size_t align)
{
    void *p = take(a, n, align);   /* every byte written: no clearing */
    if (p)
        memcpy(p, src, n);
    return p;
}

bool tpb_arena_pop(tpb_arena_t *a, const void *p, size_t n)
{
    const unsigned char *q = p;
    if (!a->head || n > a->used || q != a->head->data + a->used - n)
        return false;
    if (a->head_zero)   /* the bytes past `used` stay zero */
        memset(a->head->data + a->used - n, 0, n);
    a->used -= n;
    return true;
}

const char *tpb_arena_strdup(tpb_arena_t *a, const char *s)
{
    return tpb_arena_strndup(a, s, strlen(s));
}

const char *tpb_arena_strndup(tpb_arena_t *a, const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *p = take(a, n + 1, 1);   /* every byte written: no clearing */
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

int tpb_arena_reserve(tpb_arena_t *a, size_t bytes)
{
    return a->head || bytes <= CHUNK_MIN ? 0 : new_chunk(a, bytes);
}

void tpb_arena_free(tpb_arena_t *a)
{
    for (tpb_arena_chunk_t *c = a->head, *prev; c; c = prev) {
        prev = c->prev;
        tpb_spare_put(a->spare, c, chunk_bytes(c));
    }
    a->head = NULL;
    a->used = 0;
    a->head_zero = false;
}
