/* lnc_deps.c - dependency edges of a linked module (copyDeps, addBarrier)
 * and the static check they allow (docs/multicore.md "Dependencies").
 *
 * A per-core module carries its dependencies as semaphore waits inside the
 * cloned instructions: a wait "S >= v" depends on the instructions whose
 * updates of S bring it to v.  lnc_copy_deps derives those edges on the
 * linked module -- local ones (the updater runs on the same core: copyDeps,
 * the clone keeps them by construction) and cross-core ones (a remote
 * update from another core's instruction: the link-time cross-core fence
 * wiring of addBarrier) -- and counts them per function.  lnc_check_waits
 * then fails a wait that no schedule can satisfy: its threshold exceeds
 * every update the whole linked program makes to that semaphore (a
 * collective with a missing participant, a signal dropped).  Straight-line
 * programs only: a function with a Jump or BranchCmp runs instructions more
 * than once, so neither is attempted on a module that has one. */
#include "lnc.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t total;          /* sem_inc / sem_add_imm over the whole program */
    uint32_t remote;         /* of which from another core */
    bool unknown;            /* another op (write, decrement, event): not counted */
} sem_count_t;

static bool has_control_flow(const lnc_module_t *m)
{
    for (int f = 0; f < m->nfuncs; f++)
        for (int b = 0; b < m->funcs[f].nblocks; b++)
            for (int i = 0; i < m->funcs[f].blocks[b].n; i++) {
                unsigned op = m->funcs[f].blocks[b].insts[i].isa.op;
                if (op == ISA_OP_JUMP || op == ISA_OP_BRANCH_CMP)
                    return true;
            }
    return false;
}

/* counts[core * ISA_NUM_SEMAPHORES + sem] */
static sem_count_t *count_updates(const lnc_module_t *m)
{
    sem_count_t *cnt = calloc((size_t)LNC_MAX_CORES * ISA_NUM_SEMAPHORES, sizeof *cnt);
    if (!cnt)
        return NULL;
    for (int f = 0; f < m->nfuncs; f++) {
        const lnc_func_t *fn = &m->funcs[f];
        if (fn->core < 0)
            continue;
        for (int b = 0; b < fn->nblocks; b++)
            for (int i = 0; i < fn->blocks[b].n; i++) {
                const isa_sync_t *h = &fn->blocks[b].insts[i].isa.sync;
                if (!h->upd_en)
                    continue;
                unsigned core = h->upd_remote ? h->upd_core : (unsigned)fn->core;
                if (core >= LNC_MAX_CORES || h->upd_sem >= ISA_NUM_SEMAPHORES)
                    continue;
                sem_count_t *c = &cnt[core * ISA_NUM_SEMAPHORES + h->upd_sem];
                uint32_t add = h->upd_op == ISA_SEMOP_SEM_INC ? 1
                             : h->upd_op == ISA_SEMOP_SEM_ADD_IMM ? h->upd_val : 0;
                if (!add)
                    c->unknown = true;
                c->total += add;
                if (core != (unsigned)fn->core)
                    c->remote += add;
            }
    }
    return cnt;
}

int lnc_copy_deps(lnc_module_t *m)
{
    for (int f = 0; f < m->nfuncs; f++)
        m->funcs[f].ndeps = m->funcs[f].ncross = 0;
    if (has_control_flow(m))
        return 0;
    sem_count_t *cnt = count_updates(m);
    if (!cnt)
        return -1;
    for (int f = 0; f < m->nfuncs; f++) {
        lnc_func_t *fn = &m->funcs[f];
        if (fn->core < 0)
            continue;
        for (int b = 0; b < fn->nblocks; b++)
            for (int i = 0; i < fn->blocks[b].n; i++) {
                const isa_sync_t *h = &fn->blocks[b].insts[i].isa.sync;
                if (!h->wait_en || h->wait_val == 0 || h->wait_sem >= ISA_NUM_SEMAPHORES)
                    continue;
                const sem_count_t *c = &cnt[fn->core * ISA_NUM_SEMAPHORES + h->wait_sem];
                if (c->remote)
                    fn->ncross++;   /* from the other cores' updaters (addBarrier) */
                if (c->total > c->remote)
                    fn->ndeps++;    /* from this core's updater (copyDeps) */
            }
    }
    free(cnt);
    return 0;
}

static const char *sem_name(const lnc_module_t *m, int core, unsigned id)
{
    for (int s = 0; s < m->nsems; s++)
        if (m->sems[s].core == core && m->sems[s].id == (int)id)
            return m->sems[s].name;
    return "?";
}

static int check_bound(const lnc_module_t *m, tpb_err_t *err)
{
    if (has_control_flow(m))
        return 0;
    sem_count_t *cnt = count_updates(m);
    if (!cnt)
        return tpb_errf(err, "out of memory (wait check)");
    int rc = 0;
    for (int f = 0; f < m->nfuncs && !rc; f++) {
        const lnc_func_t *fn = &m->funcs[f];
        if (fn->core < 0)
            continue;
        for (int b = 0; b < fn->nblocks && !rc; b++)
            for (int i = 0; i < fn->blocks[b].n && !rc; i++) {
                const lnc_inst_t *in = &fn->blocks[b].insts[i];
                const isa_sync_t *h = &in->isa.sync;
                if (!h->wait_en || h->wait_sem >= ISA_NUM_SEMAPHORES)
                    continue;
                const sem_count_t *c = &cnt[fn->core * ISA_NUM_SEMAPHORES + h->wait_sem];
                if (c->unknown || h->wait_val <= c->total)
                    continue;
                rc = tpb_errf(err, "core %d %s instruction '%s': waits for S%u (%s) >= %u but the "
                                   "linked program updates it %u time(s) (%u from other cores): "
                                   "it would wait forever (a missing participant?)",
                              fn->core, isa_engine_name((isa_engine_t)fn->blocks[b].engine),
                              in->name, h->wait_sem, sem_name(m, fn->core, h->wait_sem),
                              h->wait_val, c->total, c->remote);
            }
    }
    free(cnt);
    return rc;
}

int lnc_check_waits(const lnc_module_t *m, tpb_err_t *err)
{
    if (m->ndefs == 0)   /* one function per core already */
        return check_bound(m, err);
    lnc_module_t view;   /* every instance bound for its core */
    if (lnc_bind_instances(m, &view, err))
        return -1;
    int rc = check_bound(&view, err);
    lnc_module_free(&view);
    return rc;
}
