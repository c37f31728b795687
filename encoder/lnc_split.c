/* lnc_split.c - multi-core split (1 -> N): per-core tile-IR kernels and
 * per-core modules, plus module building helpers and the reader that turns
 * a compiled core directory back into a module for the linker.
 * See lnc.h and docs/multicore.md. */
#include "lnc.h"
#include "collective.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "fileio.h"
#include "lower.h"
#include "sidecar_form.h"

/* ---- module building ---- */

const char *lnc_mkind_name(lnc_mkind_t k)
{
    static const char *const n[] = {"local", "input", "output", "constant", "scratch",
                                    "intermediate"};
    return (unsigned)k < sizeof n / sizeof n[0] ? n[k] : "?";
}

void lnc_module_init(lnc_module_t *m, const char *name, int core)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name ? name : "");
    m->core = core;
    m->ncores = 1;
}

void lnc_module_free(lnc_module_t *m)
{
    for (int f = 0; f < m->nfuncs; f++) {
        for (int b = 0; b < m->funcs[f].nblocks; b++)
            free(m->funcs[f].blocks[b].insts);
        free(m->funcs[f].blocks);
        for (int k = 0; k < m->funcs[f].ninsts; k++)
            free(m->funcs[f].insts[k].args);
        free(m->funcs[f].insts);
        free(m->funcs[f].params);
    }
    free(m->funcs);
    free(m->mlocs);
    free(m->queues);
    free(m->sems);
    free(m->aliases);
    memset(m, 0, sizeof *m);
}

static void *grow(void *p, int n, size_t size, tpb_err_t *err)
{
    /* every array grows one element at a time through here: amortise by
     * reallocating at powers of two */
    if (n & (n - 1))
        return p;
    void *q = realloc(p, (size_t)(n ? 2 * n : 1) * size);
    if (!q)
        tpb_errf(err, "out of memory (multi-core link)");
    return q;
}

int lnc_add_func(lnc_module_t *m, const char *name, int core, tpb_err_t *err)
{
    lnc_func_t *f = grow(m->funcs, m->nfuncs, sizeof *f, err);
    if (!f)
        return -1;
    m->funcs = f;
    f = &m->funcs[m->nfuncs];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->core = core;
    return m->nfuncs++;
}

lnc_block_t *lnc_func_block(lnc_module_t *m, int fi, int engine, const char *name, tpb_err_t *err)
{
    lnc_func_t *f = &m->funcs[fi];
    for (int b = 0; b < f->nblocks; b++)
        if (f->blocks[b].engine == engine)
            return &f->blocks[b];
    lnc_block_t *bl = grow(f->blocks, f->nblocks, sizeof *bl, err);
    if (!bl)
        return NULL;
    f->blocks = bl;
    bl = &f->blocks[f->nblocks++];
    memset(bl, 0, sizeof *bl);
    snprintf(bl->name, sizeof bl->name, "%s", name);
    bl->engine = engine;
    return bl;
}

int lnc_block_append(lnc_block_t *b, const lnc_inst_t *in, tpb_err_t *err)
{
    if (b->n == b->cap) {
        int nc = b->cap ? b->cap * 2 : 16;
        lnc_inst_t *p = realloc(b->insts, (size_t)nc * sizeof *p);
        if (!p)
            return tpb_errf(err, "out of memory (multi-core link)");
        b->insts = p;
        b->cap = nc;
    }
    b->insts[b->n] = *in;
    return b->n++;
}

int lnc_add_mloc(lnc_module_t *m, const lnc_mloc_t *ml, tpb_err_t *err)
{
    lnc_mloc_t *p = grow(m->mlocs, m->nmlocs, sizeof *p, err);
    if (!p)
        return -1;
    m->mlocs = p;
    m->mlocs[m->nmlocs] = *ml;
    return m->nmlocs++;
}

int lnc_find_mloc(const lnc_module_t *m, const char *name)
{
    for (int i = 0; i < m->nmlocs; i++)
        if (!strcmp(m->mlocs[i].name, name))
            return i;
    return -1;
}

void lnc_inst_init(lnc_inst_t *in, int opc, const char *name)
{
    memset(in, 0, sizeof *in);
    in->opc = opc;
    snprintf(in->name, sizeof in->name, "%s", name ? name : "");
    in->engine = -1;
    in->callee = in->queue = in->qinst = in->local_id = -1;
    in->call_core = -1;
    in->call_inst = 0;
    in->input_ap = -1;
}

/* ---- split ---- */

int lnc_core_of(const tir_kernel_t *progs, int pid)
{
    /* ops made by C callers carry the core; a program without ops (an idle
     * core's) has the front-end's record only */
    return progs[pid].nops > 0 ? progs[pid].ops[0].core : progs[pid].core;
}

static bool is_local(const tir_tensor_t *t)
{
    return t->kind == TIR_T_SBUF || t->kind == TIR_T_PSUM;
}

