/* lnc_birlink.c - link the per-core backend IR into one module before
 * semaphore and register allocation (lnc_bir.h, docs/multicore.md
 * "Pipeline"): the clone with its queue and register remaps, the unified
 * semaphore pool (alloc_semaphores) and the post-link register allocator. */
#include "lnc_bir.h"

#include "hugepage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* ---- register operands ---- */

void lnc_bir_for_regs(bir_inst_t *in, void (*fn)(void *ctx, uint32_t *field, int count),
                      void *ctx)
{
    isa_body_t *x = in->isa.f;   /* written in place: the clone owns its bodies */
    if (!x)
        return;
    switch (isa_ops[in->isa.op].format) {
    case ISA_FMT_TLOAD:
        fn(ctx, &x->TLOAD.reg, (int)x->TLOAD.count);
        break;
    case ISA_FMT_TSTORE:
        fn(ctx, &x->TSTORE.reg, (int)x->TSTORE.count);
        break;
    case ISA_FMT_BR:
        fn(ctx, &x->BR.reg, 1);
        break;
    case ISA_FMT_REG:
        fn(ctx, &x->REG.reg, 1);
        break;
    case ISA_FMT_REGMV:
        fn(ctx, &x->REGMV.reg, 1);
        fn(ctx, &x->REGMV.src, 1);
        break;
    case ISA_FMT_TS:
        if (x->TS.s0_reg_en)
            fn(ctx, &x->TS.s0_reg, 1);
        break;
    case ISA_FMT_DDESC:
    case ISA_FMT_D3DESC:   /* the same leading fields (isa.h) */
        if (x->DDESC.src_reg != ISA_REG_NONE)
            fn(ctx, &x->DDESC.src_reg, 1);
        if (x->DDESC.dst_reg != ISA_REG_NONE)
            fn(ctx, &x->DDESC.dst_reg, 1);
        break;
    default:
        break;
    }
}

typedef struct {
    lnc_bir_func_t *f;
    int engine;
    int phase;               /* 0: mark used, 1: core -> virtual, 2: virtual -> physical */
    const char *bad;         /* first operand outside the register file */
} regwalk_t;

static void reg_visit(void *ctx, uint32_t *field, int count)
{
    regwalk_t *w = ctx;
    if (count < 1)
        count = 1;
    if (*field >= ISA_NUM_REGS || *field + (uint32_t)count > ISA_NUM_REGS) {
        w->bad = "register operand outside the file";
        return;
    }
    lnc_bir_func_t *f = w->f;
    int e = w->engine;
    if (w->phase == 0) {
        for (int i = 0; i < count; i++)
            f->regdm[e][*field + (uint32_t)i] = 0;
    } else if (w->phase == 1) {
        *field = (uint32_t)f->regdm[e][*field];
    } else {
        *field = (uint32_t)f->vregs[e][*field].phys;
    }
}

/* regDM: the registers each engine of the core names, numbered in register
 * order (so a range of registers stays a range of virtual registers), and
 * every operand rewritten to its virtual register. */
static int remap_registers(lnc_bir_func_t *f, tpb_err_t *err)
{
    bir_block_t *b = bir_main_block(&f->body.m);
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        for (int r = 0; r < ISA_NUM_REGS; r++)
            f->regdm[e][r] = -1;
    for (int phase = 0; phase < 2; phase++) {
        for (int i = 0; i < b->ninsts; i++) {
            bir_inst_t *in = &b->insts[i];
            if (in->engine < 0 || in->engine >= ISA_ENG_COUNT)
                continue;
            regwalk_t w = {f, in->engine, phase, NULL};
            lnc_bir_for_regs(in, reg_visit, &w);
            if (w.bad)
                return tpb_errf(err, "%s: instruction '%s': %s", f->name, in->name, w.bad);
        }
        if (phase == 0)
            for (int e = 0; e < ISA_ENG_COUNT; e++) {
                f->nvregs[e] = 0;
                for (int r = 0; r < ISA_NUM_REGS; r++)
                    if (f->regdm[e][r] == 0) {
                        f->regdm[e][r] = f->nvregs[e];
                        f->vregs[e][f->nvregs[e]++] = (lnc_vreg_t){(uint8_t)r, -1};
                    }
            }
    }
    return 0;
}

