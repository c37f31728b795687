/* fj_schedule.c - the scheduling hints of a kernel file (docs/kernel-format.md
 * "Scheduling"): NKI's `kernel.with_schedule([(a, b), ...])` (the top-level
 * "schedule"), the per-op "schedule" field (the notes' `schedule` argument of
 * load/store/...: the names this op is scheduled after) and NKI's
 * `no_reorder` blocks.
 *
 * Each hint is an edge "op A runs after op B".  Once the body has been
 * unrolled the edges are resolved (a name means every op of that name) and
 * applied to the program order: an edge whose A comes first in program
 * order moves A, with every op between A and B that must stay after A (a
 * memory conflict, an explicit dep or another edge), to just after B;
 * nothing else moves.  Then every edge becomes an explicit dependency of
 * A on B, which the scheduler turns into a semaphore wait when A and B run
 * on different engines or one of them is a DMA (docs/compiler.md). */
#include "fj.h"

#include <stdlib.h>
#include <string.h>


#define SCHED_MAX_WINDOW 20000    /* ops between the two ends of one moving edge */

/* ---- collecting the edges while the body runs ---- */

static int add_ref(jx_t *j, int op, int before, const char *name)
{
    fj_sched_t *s = &j->sched;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 32;
        fj_sched_ref_t *r = realloc(s->refs, (size_t)cap * sizeof *r);
        if (!r)
            return -1;
        s->refs = r;
        s->cap = cap;
    }
    s->refs[s->n++] = (fj_sched_ref_t){op, before, name};
    return 0;
}

int fj_sched_op(jx_t *j, const cJSON *o, const char *path, int n0)
{
    tir_kernel_t *k = j->b.k;
    const cJSON *sc = fj_field(o, "schedule");
    if (sc) {
        int n = cJSON_IsString(sc) ? 1 : cJSON_IsArray(sc) ? cJSON_GetArraySize(sc) : -1;
        if (n < 1)
            return fj_jfail(j, path, "schedule", "expected an op name or a list of op names");
        for (int d = 0; d < n; d++) {
            const cJSON *e = cJSON_IsString(sc) ? sc : cJSON_GetArrayItem(sc, d);
            if (!cJSON_IsString(e))
                return fj_jfail(j, path, "schedule", "entry %d is not an op name", d);
            const char *nm = tir_intern(k, e->valuestring);
            for (int i = n0; i < k->nops; i++)
                if (!nm || add_ref(j, i, -1, nm))
                    return fj_jfail(j, path, "schedule", "out of memory");
        }
    }
    return fj_sched_chain(j, path, n0);
}

int fj_sched_chain(jx_t *j, const char *path, int n0)
{
    tir_kernel_t *k = j->b.k;
    /* no_reorder: every op after the block's previous op */
    if (j->sched.depth > 0)
        for (int i = n0; i < k->nops; i++) {
            if (j->sched.last >= 0 && add_ref(j, i, j->sched.last, NULL))
                return fj_jfail(j, path, NULL, "out of memory");
            j->sched.last = i;
        }
    return 0;
}

/* ---- the op's memory footprint, for "must stay after" ---- */

static bool is_barrier(const tir_op_t *op)
{
    switch (op->kind) {
    case TIR_LOAD_TENSOR_TO_REGISTER: case TIR_CORE_BARRIER: case TIR_SENDRECV:
    case TIR_ALL_REDUCE: case TIR_ALL_GATHER: case TIR_REDUCE_SCATTER: case TIR_ALL_TO_ALL:
    case TIR_COLLECTIVE_PERMUTE: case TIR_RANK_ID: case TIR_RNG: case TIR_RAND2:
    case TIR_RAND_GET_STATE: case TIR_RAND_SET_STATE: case TIR_SET_RNG_SEED: case TIR_DROPOUT:
    case TIR_REGISTER_MOVE: case TIR_REGISTER_STORE: case TIR_COLL_SYNC: case TIR_INLINE_ASM:
    case TIR_INLINE_ASM_BYTES: case TIR_EXPONENTIAL:
        return true;
    default:
        return (op->flags & TIR_F_RANDOM) || op->rare->src_reg >= 0 || op->rare->dst_reg >= 0 ||
               op->rare->s0_reg >= 0 || op->rare->remote_core >= 0 || op->rare->sync_sem >= 0;
    }
}

