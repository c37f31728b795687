/* tpb.c - libtpb: the stable C API (lib/tpb.h) over the front-end, the
 * back-end and the simulator.  No globals; every call fills the context's
 * error and returns -1 on failure; nothing here prints or exits. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tpb.h"

#include "compile.h"
#include "fileio.h"
#include "frontend.h"
#include "lnc.h"
#include "mem_budget.h"
#include "npy.h"
#include "sim.h"
#include "target.h"

#define TPB_EXPORT __attribute__((visibility("default")))

struct tpb_ctx {
    tpb_err_t err;
    int64_t bundles;
    sim_t *sim;
    bool ran;
    npy_array_t fetched;
    bool have_fetched;
    char *stats;
    uint64_t max_memory;   /* compile memory budget in bytes, 0: the default */
};

static int fail(tpb_ctx_t *c, const char *what)
{
    if (what && what[0])
        snprintf(c->err.msg, sizeof c->err.msg, "%s", what);
    return -1;
}

TPB_EXPORT int tpb_v1_api_version(void)
{
    return TPB_API_VERSION;
}

TPB_EXPORT tpb_ctx_t *tpb_v1_new(void)
{
    return calloc(1, sizeof(tpb_ctx_t));
}

static void drop_fetched(tpb_ctx_t *c)
{
    if (c->have_fetched)
        npy_free(&c->fetched);
    c->have_fetched = false;
}

static void drop_sim(tpb_ctx_t *c)
{
    drop_fetched(c);
    free(c->stats);
    c->stats = NULL;
    if (c->sim)
        sim_free(c->sim);
    c->sim = NULL;
    c->ran = false;
}

TPB_EXPORT void tpb_v1_free(tpb_ctx_t *c)
{
    if (!c)
        return;
    drop_sim(c);
    free(c);
}

TPB_EXPORT const char *tpb_v1_error(const tpb_ctx_t *c)
{
    return c ? c->err.msg : "no context (tpb_v1_new failed?)";
}

static int check_target(tpb_ctx_t *c, const char *target)
{
    if (target && !tpb_target_get(target))
        return tpb_errf(&c->err, "unknown target '%s' (known: %s)", target, tpb_target_names());
    return 0;
}

/* The start of every compile call: clear the error, check the arguments
 * (`missing` names what is absent when have_args is false) and the target. */
static int begin(tpb_ctx_t *c, bool have_args, const char *missing, const char *target)
{
    c->err.msg[0] = 0;
    if (!have_args)
        return fail(c, missing);
    return check_target(c, target);
}

/* The budget's note (how to raise the op limit) after the message. */
static void add_note(tpb_ctx_t *c, const enc_budget_t *b, bool after)
{
    char note[512];
    enc_budget_note(b, after, c->err.msg, note, sizeof note);
    size_t n = strlen(c->err.msg);
    if (note[0] && n < sizeof c->err.msg)
        snprintf(c->err.msg + n, sizeof c->err.msg - n, "\nnote: %s", note);
}

/* Parse program 0 of the kernel text (or, text NULL, of the file path)
 * under the context's memory budget, as `tpb compile --max-memory`: the
 * budget's op limit holds while it unrolls.  k is released by the caller. */
static int parse_budgeted(tpb_ctx_t *c, enc_budget_t *b, const char *text, size_t len,
                          const char *path, const char *base_dir, const char *target,
                          tir_kernel_t *k)
{
    enc_budget_init(b, c->max_memory, "max_memory");
    enc_front_opts_t fo = {target, 0, b->front_max_ops, NULL};
    int rc = text ? enc_parse_kernel_json_opts(text, len, path, base_dir, &fo, k, &c->err)
                  : enc_parse_kernel_file_opts(path, &fo, k, &c->err);
    if (rc)
        add_note(c, b, false);
    return rc;
}

TPB_EXPORT int tpb_v1_set_max_memory(tpb_ctx_t *c, uint64_t bytes)
{
    if (!c)
        return -1;
    c->err.msg[0] = 0;
    c->max_memory = bytes;
    return 0;
}