/* ---- the clone ---- */

static int clone_body(const enc_core_t *src, enc_core_t *dst, tpb_err_t *err)
{
    const bir_module_t *s = &src->m;
    const tir_kernel_t *k = src->k;
    memset(dst, 0, sizeof *dst);
    dst->k = k;
    if (bir_module_init(&dst->m, s->core, s->nmlocs, err))
        return -1;
    bir_module_t *d = &dst->m;
    memcpy(d->mlocs, s->mlocs, (size_t)s->nmlocs * sizeof *d->mlocs);
    if (s->nops > 0) {
        d->nops = s->nops;   /* before the allocation: bir_module_free frees by it */
        if (!(d->op_scratch = tpb_array_zalloc((size_t)s->nops * sizeof *d->op_scratch)))
            return tpb_errf(err, "out of memory cloning core %d", s->core);
        /* few ops have a scratch tile: the others stay untouched zero pages */
        for (int i = 0; s->nscratch && i < s->nops; i++)
            if (s->op_scratch[i].bytes)
                d->op_scratch[i] = s->op_scratch[i];
    }
    d->nops = s->nops;
    d->nscratch = s->nscratch;
    if (s->nloops > 0) {
        if (!(d->loops = malloc((size_t)s->nloops * sizeof *d->loops)))
            return tpb_errf(err, "out of memory cloning core %d", s->core);
        memcpy(d->loops, s->loops, (size_t)s->nloops * sizeof *d->loops);
    }
    d->nloops = s->nloops;
    memcpy(d->queues, s->queues, sizeof d->queues);
    d->nqueues = s->nqueues;
    memcpy(d->sems, s->sems, sizeof d->sems);
    d->nsems = s->nsems;
    d->next_dma_group = s->next_dma_group;
    d->coll_sems = s->coll_sems;
    const bir_block_t *sb = &s->funcs[0].blocks[0];
    bir_block_t *db = bir_main_block(d);
    if (sb->ninsts > 0) {
        /* a block's array (bir_module_free): tpb_array_grow's memory */
        if (!(db->insts = tpb_array_grow(NULL, 0, (size_t)sb->ninsts * sizeof *db->insts)))
            return tpb_errf(err, "out of memory cloning core %d", s->core);
        memcpy(db->insts, sb->insts, (size_t)sb->ninsts * sizeof *db->insts);
        db->ninsts = db->cap = sb->ninsts;
        /* the source module is freed after the link: names move to d's arena */
        for (int i = 0; i < db->ninsts; i++)
            if (!bir_inst_adopt(d, &db->insts[i]))
                return tpb_errf(err, "out of memory cloning core %d", s->core);
    }
    if (k && k->nloops > 0 && src->cand) {
        if (!(dst->cand = malloc((size_t)k->nloops)))
            return tpb_errf(err, "out of memory cloning core %d", s->core);
        memcpy(dst->cand, src->cand, (size_t)k->nloops);
    }
    return 0;
}