static bool conflict(tir_op_t *a, tir_op_t *b)
{
    if (is_barrier(a) || is_barrier(b))
        return true;
    const tir_ap_t *ra[TIR_MAX_READ_APS], *rb[TIR_MAX_READ_APS];
    const tir_ap_t *wa[2] = {a->dst, a->dst2}, *wb[2] = {b->dst, b->dst2};
    int nwa = 2, nwb = 2;
    int nra = tir_op_read_aps(a, ra), nrb = tir_op_read_aps(b, rb);
    for (int x = 0; x < nwa; x++) {
        for (int y = 0; y < nwb; y++)
            if (tir_ap_overlap(NULL, wa[x], wb[y]))
                return true;
        for (int y = 0; y < nrb; y++)
            if (tir_ap_overlap(NULL, wa[x], rb[y]))
                return true;
    }
    for (int x = 0; x < nwb; x++)
        for (int y = 0; y < nra; y++)
            if (tir_ap_overlap(NULL, wb[x], ra[y]))
                return true;
    return false;
}

/* ---- applying the edges ---- */

typedef struct {
    int after, before;            /* op ids (original indices) */
} edge_t;

typedef struct {
    tir_kernel_t *k;
    edge_t *e;
    int ne;
    int *order;                   /* position -> op id */
    int *pos;                     /* op id -> position */
    int *first_edge;              /* per op id: edges sorted by `after` */
    bool *in_s;
} sched_ctx_t;

static int cmp_edge(const void *x, const void *y)
{
    const edge_t *a = x, *b = y;
    return a->after != b->after ? (a->after > b->after) - (a->after < b->after)
                                : (a->before > b->before) - (a->before < b->before);
}

/* op id x must stay after some op of S (memory, deps, edges) */
static bool joins(const sched_ctx_t *c, int x, const int *s, int ns)
{
    tir_op_t *op = &c->k->ops[x];
    for (int d = 0; d < op->rare->ndeps; d++)
        if (op->rare->deps[d] >= 0 && c->in_s[op->rare->deps[d]])
            return true;
    for (int q = c->first_edge[x]; q < c->first_edge[x + 1]; q++)
        if (c->in_s[c->e[q].before])
            return true;
    for (int i = 0; i < ns; i++)
        if (conflict(&c->k->ops[s[i]], op))
            return true;
    return false;
}

static int fail_edge(jx_t *j, const sched_ctx_t *c, const edge_t *e, const char *why)
{
    const tir_op_t *a = &c->k->ops[e->after], *b = &c->k->ops[e->before];
    return fj_jfail(j, a->path[0] ? a->path : "(top level)", "schedule",
                    "'%s' cannot run after '%s' (%s): %s", a->name, b->name,
                    b->path[0] ? b->path : "?", why);
}

/* Loops whose iteration boundaries lie inside the moved window no longer
 * have iterations that are runs of ops: they stay unrolled. */
static int unroll_loops_in(jx_t *j, const sched_ctx_t *c, int lo, int hi, const edge_t *e)
{
    tir_kernel_t *k = c->k;
    for (int l = 0; l < k->nloops; l++) {
        tir_loop_t *lp = &k->loops[l];
        for (int64_t t = 0; t <= lp->trips; t++) {
            int m = k->loop_marks[lp->first + t];
            if (m <= lo || m > hi)
                continue;
            if (lp->dynamic || lp->roll == 1)
                return fail_edge(j, c, e, lp->dynamic ? "the move crosses iterations of a "
                                 "dynamic loop" : "the move crosses iterations of a loop with "
                                 "\"roll\": true");
            lp->roll = 0;
            break;
        }
    }
    return 0;
}

/* A comes before B: move A and what must follow it in (A, B] to after B. */
static int sink(jx_t *j, sched_ctx_t *c, const edge_t *e)
{
    int lo = c->pos[e->after], hi = c->pos[e->before];
    if (hi - lo > SCHED_MAX_WINDOW)
        return fail_edge(j, c, e, "more than 20000 ops lie between them");
    int w = hi - lo + 1;
    int *s = malloc((size_t)w * sizeof *s), *rest = malloc((size_t)w * sizeof *rest);
    if (!s || !rest) {
        free(s);
        free(rest);
        return fj_jfail(j, "(top level)", "schedule", "out of memory");
    }
    int ns = 0, nrest = 0, rc = 0;
    s[ns++] = e->after;
    c->in_s[e->after] = true;
    for (int p = lo + 1; p <= hi; p++) {
        int x = c->order[p];
        if (joins(c, x, s, ns)) {
            s[ns++] = x;
            c->in_s[x] = true;
        } else {
            rest[nrest++] = x;
        }
    }
    if (c->in_s[e->before])
        rc = fail_edge(j, c, e, "it depends on it through memory, deps or another schedule edge");
    for (int i = 0; i < ns; i++)
        c->in_s[s[i]] = false;
    if (!rc)
        rc = unroll_loops_in(j, c, lo, hi, e);
    if (!rc) {
        memcpy(c->order + lo, rest, (size_t)nrest * sizeof *rest);
        memcpy(c->order + lo + nrest, s, (size_t)ns * sizeof *s);
        for (int p = lo; p <= hi; p++)
            c->pos[c->order[p]] = p;
    }
    free(s);
    free(rest);
    return rc;
}

