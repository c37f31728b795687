/* roll.c - rolled loops (docs/compiler.md "Rolled loops").
 *
 * The front-end unrolls every loop and records where each iteration's ops
 * start (tir_loop_t).  After scheduling, a candidate loop whose iterations
 * p..n-1 lowered to the same instructions -- equal bodies, except DMA
 * descriptor addresses and semaphore wait values that grow by a constant
 * step per iteration -- is emitted once, as a loop on every engine with
 * work in it:
 *
 *   InstLoop marker (BIR 105, not an ISA instruction)
 *   per engine: RegSet counter 0, RegSet each step register 0
 *   body of iteration p: a changing wait reads wait_val + r(64 - wait_reg),
 *                        a changing DMA side adds its register (src_reg /
 *                        dst_reg, in elements)
 *   per engine: RegAdd each step register, RegAdd counter 1,
 *               BranchCmp counter < n - p -> first body pc
 *
 * Iterations 0..p-1 (p <= ROLL_MAX_PEEL) stay unrolled in front.  Each
 * engine therefore executes exactly the instruction sequence of the
 * unrolled program with the same wait values, plus the control
 * instructions, so values are identical and waits cannot deadlock (the
 * unrolled program's argument, docs/compiler.md "No deadlock"). */
#include "backend.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define ROLL_MAX_PEEL 3
#define ROLL_MAX_UNROLL 8        /* rotating buffers: SBUF <= 4, PSUM <= 8 */
#define ROLL_WAIT_REGS 15        /* wait_reg 1..15 -> r63..r49 */
#define ROLL_MAX_STEPS 32        /* step registers per engine and loop */

int roll_candidates(const tir_kernel_t *k, bool loops_opt, unsigned char **cand,
                    sched_rr_event_t **ev, int *nev, tpb_err_t *err)
{
    *cand = NULL, *ev = NULL, *nev = 0;
    if (k->nloops == 0)
        return 0;
    unsigned char *c = calloc((size_t)k->nloops, 1);
    if (!c)
        return tpb_errf(err, "out of memory planning rolled loops");
    size_t n = 0;
    for (int i = 0; i < k->nloops; i++) {
        const tir_loop_t *l = &k->loops[i];
        int64_t ops = k->loop_marks[l->first + l->trips] - k->loop_marks[l->first];
        bool want = l->roll == 1 ||
                    (l->roll < 0 && loops_opt && (l->sequential || ops > ENC_ROLL_THRESHOLD));
        c[i] = want && l->trips >= 2 && ops > 0;
        if (c[i])
            n += (size_t)l->trips;
    }
    sched_rr_event_t *e = n ? malloc(n * sizeof *e) : NULL;
    if (n && !e) {
        free(c);
        return tpb_errf(err, "out of memory planning rolled loops");
    }
    /* loops are recorded in execution order, so events of one op index come
     * outer-before-inner; keep that order (stable merge by op) */
    int m = 0;
    for (int i = 0; i < k->nloops; i++)
        for (int64_t it = 0; c[i] && it < k->loops[i].trips; it++)
            e[m++] = (sched_rr_event_t){k->loop_marks[k->loops[i].first + it], i, it == 0};
    for (int i = 1; i < m; i++) {   /* insertion sort: nearly sorted already */
        sched_rr_event_t x = e[i];
        int j = i - 1;
        while (j >= 0 && e[j].op > x.op)
            e[j + 1] = e[j], j--;
        e[j + 1] = x;
    }
    *cand = c, *ev = e, *nev = m;
    return 0;
}

/* Effective op of each instruction: its tile-IR op, or for compiler-made
 * ones (-1) the next instruction's (drains and Halt: INT_MAX). */
static int *effective_ops(const bir_block_t *b)
{
    int *eff = malloc(sizeof *eff * ((size_t)b->ninsts + 1));
    if (!eff)
        return NULL;
    int next = INT_MAX;
    for (int i = b->ninsts - 1; i >= 0; i--) {
        if (b->insts[i].tir_op >= 0)
            next = b->insts[i].tir_op;
        eff[i] = next;
    }
    eff[b->ninsts] = INT_MAX;
    return eff;
}

static int first_at(const int *eff, int n, int op)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (eff[mid] < op)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The per-iteration step of one varying quantity. */
typedef struct {
    int64_t step;            /* per iteration (elements for DMA, counts for waits) */
    int reg;                 /* register holding (i - p) * step */
} roll_step_t;

