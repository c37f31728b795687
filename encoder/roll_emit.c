/* roll_emit.c - emit the planned rolled loops (docs/compiler.md "Rolled
 * loops"): registers, InstLoop markers and the per-engine control
 * instructions around each rolled body.
 *
 * A varying quantity (a wait value, a DMA side's address) of an instruction
 * whose innermost rolled loop is q moves by step_d per iteration of each
 * rolled loop d on q's chain (q and its rolled ancestors).  It gets a
 * register per (engine, kind, q, steps): set to 0 at the head of the
 * top-level loop, RegAdd step_d at the tail of loop d, and, for an inner
 * loop d, RegAdd -R_d * step_d after it exits -- so the register always
 * holds sum_d (i_d * step_d) and the body keeps the values of rolled
 * iteration 0.  Wait registers are r63..r49 (wait_reg 1..15); counters and
 * DMA registers come from r48 down; registers the kernel uses are never
 * taken. */
#include "roll.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hugepage.h"

#define ROLL_MAX_REGS 96         /* step registers per top-level rolled loop */

typedef struct {
    int engine;
    bool wait;
    int owner;                   /* innermost plan of the users */
    int64_t step[ROLL_MAXD];     /* per chain depth (wait counts or elements) */
    int reg;
} rreg_t;

typedef struct {
    bir_inst_t *v;
    int n, cap;
} ibuf_t;

#define DYN_SEMS 256             /* upd_sem / wait_sem are 8-bit */
#define DYN_MAX_PROF 16

/* A dynamic loop's semaphore accounting (docs/compiler.md "Dynamic
 * loops"): increments of each semaphore before the loop, in each peeled
 * iteration, per rolled iteration and over the whole compiled guess. */
typedef struct {
    int q;                       /* its plan, -1 = none */
    int64_t pre[DYN_SEMS], tot[DYN_SEMS];
    int prof[DYN_SEMS];          /* index into inc[], -1 = never incremented in the loop */
    int64_t inc[DYN_MAX_PROF][ROLL_DYN_MAX_PEEL + 1];   /* per peeled iteration, then rolled */
    int nprof;
    int acc[ISA_ENG_COUNT][DYN_MAX_PROF];               /* wait registers: iterations done */
    uint32_t engines;            /* engines running the loop control: all from its start on */
} rdyn_t;

typedef struct {
    bir_module_t *m;
    const tir_kernel_t *k;
    const roll_plan_t *P;
    int np, cur;
    const bir_block_t *b;
    bool used[ISA_NUM_REGS];
    int *owner;                  /* per position: innermost plan whose body holds it, -1 */
    int *bl;                     /* per plan: its bir_loop_t index */
    uint32_t *engines;           /* per plan: engines with instructions in its body */
    int (*counter)[ISA_ENG_COUNT];
    rreg_t regs[ROLL_MAX_REGS];
    int nregs;
    bool taken[ISA_ENG_COUNT][ISA_NUM_REGS];
    ibuf_t out;
    const char *why;
    tpb_err_t *err;
    rdyn_t dyn;
} remit_t;

static bir_inst_t *push(remit_t *R)
{
    ibuf_t *o = &R->out;
    if (o->n == o->cap) {
        int nc = o->cap ? o->cap * 2 : 1024;
        /* becomes the block's array: allocated as bir_block_append's */
        bir_inst_t *q = tpb_array_grow(o->v, (size_t)o->cap * sizeof *q, (size_t)nc * sizeof *q);
        if (!q) {
            tpb_errf(R->err, "out of memory rolling loops");
            return NULL;
        }
        o->v = q, o->cap = nc;
    }
    return &o->v[o->n++];
}

/* Registers the kernel itself uses on any engine: those the front-end
 * allocated (register_alloc, regalloc.h), TensorLoad's and DMA's. */
