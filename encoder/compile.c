/* compile.c - the back-end driver: tile IR -> artifact directory. */
#include "compile.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc_live.h"
#include "backend.h"
#include "fileio.h"
#include "hugepage.h"
#include "spill.h"

/* Bound on every shape, count, step and offset, so that address arithmetic
 * in 64 bits cannot overflow (2^40 elements = 4 TiB of fp32). */
#define AP_LIMIT (1LL << 40)      /* elements of a tensor or an access, offsets */
#define COUNT_LIMIT (1LL << 31)   /* one access dim's count */
#define STEP_LIMIT (1LL << 28)    /* one access dim's step (elements) */

static const tpb_target_t *pick_target(const tir_kernel_t *k, const enc_options_t *o,
                                       tpb_err_t *err)
{
    const char *name = o && o->target ? o->target : (k->target[0] ? k->target : NULL);
    if (!name)
        return tpb_target_default();
    const tpb_target_t *t = tpb_target_get(name);
    if (!t)
        tpb_errf(err, "unknown target '%s' (known: %s)", name, tpb_target_names());
    return t;
}

/* The kernel the back-end compiles: the caller's, or, when the back-end must
 * add its own tensors and ops (the shared identity), a working copy (tensor/
 * op arrays owned; constant data of the original borrowed).  Most kernels
 * need no copy, which matters when they unroll to 10^5+ ops. */
typedef struct {
    tir_kernel_t k;
    bool owned;              /* k.tensors / k.ops are copies to free */
    void *ident_data;
} work_t;

static void work_free(work_t *w)
{
    if (w->owned) {
        tir_array_free(w->k.tensors, w->k.cap_tensors, sizeof *w->k.tensors);
        tir_array_free(w->k.ops, w->k.cap_ops, sizeof *w->k.ops);
        free(w->k.loop_marks);
    }
    tir_pools_free(&w->k);
    free(w->ident_data);
    memset(w, 0, sizeof *w);
}

bool enc_needs_identity(const tir_kernel_t *k, unsigned *dtype)
{
    for (int i = 0; i < k->nops; i++) {
        const tir_op_t *op = &k->ops[i];
        if (lower_pe_transpose_needs_identity(k, op)) {
            int s = op->src[0]->tensor;
            *dtype = s >= 0 && s < k->ntensors ? k->tensors[s].dtype : ISA_DT_FP32;
            return true;
        }
    }
    return false;
}

/* The DRAM identity (seed 004 shared_identity_matrix(n =
 * statebuf_num_partitions, dtype = int8)): 128 x 128 int8, whatever the
 * transposes' dtype; the load_identity DMA converts it to the SBUF tile's
 * dtype (1 -> 1.0 exactly in every PE dtype). */
void *enc_identity_data(unsigned dtype)
{
    (void)dtype;
    uint8_t *d = calloc(128 * 128, 1);
    if (!d)
        return NULL;
    for (int i = 0; i < 128; i++)
        d[(size_t)i * 128 + (size_t)i] = 1;
    return d;
}

void enc_identity_tensors(const tir_kernel_t *k, unsigned dtype, void *data, tir_tensor_t *c,
                          tir_tensor_t *sb, char names[2][TIR_NAME_LEN])
{
    memset(c, 0, sizeof *c);
    /* tir_add_tensor copies the names: "identity" and "identity_sb" but
     * where the kernel names a tensor so (tir_free_name) */
    c->name = tir_free_name(k, "identity", names[0]);
    c->kind = TIR_T_CONSTANT;
    c->dtype = ISA_DT_INT8;
    c->ndim = 2;
    c->shape[0] = c->shape[1] = 128;
    c->path = ENC_IDENT_PATH;
    c->const_data = data;
    c->shared_with = -1;
    *sb = *c;
    sb->name = tir_free_name(k, "identity_sb", names[1]);
    sb->kind = TIR_T_SBUF;
    sb->dtype = dtype;   /* the first dtype-changing transpose's source dtype */
    sb->const_data = NULL;
}