TPB_EXPORT int tpb_v1_check_json(tpb_ctx_t *c, const char *text, size_t len,
                                 const char *source_name, const char *base_dir,
                                 const char *target, int64_t *nops, int *nprograms)
{
    if (!c || begin(c, text != NULL, "no kernel text given", target))
        return -1;
    enc_budget_t b;
    tir_kernel_t k;
    int rc = parse_budgeted(c, &b, text, len, source_name ? source_name : "kernel", base_dir,
                            target, &k);
    if (!rc) {
        if (nops)
            *nops = k.nops;
        if (nprograms)
            *nprograms = k.num_programs;
    }
    tir_kernel_free(&k);
    return rc ? -1 : 0;
}

static int64_t sum_bundles(const enc_stats_t *st)
{
    int64_t n = 0;
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        n += st->insts[e];
    return n;
}

/* The multi-core driver reads a kernel file once per program: write the
 * text to a private temporary file and name it `source_name` in messages. */
static int compile_mc_text(tpb_ctx_t *c, const char *text, size_t len, const char *source_name,
                           const enc_options_t *o, int64_t max_ops, enc_stats_t *st)
{
    char dir[] = "/tmp/tpb-lib-XXXXXX";
    if (!mkdtemp(dir))
        return tpb_errf(&c->err, "cannot create a temporary directory under /tmp");
    char path[64];
    snprintf(path, sizeof path, "%s/kernel.json", dir);
    int rc = fio_write_atomic(path, text, len, &c->err);
    if (!rc)
        rc = enc_compile_mc_limit(path, o, max_ops, st, &c->err);
    unlink(path);
    rmdir(dir);
    if (rc) {
        /* name the caller's source instead of the temporary file */
        char *p = strstr(c->err.msg, path);
        if (p) {
            char tail[sizeof c->err.msg];
            snprintf(tail, sizeof tail, "%s", p + strlen(path));
            snprintf(p, sizeof c->err.msg - (size_t)(p - c->err.msg), "%s%s", source_name, tail);
        } else {
            tpb_err_prefix(&c->err, "%s", source_name);
        }
        return -1;
    }
    return 0;
}

TPB_EXPORT int tpb_v1_compile_json(tpb_ctx_t *c, const char *text, size_t len,
                                   const char *source_name, const char *base_dir,
                                   const char *target, const char *out_dir)
{
    if (!c || begin(c, text && out_dir, "compile: no kernel text or no output directory given",
                    target))
        return -1;
    const char *src = source_name ? source_name : "kernel";
    enc_budget_t b;
    tir_kernel_t k;
    if (parse_budgeted(c, &b, text, len, src, base_dir, target, &k) ||
        enc_budget_check(&b, &k, false, src, &c->err)) {
        tir_kernel_free(&k);
        return -1;
    }
    enc_options_t o = {.out_dir = out_dir, .target = target, .mode = ENC_RUN_ISA_CHECKS};
    enc_stats_t st;
    memset(&st, 0, sizeof st);
    int rc;
    if (b.mc) {
        tir_kernel_free(&k);
        rc = compile_mc_text(c, text, len, src, &o, b.mc_ops, &st);
        if (rc)
            add_note(c, &b, true);
    } else {
        rc = enc_compile_release(&k, &o, &st, &c->err);   /* k is freed next */
        tir_kernel_free(&k);
        if (rc)
            tpb_err_prefix(&c->err, "%s", src);
    }
    if (!rc)
        c->bundles = sum_bundles(&st);
    return rc ? -1 : 0;
}

