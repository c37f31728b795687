/* lnc.h - multi-core (logical NeuronCore, LNC) split and link.
 *
 * A kernel launched on a grid of n programs over N physical cores is
 *
 *   split (1 -> N, lnc_split.c)   the front-end runs once per program id;
 *       the programs a core owns are concatenated into that core's tile-IR
 *       kernel (ops owned by another core are pruned), local tiles are
 *       renamed per core, core barriers get core-local ids, sendrecv and the
 *       collectives become barriers around direct pull DMAs from the
 *       peers' SBUF (lnc_collective.c), and every
 *       HBM buffer one core produces and another consumes is recorded as a
 *       remote-local target;
 *   compiled per core and linked as backend IR (compile_mc.c, lnc_bir.h)
 *       enc_core_prelink on each core's kernel with one shared HBM layout
 *       (every core agrees on every address), lnc_bir_link into one
 *       module, the unified semaphore pool and the post-link register
 *       allocator over it, then synchronisation and codegen per function;
 *   linked (N -> 1, lnc_link.c)   per docs/multicore.md and the bir_linker
 *       notes: a fresh "<name>/sgLnk" module, each core copied in as its own
 *       function, a dispatcher block of call_def_<core>_instance_<idx>,
 *       returns + cb_return_ completion barriers, I-SQI queue-instance
 *       switches, unified memory locations / aliases / queues / semaphores,
 *       demoted intermediate outputs and a global CoreBarrier renumber;
 *   emitted (compile_mc.c)   main-first: the dispatcher's Call for core c
 *       becomes the first bundles of each of core c's engine streams.
 *
 * Library code: never prints; errors go to the caller's tpb_err_t. */
#ifndef TPB_LNC_H
#define TPB_LNC_H

#include <stdbool.h>
#include <stdint.h>

#include "bir.h"
#include "compile.h"
#include "diag.h"
#include "isa.h"
#include "tir.h"

#define LNC_MAX_CORES 8
#define LNC_NAME_LEN 96
#define LNC_SUFFIX "/sgLnk"

/* Link-level pseudo opcodes (outside the BIR L1 range used by bir.h).
 * CoreBarrier keeps its BIR opcode BIR_CORE_BARRIER (87). */
enum {
    LNC_OPC_CALL = 200,      /* InstCall: dispatcher -> a core function */
    LNC_OPC_RETURN = 201,    /* InstReturn: end of a core function */
    LNC_OPC_SQI = 202,       /* InstSwitchQueueInstance: emits no bundle */
    LNC_OPC_ISA = 203,       /* any other cloned machine instruction */
    LNC_OPC_ARG = 204,       /* a call site's argument (RegSet): emitted before the
                                dispatcher's Call (descriptor reuse) */
};

/* Memory-location kinds.  Per-core modules: INPUT = the core reads it and
 * does not write it, OUTPUT = the core writes it.  Linked module: the
 * kernel-level kinds, with per-core outputs that only another core reads
 * demoted to INTERMEDIATE and outputs nobody reads demoted to SCRATCH. */
typedef enum {
    LNC_ML_LOCAL,            /* SBUF/PSUM tile of one core */
    LNC_ML_INPUT,
    LNC_ML_OUTPUT,
    LNC_ML_CONSTANT,
    LNC_ML_SCRATCH,
    LNC_ML_INTERMEDIATE,
} lnc_mkind_t;

const char *lnc_mkind_name(lnc_mkind_t k);

typedef struct {
    char name[LNC_NAME_LEN];
    int tensor;              /* tile-IR tensor index (same in every core's kernel) */
    lnc_mkind_t kind;
    lnc_mkind_t kkind;       /* kernel-level kind (INPUT/OUTPUT/CONSTANT/SCRATCH/LOCAL) */
    bool external;           /* kernel-level input/output/constant (NEFF I/O) */
    unsigned space;          /* ISA_SPACE_* */
    uint64_t addr, bytes;    /* HBM: from the shared layout; local tiles: 0 */
    /* remote_local_target: the producing core's name for this buffer */
    char remote_name[LNC_NAME_LEN];
    int remote_core;         /* -1: none */
    bool whole_ap;           /* linked input: its whole-tensor access pattern is attached */
    int ap_readers;          /* instructions reading it through that pattern */
} lnc_mloc_t;

/* One instruction of a module: a machine instruction cloned from a core's
 * stream (raw prefix bundles kept, main bundle re-encoded from `isa` on
 * emission), or a link-level pseudo instruction. */