int enc_identity_load(tir_kernel_t *k, int ci, int si, tir_op_t *ld)
{
    tir_op_init(ld, TIR_LOAD);
    ld->name = "load_identity";
    ld->path = ENC_IDENT_PATH;   /* a literal: lives as long as the program */
    tir_ap_t dst = {.tensor = si, .ndim = 2, .step = {128, 1}, .count = {128, 128}};
    tir_ap_t src = {.tensor = ci, .ndim = 2, .step = {128, 1}, .count = {128, 128}};
    ld->dst = tir_ap_intern(k, &dst);
    ld->src[0] = tir_ap_intern(k, &src);
    ld->nsrc = 1;
    return ld->dst && ld->src[0] ? 0 : -1;
}

/* The shared identity for PE transposes: an HBM constant, an SBUF tile, and
 * one load at the front of the kernel. */
static int add_identity(work_t *w, unsigned dtype, tpb_err_t *err)
{
    w->ident_data = enc_identity_data(dtype);
    if (!w->ident_data)
        return tpb_errf(err, "out of memory building the identity");
    tir_tensor_t c, s;
    char names[2][TIR_NAME_LEN];
    enc_identity_tensors(&w->k, dtype, w->ident_data, &c, &s, names);
    int ci = tir_add_tensor(&w->k, &c), si = tir_add_tensor(&w->k, &s);
    if (ci < 0 || si < 0)
        return tpb_errf(err, "out of memory building the identity");
    tir_op_t ld;
    if (enc_identity_load(&w->k, ci, si, &ld) || tir_add_op(&w->k, &ld) < 0)
        return tpb_errf(err, "out of memory building the identity");
    /* move it to the front (explicit deps name op indices: shift them) */
    tir_op_t tmp = w->k.ops[w->k.nops - 1];
    memmove(&w->k.ops[1], &w->k.ops[0], (size_t)(w->k.nops - 1) * sizeof tmp);
    w->k.ops[0] = tmp;
    for (int i = 1; i < w->k.nops; i++) {
        tir_op_t *op = &w->k.ops[i];
        int n = op->rare->ndeps, deps[4];
        for (int d = 0; d < n && d < 4; d++)
            deps[d] = op->rare->deps[d] + 1;
        if (n && tir_op_set_deps(&w->k, op, deps, n))
            return tpb_errf(err, "out of memory building the identity");
    }
    return 0;
}

/* ident: check_kernel's enc_needs_identity answer (dt its dtype). */
static int work_init(work_t *w, const tir_kernel_t *k, bool ident, unsigned dt, tpb_err_t *err)
{
    memset(w, 0, sizeof *w);
    w->k = *k;
    tir_pools_detach(&w->k);   /* the identity load's APs: w's own (work_free) */
    if (!ident)
        return 0;   /* compiled as given: borrow the arrays */
    w->owned = true;
    w->k.tensors = NULL, w->k.ops = NULL;
    w->k.cap_tensors = w->k.cap_ops = 0;
    /* the loop boundaries follow the identity load put in front (the loop
     * records themselves stay borrowed) */
    w->k.loop_marks = NULL;
    if (k->nmarks) {
        if (!(w->k.loop_marks = malloc(sizeof *w->k.loop_marks * (size_t)k->nmarks)))
            return tpb_errf(err, "out of memory copying the kernel");
        for (int i = 0; i < k->nmarks; i++)
            w->k.loop_marks[i] = k->loop_marks[i] + 1;
    }
    w->k.ntensors = w->k.nops = 0;
    for (int i = 0; i < k->ntensors; i++)
        if (tir_add_tensor(&w->k, &k->tensors[i]) < 0)
            return tpb_errf(err, "out of memory copying the kernel");
    for (int i = 0; i < k->nops; i++)
        if (tir_add_op(&w->k, &k->ops[i]) < 0)
            return tpb_errf(err, "out of memory copying the kernel");
    return add_identity(w, dt, err);
}

int enc_ident_tile(const tir_kernel_t *k)
{
    for (int i = 0; i < k->ntensors; i++)
        if (enc_is_ident_tile(&k->tensors[i]))
            return i;
    return -1;
}

