/* sched_pool.h - one block for the synchronise pass's large arrays
 * (sched_pool.c).
 *
 * The pass's large arrays (the producers, the engines' clock logs, the
 * memory index's hash table, buckets and list slabs) were each a block of
 * their own from 64 KiB on, so each took at least one fresh 2 MiB page
 * however little of it was used: compile-mixed's four clock logs, 0.75 MiB
 * each, took four pages; compile-live's index, 1.5 MiB in all, three.  On
 * a VM a huge page costs ~0.14 ms to fault and clear.  The pool is one
 * mapping, reserved up front for every such array the pass may ask for;
 * the arrays are cut from it one after the other as they are asked for,
 * so together they fill whole pages and untouched room is only address
 * space.  A request the pool cannot hold gets a block of its own, as
 * before; a pooled block is never freed alone (the pool goes at once). */
#ifndef TPB_SCHED_POOL_H
#define TPB_SCHED_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "hugepage.h"
#include "spare.h"

/* Blocks of the pass from SCHED_MAP_FROM bytes on come from the pool;
 * the rest, and those the pool has no room for, from tpb_array_grow (in
 * a compile, below TPB_ARRAY_MAP_MIN that is the huge-paged heap, where
 * they share pages; common/hugepage.h). */
#define SCHED_MAP_FROM ((size_t)64 << 10)

typedef struct {
    char *base;      /* NULL: no pool (every take fails) */
    size_t bytes;    /* its size (a fresh mapping: zero until written) */
    size_t used;
    bool stale;      /* base is a spare mapping: its bytes are not zero */
    tpb_spare_t *spare;   /* where base came from and goes back to; NULL: none */
} sched_pool_t;

/* A pool of `bytes` (0, or below TPB_ARRAY_MAP_MIN: none, as a small one
 * would not be a fresh, zero-filled mapping); out of memory leaves none.
 * spare: NULL, or the job's spare mappings, taken from (as they are: the
 * blocks are cleared when taken with sched_pool_take_zero) and given back
 * to at sched_pool_free. */
void sched_pool_init(sched_pool_t *p, size_t bytes, tpb_spare_t *spare);
void sched_pool_free(sched_pool_t *p);
/* A block of `bytes` (at least SCHED_MAP_FROM, else NULL: small blocks
 * stay in malloc), 64-byte aligned, its bytes unspecified (the owner
 * writes before it reads); NULL when p is NULL or the block does not
 * fit. */
void *sched_pool_take(sched_pool_t *p, size_t bytes);
/* sched_pool_take's block with every byte zero (cleared here only when
 * the pool came from the spares: a fresh mapping is zero already). */
void *sched_pool_take_zero(sched_pool_t *p, size_t bytes);
/* Whether block q came from pool p. */
bool sched_pool_has(const sched_pool_t *p, const void *q);
/* A block of new_bytes for an array now in block old (old_bytes, NULL
 * and 0 for none) whose first `keep` bytes are copied: from the pool when
 * it fits, else its own (tpb_array_grow of new_bytes, grown in place
 * where old is not pooled); old is given back unless pooled.  *bytes: the
 * new block's size, to free it with.  NULL when out of memory (old is
 * then unchanged). */
void *sched_array_move(sched_pool_t *p, void *old, size_t old_bytes, size_t keep,
                       size_t new_bytes, size_t *bytes);
/* Give back a block of `bytes` unless it is pooled. */
void sched_array_free(sched_pool_t *p, void *q, size_t bytes);

#endif
