/* backend.h - internal interfaces between the back-end passes (alloc.c,
 * schedule.c, emit.c, artifacts.c, compile.c).  Not a contract. */
#ifndef TPB_BACKEND_H
#define TPB_BACKEND_H

#include <stdio.h>
#include <string.h>

#include "bir.h"
#include "jsonw.h"
#include "compile.h"
#include "lower.h"

/* The SBUF tile of the shared identity for PE transposes (compile.c adds it
 * with this path), or -1. */
#define ENC_IDENT_PATH "(compiler: shared identity)"
int enc_ident_tile(const tir_kernel_t *k);
/* Whether t is that tile (the first byte first: no call per tile). */
static inline bool enc_is_ident_tile(const tir_tensor_t *t)
{
    return t->kind == TIR_T_SBUF && t->path[0] == ENC_IDENT_PATH[0] &&
           strcmp(t->path, ENC_IDENT_PATH) == 0;
}
/* Whether some PE transpose of k multiplies by the shared identity (only
 * transposes that change the dtype do; the rest use the Matmul transpose
 * flag); *dtype gets the identity's dtype. */
bool enc_needs_identity(const tir_kernel_t *k, unsigned *dtype);
/* compile.c, shared with the multi-core split (lnc_split.c): the 128x128
 * identity in dtype (malloc'd, caller frees; NULL when out of memory), its
 * HBM constant over data and SBUF tile (both with the path ENC_IDENT_PATH,
 * which is how the passes know them) for kernel k, and the load of
 * constant ci into tile si.  The two are named "identity" and
 * "identity_sb", or identity_<n> / identity_sb_<n> where k has a tensor of
 * that name (tir_free_name), written into names. */
void *enc_identity_data(unsigned dtype);
void enc_identity_tensors(const tir_kernel_t *k, unsigned dtype, void *data, tir_tensor_t *c,
                          tir_tensor_t *sb, char names[2][TIR_NAME_LEN]);
int enc_identity_load(tir_kernel_t *k, int ci, int si, tir_op_t *ld);   /* APs interned in k */

/* alloc.c: elements and bytes of a whole tensor (shapes are bounded by the
 * validator, so the product fits in 64 bits). */
uint64_t enc_tensor_elems(const tir_tensor_t *t);
uint64_t enc_tensor_bytes(const tir_tensor_t *t);

/* alloc.c: liveness + SBUF/PSUM addresses into m->mlocs / m->op_scratch;
 * HBM addresses from the shared layout. */
int alloc_kernel(const tir_kernel_t *k, const tpb_target_t *t, const enc_hbm_layout_t *hbm,
                 bir_module_t *m, enc_stats_t *st, tpb_err_t *err);
/* The same with at most `buffers` rotating buffers per loop-declared tile
 * (0: the target's maximum; 1: plain first fit). */
int alloc_kernel_buffers(const tir_kernel_t *k, const tpb_target_t *t,
                         const enc_hbm_layout_t *hbm, bir_module_t *m, enc_stats_t *st,
                         int buffers, tpb_err_t *err);
/* The same, with the rolling candidates (roll_candidates; NULL = none):
 * a rotated tile's buffer count then repeats with every candidate loop
 * whose iterations hold several of its instances (docs/compiler.md
 * "Rotating buffers"). */
int alloc_kernel_loops(const tir_kernel_t *k, const tpb_target_t *t, const enc_hbm_layout_t *hbm,
                       bir_module_t *m, enc_stats_t *st, int buffers, const unsigned char *cand,
                       tpb_err_t *err);

/* schedule.c */
int sched_assign_engines(bir_module_t *m, const tpb_target_t *t, tpb_err_t *err);
int sched_assign_queues(bir_module_t *m, const tpb_target_t *t, tpb_err_t *err);
/* Round-robin restarts for rolled loops: at tile-IR op `op` the issuers'
 * round-robin positions are saved into (save) or restored from slot
 * `slot`; events sorted by op (encoder/roll.c). */