static void used_regs(const tir_kernel_t *k, const bir_block_t *b, bool used[ISA_NUM_REGS])
{
    memset(used, 0, ISA_NUM_REGS * sizeof *used);
    for (int r = 0; r < ISA_NUM_REGS && r < 64; r++)
        if (k->regs_used >> r & 1u)
            used[r] = true;
    for (int i = 0; i < b->ninsts; i++) {
        isa_op_t op = b->insts[i].isa.op;
        const isa_body_t *f = bir_body(&b->insts[i]);
        if (op == ISA_OP_TENSOR_LOAD)
            for (uint32_t r = f->TLOAD.reg; r < ISA_NUM_REGS && r < f->TLOAD.reg + 8; r++)
                used[r] = true;
        if (isa_op_is_direct_dma(op)) {
            if (f->DDESC.src_reg < ISA_NUM_REGS)
                used[f->DDESC.src_reg] = true;
            if (f->DDESC.dst_reg < ISA_NUM_REGS)
                used[f->DDESC.dst_reg] = true;
        }
    }
}

static int free_reg(remit_t *R, int e, bool wait)
{
    int hi = wait ? ISA_NUM_REGS - 1 : ISA_NUM_REGS - 1 - ROLL_WAIT_REGS;
    int lo = wait ? ISA_NUM_REGS - ROLL_WAIT_REGS : 0;
    for (int r = hi; r >= lo; r--)
        if (!R->used[r] && !R->taken[e][r]) {
            R->taken[e][r] = true;
            return r;
        }
    R->why = "no free sequencer registers for the loop";
    return -1;
}

/* kind 0: wait value, 1: DMA src, 2: DMA dst.  Steps along the chain of
 * position x's innermost plan; false when nothing moves. */
static bool steps_of(const remit_t *R, int x, int kind, int64_t step[ROLL_MAXD])
{
    memset(step, 0, ROLL_MAXD * sizeof *step);
    const bir_inst_t *in = &R->b->insts[x];
    if (kind == 0 && !in->isa.sync.wait_en)
        return false;
    if (kind > 0 && !isa_op_is_direct_dma(in->isa.op))
        return false;
    bool any = false;
    for (int q = R->owner[x]; q >= 0; q = R->P[q].parent) {
        const roll_plan_t *c = &R->P[q];
        int t = x - c->s0;
        int64_t s = kind == 0 ? c->wstep[t] : kind == 1 ? c->sstep[t] : c->dstep[t];
        if (kind == 1)
            s /= isa_dtype_size(in->isa.f->DDESC.src.dtype);
        else if (kind == 2)
            s /= isa_dtype_size(in->isa.f->DDESC.dst.dtype);
        step[c->depth] = s;
        any |= s != 0;
    }
    return any;
}

static int reg_for(remit_t *R, int x, int kind, const int64_t step[ROLL_MAXD])
{
    int e = R->b->insts[x].engine, own = R->owner[x];
    bool wait = kind == 0;
    for (int i = 0; i < R->nregs; i++)
        if (R->regs[i].engine == e && R->regs[i].wait == wait && R->regs[i].owner == own &&
            !memcmp(R->regs[i].step, step, sizeof R->regs[i].step))
            return R->regs[i].reg;
    int64_t far = 0;
    for (int q = own; q >= 0; q = R->P[q].parent) {
        int64_t s = step[R->P[q].depth];
        far += (s < 0 ? -s : s) * R->P[q].R;
    }
    if (far > INT32_MAX) {
        R->why = "a register offset would pass 32 bits";
        return -1;
    }
    if (R->nregs == ROLL_MAX_REGS) {
        R->why = "too many step registers";
        return -1;
    }
    int r = free_reg(R, e, wait);
    if (r < 0)
        return -1;
    rreg_t *g = &R->regs[R->nregs++];
    g->engine = e, g->wait = wait, g->owner = own, g->reg = r;
    memcpy(g->step, step, sizeof g->step);
    return r;
}

static bool is_on_chain(const remit_t *R, int q, int owner)
{
    for (int c = owner; c >= 0; c = R->P[c].parent)
        if (c == q)
            return true;
    return false;
}

