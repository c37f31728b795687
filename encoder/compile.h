/* compile.h - the back-end entry point: tile IR -> artifact directory.
 *
 *   validate -> HBM layout -> SBUF/PSUM allocation (liveness) -> lowering
 *   (tile IR -> BIR) -> engine/queue assignment -> dependencies and
 *   semaphores -> emission (Generator, CodeGenMode) -> artifacts
 *
 * See docs/compiler.md for every stage and docs/artifacts.md for the output.
 * Library code: never prints; errors go to the caller's tpb_err_t. */
#ifndef TPB_COMPILE_H
#define TPB_COMPILE_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "isa.h"
#include "spare.h"
#include "target.h"
#include "tir.h"

/* CodeGenMode (ordinals confirmed by the reference notes). */
typedef enum {
    ENC_COLLECT_OPCODES = 0,   /* dry pass: collect each instruction's L2 opcodes */
    ENC_RUN_ISA_CHECKS = 1,    /* production: write bundles + deferred L2 checks */
    ENC_GENERATE_ISACODE = 2,  /* verifier: build + validate each bundle, no files */
} enc_codegen_mode_t;

/* --loops: an affine loop is rolled when its iterations unroll to more than
 * this many tile-IR ops in total (docs/compiler.md "Rolled loops"). */
#define ENC_ROLL_THRESHOLD 4096

/* The in-memory staging vector (seed 000: the Generator's stagingVec):
 * every bundle the run pass builds, in program order, with its engine.  It
 * is filled in lock-step with the <Engine>.bin file sink but independently
 * of it: GENERATE_ISACODE writes no file and still stages. */
typedef struct {
    uint8_t (*bundles)[ISA_BUNDLE_BYTES];
    uint8_t *engine;           /* isa_engine_t of each bundle */
    size_t n, cap;
} enc_staging_t;

void enc_staging_free(enc_staging_t *s);
/* Engine e's stream out of the staging vector (the bytes its <Engine>.bin
 * holds): a malloc'd copy in *out (NULL, 0 for an engine with no bundle). */
int enc_staging_stream(const enc_staging_t *s, int e, uint8_t **out, size_t *len,
                       tpb_err_t *err);

typedef struct {
    const char *out_dir;       /* artifact directory (replaced atomically) */
    const char *target;        /* NULL: the kernel's target, else trn2 */
    int mode;                  /* enc_codegen_mode_t; anything else is an error */
    bool dump_bin_per_inst;    /* also write <Engine>.<seq>.<name>.bin per instruction */
    int buffers;               /* rotating buffers per loop-declared tile: 0 = up to the
                                  target's maximum (docs/compiler.md), 1 = off, N = at most N */
    bool enable_ldw_opt;       /* drop LdWeights that reload the weights PE holds */
    bool loops;                /* --loops: roll sequential_range loops and loops whose
                                  unrolled instructions pass ENC_ROLL_THRESHOLD
                                  (docs/compiler.md "Rolled loops"); a loop's "roll"
                                  field applies either way */
    bool dma_desc_reuse;       /* --dma-desc-reuse: the instances of one module
                                  definition share its DMA descriptors, their
                                  funcArgs passed in registers (docs/multicore.md) */
    bool fsync;                /* --fsync: fsync the artifacts before the directory's
                                  rename (docs/reliability.md "Durability") */
    uint64_t sbuf_limit;       /* --sbuf-limit: SBUF bytes per partition the allocator
                                  may use, 0 = the target's (tests: force spilling,
                                  docs/compiler.md "SBUF spilling") */
    tpb_spare_t *spare;        /* NULL, or the job's spare mappings (common/spare.h):
                                  the lowering's freed blocks kept for the backend's */
} enc_options_t;