#define CHECKED_APS 16   /* check_kernel's memo (a power of two) */

/* One operand's tensor id, dims, offset, counts and steps (op i).  Not
 * inlined: check_slot's ten inlined copies stay small. */
__attribute__((noinline)) static int check_ap_bounds(const tir_kernel_t *k, int i,
                                                     const tir_op_t *op, const tir_ap_t *ap,
                                                     tpb_err_t *err)
{
    if (ap->tensor >= k->ntensors || ap->tensor < -1)
        return tpb_errf(err, "op %d '%s' (%s): operand names tensor %d of %d", i, op->name,
                        op->path, ap->tensor, k->ntensors);
    if (ap->tensor < 0)
        return 0;
    if (ap->ndim < 0 || ap->ndim > TIR_MAX_DIMS)
        return tpb_errf(err, "op %d '%s' (%s): access with %d dims", i, op->name, op->path,
                        ap->ndim);
    if (ap->offset < 0 || ap->offset > AP_LIMIT)
        return tpb_errf(err, "op %d '%s' (%s): access offset %lld out of range", i, op->name,
                        op->path, (long long)ap->offset);
    uint64_t n = 1;
    for (int d = 0; d < ap->ndim; d++) {
        if (ap->count[d] < 1 || ap->count[d] > COUNT_LIMIT ||
            (n *= (uint64_t)ap->count[d]) > (uint64_t)AP_LIMIT)
            return tpb_errf(err, "op %d '%s' (%s): access dim %d has count %lld", i, op->name,
                            op->path, d, (long long)ap->count[d]);
        if (ap->step[d] < -STEP_LIMIT || ap->step[d] > STEP_LIMIT)
            return tpb_errf(err, "op %d '%s' (%s): access dim %d has step %lld", i, op->name,
                            op->path, d, (long long)ap->step[d]);
    }
    return 0;
}

/* One operand slot of op i through check_kernel's memo seen[]: an unset
 * slot (most of most ops) or an AP found in bounds before costs a compare
 * or two.  Inline and called slot by slot (no array of the ten, no loop
 * over it): the pass runs once per op of 10^5-op kernels. */
static inline int check_slot(const tir_kernel_t *k, int i, const tir_op_t *op,
                             const tir_ap_t *a, const tir_ap_t **seen, tpb_err_t *err)
{
    if (a == &tir_ap_none)
        return 0;
    const tir_ap_t **slot = &seen[((uintptr_t)a >> 4) % CHECKED_APS];
    if (*slot == a)
        return 0;
    if (check_ap_bounds(k, i, op, a, err))
        return -1;
    *slot = a;
    return 0;
}

/* Also answers enc_needs_identity (*ident, *dtype) and gathers the
 * allocator's liveness (live) in the same pass over the ops: a pass costs
 * a cache miss or more per op on 10^5-op kernels. */