/* A loop-control instruction of loop q on engine: its BIR and ISA
 * opcodes, name "loop.<what>", source path and a fresh ISA body; false on
 * out-of-memory (reported). */
static bool ctl_init(remit_t *R, bir_inst_t *in, bir_opcode_t bop, isa_op_t op, int engine,
                     int q, const char *what)
{
    bir_inst_init(in, bop, op);
    in->engine = engine;
    in->loop = R->bl[q];
    in->op_kind = "loop";
    in->src = R->k->loops[R->P[q].loop].path;
    char name[BIR_NAME_LEN];
    snprintf(name, sizeof name, "loop.%s", what);
    if (!bir_inst_set_name(R->m, in, name))
        return false;
    if (bir_inst_body_new(R->m, in) == &R->m->oom_body) {
        tpb_errf(R->err, "out of memory rolling loops");
        return false;
    }
    return true;
}

static bir_inst_t *ctl(remit_t *R, isa_op_t op, int engine, int reg, int32_t imm, int q,
                       const char *what)
{
    bir_inst_t *in = push(R);
    if (!in || !ctl_init(R, in,
                         op == ISA_OP_BRANCH_CMP ? BIR_BRANCH_CMP
                         : op == ISA_OP_REG_ADD  ? BIR_REG_ADD
                                                 : BIR_REG_SET,
                         op, engine, q, what))
        return NULL;
    if (op == ISA_OP_BRANCH_CMP) {
        in->isa.f->BR.reg = (uint32_t)reg;
        in->isa.f->BR.cmp = ISA_CMP_LT;
        in->isa.f->BR.imm = imm;
    } else {
        in->isa.f->REG.reg = (uint32_t)reg;
        in->isa.f->REG.imm = imm;
    }
    return in;
}

static bool fits32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* Registers of one top-level loop tree: counters, then step registers. */
static int alloc_tree(remit_t *R, int top)
{
    R->nregs = 0;
    memset(R->taken, 0, sizeof R->taken);
    const roll_plan_t *t = &R->P[top];
    for (int q = top; q < R->np && R->P[q].s0 < t->s1; q++) {
        if (q != top && R->P[q].depth == 0)
            break;
        for (int e = 0; e < ISA_ENG_COUNT; e++)
            if ((R->engines[q] >> e & 1u) && (R->counter[q][e] = free_reg(R, e, false)) < 0)
                return 1;
    }
    for (int x = t->s0; x < t->s1; x++)
        for (int kind = 0; kind < 3; kind++) {
            int64_t step[ROLL_MAXD];
            if (steps_of(R, x, kind, step) && reg_for(R, x, kind, step) < 0)
                return 1;
        }
    return 0;
}

static int emit_range(remit_t *R, int a, int z, int depth);
static int dyn_adjust(remit_t *R, int x, bir_inst_t *in);
static int emit_dyn(remit_t *R, int q);
static int dyn_count(remit_t *R, int q);

static int copy_inst(remit_t *R, int x)
{
    bir_inst_t *in = push(R);
    if (!in)
        return -1;
    *in = R->b->insts[x];
    int q = R->owner[x];
    int dr = dyn_adjust(R, x, in);
    if (dr)
        return dr;
    if (q < 0)
        return 0;
    in->loop = R->bl[q];
    in->loop_role = BIR_LOOP_BODY;
    for (int kind = 0; kind < 3; kind++) {
        int64_t step[ROLL_MAXD];
        if (!steps_of(R, x, kind, step))
            continue;
        int r = reg_for(R, x, kind, step);
        if (r < 0)
            return 1;
        in = &R->out.v[R->out.n - 1];
        if (kind == 0 && in->isa.sync.wait_reg) {
            R->why = "a rolled loop after a dynamic_range loop waits on its semaphores";
            return 1;
        }
        if (kind == 0) {
            in->isa.sync.wait_reg = (uint32_t)(ISA_NUM_REGS - r);
            continue;
        }
        /* copy before write: *in is a struct copy of source instruction x */
        isa_body_t *f = bir_inst_body_own(R->m, in);
        if (f == &R->m->oom_body)
            return tpb_errf(R->err, "out of memory rolling loops");
        if (kind == 1)
            f->DDESC.src_reg = (uint32_t)r;
        else
            f->DDESC.dst_reg = (uint32_t)r;
    }
    return 0;
}

