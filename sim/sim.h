/* sim.h - the simulator library: load an artifact directory, bind inputs,
 * run the discrete-event model, write outputs, stats and a trace.
 *
 *   sim_options_t o; sim_options_default(&o);
 *   sim_t *s;
 *   if (sim_load(dir, &o, &s, &err)) ...            artifact errors
 *   if (sim_load_inputs_dir(s, in_dir, &err)) ...   input errors
 *   if (sim_run(s, &err)) ...                       simulation errors
 *   sim_write_outputs(s, out_dir, &err);
 *   sim_free(s);
 *
 * Library code never prints: every failure fills the caller's tpb_err_t.
 * See docs/simulator.md (usage) and docs/timing.md (model). */
#ifndef TPB_SIM_H
#define TPB_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#include "diag.h"
#include "isa.h"
#include "npy.h"
#include "target.h"
#include "txn.h"

#define SIM_DEFAULT_MAX_CYCLES 1000000000ull  /* reference-clock cycles */

typedef struct sim sim_t;

/* Called about every 2^20 simulated instructions (for a progress line). */
typedef void (*sim_progress_fn)(void *user, uint64_t ref_cycles, uint64_t instructions);

typedef struct {
    const tpb_target_t *target; /* NULL: the tensor map's target, else trn2 */
    uint64_t max_cycles;        /* reference-clock cycles; run stops beyond */
    bool timing_only;           /* skip arithmetic (sim_exec_ctx_t.timing_only) */
    uint64_t seed;              /* Memset random / Dropout generators */
    bool check_uninit;          /* stop at the first read of never-written memory */
    bool trace;                 /* record events for sim_write_trace() */
    unsigned threads;           /* threads splitting one large instruction, counting the
                                   caller (tpb sim --threads; 0 or 1: none, the default) */
    bool split_all;             /* split every splittable instruction, however small
                                   (tpb sim --split-all; tests) */
    bool fsync;                 /* fsync each file the sim writes before renaming it
                                   into place (tpb sim --fsync; docs/reliability.md) */
    sim_progress_fn progress;
    void *progress_user;
} sim_options_t;

void sim_options_default(sim_options_t *o);

/* Load tensor-map.json, every core's streams (decoded once), def.json,
 * sidecars and constant tensors.  On failure *out is NULL. */
int sim_load(const char *artifact_dir, const sim_options_t *opt, sim_t **out, tpb_err_t *err);

/* Bind one input tensor by name (shape and dtype checked against the
 * tensor map; float32/float64 arrays are rounded into bf16/fp8/fp16). */
int sim_set_input(sim_t *s, const char *name, const npy_array_t *a, tpb_err_t *err);
/* Read <dir>/<name>.npy for every input tensor. */
int sim_load_inputs_dir(sim_t *s, const char *dir, tpb_err_t *err);
/* Read one input from a .npy file. */
int sim_load_input_file(sim_t *s, const char *name, const char *path, tpb_err_t *err);
/* Bind every input not bound yet to zeros (tests and the
 * compile-and-simulate oracle, docs/reliability.md). */
void sim_bind_zero_inputs(sim_t *s);
/* Names of inputs not bound yet, comma separated into buf ("" if none). */
int sim_missing_inputs(const sim_t *s, char *buf, size_t len);

/* Run to completion.  Returns 0, or -1 with err naming core, engine,
 * instruction index, opcode, operand and address (or the deadlock, or the
 * cycle limit).  Can be called once per sim_t. */
int sim_run(sim_t *s, tpb_err_t *err);

/* Why sim_run failed.  SIM_ERR_FIELD: a compute instruction's fields were
 * refused (an operand's shape, dtype, address, an op or mode it does not
 * take): decided by the program text alone, so a compiled kernel that gets
 * it shows a compiler bug.  SIM_ERR_RUN: anything else (values met at run
 * time such as an index out of range, the cycle limit, a deadlock, a DMA or
 * control instruction's error).  SIM_ERR_NONE before a failed run. */