TPB_EXPORT int tpb_v1_compile_file(tpb_ctx_t *c, const char *path, const char *target,
                                   const char *out_dir)
{
    if (!c || begin(c, path && out_dir, "compile: no kernel file or no output directory given",
                    target))
        return -1;
    enc_budget_t b;
    tir_kernel_t k;
    if (parse_budgeted(c, &b, NULL, 0, path, NULL, target, &k) ||
        enc_budget_check(&b, &k, false, path, &c->err)) {
        tir_kernel_free(&k);
        return -1;
    }
    enc_options_t o = {.out_dir = out_dir, .target = target, .mode = ENC_RUN_ISA_CHECKS};
    enc_stats_t st;
    memset(&st, 0, sizeof st);
    int rc = b.mc ? enc_compile_mc_limit(path, &o, b.mc_ops, &st, &c->err)
                  : enc_compile_release(&k, &o, &st, &c->err);
    tir_kernel_free(&k);
    if (rc) {
        tpb_err_prefix(&c->err, "%s", path);
        add_note(c, &b, true);
        return -1;
    }
    c->bundles = sum_bundles(&st);
    return 0;
}

TPB_EXPORT int64_t tpb_v1_compiled_bundles(const tpb_ctx_t *c)
{
    return c ? c->bundles : 0;
}

TPB_EXPORT int tpb_v1_sim_load(tpb_ctx_t *c, const char *artifact_dir, const char *target,
                               int trace)
{
    if (!c)
        return -1;
    c->err.msg[0] = 0;
    drop_sim(c);
    if (!artifact_dir)
        return fail(c, "sim: no artifact directory given");
    if (check_target(c, target))
        return -1;
    sim_options_t o;
    sim_options_default(&o);
    o.target = target ? tpb_target_get(target) : NULL;
    o.trace = trace != 0;
    return sim_load(artifact_dir, &o, &c->sim, &c->err) ? -1 : 0;
}

static int dtype_of_descr(const char *descr, unsigned *dt)
{
    if (!descr)
        return -1;
    for (unsigned d = 0; d < ISA_DT_COUNT; d++) {
        const char *n = npy_descr(d);
        if (n && !strcmp(n, descr)) {
            *dt = d;
            return 0;
        }
    }
    if (!strcmp(descr, "|b1")) {
        *dt = ISA_DT_UINT8;
        return 0;
    }
    return -1;
}

static int need_sim(tpb_ctx_t *c, bool ran)
{
    c->err.msg[0] = 0;
    if (!c->sim)
        return fail(c, "sim: no artifact loaded (call tpb_v1_sim_load first)");
    if (ran && !c->ran)
        return fail(c, "sim: the kernel has not run yet (call tpb_v1_sim_run first)");
    return 0;
}

TPB_EXPORT int tpb_v1_sim_set_input(tpb_ctx_t *c, const char *name, const char *descr, int ndim,
                                    const int64_t *shape, const void *data, size_t nbytes)
{
    if (!c || need_sim(c, false))
        return -1;
    if (!name)
        return fail(c, "input: no name given");
    npy_array_t a;
    memset(&a, 0, sizeof a);
    if (dtype_of_descr(descr, &a.dtype))
        return tpb_errf(&c->err, "input '%s': unsupported dtype '%s'", name,
                        descr ? descr : "(null)");
    if (ndim < 0 || ndim > NPY_MAX_DIMS || (ndim && !shape))
        return tpb_errf(&c->err, "input '%s': rank %d (0..%d allowed)", name, ndim, NPY_MAX_DIMS);
    a.ndim = ndim;
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (shape[i] && count > SIZE_MAX / (size_t)shape[i]))
            return tpb_errf(&c->err, "input '%s': bad dimension %d (%lld)", name, i,
                            (long long)shape[i]);
        a.shape[i] = shape[i];
        count *= (size_t)shape[i];
    }
    size_t es = isa_dtype_size(a.dtype);
    if (count > SIZE_MAX / es || count * es != nbytes || (nbytes && !data))
        return tpb_errf(&c->err, "input '%s': %zu bytes given for %zu elements of %s", name,
                        nbytes, count, descr);
    a.count = count;
    a.data = (void *)data;   /* read only: sim_set_input copies */
    return sim_set_input(c->sim, name, &a, &c->err) ? -1 : 0;
}

