/* tpb.h - libtpb: the stable C API over tpbsim (compile + simulate).
 *
 * libtpb.so is what `tpb compile` and `tpb sim` do, as a shared library
 * for other programs (the Python package python/tpbsim uses it through
 * ctypes).  The `tpb` CLI links the same code (the static component
 * libraries this one is made of).
 *
 * Rules:
 *  - Every exported symbol starts with `tpb_v1_` and carries the ELF symbol
 *    version TPB_1 (lib/tpb.map); nothing else is exported.  An
 *    incompatible change gets tpb_v2_ names, so old callers keep working.
 *  - No global state: everything lives in a tpb_ctx_t the caller creates.
 *    Separate contexts may be used from separate threads.
 *  - Never prints, never exits, never aborts on bad input: a call returns
 *    0 on success and -1 on failure, and tpb_v1_error() gives the message
 *    (it names the kernel source, the op (or its "loc", e.g.
 *    "kernel.py:14"), and the field).
 *
 * Building a kernel: a kernel is handed over as its description in the
 * kernel format (docs/kernel-format.md, JSON text), which goes through the
 * same front-end, validation and single append point as `tpb compile`.  So
 * a kernel built by a program (the Python tracer) and the same kernel
 * written by hand compile to the same bytes.  An op may carry
 * "loc": "file:LINE" (its source line); it replaces the op path in errors,
 * artifact sidecars and the trace.
 *
 * Typical use:
 *   tpb_ctx_t *c = tpb_v1_new();
 *   if (tpb_v1_compile_json(c, text, len, "k.py", NULL, NULL, "out") ||
 *       tpb_v1_sim_load(c, "out", NULL, 1) ||
 *       tpb_v1_sim_set_input(c, "a", "<f4", 2, shape, data, nbytes) ||
 *       tpb_v1_sim_run(c) || tpb_v1_sim_fetch(c, "out", ...) ...)
 *       fprintf(stderr, "%s\n", tpb_v1_error(c));
 *   tpb_v1_free(c);
 */
#ifndef TPB_LIB_H
#define TPB_LIB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TPB_API_VERSION 1

typedef struct tpb_ctx tpb_ctx_t;

/* API version of the loaded library (TPB_API_VERSION it was built with). */
int tpb_v1_api_version(void);

/* A new context, or NULL when out of memory. */
tpb_ctx_t *tpb_v1_new(void);
/* Free a context and everything it holds (NULL is fine). */
void tpb_v1_free(tpb_ctx_t *c);
/* The message of the last failed call ("" if none).  Valid until the next
 * call on this context. */
const char *tpb_v1_error(const tpb_ctx_t *c);

/* ---- build + compile ---- */

/* The compile memory budget of this context's later check and compile
 * calls, in bytes (0: the default, three quarters of physical memory), as
 * `tpb compile --max-memory`: a kernel whose compile is estimated to need
 * more is refused while it unrolls, before the memory is used, with a
 * message that says so (docs/reliability.md "Memory budget"). */
int tpb_v1_set_max_memory(tpb_ctx_t *c, uint64_t bytes);

/* Parse and validate a kernel description for program 0 without compiling
 * it: *nops / *nprograms receive the unrolled op count and the grid size
 * (either may be NULL).  source_name names the kernel in messages;
 * base_dir resolves constant files (NULL: "."); target NULL: the kernel's. */
int tpb_v1_check_json(tpb_ctx_t *c, const char *text, size_t len, const char *source_name,
                      const char *base_dir, const char *target, int64_t *nops,
                      int *nprograms);

/* Compile a kernel description into the artifact directory out_dir
 * (replaced atomically; docs/artifacts.md).  A grid of several programs is
 * split, compiled per core and linked, as by `tpb compile`. */
int tpb_v1_compile_json(tpb_ctx_t *c, const char *text, size_t len, const char *source_name,
                        const char *base_dir, const char *target, const char *out_dir);
/* The same for a kernel file. */
int tpb_v1_compile_file(tpb_ctx_t *c, const char *path, const char *target,
                        const char *out_dir);
/* Bundles the last successful compile wrote, over all engines. */
int64_t tpb_v1_compiled_bundles(const tpb_ctx_t *c);

/* ---- simulate ---- */

/* Load an artifact directory for simulation (dropping any earlier one).
 * target NULL: the tensor map's.  trace != 0 records a trace for
 * tpb_v1_sim_write_trace. */
int tpb_v1_sim_load(tpb_ctx_t *c, const char *artifact_dir, const char *target, int trace);
/* Bind input `name` from memory: NumPy dtype string descr ("<f4", "<f2",
 * "<i4", "|u1", ... as in a .npy header), C-ordered data of nbytes bytes.
 * float32 data for bf16/fp8 tensors is rounded as by `tpb sim`. */
int tpb_v1_sim_set_input(tpb_ctx_t *c, const char *name, const char *descr, int ndim,
                         const int64_t *shape, const void *data, size_t nbytes);
/* Run to completion (once per load). */
int tpb_v1_sim_run(tpb_ctx_t *c);
/* Fetch tensor `name` after a run into the context: its descr (bf16/fp8
 * come back as "<f4"), rank (<= 8), shape and byte size.  Then copy it out
 * with tpb_v1_sim_fetch_copy (nbytes must match). */
int tpb_v1_sim_fetch(tpb_ctx_t *c, const char *name, char descr[8], int *ndim,
                     int64_t shape[8], size_t *nbytes);
/* tpb_v1_sim_fetch, where bf16 / fp8 come back as their raw bits ("<u2" /
 * "|u1"): every byte the kernel stored, NaN payloads included (a dtype
 * reinterpretation may store any bytes in an fp8 tensor). */
int tpb_v1_sim_fetch_bits(tpb_ctx_t *c, const char *name, char descr[8], int *ndim,
                          int64_t shape[8], size_t *nbytes);
int tpb_v1_sim_fetch_copy(tpb_ctx_t *c, void *buf, size_t nbytes);
/* Total simulated cycles (reference clock) of the last run. */
uint64_t tpb_v1_sim_cycles(const tpb_ctx_t *c);
/* The run's stats (as `tpb sim` writes stats.json), owned by the context;
 * NULL (with an error) before a run. */
const char *tpb_v1_sim_stats_json(tpb_ctx_t *c);
/* Write the Chrome/Perfetto trace (docs/trace-format.md; needs trace != 0
 * at load) / every output as <dir>/<name>.npy / stats.json. */
int tpb_v1_sim_write_trace(tpb_ctx_t *c, const char *path);
int tpb_v1_sim_write_outputs(tpb_ctx_t *c, const char *dir);
int tpb_v1_sim_write_stats(tpb_ctx_t *c, const char *path);

#ifdef __cplusplus
}
#endif
#endif