/* What a compile produced (filled on success). */
typedef struct {
    unsigned insts[ISA_ENG_COUNT];        /* bundles per engine */
    unsigned histogram[256];              /* bundles per L2 opcode */
    uint32_t engine_opcodes[ISA_ENG_COUNT][8];  /* COLLECT: per-engine opcode set (bitset) */
    unsigned sems, queues, waits, nops;   /* sync summary */
    uint64_t sync_tests;                  /* overlap tests the synchroniser ran (a work
                                             count for tests; not printed) */
    uint64_t sbuf_peak, psum_peak;        /* bytes per partition */
    unsigned sbuf_buffers, psum_buffers;  /* rotating buffers the allocator used */
    uint64_t hbm_bytes;
    int files;                            /* .bin files written */
    unsigned rolled, roll_failed;         /* loops rolled / candidates left unrolled */
    char roll_note[256];                  /* why the first candidate was left unrolled */
    bool sbuf_oom;                        /* the allocation failed placing SBUF (the
                                             compile then spills, encoder/spill.c) */
    unsigned spills, spill_saves, spill_reloads;   /* spill decisions, stores, loads */
    uint64_t spill_save_bytes, spill_reload_bytes; /* their bytes (all partitions) */
} enc_stats_t;

/* HBM layout shared by every core (multi-core hook): byte address of each
 * tile-IR tensor living in HBM (SBUF/PSUM tensors: 0). */
typedef struct {
    uint64_t *addr;            /* [ntensors] */
    int ntensors;
    uint64_t total;
    /* multi-core shared DRAM colouring (lnc_color.c): per tensor, the
     * rendezvous epochs its scratch bytes are live in; NULL = dense layout
     * (no two tensors share bytes) */
    int *live_lo, *live_hi;
} enc_hbm_layout_t;

int enc_hbm_layout(const tir_kernel_t *k, enc_hbm_layout_t *out, tpb_err_t *err);
void enc_hbm_layout_free(enc_hbm_layout_t *l);

/* Compile a single-core kernel into opts->out_dir (built in a temporary
 * directory and renamed into place; on error nothing is left behind).
 * Modes 0 and 2 write no artifact directory.  stats may be NULL. */
int enc_compile(const tir_kernel_t *k, const enc_options_t *opts, enc_stats_t *stats,
                tpb_err_t *err);

/* enc_compile for a caller done with k's ops: their memory is given back
 * during the lowering (the tile IR and the backend IR then do not peak
 * together), their operand and rare-field pools when it ends.  On return,
 * whatever the result, k->ops is NULL, k->nops 0 and those pools empty
 * (tir_op_pools_free); tensors, names and loops are unchanged
 * (tir_kernel_free it as before). */
int enc_compile_release(tir_kernel_t *k, const enc_options_t *opts, enc_stats_t *stats,
                        tpb_err_t *err);

/* enc_compile that also stages every bundle of the run pass in *staging
 * (appended; free with enc_staging_free): RUN_ISA_CHECKS writes the
 * artifact directory and stages, GENERATE_ISACODE only stages. */
int enc_compile_staged(const tir_kernel_t *k, const enc_options_t *opts, enc_staging_t *staging,
                       enc_stats_t *stats, tpb_err_t *err);

/* The per-core pipeline, callable per core by a multi-core split/link:
 * compile kernel k (one core's program) for core `core` into core_dir
 * (e.g. "<tmp>/nc1/sg0"), using the shared HBM layout. */
int enc_compile_core(const tir_kernel_t *k, int core, const tpb_target_t *t,
                     const enc_hbm_layout_t *hbm, const enc_options_t *opts,
                     const char *core_dir, enc_stats_t *stats, tpb_err_t *err);

/* Write tensor-map.json for k into dir (uses the shared layout). */
int enc_write_tensor_map(const tir_kernel_t *k, const tpb_target_t *t,
                         const enc_hbm_layout_t *hbm, const char *dir, tpb_err_t *err);
/* The same tensor-map.json into each of the ndirs directories, built once. */
int enc_write_tensor_maps(const tir_kernel_t *k, const tpb_target_t *t,
                          const enc_hbm_layout_t *hbm, const char *const *dirs, int ndirs,
                          tpb_err_t *err);

/* "Wrong CodeGenMode..." check, shared by the library and the CLI. */
int enc_check_mode(int mode, tpb_err_t *err);

#endif