static void kernel_release(tir_kernel_t *k)
{
    /* tensors borrow constant data from the parsed programs; the ops'
     * operands are the core kernel's own (remap_op) */
    tir_array_free(k->tensors, k->cap_tensors, sizeof *k->tensors);
    tir_array_free(k->ops, k->cap_ops, sizeof *k->ops);
    tir_pools_free(k);
    memset(k, 0, sizeof *k);
}

void lnc_split_free(lnc_split_t *s)
{
    for (int c = 0; s->core_k && c < s->ncores; c++)
        kernel_release(&s->core_k[c]);
    for (int c = 0; s->core_m && c < s->ncores; c++)
        lnc_module_free(&s->core_m[c]);
    free(s->core_k);
    free(s->core_m);
    free(s->rlts);
    free(s->ident_data);
    memset(s, 0, sizeof *s);
}

/* Tensor list shared by every core's kernel: program 0's tensors, then one
 * copy of every local tile per extra program slot ("<name>@p<s>"), then the
 * collectives' receive tiles ("coll<j>.recv<k>").  Identical lists
 * let one HBM layout serve every core. */
typedef struct {
    int *slot_map;       /* [per_core * ntensors]: program-slot tensor index */
    int *coll_base;      /* [ncollectives]: first receive tile of each collective */
    int base;
    int ident_c, ident_sb;   /* PE-transpose identity: HBM constant, SBUF tile; -1 */
    /* programs that diverge on the program id (lnc_check_programs): program
     * p's tensor t is pmap[off[p] + t] (lnc_program_maps); NULL when uniform */
    int *off, *pmap;
} tmap_t;

static int add_identity(const tir_kernel_t *k0, void *data, tir_kernel_t *out, tmap_t *tm,
                        tpb_err_t *err)
{
    unsigned dt;
    tm->ident_c = tm->ident_sb = -1;
    if (!data || !enc_needs_identity(k0, &dt))
        return 0;
    tir_tensor_t c, sb;
    char names[2][TIR_NAME_LEN];   /* free in out: every core's list is the same */
    enc_identity_tensors(out, dt, data, &c, &sb, names);
    tm->ident_c = tir_add_tensor(out, &c);
    tm->ident_sb = tir_add_tensor(out, &sb);
    if (tm->ident_c < 0 || tm->ident_sb < 0)
        return tpb_errf(err, "out of memory (split)");
    return 0;
}

/* 128x128 identity in the transposed tensor's dtype (owned by the split). */
static void *identity_data(const tir_kernel_t *k0, tpb_err_t *err, int *rc)
{
    unsigned dt;
    *rc = 0;
    if (!enc_needs_identity(k0, &dt))
        return NULL;
    void *d = enc_identity_data(dt);
    if (!d)
        *rc = tpb_errf(err, "out of memory building the identity");
    return d;
}

/* The program whose PE transposes give the identity's dtype: program 0,
 * or the first that transposes when the programs diverge (they must agree
 * on the dtype); *rc -1 on a disagreement. */
static const tir_kernel_t *identity_program(const tir_kernel_t *progs, int n, bool uniform,
                                            tpb_err_t *err, int *rc)
{
    const tir_kernel_t *k = NULL;
    unsigned dt = 0, d;
    *rc = 0;
    for (int p = 0; p < n && !uniform; p++) {
        if (!enc_needs_identity(&progs[p], &d))
            continue;
        if (k && d != dt) {
            *rc = tpb_errf(err, "kernel '%s': programs %d and %d transpose on the PE in "
                                "different dtypes (%s, %s): one identity serves every program",
                           progs[0].name, (int)(k - progs), p, isa_dtype_name(dt),
                           isa_dtype_name(d));
            return NULL;
        }
        if (!k)
            k = &progs[p], dt = d;
    }
    return k ? k : &progs[0];
}

/* Receive tiles of the reductions ("coll<j>.recv<k>"), the same list on
 * every core. */
static int build_coll_temps(const tir_kernel_t *k0, tir_kernel_t *out, tmap_t *tm,
                            tpb_err_t *err)
{
    int j = 0;
    for (int o = 0; o < k0->nops; o++) {
        const tir_op_t *op = &k0->ops[o];
        if (!enc_is_collective(op->kind))
            continue;
        tm->coll_base[j] = out->ntensors;
        for (int t = 0; t < lnc_coll_ntemps(k0, op); t++) {
            tir_tensor_t tt;
            char name[TIR_NAME_LEN], path[TIR_PATH_LEN];   /* tir_add_tensor copies them */
            lnc_coll_temp(k0, op, j, t, &tt, name, path);
            if (tir_add_tensor(out, &tt) < 0)
                return tpb_errf(err, "out of memory (split)");
        }
        j++;
    }
    return 0;
}