typedef struct {
    int loop;                /* tir loop */
    int p, n;                /* peeled iterations, trips */
    int u, R;                /* source iterations per rolled iteration, rolled trips */
    int s0, s1, end;         /* body [s0, s1), deleted [s1, end) */
    int64_t *wstep;          /* per body inst: wait step */
    int64_t *sstep, *dstep;  /* per body inst: DDESC src/dst address step (bytes) */
} roll_plan_t;

static void plan_free(roll_plan_t *p)
{
    free(p->wstep);
    free(p->sstep);
    free(p->dstep);
    memset(p, 0, sizeof *p);
}

static bool same_body(const bir_inst_t *a, const bir_inst_t *b)
{
    if (a->engine != b->engine || a->opc != b->opc || a->isa.op != b->isa.op ||
        a->has_pred != b->has_pred || a->is_dma_desc != b->is_dma_desc || a->queue != b->queue)
        return false;
    if (a->has_pred && memcmp(&a->pred, &b->pred, sizeof a->pred))
        return false;
    isa_inst_t x = a->isa, y = b->isa;
    x.sync.wait_val = y.sync.wait_val = 0;
    if (x.op == ISA_OP_DMA_DIRECT2D) {
        x.f.DDESC.src.addr = y.f.DDESC.src.addr = 0;
        x.f.DDESC.dst.addr = y.f.DDESC.dst.addr = 0;
    }
    return memcmp(&x, &y, sizeof x) == 0;
}

static bool linear(int64_t a, int64_t b, int64_t k, int64_t step)
{
    return b - a == k * step;
}

/* Try the rolled iterations st[0..n]: rolled iterations 1..n-1 congruent
 * to rolled iteration 0 (p = 0 here: the caller passes the boundaries
 * from the first rolled iteration on). */
static const char *try_peel(const bir_block_t *b, const int *st, int n, roll_plan_t *pl)
{
    const int p = 0;
    int len = st[p + 1] - st[p];
    if (len <= 0)
        return "an iteration has no instructions";
    for (int i = p + 1; i < n; i++)
        if (st[i + 1] - st[i] != len)
            return "iterations lower to different instruction counts";
    const bir_inst_t *A = &b->insts[st[p]], *B = &b->insts[st[p + 1]];
    for (int t = 0; t < len; t++) {
        pl->wstep[t] = (int64_t)B[t].isa.sync.wait_val - (int64_t)A[t].isa.sync.wait_val;
        if (A[t].isa.op == ISA_OP_DMA_DIRECT2D) {
            pl->sstep[t] = (int64_t)B[t].isa.f.DDESC.src.addr - (int64_t)A[t].isa.f.DDESC.src.addr;
            pl->dstep[t] = (int64_t)B[t].isa.f.DDESC.dst.addr - (int64_t)A[t].isa.f.DDESC.dst.addr;
        } else {
            pl->sstep[t] = pl->dstep[t] = 0;
        }
    }
    for (int i = p + 1; i < n; i++) {
        const bir_inst_t *C = &b->insts[st[i]];
        int64_t k = i - p;
        for (int t = 0; t < len; t++) {
            if (!same_body(&A[t], &C[t]))
                return "an instruction differs between iterations beyond DMA addresses and "
                       "wait values";
            if (!linear(A[t].isa.sync.wait_val, C[t].isa.sync.wait_val, k, pl->wstep[t]))
                return "a wait value does not grow linearly";
            if (A[t].isa.op == ISA_OP_DMA_DIRECT2D &&
                (!linear(A[t].isa.f.DDESC.src.addr, C[t].isa.f.DDESC.src.addr, k, pl->sstep[t]) ||
                 !linear(A[t].isa.f.DDESC.dst.addr, C[t].isa.f.DDESC.dst.addr, k, pl->dstep[t])))
                return "a DMA address does not move linearly";
        }
    }
    for (int t = 0; t < len; t++) {
        if (A[t].isa.op != ISA_OP_DMA_DIRECT2D)
            continue;
        const isa_fmt_DDESC_t *f = &A[t].isa.f.DDESC;
        if ((pl->sstep[t] && (f->src_reg != ISA_REG_NONE ||
                              pl->sstep[t] % isa_dtype_size(f->src.dtype))) ||
            (pl->dstep[t] && (f->dst_reg != ISA_REG_NONE ||
                              pl->dstep[t] % isa_dtype_size(f->dst.dtype))))
            return "a moving DMA side already has a register offset or moves by a partial element";
        int64_t far = (int64_t)n * (llabs(pl->sstep[t]) + llabs(pl->dstep[t]));
        if (far > INT32_MAX)
            return "a DMA register offset would pass 32 bits";
    }
    return NULL;
}