/* getQueueByName on the unified pool (added when new). */
static int unified_queue(lnc_bir_module_t *m, const bir_queue_t *q, int core, tpb_err_t *err)
{
    int u = 0;
    while (u < m->nqueues && strcmp(m->queues[u].name, q->name) != 0)
        u++;
    if (u == m->nqueues) {
        if (m->nqueues >= BIR_MAX_QUEUES)
            return tpb_errf(err, "%s: more than %d DMA queues in the unified pool", m->name,
                            BIR_MAX_QUEUES);
        lnc_bir_queue_t *nq = &m->queues[m->nqueues++];
        memset(nq, 0, sizeof *nq);
        snprintf(nq->name, sizeof nq->name, "%s", q->name);
        nq->engine = q->engine;
        nq->semaphore = -1;
    } else if (m->queues[u].engine != q->engine) {
        return tpb_errf(err, "%s: queue '%s' of core %d is issued by %s, the unified queue by %s",
                        m->name, q->name, core, isa_engine_name((isa_engine_t)q->engine),
                        isa_engine_name((isa_engine_t)m->queues[u].engine));
    }
    lnc_bir_queue_t *uq = &m->queues[u];
    if (uq->ninst < LNC_MAX_CORES)
        uq->inst_core[uq->ninst++] = core;
    return u;
}

static void set_queue_field(bir_inst_t *in, uint32_t id)
{
    if (isa_op_is_direct_dma(in->isa.op))
        in->isa.f->DDESC.queue = id;
    else if (in->isa.op == ISA_OP_DMA_INDIRECT2D)
        in->isa.f->DIND.queue = id;
    else if (in->isa.op == ISA_OP_DMA_TRIGGER)
        in->isa.f->DTRIG.queue = id;
}

/* copyInstrs2BB's queue side: each of the core's queues becomes its
 * instance of the unified queue of that name; the instructions' queue
 * operands name the unified queue. */
static int remap_queues(lnc_bir_module_t *m, lnc_bir_func_t *f, tpb_err_t *err)
{
    bir_module_t *bm = &f->body.m;
    for (int q = 0; q < bm->nqueues; q++) {
        int u = unified_queue(m, &bm->queues[q], f->core, err);
        if (u < 0)
            return -1;
        f->qmap[q] = u;
        bm->queues[q].id = u;
    }
    bir_block_t *b = bir_main_block(bm);
    for (int i = 0; i < b->ninsts; i++) {
        bir_inst_t *in = &b->insts[i];
        if (in->queue < 0)
            continue;
        if (in->queue >= bm->nqueues)
            return tpb_errf(err, "%s: instruction '%s' names queue %d of %d", f->name, in->name,
                            in->queue, bm->nqueues);
        set_queue_field(in, (uint32_t)f->qmap[in->queue]);
    }
    return 0;
}

void lnc_bir_module_free(lnc_bir_module_t *m)
{
    for (int i = 0; i < m->nfuncs && m->funcs; i++)
        enc_core_free(&m->funcs[i].body);
    free(m->funcs);
    memset(m, 0, sizeof *m);
}

int lnc_bir_link(const enc_core_t *cores, int n, const char *kernel_name,
                 lnc_bir_module_t *out, tpb_err_t *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%.80s%s", kernel_name, LNC_SUFFIX);
    if (n < 1 || n > LNC_MAX_CORES)
        return tpb_errf(err, "%s: %d modules to link (1..%d)", out->name, n, LNC_MAX_CORES);
    /* the definition table: one module per NeuronCoreId 0..n-1 */
    const enc_core_t *bycore[LNC_MAX_CORES] = {0};
    for (int i = 0; i < n; i++) {
        int c = cores[i].m.core;
        if (c < 0 || c >= n || bycore[c])
            return tpb_errf(err, "%s: module %d has NeuronCoreId %d: expected one module per "
                                 "core 0..%d",
                            out->name, i, c, n - 1);
        bycore[c] = &cores[i];
    }
    if (!(out->funcs = calloc((size_t)n, sizeof *out->funcs)))
        return tpb_errf(err, "out of memory (%s)", out->name);
    for (int c = 0; c < n; c++) {   /* copyModulesAsFunctions, core order */
        lnc_bir_func_t *f = &out->funcs[c];
        f->core = c;
        snprintf(f->name, sizeof f->name, "nc%d", c);
        out->nfuncs = c + 1;
        if (clone_body(bycore[c], &f->body, err) || remap_queues(out, f, err) ||
            remap_registers(f, err)) {
            lnc_bir_module_free(out);
            return -1;
        }
        if (f->body.m.coll_sems > out->coll_sems)
            out->coll_sems = f->body.m.coll_sems;
    }
    return 0;
}

