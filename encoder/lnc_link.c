/* lnc_link.c - the multi-core linker (N per-core modules -> one module),
 * after the bir_linker notes (seed 003): a fresh "<name>/sgLnk" module,
 * each core copied in as a function, a dispatcher block of
 * call_def_<core>_instance_<idx>, returns + cb_return_ completion barriers,
 * I-SQI queue-instance switches, unified memory locations / aliases /
 * queues / semaphores, demoted intermediate outputs, and the global
 * CoreBarrier renumber.  See docs/multicore.md. */
#include "lnc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

void lnc_call_name(char *buf, size_t len, int core, int idx)
{
    snprintf(buf, len, "call_def_%d_instance_%d", core, idx);
}

/* getNcLnkModuleName */
static void lnk_module_name(char *buf, size_t len, const char *base)
{
    snprintf(buf, len, "%.80s%s", base, LNC_SUFFIX);
}

/* initCallGraphModule: the dispatcher function and its block. */
static int init_call_graph_module(lnc_module_t *out, tpb_err_t *err)
{
    int f = lnc_add_func(out, "main", -1, err);
    if (f < 0)
        return -1;
    return lnc_func_block(out, f, -1, "dispatcher", err) ? 0 : -1;
}

/* Bind every SBUF/PSUM side of a DMA descriptor to the function's physical
 * core: per-core streams address memories relative to their own core (DAP
 * core 0 = local, k = the core k places on, as a collective's pull from a
 * peer's SBUF has it); in the linked program a stream runs on core `core`. */
static void remap_dap_cores(isa_inst_t *in, int core)
{
    isa_dap_t *sides[2];
    lnc_dap_sides(in, sides);
    for (int i = 0; i < 2; i++)
        if (sides[i] && sides[i]->space != ISA_SPACE_HBM && sides[i]->space != ISA_SPACE_NONE)
            sides[i]->core = (sides[i]->core + (uint32_t)core) & 7u;
}

/* copyAllocs2Func: collapse the core's names onto the linked module's
 * memory locations.  inpMap: a consumer's input that another core produces
 * (its remote_local_target) -> the producer's unified name; outMap: an
 * output -> its unified name; anything else gets (or joins) a fresh
 * main-module location of the same name. */
static int copy_allocs(const lnc_module_t *core, lnc_module_t *out, lnc_names_t *ix,
                       tpb_err_t *err)
{
    for (int i = 0; i < core->nmlocs; i++) {
        const lnc_mloc_t *ml = &core->mlocs[i];
        char uname[LNC_NAME_LEN];
        if (ml->remote_core >= 0 && ml->kind == LNC_ML_INPUT)
            snprintf(uname, sizeof uname, "%s", ml->remote_name);   /* inpMap */
        else
            snprintf(uname, sizeof uname, "%s", ml->name);          /* outMap / memMap */
        int u = lnc_names_find(ix, out, uname);
        if (u >= 0) {
            lnc_mloc_t *um = &out->mlocs[u];
            if (ml->kind == LNC_ML_LOCAL || um->kind == LNC_ML_LOCAL)
                return tpb_errf(err, "Name collision for Input '%s' in subgraph nc%d", uname,
                                core->core);
            /* a kernel input of one core is some other kind of buffer on
             * another: the module instance's external input collides */
            bool ext_in = ml->external && ml->kkind == LNC_ML_INPUT;
            bool uext_in = um->external && um->kkind == LNC_ML_INPUT;
            if (ext_in != uext_in)
                return tpb_errf(err, "Name collision for ExtInput '%s' in Module Instance %d "
                                     "subgraph nc%d",
                                uname, 0, core->core);
            if (um->addr != ml->addr || um->bytes != ml->bytes)
                return tpb_errf(err, "shared buffer '%s': core %d has it at 0x%llx (%llu bytes) "
                                     "but another core at 0x%llx (%llu bytes)",
                                uname, core->core, (unsigned long long)ml->addr,
                                (unsigned long long)ml->bytes, (unsigned long long)um->addr,
                                (unsigned long long)um->bytes);
            if (ml->kind == LNC_ML_OUTPUT)
                um->kind = LNC_ML_OUTPUT, um->external = true;
            continue;
        }
        lnc_mloc_t nm = *ml;
        snprintf(nm.name, sizeof nm.name, "%s", uname);
        nm.remote_name[0] = 0;
        nm.remote_core = -1;
        /* a per-core subgraph's outputs are its external outputs until
         * fixOutputKind looks at the whole program */
        if (nm.kind == LNC_ML_OUTPUT)
            nm.external = true;
        if (lnc_add_mloc(out, &nm, err) < 0 || lnc_names_sync(ix, out, err))
            return -1;
    }
    return 0;
}