/* Registers the kernel itself uses on any engine (TensorLoad, DMA). */
static void used_regs(const bir_block_t *b, bool used[ISA_NUM_REGS])
{
    memset(used, 0, ISA_NUM_REGS * sizeof *used);
    for (int i = 0; i < b->ninsts; i++) {
        const isa_inst_t *in = &b->insts[i].isa;
        if (in->op == ISA_OP_TENSOR_LOAD)
            for (uint32_t r = in->f.TLOAD.reg; r < ISA_NUM_REGS && r < in->f.TLOAD.reg + 8; r++)
                used[r] = true;
        if (in->op == ISA_OP_DMA_DIRECT2D) {
            if (in->f.DDESC.src_reg < ISA_NUM_REGS)
                used[in->f.DDESC.src_reg] = true;
            if (in->f.DDESC.dst_reg < ISA_NUM_REGS)
                used[in->f.DDESC.dst_reg] = true;
        }
    }
}

/* Register for (kind, step) on one engine: wait registers from r63 down,
 * the others from r48 down; -1 when none is left. */
static int step_reg(roll_step_t *steps, int *nsteps, bool wait, int64_t step,
                    const bool used[ISA_NUM_REGS], bool taken[ISA_NUM_REGS])
{
    for (int i = 0; i < *nsteps; i++)
        if (steps[i].step == step && (steps[i].reg > ISA_NUM_REGS - 1 - ROLL_WAIT_REGS) == wait)
            return steps[i].reg;
    if (*nsteps == ROLL_MAX_STEPS)
        return -1;
    int hi = wait ? ISA_NUM_REGS - 1 : ISA_NUM_REGS - 1 - ROLL_WAIT_REGS;
    int lo = wait ? ISA_NUM_REGS - ROLL_WAIT_REGS : 0;
    for (int r = hi; r >= lo; r--)
        if (!used[r] && !taken[r]) {
            taken[r] = true;
            steps[(*nsteps)++] = (roll_step_t){step, r};
            return r;
        }
    return -1;
}

static void ctl(bir_inst_t *in, isa_op_t op, int engine, int reg, int32_t imm, int loop,
                const char *path, const char *what)
{
    bir_inst_init(in, op == ISA_OP_BRANCH_CMP ? BIR_BRANCH_CMP
                      : op == ISA_OP_REG_ADD  ? BIR_REG_ADD
                                              : BIR_REG_SET, op);
    in->engine = engine;
    in->loop = loop;
    in->op_kind = "loop";
    in->src = path;
    snprintf(in->name, sizeof in->name, "loop.%s", what);
    if (op == ISA_OP_BRANCH_CMP) {
        in->isa.f.BR.reg = (uint32_t)reg;
        in->isa.f.BR.cmp = ISA_CMP_LT;
        in->isa.f.BR.imm = imm;
    } else {
        in->isa.f.REG.reg = (uint32_t)reg;
        in->isa.f.REG.imm = imm;
    }
}

typedef struct {
    bir_inst_t *v;
    int n, cap;
} ibuf_t;

static bir_inst_t *push(ibuf_t *o, tpb_err_t *err)
{
    if (o->n == o->cap) {
        int nc = o->cap ? o->cap * 2 : 1024;
        bir_inst_t *q = realloc(o->v, (size_t)nc * sizeof *q);
        if (!q) {
            tpb_errf(err, "out of memory rolling loops");
            return NULL;
        }
        o->v = q, o->cap = nc;
    }
    return &o->v[o->n++];
}

