#define _DEFAULT_SOURCE 1   /* symlink */
/* compile_mc.c - the multi-core driver: parse every program id, split,
 * compile each core (enc_compile_core, one shared HBM layout), read the
 * cores back as modules, link, set up the sgLnk link directory and emit the
 * linked module per core.  See lnc.h and docs/multicore.md. */
#include "collective.h"
#include "lnc.h"
#include "lnc_bir.h"
#include "lnc_passes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dirent.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "compile.h"
#include "fileio.h"
#include "frontend.h"

/* ---- emission of the linked module ---- */

static int encode_inst(const lnc_inst_t *in, int reloc, uint8_t *out, tpb_err_t *err)
{
    isa_inst_t x = in->isa;
    if (x.op == ISA_OP_CALL || x.op == ISA_OP_JUMP)
        x.f.CALL.target += (uint32_t)reloc;
    else if (x.op == ISA_OP_BRANCH_CMP)
        x.f.BR.target += (uint32_t)reloc;
    isa_err_t ie;
    if (isa_encode(&x, out, &ie) != ISA_OK)
        return tpb_errf(err, "instruction '%s' (%s): field %s: %s", in->name,
                        isa_ops[x.op].mnemonic, ie.field ? ie.field : "?", ie.msg);
    return 0;
}

typedef struct {
    uint8_t *buf;
    size_t n, cap;           /* bundles */
    cJSON *debug;
} stream_t;

static uint8_t *stream_slot(stream_t *s, tpb_err_t *err)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        uint8_t *p = realloc(s->buf, nc * ISA_BUNDLE_BYTES);
        if (!p) {
            tpb_errf(err, "out of memory (emission)");
            return NULL;
        }
        s->buf = p;
        s->cap = nc;
    }
    return s->buf + s->n++ * ISA_BUNDLE_BYTES;
}

static void debug_entry(stream_t *s, size_t pc, const lnc_inst_t *in)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "pc", (double)pc);
    cJSON_AddStringToObject(o, "name", in->name);
    if (in->src[0])
        cJSON_AddStringToObject(o, "src", in->src);
    cJSON_AddItemToArray(s->debug, o);
}

static int emit_inst(stream_t *s, const lnc_inst_t *in, int reloc, tpb_err_t *err)
{
    if (in->opc == LNC_OPC_SQI)
        return 0;   /* the queue instance is the core's own: no bundle */
    for (int p = 0; p < in->nprefix; p++) {
        uint8_t *b = stream_slot(s, err);
        if (!b)
            return -1;
        memcpy(b, in->prefix[p], ISA_BUNDLE_BYTES);
    }
    size_t pc = s->n;
    uint8_t *b = stream_slot(s, err);
    if (!b || encode_inst(in, reloc, b, err))
        return -1;
    debug_entry(s, pc, in);
    return 0;
}

/* Rewrite the sidecar: keep its other fields, replace the instruction count
 * and the debug map (pcs moved by the dispatcher prologue). */
static int write_sidecar(const char *dir, const char *eng, int core, stream_t *s,
                         const char *prologue, tpb_err_t *err)
{
    char path[4400];
    snprintf(path, sizeof path, "%.4200s/%s.json", dir, eng);
    cJSON *root = NULL;
    uint8_t *old;
    size_t len;
    if (fio_exists(path) && fio_read_all(path, &old, &len, err) == 0) {
        root = cJSON_ParseWithLength((const char *)old, len);
        free(old);
    }
    /* the debug map is rewritten below in the full form */
    cJSON_DeleteItemFromObjectCaseSensitive(root, "debug_form");
    if (!root) {
        root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "engine", eng);
        cJSON_AddNumberToObject(root, "core", core);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root, "instructions");
    cJSON_DeleteItemFromObjectCaseSensitive(root, "debug");
    cJSON_AddNumberToObject(root, "instructions", (double)s->n);
    cJSON_AddStringToObject(root, "linked", prologue);
    cJSON_AddItemToObject(root, "debug", s->debug);
    s->debug = NULL;
    char *txt = cJSON_Print(root);
    cJSON_Delete(root);
    if (!txt)
        return tpb_errf(err, "out of memory (sidecar)");
    int rc = fio_write_staged(path, txt, strlen(txt), err);
    free(txt);
    return rc;
}

