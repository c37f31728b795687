/* fbits.h - fp32 <-> bit pattern helpers shared by the numeric unit tests. */
#ifndef TPB_TESTS_FBITS_H
#define TPB_TESTS_FBITS_H

#include <stdint.h>
#include <string.h>

static inline float fb(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

#endif