/* The loop record, the registers of a top-level loop and the InstLoop
 * marker. */
static int emit_plan_head(remit_t *R, int q)
{
    const roll_plan_t *p = &R->P[q];
    R->cur = q + 1;
    bir_loop_t *nl = realloc(R->m->loops, (size_t)(R->m->nloops + 1) * sizeof *nl);
    if (!nl)
        return tpb_errf(R->err, "out of memory rolling loops");
    R->m->loops = nl;
    int li = R->m->nloops++;
    R->bl[q] = li;
    bir_loop_t *L = &R->m->loops[li];
    memset(L, 0, sizeof *L);
    snprintf(L->path, sizeof L->path, "%s", R->k->loops[p->loop].path);
    L->trips = p->R, L->unroll = p->u, L->peeled = p->p, L->marker = R->out.n;
    int rc;
    if (p->depth == 0 && (rc = alloc_tree(R, q)) != 0)
        return rc;
    bir_inst_t *mk = push(R);
    if (!mk)
        return -1;
    bir_inst_init(mk, BIR_INST_LOOP, ISA_OP_NOP);
    mk->loop = li;
    mk->src = L->path;
    mk->op_kind = "loop";
    mk->name = "loop";
    return 0;
}

static int emit_plan(remit_t *R, int q)
{
    const roll_plan_t *p = &R->P[q];
    int rc = emit_plan_head(R, q), li = R->bl[q];
    if (rc)
        return rc;
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        if (!(R->engines[q] >> e & 1u))
            continue;
        bir_inst_t *in = ctl(R, ISA_OP_REG_SET, e, R->counter[q][e], 0, q, "counter");
        for (int g = 0; in && p->depth == 0 && g < R->nregs; g++)
            if (R->regs[g].engine == e)
                in = ctl(R, ISA_OP_REG_SET, e, R->regs[g].reg, 0, q, "step");
        if (!in)
            return -1;
        in->loop_role = BIR_LOOP_HEAD_END;
    }
    if ((rc = emit_range(R, p->s0, p->s1, p->depth + 1)) != 0)
        return rc;
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        if (!(R->engines[q] >> e & 1u))
            continue;
        for (int g = 0; g < R->nregs; g++) {
            const rreg_t *G = &R->regs[g];
            int64_t s = G->step[p->depth];
            if (G->engine != e || !s || !is_on_chain(R, q, G->owner))
                continue;
            if (!fits32(s) || !fits32(s * p->R)) {
                R->why = "a register step passes 32 bits";
                return 1;
            }
            if (!ctl(R, ISA_OP_REG_ADD, e, G->reg, (int32_t)s, q, "step"))
                return -1;
        }
        bir_inst_t *in = ctl(R, ISA_OP_REG_ADD, e, R->counter[q][e], 1, q, "next");
        if (!in || !(in = ctl(R, ISA_OP_BRANCH_CMP, e, R->counter[q][e], p->R, q, "back")))
            return -1;
        in->loop_role = BIR_LOOP_BACK;
        for (int g = 0; p->depth > 0 && g < R->nregs; g++) {   /* restore on exit */
            const rreg_t *G = &R->regs[g];
            int64_t s = G->step[p->depth];
            if (G->engine == e && s && is_on_chain(R, q, G->owner) &&
                !ctl(R, ISA_OP_REG_ADD, e, G->reg, (int32_t)(-s * p->R), q, "restore"))
                return -1;
        }
    }
    R->m->loops[li].end = R->out.n;
    return 0;
}