/* copyInstrs2BB: clone every instruction of every block (one block per
 * engine stream), remapping local memory sides to the core. */
static int copy_instrs(const lnc_module_t *core, int src_f, lnc_module_t *out, int dst_f,
                       tpb_err_t *err)
{
    const lnc_func_t *sf = &core->funcs[src_f];
    for (int b = 0; b < sf->nblocks; b++) {
        const lnc_block_t *sb = &sf->blocks[b];
        lnc_block_t *db = lnc_func_block(out, dst_f, sb->engine, sb->name, err);
        if (!db)
            return -1;
        for (int i = 0; i < sb->n; i++) {
            lnc_inst_t in = sb->insts[i];
            remap_dap_cores(&in.isa, core->core);
            if (lnc_block_append(db, &in, err) < 0)
                return -1;
        }
    }
    return 0;
}

/* copyModulesAsFunctions */
static int copy_modules_as_functions(const lnc_module_t *const *cores, int n, lnc_module_t *out,
                                     tpb_err_t *err)
{
    lnc_names_t ix = {0};   /* out's locations by name */
    int rc = lnc_names_sync(&ix, out, err);
    for (int i = 0; i < n && !rc; i++) {
        const lnc_module_t *c = cores[i];
        if (c->nfuncs < 1) {
            rc = tpb_errf(err, "core module %d ('%s') has no function", c->core, c->name);
            break;
        }
        char fname[LNC_NAME_LEN];
        snprintf(fname, sizeof fname, "nc%d", c->core);
        int f = lnc_add_func(out, fname, c->core, err);   /* cloneAttributesFrom: NeuronCoreId */
        if (f < 0 || copy_allocs(c, out, &ix, err) || copy_instrs(c, 0, out, f, err))
            rc = -1;
    }
    lnc_names_free(&ix);
    return rc ? -1 : 0;
}

/* The block whose engine carries a core's completion barrier: SP when the
 * core has an SP stream (it issues the queue drains), else the first. */
static lnc_block_t *lead_block(lnc_func_t *f)
{
    for (int b = 0; b < f->nblocks; b++)
        if (f->blocks[b].engine == ISA_ENG_SP)
            return &f->blocks[b];
    return f->nblocks ? &f->blocks[0] : NULL;
}

/* fpassInsertReturns: every engine block of a core function ends with a
 * Return "return_<core>", and the lead block then gets the completion
 * CoreBarrier "cb_return_<core>" (all cores) after its Return, in the
 * seed's order.  Emission runs it when the function has returned to the
 * dispatcher (docs/multicore.md "Link directory and emission"). */
