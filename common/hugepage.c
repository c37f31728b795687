#define _DEFAULT_SOURCE /* madvise */
#include "hugepage.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

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

#if defined(__linux__) && !defined(MADV_COLLAPSE)
#define MADV_COLLAPSE 25   /* Linux 6.1 */
#endif

void tpb_collapse_huge_pages(void *p, size_t len)
{
#ifdef MADV_COLLAPSE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);   /* whole 2 MiB pages inside */
    uintptr_t hi = ((uintptr_t)p + len) & ~(huge - 1);
    if (p && hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_COLLAPSE);
#else
    (void)p;
    (void)len;
#endif
}