/* the kernel's "schedule": [[a, b], [a, [b, c]], ...] */
static int parse_pairs(jx_t *j, const cJSON *root)
{
    const cJSON *sc = fj_field(root, "schedule");
    if (!sc)
        return 0;
    if (!cJSON_IsArray(sc))
        return fj_jfail(j, "(top level)", "schedule", "expected a list of [op name, op name "
                        "or list of op names] pairs");
    int idx = 0;
    for (const cJSON *p = sc->child; p; p = p->next, idx++) {
        const cJSON *a = cJSON_GetArrayItem(p, 0), *b = cJSON_GetArrayItem(p, 1);
        if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 2 || !cJSON_IsString(a) ||
            !(cJSON_IsString(b) || cJSON_IsArray(b)))
            return fj_jfail(j, "(top level)", "schedule", "entry %d: expected [op name, op name "
                            "or list of op names]", idx);
        int nb = cJSON_IsString(b) ? 1 : cJSON_GetArraySize(b);
        for (int q = 0; q < nb; q++) {
            const cJSON *bq = cJSON_IsString(b) ? b : cJSON_GetArrayItem(b, q);
            if (!cJSON_IsString(bq))
                return fj_jfail(j, "(top level)", "schedule", "entry %d: item %d is not an op "
                                "name", idx, q);
            /* a marker ref: op -1 means "every op named a" (resolved below) */
            const char *na = tir_intern(j->b.k, a->valuestring);
            const char *nb_ = tir_intern(j->b.k, bq->valuestring);
            if (!na || !nb_ || add_ref(j, -1, -1, na) || add_ref(j, -1, -1, nb_))
                return fj_jfail(j, "(top level)", "schedule", "out of memory");
        }
    }
    return 0;
}

static int push_edge(sched_ctx_t *c, int *cap, int after, int before)
{
    if (c->ne == *cap) {
        int n = *cap ? 2 * *cap : 64;
        edge_t *e = realloc(c->e, (size_t)n * sizeof *e);
        if (!e)
            return -1;
        c->e = e;
        *cap = n;
    }
    c->e[c->ne++] = (edge_t){after, before};
    return 0;
}

/* every op named `name` (ids, in program order); 0 found = error */
static int named(const tir_kernel_t *k, const char *name, int **out, int *n)
{
    *n = 0;
    for (int i = 0; i < k->nops; i++)
        if (!strcmp(k->ops[i].name, name)) {
            int *p = realloc(*out, (size_t)(*n + 1) * sizeof *p);
            if (!p)
                return -1;
            *out = p;
            (*out)[(*n)++] = i;
        }
    return 0;
}

static int resolve(jx_t *j, sched_ctx_t *c)
{
    tir_kernel_t *k = j->b.k;
    fj_sched_t *s = &j->sched;
    int cap = 0, *ida = NULL, *idb = NULL, na = 0, nb = 0, rc = 0;
    for (int r = 0; r < s->n && !rc; r++) {
        const fj_sched_ref_t *f = &s->refs[r];
        if (f->op >= 0 && f->before >= 0) {   /* no_reorder chain */
            if (push_edge(c, &cap, f->op, f->before))
                rc = fj_jfail(j, "(top level)", "schedule", "out of memory");
            continue;
        }
        const fj_sched_ref_t *g = f->op < 0 ? &s->refs[++r] : NULL;   /* a top-level pair */
        const char *bname = g ? g->name : f->name;
        if (named(k, bname, &idb, &nb) || (g && named(k, f->name, &ida, &na))) {
            rc = fj_jfail(j, "(top level)", "schedule", "out of memory");
            break;
        }
        if (!nb || (g && !na)) {
            const char *p = g ? "" : k->ops[f->op].path;
            rc = fj_jfail(j, p[0] ? p : "(top level)", "schedule", "no op named '%s'",
                          !nb ? bname : f->name);
            break;
        }
        int nafter = g ? na : 1;
        for (int x = 0; x < nafter && !rc; x++) {
            int a = g ? ida[x] : f->op;
            for (int y = 0; y < nb && !rc; y++) {
                if (a == idb[y])
                    rc = fj_jfail(j, k->ops[a].path[0] ? k->ops[a].path : "(top level)",
                                  "schedule", "'%s' cannot be scheduled after itself",
                                  k->ops[a].name);
                else if (push_edge(c, &cap, a, idb[y]))
                    rc = fj_jfail(j, "(top level)", "schedule", "out of memory");
            }
        }
    }
    free(ida);
    free(idb);
    return rc;
}

