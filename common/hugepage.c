#define _DEFAULT_SOURCE /* madvise */
#include "hugepage.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

void tpb_advise_huge_pages(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
    long ps = sysconf(_SC_PAGESIZE);
    if (!p || ps <= 0 || len < ((size_t)2 << 20))
        return;
    /* only whole pages inside the block */
    uintptr_t page = (uintptr_t)ps;
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)p + len) & ~(page - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)len;
#endif
}

void tpb_advise_huge_pages_array(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
    long ps = sysconf(_SC_PAGESIZE);
    if (!p || ps <= 0 || len < ((size_t)2 << 20))
        return;
    uintptr_t page = (uintptr_t)ps;
    uintptr_t lo = (uintptr_t)p & ~(page - 1);
    uintptr_t hi = ((uintptr_t)p + len + page - 1) & ~(page - 1);
    (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)len;
#endif
}
