/* lnc_instance.c - moveModulesAsFunctions: several instances of one module
 * definition (bir_linker notes §3: "call_def_<core>_instance_<idx>", "the
 * instance_<idx> token allows more than one instance of a module
 * definition", funcArgs / uniqueId), and the per-core expansion that binds
 * each instance for its core's section.  docs/multicore.md "Module
 * definitions and instances". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lnc.h"

void lnc_dap_sides(isa_inst_t *x, isa_dap_t *side[2])
{
    side[0] = side[1] = NULL;
    if (isa_op_is_direct_dma(x->op)) {
        side[0] = &x->f.DDESC.dst;
        side[1] = &x->f.DDESC.src;
    } else if (x->op == ISA_OP_DMA_INDIRECT2D) {
        side[0] = &x->f.DIND.dst;
        side[1] = &x->f.DIND.src;
    }
}

static bool on_chip(const isa_dap_t *d)
{
    return d->space != ISA_SPACE_HBM && d->space != ISA_SPACE_NONE;
}

/* Rebase the core-numbered operands of x from core `from` to core `to`:
 * SBUF/PSUM descriptor sides (a function addresses its own core's memories
 * and its peers' relative to itself) and a remote semaphore update. */
static void rebase(isa_inst_t *x, int from, int to)
{
    isa_dap_t *side[2];
    lnc_dap_sides(x, side);
    for (int s = 0; s < 2; s++)
        if (side[s] && on_chip(side[s]))
            side[s]->core = (side[s]->core - (uint32_t)from + (uint32_t)to) & 7u;
    if (x->sync.upd_en && x->sync.upd_remote)
        x->sync.upd_core = (x->sync.upd_core - (uint32_t)from + (uint32_t)to) & 7u;
}

/* The instruction as its definition would hold it: rebased to core 0 and
 * with every HBM descriptor address cleared (those are parameters). */
static bool canonical(const lnc_inst_t *in, int core, uint8_t out[ISA_BUNDLE_BYTES])
{
    isa_inst_t x = in->isa;
    rebase(&x, core, 0);
    isa_dap_t *side[2];
    lnc_dap_sides(&x, side);
    for (int s = 0; s < 2; s++)
        if (side[s] && side[s]->space == ISA_SPACE_HBM)
            side[s]->addr = 0;
    if (x.op == ISA_OP_CORE_BARRIER)   /* renumbered after the move; local_id compared */
        x.f.CB.id = 0;
    isa_err_t e;
    memset(out, 0, ISA_BUNDLE_BYTES);
    return isa_encode(&x, out, &e) == ISA_OK;
}

static bool same_inst(const lnc_inst_t *a, int ca, const lnc_inst_t *b, int cb)
{
    if (a->opc != b->opc || a->engine != b->engine || a->nprefix != b->nprefix ||
        a->local_id != b->local_id)
        return false;
    if (a->nprefix > 0 && memcmp(a->prefix, b->prefix, (size_t)a->nprefix * ISA_BUNDLE_BYTES))
        return false;
    switch (a->opc) {
    case LNC_OPC_RETURN:
        return true;
    case LNC_OPC_SQI:   /* the call site picks the queue instance: compare queues */
        return a->queue == b->queue;
    case LNC_OPC_CALL:
        return false;   /* only the dispatcher calls */
    default: {
        uint8_t x[ISA_BUNDLE_BYTES], y[ISA_BUNDLE_BYTES];
        return canonical(a, ca, x) && canonical(b, cb, y) && !memcmp(x, y, sizeof x);
    }
    }
}

static bool same_body(const lnc_func_t *a, const lnc_func_t *b)
{
    if (a->nblocks != b->nblocks)
        return false;
    for (int k = 0; k < a->nblocks; k++) {
        const lnc_block_t *x = &a->blocks[k], *y = &b->blocks[k];
        if (x->engine != y->engine || x->n != y->n)
            return false;
        for (int i = 0; i < x->n; i++)
            if (!same_inst(&x->insts[i], a->core, &y->insts[i], b->core))
                return false;
    }
    return true;
}

static uint32_t hbm_addr(const lnc_inst_t *in, int side)
{
    isa_inst_t x = in->isa;
    isa_dap_t *s[2];
    lnc_dap_sides(&x, s);
    return s[side] ? s[side]->addr : 0;
}

/* funcArgs of definition d over its member functions: every HBM side whose
 * address differs between two members. */
