/* lnc_passes.c - the multi-core back-end's pass manager (lnc_passes.h). */
#include "lnc_passes.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char *lnc_pass_kind_name(lnc_pass_kind_t k)
{
    switch (k) {
    case LNC_PASS_PER_CORE: return "per_core";
    case LNC_PASS_CORE_PARALLEL: return "core_parallel";
    case LNC_PASS_WHOLE_PROGRAM: return "whole_program";
    }
    return "?";
}

void lnc_pm_init(lnc_pass_manager_t *pm, int ncores)
{
    memset(pm, 0, sizeof *pm);
    pm->ncores = ncores;
}

static bool linked_before(const lnc_pass_manager_t *pm)
{
    for (int i = 0; i < pm->npasses; i++)
        if (pm->passes[i].kind == LNC_PASS_CORE_PARALLEL)
            return true;
    return false;
}

int lnc_pm_add(lnc_pass_manager_t *pm, const char *name, lnc_pass_kind_t kind, lnc_pass_fn run,
               tpb_err_t *err)
{
    if (pm->npasses >= LNC_MAX_PASSES)
        return tpb_errf(err, "pass '%s': more than %d passes", name, LNC_MAX_PASSES);
    bool linked = linked_before(pm);
    if (kind == LNC_PASS_PER_CORE && linked)
        return tpb_errf(err, "pass '%s' runs per core, but a core-parallel pass has already "
                             "merged the core modules", name);
    if (kind == LNC_PASS_CORE_PARALLEL && linked)
        return tpb_errf(err, "pass '%s' is core-parallel, but the core modules are already "
                             "merged", name);
    if (kind == LNC_PASS_WHOLE_PROGRAM && !linked)
        return tpb_errf(err, "pass '%s' runs on the merged module, but no core-parallel pass "
                             "merges the core modules before it", name);
    pm->passes[pm->npasses++] = (lnc_pass_t){name, kind, run};
    return 0;
}

int lnc_pm_run(lnc_pass_manager_t *pm, void *ctx, tpb_err_t *err)
{
    pm->nran = 0;
    for (int i = 0; i < pm->npasses; i++) {
        const lnc_pass_t *p = &pm->passes[i];
        tpb_err_t pe = {{0}};
        if (p->kind == LNC_PASS_PER_CORE) {
            for (int c = 0; c < pm->ncores; c++)
                if (p->run(ctx, c, &pe))
                    return tpb_errf(err, "core %d: %s", c, pe.msg);
        } else if (p->run(ctx, -1, &pe)) {
            return tpb_errf(err, "%s", pe.msg);
        }
        pm->nran++;
    }
    return 0;
}