static int insert_returns(lnc_module_t *out, tpb_err_t *err)
{
    unsigned all = (1u << out->ncores) - 1;
    for (int f = 1; f < out->nfuncs; f++) {
        lnc_func_t *fn = &out->funcs[f];
        int next_local = 0;
        for (int b = 0; b < fn->nblocks; b++)
            for (int i = 0; i < fn->blocks[b].n; i++)
                if (fn->blocks[b].insts[i].opc == BIR_CORE_BARRIER &&
                    fn->blocks[b].insts[i].local_id >= next_local)
                    next_local = fn->blocks[b].insts[i].local_id + 1;
        lnc_block_t *lead = lead_block(fn);
        if (!lead)
            continue;
        char name[LNC_NAME_LEN];
        for (int b = 0; b < fn->nblocks; b++) {
            lnc_inst_t r;
            snprintf(name, sizeof name, "return_%d", fn->core);
            lnc_inst_init(&r, LNC_OPC_RETURN, name);
            r.engine = fn->blocks[b].engine;
            r.isa.op = ISA_OP_RETURN;
            r.isa.l2 = isa_ops[ISA_OP_RETURN].l2;
            if (lnc_block_append(&fn->blocks[b], &r, err) < 0)
                return -1;
        }
        lnc_inst_t cb;
        snprintf(name, sizeof name, "cb_return_%d", fn->core);
        lnc_inst_init(&cb, BIR_CORE_BARRIER, name);
        cb.engine = lead->engine;
        cb.isa.op = ISA_OP_CORE_BARRIER;
        cb.isa.l2 = isa_ops[ISA_OP_CORE_BARRIER].l2;
        cb.isa.f.CB.cores = all;
        cb.local_id = next_local;
        cb.isa.f.CB.id = (uint32_t)next_local;
        if (lnc_block_append(lead, &cb, err) < 0)
            return -1;
    }
    return 0;
}

static int insert_front(lnc_block_t *b, const lnc_inst_t *in, tpb_err_t *err)
{
    if (lnc_block_append(b, in, err) < 0)
        return -1;
    memmove(&b->insts[1], &b->insts[0], (size_t)(b->n - 1) * sizeof *in);
    b->insts[0] = *in;
    return 0;
}

/* fpassInsertSwitchQueueInstances: at the top of the issuing engine's block
 * of each core function, one I-SQI per DMA queue the core uses, selecting
 * that core's instance of the (unified) queue.  The unified queue index is
 * filled by init_queues. */
static int insert_switch_queue_instances(const lnc_module_t *const *cores, int n,
                                         lnc_module_t *out, tpb_err_t *err)
{
    for (int i = 0; i < n; i++) {
        const lnc_module_t *c = cores[i];
        lnc_func_t *fn = &out->funcs[1 + i];
        for (int q = c->nqueues - 1; q >= 0; q--) {
            const lnc_queue_t *cq = &c->queues[q];
            lnc_block_t *b = NULL;
            for (int k = 0; k < fn->nblocks; k++)
                if (fn->blocks[k].engine == cq->engine)
                    b = &fn->blocks[k];
            if (!b)
                continue;   /* checkInsertionPointValid: the engine has no stream */
            lnc_inst_t s;
            char name[LNC_NAME_LEN];
            snprintf(name, sizeof name, "I-SQI-%s-nc%d", cq->name, c->core);
            lnc_inst_init(&s, LNC_OPC_SQI, name);
            s.engine = b->engine;
            s.qinst = c->core;   /* resolved to an instance index by init_queues */
            if (insert_front(b, &s, err))
                return -1;
        }
    }
    return 0;
}

/* buildMainAliases: producer-out -> consumer-in on the unified location. */
static int build_main_aliases(const lnc_rlt_t *rlts, int nrlts, const lnc_module_t *const *cores,
                              int n, lnc_module_t *out, tpb_err_t *err)
{
    for (int r = 0; r < nrlts; r++) {
        int u = -1;
        for (int i = 0; i < out->nmlocs && u < 0; i++)
            if (out->mlocs[i].tensor == rlts[r].tensor && out->mlocs[i].space == ISA_SPACE_HBM)
                u = i;
        if (u < 0 || rlts[r].producer >= n || rlts[r].consumer >= n)
            return tpb_errf(err, "alias for tensor %d (core %d -> %d): no unified location",
                            rlts[r].tensor, rlts[r].producer, rlts[r].consumer);
        if (!(out->naliases & (out->naliases - 1))) {
            lnc_alias_t *a = realloc(out->aliases, (size_t)(out->naliases ? 2 * out->naliases : 1) *
                                                       sizeof *a);
            if (!a)
                return tpb_errf(err, "out of memory (aliases)");
            out->aliases = a;
        }
        lnc_alias_t *a = &out->aliases[out->naliases++];
        memset(a, 0, sizeof *a);
        a->mloc = u;
        a->producer = rlts[r].producer;
        a->consumer = rlts[r].consumer;
        snprintf(a->out_name, sizeof a->out_name, "nc%d:%.80s", a->producer, out->mlocs[u].name);
        snprintf(a->inp_name, sizeof a->inp_name, "nc%d:%.80s", a->consumer, out->mlocs[u].name);
        (void)cores;
    }
    return 0;
}