static int find_params(lnc_func_t *d, lnc_func_t *const *mem, int nmem, tpb_err_t *err)
{
    for (int k = 0; k < d->nblocks; k++)
        for (int i = 0; i < d->blocks[k].n; i++) {
            isa_inst_t x = d->blocks[k].insts[i].isa;
            isa_dap_t *s[2];
            lnc_dap_sides(&x, s);
            if (d->blocks[k].insts[i].opc != LNC_OPC_ISA)
                continue;
            for (int side = 0; side < 2; side++) {
                if (!s[side] || s[side]->space != ISA_SPACE_HBM)
                    continue;
                bool differs = false;
                for (int j = 0; j < nmem && !differs; j++)
                    differs = hbm_addr(&mem[j]->blocks[k].insts[i], side) != s[side]->addr;
                if (!differs)
                    continue;
                lnc_param_t *p = realloc(d->params, (size_t)(d->nparams + 1) * sizeof *p);
                if (!p)
                    return tpb_errf(err, "out of memory (parameters of %s)", d->name);
                d->params = p;
                d->params[d->nparams++] = (lnc_param_t){k, i, side, -1, 0};
            }
        }
    return 0;
}

static int add_instance(lnc_func_t *d, const lnc_func_t *f, int unique_id, tpb_err_t *err)
{
    lnc_instance_t *in = realloc(d->insts, (size_t)(d->ninsts + 1) * sizeof *in);
    if (!in)
        return tpb_errf(err, "out of memory (instances of %s)", d->name);
    d->insts = in;
    lnc_instance_t *x = &d->insts[d->ninsts];
    memset(x, 0, sizeof *x);
    x->core = f->core;
    x->idx = d->ninsts;
    x->unique_id = unique_id;
    x->ndeps = f->ndeps;
    x->ncross = f->ncross;
    if (d->nparams > 0 && !(x->args = calloc((size_t)d->nparams, sizeof *x->args)))
        return tpb_errf(err, "out of memory (arguments of %s)", d->name);
    for (int p = 0; p < d->nparams; p++)
        x->args[p] = hbm_addr(&f->blocks[d->params[p].block].insts[d->params[p].inst],
                              d->params[p].side);
    d->ninsts++;
    return 0;
}

static void free_body(lnc_func_t *f)
{
    for (int b = 0; b < f->nblocks; b++)
        free(f->blocks[b].insts);
    free(f->blocks);
    f->blocks = NULL;
    f->nblocks = 0;
}

int lnc_move_modules_as_functions(lnc_module_t *m, tpb_err_t *err)
{
    int nf = m->nfuncs;
    if (nf < 2 || m->funcs[0].nblocks < 1)
        return tpb_errf(err, "%s: no core functions to move", m->name);
    int defof[1 + LNC_MAX_CORES];
    if (nf - 1 > LNC_MAX_CORES)
        return tpb_errf(err, "%s: %d core functions (at most %d)", m->name, nf - 1,
                        LNC_MAX_CORES);
    /* the definition of every core function: the first equal body */
    int ndefs = 0;
    for (int f = 1; f < nf; f++) {
        defof[f] = f;
        for (int g = 1; g < f && defof[f] == f; g++)
            if (defof[g] == g && same_body(&m->funcs[g], &m->funcs[f]))
                defof[f] = g;
        if (defof[f] == f)
            m->funcs[f].def_id = ndefs++;
    }
    for (int f = 1; f < nf; f++) {
        if (defof[f] != f)
            continue;
        lnc_func_t *mem[LNC_MAX_CORES];
        int nmem = 0;
        for (int g = f; g < nf; g++)
            if (defof[g] == f)
                mem[nmem++] = &m->funcs[g];
        if (find_params(&m->funcs[f], mem, nmem, err))
            return -1;
    }
    /* the dispatcher's calls, in order: one instance each, unique ids */
    lnc_block_t *disp = &m->funcs[0].blocks[0];
    int uid = 0;
    for (int i = 0; i < disp->n; i++) {
        lnc_inst_t *call = &disp->insts[i];
        if (call->opc != LNC_OPC_CALL || call->callee < 1 || call->callee >= nf)
            continue;
        lnc_func_t *d = &m->funcs[defof[call->callee]];
        call->call_core = m->funcs[call->callee].core;
        call->call_inst = d->ninsts;
        if (add_instance(d, &m->funcs[call->callee], uid++, err))
            return -1;
        lnc_call_name(call->name, sizeof call->name, d->def_id, call->call_inst);
    }
    /* keep main and the definitions; instance bodies are dropped */
    int map[1 + LNC_MAX_CORES], w = 1;
    map[0] = 0;
    for (int f = 1; f < nf; f++) {
        if (defof[f] != f) {
            free_body(&m->funcs[f]);
            continue;
        }
        map[f] = w;
        if (w != f)
            m->funcs[w] = m->funcs[f];
        w++;
    }
    for (int f = 1; f < nf; f++)
        if (defof[f] != f)
            map[f] = map[defof[f]];
    for (int i = 0; i < disp->n; i++)
        if (disp->insts[i].opc == LNC_OPC_CALL && disp->insts[i].callee >= 1 &&
            disp->insts[i].callee < nf)
            disp->insts[i].callee = map[disp->insts[i].callee];
    m->nfuncs = w;
    m->ndefs = ndefs;
    return 0;
}