/* A block whose last instruction is the completion barrier, right after
 * its Return (fpassInsertReturns): the barrier runs in the dispatcher,
 * once the function has returned. */
static bool ends_with_completion(const lnc_block_t *bl)
{
    return bl->n >= 2 && bl->insts[bl->n - 1].opc == BIR_CORE_BARRIER &&
           bl->insts[bl->n - 2].opc == LNC_OPC_RETURN;
}

static int emit_block(const lnc_module_t *m, const lnc_inst_t *call, const lnc_block_t *bl,
                      const char *dir, int core, tpb_err_t *err)
{
    stream_t s = {NULL, 0, 0, cJSON_CreateArray()};
    int rc = -1;
    /* the dispatcher's Call for this core: Call the body, [the completion
     * barrier once it returned,] Halt */
    bool cb = ends_with_completion(bl);
    int na = 0;   /* the call site's arguments (descriptor reuse) come first */
    while (na < bl->n && bl->insts[na].opc == LNC_OPC_ARG)
        na++;
    int body = cb ? 3 : 2, n = cb ? bl->n - 1 : bl->n;
    lnc_inst_t c = *call, h;
    c.isa.f.CALL.target = (uint32_t)(na + body);
    lnc_inst_init(&h, LNC_OPC_ISA, "halt_dispatcher");
    h.isa.op = ISA_OP_HALT;
    h.isa.l2 = isa_ops[ISA_OP_HALT].l2;
    for (int i = 0; i < na; i++)
        if (emit_inst(&s, &bl->insts[i], 0, err))
            goto out;
    if (emit_inst(&s, &c, 0, err) || (cb && emit_inst(&s, &bl->insts[bl->n - 1], 0, err)) ||
        emit_inst(&s, &h, 0, err))
        goto out;
    for (int i = na; i < n; i++)
        if (emit_inst(&s, &bl->insts[i], body, err))
            goto out;
    char path[4400];
    const char *eng = isa_engine_name((isa_engine_t)bl->engine);
    snprintf(path, sizeof path, "%.4200s/%s.bin", dir, eng);
    if (fio_write_staged(path, s.buf, s.n * ISA_BUNDLE_BYTES, err) ||
        write_sidecar(dir, eng, core, &s,
                      cb ? "dispatcher prologue: Call 3, completion CoreBarrier, Halt"
                         : "dispatcher prologue: Call 2, Halt",
                      err))
        goto out;
    rc = 0;
out:
    (void)m;
    free(s.buf);
    cJSON_Delete(s.debug);
    return rc;
}

static int emit_bound(const lnc_module_t *m, const char *root, tpb_err_t *err)
{
    if (m->nfuncs < 1 || m->funcs[0].nblocks < 1)
        return tpb_errf(err, "%s: no dispatcher", m->name);
    const lnc_block_t *disp = &m->funcs[0].blocks[0];
    for (int i = 0; i < disp->n; i++) {   /* main-first: follow the dispatcher */
        const lnc_inst_t *call = &disp->insts[i];
        if (call->opc != LNC_OPC_CALL || call->callee < 1 || call->callee >= m->nfuncs)
            return tpb_errf(err, "%s: dispatcher instruction '%s' is not a call of a core "
                                 "function",
                            m->name, call->name);
        const lnc_func_t *f = &m->funcs[call->callee];
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/nc%d/sg0", root, f->core);
        if (fio_mkdirs(dir, err))
            return -1;
        for (int b = 0; b < f->nblocks; b++)
            if (emit_block(m, call, &f->blocks[b], dir, f->core, err))
                return -1;
    }
    return 0;
}

/* Each core's section holds its instance bound for it (lnc_bind_instances). */
int lnc_emit_linked(const lnc_module_t *m, const char *root, tpb_err_t *err)
{
    if (m->ndefs == 0)
        return emit_bound(m, root, err);
    lnc_module_t view;
    if (lnc_bind_instances(m, &view, err))
        return -1;
    int rc = emit_bound(&view, root, err);
    lnc_module_free(&view);
    return rc;
}

