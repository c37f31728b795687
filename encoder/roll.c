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
#include "roll.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define ROLL_MAX_PEEL 3          /* iterations left unrolled before / after the loop */
#define ROLL_MAX_UNROLL 8        /* rotating buffers: SBUF <= 4, PSUM <= 8 */

static int by_op(const void *a, const void *b)
{
    const sched_rr_event_t *x = a, *y = b;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    return (int)y->save - (int)x->save;   /* a loop's save before its restores */
}

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
    /* loops are recorded in execution order (outer before inner), so
     * events of one op index sort by record: outer restores before inner
     * saves */
    int m = 0;
    for (int i = 0; i < k->nloops; i++)
        for (int64_t it = 0; c[i] && it < k->loops[i].trips; it++)
            e[m++] = (sched_rr_event_t){k->loop_marks[k->loops[i].first + it], i, it == 0};
    if (m > 1)
        qsort(e, (size_t)m, sizeof *e, by_op);
    *cand = c, *ev = e, *nev = m;
    return 0;
}

/* Effective op of instruction i: its tile-IR op, or for a compiler-made
 * one (-1) the next instruction's (drains and Halt: INT_MAX).  Read off the
 * block, not kept in an array of one int per instruction (its pages were a
 * tenth of a compile's faults): compiler-made instructions come in short
 * runs (the drains and halts at the end; a wait Nop carries its
 * instruction's op), so the walk over them is short. */
static int eff_op(const bir_block_t *b, int i)
{
    for (; i < b->ninsts; i++)
        if (b->insts[i].tir_op >= 0)
            return b->insts[i].tir_op;
    return INT_MAX;
}

/* Whether the effective ops never decrease (a pass from the back). */
static bool eff_sorted(const bir_block_t *b)
{
    int next = INT_MAX;
    for (int i = b->ninsts - 1; i >= 0; i--) {
        int op = b->insts[i].tir_op;
        if (op >= 0) {
            if (op > next)
                return false;
            next = op;
        }
    }
    return true;
}

/* The first instruction whose effective op is at least op (they are
 * sorted). */
static int first_at(const bir_block_t *b, int op)
{
    int lo = 0, hi = b->ninsts;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (eff_op(b, mid) < op)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}


void roll_plan_free(roll_plan_t *p)
{
    free(p->sb);
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
    const bir_rare_t *ra = bir_rare(a), *rb = bir_rare(b);
    if (a->has_pred && (memcmp(&ra->pred, &rb->pred, sizeof ra->pred) ||
                        ra->npred_more != rb->npred_more ||
                        memcmp(ra->pred_more, rb->pred_more, sizeof ra->pred_more)))
        return false;
    isa_inst_t x, y;
    bir_isa_expand(a, &x);
    bir_isa_expand(b, &y);
    x.sync.wait_val = y.sync.wait_val = 0;
    if (isa_op_is_direct_dma(x.op)) {
        x.f.DDESC.src.addr = y.f.DDESC.src.addr = 0;
        x.f.DDESC.dst.addr = y.f.DDESC.dst.addr = 0;
    }
    return memcmp(&x, &y, sizeof x) == 0;
}

static bool linear(int64_t a, int64_t b, int64_t k, int64_t step) { return b - a == k * step; }

/* Rolled iterations 1..R-1 (boundaries sb) congruent to rolled iteration 0:
 * the same instructions, wait values and DMA addresses moving by a constant
 * step per iteration.  NULL, or the reason. */