/* ---- the per-core expansion ---- */

/* A link-level name that carries the function's core: return_<c>,
 * cb_return_<c>, I-SQI-<queue>-nc<c>. */
static void rename_for_core(lnc_inst_t *in, int core)
{
    static const char *const pre[] = {"return_", "cb_return_"};
    for (size_t k = 0; k < sizeof pre / sizeof pre[0]; k++)
        if (!strncmp(in->name, pre[k], strlen(pre[k]))) {
            snprintf(in->name, sizeof in->name, "%s%d", pre[k], core);
            return;
        }
    char *nc = strrchr(in->name, '-');
    if (!strncmp(in->name, "I-SQI-", 6) && nc && !strncmp(nc, "-nc", 3))
        snprintf(nc, sizeof in->name - (size_t)(nc - in->name), "-nc%d", core);
}

static int bind_inst(const lnc_module_t *m, lnc_inst_t *in, int from, int core, tpb_err_t *err)
{
    rename_for_core(in, core);
    if (in->opc == LNC_OPC_SQI && in->queue >= 0 && in->queue < m->nqueues) {
        const lnc_queue_t *q = &m->queues[in->queue];
        in->qinst = -1;
        for (int k = 0; k < q->ninst; k++)
            if (q->inst[k].core == core)
                in->qinst = k;
        if (in->qinst < 0)
            return tpb_errf(err, "%s: no instance of queue '%s' for core %d", in->name, q->name,
                            core);
    } else if (in->opc == LNC_OPC_ISA || in->opc == BIR_CORE_BARRIER) {
        rebase(&in->isa, from, core);
    }
    return 0;
}

static int bind_function(const lnc_module_t *m, const lnc_func_t *d, const lnc_instance_t *x,
                         lnc_module_t *view, tpb_err_t *err)
{
    char name[LNC_NAME_LEN];
    snprintf(name, sizeof name, "nc%d", x->core);
    int fi = lnc_add_func(view, name, x->core, err);
    if (fi < 0)
        return -1;
    view->funcs[fi].ndeps = x->ndeps;
    view->funcs[fi].ncross = x->ncross;
    for (int b = 0; b < d->nblocks; b++) {
        const lnc_block_t *sb = &d->blocks[b];
        lnc_block_t *db = lnc_func_block(view, fi, sb->engine, sb->name, err);
        if (!db)
            return -1;
        lnc_inst_t args[ISA_NUM_REGS];   /* descriptor reuse: the call site's */
        int na = x->args ? lnc_call_args(d, x, b, args) : 0;
        for (int i = 0; i < na; i++)
            if (lnc_block_append(db, &args[i], err) < 0)
                return -1;
        for (int i = 0; i < sb->n; i++) {
            lnc_inst_t in = sb->insts[i];
            if (bind_inst(m, &in, d->core, x->core, err) || lnc_block_append(db, &in, err) < 0)
                return -1;
        }
    }
    lnc_func_t *f = &view->funcs[fi];
    for (int p = 0; p < d->nparams && !d->desc_reuse; p++) {   /* funcArgs */
        isa_dap_t *s[2];
        int na = 0;   /* leading call-site arguments of that block */
        while (f->blocks[d->params[p].block].insts[na].opc == LNC_OPC_ARG)
            na++;
        lnc_dap_sides(&f->blocks[d->params[p].block].insts[na + d->params[p].inst].isa, s);
        s[d->params[p].side]->addr = x->args[p];
    }
    return fi;
}

static void *dup(const void *p, size_t n, bool *fail)
{
    if (!n)
        return NULL;
    void *q = malloc(n);
    if (!q)
        *fail = true;
    else
        memcpy(q, p, n);
    return q;
}