typedef struct {
    int op, slot;
    bool save;
} sched_rr_event_t;
int sched_assign_queues_rr(bir_module_t *m, const tpb_target_t *t, const sched_rr_event_t *ev,
                           int nev, int nslots, tpb_err_t *err);
/* sched_assign_engines then sched_assign_queues_rr, in one walk (same
 * result, same error). */
int sched_assign(bir_module_t *m, const tpb_target_t *t, const sched_rr_event_t *ev, int nev,
                 int nslots, tpb_err_t *err);
/* Rolled loops (encoder/roll.c): the candidate loops of k (1 per loop
 * record, 0 = not a candidate), their queue events, and the pass itself
 * (after sched_synchronise, before emission). */
int roll_candidates(const tir_kernel_t *k, bool loops_opt, unsigned char **cand,
                    sched_rr_event_t **ev, int *nev, tpb_err_t *err);
int roll_loops(bir_module_t *m, const tir_kernel_t *k, const unsigned char *cand,
               enc_stats_t *st, tpb_err_t *err);
/* Dependencies + semaphore waits/updates; Nops for extra waits; queue
 * drains and a Halt per used engine at the end. */
int sched_synchronise(bir_module_t *m, enc_stats_t *st, tpb_err_t *err);
/* The same with the scan budget given: after scan_budget producers the
 * dependency search switches to the memory index (same result; tests run
 * both extremes: 0 = always the index (and the per-engine memo), INT_MAX =
 * the plain scan with no shortcut). */
int sched_synchronise_budget(bir_module_t *m, enc_stats_t *st, int scan_budget, tpb_err_t *err);
/* Semaphore id of a TPB engine / a queue. */
int sched_engine_sem(int engine);

/* emit.c: the Generator. */
#define GEN_MAX_DEBUG 0
#define GEN_MAX_NDIMS_FIELDS 8

typedef struct {
    int pc;
    int inst;                /* BIR instruction index */
} gen_debug_t;