/* addFnCall: one InstCall per core function, in core order. */
static int add_fn_calls(lnc_module_t *out, tpb_err_t *err)
{
    lnc_block_t *disp = &out->funcs[0].blocks[0];
    for (int f = 1; f < out->nfuncs; f++) {
        char name[LNC_NAME_LEN];
        lnc_call_name(name, sizeof name, out->funcs[f].core, 0);
        lnc_inst_t call;
        lnc_inst_init(&call, LNC_OPC_CALL, name);
        call.callee = f;
        call.call_core = out->funcs[f].core;
        call.isa.op = ISA_OP_CALL;
        call.isa.l2 = isa_ops[ISA_OP_CALL].l2;
        if (lnc_block_append(disp, &call, err) < 0)
            return -1;
    }
    return 0;
}

/* initQueues: one queue per name; each core's queue of that name becomes
 * an instance (folded into the existing queue, or a new dmaQ); semaphores
 * join one namespace "nc<core>.<name>". */
static int init_queues(const lnc_module_t *const *cores, int n, lnc_module_t *out, tpb_err_t *err)
{
    for (int i = 0; i < n; i++) {
        const lnc_module_t *c = cores[i];
        for (int q = 0; q < c->nqueues; q++) {
            const lnc_queue_t *cq = &c->queues[q];
            int u = -1;
            for (int k = 0; k < out->nqueues; k++)
                if (!strcmp(out->queues[k].name, cq->name))
                    u = k;
            if (u < 0) {
                lnc_queue_t *nq = realloc(out->queues, (size_t)(out->nqueues + 1) * sizeof *nq);
                if (!nq)
                    return tpb_errf(err, "out of memory (queues)");
                out->queues = nq;
                u = out->nqueues++;
                memset(&out->queues[u], 0, sizeof out->queues[u]);
                snprintf(out->queues[u].name, sizeof out->queues[u].name, "%s", cq->name);
                out->queues[u].engine = cq->engine;
            }
            lnc_queue_t *uq = &out->queues[u];
            for (int k = 0; k < cq->ninst; k++) {
                if (uq->ninst >= LNC_MAX_CORES)
                    return tpb_errf(err, "queue '%s': more than %d instances", uq->name,
                                    LNC_MAX_CORES);
                uq->inst[uq->ninst++] = cq->inst[k];
            }
        }
        for (int s = 0; s < c->nsems; s++) {
            lnc_sem_t *ns = realloc(out->sems, (size_t)(out->nsems + 1) * sizeof *ns);
            if (!ns)
                return tpb_errf(err, "out of memory (semaphores)");
            out->sems = ns;
            lnc_sem_t *d = &out->sems[out->nsems++];
            *d = c->sems[s];
            snprintf(d->name, sizeof d->name, "nc%d.%.80s", c->core, c->sems[s].name);
        }
    }
    /* resolve every I-SQI to (unified queue, instance) */
    for (int f = 1; f < out->nfuncs; f++)
        for (int b = 0; b < out->funcs[f].nblocks; b++)
            for (int i = 0; i < out->funcs[f].blocks[b].n; i++) {
                lnc_inst_t *in = &out->funcs[f].blocks[b].insts[i];
                if (in->opc != LNC_OPC_SQI)
                    continue;
                int core = in->qinst;
                in->queue = -1;
                for (int q = 0; q < out->nqueues && in->queue < 0; q++) {
                    char want[LNC_NAME_LEN];
                    snprintf(want, sizeof want, "I-SQI-%s-nc%d", out->queues[q].name, core);
                    if (strcmp(want, in->name))
                        continue;
                    for (int k = 0; k < out->queues[q].ninst; k++)
                        if (out->queues[q].inst[k].core == core) {
                            in->queue = q;
                            in->qinst = k;
                        }
                }
                if (in->queue < 0)
                    return tpb_errf(err, "%s: no queue instance for core %d", in->name, core);
            }
    return 0;
}