typedef struct {
    int opc;                 /* BIR_CORE_BARRIER or LNC_OPC_* */
    char name[LNC_NAME_LEN];
    int engine;              /* isa_engine_t; -1 for dispatcher calls */
    isa_inst_t isa;
    uint8_t prefix[2][ISA_BUNDLE_BYTES];
    int nprefix;
    int callee;              /* CALL: function index; else -1 */
    int queue;               /* SQI: unified queue index; else -1 */
    int qinst;               /* SQI: instance index within the queue */
    int local_id;            /* CoreBarrier: id before the global renumber */
    char src[96];            /* sidecar debug path, if any */
    int call_core;           /* CALL: the NeuronCoreId the instance runs on; else -1 */
    int call_inst;           /* CALL: instance index within the callee's definition */
    int input_ap;            /* linked input (mloc) whose whole-tensor pattern it reads; -1 */
} lnc_inst_t;

/* A basic block; a core function has one block per engine stream. */
typedef struct {
    char name[LNC_NAME_LEN];
    int engine;              /* -1: the dispatcher block */
    lnc_inst_t *insts;
    int n, cap;
} lnc_block_t;

typedef struct {
    char name[LNC_NAME_LEN];
    int core;                /* NeuronCoreId of the function (its module attribute); -1 */
    lnc_block_t *blocks;
    int nblocks;
    int ndeps, ncross;       /* dependency edges: on this core's updaters /
                                on other cores' (lnc_copy_deps) */
    /* moveModulesAsFunctions (lnc_instance.c): a module definition and its
     * instances.  ninsts == 0: not yet collapsed (one implicit instance). */
    int def_id;              /* definition number (call_def_<def_id>_...) */
    struct lnc_param *params;   /* funcArgs: HBM address operands of the body */
    int nparams;
    struct lnc_instance *insts; /* call sites, instance order */
    int ninsts;
    bool desc_reuse;         /* its descriptors are shared: funcArgs in registers */
    int ndesc, nshared;      /* its DMA descriptors; those shared as they are */
} lnc_func_t;

/* A parameter (funcArg) of a module definition: the HBM address of one
 * descriptor side that differs between the definition's instances. */
typedef struct lnc_param {
    int block, inst;         /* position in the definition's body */
    int side;                /* 0: dst, 1: src */
    int reg;                 /* descriptor reuse: the register carrying it, else -1 */
    uint32_t elem;           /* descriptor reuse: its side's element size (bytes) */
} lnc_param_t;

/* One instance of a module definition (a dispatcher call site). */
typedef struct lnc_instance {
    int core;                /* NeuronCoreId the instance runs on */
    int idx;                 /* instance index within the definition */
    int unique_id;           /* unique over the linked module (dispatcher order) */
    uint32_t *args;          /* [nparams]: the HBM address bound to each parameter */
    int ndeps, ncross;       /* its dependency edges (lnc_copy_deps on the bound body) */
} lnc_instance_t;

/* DMA queue: one unified queue per name, one instance per core using it. */
typedef struct {
    int core;
    int id;                  /* queue id on that core */
    int semaphore;
    int engine;
} lnc_qinst_t;

typedef struct {
    char name[32];
    int engine;
    lnc_qinst_t inst[LNC_MAX_CORES];
    int ninst;
} lnc_queue_t;

typedef struct {
    char name[LNC_NAME_LEN]; /* linked: "nc<core>.<name>" */
    int core;
    int id;
} lnc_sem_t;

/* Producer-output -> consumer-input alias edge (linked module). */
typedef struct {
    int mloc;                /* the unified memory location */
    int producer, consumer;  /* cores */
    char out_name[LNC_NAME_LEN], inp_name[LNC_NAME_LEN];  /* per-core names */
} lnc_alias_t;

typedef struct {
    char name[LNC_NAME_LEN];
    int core;                /* ModuleAttribute NeuronCoreId; -1 for a linked module */
    int ncores;
    lnc_func_t *funcs;
    int nfuncs;
    lnc_mloc_t *mlocs;
    int nmlocs;
    lnc_queue_t *queues;
    int nqueues;
    lnc_sem_t *sems;
    int nsems;
    lnc_alias_t *aliases;
    int naliases;
    int nbarrier_ids;        /* linked: global CoreBarrier ids used (0..n-1) */
    bool desc_reuse;         /* enableDmaDescReuse (lnc_dma_desc_reuse ran) */
    int ndefs;               /* linked: module definitions (functions but main) */
} lnc_module_t;