/* ---- the link directory (setupLinkDir) ---- */

/* Write malloc'ed JSON text (NULL: out of memory) to path and free it. */
static int write_json_text(const char *path, char *txt, tpb_err_t *err)
{
    if (!txt)
        return tpb_errf(err, "%s: out of memory", path);
    int rc = fio_write_staged(path, txt, strlen(txt), err);
    free(txt);
    return rc;
}

static int symlink_rel(const char *target, const char *linkpath, tpb_err_t *err)
{
    unlink(linkpath);
    if (symlink(target, linkpath) != 0)
        return tpb_errf(err, "%s: cannot create symlink to %s: %s", linkpath, target,
                        strerror(errno));
    return 0;
}

/* sgLnk/: links to every core's constants (symlinkNpyFiles) and debug info
 * (symLinkDebugInfoFiles: nc<c>.<Engine>.json, nc<c>.def.json), the
 * unified tensor map, plus link.json (the linked module). */
static int setup_link_dir(const char *root, const lnc_module_t *lnk, tpb_err_t *err)
{
    char lnkdir[4200], path[4600], target[4600];
    snprintf(lnkdir, sizeof lnkdir, "%s/sgLnk", root);
    if (fio_mkdirs(lnkdir, err))
        return -1;
    for (int c = 0; c < lnk->ncores; c++) {
        char cdir[4200];
        snprintf(cdir, sizeof cdir, "%s/nc%d/sg0", root, c);
        DIR *d = opendir(cdir);
        if (!d)
            continue;
        struct dirent *e;
        int rc = 0;
        while ((e = readdir(d)) && !rc) {
            size_t l = strlen(e->d_name);
            bool npy = l >= 5 && !strcmp(e->d_name + l - 4, ".npy") &&
                       !strncmp(e->d_name, "const_", 6);
            /* symLinkDebugInfoFiles: the per-engine sidecars and def.json,
             * as nc<c>.<file> */
            bool dbg = l >= 6 && !strcmp(e->d_name + l - 5, ".json");
            if (!npy && !dbg)
                continue;
            snprintf(target, sizeof target, "../nc%d/sg0/%.255s", c, e->d_name);
            if (npy)
                snprintf(path, sizeof path, "%.4200s/%.255s", lnkdir, e->d_name);
            else
                snprintf(path, sizeof path, "%.4200s/nc%d.%.255s", lnkdir, c, e->d_name);
            rc = symlink_rel(target, path, err);
        }
        closedir(d);
        if (rc)
            return -1;
    }
    snprintf(path, sizeof path, "%s/tensor-map.json", lnkdir);
    if (symlink_rel("../tensor-map.json", path, err))
        return -1;
    snprintf(path, sizeof path, "%s/link.json", lnkdir);
    return write_json_text(path, lnc_module_json(lnk), err);
}

static int verify_tensor_map(const char *root, const lnc_module_t *lnk, tpb_err_t *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/tensor-map.json", root);
    return lnc_verify_tensor_map(lnk, path, err);
}

/* ---- driver ---- */

/* sync_shared_allocations: every core's view of a shared buffer takes the
 * one address of the shared layout. */
static void bind_hbm(lnc_split_t *s, const enc_hbm_layout_t *hbm)
{
    for (int c = 0; c < s->ncores; c++)
        for (int i = 0; i < s->core_m[c].nmlocs; i++) {
            lnc_mloc_t *ml = &s->core_m[c].mlocs[i];
            if (ml->space != ISA_SPACE_HBM || ml->tensor >= hbm->ntensors)
                continue;
            ml->addr = hbm->addr[ml->tensor];
            ml->bytes = enc_tensor_bytes(&s->core_k[c].tensors[ml->tensor]);
        }
}

