/* sched_name.h - the scheduler's short generated names (queue and
 * semaphore names, "drain.<queue>") without the stdio formatter: a
 * snprintf costs ~700 instructions, and a small compile made ~50 of them
 * naming its DMA queues (a third of the queue assignment). */
#ifndef TPB_SCHED_NAME_H
#define TPB_SCHED_NAME_H

#include <stddef.h>
#include <string.h>

/* What snprintf(out, len, "%s%s", a, b) writes (len > 0): the two joined,
 * cut to len - 1 bytes. */
static inline void sched_name_cat(char *out, size_t len, const char *a, const char *b)
{
    size_t na = strnlen(a, len - 1);
    memcpy(out, a, na);
    size_t nb = strnlen(b, len - 1 - na);
    memcpy(out + na, b, nb);
    out[na + nb] = 0;
}

/* What snprintf(out, len, "%s%d", base, k) writes, for k >= 0. */
static inline void sched_name_num(char *out, size_t len, const char *base, int k)
{
    char digits[12], *d = digits + sizeof digits;
    *--d = 0;
    unsigned v = (unsigned)k;
    do
        *--d = (char)('0' + v % 10);
    while (v /= 10);
    sched_name_cat(out, len, base, d);
}

#endif