static int emit_range(remit_t *R, int a, int z, int depth)
{
    for (int x = a; x < z;) {
        const roll_plan_t *c = R->cur < R->np ? &R->P[R->cur] : NULL;
        if (c && (c->dyn ? c->pst[0] : c->s0) == x && c->depth == depth) {
            int q = R->cur, rc = c->dyn ? emit_dyn(R, q) : emit_plan(R, q);
            if (rc)
                return rc;
            x = R->P[q].end;
            continue;
        }
        int rc = copy_inst(R, x++);
        if (rc)
            return rc;
    }
    return 0;
}

int roll_emit(bir_module_t *m, const tir_kernel_t *k, const roll_plan_t *pl, int npl,
              const char **why, tpb_err_t *err)
{
    bir_block_t *b = bir_main_block(m);
    remit_t *R = calloc(1, sizeof *R);
    if (!R)
        return tpb_errf(err, "out of memory rolling loops");
    R->m = m, R->k = k, R->P = pl, R->np = npl, R->b = b, R->err = err;
    R->owner = malloc(sizeof *R->owner * ((size_t)b->ninsts + 1));
    R->bl = calloc((size_t)npl, sizeof *R->bl);
    R->engines = calloc((size_t)npl, sizeof *R->engines);
    R->counter = calloc((size_t)npl, sizeof *R->counter);
    int rc = -1;
    if (!R->owner || !R->bl || !R->engines || !R->counter) {
        tpb_errf(err, "out of memory rolling loops");
        goto out;
    }
    used_regs(k, b, R->used);
    for (int x = 0; x < b->ninsts; x++)
        R->owner[x] = -1;
    for (int q = 0; q < npl; q++)   /* sorted: parents first, children override */
        for (int x = pl[q].s0; x < pl[q].s1; x++) {
            R->owner[x] = q;
            int e = b->insts[x].engine;
            for (int c = q; c >= 0 && e >= 0 && e < ISA_ENG_COUNT; c = pl[c].parent)
                R->engines[c] |= 1u << e;
        }
    int saved = m->nloops;
    R->dyn.q = -1;
    for (int q = 0; q < npl; q++)
        if (pl[q].dyn && (rc = dyn_count(R, q)) != 0) {
            *why = R->why;
            goto out;
        }
    rc = emit_range(R, 0, b->ninsts, 0);
    if (rc > 0) {
        m->nloops = saved;
        *why = R->why;
    } else if (rc == 0) {
        tpb_array_free(b->insts, (size_t)b->cap * sizeof *b->insts);
        b->insts = R->out.v;
        b->ninsts = R->out.n;
        b->cap = R->out.cap;
        R->out.v = NULL;
    }
out:
    tpb_array_free(R->out.v, (size_t)R->out.cap * sizeof *R->out.v);
    free(R->owner);
    free(R->bl);
    free(R->engines);
    free(R->counter);
    free(R);
    return rc;
}

/* ---- dynamic_range / fori_loop (docs/compiler.md "Dynamic loops") ---- */

/* Add instruction in's semaphore increment to cnt; false when it updates a
 * semaphore other than by a local increment (the count would not be a
 * sum of iterations). */
static bool count_inc(const bir_inst_t *in, int64_t *cnt)
{
    const bir_sync_t *h = &in->isa.sync;
    if (in->is_dma_desc || !h->upd_en)
        return true;
    if (h->upd_remote || (h->upd_op != ISA_SEMOP_SEM_INC && h->upd_op != ISA_SEMOP_SEM_ADD_IMM))
        return false;
    cnt[h->upd_sem % DYN_SEMS] += h->upd_op == ISA_SEMOP_SEM_INC ? 1 : h->upd_val;
    return true;
}

static bool count_range(const remit_t *R, int a, int z, int64_t *cnt)
{
    for (int x = a; x < z; x++)
        if (!count_inc(&R->b->insts[x], cnt))
            return false;
    return true;
}

/* Does instruction in write sequencer register r? */
static bool writes_reg(const bir_inst_t *in, int r)
{
    isa_op_t op = in->isa.op;
    const isa_body_t *f = bir_body(in);
    if (op == ISA_OP_TENSOR_LOAD)
        return r >= (int)f->TLOAD.reg && r < (int)(f->TLOAD.reg + f->TLOAD.count);
    if (op == ISA_OP_REG_SET || op == ISA_OP_REG_ADD)
        return (int)f->REG.reg == r;
    return op == ISA_OP_REG_MOVE && (int)f->REGMV.reg == r;
}