static void add_stats(enc_stats_t *a, const enc_stats_t *b)
{
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        a->insts[e] += b->insts[e];
        for (int w = 0; w < 8; w++)
            a->engine_opcodes[e][w] |= b->engine_opcodes[e][w];
    }
    for (int v = 0; v < 256; v++)
        a->histogram[v] += b->histogram[v];
    a->sems += b->sems, a->queues += b->queues, a->waits += b->waits, a->nops += b->nops;
    a->sbuf_peak = a->sbuf_peak > b->sbuf_peak ? a->sbuf_peak : b->sbuf_peak;
    a->psum_peak = a->psum_peak > b->psum_peak ? a->psum_peak : b->psum_peak;
    a->hbm_bytes = b->hbm_bytes;
    a->files += b->files;
}

/* One program of the launch.  With max_ops (enc_compile_mc_limit), the
 * programs share that op limit (they are all held at once), so each one
 * after the first is unrolled under what the earlier ones left: a program
 * whose loops depend on pid is refused while it unrolls, before its memory
 * is used. */
static int parse_one(const char *path, const char *target, int pid, int np, int64_t max_ops,
                     int64_t used, tir_kernel_t *out, tpb_err_t *err)
{
    enc_front_opts_t fo = {target, pid, 0, NULL};
    if (max_ops > 0) {
        if (used >= max_ops)
            return tpb_errf(err, "program %d of %d: the programs before it unroll to %lld ops, "
                            "the op limit of the whole launch is %lld", pid, np,
                            (long long)used, (long long)max_ops);
        fo.max_ops = max_ops - used;   /* and each program's own guard */
        if (fo.max_ops > ENC_DEFAULT_MAX_OPS)
            fo.max_ops = ENC_DEFAULT_MAX_OPS;
    }
    if (enc_parse_kernel_file_opts(path, &fo, out, err) == 0)
        return 0;
    if (pid > 0 && max_ops > 0)
        tpb_err_prefix(err, "program %d of %d (the programs before it hold %lld ops of the "
                       "launch's op limit of %lld)", pid, np, (long long)used, (long long)max_ops);
    else if (pid > 0)
        tpb_err_prefix(err, "program %d of %d", pid, np);
    return -1;
}

static int parse_programs(const char *path, const char *target, int64_t max_ops,
                          tir_kernel_t **out, int *n, tpb_err_t *err)
{
    *out = NULL;
    *n = 0;
    tir_kernel_t first;
    if (parse_one(path, target, 0, 1, max_ops, 0, &first, err)) {
        tir_kernel_free(&first);
        return -1;
    }
    for (int i = 0; i < first.nloops; i++)
        if (first.loops[i].dynamic) {   /* the split drops loop records */
            tpb_errf(err, "%s: dynamic_range / fori_loop is supported in kernels of one "
                     "program on one core only (this launch has %d programs; the split per "
                     "program drops the loop: docs/compiler.md \"Dynamic loops\")",
                     first.loops[i].path, first.num_programs > 0 ? first.num_programs : 1);
            tir_kernel_free(&first);
            return -1;
        }
    int np = first.num_programs > 0 ? first.num_programs : 1;
    tir_kernel_t *p = calloc((size_t)np, sizeof *p);
    if (!p) {
        tir_kernel_free(&first);
        return tpb_errf(err, "out of memory");
    }
    p[0] = first;
    *out = p;
    *n = 1;
    int64_t used = first.nops;
    for (int i = 1; i < np; i++) {
        if (parse_one(path, target, i, np, max_ops, used, &p[i], err)) {
            tir_kernel_free(&p[i]);
            return -1;
        }
        used += p[i].nops;
        *n = i + 1;
    }
    return 0;
}

/* placement.json: which launch-grid instance ran on which core (NKI
 * program ids per axis), docs/multicore.md; the simulator copies it into
 * stats.json and the trace. */