int lnc_bind_instances(const lnc_module_t *m, lnc_module_t *view, tpb_err_t *err)
{
    lnc_module_init(view, m->name, m->core);
    view->ncores = m->ncores;
    view->nbarrier_ids = m->nbarrier_ids;
    bool fail = false;
    view->mlocs = dup(m->mlocs, (size_t)m->nmlocs * sizeof *m->mlocs, &fail);
    view->queues = dup(m->queues, (size_t)m->nqueues * sizeof *m->queues, &fail);
    view->sems = dup(m->sems, (size_t)m->nsems * sizeof *m->sems, &fail);
    view->aliases = dup(m->aliases, (size_t)m->naliases * sizeof *m->aliases, &fail);
    view->nmlocs = m->nmlocs;
    view->nqueues = m->nqueues;
    view->nsems = m->nsems;
    view->naliases = m->naliases;
    if (fail) {
        lnc_module_free(view);
        return tpb_errf(err, "out of memory (per-core expansion of %s)", m->name);
    }
    if (m->nfuncs < 1 || m->funcs[0].nblocks < 1) {
        lnc_module_free(view);
        return tpb_errf(err, "%s: no dispatcher", m->name);
    }
    const lnc_block_t *disp = &m->funcs[0].blocks[0];
    lnc_block_t *vd;
    if (lnc_add_func(view, m->funcs[0].name, -1, err) < 0 ||
        !(vd = lnc_func_block(view, 0, disp->engine, disp->name, err)))
        goto fail;
    for (int i = 0; i < disp->n; i++) {
        lnc_inst_t call = disp->insts[i];
        if (call.opc == LNC_OPC_CALL && call.callee >= 1 && call.callee < m->nfuncs) {
            const lnc_func_t *d = &m->funcs[call.callee];
            const lnc_instance_t *x = NULL;
            for (int k = 0; k < d->ninsts; k++)
                if (d->insts[k].idx == call.call_inst)
                    x = &d->insts[k];
            int fi;
            if (!x) {   /* not collapsed: the function is its one instance */
                lnc_instance_t one = {.core = d->core, .ndeps = d->ndeps, .ncross = d->ncross};
                fi = bind_function(m, d, &one, view, err);
            } else {
                fi = bind_function(m, d, x, view, err);
            }
            if (fi < 0)
                goto fail;
            call.callee = fi;
            vd = &view->funcs[0].blocks[0];
        }
        if (lnc_block_append(vd, &call, err) < 0)
            goto fail;
    }
    return 0;
fail:
    lnc_module_free(view);
    return -1;
}

struct cJSON *lnc_definition_json(const lnc_func_t *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", f->def_id);
    cJSON *ps = cJSON_AddArrayToObject(o, "params");
    for (int p = 0; p < f->nparams; p++) {
        const lnc_param_t *q = &f->params[p];
        cJSON *po = cJSON_CreateObject();
        cJSON_AddStringToObject(po, "block", f->blocks[q->block].name);
        cJSON_AddNumberToObject(po, "inst", q->inst);
        cJSON_AddStringToObject(po, "name", f->blocks[q->block].insts[q->inst].name);
        cJSON_AddStringToObject(po, "operand", q->side ? "src" : "dst");
        if (q->reg >= 0)
            cJSON_AddNumberToObject(po, "register", q->reg);
        cJSON_AddItemToArray(ps, po);
    }
    if (f->ndesc > 0) {   /* counted by descriptor reuse */
        cJSON_AddNumberToObject(o, "dma_descriptors", f->ndesc);
        cJSON_AddNumberToObject(o, "shared_descriptors", f->nshared);
    }
    cJSON *is = cJSON_AddArrayToObject(o, "instances");
    for (int k = 0; k < f->ninsts; k++) {
        const lnc_instance_t *x = &f->insts[k];
        cJSON *io = cJSON_CreateObject();
        char call[LNC_NAME_LEN];
        lnc_call_name(call, sizeof call, f->def_id, x->idx);
        cJSON_AddStringToObject(io, "call", call);
        cJSON_AddNumberToObject(io, "NeuronCoreId", x->core);
        cJSON_AddNumberToObject(io, "uniqueId", x->unique_id);
        cJSON_AddNumberToObject(io, "dependency_edges", x->ndeps);
        cJSON_AddNumberToObject(io, "cross_core_edges", x->ncross);
        cJSON *as = cJSON_AddArrayToObject(io, "funcArgs");
        for (int p = 0; p < f->nparams; p++)
            cJSON_AddItemToArray(as, cJSON_CreateNumber(x->args[p]));
        cJSON_AddItemToArray(is, io);
    }
    return o;
}
