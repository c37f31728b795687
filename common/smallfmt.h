/* smallfmt.h - the byte moves and decimal digits that per-op and
 * per-instruction text (names, paths, sidecar entries) is made of, without
 * a libc call: a short variable-length memcpy costs more in the call (or
 * an inlined `rep movsb`) than in the bytes moved, and printf-style
 * digits go one division at a time. */
#ifndef TPB_SMALLFMT_H
#define TPB_SMALLFMT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* memcpy(o, s, n): up to 16 bytes as two overlapping moves (each of a
 * fixed size, so no call); longer ones through memcpy.  o and s must not
 * overlap. */
static inline void tpb_copy_short(char *o, const char *s, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(o, &a, 8);
        memcpy(o + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(o, &a, 4);
        memcpy(o + n - 4, &b, 4);
    } else if (n > 0 && n < 4) {
        o[0] = s[0];
        o[n / 2] = s[n / 2];
        o[n - 1] = s[n - 1];
    } else if (n) {
        memcpy(o, s, n);
    }
}

/* The number of decimal digits of v (1..20). */
static inline size_t tpb_u64_ndigits(uint64_t v)
{
    size_t n = 1;
    for (; v >= 10000; v /= 10000)
        n += 4;
    return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* The decimal digits of v written backwards, two at a time, ending just
 * before `end`; returns the first digit's address. */
static inline char *tpb_u64_digits(uint64_t v, char *end)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    char *p = end;
    while (v >= 100) {
        unsigned k = (unsigned)(v % 100) * 2;
        v /= 100;
        *--p = pairs[k + 1];
        *--p = pairs[k];
    }
    if (v >= 10) {
        unsigned k = (unsigned)v * 2;
        *--p = pairs[k + 1];
        *--p = pairs[k];
    } else {
        *--p = (char)('0' + v);
    }
    return p;
}

#endif
