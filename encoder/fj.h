/* fj.h - internals of the JSON kernel front-end (docs/kernel-format.md),
 * shared by its files:
 *   frontend_json.c      statements (let/if/tile, the walk), tensors, grid,
 *                        entry
 *   fj_loops.c           for loops: ranges, estimates, loop records,
 *                        iterations
 *   fj_fields.c          field readers: ints, numbers, booleans, enums,
 *                        shapes; a statement's key table; the memo and
 *                        what the run owns
 *   fj_operands.c        operands (slices, .ap(), indirect), scalars; the
 *                        compiled operand strings of loops
 *   fj_ops_dma.c         the data-movement op family (table + handlers)
 *   fj_ops_compute.c     the compute op families (table + handlers)
 *   fj_ops_rng.c         the random-number ops (table + handlers)
 *   fj_ops_reg.c         the NKI register ops (table + handlers)
 *   fj_mask.c            NKI mask= on ops without their own predicate
 *   fj_paths.c           a loop body's statement paths, joined once
 *   fj_opnames.c         op names and NKI argument names -> table entries
 * Each op family is one table of {NKI name, tile-IR kind, handler, allowed
 * fields}; a handler reads its fields and fills a tir_op_t (returns 1:
 * frontend_json.c appends it through enc_emit) or calls a typed builder
 * itself (returns 0).  Every op reaches the tile IR through the builder API
 * (encoder/builder.h). */
#ifndef TPB_FJ_H
#define TPB_FJ_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "builder.h"
#include "expr.h"
#include "strutil.h"

#define MAX_LOOP_ITERATIONS_FACTOR 4   /* total iterations <= factor * max_ops */

/* scheduling hints (fj_schedule.c): per-op "schedule" names (op, -1,
 * name), no_reorder chain edges (op, before, NULL), top-level pairs as two
 * refs (-1, -1, after name) + (-1, -1, before name) */
typedef struct {
    int op, before;
    const char *name;            /* interned in the kernel */
} fj_sched_ref_t;

typedef struct {
    fj_sched_ref_t *refs;
    int n, cap;
    int depth;                   /* no_reorder blocks open */
    int last;                    /* the open block's latest op, -1 */
} fj_sched_t;

/* cJSON_IsString / cJSON_IsObject / cJSON_IsNumber inline (the
 * library's are calls into the shared object), for the per-statement
 * paths */
static inline bool fj_is_string(const cJSON *it) { return it && (it->type & 0xFF) == cJSON_String; }
static inline bool fj_is_object(const cJSON *it) { return it && (it->type & 0xFF) == cJSON_Object; }
static inline bool fj_is_number(const cJSON *it) { return it && (it->type & 0xFF) == cJSON_Number; }
static inline bool fj_is_array(const cJSON *it) { return it && (it->type & 0xFF) == cJSON_Array; }

/* A statement object's keys, found in one pass over its members when the
 * statement is decoded (fj_keys_scan): the first member of each key the
 * table knows (FK_*), which of them are there, and whether any other key
 * (or a repeated one) is.  fj_jfield answers a field of the statement
 * from it; fj_check_fields passes an object whose keys are all known,
 * allowed and given once without comparing names again. */
enum {
    FK_OP, FK_LOC, FK_COMMENT, FK_NAME, FK_ENGINE, FK_DEPS, FK_SCHEDULE, FK_MASK, FK_DST,
    FK_SRC, FK_SHAPE, FK_DTYPE, FK_BUFFER, FK_DGE_MODE, FK_OOB_MODE, FK_DMA_QOS, FK_RMW_OP,
    FK_OTHER, FK_SRC_REG, FK_DST_REG, FK_N
};
/* The FK_* index of a key name, -1 for a name outside the table. */
int fj_key_index(const char *k);
typedef struct {
    const cJSON *obj;            /* whose keys these are; NULL: none */
    unsigned present;            /* 1 << FK_* per key found */
    bool other;                  /* a key outside the table, or one given twice */
    const cJSON *it[FK_N];       /* the first member of each key found */
} fj_keys_t;