/* fixOutputKind: a per-core output that is not a kernel output is an
 * internal hand-off: INTERMEDIATE when another core reads it (an alias
 * exists), else SCRATCH (no real reader: erased from the outputs). */
static void fix_output_kind(lnc_module_t *out)
{
    for (int i = 0; i < out->nmlocs; i++) {
        lnc_mloc_t *ml = &out->mlocs[i];
        if (ml->kind != LNC_ML_OUTPUT || ml->kkind == LNC_ML_OUTPUT)
            continue;
        bool read = false;
        for (int a = 0; a < out->naliases; a++)
            read |= out->aliases[a].mloc == i;
        if (ml->kkind == LNC_ML_INPUT) {
            ml->kind = LNC_ML_INPUT;   /* an input the kernel also writes stays an input */
            continue;
        }
        ml->kind = read ? LNC_ML_INTERMEDIATE : LNC_ML_SCRATCH;
        ml->external = false;
    }
}

/* backend::renumberCoreBarriers: one monotonic counter; every CoreBarrier
 * (BIR opcode 87) of every function, in walk order, gets the next id.
 * Within a function the walk is program order, i.e. core-local id order
 * (the completion barrier last); ids are unique over the module.  The seed
 * skips barriers flagged 0xff ("not flagged"); tpbsim creates none.  Cores
 * meet at barriers by counting, not by id (the ISA's CoreBarrier, docs/
 * multicore.md "CoreBarrier renumber").  Returns the ids used. */
static int renumber_funcs(lnc_func_t *const *fns, int nf, int base)
{
    int ctr = base;
    for (int f = 0; f < nf; f++) {
        lnc_func_t *fn = fns[f];
        for (int want = 0;; want++) {
            lnc_inst_t *hit = NULL;
            for (int b = 0; b < fn->nblocks; b++)
                for (int i = 0; i < fn->blocks[b].n; i++) {
                    lnc_inst_t *in = &fn->blocks[b].insts[i];
                    if (in->opc == BIR_CORE_BARRIER && in->local_id >= want &&
                        (!hit || in->local_id < hit->local_id))
                        hit = in;
                }
            if (!hit)
                break;
            want = hit->local_id;
            for (int b = 0; b < fn->nblocks; b++)   /* equal local ids: block order */
                for (int i = 0; i < fn->blocks[b].n; i++) {
                    lnc_inst_t *in = &fn->blocks[b].insts[i];
                    if (in->opc == BIR_CORE_BARRIER && in->local_id == want)
                        in->isa.f.CB.id = (uint32_t)ctr++;
                }
        }
    }
    return ctr - base;
}

static int renumber_modules(lnc_module_t *const *ms, int n, int base)
{
    int nf = 0;
    for (int i = 0; i < n; i++)
        nf += ms[i]->nfuncs;
    lnc_func_t **fns = malloc((size_t)(nf > 0 ? nf : 1) * sizeof *fns);
    if (!fns)
        return -1;
    nf = 0;
    for (int i = 0; i < n; i++)
        for (int f = 0; f < ms[i]->nfuncs; f++)
            fns[nf++] = &ms[i]->funcs[f];
    int used = renumber_funcs(fns, nf, base);
    free(fns);
    return used;
}

int lnc_renumber_core_barriers(lnc_module_t *m)
{
    int used = renumber_modules(&m, 1, 0);
    if (used >= 0)
        m->nbarrier_ids = used;
    return used;
}

int lnc_renumber_core_barriers_premerge(lnc_module_t *cores, int n, int base)
{
    lnc_module_t *order[LNC_MAX_CORES];
    if (n < 1 || n > LNC_MAX_CORES)
        return -1;
    for (int c = 0; c < n; c++) {   /* core order: the dispatcher's walk order */
        order[c] = NULL;
        for (int i = 0; i < n; i++)
            if (cores[i].core == c)
                order[c] = &cores[i];
        if (!order[c])
            return -1;
    }
    int used = renumber_modules(order, n, base);
    return used < 0 ? -1 : base + used;
}