static int build_tensors(const tir_kernel_t *progs, int nprog, bool uniform, int per_core,
                         tir_kernel_t *out, tmap_t *tm, tpb_err_t *err)
{
    const tir_kernel_t *k0 = &progs[0];
    tm->base = k0->ntensors;
    tm->slot_map = malloc((size_t)(per_core * k0->ntensors + 1) * sizeof(int));
    tm->coll_base = malloc((size_t)(k0->nops + 1) * sizeof(int));
    if (!tm->slot_map || !tm->coll_base)
        return tpb_errf(err, "out of memory (split)");
    if (!uniform)
        return lnc_program_maps(progs, nprog, out, &tm->off, &tm->pmap, err) ||
               build_coll_temps(k0, out, tm, err) ? -1 : 0;
    for (int t = 0; t < k0->ntensors; t++) {
        if (tir_add_tensor(out, &k0->tensors[t]) < 0)
            return tpb_errf(err, "out of memory (split)");
        tm->slot_map[t] = t;
    }
    for (int s = 1; s < per_core; s++)
        for (int t = 0; t < k0->ntensors; t++) {
            tm->slot_map[s * k0->ntensors + t] = t;
            if (!is_local(&k0->tensors[t]))
                continue;
            tir_tensor_t c = k0->tensors[t];
            char name[TIR_NAME_LEN];   /* tir_add_tensor copies it */
            lnc_copy_name(name, k0->tensors[t].name, 50, 'p', s, out->ntensors);
            c.name = name;
            int i = tir_add_tensor(out, &c);
            if (i < 0)
                return tpb_errf(err, "out of memory (split)");
            tm->slot_map[s * k0->ntensors + t] = i;
        }
    return build_coll_temps(k0, out, tm, err);
}

/* Core c runs no op: every program placed on it is empty (its control
 * flow on the program id skipped every op), so the core stays idle. */
static bool core_idle(const tir_kernel_t *progs, int n, int c)
{
    for (int p = 0; p < n; p++)
        if (progs[p].nops > 0 && lnc_core_of(progs, p) == c)
            return false;
    return true;
}

/* The identity for the core's PE transposes (none on an idle core). */
static int load_identity(tir_kernel_t *k, const tmap_t *tm, const tir_kernel_t *progs, int n,
                         int core, tpb_err_t *err)
{
    if (tm->ident_c < 0 || core_idle(progs, n, core))
        return 0;
    tir_op_t ld;
    if (enc_identity_load(k, tm->ident_c, tm->ident_sb, &ld))
        return tpb_errf(err, "out of memory (split)");
    ld.core = core;
    if (tir_add_op(k, &ld) < 0)
        return tpb_errf(err, "out of memory (split)");
    return 0;
}

/* Where a program's tensors land in the core kernels: map[t] for its
 * tensors 0..n-1. */
typedef struct {
    const int *map;
    int n;
} pmap_t;

/* The op's operands re-interned into core kernel k (the program kernels'
 * pools may be freed first), tensors renumbered by m (NULL: kept); -1 on
 * out-of-memory. */
static int remap_ap(tir_kernel_t *k, const tir_ap_t **opnd, const pmap_t *m)
{
    tir_ap_t ap = **opnd;
    if (m && ap.tensor >= 0 && ap.tensor < m->n)
        ap.tensor = m->map[ap.tensor];
    return (*opnd = tir_ap_intern(k, &ap)) ? 0 : -1;
}

static int remap_op(tir_kernel_t *k, tir_op_t *op, const pmap_t *m)
{
    int rc = remap_ap(k, &op->dst, m) | remap_ap(k, &op->dst2, m);
    for (int i = 0; i < 4; i++)
        rc |= remap_ap(k, &op->src[i], m);
    rc |= remap_ap(k, &op->index, m) | remap_ap(k, &op->bias, m);
    rc |= remap_ap(k, &op->s0.ap, op->s0.is_ap ? m : NULL);
    rc |= remap_ap(k, &op->s1.ap, op->s1.is_ap ? m : NULL);
    return rc;
}

/* Program p's map: its slot's copies when the programs are uniform. */
static pmap_t program_map(const tmap_t *tm, const tir_kernel_t *progs, int p, int slot)
{
    if (tm->pmap)
        return (pmap_t){tm->pmap + tm->off[p], progs[p].ntensors};
    return (pmap_t){tm->slot_map + slot * tm->base, tm->base};
}

/* Every instruction of a launch-grid instance carries the instance id:
 * "i<pid>:<name>" (docs/multicore.md, placement). */
static int instance_name(tir_kernel_t *k, tir_op_t *op, int pid)
{
    char n[TIR_NAME_LEN + 16];
    snprintf(n, sizeof n, "i%d:%s", pid, op->name);
    return (op->name = tir_name(k, n)) ? 0 : -1;   /* k's copy, cut to TIR_NAME_LEN - 1 */
}