typedef struct {
    int mode;
    bool dump_per_inst;
    bool checked;            /* a COLLECT walk over this module passed: its
                                per-instruction opcode checks need no repeat */
    const char *dir;         /* core artifact dir (modes 1) */
    const bir_module_t *m;
    /* per engine */
    FILE *bin[ISA_ENG_COUNT];
    jb_t binbuf[ISA_ENG_COUNT];           /* bundles batched in front of bin[e] (GEN_BIN_BUF) */
    /* <Engine>.bin's path (written in place), malloc'ed when the stream is
     * created: 8 fixed 4 KiB buffers made each of postlink's two generators
     * 37 KiB of stack, cleared (and faulted in) by every compile */
    char *bin_path[ISA_ENG_COUNT];
    bool opened[ISA_ENG_COUNT];
    unsigned pcs[ISA_ENG_COUNT];          /* bundles written */
    gen_debug_t *dbg[ISA_ENG_COUNT];
    int ndbg[ISA_ENG_COUNT], capdbg[ISA_ENG_COUNT];
    bool dbg_lent[ISA_ENG_COUNT];         /* dbg[e] is a part of dbg_block (gen_reserve_debug) */
    /* per engine, how many of its debug entries name a collective DMA
     * (replica groups) or a Reduce: kept by the walk that adds the entries,
     * where the instruction is in cache, so the sidecar writer skips the
     * lists' walks over the BIR (a cache miss per entry) when they are 0 */
    int nreplica[ISA_ENG_COUNT], nreduce[ISA_ENG_COUNT];
    gen_debug_t *dbg_block;
    size_t dbg_block_bytes;
    /* The rest of dbg_block's pages past the lists and columns, when the
     * block is a mapping (or a sidecar's chunk would be one): the streams'
     * chunks (GEN_BIN_BUF each, taken in createBin order; spare_used) and,
     * once they are closed, the sidecars' one chunk, instead of a block
     * (a 2 MiB page) per writer.  NULL: none. */
    char *spare;
    size_t nspare, spare_used;
    /* per engine, the header (opcode) byte of every bundle drained into
     * <Engine>.bin, by its position in the file (counted by the drains, not
     * by pcs): the assembly-mapping check reads it instead of the file.  In
     * dbg_block after the debug lists; NULL (no room, or a stream longer
     * than the room): the check reads the file back */
    uint8_t *col[ISA_ENG_COUNT];
    unsigned ncol[ISA_ENG_COUNT], capcol[ISA_ENG_COUNT];
    /* census */
    unsigned histogram[256];
    /* COLLECT: per engine, the opcodes of its instructions (256-bit sets) */
    uint32_t engine_opcodes[ISA_ENG_COUNT][8];
    /* COLLECT, LowerDVE's aggregation: the same union with sync instructions
     * (Nop, Halt, CoreBarrier) skipped -- the DVE table (DVE.json) */
    uint32_t table_opcodes[ISA_ENG_COUNT][8];
    /* artifact registry (ModuleArtifactInfo): engines in createBin order;
     * each registered <Engine>.bin (addEngInstrFile) + <Engine>.json
     * (addEngDMADescFile) */
    int reg_engine[ISA_ENG_COUNT];
    int nreg;
    /* deferred L2 legality checks: (inst index, engine, l2) */
    struct gen_check { int inst; int engine; uint8_t l2; } *checks;
    int nchecks, capchecks;
    unsigned seq;            /* per-inst dump counter */
    /* encode cache (emit.c): bundles by instruction body, header patched */
    struct gen_cache_entry *cache;   /* ncache entries in miss order (capcache: room) */
    int ncache, capcache;
    uint16_t *cache_slot;    /* per hash slot: 1 + its entry's index, 0 = none */
    unsigned cache_hits, cache_misses;
    /* per engine, the entries of its last GEN_RECENT instructions (a ring
     * indexed by the engine's instruction count) and the period of its
     * stream: an unrolled body repeats on its engine every `period`
     * instructions (rotating buffers, alternating slices), so the entry of
     * the instruction that far back is compared before the body is hashed;
     * a wrong guess learns the period again from the entry found */
#define GEN_RECENT 64u
    uint16_t recent[ISA_ENG_COUNT][GEN_RECENT];   /* 1 + entry index, 0 = none */
    unsigned nrecent[ISA_ENG_COUNT], period[ISA_ENG_COUNT];
    unsigned cache_recent_hits;
    uint16_t op_last[ISA_OP_COUNT];   /* per opcode: 1 + the entry it last added */
    unsigned op_misses[ISA_OP_COUNT]; /* per opcode: misses since its last hit */
    unsigned cache_bypassed;          /* misses that skipped the lookup (emit.c) */
    isa_plans_t *plans;      /* per-format encode plans (a cache miss encodes) */
    /* COLLECT: per format, the TAP ".ndims" fields of ApExt slots (lazy) */
    bool fmt_ready[ISA_FMT_COUNT];
    uint8_t fmt_nndims[ISA_FMT_COUNT];
    uint16_t fmt_ndims[ISA_FMT_COUNT][GEN_MAX_NDIMS_FIELDS];
    /* branch hints: per rolled loop and engine, the pc its back branch
     * targets (COLLECT's updateBranchHintTargetPC; copied to the run) */
    unsigned (*loop_pc)[ISA_ENG_COUNT];
    int nloop_pc;
    enc_staging_t *staging;  /* in-memory staging vector (run modes), or NULL */
} gen_t;

int gen_init(gen_t *g, int mode, const bir_module_t *m, const char *dir, bool dump_per_inst,
             tpb_err_t *err);
/* Size the debug lists (RUN_ISA_CHECKS: an entry per instruction) for
 * bundles[e] entries on engine e, the COLLECT pass's bundle counts (at
 * least the instructions): one allocation each, in huge pages when large,
 * instead of a doubling series of copies.  Other modes: nothing. */
int gen_reserve_debug(gen_t *g, const unsigned *bundles, tpb_err_t *err);
/* Append nb bundles of engine e to the staging vector (staging.c). */
int gen_stage(enc_staging_t *s, int e, const uint8_t (*bundles)[ISA_BUNDLE_BYTES], unsigned nb,
              tpb_err_t *err);