/* copyDeps / addBarrier per instance: on the bound bodies, where every
 * core's updates are visible. */
static int instance_deps(lnc_module_t *m, tpb_err_t *err)
{
    lnc_module_t view;
    if (lnc_bind_instances(m, &view, err))
        return -1;
    if (lnc_copy_deps(&view)) {
        lnc_module_free(&view);
        return tpb_errf(err, "out of memory (dependencies)");
    }
    const lnc_block_t *disp = &m->funcs[0].blocks[0];
    for (int i = 0, v = 1; i < disp->n && v < view.nfuncs; i++) {
        const lnc_inst_t *call = &disp->insts[i];
        if (call->opc != LNC_OPC_CALL)
            continue;
        lnc_func_t *d = &m->funcs[call->callee];
        const lnc_func_t *b = &view.funcs[v++];
        for (int k = 0; k < d->ninsts; k++)
            if (d->insts[k].idx == call->call_inst) {
                d->insts[k].ndeps = b->ndeps;
                d->insts[k].ncross = b->ncross;
            }
        if (call->call_inst == 0) {
            d->ndeps = b->ndeps;
            d->ncross = b->ncross;
        }
    }
    lnc_module_free(&view);
    return 0;
}

static int link_modules(const lnc_module_t *const *cores, int n, const lnc_rlt_t *rlts,
                        int nrlts, lnc_module_t *out, tpb_err_t *err)
{
    char name[LNC_NAME_LEN];
    lnk_module_name(name, sizeof name, cores[0]->name);
    lnc_module_init(out, name, -1);   /* a fresh module, never an input edited in place */
    out->ncores = n;
    /* runCallGraph */
    if (init_call_graph_module(out, err) || copy_modules_as_functions(cores, n, out, err) ||
        insert_returns(out, err) || insert_switch_queue_instances(cores, n, out, err) ||
        build_main_aliases(rlts, nrlts, cores, n, out, err) || add_fn_calls(out, err))
        goto fail;
    /* run: queues, output kinds, barrier ids */
    if (init_queues(cores, n, out, err))
        goto fail;
    fix_output_kind(out);
    if (lnc_attach_whole_tensor_input_aps(out, err) || lnc_move_modules_as_functions(out, err))
        goto fail;
    if (lnc_renumber_core_barriers(out) < 0) {
        tpb_errf(err, "out of memory (barrier renumber)");
        goto fail;
    }
    if (instance_deps(out, err))
        goto fail;
    return 0;
fail:
    lnc_module_free(out);
    return -1;
}

/* The module-definition table (one per NeuronCoreId, in core order). */
static int def_table(const lnc_module_t *cores, int n, const lnc_module_t **order,
                     tpb_err_t *err)
{
    if (n < 1 || n > LNC_MAX_CORES)
        return tpb_errf(err, "cannot link %d core modules (1..%d)", n, LNC_MAX_CORES);
    for (int c = 0; c < n; c++) {
        order[c] = NULL;
        for (int i = 0; i < n; i++)
            if (cores[i].core == c)
                order[c] = &cores[i];
        if (!order[c])
            return tpb_errf(err, "core modules: no module has NeuronCoreId %d (of %d)", c, n);
    }
    return 0;
}

/* Every input a core takes from another core (remote-local target) is an
 * output of that core's module: the "missing input" check of dry_run,
 * shared with the link itself. */
