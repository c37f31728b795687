/* lnc_passes.h - the multi-core back-end's pass manager (lnc_passes.c):
 * passes are registered by name and kind, as the production compiler's
 * BackendPassManager does (bir_linker notes §1: bir_linker is registered
 * through addCoreParallelPassWithName), and run in registration order.
 *
 *   LNC_PASS_PER_CORE       once per core module (the main pipeline), only
 *                           while the modules are still per core
 *   LNC_PASS_CORE_PARALLEL  once, on the vector of per-core modules: it
 *                           turns them into the one merged module (the link)
 *   LNC_PASS_WHOLE_PROGRAM  once, on the merged module (after a
 *                           core-parallel pass)
 *
 * docs/multicore.md "Pipeline".  Library code: never prints. */
#ifndef TPB_LNC_PASSES_H
#define TPB_LNC_PASSES_H

#include "diag.h"

typedef enum {
    LNC_PASS_PER_CORE,
    LNC_PASS_CORE_PARALLEL,
    LNC_PASS_WHOLE_PROGRAM,
} lnc_pass_kind_t;

/* core: the core for a per-core pass, -1 otherwise. */
typedef int (*lnc_pass_fn)(void *ctx, int core, tpb_err_t *err);

typedef struct {
    const char *name;
    lnc_pass_kind_t kind;
    lnc_pass_fn run;
} lnc_pass_t;

#define LNC_MAX_PASSES 16

typedef struct {
    lnc_pass_t passes[LNC_MAX_PASSES];
    int npasses;
    int ncores;
    int nran;                /* passes run so far (lnc_pm_run) */
} lnc_pass_manager_t;

void lnc_pm_init(lnc_pass_manager_t *pm, int ncores);
/* addPassWithName / addCoreParallelPassWithName.  -1 when the table is
 * full or the order is impossible (a per-core pass after a core-parallel
 * one, a whole-program pass before any): err names the pass. */
int lnc_pm_add(lnc_pass_manager_t *pm, const char *name, lnc_pass_kind_t kind, lnc_pass_fn run,
               tpb_err_t *err);
/* Run every pass in order; the first failure stops it (err prefixed with
 * the pass name and, for a per-core pass, the core). */
int lnc_pm_run(lnc_pass_manager_t *pm, void *ctx, tpb_err_t *err);
const char *lnc_pass_kind_name(lnc_pass_kind_t k);

#endif