/* One program-order walk over the module. */
int gen_run(gen_t *g, tpb_err_t *err);
/* Write what stream e holds to its file (noting its opcode column first);
 * -1 when a write failed. */
int gen_drain(gen_t *g, int e);
/* Close (commit) every engine file; on error pass ok=false to delete them. */
int gen_finish(gen_t *g, bool ok, tpb_err_t *err);
void gen_free(gen_t *g);
/* The DVE opcode coverage check over the COLLECT result (the sync-skipping
 * aggregate, table_opcodes). */
int gen_check_dve_coverage(const gen_t *g, tpb_err_t *err);
/* assertAsmMappingsCorrect: every debug entry (pc -> instruction) of every
 * engine names an instruction of that engine whose L2 opcode is the header
 * byte of the bundle written at that pc, pcs strictly increase and stay
 * inside the stream (RUN_ISA_CHECKS, run by gen_run after the walk). */
int gen_check_asm_mappings(gen_t *g, tpb_err_t *err);
/* Instructions the COLLECT aggregation skips (getInstSyncType != 0). */
bool gen_is_sync_inst(const bir_inst_t *in);
/* emit_collect.c: the COLLECT_OPCODES walk (gen_run in that mode), and its
 * per-instruction checks, which the other modes' walk makes itself unless
 * g->checked: the instruction's ISA op is the one its mode flags pick, and
 * a descriptor's wire compute field is its DgeComputeOp's. */
int gen_collect(gen_t *g, tpb_err_t *err);
int gen_check_inst(const bir_inst_t *in, int idx, tpb_err_t *err);

/* artifacts.c */
/* Op's "buf" string (docs/artifacts.md: the rotating buffers its operands
 * use) appended to pool with its NUL: its offset in pool->buf.  When the
 * string is "" nothing is appended and 0 is returned (the sidecar writer's
 * pool starts with a NUL byte). */
size_t art_op_buffers(jb_t *pool, const bir_module_t *m, const tir_kernel_t *k,
                      const tir_op_t *op);
/* The last ops' "buf" strings by their operands' tokens (base name,
 * buffer, buffer count): a loop's ops name new tiles every iteration but
 * repeat the same few strings, so an op whose tokens match an entry shares
 * its string instead of building it again.  Each tensor's token is worked
 * out once (tok[t]: 0 not yet, 1 the tensor does not rotate, 2 + the
 * token's number) and interned by its (base name, buffer, buffer count) in
 * `ids`, so an op's key is its tokens' numbers.  Zero it before the first
 * use, release it after the last (art_buf_memo_release); one (module,
 * kernel) pair per memo.  It holds pointers to k's tensor names and offsets
 * into one pool. */
#define ART_BUF_MEMO 64
#define ART_BUF_TOKENS 10   /* operand slots art_op_buffers reads */
#define ART_PATH_SLOTS 64
typedef struct {
    struct art_buf_memo_entry {
        uint32_t off;   /* 0: empty */
        uint32_t used;  /* clock at the last hit or fill */
        uint8_t n;
        uint32_t tok[ART_BUF_TOKENS];
    } e[ART_BUF_MEMO];
    uint32_t clock;
    uint32_t *tok;                  /* per tensor, ntok of them */
    int ntok;
    struct art_buf_token {          /* the interned tokens: open addressing */
        const char *nm;             /* NULL: a free slot */
        uint32_t len, buf, nbuf, id;
    } *ids;
    uint32_t nids, capids;
    unsigned long tok_scans;        /* tensor names scanned for their base */
    /* The last token met per (declaring path, buffer, buffer count): a
     * loop's next instance of a tile ("<base>#<iteration>", declared at the
     * same path) is checked against its base instead of interned again.
     * Direct-mapped; nm NULL: empty. */
    struct art_path_token {
        const char *path, *nm;      /* nm: the name the token was met with */
        uint32_t len, buf, nbuf, id;   /* len: its base's length */
    } by_path[ART_PATH_SLOTS];
    unsigned long path_hits;        /* tokens found that way */
} art_buf_memo_t;
/* art_op_buffers through memo (the same string; the offset of an equal
 * earlier one on a hit).  memo NULL: art_op_buffers. */