typedef enum { SIM_ERR_NONE = 0, SIM_ERR_FIELD = 1, SIM_ERR_RUN = 2 } sim_err_class_t;
sim_err_class_t sim_error_class(const sim_t *s);

/* Write every output tensor as <outdir>/<name>.npy, as one transaction
 * (common/txn.h): all or none of the files are replaced. */
int sim_write_outputs(const sim_t *s, const char *outdir, tpb_err_t *err);
/* device_print: print every debug buffer (tensor map print_prefix) with its
 * prefix and up to 64 values (sim/devprint.c). */
void sim_device_prints(const sim_t *s, FILE *f);
/* Stage every output tensor <outdir>/<name>.npy into txn (created the
 * directory if needed); the caller commits or aborts txn. */
int sim_stage_outputs(const sim_t *s, const char *outdir, tpb_txn_t *txn, tpb_err_t *err);
/* Copy one output (or any tensor) into a new array (bf16/fp8 -> float32). */
int sim_get_tensor(const sim_t *s, const char *name, npy_array_t *out, tpb_err_t *err);
/* sim_get_tensor, where bits makes a bf16 / fp8 tensor come back as its raw
 * bits (uint16 / uint8: NaN payloads kept, as a reinterpretation may store
 * any bytes in them) instead of float32. */
int sim_get_tensor_as(const sim_t *s, const char *name, bool bits, npy_array_t *out,
                      tpb_err_t *err);

/* ---- results ---- */
typedef struct {
    const char *name;           /* engine name */
    uint64_t busy_cycles;       /* reference cycles spent executing */
    uint64_t instructions;
    uint64_t sem_wait_cycles;   /* waiting for a semaphore */
    uint64_t port_wait_cycles;  /* waiting for a memory port another engine held (v2) */
    uint64_t barrier_wait_cycles;
    bool present;               /* the core has a stream for this engine */
} sim_engine_stats_t;

typedef struct {
    unsigned queue;
    const char *name;           /* from def.json, or NULL */
    uint64_t bytes;
    uint64_t bytes_to_hbm;      /* of bytes: transfers whose destination is HBM */
    uint64_t transfers;
    uint64_t descriptors;
    uint64_t busy_cycles;       /* reference cycles with a transfer in flight */
} sim_queue_stats_t;

typedef struct {
    uint64_t total_cycles;      /* reference clock, counted from 0 */
    uint64_t total_ps;
    double clock_ghz;
    unsigned num_cores;
    uint64_t instructions;
    uint64_t by_class[ISA_CLASS_COUNT];
    double wall_seconds;
    const char *target;
    const char *kernel;
    unsigned warnings;          /* e.g. descriptors never triggered */
    bool shared_ports;          /* the target has memory ports two engines share (v2) */
} sim_summary_t;

void sim_get_summary(const sim_t *s, sim_summary_t *out);
/* Engine e (index into isa_tpb_engines) of core c. */
void sim_get_engine_stats(const sim_t *s, unsigned core, unsigned e, sim_engine_stats_t *out);
/* Queues of core c that moved data or have a name; returns the count
 * written (at most max). */
unsigned sim_get_queue_stats(const sim_t *s, unsigned core, sim_queue_stats_t *out, unsigned max);
/* Text of warning i (0..warnings-1). */
const char *sim_warning(const sim_t *s, unsigned i);

/* The stats as a JSON text (malloc'ed; caller frees); top-level
 * `total_cycles`.  NULL on out-of-memory. */
char *sim_stats_json(const sim_t *s);
int sim_write_stats_json(const sim_t *s, const char *path, tpb_err_t *err);

/* Chrome/Perfetto trace per docs/trace-format.md (needs opt.trace). */
int sim_write_trace(const sim_t *s, const char *path, tpb_err_t *err);

void sim_free(sim_t *s);

/* Convert between reference cycles and picoseconds for target t. */
uint64_t sim_ps_to_ref_cycles(const tpb_target_t *t, uint64_t ps);
/* Picoseconds of n cycles at clock ghz (rounded up to whole ps). */
uint64_t sim_cycles_to_ps(double ghz, uint64_t n);

#endif