static int check_kernel(const tir_kernel_t *k, const tpb_target_t *t, bool *ident,
                        unsigned *dtype, enc_live_t *live, tpb_err_t *err)
{
    *ident = false;
    if (k->nops == 0)
        return tpb_errf(err, "kernel '%s' has no ops", k->name);
    if (k->num_programs > 1 || k->num_cores > 1)
        return tpb_errf(err, "kernel '%s' is launched on %d programs / %d cores: multi-core "
                             "kernels need the multi-core split/link, which is not built yet "
                             "(the single-core back-end compiles grid [1] kernels)",
                        k->name, k->num_programs, k->num_cores);
    enc_live_begin(live, k);
    for (int i = 0; i < k->ntensors; i++) {
        const tir_tensor_t *tt = &k->tensors[i];
        enc_live_tensor(live, i, tt);   /* the HBM ones, for the HBM layout */
        if (!isa_dtype_valid(tt->dtype))
            return tpb_errf(err, "tensor '%s' (%s): invalid dtype %u", tt->name, tt->path, tt->dtype);
        if (tt->ndim < 0 || tt->ndim > TIR_MAX_DIMS)
            return tpb_errf(err, "tensor '%s' (%s): %d dims", tt->name, tt->path, tt->ndim);
        uint64_t elems = 1;
        for (int d = 0; d < tt->ndim; d++) {
            if (tt->shape[d] < 1 || tt->shape[d] > AP_LIMIT)
                return tpb_errf(err, "tensor '%s' (%s): dim %d is %lld", tt->name, tt->path, d,
                                (long long)tt->shape[d]);
            elems *= (uint64_t)tt->shape[d];
            if (elems > AP_LIMIT)
                return tpb_errf(err, "tensor '%s' (%s) has more than 2^40 elements", tt->name,
                                tt->path);
        }
    }
    /* the APs already found in bounds: an AP's check reads only the AP and
     * ntensors, neither of which changes in this pass, and interned
     * operands repeat op after op.  Direct-mapped on the pointer. */
    const tir_ap_t *seen[CHECKED_APS] = {NULL};
    for (int i = 0; i < k->nops; i++) {
        const tir_op_t *op = &k->ops[i];
        /* every slot in this order: the first bad one is the one reported */
        if (check_slot(k, i, op, op->dst, seen, err) || check_slot(k, i, op, op->dst2, seen, err) ||
            check_slot(k, i, op, op->src[0], seen, err) ||
            check_slot(k, i, op, op->src[1], seen, err) ||
            check_slot(k, i, op, op->src[2], seen, err) ||
            check_slot(k, i, op, op->src[3], seen, err) ||
            check_slot(k, i, op, op->index, seen, err) || check_slot(k, i, op, op->bias, seen, err) ||
            check_slot(k, i, op, op->s0.ap, seen, err) || check_slot(k, i, op, op->s1.ap, seen, err))
            return -1;
        bool needs = lower_pe_transpose_needs_identity(k, op);
        if (!*ident && needs) {
            int s = op->src[0]->tensor;   /* as enc_needs_identity: the first such op */
            *dtype = s >= 0 && s < k->ntensors ? k->tensors[s].dtype : ISA_DT_FP32;
            *ident = true;
        }
        enc_live_op(live, k, op, i, needs);
        if (op->core != 0)
            return tpb_errf(err, "op %d '%s' (%s): core %d: the single-core back-end compiles "
                                 "core 0 only",
                            i, op->name, op->path, op->core);
    }
    (void)t;
    return 0;
}

/* The tile-IR op array given up during the lowering (enc_compile_release):
 * nothing after the lowering reads an op but the sidecars, which read
 * cc->ops (built before it), so the ops behind the lowering's cursor go
 * back to the system in 2 MiB blocks and the array is freed when the
 * lowering ends -- before the synchronise pass and the emitter, whose
 * memory would otherwise add to it at the peak. */
typedef struct {
    tir_kernel_t *work;     /* the kernel the back end compiles (the op array's holder) */
    tir_kernel_t *caller;   /* the caller's kernel when work borrows its array, else NULL */
    tir_kernel_t *pools;    /* the caller's kernel: its op pools hold every op's records */
    size_t done;            /* bytes of the array given back (tpb_array_discard_head) */
    tpb_spare_t *spare;     /* NULL, or where the array and the pools go (enc_options_t) */
    /* the sidecars' op table built op by op as the lowering reads each op
     * (NULL: not built), its out of memory reported into err */
    art_ops_builder_t *art;
    tpb_err_t *err;
} ops_release_t;

#define RELEASE_BLOCK ((size_t)2 << 20)   /* what tpb_array_discard_head gives back */

static size_t ops_bytes(const tir_kernel_t *k) { return (size_t)k->cap_ops * sizeof *k->ops; }

#define ART_OPS_OOM "out of memory building the sidecars' op table"

static int ops_release_step(void *arg, int i)
{
    ops_release_t *r = arg;
    if (r->art && art_ops_add(r->art, i))   /* op i is read before it is given back */
        return tpb_errf(r->err, ART_OPS_OOM);
    size_t upto = (size_t)(i + 1) * sizeof *r->work->ops;
    if (upto - r->done >= RELEASE_BLOCK)   /* a whole block is behind the cursor */
        r->done = tpb_array_discard_head(r->work->ops, ops_bytes(r->work), r->done, upto);
    return 0;
}

