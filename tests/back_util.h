/* back_util.h - helpers shared by the back-end tests: build tile IR by hand
 * and run the back-end passes. */
#ifndef TPB_BACK_UTIL_H
#define TPB_BACK_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

/* The kernel JSON of scripts/bench_compile.py compile_mixed_kernel(iters):
 * 4 tiles per iteration, a sliced load, DVE / Act / Pool ops, a sliced
 * store (buf: at least 2048 bytes). */
static inline void bu_mixed_kernel_text(char *buf, size_t n, int iters)
{
    const char *sl = "[(i%2)*128:(i%2)*128+128, :]";
    snprintf(buf, n,
             "{\"kernel\": \"compile_mixed\", \"target\": \"trn2\", "
             "\"inputs\": [{\"name\": \"a\", \"shape\": [256, 64], \"dtype\": \"float32\"}], "
             "\"outputs\": [{\"name\": \"out\", \"shape\": [256, 64], \"dtype\": \"float32\"}], "
             "\"body\": [{\"op\": \"for\", \"var\": \"i\", \"range\": [0, %d], \"body\": ["
             "{\"op\": \"tile\", \"name\": \"t\", \"shape\": [128, 64], \"dtype\": \"float32\"}, "
             "{\"op\": \"tile\", \"name\": \"u\", \"shape\": [128, 64], \"dtype\": \"float32\"}, "
             "{\"op\": \"tile\", \"name\": \"v\", \"shape\": [128, 64], \"dtype\": \"float32\"}, "
             "{\"op\": \"tile\", \"name\": \"w\", \"shape\": [128, 64], \"dtype\": \"float32\"}, "
             "{\"op\": \"load\", \"dst\": \"t\", \"src\": \"a%s\"}, "
             "{\"op\": \"tensor_scalar\", \"dst\": \"u\", \"src\": \"t\", \"op0\": \"add\", "
             "\"operand0\": 1.0, \"engine\": \"dve\"}, "
             "{\"op\": \"activation\", \"dst\": \"v\", \"src\": \"u\", \"func\": \"exp\", "
             "\"engine\": \"act\"}, "
             "{\"op\": \"tensor_tensor\", \"dst\": \"w\", \"in0\": \"v\", \"in1\": \"t\", "
             "\"operator\": \"add\", \"engine\": \"pool\"}, "
             "{\"op\": \"store\", \"dst\": \"out%s\", \"src\": \"w\"}]}]}",
             iters, sl, sl);
}

static inline int bu_tensor(tir_kernel_t *k, const char *name, tir_tensor_kind_t kind, unsigned dt,
                            int ndim, const int64_t *shape)
{
    tir_tensor_t t;
    memset(&t, 0, sizeof t);
    t.name = name;   /* tir_add_tensor copies name and path */
    t.kind = kind;
    t.dtype = dt;
    t.ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t.shape[i] = shape[i];
    char path[TIR_PATH_LEN];
    snprintf(path, sizeof path, "decl.%s", name);
    t.path = path;
    t.shared_with = -1;
    return tir_add_tensor(k, &t);
}

#define BU_T(k, name, kind, dt, ...) \
    bu_tensor((k), (name), (kind), (dt), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
              (int64_t[]){__VA_ARGS__})

/* The whole tensor, row-major. */
static inline tir_ap_t bu_full(const tir_kernel_t *k, int t)
{
    tir_ap_t a;
    memset(&a, 0, sizeof a);
    a.tensor = t;
    const tir_tensor_t *tt = &k->tensors[t];
    a.ndim = tt->ndim;
    int64_t s = 1;
    for (int d = tt->ndim - 1; d >= 0; d--) {
        a.step[d] = s;
        a.count[d] = tt->shape[d];
        s *= tt->shape[d];
    }
    return a;
}

/* Raw AP: offset, then (step, count) pairs outermost first. */
static inline tir_ap_t bu_ap(int t, int64_t off, int ndim, ...)
{
    tir_ap_t a;
    memset(&a, 0, sizeof a);
    a.tensor = t;
    a.offset = off;
    a.ndim = ndim;
    va_list ap;
    va_start(ap, ndim);
    for (int d = 0; d < ndim; d++) {
        a.step[d] = va_arg(ap, int64_t);
        a.count[d] = va_arg(ap, int64_t);
    }
    va_end(ap);
    return a;
}

/* An op operand: ap interned into k's pool (tir_ap_intern); aborts the
 * test on out-of-memory. */
static inline const tir_ap_t *bu_in(tir_kernel_t *k, tir_ap_t ap)
{
    const tir_ap_t *r = tir_ap_intern(k, &ap);
    if (!r)
        abort();
    return r;
}

/* An op's rare fields interned into k (tir_rare_intern); aborts the test
 * on out-of-memory. */