/* ---- alloc_semaphores over the unified pool ---- */

static int pool_add(lnc_bir_module_t *m, const char *name, tpb_err_t *err)
{
    if (m->nsems >= BIR_MAX_SEMS)
        return tpb_errf(err, "%s: more than %d semaphores in the unified pool", m->name,
                        BIR_MAX_SEMS);
    m->sems[m->nsems].id = m->nsems;
    snprintf(m->sems[m->nsems].name, sizeof m->sems[0].name, "%s", name);
    return m->nsems++;
}

int lnc_bir_alloc_semaphores(lnc_bir_module_t *m, tpb_err_t *err)
{
    m->nsems = 0;
    for (int i = 0; i < 5; i++)   /* the engines' completion counters */
        if (pool_add(m, isa_engine_name(isa_tpb_engines[i]), err) < 0)
            return -1;
    for (int i = 0; i < m->coll_sems; i++) {   /* BIR_COLL_SEM0 + i: peers name them */
        char nm[32];
        if (i == 0)
            snprintf(nm, sizeof nm, "CollDone");
        else
            snprintf(nm, sizeof nm, "CollReady+%d", i);
        if (pool_add(m, nm, err) < 0)
            return -1;
    }
    for (int u = 0; u < m->nqueues; u++) {
        int s = pool_add(m, m->queues[u].name, err);
        if (s < 0)
            return -1;
        m->queues[u].semaphore = s;
    }
    for (int i = 0; i < m->nfuncs; i++) {
        lnc_bir_func_t *f = &m->funcs[i];
        bir_module_t *bm = &f->body.m;
        memcpy(bm->sems, m->sems, sizeof bm->sems);
        bm->nsems = m->nsems;
        for (int q = 0; q < bm->nqueues; q++)
            bm->queues[q].semaphore = m->queues[f->qmap[q]].semaphore;
    }
    return 0;
}

/* ---- the post-link register allocator ---- */

/* Physical registers for one function and engine: each virtual register
 * its original number when that is free, else the highest free run that
 * keeps a range (virtual registers v..v+k-1 named together) contiguous. */
static int alloc_engine(lnc_bir_func_t *f, int e, tpb_err_t *err)
{
    bool taken[ISA_NUM_REGS] = {false};
    for (int v = 0; v < f->nvregs[e]; v++) {
        int want = f->vregs[e][v].orig;
        if (want >= 0 && want < ISA_NUM_REGS && !taken[want]) {
            f->vregs[e][v].phys = want;
            taken[want] = true;
            continue;
        }
        int r = ISA_NUM_REGS - 1;
        while (r >= 0 && taken[r])
            r--;
        if (r < 0)
            return tpb_errf(err, "%s: engine %s: no physical register left for r%d (%d virtual "
                                 "registers, %d in the file)",
                            f->name, isa_engine_name((isa_engine_t)e), want, f->nvregs[e],
                            ISA_NUM_REGS);
        f->vregs[e][v].phys = r;
        taken[r] = true;
    }
    return 0;
}

int lnc_bir_alloc_registers(lnc_bir_module_t *m, tpb_err_t *err)
{
    for (int i = 0; i < m->nfuncs; i++) {
        lnc_bir_func_t *f = &m->funcs[i];
        for (int e = 0; e < ISA_ENG_COUNT; e++)
            if (alloc_engine(f, e, err))
                return -1;
        bir_block_t *b = bir_main_block(&f->body.m);
        for (int j = 0; j < b->ninsts; j++) {
            bir_inst_t *in = &b->insts[j];
            if (in->engine < 0 || in->engine >= ISA_ENG_COUNT)
                continue;
            regwalk_t w = {f, in->engine, 2, NULL};
            lnc_bir_for_regs(in, reg_visit, &w);
            if (w.bad)
                return tpb_errf(err, "%s: instruction '%s': %s", f->name, in->name, w.bad);
        }
    }
    m->regs_allocated = true;
    return 0;
}