TPB_EXPORT int tpb_v1_sim_run(tpb_ctx_t *c)
{
    if (!c || need_sim(c, false))
        return -1;
    if (c->ran)
        return fail(c, "sim: this artifact already ran (load it again to rerun)");
    char missing[512];
    if (sim_missing_inputs(c->sim, missing, sizeof missing) > 0 || missing[0])
        return tpb_errf(&c->err, "sim: inputs not given: %s", missing);
    c->ran = true;   /* sim_run may be called once per sim_t, even if it fails */
    return sim_run(c->sim, &c->err) ? -1 : 0;
}

static int fetch(tpb_ctx_t *c, const char *name, bool bits, char descr[8], int *ndim,
                 int64_t shape[8], size_t *nbytes)
{
    if (!c || need_sim(c, true))
        return -1;
    drop_fetched(c);
    if (!name || !descr || !ndim || !shape || !nbytes)
        return fail(c, "fetch: missing argument");
    if (sim_get_tensor_as(c->sim, name, bits, &c->fetched, &c->err))
        return -1;
    c->have_fetched = true;
    const char *d = npy_descr(c->fetched.dtype);
    snprintf(descr, 8, "%s", d ? d : "<f4");
    *ndim = c->fetched.ndim;
    for (int i = 0; i < c->fetched.ndim && i < 8; i++)
        shape[i] = c->fetched.shape[i];
    *nbytes = c->fetched.count * isa_dtype_size(c->fetched.dtype);
    return 0;
}

TPB_EXPORT int tpb_v1_sim_fetch(tpb_ctx_t *c, const char *name, char descr[8], int *ndim,
                                int64_t shape[8], size_t *nbytes)
{
    return fetch(c, name, false, descr, ndim, shape, nbytes);
}

TPB_EXPORT int tpb_v1_sim_fetch_bits(tpb_ctx_t *c, const char *name, char descr[8], int *ndim,
                                     int64_t shape[8], size_t *nbytes)
{
    return fetch(c, name, true, descr, ndim, shape, nbytes);
}

TPB_EXPORT int tpb_v1_sim_fetch_copy(tpb_ctx_t *c, void *buf, size_t nbytes)
{
    if (!c)
        return -1;
    c->err.msg[0] = 0;
    if (!c->have_fetched)
        return fail(c, "fetch: nothing fetched (call tpb_v1_sim_fetch first)");
    size_t n = c->fetched.count * isa_dtype_size(c->fetched.dtype);
    if (nbytes != n || (n && !buf))
        return tpb_errf(&c->err, "fetch: buffer of %zu bytes for a %zu-byte tensor", nbytes, n);
    if (n)
        memcpy(buf, c->fetched.data, n);
    drop_fetched(c);
    return 0;
}

TPB_EXPORT uint64_t tpb_v1_sim_cycles(const tpb_ctx_t *c)
{
    if (!c || !c->sim || !c->ran)
        return 0;
    sim_summary_t s;
    sim_get_summary(c->sim, &s);
    return s.total_cycles;
}

TPB_EXPORT const char *tpb_v1_sim_stats_json(tpb_ctx_t *c)
{
    if (!c || need_sim(c, true))
        return NULL;
    free(c->stats);
    c->stats = sim_stats_json(c->sim);
    if (!c->stats)
        fail(c, "stats: out of memory");
    return c->stats;
}

/* The three writers share one shape: a loaded, run simulation and a path. */
static int sim_write(tpb_ctx_t *c, const char *path, const char *what,
                     int (*fn)(const sim_t *, const char *, tpb_err_t *))
{
    if (!c || need_sim(c, true))
        return -1;
    if (!path)
        return tpb_errf(&c->err, "%s: no path given", what);
    return fn(c->sim, path, &c->err) ? -1 : 0;
}

TPB_EXPORT int tpb_v1_sim_write_trace(tpb_ctx_t *c, const char *path)
{
    return sim_write(c, path, "trace", sim_write_trace);
}

TPB_EXPORT int tpb_v1_sim_write_outputs(tpb_ctx_t *c, const char *dir)
{
    return sim_write(c, dir, "outputs", sim_write_outputs);
}

TPB_EXPORT int tpb_v1_sim_write_stats(tpb_ctx_t *c, const char *path)
{
    return sim_write(c, path, "stats", sim_write_stats_json);
}