typedef struct {
    enc_builder_t b;
    enc_env_t env;
    char base_dir[1024];
    int depth;                   /* for/if nesting */
    int64_t iterations;          /* loop iterations executed so far */
    int cur_loop;                /* innermost recorded loop running (tir_loop_t), -1 */
    int64_t max_ops;
    bool note_added;             /* loop-variable note appended to the error */
    int env_base;                /* bindings below are the grid's (pid, ...) */
    int grid_ndim;               /* launch-grid axes (1 without a grid) */
    int64_t grid_dims[4];
    /* results that depend on a statement object only, not on loop
     * variables, so a statement unrolled N times is checked once */
    struct memo_entry *memo;
    size_t memo_cap, memo_n;
    /* NKI virtual registers (fj_ops_reg.c): name -> physical register */
    struct { char name[ENC_VAR_NAME]; int phys; } vregs[64];
    int nvregs;
    bool mask_redirect;          /* fj_mask.c: "dst" resolves to mask_dst */
    struct fj_stmt *stmt;        /* the running compute statement, decoded once
                                    (frontend_json.c), NULL = none */
    tir_ap_t mask_dst;
    struct fj_mask_mm *mask_mm;  /* fj_mask_mm.c: the masked matmul h_matmul reads, NULL */
    int once_depth;              /* depth of the innermost "iterations" loop body: its
                                    objects are visited once (no memo there) */
    fj_sched_t sched;            /* fj_schedule.c */
    /* what each op name makes a statement (frontend_json.c decode_stmt):
     * a flat body repeats a few names thousands of times, and finding one
     * is a strcmp against every statement kind and op table entry */
#define FJ_OPNAMES 8
    struct fj_opname {
        char name[24];
        int what, for_kind;
        const struct fj_opdef *d;
    } opnames[FJ_OPNAMES];
    unsigned nopnames;           /* entries filled; the next goes at nopnames % 8 */
    /* per allowed-field list (by its address's slot): the last object that
     * passed fj_check_fields; a flat body's next statement of that op
     * passes too when its keys are that object's, in order */
#define FJ_FIELDS_OK 8
    struct { const void *allowed; const cJSON *obj; } fields_ok[FJ_FIELDS_OK];
    /* per allowed-field list (same slots): its names as FK_* bits */
    struct { const void *allowed; unsigned mask; } keys_ok[FJ_FIELDS_OK];
    /* the keys of the statement decoded last (exec_stmt), NULL: none; an
     * answer only for its own object (the tree is read-only), so it
     * needs no restoring when a nested statement takes the table */
    fj_keys_t *keys;
    fj_keys_t keytab;
    /* FK_* of the key strings met last, by address (fj_keys_scan): the
     * JSON reader gives equal keys in a row one copy (jsonarena.c) */
#define FJ_KIDX 32
    struct { const char *k; int idx; } kidx[FJ_KIDX];
    /* the op table entry last prepared (frontend_json.c exec_compute_op_slot):
     * whether it has NKI argument names to rename and a mask field of its own */
    const struct fj_opdef *prep_d;
    /* compiled operands found last (fj_operands.c cop_find), by their
     * string item's address: a loop body's few operands, each asked for
     * every iteration (hashed: the items sit 80 bytes apart with their
     * strings between, so 16 slots by address collided often; 64 sets of
     * 4 ways, so a few sharing a set do not evict each other) */
#define FJ_COPS 256
#define FJ_COPS_WAYS 4
    struct fj_cop_slot { const cJSON *key; struct fj_cop *cop; } cops[FJ_COPS];
    bool prep_nki, prep_native;
    /* the dtype text decoded last (fj_get_dtype) and its value: a flat
     * body's tiles repeat one "float32" (a string of the run's tree) */
    const char *dt_text;
    unsigned dt_value;
    /* what the run owns for its memo: compiled operands and statements,
     * freed at the end (fj_keep, fj_cache_free) */
    struct fj_kept { void *p; void (*fr)(void *); } *keep;
    size_t nkeep, capkeep;
} jx_t;

struct memo_entry {
    const cJSON *obj;
    const void *what;            /* the question: an allowed-field list, a table */
    const void *value;
};

typedef struct {
    const char *alias, *name;
} fj_alias_t;

typedef struct {
    tir_ap_t ap;
    tir_ap_t index;              /* tensor -1: direct */
    int64_t bound;
} fj_operand_t;

typedef int (*fj_op_fn)(jx_t *j, const cJSON *o, const char *path, tir_op_t *op);

typedef struct fj_opdef {
    const char *name;             /* NKI name (without nl./nisa. prefix) */
    tir_opkind_t kind;
    fj_op_fn fn;
    const char *fields[24];       /* allowed fields, NULL-terminated */
} fj_opdef_t;

