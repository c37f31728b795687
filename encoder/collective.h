/* collective.h - nki.collectives across the cores of one module
 * (all_reduce, all_gather, reduce_scatter, all_to_all, collective_permute,
 * rank_id): validation and their rewrite by the multi-core split into
 * core barriers, direct pull DMAs (a peer's SBUF tile or HBM slice read by
 * this core's DMA) and DVE reductions.  See docs/multicore.md
 * "Collectives". */
#ifndef TPB_COLLECTIVE_H
#define TPB_COLLECTIVE_H

#include <stdbool.h>

#include "diag.h"
#include "compile.h"
#include "target.h"
#include "tir.h"

#define LNC_COLL_MAX_OPS 40   /* ops one collective expands to on one core */

bool enc_is_collective(tir_opkind_t k);

/* Build-time checks of one collective op (spaces, dtypes, dims). */
int enc_validate_collective(const tir_kernel_t *k, const tir_op_t *op, tpb_err_t *err);

/* Receive tiles a reduction needs on every core (group size - 1), and
 * their tensor description (SBUF, the shape of one pulled piece). */
int lnc_coll_ntemps(const tir_kernel_t *k0, const tir_op_t *op);
void lnc_coll_temp(const tir_kernel_t *k0, const tir_op_t *op, int j, int idx, tir_tensor_t *out);

typedef struct {
    const tir_kernel_t *k;         /* this core's kernel (tensor kinds) */
    const tir_op_t *rank_op[8];    /* the collective as each core's program has it */
    int core, ncores;
    const int *temps;              /* receive tiles (lnc_coll_ntemps of them) */
} lnc_coll_in_t;

/* This core's ops for the collective, in program order: CORE_BARRIER ops
 * carry barrier_cores and barrier_id -1 (the split numbers them).
 * Returns the count or -1 (err names the op). */
int lnc_coll_expand(const lnc_coll_in_t *in, tir_op_t *out, tpb_err_t *err);

/* Every tile a pull reads from a peer sits at one SBUF offset on every core
 * (re-runs each core's allocation to check). */
int lnc_coll_check_addresses(const tir_kernel_t *core_k, int ncores, const tpb_target_t *t,
                             const enc_hbm_layout_t *hbm, tpb_err_t *err);

#endif