typedef struct {
    tir_kernel_t *k;
    int core, ncores;
    int barrier;         /* next core-local barrier id */
    int sendrecv;        /* next sendrecv index */
    int coll;            /* next collective index */
    const tmap_t *tm;
    const tir_kernel_t *progs;
    int nprog;
    lnc_coll_sync_t sync;  /* collective semaphore counts of this core */
    const int *xop;      /* [nprog * nx]: op index of each program's j-th exchange */
    int nx, x;           /* sendrecvs + collectives per program; the next one */
} emit_ctx_t;

/* *out = program p's op at this core's current exchange (sendrecv or
 * collective), its tensors numbered as in the core kernels (diverging
 * programs: by p's own map; uniform ones share slot 0's numbering).  -1
 * on out-of-memory. */
static int exchange_op(emit_ctx_t *e, int p, tir_op_t *out)
{
    *out = e->progs[p].ops[e->xop[p * e->nx + e->x]];
    if (!e->tm->pmap)
        return 0;
    pmap_t m = program_map(e->tm, e->progs, p, 0);
    return remap_op(e->k, out, &m);
}

static int add(emit_ctx_t *e, const tir_op_t *op, tpb_err_t *err)
{
    if (tir_add_op(e->k, op) < 0)
        return tpb_errf(err, "out of memory (split)");
    return 0;
}

static int split_barrier(emit_ctx_t *e, tir_op_t *op, tpb_err_t *err)
{
    unsigned all = (1u << e->ncores) - 1;
    if (op->rare->barrier_cores & ~all)
        return tpb_errf(err, "op '%s' (%s): core_barrier names cores 0x%x but the kernel runs "
                             "on %d core(s)",
                        op->name, op->path, op->rare->barrier_cores, e->ncores);
    if (!(op->rare->barrier_cores & (1u << e->core)))
        return tpb_errf(err, "op '%s' (%s): core_barrier cores 0x%x do not include core %d, "
                             "which runs it",
                        op->name, op->path, op->rare->barrier_cores, e->core);
    tir_op_rare_t r = *op->rare;
    r.barrier_id = e->barrier++;
    if (!(op->rare = tir_rare_intern(e->k, &r)))
        return tpb_errf(err, "out of memory (split)");
    return add(e, op, err);
}

static int add_expanded(emit_ctx_t *e, const lnc_coll_in_t *in, tpb_err_t *err)
{
    tir_op_t out[LNC_COLL_MAX_OPS];
    int n = lnc_coll_expand(in, out, err);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (out[i].kind == TIR_CORE_BARRIER ? split_barrier(e, &out[i], err)
                                            : add(e, &out[i], err))
            return -1;
    return 0;
}

/* sendrecv -> a pair permute: wait for the peer's ready signal, pull the
 * peer's src tile straight from its SBUF into dst (the descriptor tells the
 * peer when it has been read), release src once the peer has read it. */
static int split_sendrecv(emit_ctx_t *e, const tir_op_t *op, tpb_err_t *err)
{
    int me = e->core, peer = op->rare->peer;
    if (peer < 0 || peer >= e->ncores || peer == me)
        return tpb_errf(err, "op '%s' (%s): sendrecv peer %d: must be another core of 0..%d",
                        op->name, op->path, peer, e->ncores - 1);
    if (peer != (me ^ 1))
        return tpb_errf(err, "op '%s' (%s): sendrecv exchanges between the two cores of an "
                             "LNC=2 pair: core %d's peer is core %d, not %d",
                        op->name, op->path, me, me ^ 1, peer);
    e->sendrecv++;
    tir_op_t pm[8];
    lnc_coll_in_t in;
    memset(&in, 0, sizeof in);
    in.k = e->k;
    in.sync = &e->sync;
    in.core = me;
    in.ncores = e->ncores;
    for (int p = 0; p < e->nprog; p++) {
        int c = lnc_core_of(e->progs, p);
        if (exchange_op(e, p, &pm[c]))
            return tpb_errf(err, "out of memory (split)");
        pm[c].kind = TIR_COLLECTIVE_PERMUTE;
        in.rank_op[c] = &pm[c];
    }
    pm[me] = *op;
    pm[me].kind = TIR_COLLECTIVE_PERMUTE;
    tir_op_rare_t pair = *op->rare;
    pair.perm_from[me] = (int8_t)peer;
    pair.perm_from[peer] = (int8_t)me;
    in.rank_op[me] = &pm[me];
    for (int c = 0; c < e->ncores; c++) {   /* the pair as every core sees it */
        tir_op_rare_t r = *pm[c].rare;
        memcpy(r.perm_from, pair.perm_from, sizeof r.perm_from);
        if (!(pm[c].rare = tir_rare_intern(e->k, &r)))
            return tpb_errf(err, "out of memory (split)");
    }
    return add_expanded(e, &in, err);
}

/* A collective -> semaphore signals and waits, pull DMAs and reductions
 * (lnc_collective.c);
 * every core's program supplies that core's operands (exchange_op). */