#define F_COMMON "op", "name", "engine", "deps", "schedule"

/* the op families: tables terminated by an entry with name NULL */
extern const fj_opdef_t fj_ops_dma[];
extern const fj_opdef_t fj_ops_compute[];
/* NKI mask= (fj_ops_compute.c): parse o's "mask" into op (TIR_F_MASK) */
int fj_get_mask(jx_t *j, const cJSON *o, const char *path, tir_op_t *op);
/* NKI mask= on an op without its own predicate (fj_mask.c): `run` computes
 * the op into a compiler tile shaped like dst, then a masked tensor_copy;
 * a matmul on the mask's rectangle of its operands when it keeps one. */
typedef int (*fj_run_fn)(jx_t *j, const cJSON *o, const char *path, const fj_opdef_t *d);
int fj_masked_op(jx_t *j, const cJSON *o, const char *path, const fj_opdef_t *d, fj_run_fn run);
/* A masked matmul (fj_mask_mm.c), between fj_masked_op and h_matmul: */
typedef struct fj_mask_mm {
    tir_op_t *copy;              /* the masked tensor_copy: its dst the declared dst, its
                                    predicates the mask */
    const char *name;            /* the op's name, NULL */
    const char *dname;           /* the op table entry's name */
    bool scratch;                /* computed into a compiler tile: the copy follows */
    bool note;                   /* then record the declared dst as a matmul group region */
} fj_mask_mm_t;
/* The compiler tile a masked op is computed into (fj_mask.c): rows from
 * dst's start partition; j->mask_dst and copy->src[0] are its access. */
int fj_mask_scratch(jx_t *j, tir_op_t *copy, const char *name, const char *dname);
/* h_matmul's op under j->mask_mm: on the kept rectangle of its operands
 * (1: emit op), nothing (a noop was emitted: 0), into the compiler tile
 * (1, j->mask_mm->scratch), or -1 after the error naming `mask`. */
int fj_mask_matmul(jx_t *j, const char *path, tir_op_t *op);
/* After the masked copy (mask_mm.note): the declared dst (copy's) as the
 * region of an accumulation group the matmul starts. */
int fj_mask_matmul_note(jx_t *j, const tir_op_t *copy);
extern const fj_opdef_t fj_ops_collective[];
extern const fj_opdef_t fj_ops_rng[];        /* fj_ops_rng.c */
extern const fj_opdef_t fj_ops_reg[];        /* fj_ops_reg.c */
/* inline assembly handlers (fj_ops_asm.c; listed in fj_ops_compute) */
int fj_h_inline_asm(jx_t *j, const cJSON *o, const char *path, tir_op_t *op);
int fj_h_inline_asm_bytes(jx_t *j, const cJSON *o, const char *path, tir_op_t *op);
extern const fj_opdef_t fj_ops_seq[];      /* fj_ops_seq.c */
/* a register name's physical register, -1 after the error (fj_ops_reg.c) */
int fj_vreg(jx_t *j, const char *path, const char *field, const char *name);
/* o's "reg": a new register of that name (register_alloc's; kept by a
 * statement visited again), bound for the rest of the body; its physical
 * register, -1 after the error */
int fj_reg_named(jx_t *j, const cJSON *o, const char *path);
/* Emit reg = register src (src >= 0) or imm, or reg += imm (add), on
 * every TPB engine: an op the front-end makes itself (a dynamic_range's
 * loop variable); -1 or 0 */
int fj_reg_set(jx_t *j, const char *path, const char *name, int reg, int src, int64_t imm,
               bool add);

/* scheduling hints (fj_schedule.c, docs/kernel-format.md "Scheduling"):
 * record the "schedule" field and the open no_reorder block for the ops a
 * statement emitted ([n0, nops)); after the body, apply every edge (program
 * order + explicit deps) */
int fj_sched_op(jx_t *j, const cJSON *o, const char *path, int n0);
/* fj_sched_op's part without a "schedule" field: no_reorder chaining */
int fj_sched_chain(jx_t *j, const char *path, int n0);
int fj_sched_apply(jx_t *j, const cJSON *root);

extern const fj_alias_t fj_alu_aliases[];
extern const fj_alias_t fj_act_aliases[];
extern const fj_alias_t fj_cmp_aliases[];

