/* rng.h - the random-number op family (NKI rng, rand2, rand_get_state,
 * rand_set_state, set_rng_seed): validation (validate_rng.c), front-end
 * table (fj_ops_rng.c) and lowering (lower_rng.c) share these. */
#ifndef TPB_ENC_RNG_H
#define TPB_ENC_RNG_H

#include <stdbool.h>

#include "diag.h"
#include "target.h"
#include "tir.h"

/* TIR_RNG .. TIR_SET_RNG_SEED */
bool enc_is_rng(tir_opkind_t k);
/* XORWOW state words per lane an engine keeps: 24 on Vector (4
 * generators), 6 on GpSimd (one). */
int enc_rng_state_words(int engine);
/* The engine an op of this family runs on when none is given (NKI
 * defaults: rng, rand2, set_rng_seed Vector; rand_get/set_state GpSimd). */
int enc_rng_default_engine(tir_opkind_t k);
/* Shapes, dtypes, spaces and targets of one op (engine already legal). */
int enc_validate_rng(const tir_kernel_t *k, const tpb_target_t *t, const tir_op_t *op,
                     tpb_err_t *err);

#endif