/* ---- module building ---- */
void lnc_module_init(lnc_module_t *m, const char *name, int core);
void lnc_module_free(lnc_module_t *m);
int lnc_add_func(lnc_module_t *m, const char *name, int core, tpb_err_t *err);
/* Block of engine `engine` in function f (created when missing). */
lnc_block_t *lnc_func_block(lnc_module_t *m, int f, int engine, const char *name, tpb_err_t *err);
int lnc_block_append(lnc_block_t *b, const lnc_inst_t *in, tpb_err_t *err);
int lnc_add_mloc(lnc_module_t *m, const lnc_mloc_t *ml, tpb_err_t *err);
int lnc_find_mloc(const lnc_module_t *m, const char *name);
/* A name index over m->mlocs (lnc_names.c): lnc_names_find answers what
 * lnc_find_mloc does (the first location of that name, or -1) for the
 * locations indexed so far; lnc_names_sync indexes those added since (the
 * names of indexed locations must not change).  Zero-initialise it. */
typedef struct {
    int *slot;               /* [cap]: mloc index, -1 empty (open addressing) */
    uint32_t cap;            /* a power of two, or 0 */
    int n;                   /* m->mlocs[0..n) are indexed */
} lnc_names_t;
int lnc_names_sync(lnc_names_t *x, const lnc_module_t *m, tpb_err_t *err);
int lnc_names_find(const lnc_names_t *x, const lnc_module_t *m, const char *name);
void lnc_names_free(lnc_names_t *x);
void lnc_inst_init(lnc_inst_t *in, int opc, const char *name);

/* ---- split ---- */
/* A buffer one core produces and another consumes (through shared HBM). */
typedef struct {
    int tensor;
    int producer, consumer;
} lnc_rlt_t;

typedef struct {
    int ncores, nprograms, per_core;   /* per_core = programs per core */
    tir_kernel_t *core_k;              /* [ncores] concretized per-core kernels */
    lnc_module_t *core_m;              /* [ncores] per-core modules (mlocs, NeuronCoreId) */
    lnc_rlt_t *rlts;
    int nrlts;
    int nbarriers;                     /* core barriers per core (local ids 0..n-1) */
    int nsendrecv;
    void *ident_data;                  /* PE-transpose identity constant (owned) */
    bool diverged;                     /* the programs diverge on the program id */
} lnc_split_t;

/* Split the parsed programs (progs[i] has program_id i; all share one
 * num_programs and num_cores) into per-core kernels and modules.  Constant
 * data stays owned by the programs: free the split first. */
int lnc_split(const tir_kernel_t *progs, int nprog, lnc_split_t *out, tpb_err_t *err);
void lnc_split_free(lnc_split_t *s);
/* The programs the split receives (lnc_programs.c): *uniform when every
 * program declares the same tensors and runs the same op kinds; programs
 * that diverge on the program id must still declare the same HBM tensors
 * and run the same core barriers, sendrecvs and collectives in order.  A
 * program may run no op (a core whose programs all do is idle); the
 * kernel must run one. */
int lnc_check_programs(const tir_kernel_t *p, int n, bool *uniform, tpb_err_t *err);
/* *out[i * *nx + j]: op index of program i's j-th sendrecv or collective
 * (malloc'ed; *nx per program). */
int lnc_exchange_index(const tir_kernel_t *p, int n, int **out, int *nx, tpb_err_t *err);
/* Diverging programs' tensors in one list `out` (program 0's, then every
 * other program's tiles as "<name>@p<i>"): program i's tensor t is
 * (*map)[(*off)[i] + t].  Both malloc'ed (freed by the caller, also on
 * error). */
int lnc_program_maps(const tir_kernel_t *p, int n, tir_kernel_t *out, int **off, int **map,
                     tpb_err_t *err);
/* Physical core of program pid. */
int lnc_core_of(const tir_kernel_t *progs, int pid);
/* The name of a tile's copy for program slot n (tag 'p') or program n
 * (tag 'q') into out (TIR_NAME_LEN bytes): "<name>@<tag><n>" when name
 * has at most `keep` characters, else "<cut>~<id>@<tag><n>", name cut so
 * that it fits, id the tensor index the copy gets (distinct cut names: no
 * two tiles' copies share a name, whatever the kernel's names).  keep 50
 * for 'p', 44 for 'q' (the names such copies always had). */