/* Emit one rolled loop into o: marker, heads, body, tails. */
static int emit_loop(ibuf_t *o, const bir_block_t *b, const roll_plan_t *pl, const tir_kernel_t *k,
                     const bool used[ISA_NUM_REGS], bir_module_t *m, const char **why,
                     tpb_err_t *err)
{
    int li = m->nloops, len = pl->s1 - pl->s0;
    const char *path = k->loops[pl->loop].path;
    roll_step_t steps[ISA_ENG_COUNT][ROLL_MAX_STEPS];
    int nsteps[ISA_ENG_COUNT] = {0}, counter[ISA_ENG_COUNT];
    bool has[ISA_ENG_COUNT] = {false}, taken[ISA_ENG_COUNT][ISA_NUM_REGS];
    memset(taken, 0, sizeof taken);
    int base = o->n;
    bir_inst_t *mk = push(o, err);
    if (!mk)
        return -1;
    bir_inst_init(mk, BIR_INST_LOOP, ISA_OP_NOP);
    mk->loop = li;
    mk->src = path;
    mk->op_kind = "loop";
    snprintf(mk->name, sizeof mk->name, "loop");
    /* body copy first (registers decided per engine), heads inserted after */
    ibuf_t body = {0};
    for (int t = 0; t < len; t++) {
        bir_inst_t *in = push(&body, err);
        if (!in) {
            free(body.v);
            return -1;
        }
        *in = b->insts[pl->s0 + t];
        in->loop = li;
        in->loop_role = BIR_LOOP_BODY;
        int e = in->engine;
        has[e] = true;
        int r;
        if (pl->wstep[t] && in->isa.sync.wait_en) {
            if ((r = step_reg(steps[e], &nsteps[e], true, pl->wstep[t], used, taken[e])) < 0)
                goto noregs;
            in->isa.sync.wait_reg = (uint32_t)(ISA_NUM_REGS - r);
        }
        if (pl->sstep[t]) {
            int64_t el = pl->sstep[t] / isa_dtype_size(in->isa.f.DDESC.src.dtype);
            if ((r = step_reg(steps[e], &nsteps[e], false, el, used, taken[e])) < 0)
                goto noregs;
            in->isa.f.DDESC.src_reg = (uint32_t)r;
        }
        if (pl->dstep[t]) {
            int64_t el = pl->dstep[t] / isa_dtype_size(in->isa.f.DDESC.dst.dtype);
            if ((r = step_reg(steps[e], &nsteps[e], false, el, used, taken[e])) < 0)
                goto noregs;
            in->isa.f.DDESC.dst_reg = (uint32_t)r;
        }
    }
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        counter[e] = -1;
        if (!has[e])
            continue;
        for (int r = ISA_NUM_REGS - 1 - ROLL_WAIT_REGS; r >= 0 && counter[e] < 0; r--)
            if (!used[r] && !taken[e][r])
                counter[e] = r;
        if (counter[e] < 0)
            goto noregs;
        bir_inst_t *in;
        if (!(in = push(o, err)))
            goto fail;
        ctl(in, ISA_OP_REG_SET, e, counter[e], 0, li, path, "counter");
        for (int s = 0; s < nsteps[e]; s++) {
            if (!(in = push(o, err)))
                goto fail;
            ctl(in, ISA_OP_REG_SET, e, steps[e][s].reg, 0, li, path, "step");
        }
        o->v[o->n - 1].loop_role = BIR_LOOP_HEAD_END;
    }
    for (int t = 0; t < len; t++) {
        bir_inst_t *in = push(o, err);
        if (!in)
            goto fail;
        *in = body.v[t];
    }
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        if (!has[e])
            continue;
        bir_inst_t *in;
        for (int s = 0; s < nsteps[e]; s++) {
            if (steps[e][s].step > INT32_MAX || steps[e][s].step < INT32_MIN)
                goto noregs;
            if (!(in = push(o, err)))
                goto fail;
            ctl(in, ISA_OP_REG_ADD, e, steps[e][s].reg, (int32_t)steps[e][s].step, li, path, "step");
        }
        if (!(in = push(o, err)))
            goto fail;
        ctl(in, ISA_OP_REG_ADD, e, counter[e], 1, li, path, "next");
        if (!(in = push(o, err)))
            goto fail;
        ctl(in, ISA_OP_BRANCH_CMP, e, counter[e], pl->R, li, path, "back");
        in->loop_role = BIR_LOOP_BACK;
    }
    free(body.v);
    bir_loop_t *nl = realloc(m->loops, (size_t)(m->nloops + 1) * sizeof *nl);
    if (!nl)
        return tpb_errf(err, "out of memory rolling loops");
    m->loops = nl;
    bir_loop_t *L = &m->loops[m->nloops++];
    memset(L, 0, sizeof *L);
    snprintf(L->path, sizeof L->path, "%s", path);
    L->trips = pl->R;
    L->unroll = pl->u;
    L->peeled = pl->p;
    L->marker = base;
    L->end = o->n;
    return 0;
noregs:
    *why = "no free sequencer registers for the loop";
    free(body.v);
    o->n = base;
    return 1;
fail:
    free(body.v);
    return -1;
}

