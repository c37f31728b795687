/* lnc_bir.h - the backend-IR link of a multi-core kernel (lnc_birlink.c),
 * in the seed's pipeline position (bir_linker notes, §1 and §9):
 *
 *   per core  enc_core_prelink: allocation, lowering, engines, DMA queues
 *   L1        lnc_bir_link: a fresh "<name>/sgLnk" module, one function per
 *             core (NeuronCoreId); every instruction cloned with its DMA
 *             queue remapped onto the unified queue pool (getQueueByName)
 *             and its register operands remapped through regDM onto the
 *             function's virtual registers
 *   L21-22    lnc_bir_alloc_semaphores: alloc_semaphores over the unified
 *             pool of the merged module
 *   L33       lnc_bir_alloc_registers: the post-link register allocator
 *             over the merged module (virtual -> physical, per function
 *             and engine: each function runs on its core's register files)
 *   then      enc_core_postlink per function: synchroniser, rolled loops,
 *             codegen into nc<c>/sg0/ (the sgLnk assembly of lnc_link.c
 *             follows; docs/multicore.md, "Pipeline").
 *
 * Library code: never prints; errors go to the caller's tpb_err_t. */
#ifndef TPB_LNC_BIR_H
#define TPB_LNC_BIR_H

#include "backend.h"
#include "lnc.h"

/* One virtual register of a function: an engine's register as the core
 * module named it (orig) and the physical register the post-link allocator
 * gave it (phys, -1 before). */
typedef struct {
    uint8_t orig;
    int phys;
} lnc_vreg_t;

typedef struct {
    int core;                /* NeuronCoreId (ModuleAttribute key 2) */
    char name[16];           /* "nc<core>" */
    enc_core_t body;         /* the cloned body (kernel borrowed) */
    /* regDM: per engine, core register -> virtual register (-1: unused) */
    int regdm[ISA_ENG_COUNT][ISA_NUM_REGS];
    lnc_vreg_t vregs[ISA_ENG_COUNT][ISA_NUM_REGS];
    int nvregs[ISA_ENG_COUNT];
    int qmap[BIR_MAX_QUEUES];  /* the function's queue -> unified queue */
} lnc_bir_func_t;

/* A queue of the unified pool: one per name, an instance per core. */
typedef struct {
    char name[32];
    int engine;
    int semaphore;           /* -1 until lnc_bir_alloc_semaphores */
    int ninst;
    int inst_core[LNC_MAX_CORES];
} lnc_bir_queue_t;

typedef struct {
    char name[LNC_NAME_LEN]; /* "<kernel>/sgLnk" */
    lnc_bir_func_t *funcs;   /* dispatcher (core) order */
    int nfuncs;
    lnc_bir_queue_t queues[BIR_MAX_QUEUES];
    int nqueues;
    bir_sem_t sems[BIR_MAX_SEMS];  /* the unified semaphore pool */
    int nsems;
    int coll_sems;
    bool regs_allocated;
    /* the back-end passes as registered (lnc_passes.h): name, kind */
    const char *pass_name[16], *pass_kind[16];
    int npasses;
} lnc_bir_module_t;

/* bir_linker run(vector<Module>) at L1: clone the n per-core modules
 * (cores[i].m.core is the NeuronCoreId; one per core 0..n-1, any order)
 * into *out, a fresh module; the inputs are not edited. */
int lnc_bir_link(const enc_core_t *cores, int n, const char *kernel_name,
                 lnc_bir_module_t *out, tpb_err_t *err);
/* alloc_semaphores over the merged module: engines 0..4, the collective
 * slots, then one semaphore per unified queue -- the same id for a queue
 * name on every core; every function's tables are set from the pool. */
int lnc_bir_alloc_semaphores(lnc_bir_module_t *m, tpb_err_t *err);
/* coloring_allocator_reg after the link: every virtual register of every
 * function gets a physical register of its core's engine file -- the
 * number the core module gave it when free (always, for a clone: a core's
 * numbers are distinct per engine), else the highest free one -- and the
 * operands are rewritten.  Errors name the function, engine and register. */
int lnc_bir_alloc_registers(lnc_bir_module_t *m, tpb_err_t *err);
/* The register operands of an instruction, for the clone and the
 * allocator: fn(ctx, &field, count) once per operand (count registers from
 * *field).  Exposed for the tests. */
void lnc_bir_for_regs(bir_inst_t *in, void (*fn)(void *ctx, uint32_t *field, int count),
                      void *ctx);
/* The merged module after allocation as JSON text (malloc'ed), written to
 * sgLnk/bir_link.json: the pipeline, per function its core, queue map and
 * registers (virtual, core register, physical), the unified queues with
 * their instances and semaphores, the semaphore pool. */
char *lnc_bir_module_json(const lnc_bir_module_t *m);
void lnc_bir_module_free(lnc_bir_module_t *m);

#endif