static int split_collective(emit_ctx_t *e, const tir_op_t *op, tpb_err_t *err)
{
    lnc_coll_in_t in;
    memset(&in, 0, sizeof in);
    in.k = e->k;
    in.sync = &e->sync;
    in.core = e->core;
    in.ncores = e->ncores;
    int base = e->tm->coll_base[e->coll++];
    int temps[8];
    for (int t = 0; t < 8; t++)
        temps[t] = base + t;
    in.temps = temps;
    tir_op_t ops[LNC_MAX_CORES];
    for (int p = 0; p < e->nprog; p++) {
        int c = lnc_core_of(e->progs, p);
        if (exchange_op(e, p, &ops[c]))
            return tpb_errf(err, "out of memory (split)");
        in.rank_op[c] = &ops[c];
    }
    in.rank_op[e->core] = op;
    return add_expanded(e, &in, err);
}

/* Which cores read / write each HBM tensor. */
static void access_masks(const tir_kernel_t *k, int core, unsigned *rd, unsigned *wr)
{
    for (int o = 0; o < k->nops; o++) {
        const tir_op_t *op = &k->ops[o];
        const tir_ap_t *w[] = {op->dst, op->dst2};
        const tir_ap_t *r[] = {op->src[0], op->src[1], op->src[2], op->src[3], op->index,
                               op->bias, op->s0.is_ap ? op->s0.ap : NULL,
                               op->s1.is_ap ? op->s1.ap : NULL};
        for (int i = 0; i < 2; i++)
            if (w[i]->tensor >= 0)
                wr[w[i]->tensor] |= 1u << core;
        for (int i = 0; i < 8; i++)
            if (r[i] && r[i]->tensor >= 0 && (i < op->nsrc || i >= 4))
                rd[r[i]->tensor] |= 1u << core;
        if (op->flags & TIR_F_RMW_ADD && op->dst->tensor >= 0)
            rd[op->dst->tensor] |= 1u << core;
    }
}

static lnc_mkind_t kernel_kind(tir_tensor_kind_t k)
{
    switch (k) {
    case TIR_T_INPUT: return LNC_ML_INPUT;
    case TIR_T_OUTPUT: return LNC_ML_OUTPUT;
    case TIR_T_CONSTANT: return LNC_ML_CONSTANT;
    case TIR_T_SCRATCH: return LNC_ML_SCRATCH;
    default: return LNC_ML_LOCAL;
    }
}

/* The per-core module: NeuronCoreId attribute, the memory locations this
 * core touches (locals renamed "nc<c>.<name>"), remote-local targets. */
static int build_core_module(lnc_split_t *s, int c, const unsigned *rd, const unsigned *wr,
                             tpb_err_t *err)
{
    const tir_kernel_t *k = &s->core_k[c];
    lnc_module_t *m = &s->core_m[c];
    lnc_module_init(m, k->name, c);
    m->ncores = s->ncores;
    unsigned me = 1u << c;
    for (int t = 0; t < k->ntensors; t++) {
        const tir_tensor_t *tt = &k->tensors[t];
        if (!((rd[t] | wr[t]) & me))
            continue;   /* pruned: another core's */
        lnc_mloc_t ml;
        memset(&ml, 0, sizeof ml);
        ml.tensor = t;
        ml.remote_core = -1;
        ml.kkind = kernel_kind(tt->kind);
        ml.space = tt->kind == TIR_T_SBUF ? ISA_SPACE_SBUF
                 : tt->kind == TIR_T_PSUM ? ISA_SPACE_PSUM : ISA_SPACE_HBM;
        if (is_local(tt)) {
            snprintf(ml.name, sizeof ml.name, "nc%d.%s", c, tt->name);
            ml.kind = LNC_ML_LOCAL;
        } else {
            snprintf(ml.name, sizeof ml.name, "%s", tt->name);
            ml.kind = wr[t] & me ? LNC_ML_OUTPUT
                    : tt->kind == TIR_T_CONSTANT ? LNC_ML_CONSTANT : LNC_ML_INPUT;
            ml.external = tt->kind == TIR_T_INPUT || tt->kind == TIR_T_OUTPUT ||
                          tt->kind == TIR_T_CONSTANT;
            for (int p = 0; p < s->ncores && (rd[t] & me); p++)
                if (p != c && (wr[t] & (1u << p))) {
                    snprintf(ml.remote_name, sizeof ml.remote_name, "%s", tt->name);
                    ml.remote_core = p;
                    break;
                }
        }
        if (lnc_add_mloc(m, &ml, err) < 0)
            return -1;
    }
    return 0;
}

static int record_rlts(lnc_split_t *s, const tir_kernel_t *k, const unsigned *rd,
                       const unsigned *wr, tpb_err_t *err)
{
    for (int t = 0; t < k->ntensors; t++) {
        if (is_local(&k->tensors[t]))
            continue;
        for (int p = 0; p < s->ncores; p++)
            for (int c = 0; c < s->ncores; c++) {
                if (p == c || !(wr[t] >> p & 1) || !(rd[t] >> c & 1))
                    continue;
                lnc_rlt_t *r = grow(s->rlts, s->nrlts, sizeof *r, err);
                if (!r)
                    return -1;
                s->rlts = r;
                s->rlts[s->nrlts++] = (lnc_rlt_t){t, p, c};
            }
    }
    return 0;
}

