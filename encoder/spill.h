/* spill.h - SBUF spilling (docs/compiler.md "SBUF spilling"). */
#ifndef TPB_SPILL_H
#define TPB_SPILL_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "target.h"
#include "tir.h"

typedef struct {
    unsigned victims;          /* spill decisions (one tile live range split each) */
    unsigned saves, reloads;   /* spill stores / loads inserted */
    uint64_t save_bytes, reload_bytes;   /* their bytes (all partitions) */
    unsigned slots;            /* HBM spill slots (scratch tensors) made */
} enc_spill_stats_t;

/* A copy of k that spilling may rewrite: tensors and ops copied (operands
 * re-interned), loops and their marks copied; names, paths and constant
 * data borrowed from k, which must outlive it.  Free with enc_spill_free. */
int enc_spill_copy(tir_kernel_t *dst, const tir_kernel_t *k, tpb_err_t *err);
void enc_spill_free(tir_kernel_t *k);

/* Rewrite k until its SBUF placement (alloc_kernel_loops with buffers and
 * the rolling candidates of loops) succeeds: at the op where placement
 * fails, the live SBUF tile not accessed there whose next use is furthest
 * is stored to an HBM spill slot after its last write and loaded back into
 * a new tile before its next use.  0 when it fits (st filled); -1 with the
 * allocator's error verbatim followed by why spilling could not help. */
int enc_spill(tir_kernel_t *k, const tpb_target_t *t, int buffers, bool loops,
              enc_spill_stats_t *st, tpb_err_t *err);
/* enc_spill by rounds, each placing the whole kernel again (rounds x ops):
 * the same decisions; what enc_spill falls back to where its resumed
 * placement does not apply, and the tests' reference. */
int enc_spill_reference(tir_kernel_t *k, const tpb_target_t *t, int buffers, bool loops,
                        enc_spill_stats_t *st, tpb_err_t *err);

#endif