int fj_jfail(jx_t *j, const char *path, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
const void *fj_memo_get(const jx_t *j, const cJSON *obj, const void *what);
bool fj_memo_put(jx_t *j, const cJSON *obj, const void *what, const void *value);
/* fj_memo_get through a slot the caller keeps for obj (a loop body's
 * statement, fj_paths_t st[i]; a statement's kept fields): the slot's
 * answer, else the memo's, which then fills the slot (slot NULL: the memo
 * only).  Saves the lookup on every later iteration. */
static inline const void *fj_memo_get_slot(const jx_t *j, const void **slot, const cJSON *obj,
                                           const void *what)
{
    if (slot && *slot)
        return *slot;
    const void *v = fj_memo_get(j, obj, what);
    if (slot)
        *slot = v;
    return v;
}
/* fj_memo_get about the running statement's object o (j->stmt) through
 * that statement's own two slots, which keep the answers found (a loop
 * body's op asks the same questions every iteration); any other object:
 * fj_memo_get (frontend_json.c) */
const void *fj_stmt_memo_get(const jx_t *j, const cJSON *o, const void *what);
/* fj_stmt_memo_get without its call when nothing is kept (a flat body's
 * statement: no answer) */
static inline const void *fj_stmt_memo(const jx_t *j, const cJSON *o, const void *what)
{
    return j->memo_n ? fj_stmt_memo_get(j, o, what) : NULL;
}
/* whether fj_memo_put keeps answers here (inside a loop or an if):
 * outside loops and ifs (and directly in an "iterations" loop, whose
 * every iteration is its own objects) every object is visited once */
static inline bool fj_memo_keeps(const jx_t *j)
{
    return j->depth && j->depth != j->once_depth;
}
/* own p until the end of the run (false: not owned, out of memory); free
 * everything owned (fj_fields.c) */
bool fj_keep(jx_t *j, void *p, void (*fr)(void *));
void fj_cache_free(jx_t *j);
const char *fj_type_name(const cJSON *it);
int fj_check_fields(jx_t *j, const cJSON *obj, const char *path, const char *const *allowed);
const cJSON *fj_field(const cJSON *obj, const char *name);
/* obj's members in one pass into ks (ks->obj NULL when a member has no
 * key: fj_field stops there); j: the run whose key strings' indexes are
 * kept (j->kidx), or NULL */
void fj_keys_scan(jx_t *j, const cJSON *obj, fj_keys_t *ks);
/* fj_field of obj, from the running statement's key table when obj is
 * its object (j->keys) */
const cJSON *fj_jfield(const jx_t *j, const cJSON *obj, const char *name);
/* fj_jfield of a name the table knows, by its index k (FK_*) */
static inline const cJSON *fj_kfield(const jx_t *j, const cJSON *obj, int k, const char *name)
{
    const fj_keys_t *ks = j->keys;
    if (ks && ks->obj == obj && obj)
        return ks->present >> k & 1 ? ks->it[k] : NULL;
    return fj_field(obj, name);
}
/* fj_get_str of the item `it` (obj's field fname, NULL: absent): a
 * string or an optional field absent inline (a statement reads two to
 * four), anything else in fj_str_item_rest (fj_fields.c) */
int fj_str_item_rest(jx_t *j, const cJSON *it, const char *path, const char *fname,
                     const char **out, bool required);
static inline int fj_str_item(jx_t *j, const cJSON *it, const char *path, const char *fname,
                              const char **out, bool required)
{
    if (fj_is_string(it)) {
        *out = it->valuestring;
        return 0;
    }
    if (!it && !required) {   /* an optional field absent ("loc", "name") */
        *out = NULL;
        return 0;
    }
    return fj_str_item_rest(j, it, path, fname, out, required);
}
/* d as an int64 (checked before the cast: 1e30 is UB): "is not an
 * integer" or "is outside the 64-bit integer range" otherwise */
int fj_int_of_number(jx_t *j, double d, const char *path, const char *fname, int64_t *out);
int fj_get_int_item(jx_t *j, const cJSON *it, const char *path, const char *fname,
                    int64_t *out, bool *dep);
int fj_get_int(jx_t *j, const cJSON *obj, const char *path, const char *fname, int64_t *out,
               int64_t dflt, bool required);
int fj_get_int_range(jx_t *j, const cJSON *obj, const char *path, const char *fname, int *out,
                     int dflt, int64_t lo, int64_t hi);
int fj_eval_number(jx_t *j, const char *text, double *out, char *msg, size_t n);
int fj_get_num(jx_t *j, const cJSON *obj, const char *path, const char *fname, double *out,
               double dflt);
int fj_get_bool3(jx_t *j, const cJSON *obj, const char *path, const char *fname, bool *out,
                 bool *given);
int fj_get_bool(jx_t *j, const cJSON *obj, const char *path, const char *fname, bool *out);
int fj_get_str(jx_t *j, const cJSON *obj, const char *path, const char *fname,
               const char **out, bool required);
const char *fj_strip_prefix(const char *s);
int fj_get_enum(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                isa_ftype_t type, const fj_alias_t *aliases, int *out, int dflt);
int fj_get_engine(jx_t *j, const cJSON *obj, const char *path, int *out);
/* fj_get_enum / fj_get_engine into one of tir_op_t's int8_t fields (every
 * ISA enumeration value fits one). */
int fj_get_enum8(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                 isa_ftype_t type, const fj_alias_t *aliases, int8_t *out, int dflt);
int fj_get_engine8(jx_t *j, const cJSON *obj, const char *path, int8_t *out);
/* fj_get_num / fj_get_enum / fj_get_int_range into the rare field of op at
 * offset off (offsetof(tir_op_rare_t, ...); a double, an int, an int):
 * enc_rare_put, so a field left at its default keeps op's record. */
#define RARE_REDUCE_CMD offsetof(tir_op_rare_t, reduce_cmd)
int fj_rare_num(jx_t *j, const cJSON *obj, const char *path, const char *fname, tir_op_t *op,
                size_t off, double dflt);
int fj_rare_enum(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                 isa_ftype_t type, const fj_alias_t *aliases, tir_op_t *op, size_t off, int dflt);
int fj_rare_int_range(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                      tir_op_t *op, size_t off, int dflt, int64_t lo, int64_t hi);
int fj_get_dtype(jx_t *j, const cJSON *obj, const char *path, unsigned *out);
int fj_get_shape(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                 int64_t *shape, int *ndim, int maxd);
/* fj_get_shape of the item `it` (obj's field fname, NULL: absent) */
int fj_shape_item(jx_t *j, const cJSON *it, const char *path, const char *fname,
                  int64_t *shape, int *ndim, int maxd);
int fj_lookup(jx_t *j, const char *name, const char *path, const char *fname);
int fj_parse_slice_ap(jx_t *j, const char *text, const char *path, const char *fname,
                      tir_ap_t *out, int *tensor, enc_slice_t *sl, int *ns);
/* The same, accepting NKI's "name.reshape(dims)" view of an HBM tensor
 * before the slices; *vnd/vshape give the view (0: none). */
int fj_parse_view_ap(jx_t *j, const char *text, const char *path, const char *fname,
                     tir_ap_t *out, int *tensor, enc_slice_t *sl, int *ns, int *vnd,
                     int64_t *vshape);
int fj_parse_raw_ap(jx_t *j, const cJSON *it, const char *path, const char *fname,
                    tir_ap_t *out);
int fj_parse_indirect(jx_t *j, const cJSON *it, const char *path, const char *fname,
                      fj_operand_t *out);
int fj_get_operand(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                   bool required, bool allow_indirect, fj_operand_t *out);
int fj_operand_item(jx_t *j, const cJSON *it, const char *path, const char *fname,
                    bool allow_indirect, fj_operand_t *out);
int fj_get_ap_value(jx_t *j, const cJSON *obj, const char *path, const char *fname, bool required,
                    tir_ap_t *out);
/* fj_get_ap_value interned into the kernel: *slot = the pool's record (an
 * op's operand); an absent optional field gives &tir_ap_none. */
int fj_get_ap(jx_t *j, const cJSON *obj, const char *path, const char *fname, bool required,
              const tir_ap_t **slot);
/* *slot = ap interned into the kernel (tir_ap_intern); -1 (error naming
 * path.fname) on out-of-memory. */
int fj_intern_ap(jx_t *j, const char *path, const char *fname, const tir_ap_t *ap,
                 const tir_ap_t **slot);
/* fj_get_ap_value of a string operand already found: `it` is obj's field
 * fname and a string (a statement whose fields were read once keeps it). */
int fj_get_ap_str(jx_t *j, const cJSON *it, const char *path, const char *fname,
                  tir_ap_t *out);
/* fj_get_ap_str interned into the kernel (*slot, like fj_get_ap) */
int fj_intern_ap_str(jx_t *j, const cJSON *it, const char *path, const char *fname,
                     const tir_ap_t **slot);
const char *fj_leading_name(const char *text, char *name, size_t n);
int fj_get_scalar(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                  tir_scalar_t *out, double dflt);
/* dst, src (tensor_copy, transpose, max8, broadcast_partition, ...) */
int fj_h_dst_src(jx_t *j, const cJSON *o, const char *path, tir_op_t *op);
/* combine_tiles' broadcast_num_to_memset (fj_ops_dma.c) */
int fj_num_tile(jx_t *j, const char *base, const char *what, unsigned dtype, int ndim,
                const int64_t *shape, double v, tir_ap_t *out);
int fj_get_ap_or_num(jx_t *j, const cJSON *o, const char *path, const char *fname,
                     const tir_op_t *op, const tir_ap_t **out);

/* The paths of a loop body's statements ("<path>[i]"), joined once for
 * all iterations (fj_paths.c): p[i] NULL when too long (the statement walk
 * reports it when it reaches statement i, as without them); p NULL (out
 * of memory): joined per iteration.  st[i]: statement i decoded (the
 * memo's kept record, frontend_json.c exec_stmt), NULL until the first
 * iteration decodes it, so later iterations skip the memo's lookup; st
 * NULL (out of memory): looked up. */
typedef struct {
    const char **p;
    char *buf;
    const void **st;
} fj_paths_t;
void fj_body_paths(const cJSON *body, const char *path, fj_paths_t *bp);
/* The statement walk (frontend_json.c): run a block's statements; bp: its
 * statements' paths when the caller made them (a loop body), else NULL. */
int fj_exec_block(jx_t *j, const cJSON *body, const char *path, const fj_paths_t *bp);
/* A `for` or `let` statement's "var": a C identifier shorter than
 * ENC_VAR_NAME, not `pid` or `num_programs`. */
int fj_get_var(jx_t *j, const cJSON *o, const char *path, const char **var);
/* Loops (fj_loops.c).  kind: 0 affine/static, 1 sequential_range, 2
 * dynamic_range / fori_loop. */
int fj_exec_for(jx_t *j, const cJSON *o, const char *path, int kind);
/* The tile statements directly in a block (a guess at the tensors one
 * iteration declares; nested loops make their own); *nstmts (unless NULL):
 * the block's statements, counted in the same walk. */
int64_t fj_count_tiles(const cJSON *body, int *nstmts);
void fj_body_paths_free(fj_paths_t *bp);
/* A body without joined paths (fj_paths.c): the path copied into p once
 * (its length), then "<path>[i]" per statement written after it */
size_t fj_copy_path(char *p, size_t cap, const char *path);
/* "<path>[i]" in p, whose first n bytes are the path already: false when
 * it would not fit (su_join_int's length past the buffer). */
static inline bool fj_index_path(char *p, size_t cap, size_t n, int i)
{
    char tail[24];
    size_t t = 0;
    tail[t++] = '[';
    t += su_long(tail + t, i);
    tail[t++] = ']';
    if (n + t >= cap)
        return false;
    tpb_copy_short(p + n, tail, t);
    p[n + t] = 0;
    return true;
}

/* An op statement's names (fj_opnames.c): the op table entry of a name
 * (kernel-format or nki.isa spelling; NULL: unknown), whether the op has
 * NKI argument names, and those names renamed in place to the fields
 * (an error when both spellings are given). */
const fj_opdef_t *fj_find_opdef(const char *name);
bool fj_has_nki_params(const fj_opdef_t *d);
int fj_rename_nki_params(jx_t *j, const cJSON *o, const char *path, const fj_opdef_t *d);

/* The kernel file's declarations (fj_decl.c): tensors of one kind, the
 * inline/file constants, and the launch grid for one program id. */
int fj_decl_tensors(jx_t *j, const cJSON *root, const char *key, tir_tensor_kind_t kind);
int fj_decl_constants(jx_t *j, const cJSON *root);
int fj_parse_grid(jx_t *j, const cJSON *root, int program_id, int *nprog, int *ncores,
                  int *core);

#endif