int lnc_split(const tir_kernel_t *progs, int nprog, lnc_split_t *s, tpb_err_t *err)
{
    memset(s, 0, sizeof *s);
    if (nprog < 1)
        return tpb_errf(err, "no programs to split");
    bool uniform;
    if (lnc_check_programs(progs, nprog, &uniform, err))
        return -1;
    const tir_kernel_t *k0 = &progs[0];
    s->diverged = !uniform;
    s->ncores = k0->num_cores;
    s->nprograms = nprog;
    s->per_core = nprog / s->ncores;
    int ncoll = 0;
    for (int o = 0; o < k0->nops; o++) {
        s->nsendrecv += k0->ops[o].kind == TIR_SENDRECV;
        ncoll += enc_is_collective(k0->ops[o].kind);
    }
    if ((s->nsendrecv || ncoll) && s->per_core != 1)
        return tpb_errf(err, "kernel '%s': %s needs one program per core (grid of %d "
                             "programs on %d cores)",
                        k0->name, s->nsendrecv ? "sendrecv" : "a collective", nprog, s->ncores);
    s->core_k = calloc((size_t)s->ncores, sizeof *s->core_k);
    s->core_m = calloc((size_t)s->ncores, sizeof *s->core_m);
    if (!s->core_k || !s->core_m)
        return tpb_errf(err, "out of memory (split)");
    tmap_t tm = {NULL, NULL, 0, -1, -1, NULL, NULL};
    unsigned *rd = NULL, *wr = NULL;
    int *xop = NULL, nx = 0;
    int rc = -1, irc;
    const tir_kernel_t *kid = identity_program(progs, nprog, uniform, err, &irc);
    if (irc || lnc_exchange_index(progs, nprog, &xop, &nx, err))
        goto out;
    s->ident_data = identity_data(kid, err, &irc);
    if (irc)
        goto out;
    for (int c = 0; c < s->ncores; c++) {
        tir_kernel_t *k = &s->core_k[c];
        tir_kernel_init(k);
        memcpy(k->name, k0->name, sizeof k->name);
        memcpy(k->target, k0->target, sizeof k->target);
        memcpy(k->source, k0->source, sizeof k->source);
        k->num_cores = s->ncores;
        k->num_programs = nprog;
        k->program_id = -1;   /* a core runs several programs; see core_m */
        free(tm.slot_map);
        free(tm.coll_base);
        free(tm.off);
        free(tm.pmap);
        tm.off = tm.pmap = NULL;
        if (build_tensors(progs, nprog, uniform, s->per_core, k, &tm, err) ||
            add_identity(kid, s->ident_data, k, &tm, err) || load_identity(k, &tm, progs, nprog, c, err))
            goto out;
        emit_ctx_t e = {k, c, s->ncores, 0, 0, 0, &tm, progs, nprog, {{0}, 0}, xop, nx, 0};
        int slot = 0;
        for (int p = 0; p < nprog; p++) {
            if (lnc_core_of(progs, p) != c)
                continue;   /* pruned: another core's program */
            if (slot == 0)
                k->program_id = p;   /* the core's first program */
            /* explicit deps name op indices of the program: where each
             * program op landed in the core kernel (its last op) */
            int *at = calloc(progs[p].nops > 0 ? (size_t)progs[p].nops : 1, sizeof *at);
            if (!at) {
                tpb_errf(err, "out of memory (split)");
                goto out;
            }
            pmap_t pm = program_map(&tm, progs, p, slot);
            for (int o = 0; o < progs[p].nops; o++) {
                tir_op_t op = progs[p].ops[o];
                if (remap_op(k, &op, &pm) || instance_name(k, &op, p)) {
                    free(at);
                    tpb_errf(err, "out of memory (split)");
                    goto out;
                }
                op.core = c;
                int nd = op.rare->ndeps, deps[4];
                for (int d = 0; d < nd && d < 4; d++)
                    deps[d] = op.rare->deps[d] >= 0 && op.rare->deps[d] < o ? at[op.rare->deps[d]] : -1;
                if (nd && tir_op_set_deps(k, &op, deps, nd)) {
                    free(at);
                    tpb_errf(err, "out of memory (split)");
                    goto out;
                }
                int r = op.kind == TIR_CORE_BARRIER ? split_barrier(&e, &op, err)
                      : op.kind == TIR_SENDRECV ? split_sendrecv(&e, &op, err)
                      : enc_is_collective(op.kind) ? split_collective(&e, &op, err)
                      : add(&e, &op, err);
                e.x += op.kind == TIR_SENDRECV || enc_is_collective(op.kind);
                if (r) {
                    free(at);
                    goto out;
                }
                at[o] = k->nops - 1;
            }
            free(at);
            slot++;
        }
        if (slot != s->per_core) {
            tpb_errf(err, "kernel '%s': core %d runs %d programs, expected %d", k0->name, c, slot,
                     s->per_core);
            goto out;
        }
        if (c == 0)
            s->nbarriers = e.barrier;
    }
    int nt = s->core_k[0].ntensors;
    rd = calloc((size_t)nt, sizeof *rd);
    wr = calloc((size_t)nt, sizeof *wr);
    if (!rd || !wr) {
        tpb_errf(err, "out of memory (split)");
        goto out;
    }
    for (int c = 0; c < s->ncores; c++)
        access_masks(&s->core_k[c], c, rd, wr);
    for (int c = 0; c < s->ncores; c++)
        if (build_core_module(s, c, rd, wr, err))
            goto out;
    if (record_rlts(s, &s->core_k[0], rd, wr, err))
        goto out;
    rc = 0;
out:
    free(tm.slot_map);
    free(tm.coll_base);
    free(tm.off);
    free(tm.pmap);
    free(xop);
    free(rd);
    free(wr);
    if (rc)
        lnc_split_free(s);
    return rc;
}