/* append dep `who` to op (once); -1 when it would need a fifth, -2 out of
 * memory */
static int add_dep(tir_kernel_t *k, tir_op_t *op, int who)
{
    int n = op->rare->ndeps, deps[4];
    for (int d = 0; d < n; d++)
        if (op->rare->deps[d] == who)
            return 0;
    if (n >= 4)
        return -1;
    memcpy(deps, op->rare->deps, (size_t)n * sizeof *deps);
    deps[n++] = who;
    return tir_op_set_deps(k, op, deps, n) ? -2 : 0;
}

/* the edges as explicit deps of the reordered kernel */
static int edges_to_deps(jx_t *j, sched_ctx_t *c)
{
    tir_kernel_t *k = c->k;
    for (int q = 0; q < c->ne; q++) {
        tir_op_t *a = &k->ops[c->e[q].after];
        int b = c->e[q].before;
        int rc = 0;
        if (k->ops[b].kind == TIR_NOOP) {   /* a noop emits nothing: its deps stand in */
            for (int d = 0; d < k->ops[b].rare->ndeps && !rc; d++)
                rc = add_dep(k, a, k->ops[b].rare->deps[d]);
        } else {
            rc = add_dep(k, a, b);
        }
        if (!rc)
            continue;
        if (rc == -2)
            return fj_jfail(j, "(top level)", "schedule", "out of memory");
        return fj_jfail(j, a->path[0] ? a->path : "(top level)", "schedule",
                        "'%s' would wait for more than 4 ops (deps and schedule edges)", a->name);
    }
    return 0;
}

static int permute(jx_t *j, sched_ctx_t *c)
{
    tir_kernel_t *k = c->k;
    tir_op_t *ops = malloc((size_t)k->nops * sizeof *ops);
    if (!ops)
        return fj_jfail(j, "(top level)", "schedule", "out of memory");
    for (int p = 0; p < k->nops; p++) {
        ops[p] = k->ops[c->order[p]];
        int n = ops[p].rare->ndeps, deps[4];
        for (int d = 0; d < n; d++) {
            int o = ops[p].rare->deps[d];
            deps[d] = o >= 0 ? c->pos[o] : o;
        }
        if (n && tir_op_set_deps(k, &ops[p], deps, n)) {
            free(ops);
            return fj_jfail(j, "(top level)", "schedule", "out of memory");
        }
    }
    /* loop boundaries stay: a loop whose boundaries a move crossed is
     * unrolled (roll 0, unroll_loops_in), no op crossed the others' */
    memcpy(k->ops, ops, (size_t)k->nops * sizeof *ops);
    free(ops);
    return 0;
}

int fj_sched_apply(jx_t *j, const cJSON *root)
{
    if (parse_pairs(j, root))
        return -1;
    if (!j->sched.n)
        return 0;
    tir_kernel_t *k = j->b.k;
    sched_ctx_t c = {.k = k};
    int n = k->nops, rc = -1;
    c.order = malloc((size_t)n * sizeof *c.order);
    c.pos = malloc((size_t)n * sizeof *c.pos);
    c.first_edge = calloc((size_t)n + 1, sizeof *c.first_edge);
    c.in_s = calloc((size_t)n, sizeof *c.in_s);
    if (!c.order || !c.pos || !c.first_edge || !c.in_s) {
        fj_jfail(j, "(top level)", "schedule", "out of memory");
        goto out;
    }
    if (resolve(j, &c))
        goto out;
    qsort(c.e, (size_t)c.ne, sizeof *c.e, cmp_edge);
    for (int q = 0; q < c.ne; q++)
        c.first_edge[c.e[q].after + 1]++;
    for (int i = 0; i < n; i++)
        c.first_edge[i + 1] += c.first_edge[i];
    for (int i = 0; i < n; i++)
        c.order[i] = c.pos[i] = i;
    /* each move settles one edge and keeps every settled edge settled (what
     * must follow the moved op moves with it), so ne rounds suffice; a
     * cycle of edges is refused by sink() when it closes */
    bool moved = true;
    for (int round = 0; moved && round <= c.ne; round++) {
        moved = false;
        for (int q = 0; q < c.ne; q++)
            if (c.pos[c.e[q].after] < c.pos[c.e[q].before]) {
                if (sink(j, &c, &c.e[q]))
                    goto out;
                moved = true;
            }
    }
    if (moved) {
        fj_jfail(j, "(top level)", "schedule", "the schedule edges form a cycle");
        goto out;
    }
    if (edges_to_deps(j, &c) || permute(j, &c))
        goto out;
    rc = 0;
out:
    free(c.e);
    free(c.order);
    free(c.pos);
    free(c.first_edge);
    free(c.in_s);
    return rc;
}