static int check_inputs(const lnc_module_t *const *order, int n, tpb_err_t *err)
{
    lnc_names_t ix[LNC_MAX_CORES] = {{0}};   /* each producer's, built when first asked */
    int rc = 0;
    for (int c = 0; c < n && !rc; c++)
        for (int i = 0; i < order[c]->nmlocs && !rc; i++) {
            const lnc_mloc_t *ml = &order[c]->mlocs[i];
            if (ml->kind != LNC_ML_INPUT || ml->remote_core < 0)
                continue;
            int p = ml->remote_core, u = -1;
            if (p < n && lnc_names_sync(&ix[p], order[p], err))
                rc = -1;
            else if (p < n)
                u = lnc_names_find(&ix[p], order[p], ml->remote_name);
            if (!rc && (u < 0 || order[p]->mlocs[u].kind != LNC_ML_OUTPUT))
                rc = tpb_errf(err, "missing input '%s' of subgraph nc%d: core %d has no output "
                                   "of that name",
                              ml->remote_name, c, p);
        }
    for (int c = 0; c < n; c++)
        lnc_names_free(&ix[c]);
    return rc ? -1 : 0;
}

int lnc_link_dry_run(const lnc_module_t *cores, int n, tpb_err_t *err)
{
    const lnc_module_t *order[LNC_MAX_CORES];
    return def_table(cores, n, order, err) || check_inputs(order, n, err) ? -1 : 0;
}

int lnc_link(const lnc_module_t *cores, int n, const lnc_rlt_t *rlts, int nrlts,
             lnc_module_t *out, tpb_err_t *err)
{
    memset(out, 0, sizeof *out);
    /* dispatch in core order, whatever order the vector came in */
    const lnc_module_t *order[LNC_MAX_CORES];
    if (def_table(cores, n, order, err) || check_inputs(order, n, err))
        return -1;
    return link_modules(order, n, rlts, nrlts, out, err);
}

int lnc_link_one(const lnc_module_t *core, lnc_module_t *out, tpb_err_t *err)
{
    return lnc_link(core, 1, NULL, 0, out, err);
}

/* ---- link.json ---- */

static const char *opc_name(int opc)
{
    switch (opc) {
    case LNC_OPC_CALL: return "Call";
    case LNC_OPC_RETURN: return "Return";
    case LNC_OPC_SQI: return "SwitchQueueInstance";
    case BIR_CORE_BARRIER: return "CoreBarrier";
    default: return "Inst";
    }
}

static cJSON *inst_json(const lnc_module_t *m, const lnc_inst_t *in)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", in->name);
    cJSON_AddStringToObject(o, "kind", opc_name(in->opc));
    if (in->opc == BIR_CORE_BARRIER) {
        cJSON_AddNumberToObject(o, "opcode", BIR_CORE_BARRIER);
        cJSON_AddNumberToObject(o, "id", in->isa.f.CB.id);
        cJSON_AddNumberToObject(o, "local_id", in->local_id);
        cJSON_AddNumberToObject(o, "cores", in->isa.f.CB.cores);
    } else if (in->opc == LNC_OPC_CALL) {
        cJSON_AddStringToObject(o, "callee", m->funcs[in->callee].name);
        cJSON_AddNumberToObject(o, "core", in->call_core);
        cJSON_AddNumberToObject(o, "instance", in->call_inst);
    } else if (in->opc == LNC_OPC_SQI && in->queue >= 0) {
        cJSON_AddStringToObject(o, "queue", m->queues[in->queue].name);
        cJSON_AddNumberToObject(o, "instance", in->qinst);
    }
    return o;
}

