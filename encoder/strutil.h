/* strutil.h - the few string builders the compiler runs once per op or per
 * instruction (names, paths), without going through printf: for kernels
 * that unroll to 10^5+ ops, snprintf("%s") was a visible share of compile
 * time.  Each one produces exactly what the snprintf it replaces did. */
#ifndef TPB_STRUTIL_H
#define TPB_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "smallfmt.h"

/* strcmp(a, b) == 0 inline: the names compared per op are a few bytes and
 * most differ early, where a library call's set-up costs more than the
 * compare. */
static inline bool su_eq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* snprintf(dst, cap, "%s", src): at most cap-1 bytes, always terminated
 * (cap > 0); returns strlen(src). */
static inline size_t su_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    size_t k = n < cap ? n : cap - 1;
    tpb_copy_short(dst, src, k);
    dst[k] = 0;
    return n;
}

/* The decimal digits of v into out (no terminator); returns their count
 * (at most 20). */
static inline size_t su_long(char out[21], long long v)
{
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    size_t k = v < 0, n = tpb_u64_ndigits(u);
    if (v < 0)
        out[0] = '-';
    tpb_u64_digits(u, out + k + n);
    return k + n;
}

/* snprintf(dst, cap, "%.*s%c%lld%c", maxlen, s, sep, v, end) with the
 * last %c left out when end is 0, and maxlen < 0 meaning all of s: at most
 * cap-1 bytes, terminated; returns the untruncated length. */
static inline size_t su_join_int(char *dst, size_t cap, const char *s, int maxlen, char sep,
                                 long long v, char end)
{
    size_t n = strlen(s);
    if (maxlen >= 0 && n > (size_t)maxlen)
        n = (size_t)maxlen;
    char tail[24];
    size_t t = 0;
    tail[t++] = sep;
    t += su_long(tail + t, v);
    if (end)
        tail[t++] = end;
    size_t k = n < cap - 1 ? n : cap - 1;
    tpb_copy_short(dst, s, k);
    size_t r = t < cap - 1 - k ? t : cap - 1 - k;
    tpb_copy_short(dst + k, tail, r);
    dst[k + r] = 0;
    return n + t;
}

#endif