/* Every engine that runs the loop control reads the trip count (a
 * while_loop's condition) from its own copy of the register: each must
 * have written it in instructions [a, z) (before the loop; a while_loop's
 * rolled body too, or an engine would test a stale value). */
static bool trip_reg_everywhere(const remit_t *R, int q, uint32_t engines, int a, int z)
{
    int r = R->k->loops[R->P[q].loop].dyn_reg;
    uint32_t set = 0;
    for (int x = a; x < z; x++) {
        const bir_inst_t *in = &R->b->insts[x];
        if (in->engine >= 0 && in->engine < ISA_ENG_COUNT && writes_reg(in, r))
            set |= 1u << in->engine;
    }
    return (engines & ~set) == 0;
}

static int dyn_count(remit_t *R, int q)
{
    const roll_plan_t *p = &R->P[q];
    rdyn_t *D = &R->dyn;
    memset(D, 0, sizeof *D);
    D->q = q;
    int64_t (*it)[DYN_SEMS] = calloc((size_t)p->p + 1, sizeof *it);
    if (!it)
        return tpb_errf(R->err, "out of memory rolling loops");
    bool ok = count_range(R, 0, p->pst[0], D->pre) && count_range(R, p->pst[0], p->end, D->tot) &&
              count_range(R, p->s0, p->s1, it[p->p]);
    for (int j = 0; ok && j < p->p; j++)
        ok = count_range(R, p->pst[j], p->pst[j + 1], it[j]);
    if (!ok)
        R->why = "a semaphore is updated other than by a local increment";
    for (int s = 0; ok && s < DYN_SEMS; s++) {
        D->prof[s] = -1;
        if (!D->tot[s])
            continue;
        int k = 0;
        for (; k < D->nprof; k++) {
            bool same = true;
            for (int j = 0; j <= p->p; j++)
                same &= D->inc[k][j] == it[j][s];
            if (same)
                break;
        }
        if (k == D->nprof) {
            if (k == DYN_MAX_PROF) {
                R->why = "too many semaphore increment patterns in the loop";
                ok = false;
                break;
            }
            for (int j = 0; j <= p->p; j++)
                D->inc[k][j] = it[j][s];
            D->nprof++;
        }
        D->prof[s] = k;
    }
    free(it);
    for (int x = p->pst[0]; ok && x < R->b->ninsts; x++) {
        int e = R->b->insts[x].engine;
        if (e >= 0 && e < ISA_ENG_COUNT)
            D->engines |= 1u << e;
    }
    bool wh = R->k->loops[p->loop].dyn_while;
    if (ok && !trip_reg_everywhere(R, q, D->engines, 0, p->pst[0])) {
        R->why = wh ? "the condition register is not set on every engine before the loop "
                      "(register_load / load_tensor_to_register without an engine set it on all)"
                    : "the trip-count register is not set on every engine before the loop "
                      "(register_load / load_tensor_to_register without an engine set it on all)";
        ok = false;
    }
    if (ok && wh && !trip_reg_everywhere(R, q, D->engines, p->s0, p->s1)) {
        R->why = "the body does not set the condition register on every engine "
                 "(register_load / load_tensor_to_register without an engine set it on all)";
        ok = false;
    }
    return ok ? 0 : 1;
}

/* After the loop, a wait on a semaphore the loop increments: the exit
 * barrier already covers a producer before or in the loop; a later
 * producer's count moves by the increments actually done (register). */