size_t art_op_buffers_memo(jb_t *pool, art_buf_memo_t *memo, const bir_module_t *m,
                           const tir_kernel_t *k, const tir_op_t *op);
/* Free what the memo allocated (not the memo itself). */
void art_buf_memo_release(art_buf_memo_t *memo);
/* The JSON text of a sidecar's repeated members: the src paths, op kinds
 * and buf strings are a few interned strings that thousands of debug
 * entries name by the same pointer, so each member is written once into
 * `text` as "key":<value> (jb_cjson_member) and copied from there whole
 * (a compact writer) or from its value on (art_member_cached).  Keyed by
 * the string's and the key's addresses (and the key's length): the
 * strings must not change while the cache is in use (they are the
 * kernel's and the buf table's, constant while a sidecar is written).  A
 * member is copied into `text` the second time it is met (len UINT32_MAX:
 * met once).  Two-way set associative (slots 2 i and 2 i + 1 form set i):
 * a loop's few strings alternate, and two of them sharing a set of one
 * slot would evict each other on every entry; a new string replaces the
 * way of its set used least recently.  `text` starts over when it passes
 * ART_JCACHE_TEXT. */
#define ART_JCACHE_SLOTS 256
#define ART_JCACHE_TEXT ((size_t)64 << 10)
typedef struct {
    const char *s[ART_JCACHE_SLOTS];   /* NULL: empty */
    const char *key[ART_JCACHE_SLOTS]; /* the member's key */
    size_t klen[ART_JCACHE_SLOTS];
    uint32_t off[ART_JCACHE_SLOTS], len[ART_JCACHE_SLOTS];
    uint8_t victim[ART_JCACHE_SLOTS / 2]; /* per set: the way to replace next */
    jb_t text;
    unsigned long hits, misses;
} art_jcache_t;
/* 0, or -1 when out of memory. */
int art_jcache_init(art_jcache_t *c);
void art_jcache_free(art_jcache_t *c);
/* jw_member_str(w, key, n, s) (s not NULL; key plain, as for
 * jw_key_plain), the text from c. */
void art_member_cached(jw_t *w, art_jcache_t *c, const char *key, size_t n, const char *s);
/* Each op's "buf" string (docs/artifacts.md "buf"): the rotating buffers
 * its operands use, "name#b/n" each, outputs first, then inputs in argument
 * order, separated by single spaces, a repeat left out; "" when none
 * rotates.  All ops' strings are built once, in one linear pass, into one
 * pool of NUL-terminated strings (an op's instructions on every engine
 * share its string): off[i] is op i's offset in pool (0: the empty string
 * at the pool's start).  off == NULL: no tile rotates, every string is "". */
typedef struct {
    jb_t pool;
    uint32_t *off;
} buf_table_t;
/* What the sidecars read of the tile-IR ops: each op's name, its
 * inline-assembly record (INLINE_ASM_BYTES), its "buf" string.  It needs
 * the allocation (the rotating buffers) and nothing later, so the
 * single-core driver builds it before the lowering, which may then release
 * the ops as it goes (compile.c).  Names and records stay the kernel's. */
typedef struct {
    int nops;
    const char **name;          /* per op; the start of a block of block_bytes (artifacts.c) */
    size_t block_bytes;
    const tir_asm_t **inl;      /* per op (NULL: not INLINE_ASM_BYTES); NULL when no op is */
    buf_table_t bt;
} art_ops_t;
/* -1 when out of memory (o then still freed by art_ops_free). */
int art_ops_build(art_ops_t *o, const bir_module_t *m, const tir_kernel_t *k);
/* art_ops_build an op at a time, so a pass that already reads each op (the
 * lowering, compile.c) builds the table while the op is in cache instead
 * of two more passes over 10^5 ops: art_ops_begin, then art_ops_add for
 * ops 0, 1, ... nops - 1 in order (op i is read when it is added), then
 * art_ops_end (always, also after a failure).  begin and add return -1
 * when out of memory (o then still freed by art_ops_free). */