static const char *congruent(const bir_block_t *b, const int *sb, int R, roll_plan_t *pl)
{
    int len = sb[1] - sb[0];
    if (len <= 0)
        return "an iteration has no instructions";
    for (int i = 1; i < R; i++)
        if (sb[i + 1] - sb[i] != len)
            return "iterations lower to different instruction counts";
    const bir_inst_t *A = &b->insts[sb[0]], *B = &b->insts[sb[1]];
    for (int t = 0; t < len; t++) {
        pl->wstep[t] = (int64_t)B[t].isa.sync.wait_val - (int64_t)A[t].isa.sync.wait_val;
        pl->sstep[t] = pl->dstep[t] = 0;
        /* B[t] may be another instruction (one without DMA fields: f NULL);
         * same_body below then reports the difference */
        if (isa_op_is_direct_dma(A[t].isa.op) && B[t].isa.op == A[t].isa.op) {
            pl->sstep[t] = (int64_t)B[t].isa.f->DDESC.src.addr - (int64_t)A[t].isa.f->DDESC.src.addr;
            pl->dstep[t] = (int64_t)B[t].isa.f->DDESC.dst.addr - (int64_t)A[t].isa.f->DDESC.dst.addr;
        }
    }
    for (int i = 1; i < R; i++) {
        const bir_inst_t *C = &b->insts[sb[i]];
        for (int t = 0; t < len; t++) {
            if (!same_body(&A[t], &C[t]))
                return "an instruction differs between iterations beyond DMA addresses and "
                       "wait values";
            if (!linear(A[t].isa.sync.wait_val, C[t].isa.sync.wait_val, i, pl->wstep[t]))
                return "a wait value does not grow linearly";
            if (isa_op_is_direct_dma(A[t].isa.op) &&
                (!linear(A[t].isa.f->DDESC.src.addr, C[t].isa.f->DDESC.src.addr, i, pl->sstep[t]) ||
                 !linear(A[t].isa.f->DDESC.dst.addr, C[t].isa.f->DDESC.dst.addr, i, pl->dstep[t])))
                return "a DMA address does not move linearly";
        }
    }
    for (int t = 0; t < len; t++) {
        if (!isa_op_is_direct_dma(A[t].isa.op))
            continue;
        const isa_fmt_DDESC_t *f = &A[t].isa.f->DDESC;
        if ((pl->sstep[t] && (f->src_reg != ISA_REG_NONE ||
                              pl->sstep[t] % isa_dtype_size(f->src.dtype))) ||
            (pl->dstep[t] && (f->dst_reg != ISA_REG_NONE ||
                              pl->dstep[t] % isa_dtype_size(f->dst.dtype))))
            return "a moving DMA side already has a register offset or moves by a partial "
                   "element";
    }
    return NULL;
}

/* A dynamic loop's statement, for messages. */
static const char *dyn_name(const tir_loop_t *l)
{
    return l->dyn_while ? "while_loop" : "dynamic_range";
}

/* How far an attempt got: the reason of the furthest one is reported. */
static int rank(const char *why)
{
    return !why ? -1 : strstr(why, "register") ? 3 : strstr(why, "linear") ? 2
                     : strstr(why, "differs") ? 1 : 0;
}

/* Plan loop i: find the iterations' instruction ranges, a peel p and an
 * unroll factor u (rotating buffers repeat with their period); the
 * shortest body wins.  NULL, or the reason; *rc < 0 on out of memory. */
