/* spare.c - freed mappings kept for a job's next ones (spare.h). */
#define _GNU_SOURCE /* mincore */
#include "spare.h"

#include "hugepage.h"

#include <stdint.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif
/* the same condition as hugepage.c's mappings: elsewhere a large block is
 * realloc'ed memory, which only tpb_array_free may release */
#if defined(__linux__) && defined(MREMAP_FIXED)
#define HAVE_SPARES 1
#endif

#define PAGE_2M ((size_t)2 << 20)

#ifdef HAVE_SPARES
#define VEC_PAGES 512   /* system pages of a 2 MiB page at 4 KiB (fewer at larger pages) */

/* The system page size, 0 when unknown. */
static size_t page_size(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    return ps > 0 && (size_t)ps <= PAGE_2M ? (size_t)ps : 0;
}

/* Which system pages (of `page` bytes) of the 2 MiB page at p are in
 * memory, into vec (bit 0 of a byte each); how many pages vec describes,
 * 0 when that cannot be told. */
static size_t residency(char *p, size_t page, unsigned char vec[VEC_PAGES])
{
    size_t n = page ? PAGE_2M / page : 0;
    if (n > VEC_PAGES)
        n = VEC_PAGES;
    return n && mincore(p, n * page, vec) == 0 ? n : 0;
}

/* Whether any page of the 2 MiB page at p is in memory (an unknown answer
 * counts as no: the page is then unmapped, as without spares). */
static bool in_memory(char *p, size_t page)
{
    unsigned char vec[VEC_PAGES];
    size_t n = residency(p, page, vec);
    for (size_t j = 0; j < n; j++)
        if (vec[j] & 1)
            return true;
    return false;
}

/* Keep [p, p + len) as a spare, or unmap it when the spares are full. */
static void keep(tpb_spare_t *s, char *p, size_t len)
{
    if (s->n < TPB_SPARE_SLOTS && len <= TPB_SPARE_MAX_BYTES - s->bytes) {
        s->b[s->n].p = p;
        s->b[s->n].len = len;
        s->n++;
        s->bytes += len;
    } else {
        (void)munmap(p, len);
    }
}
#endif

void tpb_spare_put(tpb_spare_t *s, void *p, size_t bytes)
{
    if (!p)
        return;
#ifdef HAVE_SPARES
    size_t page = page_size();
    if (s && bytes >= TPB_ARRAY_MAP_MIN && page) {
        /* only the pages in memory are worth keeping: each run of them is
         * a spare, the 2 MiB pages never touched are unmapped now */
        char *base = p, *run = NULL;
        size_t len = tpb_array_room(bytes);
        for (size_t at = 0; at <= len; at += PAGE_2M) {
            bool keep_it = at < len && in_memory(base + at, page);
            if (keep_it && !run)
                run = base + at;
            if (!keep_it && run) {
                keep(s, run, (size_t)(base + at - run));
                run = NULL;
            }
            if (!keep_it && at < len)
                (void)munmap(base + at, PAGE_2M);
        }
        return;
    }
#else
    (void)s;
#endif
    tpb_array_free(p, bytes);
}

#ifdef HAVE_SPARES
/* The slot to take a block of len bytes from: the smallest that holds it,
 * else the largest (grown by the caller); -1 when there is none. */
static int pick(const tpb_spare_t *s, size_t len)
{
    int fit = -1, big = -1;
    for (int i = 0; i < s->n; i++) {
        if (s->b[i].len >= len && (fit < 0 || s->b[i].len < s->b[fit].len))
            fit = i;
        if (big < 0 || s->b[i].len > s->b[big].len)
            big = i;
    }
    return fit >= 0 ? fit : big;
}
#endif

void *tpb_spare_take(tpb_spare_t *s, size_t bytes)
{
#ifdef HAVE_SPARES
    if (!s || s->n == 0 || bytes < TPB_ARRAY_MAP_MIN)
        return NULL;
    size_t len = tpb_array_room(bytes);
    int i = pick(s, len);
    char *p = s->b[i].p;
    size_t have = s->b[i].len;
    if (have > len) {   /* the head (the pages its owner touched first) */
        s->b[i].p = p + len;
        s->b[i].len = have - len;
        s->bytes -= len;
        s->reused += len;
        return p;
    }
    s->b[i] = s->b[--s->n];
    s->bytes -= have;
    s->reused += have;
    if (have == len)
        return p;
    void *q = tpb_array_grow(p, have, len);   /* its pages move along */
    if (!q)
        tpb_array_free(p, have);
    return q;
#else
    (void)s;
    (void)bytes;
    return NULL;
#endif
}

void *tpb_spare_take_zero(tpb_spare_t *s, size_t bytes)
{
    char *p = tpb_spare_take(s, bytes);
#ifdef HAVE_SPARES
    if (!p)
        return NULL;
    /* clear the pages in memory; the others read zero and stay untouched */
    size_t page = page_size(), len = tpb_array_room(bytes);
    unsigned char vec[VEC_PAGES];
    for (size_t at = 0; at < len; at += PAGE_2M) {
        size_t n = residency(p + at, page, vec);
        if (n * page != PAGE_2M) {   /* not told page by page: all of it */
            memset(p + at, 0, PAGE_2M);
            continue;
        }
        for (size_t j = 0; j < n; j++)
            if (vec[j] & 1)
                memset(p + at + j * page, 0, page);
    }
#endif
    return p;
}

void *tpb_spare_grow(tpb_spare_t *s, void *p, size_t old_bytes, size_t new_bytes)
{
    if (s && old_bytes < TPB_ARRAY_MAP_MIN && new_bytes >= TPB_ARRAY_MAP_MIN) {
        void *q = tpb_spare_take(s, new_bytes);
        if (q) {
            if (p)
                memcpy(q, p, old_bytes);
            tpb_array_free(p, old_bytes);
            return q;
        }
    }
    return tpb_array_grow(p, old_bytes, new_bytes);
}

void tpb_spare_release(tpb_spare_t *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++)
        tpb_array_free(s->b[i].p, s->b[i].len);
    s->n = 0;
    s->bytes = 0;   /* (reused: kept for the statistics) */
}