/* ---- reading a compiled core directory back ---- */

typedef struct {
    int pc;
    char name[LNC_NAME_LEN];
    char src[96];
} dbg_t;

static cJSON *read_json(const char *path, bool must, tpb_err_t *err)
{
    uint8_t *buf;
    size_t len;
    if (!fio_exists(path)) {
        if (must)
            tpb_errf(err, "%s: missing", path);
        return NULL;
    }
    if (fio_read_all(path, &buf, &len, err))
        return NULL;
    cJSON *j = cJSON_ParseWithLength((const char *)buf, len);
    free(buf);
    if (!j)
        tpb_errf(err, "%s: not valid JSON", path);
    return j;
}

static dbg_t *read_sidecar(const char *path, int *n, tpb_err_t *err)
{
    *n = 0;
    cJSON *j = read_json(path, false, err);
    if (!j)
        return NULL;
    if (tpb_sidecar_expand(j)) {
        cJSON_Delete(j);
        tpb_errf(err, "out of memory");
        return NULL;
    }
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "debug");
    int cnt = cJSON_GetArraySize(d);
    dbg_t *out = calloc((size_t)cnt + 1, sizeof *out);
    if (!out) {
        cJSON_Delete(j);
        tpb_errf(err, "out of memory");
        return NULL;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, d)
    {
        const cJSON *pc = cJSON_GetObjectItemCaseSensitive(e, "pc");
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *sr = cJSON_GetObjectItemCaseSensitive(e, "src");
        if (!cJSON_IsNumber(pc))
            continue;
        out[*n].pc = pc->valueint;
        snprintf(out[*n].name, sizeof out[*n].name, "%s",
                 cJSON_IsString(nm) ? nm->valuestring : "");
        snprintf(out[*n].src, sizeof out[*n].src, "%s", cJSON_IsString(sr) ? sr->valuestring : "");
        (*n)++;
    }
    cJSON_Delete(j);
    return out;
}

/* pc -> debug entry lookup: (pc, entry) pairs sorted by pc, then entry, so
 * the first pair of a pc is the sidecar's first entry for it (a linear
 * search per instruction made reading a core back quadratic). */
typedef struct {
    int pc, k;
} pc_entry_t;