static int write_placement(const tir_kernel_t *progs, int np, int ncores, const char *dir,
                           tpb_err_t *err)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return tpb_errf(err, "out of memory (placement)");
    cJSON_AddStringToObject(root, "format", "tpbsim-placement");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON *g = cJSON_AddArrayToObject(root, "grid");
    int nd = progs[0].grid_ndim >= 1 && progs[0].grid_ndim <= 4 ? progs[0].grid_ndim : 1;
    for (int d = 0; d < nd; d++)
        cJSON_AddItemToArray(g, cJSON_CreateNumber((double)progs[0].grid_dims[d]));
    cJSON_AddNumberToObject(root, "num_cores", ncores);
    cJSON *in = cJSON_AddArrayToObject(root, "instances");
    for (int p = 0; p < np; p++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "instance", p);
        cJSON *ids = cJSON_AddArrayToObject(o, "program_id");
        int64_t rest = p, id[4] = {0};
        for (int d = nd - 1; d >= 0; d--) {
            int64_t n = progs[0].grid_dims[d] > 0 ? progs[0].grid_dims[d] : 1;
            id[d] = rest % n;
            rest /= n;
        }
        for (int d = 0; d < nd; d++)
            cJSON_AddItemToArray(ids, cJSON_CreateNumber((double)id[d]));
        cJSON_AddNumberToObject(o, "core", lnc_core_of(progs, p));
        cJSON_AddItemToArray(in, o);
    }
    char *txt = cJSON_Print(root);
    cJSON_Delete(root);
    if (!txt)
        return tpb_errf(err, "out of memory (placement)");
    char path[4200];
    snprintf(path, sizeof path, "%s/placement.json", dir);
    size_t n = strlen(txt);
    int rc = fio_write_staged(path, txt, n, err);
    free(txt);
    return rc;
}

static void free_programs(tir_kernel_t *p, int n)
{
    for (int i = 0; i < n; i++)
        tir_kernel_free(&p[i]);
    free(p);
}

/* sgLnk/bir_link.json: the merged backend-IR module after allocation. */
static int write_bir_link(const lnc_bir_module_t *lm, const char *tmp, tpb_err_t *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/sgLnk", tmp);
    if (fio_mkdirs(path, err))
        return -1;
    snprintf(path, sizeof path, "%s/sgLnk/bir_link.json", tmp);
    return write_json_text(path, lnc_bir_module_json(lm), err);
}

/* The state the back-end passes share (compile_cores). */
typedef struct {
    lnc_split_t *s;
    const tpb_target_t *t;
    const enc_hbm_layout_t *hbm;
    const enc_options_t *o;
    const char *tmp;
    enc_stats_t *st;
    enc_core_t *cc;            /* per-core modules until the link */
    enc_stats_t *cs;
    lnc_bir_module_t lm;       /* the merged module */
    const lnc_pass_manager_t *pm;
} mc_pipe_t;

/* main pipeline (per core): allocation, lowering, engines, DMA queues */
static int pass_main_pipeline(void *ctx, int c, tpb_err_t *err)
{
    mc_pipe_t *p = ctx;
    return enc_core_prelink(&p->s->core_k[c], c, p->t, p->hbm, p->o, &p->cc[c], &p->cs[c], err);
}

/* bir_linker (L1, core-parallel): the per-core modules become one merged
 * module and are destroyed */
static int pass_bir_linker(void *ctx, int core, tpb_err_t *err)
{
    mc_pipe_t *p = ctx;
    (void)core;
    if (lnc_bir_link(p->cc, p->s->ncores, p->s->core_k[0].name, &p->lm, err))
        return -1;
    for (int c = 0; c < p->s->ncores; c++)
        enc_core_free(&p->cc[c]);
    return 0;
}

static int pass_alloc_semaphores(void *ctx, int core, tpb_err_t *err)
{
    (void)core;
    return lnc_bir_alloc_semaphores(&((mc_pipe_t *)ctx)->lm, err);
}

static int pass_alloc_registers(void *ctx, int core, tpb_err_t *err)
{
    (void)core;
    return lnc_bir_alloc_registers(&((mc_pipe_t *)ctx)->lm, err);
}

/* per function of the merged module: synchroniser, rolled loops, codegen
 * into nc<c>/sg0/ (the streams are read back as the sgLnk functions) */