typedef struct {
    art_ops_t *o;
    const bir_module_t *m;
    const tir_kernel_t *k;
    art_buf_memo_t *memo;       /* NULL: no tile rotates (every buf string "") */
} art_ops_builder_t;
int art_ops_begin(art_ops_builder_t *b, art_ops_t *o, const bir_module_t *m,
                  const tir_kernel_t *k);
int art_ops_add(art_ops_builder_t *b, int i);
void art_ops_end(art_ops_builder_t *b);
void art_ops_free(art_ops_t *o);
/* The "debug" entries of a sidecar into w's open array: one per dbg[i],
 * instruction insts[dbg[i].inst] at dbg[i].pc; compact: the compact form
 * (sidecar_form.h).  fast: a compact entry is built in one reservation
 * (the same bytes); false: every entry by the general member writers (the
 * writer of record, kept for the tests to compare against). */
void art_debug_entries(jw_t *w, const art_ops_t *ops, const bir_inst_t *insts,
                       const gen_debug_t *dbg, int n, bool compact, bool fast);
/* The bytes of a sidecar writer's chunk for a sidecar of that many debug
 * entries. */
size_t art_sidecar_chunk(unsigned entries);
/* The <Engine>.json sidecars from ops; art_write_sidecars builds them from k. */
int art_write_sidecars_ops(const gen_t *g, const bir_module_t *m, const art_ops_t *ops,
                           const char *dir, tpb_err_t *err);
int art_write_sidecars(const gen_t *g, const bir_module_t *m, const tir_kernel_t *k,
                       const char *dir, tpb_err_t *err);
int art_write_def(const bir_module_t *m, const gen_t *g, const char *dir, tpb_err_t *err);
int art_write_constants(const tir_kernel_t *k, const char *dir, tpb_err_t *err);
/* Remove path and everything below it (symlinks are removed, not followed). */
int art_rmtree(const char *path);
/* Replace directory dst by the finished directory src: the old dst (if any)
 * is moved aside, src renamed into place, then the old one removed; if the
 * rename fails the old dst is put back. */
int art_install_dir(const char *src, const char *dst, tpb_err_t *err);
/* Start building out_dir: its name without trailing '/' into norm, and the
 * temporary directory "<norm>.tmp.<pid>" beside it into tmp (a stale one is
 * removed; tmp is "" on error). */
int art_begin_dir(const char *out_dir, char *norm, size_t nnorm, char *tmp, size_t ntmp,
                  tpb_err_t *err);
/* compile.c: enc_compile_core in two halves, so the multi-core driver can
 * link the backend IR between them (docs/multicore.md, "Pipeline").
 * prelink: allocation, lowering, engine and DMA queue assignment (the
 * per-core main pipeline); postlink: synchronisation (semaphore waits and
 * updates), rolled loops (their counter registers), codegen and artifacts
 * into core_dir (modes as enc_compile_core).  cc->m's queue and semaphore
 * ids may be rewritten between the two (the unified pool). */
typedef struct {
    const tir_kernel_t *k;
    bir_module_t m;
    unsigned char *cand;     /* rolled-loop candidates (roll_candidates) */
    /* has_ops: the sidecars read ops, built before the lowering, not k's
     * ops (released by then: enc_compile_release) */
    bool has_ops;
    art_ops_t ops;
} enc_core_t;
int enc_core_prelink(const tir_kernel_t *k, int core, const tpb_target_t *t,
                     const enc_hbm_layout_t *hbm, const enc_options_t *opts, enc_core_t *cc,
                     enc_stats_t *st, tpb_err_t *err);
int enc_core_postlink(enc_core_t *cc, const enc_options_t *opts, const char *core_dir,
                      enc_stats_t *st, tpb_err_t *err);
void enc_core_free(enc_core_t *cc);
/* compile.c: "HBM layout needs N bytes; target T has M" when it does not fit. */
int enc_check_hbm_fits(const enc_hbm_layout_t *hbm, const tpb_target_t *t, tpb_err_t *err);

#endif