static const char *plan_loop(const bir_block_t *b, const tir_kernel_t *k, int i,
                             roll_plan_t *pl, tpb_err_t *err, int *rc)
{
    const tir_loop_t *l = &k->loops[i];
    int n = (int)l->trips;
    int *st = malloc(sizeof *st * ((size_t)n + 1));
    const char *why = "fewer than two congruent iterations";
    if (!st)
        goto oom;
    for (int it = 0; it <= n; it++)
        st[it] = first_at(b, k->loop_marks[l->first + it]);
    /* a dynamic loop's trip count is known at run time only: one source
     * iteration per rolled one, guarded peeled iterations in front; the
     * front-end's last guess iteration may differ from the others (it has
     * no successor to wait for) and is then dropped: it is a template, the
     * rolled body runs every iteration after the peeled ones */
    int umax = l->dynamic ? 1 : ROLL_MAX_UNROLL;
    for (int u = 1; u <= umax && 2 * u <= n; u++) {
        for (int tp = 0; tp <= ROLL_MAX_PEEL * ROLL_MAX_PEEL + ROLL_MAX_PEEL; tp++) {
            /* p peeled in front, q after: small totals first */
            int p = (n - tp / (ROLL_MAX_PEEL + 1)) % u + tp % (ROLL_MAX_PEEL + 1) * u;
            int q = tp / (ROLL_MAX_PEEL + 1);
            if (p + q + 2 * u > n || (n - p - q) % u || (l->dynamic && (q > 1 || p > ROLL_DYN_MAX_PEEL)))
                continue;
            int R = (n - p - q) / u;
            roll_plan_free(pl);
            int len = st[p + u] - st[p];
            pl->sb = malloc(sizeof *pl->sb * ((size_t)R + 1));
            pl->wstep = calloc((size_t)len + 1, sizeof *pl->wstep);
            pl->sstep = calloc((size_t)len + 1, sizeof *pl->sstep);
            pl->dstep = calloc((size_t)len + 1, sizeof *pl->dstep);
            if (!pl->sb || !pl->wstep || !pl->sstep || !pl->dstep)
                goto oom;
            for (int j = 0; j <= R; j++)
                pl->sb[j] = st[p + j * u];
            const char *w = congruent(b, pl->sb, R, pl);
            if (!w) {
                pl->loop = i, pl->p = p, pl->n = n, pl->u = u, pl->R = R;
                pl->s0 = pl->sb[0], pl->s1 = pl->sb[1], pl->end = pl->sb[R];
                if (l->dynamic)
                    pl->end = st[n];   /* a dropped last template iteration with it */
                pl->dyn = l->dynamic;
                for (int j = 0; l->dynamic && j <= p; j++)
                    pl->pst[j] = st[j];
                free(st);
                return NULL;
            }
            if (rank(w) > rank(why))
                why = w;   /* report the most specific reason */
        }
    }
    roll_plan_free(pl);
    free(st);
    return why;
oom:
    roll_plan_free(pl);
    free(st);
    *rc = tpb_errf(err, "out of memory rolling loops");
    return NULL;
}

/* A loop nested in rolled loop c moves with c's iterations the same way in
 * each of its own rolled iterations (else its body cannot be shared). */
static bool steps_agree(const roll_plan_t *c, const roll_plan_t *q)
{
    int len = q->s1 - q->s0;
    for (int j = 1; j < q->R; j++)
        for (int t = 0; t < len; t++) {
            int a = q->s0 + t - c->s0, x = q->sb[j] + t - c->s0;
            if (c->wstep[a] != c->wstep[x] || c->sstep[a] != c->sstep[x] ||
                c->dstep[a] != c->dstep[x])
                return false;
        }
    return true;
}

/* First instruction of a plan's emitted region (a dynamic loop's guarded
 * peeled iterations belong to it). */
static int roll_start(const roll_plan_t *p) { return p->dyn ? p->pst[0] : p->s0; }

static int by_start(const void *a, const void *b)
{
    const roll_plan_t *x = a, *y = b;
    int sx = roll_start(x), sy = roll_start(y);
    return sx != sy ? (sx < sy ? -1 : 1) : x->depth - y->depth;
}

static void note(enc_stats_t *st, const char *path, const char *why)
{
    st->roll_failed++;
    if (!st->roll_note[0])
        snprintf(st->roll_note, sizeof st->roll_note, "%s: %s", path, why);
}