/* Free k's op array (into spare when not NULL); k->nops stays, so a late
 * reader fails loudly. */
static void ops_drop(tir_kernel_t *k, tpb_spare_t *spare)
{
    tpb_spare_put(spare, k->ops, (size_t)k->cap_ops * sizeof *k->ops);
    k->ops = NULL;
    k->cap_ops = 0;
}

static void ops_release_end(ops_release_t *r)
{
    ops_drop(r->work, r->spare);
    if (r->caller) {   /* the same array */
        r->caller->ops = NULL;
        r->caller->cap_ops = 0;
    }
    /* the operands and rare fields: read through the ops only (the
     * backend IR copies what it needs; the identity load's are work's) */
    tir_op_pools_free(r->pools, r->spare);
}

/* enc_core_prelink; rel non-NULL: the ops are released during the
 * lowering, cc->ops built for the sidecars (modes that write them). */
static int prelink(const tir_kernel_t *k, int core, const tpb_target_t *t,
                   const enc_hbm_layout_t *hbm, const enc_options_t *opts, enc_core_t *cc,
                   ops_release_t *rel, enc_live_t *live, enc_stats_t *st, tpb_err_t *err)
{
    memset(cc, 0, sizeof *cc);
    cc->k = k;
    if (bir_module_init(&cc->m, core, k->ntensors, err))
        return -1;
    bir_module_use_spare(&cc->m, opts ? opts->spare : NULL);
    /* the fields before the memos only: a compound literal would clear
     * all 37 KiB (faulting in stack pages) where lw_tap_memo_clear empties
     * the memos by their masks */
    lower_ctx_t c;
    memset(&c, 0, offsetof(lower_ctx_t, memo));
    c.k = k, c.t = t, c.m = &cc->m, c.err = err, c.ident_hbm = -1;
    sched_rr_event_t *ev = NULL;
    int nev = 0;
    if (roll_candidates(k, opts && opts->loops, &cc->cand, &ev, &nev, err))
        return -1;
    int arc = alloc_kernel_live(k, t, hbm, &cc->m, st, opts ? opts->buffers : 0, cc->cand,
                                live, err);
    /* no op names deps: the lowering's pass looking for them is skipped */
    c.no_deps = enc_live_fits(live, k) && !live->deps_seen;
    if (live)
        enc_live_free(live);   /* applied: its memory back before the lowering's */
    if (arc) {
        if (st)
            st->sbuf_oom = cc->m.sbuf_fail_op >= 0;   /* the compile may spill */
        free(ev);
        return -1;
    }
    c.ident_tile = cc->m.ident_tile;   /* found by the allocator (enc_ident_tile) */
    art_ops_builder_t art;
    if (rel) {
        if ((opts ? opts->mode : ENC_RUN_ISA_CHECKS) == ENC_RUN_ISA_CHECKS) {
            cc->has_ops = true;
            rel->art = &art;
            rel->err = err;
            if (art_ops_begin(&art, &cc->ops, &cc->m, k)) {
                art_ops_end(&art);
                free(ev);
                return tpb_errf(err, ART_OPS_OOM);
            }
        }
        c.op_done = ops_release_step;
        c.op_done_arg = rel;
    }
    int lrc = lower_kernel(&c);
    if (rel && rel->art) {
        art_ops_end(rel->art);
        rel->art = NULL;   /* prelink's */
    }
    if (lrc) {
        free(ev);
        return -1;
    }
    if (rel)
        ops_release_end(rel);
    if (opts && opts->enable_ldw_opt)
        lw_ldw_opt(&cc->m);
    int rc = sched_assign(&cc->m, t, ev, nev, k->nloops, err);
    free(ev);
    return rc ? -1 : 0;
}