static int dyn_adjust(remit_t *R, int x, bir_inst_t *in)
{
    const rdyn_t *D = &R->dyn;
    bir_sync_t *h = &in->isa.sync;
    if (D->q < 0 || x < R->P[D->q].end || !h->wait_en || D->prof[h->wait_sem % DYN_SEMS] < 0)
        return 0;
    int s = (int)(h->wait_sem % DYN_SEMS);
    int64_t v = h->wait_val;
    if (v <= D->pre[s])
        return 0;
    if (v <= D->pre[s] + D->tot[s]) {
        h->wait_val = (uint32_t)D->pre[s];
        return 0;
    }
    if (h->wait_reg || in->engine < 0 || in->engine >= ISA_ENG_COUNT) {
        R->why = "an instruction after a dynamic_range loop already waits on a register";
        return 1;
    }
    h->wait_val = (uint32_t)(v - D->tot[s]);
    h->wait_reg = (uint32_t)(ISA_NUM_REGS - D->acc[in->engine][D->prof[s]]);
    return 0;
}

static bir_inst_t *dyn_ctl(remit_t *R, isa_op_t op, int e, int reg, int32_t imm, int q,
                           const char *what, int cmp, uint8_t role)
{
    bir_inst_t *in = ctl(R, op == ISA_OP_REG_MOVE ? ISA_OP_REG_SET : op, e, reg, imm, q, what);
    if (!in)
        return NULL;
    if (op == ISA_OP_REG_MOVE) {   /* reg = register imm */
        if (!ctl_init(R, in, BIR_REG_SET, ISA_OP_REG_MOVE, e, q, what))
            return NULL;
        in->isa.f->REGMV.reg = (uint32_t)reg;
        in->isa.f->REGMV.src = (uint32_t)imm;
    }
    if (op == ISA_OP_BRANCH_CMP)
        in->isa.f->BR.cmp = (uint32_t)cmp;
    in->loop_role = role;
    return in;
}

/* The accumulator adds of iteration j (j = p: a rolled iteration) and the
 * trip counter's step down (a while_loop has none: the body sets its
 * condition register). */
static int dyn_tail(remit_t *R, int q, int e, int j)
{
    const rdyn_t *D = &R->dyn;
    const roll_plan_t *p = &R->P[q];
    const tir_loop_t *tl = &R->k->loops[p->loop];
    for (int k = 0; k < D->nprof; k++)
        if (D->inc[k][j] && !fits32(D->inc[k][j])) {
            R->why = "a semaphore increment passes 32 bits";
            return 1;
        } else if (D->inc[k][j] &&
                   !dyn_ctl(R, ISA_OP_REG_ADD, e, D->acc[e][k], (int32_t)D->inc[k][j], q, "count", 0, 0))
            return -1;
    if (tl->dyn_while)
        return 0;
    return dyn_ctl(R, ISA_OP_REG_ADD, e, R->counter[q][e], (int32_t)-tl->dyn_step, q, "next", 0, 0)
               ? 0 : -1;
}

