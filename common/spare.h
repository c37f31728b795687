/* spare.h - a job's freed 2 MiB-page mappings, kept for its next ones.
 *
 * A compile runs in phases: the front end's JSON tree, then the tile-IR
 * ops and pools, then the backend IR, the synchronise pass and the
 * emitter.  Each phase's large blocks are mappings of their own
 * (hugepage.h), and each new mapping costs a page fault and the kernel's
 * clearing of every 2 MiB page the owner touches -- on a virtual machine
 * ~0.3 ms a page even when the host backs it already, most of a small
 * compile's system time.  A phase's freed blocks are mostly touched pages
 * that the next phase could use as they are.  A tpb_spare_t holds them
 * (tpb_spare_put instead of tpb_array_free) and hands them to the next
 * block's owner (tpb_spare_take), so a page is cleared once per job, not
 * once per phase.
 *
 * A block taken from the spares holds stale bytes, not zeros: only an
 * owner that writes before it reads takes one (an arena, whose records are
 * cleared as they are handed out; the backend IR's instruction array; the
 * emitter's cache), or one that asks for zeros (tpb_spare_take_zero
 * clears the pages that are in memory and leaves the others, which read
 * zero, untouched).
 *
 * One tpb_spare_t belongs to one thread's job and is passed by pointer to
 * the owners that use it; NULL everywhere means "no spares" (the blocks
 * are mapped and unmapped as before).  tpb_spare_release unmaps what is
 * left.  A block put is kept only as far as its 2 MiB pages are in memory
 * (the others are unmapped at once: handing them on would save nothing),
 * and the spares hold at most TPB_SPARE_SLOTS blocks and
 * TPB_SPARE_MAX_BYTES in all: a block put past either is unmapped, so the
 * job's peak memory grows by at most that much. */
#ifndef TPB_SPARE_H
#define TPB_SPARE_H

#include <stdbool.h>
#include <stddef.h>

#define TPB_SPARE_SLOTS 8
#define TPB_SPARE_MAX_BYTES ((size_t)8 << 20)

typedef struct {
    struct tpb_spare_block {
        void *p;       /* 2 MiB-aligned mapping */
        size_t len;    /* a multiple of 2 MiB */
    } b[TPB_SPARE_SLOTS];
    int n;
    size_t bytes;      /* the sum of the lens */
    size_t reused;     /* bytes handed out from spares so far (`tpb compile --stats`) */
} tpb_spare_t;

/* Keep the block p of capacity `bytes` (from tpb_array_grow /
 * tpb_array_zalloc) for a later tpb_spare_take; a block below
 * TPB_ARRAY_MAP_MIN (malloc'ed), or any block when s is NULL or full, is
 * freed as tpb_array_free would. */
void tpb_spare_put(tpb_spare_t *s, void *p, size_t bytes);
/* A mapping of at least `bytes` (>= TPB_ARRAY_MAP_MIN; free it with
 * tpb_array_free or tpb_spare_put with the capacity tpb_array_room(bytes))
 * made from a spare block: the smallest one that holds it (the rest stays
 * a spare), else the largest one, grown; its bytes are stale.  NULL when s
 * is NULL or empty, or bytes is below TPB_ARRAY_MAP_MIN: the caller then
 * maps a fresh block as before. */
void *tpb_spare_take(tpb_spare_t *s, size_t bytes);
/* tpb_spare_take's block with every byte zero. */
void *tpb_spare_take_zero(tpb_spare_t *s, size_t bytes);
/* tpb_array_grow(p, old_bytes, new_bytes) for an owner that does not need
 * the new bytes zero: when the block becomes a mapping here (old_bytes
 * below TPB_ARRAY_MAP_MIN, new_bytes from it on) it is taken from the
 * spares if there is one (the old bytes copied, p freed). */
void *tpb_spare_grow(tpb_spare_t *s, void *p, size_t old_bytes, size_t new_bytes);
/* Unmap the spares (s may be NULL). */
void tpb_spare_release(tpb_spare_t *s);

#endif
