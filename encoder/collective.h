/* collective.h - nki.collectives across the cores of one module
 * (all_reduce, all_gather, reduce_scatter, all_to_all, collective_permute,
 * rank_id): validation and their rewrite by the multi-core split into
 * direct pull DMAs (a peer's SBUF tile or HBM slice read by this core's
 * DMA) ordered by collective semaphores (COLL_SYNC signals and waits, and
 * the pulls' descriptor remote semaphores) and DVE reductions.  See docs/multicore.md
 * "Collectives". */
#ifndef TPB_COLLECTIVE_H
#define TPB_COLLECTIVE_H

#include <stdbool.h>

#include "diag.h"
#include "compile.h"
#include "target.h"
#include "tir.h"

#define LNC_COLL_MAX_OPS 64   /* ops one collective expands to on one core (8-core all_reduce: 53) */

bool enc_is_collective(tir_opkind_t k);

/* Build-time checks of one collective op (spaces, dtypes, dims). */
int enc_validate_collective(const tir_kernel_t *k, const tir_op_t *op, tpb_err_t *err);

/* Receive tiles a reduction needs on every core (group size - 1), and
 * their tensor description (SBUF, the shape of one pulled piece; its name
 * and path are written to the caller's buffers, which tir_add_tensor copies). */
int lnc_coll_ntemps(const tir_kernel_t *k0, const tir_op_t *op);
void lnc_coll_temp(const tir_kernel_t *k0, const tir_op_t *op, int j, int idx, tir_tensor_t *out,
                   char name[TIR_NAME_LEN], char path[TIR_PATH_LEN]);

/* One core's collective semaphore counts so far (program order): ready
 * signals received from each core, pulls of its data completed. */
typedef struct {
    uint32_t ready[8];
    uint32_t done;
} lnc_coll_sync_t;

typedef struct {
    tir_kernel_t *k;               /* this core's kernel (tensor kinds; the expanded ops'
                                      operands are interned there) */
    lnc_coll_sync_t *sync;         /* this core's counts, advanced by the expansion */
    const tir_op_t *rank_op[8];    /* the collective as each core's program has it */
    int core, ncores;
    const int *temps;              /* receive tiles (lnc_coll_ntemps of them) */
} lnc_coll_in_t;

/* This core's ops for the collective, in program order (COLL_SYNC,
 * DMA_COPY, TENSOR_TENSOR, MEMSET); advances in->sync.
 * Returns the count or -1 (err names the op). */
int lnc_coll_expand(const lnc_coll_in_t *in, tir_op_t *out, tpb_err_t *err);

/* Programs that diverge on the program id (lnc_split_t.diverged): every
 * tile a sendrecv / collective pulls from another core is fixed (the
 * tensor's "addr") where the first core that uses it places it, so that it
 * has one address on every core; -1 (err) when an allocation fails. */
int lnc_coll_pin_addresses(tir_kernel_t *core_k, int ncores, const tpb_target_t *t,
                           const enc_hbm_layout_t *hbm, tpb_err_t *err);
/* Every tile a pull reads from a peer sits at one SBUF offset on every core
 * (re-runs each core's allocation to check). */
int lnc_coll_check_addresses(const tir_kernel_t *core_k, int ncores, const tpb_target_t *t,
                             const enc_hbm_layout_t *hbm, tpb_err_t *err);

#endif