static int emit_dyn(remit_t *R, int q)
{
    const roll_plan_t *p = &R->P[q];
    rdyn_t *D = &R->dyn;
    const tir_loop_t *tl = &R->k->loops[p->loop];
    int rc = emit_plan_head(R, q);
    if (rc)
        return rc;
    R->m->loops[R->bl[q]].dynamic = true;
    const char *lpath = R->k->loops[p->loop].path;
    if (!fits32(tl->dyn_start) || !fits32(tl->dyn_step)) {
        R->why = "the range start or step passes 32 bits";
        return 1;
    }
    /* the loop control: a counter of the remaining distance to the stop,
     * tested > 0 (dynamic_range), or the condition register itself, tested
     * != 0 (while_loop) */
    bool wh = tl->dyn_while;
    int skip_cmp = wh ? ISA_CMP_EQ : ISA_CMP_LE, back_cmp = wh ? ISA_CMP_NE : ISA_CMP_GT;
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        if (!(D->engines >> e & 1u))
            continue;
        if (wh)
            R->counter[q][e] = tl->dyn_reg;
        else if (!(R->engines[q] >> e & 1u) && (R->counter[q][e] = free_reg(R, e, false)) < 0)
            return 1;
        for (int k = 0; k < D->nprof; k++)
            if ((D->acc[e][k] = free_reg(R, e, true)) < 0)
                return 1;
    }
    for (int e = 0; e < ISA_ENG_COUNT; e++)   /* read until the end of the program */
        for (int k = 0; (D->engines >> e & 1u) && k < D->nprof; k++)
            R->used[D->acc[e][k]] = true;
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        if (!(D->engines >> e & 1u))
            continue;
        if (!wh &&
            (!dyn_ctl(R, ISA_OP_REG_MOVE, e, R->counter[q][e], tl->dyn_reg, q, "trips", 0, 0) ||
             (tl->dyn_start && !dyn_ctl(R, ISA_OP_REG_ADD, e, R->counter[q][e],
                                        (int32_t)-tl->dyn_start, q, "trips", 0, 0))))
            return -1;
        for (int k = 0; k < D->nprof; k++)
            if (!dyn_ctl(R, ISA_OP_REG_SET, e, D->acc[e][k], 0, q, "count", 0, 0))
                return -1;
        for (int g = 0; g < R->nregs; g++)
            if (R->regs[g].engine == e && !ctl(R, ISA_OP_REG_SET, e, R->regs[g].reg, 0, q, "step"))
                return -1;
    }
    for (int j = 0; j <= p->p; j++) {   /* guarded peeled iterations, then the body */
        for (int e = 0; e < ISA_ENG_COUNT; e++)
            if ((D->engines >> e & 1u) &&
                !dyn_ctl(R, ISA_OP_BRANCH_CMP, e, R->counter[q][e], 0, q, "skip", skip_cmp,
                         j == p->p ? BIR_LOOP_GUARD : BIR_LOOP_SKIP))
                return -1;
        if ((rc = emit_range(R, j < p->p ? p->pst[j] : p->s0, j < p->p ? p->pst[j + 1] : p->s1, 1)))
            return rc;
        for (int e = 0; e < ISA_ENG_COUNT; e++) {
            if (!(D->engines >> e & 1u))
                continue;
            for (int g = 0; j == p->p && g < R->nregs; g++) {
                const rreg_t *G = &R->regs[g];
                if (G->engine != e || !G->step[0])
                    continue;
                if (!fits32(G->step[0])) {
                    R->why = "a register step passes 32 bits";
                    return 1;
                }
                if (!ctl(R, ISA_OP_REG_ADD, e, G->reg, (int32_t)G->step[0], q, "step"))
                    return -1;
            }
            if ((rc = dyn_tail(R, q, e, j)))
                return rc;
            if (j == p->p && !dyn_ctl(R, ISA_OP_BRANCH_CMP, e, R->counter[q][e], 0, q, "back",
                                      back_cmp, BIR_LOOP_BACK))
                return -1;
        }
    }
    /* exit label: every engine waits until all work before the loop's end
     * is counted (pre + increments done), whatever the trip count */
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        if (!(D->engines >> e & 1u))
            continue;
        bool first = true;
        for (int s = 0; s <= DYN_SEMS; s++) {
            if (s < DYN_SEMS && !D->pre[s] && !D->tot[s])
                continue;
            if (s == DYN_SEMS && !first)
                break;
            bir_inst_t *in = push(R);
            if (!in)
                return -1;
            bir_inst_init(in, BIR_NOP, ISA_OP_NOP);
            in->engine = e;
            in->loop = R->bl[q];
            in->op_kind = "sync";
            in->src = lpath;
            in->name = "loop.exit";
            in->loop_role = first ? BIR_LOOP_EXIT : 0;
            first = false;
            if (s == DYN_SEMS)
                break;
            in->isa.sync.wait_en = 1;
            in->isa.sync.wait_sem = (uint32_t)s;
            in->isa.sync.wait_val = (uint32_t)D->pre[s];
            if (D->prof[s] >= 0)
                in->isa.sync.wait_reg = (uint32_t)(ISA_NUM_REGS - D->acc[e][D->prof[s]]);
        }
    }
    R->m->loops[R->bl[q]].end = R->out.n;
    return 0;
}
