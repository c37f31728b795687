#define _GNU_SOURCE /* madvise, mremap */
#include "hugepage.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* Advise the whole pages inside [p, p + len) (outward: the pages the block
 * touches) for huge pages, when the block is at least 2 MiB. */
static void advise(void *p, size_t len, bool outward)
{
#ifdef MADV_HUGEPAGE
    long ps = sysconf(_SC_PAGESIZE);
    if (!p || ps <= 0 || len < ((size_t)2 << 20))
        return;
    uintptr_t page = (uintptr_t)ps, in = outward ? 0 : page - 1, out = outward ? page - 1 : 0;
    uintptr_t lo = ((uintptr_t)p + in) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)p + len + out) & ~(page - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)len;
    (void)outward;
#endif
}

void tpb_advise_huge_pages(void *p, size_t len) { advise(p, len, false); }

void tpb_advise_huge_pages_array(void *p, size_t len) { advise(p, len, true); }

void *tpb_array_double(void *p, int *cap, size_t elem, int first)
{
    if (*cap > INT_MAX / 2 || first <= 0 || elem == 0)
        return NULL;
    int nc = *cap ? *cap * 2 : first;
    if ((size_t)nc > SIZE_MAX / elem)
        return NULL;
    void *q = tpb_array_grow(p, (size_t)*cap * elem, (size_t)nc * elem);
    if (q)
        *cap = nc;
    return q;
}

/* Free heap below which tpb_heap_trim gives nothing back: the next pass
 * reuses what a trim returns, a page fault each (~12 us here), for a peak
 * lower by at most that much.  The bench workloads' malloc heaps hold
 * 0.1-0.5 MiB free at the trims (their large arrays are mappings): a trim
 * there cost compile-live 90 faults for 0.04 MiB of peak. */
#define HEAP_TRIM_MIN ((size_t)4 << 20)

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#define HAVE_MALLINFO2 1
#endif

void tpb_heap_trim(void)
{
#ifdef __GLIBC__
#ifdef HAVE_MALLINFO2
    /* The free block at the top of the heap is kept up to the reserve's
     * size: its untouched part costs no memory, and what a pass freed into
     * it is taken again by the next pass. */
    struct mallinfo2 mi = mallinfo2();
    size_t top = mi.keepcost < TPB_HEAP_RESERVE ? mi.keepcost : TPB_HEAP_RESERVE;
    if (mi.fordblks - top < HEAP_TRIM_MIN)
        return;
#endif
    (void)malloc_trim(TPB_HEAP_RESERVE);
#endif
}

bool tpb_heap_reserve(size_t bytes, size_t small_head)
{
#if defined(HAVE_MALLINFO2) && defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    long ps = sysconf(_SC_PAGESIZE);
    if (bytes < huge || bytes > (size_t)INT_MAX / 2 || ps <= 0 || mallinfo2().arena != 0)
        return false;   /* malloc has its heap already: too late */
    uintptr_t page = (uintptr_t)ps;
    if (small_head > bytes)
        return false;
    /* whole pages, at least one: glibc writes a header at the heap's start */
    uintptr_t head = small_head < page ? page : ((uintptr_t)small_head + page - 1) & ~(page - 1);
    char *brk0 = sbrk(0);
    if (brk0 == (char *)-1)
        return false;
    /* The heap starts `head` below a 2 MiB boundary: its first `head`
     * bytes are small pages (a small compile stays in them and never
     * clears a 2 MiB page), the ranges above the boundary whole for huge
     * pages. */
    uintptr_t bound = ((uintptr_t)brk0 + head + huge - 1) & ~(huge - 1);
    if (sbrk((intptr_t)(bound - head - (uintptr_t)brk0)) == (void *)-1)
        return false;
    /* Grow in steps of the reserve and the head (the first growth ends
     * `bytes` past the boundary: the advised part is the reserve's size
     * whatever the head), do not give it back on free(), and keep blocks
     * below TPB_ARRAY_MAP_MIN in the heap (glibc would map those from 128
     * KiB on, in 4 KiB pages). */
    if (!mallopt(M_TOP_PAD, (int)(bytes + head - page)) ||
        !mallopt(M_TRIM_THRESHOLD, (int)(2 * bytes)) ||
        !mallopt(M_MMAP_THRESHOLD, (int)TPB_ARRAY_MAP_MIN))
        return false;
    void *volatile first = malloc(1);   /* volatile: the pair must not be elided */
    free(first);
    char *end = sbrk(0);
    return end != (char *)-1 && (uintptr_t)end > bound &&
           madvise((void *)bound, (uintptr_t)end - bound, MADV_HUGEPAGE) == 0;
#else
    (void)bytes;
    return false;
#endif
}