static int pass_codegen(void *ctx, int core, tpb_err_t *err)
{
    mc_pipe_t *p = ctx;
    (void)core;
    bool write = p->o->mode == ENC_RUN_ISA_CHECKS;
    for (int i = 0; i < p->pm->npasses; i++) {
        p->lm.pass_name[i] = p->pm->passes[i].name;
        p->lm.pass_kind[i] = lnc_pass_kind_name(p->pm->passes[i].kind);
    }
    p->lm.npasses = p->pm->npasses;
    if (write && write_bir_link(&p->lm, p->tmp, err))
        return -1;
    for (int i = 0; i < p->lm.nfuncs; i++) {
        lnc_bir_func_t *f = &p->lm.funcs[i];
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/nc%d/sg0", p->tmp, f->core);
        if (write && fio_mkdirs(dir, err))
            return -1;
        tpb_err_t ce = {{0}};
        if (enc_core_postlink(&f->body, p->o, write ? dir : NULL, &p->cs[f->core], &ce))
            return tpb_errf(err, "core %d: %s", f->core, ce.msg);
        add_stats(p->st, &p->cs[f->core]);
        if (write && lnc_load_core_artifacts(&p->s->core_m[f->core], dir,
                                              p->s->core_k[f->core].nops == 0, err))
            return -1;
    }
    return 0;
}

/* The pipeline in the seed's order (docs/multicore.md "Pipeline"),
 * registered with the pass manager: the per-core main pipeline, the
 * backend-IR link as a core-parallel pass (L1), alloc_semaphores over the
 * unified pool and the post-link register allocator on the merged module,
 * then synchronisation, rolled loops and codegen per function; the
 * per-core streams are read back as the sgLnk module's functions. */
static int compile_cores(lnc_split_t *s, const tpb_target_t *t, const enc_hbm_layout_t *hbm,
                         const enc_options_t *o, const char *tmp, enc_stats_t *st, tpb_err_t *err)
{
    lnc_pass_manager_t pm;
    mc_pipe_t p = {s, t, hbm, o, tmp, st, calloc((size_t)s->ncores, sizeof *p.cc),
                   calloc((size_t)s->ncores, sizeof *p.cs), {.name = ""}, &pm};
    int rc = -1;
    lnc_pm_init(&pm, s->ncores);
    if (!p.cc || !p.cs) {
        tpb_errf(err, "out of memory (per-core modules)");
        goto out;
    }
    if (lnc_pm_add(&pm, "main_pipeline", LNC_PASS_PER_CORE, pass_main_pipeline, err) ||
        lnc_pm_add(&pm, "bir_linker", LNC_PASS_CORE_PARALLEL, pass_bir_linker, err) ||
        lnc_pm_add(&pm, "alloc_semaphores", LNC_PASS_WHOLE_PROGRAM, pass_alloc_semaphores, err) ||
        lnc_pm_add(&pm, "coloring_allocator_reg", LNC_PASS_WHOLE_PROGRAM, pass_alloc_registers,
                   err) ||
        lnc_pm_add(&pm, "codegen", LNC_PASS_WHOLE_PROGRAM, pass_codegen, err) ||
        lnc_pm_run(&pm, &p, err))
        goto out;
    rc = 0;
out:
    for (int c = 0; p.cc && c < s->ncores; c++)
        enc_core_free(&p.cc[c]);
    free(p.cc);
    free(p.cs);
    lnc_bir_module_free(&p.lm);
    return rc;
}

/* Every pulled tile at one SBUF address on every core.  Diverging programs
 * have their pulled tiles pinned first.  Uniform programs (the same tensors
 * and op kinds) usually allocate alike, but their operands may differ with
 * pid (moe_cte's exchanged tile came out at two offsets): only then are
 * they pinned, so allocations that already agree stay as they are. */
static int coll_addresses_agree(lnc_split_t *s, const tpb_target_t *t,
                                const enc_hbm_layout_t *hbm, tpb_err_t *err)
{
    if (s->diverged)
        return lnc_coll_pin_addresses(s->core_k, s->ncores, t, hbm, err) ||
               lnc_coll_check_addresses(s->core_k, s->ncores, t, hbm, err);
    tpb_err_t first;
    memset(&first, 0, sizeof first);
    if (!lnc_coll_check_addresses(s->core_k, s->ncores, t, hbm, &first))
        return 0;
    return lnc_coll_pin_addresses(s->core_k, s->ncores, t, hbm, err) ||
           lnc_coll_check_addresses(s->core_k, s->ncores, t, hbm, err);
}