char *lnc_module_json(const lnc_module_t *m)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "module", m->name);
    cJSON_AddNumberToObject(root, "num_cores", m->ncores);
    cJSON_AddNumberToObject(root, "core_barrier_ids", m->nbarrier_ids);
    cJSON_AddItemToObject(root, "log", lnc_link_log_json(m));
    cJSON_AddItemToObject(root, "mmt_report", lnc_post_link_mmt_report(m));
    cJSON *fs = cJSON_AddArrayToObject(root, "functions");
    for (int f = 0; f < m->nfuncs; f++) {
        const lnc_func_t *fn = &m->funcs[f];
        cJSON *fo = cJSON_CreateObject();
        cJSON_AddStringToObject(fo, "name", fn->name);
        if (fn->core >= 0)
            cJSON_AddNumberToObject(fo, "NeuronCoreId", fn->core);
        if (fn->core >= 0) {
            cJSON_AddNumberToObject(fo, "dependency_edges", fn->ndeps);
            cJSON_AddNumberToObject(fo, "cross_core_edges", fn->ncross);
        }
        if (fn->ninsts > 0)
            cJSON_AddItemToObject(fo, "definition", lnc_definition_json(fn));
        cJSON *bs = cJSON_AddArrayToObject(fo, "blocks");
        for (int b = 0; b < fn->nblocks; b++) {
            const lnc_block_t *bl = &fn->blocks[b];
            cJSON *bo = cJSON_CreateObject();
            cJSON_AddStringToObject(bo, "name", bl->name);
            cJSON_AddNumberToObject(bo, "instructions", bl->n);
            /* the link-level instructions (calls, switches, barriers,
             * returns); ordinary cloned instructions are only counted */
            cJSON *is = cJSON_AddArrayToObject(bo, "link");
            for (int i = 0; i < bl->n; i++)
                if (bl->insts[i].opc != LNC_OPC_ISA)
                    cJSON_AddItemToArray(is, inst_json(m, &bl->insts[i]));
            cJSON_AddItemToArray(bs, bo);
        }
        cJSON_AddItemToArray(fs, fo);
    }
    cJSON *ms = cJSON_AddArrayToObject(root, "memory_locations");
    for (int i = 0; i < m->nmlocs; i++) {
        const lnc_mloc_t *ml = &m->mlocs[i];
        if (ml->kind == LNC_ML_LOCAL)
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", ml->name);
        cJSON_AddStringToObject(o, "kind", lnc_mkind_name(ml->kind));
        cJSON_AddBoolToObject(o, "external", ml->external);
        cJSON_AddNumberToObject(o, "hbm_addr", (double)ml->addr);
        cJSON_AddNumberToObject(o, "bytes", (double)ml->bytes);
        if (ml->whole_ap) {   /* attachWholeTensorInputAP */
            cJSON *ap = cJSON_AddObjectToObject(o, "whole_tensor_ap");
            cJSON_AddNumberToObject(ap, "addr", (double)ml->addr);
            cJSON_AddNumberToObject(ap, "bytes", (double)ml->bytes);
            cJSON_AddNumberToObject(ap, "readers", ml->ap_readers);
        }
        cJSON_AddItemToArray(ms, o);
    }
    cJSON *as = cJSON_AddArrayToObject(root, "aliases");
    for (int i = 0; i < m->naliases; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "location", m->mlocs[m->aliases[i].mloc].name);
        cJSON_AddStringToObject(o, "out", m->aliases[i].out_name);
        cJSON_AddStringToObject(o, "in", m->aliases[i].inp_name);
        cJSON_AddItemToArray(as, o);
    }
    cJSON *qs = cJSON_AddArrayToObject(root, "queues");
    for (int q = 0; q < m->nqueues; q++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", m->queues[q].name);
        cJSON_AddStringToObject(o, "engine", m->queues[q].engine >= 0
                                                 ? isa_engine_name((isa_engine_t)m->queues[q].engine)
                                                 : "?");
        cJSON *is = cJSON_AddArrayToObject(o, "instances");
        for (int k = 0; k < m->queues[q].ninst; k++) {
            cJSON *io = cJSON_CreateObject();
            cJSON_AddNumberToObject(io, "core", m->queues[q].inst[k].core);
            cJSON_AddNumberToObject(io, "id", m->queues[q].inst[k].id);
            cJSON_AddNumberToObject(io, "semaphore", m->queues[q].inst[k].semaphore);
            cJSON_AddItemToArray(is, io);
        }
        cJSON_AddItemToArray(qs, o);
    }
    cJSON *ss = cJSON_AddArrayToObject(root, "semaphores");
    for (int s = 0; s < m->nsems; s++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", m->sems[s].name);
        cJSON_AddNumberToObject(o, "core", m->sems[s].core);
        cJSON_AddNumberToObject(o, "id", m->sems[s].id);
        cJSON_AddItemToArray(ss, o);
    }
    char *txt = cJSON_Print(root);
    cJSON_Delete(root);
    return txt;
}