void tpb_stack_prefault(size_t bytes)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (ps <= 0 || bytes == 0 || here < bytes)
        return;
    uintptr_t top = here & ~((uintptr_t)ps - 1);   /* the stack grows down from here */
    bytes = (bytes + (size_t)ps - 1) & ~((size_t)ps - 1);
    (void)madvise((void *)(top - bytes), bytes, MADV_POPULATE_WRITE);
#else
    (void)bytes;
#endif
}

#if defined(__linux__) && defined(MREMAP_FIXED)
#define HUGE_BYTES ((size_t)2 << 20)

static size_t map_len(size_t bytes) { return (bytes + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1); }

/* A fresh anonymous mapping of len bytes (a multiple of 2 MiB) starting at
 * a 2 MiB boundary, advised for huge pages; NULL on failure. */
static void *map_aligned(size_t len)
{
    size_t span = len + HUGE_BYTES;
    if (span < len)
        return NULL;
    char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    uintptr_t a = ((uintptr_t)p + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1);
    size_t head = (size_t)(a - (uintptr_t)p), tail = span - head - len;
    if (head)
        (void)munmap(p, head);
    if (tail)
        (void)munmap((char *)a + len, tail);
#ifdef MADV_HUGEPAGE
    (void)madvise((void *)a, len, MADV_HUGEPAGE);
#endif
    return (void *)a;
}

void *tpb_array_grow(void *p, size_t old_bytes, size_t new_bytes)
{
    if (new_bytes < TPB_ARRAY_MAP_MIN) {
        void *q = realloc(p, new_bytes ? new_bytes : 1);
        if (q)
            tpb_advise_huge_pages_array(q, new_bytes);
        return q;
    }
    size_t nl = map_len(new_bytes);
    if (old_bytes < TPB_ARRAY_MAP_MIN) {   /* malloc'ed: one copy of < 4 MiB */
        void *q = map_aligned(nl);
        if (!q)
            return NULL;
        if (p)
            memcpy(q, p, old_bytes);
        free(p);
        return q;
    }
    size_t ol = map_len(old_bytes);
    if (nl <= ol)
        return p;
    if (mremap(p, ol, nl, 0) != MAP_FAILED) {   /* extended in place */
#ifdef MADV_HUGEPAGE
        (void)madvise(p, nl, MADV_HUGEPAGE);
#endif
        return p;
    }
    /* move the pages (page tables, not bytes) to the start of a new
     * aligned mapping: both ends 2 MiB-aligned, so huge pages stay whole */
    void *q = map_aligned(nl);
    if (!q)
        return NULL;
    if (mremap(p, ol, ol, MREMAP_MAYMOVE | MREMAP_FIXED, q) == MAP_FAILED) {
        (void)munmap(q, nl);
        return NULL;
    }
    return q;
}

bool tpb_array_fresh_zero(size_t bytes) { return bytes >= TPB_ARRAY_MAP_MIN; }

void *tpb_array_zalloc(size_t bytes)
{
    return bytes >= TPB_ARRAY_MAP_MIN ? map_aligned(map_len(bytes)) : calloc(1, bytes ? bytes : 1);
}

size_t tpb_array_room(size_t bytes) { return bytes >= TPB_ARRAY_MAP_MIN ? map_len(bytes) : bytes; }

size_t tpb_array_discard_head(void *p, size_t bytes, size_t done, size_t upto)
{
    if (!p || bytes < TPB_ARRAY_MAP_MIN)
        return done;
    if (upto > bytes)
        upto = bytes;
    size_t to = upto & ~(HUGE_BYTES - 1);   /* p is 2 MiB-aligned (map_aligned) */
    if (to <= done || madvise((char *)p + done, to - done, MADV_DONTNEED))
        return done;
    return to;
}

void tpb_array_free(void *p, size_t bytes)
{
    if (!p)
        return;
    if (bytes < TPB_ARRAY_MAP_MIN)
        free(p);
    else
        (void)munmap(p, map_len(bytes));
}
#else
void *tpb_array_grow(void *p, size_t old_bytes, size_t new_bytes)
{
    (void)old_bytes;
    void *q = realloc(p, new_bytes ? new_bytes : 1);
    if (q)
        tpb_advise_huge_pages_array(q, new_bytes);
    return q;
}

bool tpb_array_fresh_zero(size_t bytes)
{
    (void)bytes;
    return false;   /* realloc */
}

size_t tpb_array_room(size_t bytes) { return bytes; }

void *tpb_array_zalloc(size_t bytes) { return calloc(1, bytes ? bytes : 1); }

void tpb_array_free(void *p, size_t bytes)
{
    (void)bytes;
    free(p);
}

size_t tpb_array_discard_head(void *p, size_t bytes, size_t done, size_t upto)
{
    (void)p, (void)bytes, (void)upto;
    return done;   /* realloc'ed: nothing to give back early */
}
#endif