void lnc_copy_name(char *out, const char *name, int keep, char tag, int n, int id);

/* coloring_allocator_dram_shared (lnc_color.c): re-place the kernel's HBM
 * scratch tensors so that tensors live in disjoint rendezvous epochs (all-
 * core barriers between them) share bytes; records each tensor's epochs in
 * hbm->live_lo/live_hi.  No-op (dense layout kept) for one core, no all-core
 * barrier, inline assembly, or unequal barrier counts. */
int lnc_color_dram_shared(const lnc_split_t *s, enc_hbm_layout_t *hbm, tpb_err_t *err);

/* Fill core module m's functions, queues and semaphores from a compiled
 * core directory (<dir>/<Engine>.bin, .json sidecars, def.json).  The
 * trailing Halt of each stream is dropped (the linked function returns).
 * An idle core (its programs run no op) has no stream: its function gets
 * one empty SP block, which the link ends as any other. */
int lnc_load_core_artifacts(lnc_module_t *m, const char *dir, bool idle, tpb_err_t *err);

/* verifyTensorMap: the tensor map at `path` binds every HBM location of
 * the linked module to its region; regions disjoint, inside HBM. */
int lnc_verify_tensor_map(const lnc_module_t *lnk, const char *path, tpb_err_t *err);

/* ---- link ---- */
/* BirLinker::run(vector<Module>): merge the per-core modules (core order)
 * into *out, a fresh module named "<name>/sgLnk".  `rlts` are the split's
 * remote-local targets (may be NULL when n == 1). */
int lnc_link(const lnc_module_t *cores, int n, const lnc_rlt_t *rlts, int nrlts,
             lnc_module_t *out, tpb_err_t *err);
/* BirLinker::dry_run: the no-mutate feasibility probe -- the definition
 * table (one module per NeuronCoreId 0..n-1) and "missing input '<name>'"
 * (a remote-local input whose producer core has no output of that name),
 * the same checks and messages the link makes first.  Builds nothing. */
int lnc_link_dry_run(const lnc_module_t *cores, int n, tpb_err_t *err);
/* BirLinker::run(Module&): the LNC=1 path through the same machinery. */
int lnc_link_one(const lnc_module_t *core, lnc_module_t *out, tpb_err_t *err);
/* backend::renumberCoreBarriers: one monotonic pass over the merged module:
 * functions in order, each function's barriers in program (core-local id)
 * order, every CoreBarrier gets the next id -- ids are unique over the
 * module, so two cores never collide on one.  Cores meet at barriers by
 * counting per cores mask (the ISA's CoreBarrier), not by id.  Returns the
 * number of ids used. */
int lnc_renumber_core_barriers(lnc_module_t *m);
/* renumberCoreBarriers(vector<Module>&, base): the same pass across the
 * still-separate per-core modules (walked in core order, the dispatcher's
 * order), ids from `base`, unique across the modules.  The merged renumber
 * walks in core-local id order (local_id) and renumbers again once the
 * completion barriers exist.  Returns the next free id, -1 when the modules
 * are not one per core 0..n-1 or out of memory. */
int lnc_renumber_core_barriers_premerge(lnc_module_t *cores, int n, int base);
/* Name of the dispatcher call for core/idx: "call_def_<core>_instance_<idx>". */
void lnc_call_name(char *buf, size_t len, int core, int idx);
/* copyDeps / addBarrier (lnc_deps.c): count every function's dependency
 * edges -- semaphore waits on this core's updaters, and on other cores'
 * remote updates.  0, or -1 when out of memory. */
int lnc_copy_deps(lnc_module_t *m);
/* A wait no schedule can satisfy (its threshold above every update the
 * linked program makes to the semaphore) is an error naming the core,
 * engine and instruction.  Skipped for modules with Jump/BranchCmp. */
int lnc_check_waits(const lnc_module_t *m, tpb_err_t *err);
/* The linked module as JSON text (malloc'ed) - sgLnk/link.json. */
char *lnc_module_json(const lnc_module_t *m);
/* Its "log" (the linker's diagnostic lines) and "mmt_report"
 * (PostLinkMmtReport: matmuls, MACs and PE array utilisation per core
 * function) entries (lnc_report.c). */
struct cJSON *lnc_link_log_json(const lnc_module_t *m);
struct cJSON *lnc_post_link_mmt_report(const lnc_module_t *m);

