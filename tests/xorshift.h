/* xorshift.h - the tests' one reproducible pseudo-random generator
 * (Marsaglia's xorshift64 with shifts 13, 7, 17): a seeded state gives the
 * same sequence on every machine, so a failing random case can be rerun. */
#ifndef TPB_TESTS_XORSHIFT_H
#define TPB_TESTS_XORSHIFT_H
#include <stdint.h>

/* Advance *s (must not be 0) and return the new state. */
static inline uint64_t xorshift64(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#endif