int roll_loops(bir_module_t *m, const tir_kernel_t *k, const unsigned char *cand,
               enc_stats_t *st, tpb_err_t *err)
{
    bir_block_t *b = bir_main_block(m);
    if (!cand || !k->nloops)
        return 0;
    roll_plan_t *P = calloc((size_t)k->nloops, sizeof *P);
    int np = 0, rc = -1;
    if (!P) {
        tpb_errf(err, "out of memory rolling loops");
        goto out;
    }
    int ndyn = 0;
    for (int i = 0; i < k->nloops; i++) {
        if (k->loops[i].dynamic && ++ndyn > 1) {
            tpb_errf(err, "%s: only one dynamic_range / fori_loop / while_loop loop per kernel",
                     k->loops[i].path);
            goto out;
        }
        /* a dynamic loop is always a candidate unless its body has no
         * instruction: an empty dynamic_range does nothing, an empty
         * while_loop never changes its condition (runs forever if set) */
        if (k->loops[i].dyn_while && !cand[i]) {
            tpb_errf(err, "%s: while_loop: the body does not set the condition register (it "
                     "has no instruction: a non-zero condition would loop forever)",
                     k->loops[i].path);
            goto out;
        }
    }
    if (!eff_sorted(b)) {
        if (ndyn) {
            tpb_errf(err, "dynamic_range: the scheduled instructions are not in op order");
            goto out;
        }
        note(st, k->loops[0].path, "instructions are not in op order");
        rc = 0;
        goto out;
    }
    for (int i = 0; i < k->nloops; i++) {
        const tir_loop_t *l = &k->loops[i];
        if (!cand[i])
            continue;
        int lo = first_at(b, k->loop_marks[l->first]);
        int hi = first_at(b, k->loop_marks[l->first + l->trips]);
        /* the innermost accepted plan whose rolled body holds it; an
         * instance in a dropped iteration disappears with it */
        int par = -1;
        bool dropped = false;
        for (int q = 0; q < np; q++) {
            if (lo >= P[q].s0 && hi <= P[q].s1 && (par < 0 || P[q].depth > P[par].depth))
                par = q;
            dropped |= lo >= P[q].s1 && hi <= P[q].end;
        }
        if (dropped)
            continue;
        roll_plan_t pl = {0};
        int prc = 0;
        const char *why = plan_loop(b, k, i, &pl, err, &prc);
        if (prc)
            goto out;
        if (!why && par >= 0 && P[par].depth + 1 >= ROLL_MAXD)
            why = "rolled loops nested too deep";
        for (int q = par; !why && q >= 0; q = P[q].parent)
            if (!steps_agree(&P[q], &pl))
                why = "its iterations move differently with an enclosing rolled loop";
        for (int q = 0; !why && q < np; q++)
            if (q != par && roll_start(&pl) < P[q].end && roll_start(&P[q]) < pl.end &&
                !(roll_start(&pl) >= P[q].s0 && pl.end <= P[q].s1))
                why = "it overlaps a rolled loop";
        if (why && l->dynamic) {
            roll_plan_free(&pl);
            tpb_errf(err, "%s: %s: the loop body cannot be emitted as one loop: %s",
                     l->path, dyn_name(l), why);
            goto out;
        }
        if (why) {
            roll_plan_free(&pl);
            note(st, l->path, why);
            bool outer = false;
            for (int q = l->parent; q >= 0; q = k->loops[q].parent)
                outer |= cand[q] != 0;
            if (l->roll == 1 && !outer) {
                tpb_errf(err, "%s: \"roll\": true, but the loop cannot be rolled: %s", l->path,
                         why);
                goto out;
            }
            continue;
        }
        pl.parent = par;
        pl.depth = par >= 0 ? P[par].depth + 1 : 0;
        P[np++] = pl;
    }
    if (np) {
        /* sort by position (an instance in a peeled iteration of a rolled
         * loop comes before it); parent links follow through the sort */
        int *where = malloc(sizeof *where * (size_t)np), *opar = malloc(sizeof *opar * (size_t)np);
        if (!where || !opar) {
            free(where);
            free(opar);
            tpb_errf(err, "out of memory rolling loops");
            goto out;
        }
        for (int q = 0; q < np; q++)
            opar[q] = P[q].parent, P[q].parent = q;
        qsort(P, (size_t)np, sizeof *P, by_start);
        for (int q = 0; q < np; q++)
            where[P[q].parent] = q;
        for (int q = 0; q < np; q++) {
            int o = opar[P[q].parent];
            P[q].parent = o >= 0 ? where[o] : -1;
        }
        free(where);
        free(opar);
        const char *why = NULL;
        int erc = roll_emit(m, k, P, np, &why, err);
        if (erc < 0)
            goto out;
        for (int q = 0; erc > 0 && q < np; q++)
            if (P[q].dyn) {
                tpb_errf(err, "%s: %s: the loop body cannot be emitted as one loop: %s",
                         k->loops[P[q].loop].path, dyn_name(&k->loops[P[q].loop]), why);
                goto out;
            }
        if (erc > 0) {
            note(st, k->loops[P[0].loop].path, why);
            rc = 0;
            goto out;
        }
        st->rolled += (unsigned)np;
    }
    rc = 0;
out:
    for (int q = 0; q < np; q++)
        roll_plan_free(&P[q]);
    free(P);
    return rc;
}
