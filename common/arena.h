/* arena.h - a bump allocator for many small records that live as long as
 * their owner (the backend module's instruction names and rare parts, the
 * tile IR's names and interned records).
 *
 * Records never move (memory comes in chunks that are never reallocated),
 * so pointers into an arena may be copied freely while it lives; everything
 * is freed at once by tpb_arena_free.  A zeroed tpb_arena_t is empty. */
#ifndef TPB_ARENA_H
#define TPB_ARENA_H

#include <stdbool.h>
#include <stddef.h>

#include "spare.h"

typedef struct tpb_arena_chunk tpb_arena_chunk_t;

typedef struct {
    tpb_arena_chunk_t *head;   /* newest chunk, allocated from; NULL = none */
    size_t used;               /* bytes used in head */
    /* head's bytes past `used` are zero (a fresh mapping): a record is
     * handed out without clearing it */
    bool head_zero;
    /* NULL, or the job's spare mappings (spare.h): a large chunk is taken
     * from them, and tpb_arena_free gives the chunks back to them */
    tpb_spare_t *spare;
} tpb_arena_t;

/* n bytes aligned to `align` (a power of two, at most alignof(max_align_t)),
 * zeroed; NULL when out of memory. */
void *tpb_arena_alloc(tpb_arena_t *a, size_t n, size_t align);
/* Grow the block p of old_n bytes (from tpb_arena_alloc/extend with the same
 * align; NULL with old_n 0) to new_n >= old_n bytes: in place when it is the
 * arena's newest block and its chunk has room, else a new block holding a
 * copy of the old bytes (the old one stays valid and unchanged, so copies
 * of a pointer to it never see the growth).  The new bytes are zeroed;
 * NULL when out of memory (p unchanged). */
void *tpb_arena_extend(tpb_arena_t *a, void *p, size_t old_n, size_t new_n, size_t align);
/* A copy of the n bytes at src, aligned to `align` (as tpb_arena_alloc),
 * not cleared first since every byte is written; NULL when out of memory. */
void *tpb_arena_copy(tpb_arena_t *a, const void *src, size_t n, size_t align);
/* Give back the n bytes at p when they are the arena's newest bytes (the
 * end of a block from tpb_arena_alloc/extend/copy that no one else points
 * to): the next record reuses them.  Returns whether it did; other blocks
 * are left as they are (freed with the arena). */
bool tpb_arena_pop(tpb_arena_t *a, const void *p, size_t n);
/* An exact-length copy of s; NULL when out of memory. */
const char *tpb_arena_strdup(tpb_arena_t *a, const char *s);
/* A copy of s's first n bytes (no NUL among them) and a NUL; NULL when out
 * of memory.  For a caller that knows the length. */
const char *tpb_arena_strndup(tpb_arena_t *a, const char *s, size_t n);
void tpb_arena_free(tpb_arena_t *a);
/* Size an empty arena's first chunk for about `bytes` of records (an owner
 * that knows its count: 10^5 instructions' names and bodies): one chunk,
 * in huge pages from TPB_ARRAY_MAP_MIN on, instead of the 4, 16, 64 KiB ...
 * steps (their ~21 small page faults and a huge page each after).  No
 * effect on an arena that has a chunk or for a few KiB; -1 when out of
 * memory (the arena stays empty and usable). */
int tpb_arena_reserve(tpb_arena_t *a, size_t bytes);

#endif