/* ---- sgLnk/bir_link.json ---- */

static cJSON *func_json(const lnc_bir_func_t *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", f->name);
    cJSON_AddNumberToObject(o, "neuron_core_id", f->core);
    cJSON_AddNumberToObject(o, "instructions", f->body.m.funcs[0].blocks[0].ninsts);
    cJSON *qs = cJSON_AddArrayToObject(o, "queues");
    for (int q = 0; q < f->body.m.nqueues; q++)
        cJSON_AddItemToArray(qs, cJSON_CreateNumber(f->qmap[q]));
    cJSON *regs = cJSON_AddObjectToObject(o, "registers");
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        if (!f->nvregs[e])
            continue;
        cJSON *a = cJSON_AddArrayToObject(regs, isa_engine_name((isa_engine_t)e));
        for (int v = 0; v < f->nvregs[e]; v++) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddNumberToObject(r, "virtual", v);
            cJSON_AddNumberToObject(r, "core_register", f->vregs[e][v].orig);
            cJSON_AddNumberToObject(r, "physical", f->vregs[e][v].phys);
            cJSON_AddItemToArray(a, r);
        }
    }
    return o;
}

char *lnc_bir_module_json(const lnc_bir_module_t *m)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddStringToObject(root, "format", "tpbsim-bir-link");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "module", m->name);
    cJSON *p = cJSON_AddArrayToObject(root, "pipeline");
    static const char *const steps[] = {
        "lnc_splitter", "per core: allocation, lowering, engines, DMA queues",
        "bir_linker (L1)", "alloc_semaphores (unified pool)",
        "coloring_allocator_reg (post-link)",
        "per function: synchronizer, rolled loops, codegen", "sgLnk assembly"};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        cJSON_AddItemToArray(p, cJSON_CreateString(steps[i]));
    cJSON *pm = cJSON_AddArrayToObject(root, "passes");
    for (int i = 0; i < m->npasses; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", m->pass_name[i]);
        cJSON_AddStringToObject(o, "kind", m->pass_kind[i]);
        cJSON_AddItemToArray(pm, o);
    }
    cJSON *fs = cJSON_AddArrayToObject(root, "functions");
    for (int i = 0; i < m->nfuncs; i++)
        cJSON_AddItemToArray(fs, func_json(&m->funcs[i]));
    cJSON *qs = cJSON_AddArrayToObject(root, "queues");
    for (int u = 0; u < m->nqueues; u++) {
        cJSON *q = cJSON_CreateObject();
        cJSON_AddNumberToObject(q, "id", u);
        cJSON_AddStringToObject(q, "name", m->queues[u].name);
        cJSON_AddStringToObject(q, "engine", isa_engine_name((isa_engine_t)m->queues[u].engine));
        cJSON_AddNumberToObject(q, "semaphore", m->queues[u].semaphore);
        cJSON *in = cJSON_AddArrayToObject(q, "instances");
        for (int i = 0; i < m->queues[u].ninst; i++)
            cJSON_AddItemToArray(in, cJSON_CreateNumber(m->queues[u].inst_core[i]));
        cJSON_AddItemToArray(qs, q);
    }
    cJSON *ss = cJSON_AddArrayToObject(root, "semaphores");
    for (int s = 0; s < m->nsems; s++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "id", m->sems[s].id);
        cJSON_AddStringToObject(o, "name", m->sems[s].name);
        cJSON_AddItemToArray(ss, o);
    }
    char *txt = cJSON_Print(root);
    cJSON_Delete(root);
    return txt;
}