int enc_core_prelink(const tir_kernel_t *k, int core, const tpb_target_t *t,
                     const enc_hbm_layout_t *hbm, const enc_options_t *opts, enc_core_t *cc,
                     enc_stats_t *st, tpb_err_t *err)
{
    return prelink(k, core, t, hbm, opts, cc, NULL, NULL, st, err);
}

static int postlink(enc_core_t *cc, const enc_options_t *opts, const char *core_dir,
                    enc_staging_t *staging, enc_stats_t *st, tpb_err_t *err)
{
    const tir_kernel_t *k = cc->k;
    bir_module_t *mp = &cc->m;
    int core = mp->core;
    int mode = opts ? opts->mode : ENC_RUN_ISA_CHECKS;
    gen_t collect, run;
    memset(&collect, 0, sizeof collect);
    memset(&run, 0, sizeof run);
    int rc = -1;
    if (sched_synchronise(mp, st, err) || roll_loops(mp, k, cc->cand, st, err))
        goto out;
    /* COLLECT_OPCODES first: the per-engine opcode sets feed the DVE check */
    if (gen_init(&collect, ENC_COLLECT_OPCODES, mp, core_dir, false, err) ||
        gen_run(&collect, err) || gen_check_dve_coverage(&collect, err))
        goto out;
    memcpy(st->engine_opcodes, collect.engine_opcodes, sizeof st->engine_opcodes);
    if (mode != ENC_COLLECT_OPCODES) {
        if (gen_init(&run, mode, mp, core_dir, opts && opts->dump_bin_per_inst, err) ||
            gen_reserve_debug(&run, collect.pcs, err))
            goto out;
        run.staging = staging;
        run.checked = true;   /* the COLLECT walk ran the same checks on mp */
        memcpy(run.engine_opcodes, collect.engine_opcodes, sizeof run.engine_opcodes);
        memcpy(run.table_opcodes, collect.table_opcodes, sizeof run.table_opcodes);
        if (run.nloop_pc)   /* the branch hints the COLLECT pass found */
            memcpy(run.loop_pc, collect.loop_pc, (size_t)run.nloop_pc * sizeof *run.loop_pc);
        if (gen_run(&run, err)) {
            gen_finish(&run, false, err);
            goto out;
        }
        if (mode == ENC_RUN_ISA_CHECKS) {
            if (gen_finish(&run, true, err) ||
                (cc->has_ops ? art_write_sidecars_ops(&run, mp, &cc->ops, core_dir, err)
                             : art_write_sidecars(&run, mp, k, core_dir, err)) ||
                art_write_def(mp, &run, core_dir, err) ||
                (core == 0 && art_write_constants(k, core_dir, err)))
                goto out;
        }
        for (int e = 0; e < ISA_ENG_COUNT; e++) {
            st->insts[e] = run.pcs[e];
            st->files += run.opened[e];
        }
        memcpy(st->histogram, run.histogram, sizeof st->histogram);
    }
    rc = 0;
out:
    gen_free(&collect);
    gen_free(&run);
    return rc;
}

int enc_core_postlink(enc_core_t *cc, const enc_options_t *opts, const char *core_dir,
                      enc_stats_t *st, tpb_err_t *err)
{
    return postlink(cc, opts, core_dir, NULL, st, err);
}

void enc_core_free(enc_core_t *cc)
{
    bir_module_free(&cc->m);
    free(cc->cand);
    cc->cand = NULL;
    art_ops_free(&cc->ops);
    cc->has_ops = false;
}

static int compile_core(const tir_kernel_t *k, int core, const tpb_target_t *t,
                        const enc_hbm_layout_t *hbm, const enc_options_t *opts,
                        const char *core_dir, enc_staging_t *staging, ops_release_t *rel,
                        enc_live_t *live, enc_stats_t *stats, tpb_err_t *err)
{
    enc_stats_t local;
    enc_stats_t *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    int mode = opts ? opts->mode : ENC_RUN_ISA_CHECKS;
    if (enc_check_mode(mode, err))
        return -1;
    if (mode == ENC_RUN_ISA_CHECKS && !core_dir)
        return tpb_errf(err, "RUN_ISA_CHECKS needs an artifact directory");
    enc_core_t cc;
    int rc = prelink(k, core, t, hbm, opts, &cc, rel, live, st, err) ||
             postlink(&cc, opts, core_dir, staging, st, err);
    enc_core_free(&cc);
    return rc ? -1 : 0;
}