static inline const tir_op_rare_t *bu_rare(tir_kernel_t *k, tir_op_rare_t r)
{
    const tir_op_rare_t *p = tir_rare_intern(k, &r);
    if (!p)
        abort();
    return p;
}

/* The whole tensor as an op operand (bu_full interned into k). */
static inline const tir_ap_t *bu_whole(tir_kernel_t *k, int t) { return bu_in(k, bu_full(k, t)); }

/* Change one field of an op operand (records are shared, never written):
 * copy, edit, re-intern into k. */
#define BU_EDIT(k, opnd, field, value)    \
    do {                                  \
        tir_ap_t bu_e_ = *(opnd);         \
        bu_e_.field = (value);            \
        (opnd) = bu_in((k), bu_e_);       \
    } while (0)

static inline int bu_op(tir_kernel_t *k, tir_op_t *op, const char *name)
{
    if (!(op->name = tir_name(k, name)))
        return -1;
    char path[TIR_PATH_LEN];
    snprintf(path, sizeof path, "body[%d]", k->nops);
    if (!(op->path = tir_intern(k, path)))
        return -1;
    return tir_add_op(k, op);
}

/* 256-bit opcode sets, for comparing what a compile wrote with what it
 * reported.  Add the opcode byte (byte 0) of every 64-byte bundle in buf. */
static inline void bu_opset_add_bundles(uint32_t set[8], const uint8_t *buf, size_t len)
{
    for (size_t b = 0; b < len; b += 64)
        set[buf[b] >> 5] |= 1u << (buf[b] & 31);
}

/* The opcode set a compile reported, twice: the union of the per-engine
 * COLLECT sets, and the keys of the histogram. */
static inline void bu_opsets_of_stats(const enc_stats_t *st, uint32_t collect[8], uint32_t hist[8])
{
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        for (int w = 0; w < 8; w++)
            collect[w] |= st->engine_opcodes[e][w];
    for (unsigned v = 0; v < 256; v++)
        if (st->histogram[v])
            hist[v >> 5] |= 1u << (v & 31);
}

/* Run HBM layout, allocation, lowering and (optionally) scheduling. */
typedef struct {
    bir_module_t m;
    enc_hbm_layout_t hbm;
    enc_stats_t st;
    tpb_err_t err;
} bu_run_t;

static inline int bu_lower(bu_run_t *r, const tir_kernel_t *k, const tpb_target_t *t, bool sched)
{
    memset(r, 0, sizeof *r);
    if (enc_hbm_layout(k, &r->hbm, &r->err) || bir_module_init(&r->m, 0, k->ntensors, &r->err))
        return -1;
    lower_ctx_t c = {.k = k, .t = t, .m = &r->m, .err = &r->err, .ident_hbm = -1, .ident_tile = -1};
    if (alloc_kernel(k, t, &r->hbm, &r->m, &r->st, &r->err) || lower_kernel(&c))
        return -1;
    if (sched && (sched_assign_engines(&r->m, t, &r->err) || sched_assign_queues(&r->m, t, &r->err) ||
                  sched_synchronise(&r->m, &r->st, &r->err)))
        return -1;
    return 0;
}

/* Compile k for trn2 in `mode` into dir (NULL for GENERATE_ISACODE),
 * staging the bundles in *sv when given; prints the error on failure. */
static inline int bu_compile(const tir_kernel_t *k, const char *dir, int mode, enc_staging_t *sv,
                             enc_stats_t *st)
{
    enc_options_t o = {dir, "trn2", mode, false, 0, false, false, false, false, 0, NULL};
    tpb_err_t err;
    int rc = enc_compile_staged(k, &o, sv, st, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    return rc;
}

static inline void bu_free(bu_run_t *r)
{
    bir_module_free(&r->m);
    enc_hbm_layout_free(&r->hbm);
}

static inline bir_block_t *bu_block(bu_run_t *r) { return bir_main_block(&r->m); }

/* Index of the n-th instruction (0-based) with ISA op `op`, or -1. */
static inline int bu_find(bu_run_t *r, isa_op_t op, int n)
{
    bir_block_t *b = bu_block(r);
    for (int i = 0; i < b->ninsts; i++)
        if (b->insts[i].isa.op == op && n-- == 0)
            return i;
    return -1;
}

/* The first instruction named `name` (its tile-IR op's name), or NULL. */
static inline bir_inst_t *bu_named(bu_run_t *r, const char *name)
{
    bir_block_t *b = bu_block(r);
    for (int i = 0; i < b->ninsts; i++)
        if (strcmp(b->insts[i].name, name) == 0)
            return &b->insts[i];
    return NULL;
}

static inline int bu_count(bu_run_t *r, isa_op_t op)
{
    int n = 0;
    bir_block_t *b = bu_block(r);
    for (int i = 0; i < b->ninsts; i++)
        n += b->insts[i].isa.op == op;
    return n;
}

#endif
