/* bytehash.h - one 64-bit hash over a byte range, for the encoder's encode
 * cache and the simulator's instruction classes, and one 32-bit string hash
 * for the name indexes.  Not cryptographic: both
 * users compare the full keys on a hash match. */
#ifndef TPB_BYTEHASH_H
#define TPB_BYTEHASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Fold one 64-bit word into h (a multiply-xorshift step). */
static inline uint64_t tpb_hash_word(uint64_t h, uint64_t w)
{
    h ^= w;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

/* Fold n bytes at p into h, 8 at a time, then byte by byte. */
static inline uint64_t tpb_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = tpb_hash_word(h, w);
    }
    for (; i < n; i++)
        h = tpb_hash_word(h, b[i]);
    return h;
}

/* FNV-1a over a NUL-terminated string: the name indexes' hash (the
 * builder's tensor names, the linker's memory locations). */
static inline uint32_t tpb_hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

#endif