int enc_compile_core(const tir_kernel_t *k, int core, const tpb_target_t *t,
                     const enc_hbm_layout_t *hbm, const enc_options_t *opts,
                     const char *core_dir, enc_stats_t *stats, tpb_err_t *err)
{
    return compile_core(k, core, t, hbm, opts, core_dir, NULL, NULL, NULL, stats, err);
}

int enc_check_hbm_fits(const enc_hbm_layout_t *hbm, const tpb_target_t *t, tpb_err_t *err)
{
    if (hbm->total > t->hbm_bytes)
        return tpb_errf(err, "HBM layout needs %llu bytes; target %s has %llu",
                        (unsigned long long)hbm->total, t->name,
                        (unsigned long long)t->hbm_bytes);
    return 0;
}

/* A kernel rewritten by spilling, and its HBM layout (the spill slots are
 * scratch tensors after every other). */
typedef struct {
    tir_kernel_t k;
    enc_hbm_layout_t hbm;
    bool made;
} spilled_t;

static void spilled_free(spilled_t *sp)
{
    if (sp->made) {
        enc_hbm_layout_free(&sp->hbm);
        enc_spill_free(&sp->k);
    }
    sp->made = false;
}

/* The compile of w after its SBUF placement failed: a copy spilled until
 * it fits (enc_spill), compiled whole; stats count the spill traffic. */
static int spill_compile(const tir_kernel_t *w, const tpb_target_t *t, const enc_options_t *o,
                         const char *core_dir, enc_staging_t *staging, spilled_t *sp,
                         enc_stats_t *st, tpb_err_t *err)
{
    enc_spill_stats_t ss;
    if (enc_spill_copy(&sp->k, w, err))
        return -1;
    memset(&sp->hbm, 0, sizeof sp->hbm);
    sp->made = true;
    if (enc_spill(&sp->k, t, o->buffers, o->loops, &ss, err) ||
        enc_hbm_layout(&sp->k, &sp->hbm, err) || enc_check_hbm_fits(&sp->hbm, t, err) ||
        compile_core(&sp->k, 0, t, &sp->hbm, o, core_dir, staging, NULL, NULL, st, err))
        return -1;
    st->spills = ss.victims;
    st->spill_saves = ss.saves;
    st->spill_reloads = ss.reloads;
    st->spill_save_bytes = ss.save_bytes;
    st->spill_reload_bytes = ss.reload_bytes;
    return 0;
}

/* enc_compile_staged; rel == k (non-const) when k's ops may be released
 * (enc_compile_release), else NULL. */