static int cmp_pc_entry(const void *x, const void *y)
{
    const pc_entry_t *a = x, *b = y;
    if (a->pc != b->pc)
        return a->pc < b->pc ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

/* Index of the first debug entry for pc, or -1. */
static int find_pc(const pc_entry_t *idx, int n, int pc)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (idx[mid].pc < pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && idx[lo].pc == pc ? idx[lo].k : -1;
}

static int load_stream(lnc_module_t *m, int fi, const char *dir, isa_engine_t e, tpb_err_t *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.bin", dir, isa_engine_name(e));
    if (!fio_exists(path))
        return 0;
    uint8_t *buf;
    size_t len;
    if (fio_read_all(path, &buf, &len, err))
        return -1;
    isa_stream_t st;
    isa_err_t ie;
    if (isa_stream_decode(buf, len, e, &st, &ie) != ISA_OK) {
        free(buf);
        return tpb_errf(err, "%s: byte %zu: %s", path, ie.offset, ie.msg);
    }
    snprintf(path, sizeof path, "%s/%s.json", dir, isa_engine_name(e));
    int ndbg = 0;
    dbg_t *dbg = read_sidecar(path, &ndbg, err);
    pc_entry_t *byp = calloc((size_t)ndbg + 1, sizeof *byp);
    if (!byp) {
        free(dbg);
        isa_stream_free(&st);
        free(buf);
        return tpb_errf(err, "out of memory");
    }
    for (int k = 0; k < ndbg; k++)
        byp[k] = (pc_entry_t){dbg[k].pc, k};
    qsort(byp, (size_t)ndbg, sizeof *byp, cmp_pc_entry);
    char bname[LNC_NAME_LEN];
    snprintf(bname, sizeof bname, "nc%d.%s", m->core, isa_engine_name(e));
    lnc_block_t *b = lnc_func_block(m, fi, e, bname, err);
    int rc = b ? 0 : -1;
    size_t count = st.count;
    /* the linked function returns instead of halting */
    if (count && st.insts[count - 1].inst.op == ISA_OP_HALT)
        count--;
    for (size_t i = 0; i < count && !rc; i++) {
        const isa_decoded_t *d = &st.insts[i];
        lnc_inst_t in;
        lnc_inst_init(&in, d->inst.op == ISA_OP_CORE_BARRIER ? BIR_CORE_BARRIER
                           : d->inst.op == ISA_OP_RETURN ? LNC_OPC_RETURN : LNC_OPC_ISA, NULL);
        in.engine = e;
        in.isa = d->inst;
        in.nprefix = (int)(d->pc - d->prefix_pc);
        if (in.nprefix > 2) {
            rc = tpb_errf(err, "%s: pc %u: %d prefix bundles (at most 2)", path, d->pc,
                          in.nprefix);
            break;
        }
        for (int p = 0; p < in.nprefix; p++)
            memcpy(in.prefix[p], buf + (size_t)(d->prefix_pc + (uint32_t)p) * ISA_BUNDLE_BYTES,
                   ISA_BUNDLE_BYTES);
        if (in.opc == BIR_CORE_BARRIER)
            in.local_id = (int)d->inst.f.CB.id;
        snprintf(in.name, sizeof in.name, "%s_%u", isa_ops[d->inst.op].mnemonic, d->pc);
        int k = find_pc(byp, ndbg, (int)d->pc);
        if (k >= 0) {
            if (dbg[k].name[0])
                snprintf(in.name, sizeof in.name, "%s", dbg[k].name);
            snprintf(in.src, sizeof in.src, "%s", dbg[k].src);
        }
        if (lnc_block_append(b, &in, err) < 0)
            rc = -1;
    }
    free(byp);
    free(dbg);
    isa_stream_free(&st);
    free(buf);
    return rc;
}

static int load_def(lnc_module_t *m, const char *dir, tpb_err_t *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/def.json", dir);
    cJSON *j = read_json(path, true, err);
    if (!j)
        return -1;
    int rc = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "semaphores"))
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        lnc_sem_t *s = grow(m->sems, m->nsems, sizeof *s, err);
        if (!s) {
            rc = -1;
            break;
        }
        m->sems = s;
        s = &m->sems[m->nsems++];
        memset(s, 0, sizeof *s);
        s->core = m->core;
        s->id = cJSON_IsNumber(id) ? id->valueint : -1;
        snprintf(s->name, sizeof s->name, "%s", cJSON_IsString(nm) ? nm->valuestring : "");
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "queues"))
    {
        if (rc)
            break;
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *en = cJSON_GetObjectItemCaseSensitive(e, "engine");
        const cJSON *se = cJSON_GetObjectItemCaseSensitive(e, "semaphore");
        lnc_queue_t *q = grow(m->queues, m->nqueues, sizeof *q, err);
        if (!q) {
            rc = -1;
            break;
        }
        m->queues = q;
        q = &m->queues[m->nqueues++];
        memset(q, 0, sizeof *q);
        snprintf(q->name, sizeof q->name, "%s", cJSON_IsString(nm) ? nm->valuestring : "");
        q->engine = cJSON_IsString(en) ? isa_engine_by_name(en->valuestring) : -1;
        q->ninst = 1;
        q->inst[0] = (lnc_qinst_t){m->core, cJSON_IsNumber(id) ? id->valueint : -1,
                                   cJSON_IsNumber(se) ? se->valueint : -1, q->engine};
    }
    cJSON_Delete(j);
    return rc;
}

int lnc_load_core_artifacts(lnc_module_t *m, const char *dir, bool idle, tpb_err_t *err)
{
    int fi = lnc_add_func(m, "main", m->core, err);
    if (fi < 0)
        return -1;
    for (int i = 0; i < 5; i++)
        if (load_stream(m, fi, dir, isa_tpb_engines[i], err))
            return -1;
    if (m->funcs[fi].nblocks == 0 && !idle)
        return tpb_errf(err, "%s: no engine stream (<Engine>.bin)", dir);
    if (m->funcs[fi].nblocks == 0) {   /* the link ends it: Return, completion barrier */
        char bname[LNC_NAME_LEN];
        snprintf(bname, sizeof bname, "nc%d.%s", m->core, isa_engine_name(ISA_ENG_SP));
        if (!lnc_func_block(m, fi, ISA_ENG_SP, bname, err))
            return -1;
    }
    return load_def(m, dir, err);
}