/* The dst and src access patterns of a DMA descriptor (DmaDirect2d,
 * DmaIndirect2d); both NULL for any other instruction. */
void lnc_dap_sides(isa_inst_t *x, isa_dap_t *side[2]);
/* attachWholeTensorInputAP (lnc_inputap.c): every linked input (a kernel
 * input or constant in HBM) gets its whole-tensor access pattern [addr,
 * addr + bytes), and every cloned descriptor that reads it is attached to
 * it (input_ap).  A statically known read that starts inside an input but
 * leaves its whole-tensor pattern is an error naming the core, the
 * instruction and the input.  0 or -1. */
int lnc_attach_whole_tensor_input_aps(lnc_module_t *m, tpb_err_t *err);
/* moveModulesAsFunctions (lnc_instance.c): core functions whose bodies are
 * equal once their HBM address operands are set aside (core-relative SBUF
 * sides and remote semaphore cores, I-SQIs by queue) become instances of one
 * definition: the first such function keeps the body, its differing HBM
 * addresses become the definition's parameters (funcArgs), every instance
 * binds its own values and gets a unique id, and the dispatcher calls
 * call_def_<def>_instance_<idx>.  Functions that match no other stay one
 * definition with one instance.  0, or -1 (err set). */
int lnc_move_modules_as_functions(lnc_module_t *m, tpb_err_t *err);
/* The per-core expansion of a linked module (what each core's section
 * holds): a fresh module whose dispatcher calls one bound copy of its
 * definition per instance (parameters bound, core-relative operands
 * rebased, I-SQIs resolved for the instance's core, link names
 * renamed for it), in dispatcher order.  Free with lnc_module_free. */
int lnc_bind_instances(const lnc_module_t *m, lnc_module_t *view, tpb_err_t *err);
/* enableDmaDescReuse (lnc_descreuse.c): every definition with more than
 * one instance shares its DMA descriptors between them -- each parameter
 * keeps the first instance's address and gets a register offset of the
 * issuing engine (parameters whose instances differ by the same element
 * count share one register); each call site sets those registers before
 * its Call (LNC_OPC_ARG), so every instance runs the definition's
 * descriptors unchanged.  A definition it cannot serve (a parameter on an
 * indirect descriptor or a side that already has a register offset, an
 * offset outside int32, no free register) keeps its bound copies.
 * Records "DMA Descriptor ReUse Enabled" in the link log.  0 or -1. */
int lnc_dma_desc_reuse(lnc_module_t *m, tpb_err_t *err);
/* A call site's arguments under descriptor reuse: the RegSets (LNC_OPC_ARG)
 * instance x needs for block b of definition d, into out[ISA_NUM_REGS];
 * returns the count (0 without reuse). */
int lnc_call_args(const lnc_func_t *d, const lnc_instance_t *x, int b, lnc_inst_t *out);
/* link.json's "definition" of a function: its id, parameters (block,
 * instruction, operand) and instances (core, index, unique id, arguments). */
struct cJSON *lnc_definition_json(const lnc_func_t *f);

/* ---- emission ---- */
/* Codegen of a linked module, main-first: for each Call of the dispatcher
 * (core c), write <root>/nc<c>/sg0/<Engine>.bin: bundle 0 = Call 2,
 * bundle 1 = Halt, then the function's block for that engine (relocated,
 * ending in Return); sidecar pcs shifted to match. */
int lnc_emit_linked(const lnc_module_t *m, const char *root, tpb_err_t *err);

/* ---- driver (compile_mc.c) ---- */
/* Compile a multi-program kernel file (grid of more than one program) into
 * opts->out_dir: nc<c>/sg0/ per core (linked streams), sgLnk/ (links,
 * link.json) and tensor-map.json.  Same options and modes as enc_compile. */
int enc_compile_mc(const char *kernel_path, const enc_options_t *opts, enc_stats_t *stats,
                   tpb_err_t *err);
/* enc_compile_mc where max_ops > 0 is the op limit of all the launch's
 * programs together (tpb compile --max-memory: they are all held at once),
 * each program also within ENC_DEFAULT_MAX_OPS; enc_compile_mc: each
 * program up to ENC_DEFAULT_MAX_OPS. */
int enc_compile_mc_limit(const char *kernel_path, const enc_options_t *opts, int64_t max_ops,
                         enc_stats_t *stats, tpb_err_t *err);

#endif