/* Plan loop i: find the iterations' instruction ranges and a peel. */
static const char *plan_loop(const bir_block_t *b, const int *eff, const tir_kernel_t *k, int i,
                             roll_plan_t *pl, tpb_err_t *err, int *rc)
{
    const tir_loop_t *l = &k->loops[i];
    int n = (int)l->trips;
    int *st = malloc(sizeof *st * ((size_t)n + 1));
    if (!st) {
        *rc = tpb_errf(err, "out of memory rolling loops");
        return NULL;
    }
    for (int it = 0; it <= n; it++)
        st[it] = first_at(eff, b->ninsts, k->loop_marks[l->first + it]);
    const char *why = "fewer than two congruent iterations";
    int *sb = malloc(sizeof *sb * ((size_t)n + 1));
    if (!sb) {
        free(st);
        *rc = tpb_errf(err, "out of memory rolling loops");
        return NULL;
    }
    /* u source iterations per rolled one (rotating buffers repeat with
     * their period), after p peeled ones; the shortest body wins */
    for (int u = 1; u <= ROLL_MAX_UNROLL && 2 * u <= n; u++) {
        for (int p = (n % u); p <= ROLL_MAX_PEEL + u && p + 2 * u <= n; p += u) {
            int R = (n - p) / u;
            for (int j = 0; j <= R; j++)
                sb[j] = st[p + j * u];
            int len = sb[1] - sb[0];
            plan_free(pl);
            pl->wstep = calloc((size_t)len + 1, sizeof *pl->wstep);
            pl->sstep = calloc((size_t)len + 1, sizeof *pl->sstep);
            pl->dstep = calloc((size_t)len + 1, sizeof *pl->dstep);
            if (!pl->wstep || !pl->sstep || !pl->dstep) {
                free(st);
                free(sb);
                *rc = tpb_errf(err, "out of memory rolling loops");
                return NULL;
            }
            const char *w = try_peel(b, sb, R, pl);
            if (!w) {
                pl->loop = i, pl->p = p, pl->n = n, pl->u = u, pl->R = R;
                pl->s0 = sb[0], pl->s1 = sb[1], pl->end = sb[R];
                free(sb);
                free(st);
                return NULL;
            }
            if (u == 1 && p == 0)
                why = w;   /* report the plain form's reason */
        }
    }
    free(sb);
    free(st);
    return why;
}

int roll_loops(bir_module_t *m, const tir_kernel_t *k, const unsigned char *cand,
               enc_stats_t *st, tpb_err_t *err)
{
    bir_block_t *b = bir_main_block(m);
    if (!cand || !k->nloops)
        return 0;
    int *eff = effective_ops(b);
    unsigned char *done = calloc((size_t)k->nloops, 1);
    ibuf_t o = {0};
    int rc = -1;
    if (!eff || !done) {
        tpb_errf(err, "out of memory rolling loops");
        goto out;
    }
    for (int i = 1; i < b->ninsts; i++)
        if (eff[i] < eff[i - 1]) {
            snprintf(st->roll_note, sizeof st->roll_note, "instructions are not in op order");
            st->roll_failed++;
            rc = 0;
            goto out;
        }
    bool used[ISA_NUM_REGS];
    used_regs(b, used);
    int pos = 0;   /* instructions before pos are in o */
    for (int i = 0; i < k->nloops; i++) {
        const tir_loop_t *l = &k->loops[i];
        int par = l->parent;
        bool covered = false;
        for (; par >= 0 && !covered; par = k->loops[par].parent)
            covered = done[par] == 1;
        if (!cand[i] || covered)
            continue;
        roll_plan_t pl = {0};
        int prc = 0;
        const char *why = plan_loop(b, eff, k, i, &pl, err, &prc);
        if (prc)
            goto out;
        if (!why && pl.s0 < pos)
            why = "it overlaps a rolled loop";
        int erc = 0, end = pl.end;
        if (!why) {
            for (; pos < pl.s0; pos++) {
                bir_inst_t *in = push(&o, err);
                if (!in)
                    goto out;
                *in = b->insts[pos];
            }
            erc = emit_loop(&o, b, &pl, k, used, m, &why, err);
            if (erc < 0) {
                plan_free(&pl);
                goto out;
            }
        }
        plan_free(&pl);
        if (why) {
            done[i] = 2;
            st->roll_failed++;
            if (!st->roll_note[0])
                snprintf(st->roll_note, sizeof st->roll_note, "%s: %s", l->path, why);
            if (l->roll == 1) {
                bool outer = false;
                for (int q = l->parent; q >= 0; q = k->loops[q].parent)
                    outer |= cand[q] != 0;
                if (!outer) {
                    tpb_errf(err, "%s: \"roll\": true, but the loop cannot be rolled: %s",
                             l->path, why);
                    goto out;
                }
            }
            continue;
        }
        done[i] = 1;
        st->rolled++;
        pos = end;
    }
    if (st->rolled) {
        for (; pos < b->ninsts; pos++) {
            bir_inst_t *in = push(&o, err);
            if (!in)
                goto out;
            *in = b->insts[pos];
        }
        free(b->insts);
        b->insts = o.v;
        b->ninsts = o.n;
        b->cap = o.cap;
        o.v = NULL;
    }
    rc = 0;
out:
    free(o.v);
    free(eff);
    free(done);
    return rc;
}