int enc_compile_mc(const char *kernel_path, const enc_options_t *opts, enc_stats_t *stats,
                   tpb_err_t *err)
{
    return enc_compile_mc_limit(kernel_path, opts, 0, stats, err);
}

int enc_compile_mc_limit(const char *kernel_path, const enc_options_t *opts, int64_t max_ops,
                         enc_stats_t *stats, tpb_err_t *err)
{
    enc_options_t o = opts ? *opts : (enc_options_t){.mode = ENC_RUN_ISA_CHECKS};
    enc_stats_t local;
    enc_stats_t *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    if (enc_check_mode(o.mode, err))
        return -1;
    if (o.mode == ENC_RUN_ISA_CHECKS && (!o.out_dir || !o.out_dir[0]))
        return tpb_errf(err, "no output directory given");
    tir_kernel_t *progs = NULL;
    int np = 0, rc = -1;
    lnc_split_t s;
    memset(&s, 0, sizeof s);
    lnc_module_t lnk;
    memset(&lnk, 0, sizeof lnk);
    enc_hbm_layout_t hbm = {.addr = NULL};
    char tmp[4096] = "", outp[4096] = "";
    if (parse_programs(kernel_path, o.target, max_ops, &progs, &np, err) ||
        lnc_split(progs, np, &s, err))
        goto out;
    const tpb_target_t *t = tpb_target_get(o.target ? o.target : progs[0].target);
    if (!t)
        t = tpb_target_default();
    if ((unsigned)s.ncores > t->max_cores) {
        tpb_errf(err, "kernel '%s' runs on %d cores; target %s has %u", progs[0].name, s.ncores,
                 t->name, t->max_cores);
        goto out;
    }
    if (enc_hbm_layout(&s.core_k[0], &hbm, err) || lnc_color_dram_shared(&s, &hbm, err))
        goto out;
    if (enc_check_hbm_fits(&hbm, t, err))
        goto out;
    bind_hbm(&s, &hbm);
    if (o.mode == ENC_RUN_ISA_CHECKS) {
        if (art_begin_dir(o.out_dir, outp, sizeof outp, tmp, sizeof tmp, err))
            goto out;
        o.out_dir = outp;
        if (fio_mkdirs(tmp, err))
            goto out;
    }
    /* dry_run: the link's feasibility checks before any core is compiled */
    if (lnc_link_dry_run(s.core_m, s.ncores, err) ||
        coll_addresses_agree(&s, t, &hbm, err) ||
        compile_cores(&s, t, &hbm, &o, tmp, st, err))
        goto out;
    if (o.mode == ENC_RUN_ISA_CHECKS) {
        if (lnc_renumber_core_barriers_premerge(s.core_m, s.ncores, 0) < 0) {
            tpb_errf(err, "out of memory (pre-merge barrier renumber)");
            goto out;
        }
        if (lnc_link(s.core_m, s.ncores, s.rlts, s.nrlts, &lnk, err) ||
            (o.dma_desc_reuse && lnc_dma_desc_reuse(&lnk, err)) ||
            lnc_check_waits(&lnk, err) ||
            enc_write_tensor_map(&s.core_k[0], t, &hbm, tmp, err) ||
            write_placement(progs, np, s.ncores, tmp, err) ||
            verify_tensor_map(tmp, &lnk, err) || setup_link_dir(tmp, &lnk, err) ||
            lnc_emit_linked(&lnk, tmp, err) ||
            (o.fsync && fio_fsync_tree(tmp, err)) || art_install_dir(tmp, o.out_dir, err))
            goto out;
        tmp[0] = 0;
    }
    rc = 0;
out:
    if (tmp[0])
        art_rmtree(tmp);
    lnc_module_free(&lnk);
    enc_hbm_layout_free(&hbm);
    lnc_split_free(&s);
    free_programs(progs, np);
    return rc;
}