static int compile_staged(const tir_kernel_t *k, tir_kernel_t *rel, const enc_options_t *opts,
                          enc_staging_t *staging, enc_stats_t *stats, tpb_err_t *err)
{
    enc_options_t o = opts ? *opts : (enc_options_t){.mode = ENC_RUN_ISA_CHECKS};
    if (enc_check_mode(o.mode, err))
        return -1;
    const tpb_target_t *t = pick_target(k, &o, err);
    if (!t)
        return -1;
    tpb_target_t limited;   /* --sbuf-limit: the allocator sees a smaller SBUF */
    if (o.sbuf_limit && o.sbuf_limit < t->sbuf_partition_bytes) {
        limited = *t;
        limited.sbuf_partition_bytes = (unsigned)o.sbuf_limit;
        t = &limited;
    }
    bool ident;
    unsigned ident_dt = ISA_DT_FP32;
    enc_live_t live;
    memset(&live, 0, sizeof live);   /* (check_kernel may fail before it starts) */
    if (check_kernel(k, t, &ident, &ident_dt, &live, err)) {
        enc_live_free(&live);
        return -1;
    }
    if (o.mode == ENC_RUN_ISA_CHECKS && (!o.out_dir || !o.out_dir[0])) {
        enc_live_free(&live);
        return tpb_errf(err, "no output directory given");
    }
    live.shift = ident ? 1 : 0;   /* the identity load put in front (work_init) */
    work_t w;
    if (work_init(&w, k, ident, ident_dt, err)) {
        enc_live_free(&live);
        work_free(&w);
        return -1;
    }
    if (rel && w.owned)
        ops_drop(rel, o.spare);   /* copied into w.k */
    ops_release_t release = {.work = &w.k, .caller = w.owned ? NULL : rel, .pools = rel,
                             .spare = o.spare};
    snprintf(w.k.target, sizeof w.k.target, "%s", t->name);
    spilled_t sp;
    memset(&sp, 0, sizeof sp);
    enc_hbm_layout_t hbm;
    if (enc_hbm_layout_live(&w.k, &live, &hbm, err)) {
        enc_live_free(&live);
        work_free(&w);
        return -1;
    }
    int rc = -1;
    /* not zero-filled: only their heads are written, and a 4 KiB buffer
     * cleared whole faults in a stack page for nothing */
    char tmp[4096], core_dir[4200], outp[4096];
    tmp[0] = outp[0] = 0;
    if (enc_check_hbm_fits(&hbm, t, err))
        goto out;
    if (o.mode == ENC_RUN_ISA_CHECKS) {
        if (art_begin_dir(o.out_dir, outp, sizeof outp, tmp, sizeof tmp, err))
            goto out;
        o.out_dir = outp;
        snprintf(core_dir, sizeof core_dir, "%s/nc0/sg0", tmp);
        /* art_begin_dir removed any old tmp: all three are new */
        if (fio_mkdirs_fresh(core_dir, strlen(tmp), err))
            goto out;
    }
    enc_stats_t local;
    enc_stats_t *st = stats ? stats : &local;
    const tir_kernel_t *ck = &w.k;   /* the kernel compiled: w.k, or its spilled copy */
    const enc_hbm_layout_t *ch = &hbm;
    if (compile_core(&w.k, 0, t, &hbm, &o, o.mode == ENC_RUN_ISA_CHECKS ? core_dir : NULL,
                     staging, rel ? &release : NULL, &live, st, err)) {
        /* SBUF did not fit: spill (encoder/spill.c) and compile the result */
        if (!st->sbuf_oom ||
            spill_compile(&w.k, t, &o, o.mode == ENC_RUN_ISA_CHECKS ? core_dir : NULL, staging,
                          &sp, st, err))
            goto out;
        ck = &sp.k, ch = &sp.hbm;
    }
    if (o.mode == ENC_RUN_ISA_CHECKS) {
        const char *map_dirs[2] = { tmp, core_dir };   /* one map, two copies */
        if (enc_write_tensor_maps(ck, t, ch, map_dirs, 2, err) ||
            (o.fsync && fio_fsync_tree(tmp, err)) || art_install_dir(tmp, o.out_dir, err))
            goto out;
        tmp[0] = 0;
    }
    rc = 0;
out:
    if (tmp[0])
        art_rmtree(tmp);
    enc_live_free(&live);
    enc_hbm_layout_free(&hbm);
    spilled_free(&sp);
    work_free(&w);
    return rc;
}

int enc_compile_staged(const tir_kernel_t *k, const enc_options_t *opts, enc_staging_t *staging,
                       enc_stats_t *stats, tpb_err_t *err)
{
    return compile_staged(k, NULL, opts, staging, stats, err);
}

int enc_compile(const tir_kernel_t *k, const enc_options_t *opts, enc_stats_t *stats,
                tpb_err_t *err)
{
    return compile_staged(k, NULL, opts, NULL, stats, err);
}

int enc_compile_release(tir_kernel_t *k, const enc_options_t *opts, enc_stats_t *stats,
                        tpb_err_t *err)
{
    int rc = compile_staged(k, k, opts, NULL, stats, err);
    ops_drop(k, NULL);   /* what the compile did not release (an error before the lowering) */
    tir_op_pools_free(k, NULL);
    k->nops = 0;
    return rc;
}
