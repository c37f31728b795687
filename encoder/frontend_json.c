/* frontend_json.c - the JSON kernel file (docs/kernel-format.md) -> tile IR.
 *
 * Walks the cJSON tree once for one program id, evaluating `for`/`let`/`if`
 * as it goes (loops unroll at compile time) and driving the C builder API,
 * so every op is validated by the same code as a C-built kernel.  Every
 * error carries "<file>: <path>: field '<field>'". */
#include "frontend.h"
#include "strutil.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "builder.h"
#include "expr.h"
#include "fj.h"
#include "fileio.h"
#include "hugepage.h"
#include "jsonarena.h"
#include "jsonread.h"
#include "lnc.h"

/* "deps": names of earlier ops this one waits for (NKI deps / the notes'
 * process_dep_edges); each name is the latest earlier op of that name.  Set
 * on every op the statement emitted ([n0, nops)). */
static int set_deps(jx_t *j, const cJSON *o, const char *path, int n0)
{
    const cJSON *deps = fj_field(o, "deps");
    if (!deps)
        return 0;
    tir_kernel_t *k = j->b.k;
    int n = cJSON_IsArray(deps) ? cJSON_GetArraySize(deps) : -1;
    if (n < 0 || n > 4)
        return fj_jfail(j, path, "deps", "must be a list of at most 4 op names");
    int idx[4];
    for (int d = 0; d < n; d++) {
        const cJSON *e = cJSON_GetArrayItem(deps, d);
        if (!cJSON_IsString(e))
            return fj_jfail(j, path, "deps", "entry %d is not an op name", d);
        idx[d] = -1;
        for (int i = n0 - 1; i >= 0 && idx[d] < 0; i--)
            if (!strcmp(k->ops[i].name, e->valuestring))
                idx[d] = i;
        if (idx[d] < 0)
            return fj_jfail(j, path, "deps", "no earlier op named '%s'", e->valuestring);
    }
    /* a noop emits nothing: depending on it means depending on its deps */
    for (int d = 0; d < n; d++) {
        const tir_op_t *t = &k->ops[idx[d]];
        if (t->kind != TIR_NOOP)
            continue;
        if (n - 1 + t->rare->ndeps > 4)
            return fj_jfail(j, path, "deps", "more than 4 ops once noop '%s' is expanded", t->name);
        const int *inherit = t->rare->deps;
        int ninherit = t->rare->ndeps;
        idx[d--] = idx[--n];   /* drop the noop itself ... */
        for (int x = 0; x < ninherit; x++)
            idx[n++] = inherit[x];   /* ... and take its deps (never noops) */
    }
    for (int i = n0; i < k->nops; i++)
        if (tir_op_set_deps(k, &k->ops[i], idx, n))
            return fj_jfail(j, path, "deps", "out of memory");
    return 0;
}

/* A statement decoded once (exec_stmt): a loop body's objects are
 * executed every iteration, their kind, op table entry and loc do not
 * change.  Kept in the memo (inside loops) and owned by the run. */
enum { ST_TILE, ST_LET, ST_NO_REORDER, ST_FOR, ST_IF, ST_OP };
typedef struct fj_stmt {
    int what;                    /* ST_* */
    int for_kind;                /* ST_FOR: fj_exec_for's kind */
    const char *loc;             /* replaces the path, or NULL */
    const fj_opdef_t *d;         /* ST_OP */
    bool prepared;               /* ST_OP: NKI names renamed, fields checked */
    bool masked;                 /* ST_OP: NKI mask= through fj_masked_op */
    const char *ipath;           /* ST_OP, ST_TILE: its ops' / tile's path interned
                                    (enc_set_path_slot) */
    const void *tile;            /* ST_TILE: its fields kept (tile_decl_t), or NULL */
    int tentry;                  /* ST_TILE: its name's builder entry + 1 (enc_tile_at) */
    /* ST_OP, once run_compute_op read them (constants of the object): */
    const cJSON *obj;            /* the statement's object */
    bool head;                   /* name, engine, deps, sched below are known */
    const char *name;            /* NKI name=, NULL */
    int engine;
    bool deps, sched;            /* "deps" / "schedule" given */
    enc_op_check_t *chk;         /* ST_OP in a loop body: its last op validated
                                    (enc_set_op_check), owned by the run; NULL */
    const void *mq[2], *ma[2];   /* ST_OP: the memo's answers about obj found
                                    (fj_stmt_memo_get): question, answer */
} fj_stmt_t;

const void *fj_stmt_memo_get(const jx_t *j, const cJSON *o, const void *what)
{
    fj_stmt_t *st = j->stmt;
    if (!j->memo_n)   /* nothing kept (a flat body): no answer */
        return NULL;
    if (!st || st->obj != o)
        return fj_memo_get(j, o, what);
    for (int i = 0; i < 2; i++)
        if (st->mq[i] == what)
            return st->ma[i];
    const void *v = fj_memo_get(j, o, what);
    for (int i = 0; v && i < 2; i++)   /* an answer, once there, never changes */
        if (!st->mq[i]) {
            st->mq[i] = what;
            st->ma[i] = v;
            break;
        }
    return v;
}

/* The op's name and engine, and whether deps / schedule are given: read
 * once per statement (they are constants of its object). */
static int op_head(jx_t *j, const cJSON *o, const char *path, fj_stmt_t *st, tir_op_t *op,
                   const char **nm)
{
    if (st && st->head) {
        *nm = st->name;
        op->engine = st->engine;
        return 0;
    }
    if (fj_str_item(j, fj_kfield(j, o, FK_NAME, "name"), path, "name", nm, false) ||
        fj_get_engine8(j, o, path, &op->engine))
        return -1;
    if (st) {
        st->name = *nm;
        st->engine = op->engine;
        st->deps = fj_kfield(j, o, FK_DEPS, "deps") != NULL;
        st->sched = fj_kfield(j, o, FK_SCHEDULE, "schedule") != NULL;
        st->head = true;
    }
    return 0;
}

/* The statement's record of its last op validated, made on its first run
 * in a loop body (NULL elsewhere: each object runs once; out of memory). */
static enc_op_check_t *stmt_check(jx_t *j, fj_stmt_t *st)
{
    if (!st->chk && fj_memo_keeps(j)) {
        enc_op_check_t *c = calloc(1, sizeof *c);
        if (c && fj_keep(j, c, free))
            st->chk = c;
        else
            free(c);
    }
    return st->chk;
}

static int run_compute_op(jx_t *j, const cJSON *o, const char *path, const fj_opdef_t *d)
{
    tir_op_t op;
    tir_op_init(&op, d->kind);
    const char *nm;
    fj_stmt_t *st = j->stmt && j->stmt->obj == o ? j->stmt : NULL;
    if (op_head(j, o, path, st, &op, &nm))
        return -1;
    enc_set_path(&j->b, path);
    enc_set_path_slot(&j->b, st ? &st->ipath : NULL);
    enc_set_name(&j->b, nm);   /* also reaches ops a typed builder makes */
    enc_set_op_check(&j->b, st ? stmt_check(j, st) : NULL);
    int n0 = j->b.k->nops;
    int rc = d->fn(j, o, path, &op);
    if (rc > 0)
        rc = enc_emit(&j->b, &op) < 0 ? -1 : 0;   /* else the handler emitted through a builder */
    enc_set_path_slot(&j->b, NULL);   /* the slot may be a statement on the stack */
    enc_set_op_check(&j->b, NULL);
    if (rc < 0)
        return -1;
    if (st && !st->deps && !st->sched)
        return fj_sched_chain(j, path, n0);   /* what set_deps and fj_sched_op do then */
    return set_deps(j, o, path, n0) || fj_sched_op(j, o, path, n0) ? -1 : 0;
}

static const char stmt_tag = 0;   /* the memo question "decoded statement" */

static int exec_compute_op_slot(jx_t *j, const cJSON *o, const char *path, fj_stmt_t *st)
{
    const fj_opdef_t *d = st->d;
    if (st->prepared)   /* renaming is done, the field check passed */
        return st->masked ? fj_masked_op(j, o, path, d, run_compute_op)
                          : run_compute_op(j, o, path, d);
    if (j->prep_d != d) {   /* constants of the op table entry: a flat body repeats one */
        j->prep_d = d;
        j->prep_nki = fj_has_nki_params(d);
        j->prep_native = false;   /* NKI mask= carried by the op's own predicate */
        for (int i = 0; d->fields[i]; i++)
            j->prep_native |= d->fields[i][0] == 'm' && !strcmp(d->fields[i], "mask");
    }
    if (j->prep_nki) {
        if (fj_rename_nki_params(j, o, path, d))
            return -1;
        if (j->keys && j->keys->obj == o)   /* keys may have been renamed */
            fj_keys_scan(j, o, j->keys);
    }
    if (!j->prep_native && fj_kfield(j, o, FK_MASK, "mask")) {  /* compute into a tile, masked copy (fj_mask.c) */
        st->prepared = st->masked = true;
        return fj_masked_op(j, o, path, d, run_compute_op);
    }
    if (fj_check_fields(j, o, path, d->fields))
        return -1;
    st->prepared = true;
    return run_compute_op(j, o, path, d);
}

/* The statement's ops intern their path and read its head once
 * (enc_set_path_slot, op_head). */
static int exec_compute_op(jx_t *j, const cJSON *o, const char *path, fj_stmt_t *st)
{
    struct fj_stmt *outer = j->stmt;
    st->obj = o;
    j->stmt = st;
    int rc = exec_compute_op_slot(j, o, path, st);
    j->stmt = outer;
    return rc;
}

/* ---- statements ---- */

static int valid_ident(const char *s)
{
    if (!s || !*s || strlen(s) >= ENC_VAR_NAME)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
              (p != s && *p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

int fj_get_var(jx_t *j, const cJSON *o, const char *path, const char **var)
{
    if (fj_get_str(j, o, path, "var", var, true))
        return -1;
    if (!valid_ident(*var) || !strcmp(*var, "pid") || !strcmp(*var, "num_programs"))
        return fj_jfail(j, path, "var", "'%s' is not a usable variable name", *var);
    return 0;
}

/* A tile statement's fields, read once in a loop body when its shape is
 * all numbers (a shape of loop expressions is read every iteration). */
typedef struct {
    const char *name;
    unsigned dt;
    tir_tensor_kind_t kind;
    int nd;
    int64_t shape[TIR_MAX_DIMS];
    int64_t addr;                /* "addr" (fixed placement), INT64_MIN = none */
} tile_decl_t;

static const char tile_tag = 0;   /* the memo question "tile fields" */

static void tile_keep(jx_t *j, const cJSON *o, const tile_decl_t *t)
{
    if (!fj_memo_keeps(j))
        return;
    for (const cJSON *c = fj_field(o, "shape")->child; c; c = c->next)
        if (!cJSON_IsNumber(c))
            return;
    tile_decl_t *k = malloc(sizeof *k);
    if (!k || !fj_keep(j, k, free)) {
        free(k);
        return;
    }
    *k = *t;
    fj_memo_put(j, o, &tile_tag, k);
}

static int read_tile(jx_t *j, const cJSON *o, const char *path, tile_decl_t *t)
{
    static const char *const allowed[] = {"op", "name", "shape", "dtype", "buffer", "addr",
                                          NULL};
    if (fj_check_fields(j, o, path, allowed))
        return -1;
    const char *buf;
    if (fj_str_item(j, fj_kfield(j, o, FK_NAME, "name"), path, "name", &t->name, true) ||
        fj_get_dtype(j, o, path, &t->dt) ||
        fj_shape_item(j, fj_kfield(j, o, FK_SHAPE, "shape"), path, "shape", t->shape, &t->nd,
                      1 + ISA_MAX_FREE_DIMS) ||
        fj_str_item(j, fj_kfield(j, o, FK_BUFFER, "buffer"), path, "buffer", &buf, false) ||
        fj_get_int(j, o, path, "addr", &t->addr, INT64_MIN, false))
        return -1;
    t->kind = TIR_T_SBUF;
    if (buf && !strcmp(fj_strip_prefix(buf), "psum"))
        t->kind = TIR_T_PSUM;
    else if (buf && strcmp(fj_strip_prefix(buf), "sbuf"))
        return fj_jfail(j, path, "buffer", "unknown buffer '%s' (sbuf, psum)", buf);
    tile_keep(j, o, t);
    return 0;
}

/* st: the statement decoded once (its ipath caches the path interned) */
static int exec_tile(jx_t *j, const cJSON *o, const char *path, struct fj_stmt *st)
{
    tile_decl_t local;
    const tile_decl_t *t = fj_memo_get_slot(j, &st->tile, o, &tile_tag);
    if (!t) {
        if (read_tile(j, o, path, &local))
            return -1;
        t = &local;
    }
    enc_set_path(&j->b, path);
    enc_set_path_slot(&j->b, &st->ipath);
    int id = enc_tile_at(&j->b, t->name, t->kind, t->dt, t->nd, t->shape, &st->tentry);
    enc_set_path_slot(&j->b, NULL);   /* the slot may be a statement on the stack */
    if (id >= 0 && t->addr != INT64_MIN && enc_tile_place(&j->b, id, t->addr))
        return -1;
    return id < 0 ? -1 : 0;
}

static int exec_let(jx_t *j, const cJSON *o, const char *path)
{
    static const char *const allowed[] = {"op", "var", "value", NULL};
    if (fj_check_fields(j, o, path, allowed))
        return -1;
    const char *var;
    if (fj_get_var(j, o, path, &var))
        return -1;
    const cJSON *v = fj_field(o, "value");
    if (!v)
        return fj_jfail(j, path, "value", "missing");
    int64_t val;
    bool dep;
    if (fj_get_int_item(j, v, path, "value", &val, &dep))
        return -1;
    if (enc_env_push(&j->env, var, val, dep))
        return fj_jfail(j, path, NULL, "out of memory");
    return 0;
}

static int exec_if(jx_t *j, const cJSON *o, const char *path)
{
    static const char *const allowed[] = {"op", "cond", "body", "else", NULL};
    if (fj_check_fields(j, o, path, allowed))
        return -1;
    const cJSON *c = fj_field(o, "cond");
    if (!c)
        return fj_jfail(j, path, "cond", "missing");
    int64_t v;
    bool dep;
    /* dep (the condition uses pid) is fine: the front-end runs once per
     * program with pid bound, so each program takes its own branch */
    if (fj_get_int_item(j, c, path, "cond", &v, &dep))
        return -1;
    const char *which = v ? "body" : "else";
    const cJSON *body = fj_field(o, which);
    if (!body)
        return v ? fj_jfail(j, path, "body", "missing") : 0;
    if (!cJSON_IsArray(body))
        return fj_jfail(j, path, which, "expected an array of ops, got %s", fj_type_name(body));
    if (fj_field(o, "else") && !cJSON_IsArray(fj_field(o, "else")))
        return fj_jfail(j, path, "else", "expected an array of ops");
    char sub[ENC_PATH_MAX + 16];
    snprintf(sub, sizeof sub, "%s.%s", path, which);
    int mark = j->env.n;
    enc_scope_begin(&j->b);
    int rc = fj_exec_block(j, body, sub, NULL);
    enc_scope_end(&j->b);
    enc_env_pop_to(&j->env, mark);
    return rc;
}

/* NKI's `with nl.no_reorder():` -- every op of the body runs after the
 * block's previous op (fj_schedule.c); no scope, as in Python */
static int exec_no_reorder(jx_t *j, const cJSON *o, const char *path)
{
    static const char *const allowed[] = {"op", "body", NULL};
    if (fj_check_fields(j, o, path, allowed))
        return -1;
    const cJSON *body = fj_field(o, "body");
    if (!cJSON_IsArray(body))
        return fj_jfail(j, path, "body", "expected an array of ops, got %s", fj_type_name(body));
    char sub[ENC_PATH_MAX + 8];
    snprintf(sub, sizeof sub, "%s.body", path);
    if (j->sched.depth++ == 0)
        j->sched.last = -1;
    int rc = fj_exec_block(j, body, sub, NULL);
    j->sched.depth--;
    return rc;
}

/* What the op name makes a statement (kind, loop kind, op table entry);
 * false: no such op. */
static bool name_kind(const char *name, fj_stmt_t *st)
{
    const char *nn = fj_strip_prefix(name);
    int kind = !strcmp(nn, "sequential_range") ? 1
               : !strcmp(nn, "dynamic_range") || !strcmp(nn, "fori_loop") ? 2
               : !strcmp(nn, "while_loop") ? 3 : 0;
    if (!strcmp(name, "tile") || !strcmp(name, "let") || !strcmp(nn, "no_reorder")) {
        st->what = !strcmp(name, "tile") ? ST_TILE : !strcmp(name, "let") ? ST_LET
                   : ST_NO_REORDER;
        return true;
    }
    if (!strcmp(nn, "affine_range") || !strcmp(nn, "static_range") || !strcmp(nn, "range") ||
        kind > 0)
        name = "for";
    if (!strcmp(name, "for") || !strcmp(name, "if")) {
        st->what = name[0] == 'f' ? ST_FOR : ST_IF;
        st->for_kind = kind;
        return true;
    }
    st->what = ST_OP;
    st->d = fj_find_opdef(nn);
    return st->d != NULL;
}

/* name_kind through the run's cache of op names (j->opnames); a name too
 * long for an entry is looked up every time. */
static bool name_kind_cached(jx_t *j, const char *name, fj_stmt_t *st)
{
    unsigned n = j->nopnames < FJ_OPNAMES ? j->nopnames : FJ_OPNAMES;
    for (unsigned i = 0; i < n; i++) {
        const struct fj_opname *c = &j->opnames[i];
        if (c->name[0] == name[0] && su_eq(c->name, name)) {
            st->what = c->what;
            st->for_kind = c->for_kind;
            st->d = c->d;
            return true;
        }
    }
    if (!name_kind(name, st))
        return false;
    size_t len = strlen(name);
    if (len < sizeof j->opnames[0].name) {
        struct fj_opname *c = &j->opnames[j->nopnames++ % FJ_OPNAMES];
        memcpy(c->name, name, len + 1);
        c->what = st->what;
        c->for_kind = st->for_kind;
        c->d = st->d;
    }
    return true;
}

/* What statement o is (its errors are the statement's first errors). */
static int decode_stmt(jx_t *j, const cJSON *o, const char *path, fj_stmt_t *st)
{
    *st = (fj_stmt_t){0};
    if (!fj_is_object(o))
        return fj_jfail(j, path, NULL, "expected an op object, got %s", fj_type_name(o));
    const char *name;
    if (fj_str_item(j, fj_kfield(j, o, FK_OP, "op"), path, "op", &name, true))
        return -1;
    /* "loc": "file.py:LINE" names the op's source line; it replaces the
     * op's path (errors, sidecars, trace) of a tile, let or op */
    const char *loc;
    if (fj_str_item(j, fj_kfield(j, o, FK_LOC, "loc"), path, "loc", &loc, false))
        return -1;
    if (loc && loc[0] && strcmp(name, "for") && strcmp(name, "if"))
        st->loc = loc;
    if (!name_kind_cached(j, name, st))
        return fj_jfail(j, path, "op", "unknown op '%s' (see docs/kernel-format.md)", name);
    return 0;
}

/* slot: the loop body's slot of o's decoded statement (fj_paths_t st[i]),
 * or NULL */
static int exec_stmt(jx_t *j, const cJSON *o, const char *path, const void **slot)
{
    /* a filled slot is an object's (the memo keeps only objects') */
    fj_stmt_t *st = (slot && *slot) || fj_is_object(o)
                        ? (fj_stmt_t *)fj_memo_get_slot(j, slot, o, &stmt_tag)
                        : NULL;
    fj_stmt_t local;
    if (!st) {
        if (fj_is_object(o)) {   /* its keys in one pass, for its first run */
            fj_keys_scan(j, o, &j->keytab);
            j->keys = &j->keytab;
        }
        if (decode_stmt(j, o, path, &local))
            return -1;
        st = &local;
        fj_stmt_t *kept = fj_memo_keeps(j) ? malloc(sizeof *kept) : NULL;
        if (kept && fj_keep(j, kept, free)) {
            *kept = local;
            st = kept;
            if (fj_memo_put(j, o, &stmt_tag, kept) && slot)   /* not kept: still freed */
                *slot = kept;
        } else {
            free(kept);
        }
    }
    if (st->loc)
        path = st->loc;
    switch (st->what) {
    case ST_TILE: return exec_tile(j, o, path, st);
    case ST_LET: return exec_let(j, o, path);
    case ST_NO_REORDER: return exec_no_reorder(j, o, path);
    case ST_OP: return exec_compute_op(j, o, path, st);
    default: break;
    }
    if (++j->depth > ENC_MAX_NESTING)
        return fj_jfail(j, path, NULL, "loops/conditionals nested more than %d deep",
                        ENC_MAX_NESTING);
    int rc = st->what == ST_FOR ? fj_exec_for(j, o, path, st->for_kind) : exec_if(j, o, path);
    j->depth--;
    return rc;
}

int fj_exec_block(jx_t *j, const cJSON *body, const char *path, const fj_paths_t *bp)
{
    int i = 0;
    char p[ENC_PATH_MAX];
    size_t n = SIZE_MAX;   /* the path's length once copied into p */
    for (const cJSON *s = body->child; s; s = s->next, i++) {
        const char *sp = p;
        if (bp && bp->p) {
            sp = bp->p[i];
        } else {
            if (n == SIZE_MAX)
                n = fj_copy_path(p, sizeof p, path);
            if (!fj_index_path(p, sizeof p, n, i))
                sp = NULL;
        }
        if (!sp)
            return fj_jfail(j, path, NULL, "op path too long (nesting too deep)");
        if (exec_stmt(j, s, sp, bp && bp->st ? &bp->st[i] : NULL))
            return -1;
    }
    return 0;
}

/* ---- entry points ---- */

static int run(jx_t *j, const cJSON *root, const enc_front_opts_t *opts)
{
    static const char *const allowed[] = {"kernel", "target", "grid", "inputs", "outputs",
                                          "scratch", "constants", "body", "description",
                                          "schedule", NULL};
    if (!cJSON_IsObject(root))
        return fj_jfail(j, "(top level)", NULL, "expected a JSON object, got %s", fj_type_name(root));
    if (fj_check_fields(j, root, "(top level)", allowed))
        return -1;
    const char *kname, *target;
    if (fj_get_str(j, root, "(top level)", "kernel", &kname, false) ||
        fj_get_str(j, root, "(top level)", "target", &target, false))
        return -1;
    if (opts->target_override)
        target = opts->target_override;
    const tpb_target_t *tg = tpb_target_get(target ? target : "trn2");
    if (!tg)
        return fj_jfail(j, "(top level)", "target", "unknown target '%s' (known: %s)", target,
                     tpb_target_names());
    j->b.target = tg;
    snprintf(j->b.k->target, sizeof j->b.k->target, "%s", tg->name);
    if (kname)
        snprintf(j->b.k->name, sizeof j->b.k->name, "%s", kname);
    int nprog = 1, ncores = 1, core = 0;
    if (fj_parse_grid(j, root, opts->program_id, &nprog, &ncores, &core))
        return -1;
    j->b.k->program_id = opts->program_id;
    j->b.k->core = core;
    j->b.k->num_programs = nprog;
    j->b.k->num_cores = ncores;
    j->b.k->grid_ndim = j->grid_ndim;
    memcpy(j->b.k->grid_dims, j->grid_dims, sizeof j->b.k->grid_dims);
    j->b.program_id = opts->program_id;
    j->b.core = core;
    if (enc_env_push(&j->env, "pid", opts->program_id, true) ||
        enc_env_push(&j->env, "num_programs", nprog, false) ||
        enc_env_push(&j->env, "program_ndim", j->grid_ndim, false))
        return fj_jfail(j, "(top level)", NULL, "out of memory");
    int64_t rest = opts->program_id;
    for (int d = j->grid_ndim - 1; d >= 0; d--) {   /* row-major per-axis ids */
        char pn[16], nn[24];
        snprintf(pn, sizeof pn, "pid%d", d);
        snprintf(nn, sizeof nn, "num_programs%d", d);
        if (enc_env_push(&j->env, pn, rest % j->grid_dims[d], true) ||
            enc_env_push(&j->env, nn, j->grid_dims[d], false))
            return fj_jfail(j, "(top level)", NULL, "out of memory");
        rest /= j->grid_dims[d];
    }
    j->env_base = j->env.n;
    if (fj_decl_tensors(j, root, "inputs", TIR_T_INPUT) || fj_decl_tensors(j, root, "outputs", TIR_T_OUTPUT) ||
        fj_decl_tensors(j, root, "scratch", TIR_T_SCRATCH) || fj_decl_constants(j, root))
        return -1;
    const cJSON *body = fj_field(root, "body");
    if (!body)
        return fj_jfail(j, "(top level)", "body", "missing");
    if (!cJSON_IsArray(body))
        return fj_jfail(j, "(top level)", "body", "expected an array of ops, got %s", fj_type_name(body));
    /* as fj_exec_for: an op a statement but a tile statement (it adds a
     * tensor, no op), a tensor a tile statement (a walk of the statements
     * only; estimate_block here cost more than the growth it saves) */
    int nstmts;
    int64_t tiles = fj_count_tiles(body, &nstmts);
    enc_builder_reserve(&j->b, nstmts - tiles, tiles);
    /* a name each at most (a loop's tile statement is one name however
     * many tensors its iterations declare: fj_exec_for reserves no names) */
    enc_reserve_names(&j->b, tiles);
    return fj_exec_block(j, body, "body", NULL) || fj_sched_apply(j, root) ? -1 : 0;
}

/* enc_parse_kernel_json_opts with the tree's arena given (empty, or
 * holding the text: enc_read_kernel_text), freed here in any case. */
static int parse_json_in(tpb_arena_t *tree, const char *text, size_t len, const char *source_name,
                         const char *base_dir, const enc_front_opts_t *opts, tir_kernel_t *out,
                         tpb_err_t *err)
{
    jx_t *j = calloc(1, sizeof *j);
    const char *src = source_name ? source_name : "<kernel>";
    if (!j) {
        tpb_arena_free(tree);
        tir_kernel_init(out);
        return tpb_errf(err, "%s: out of memory", src);
    }
    tpb_err_t scratch;
    if (!err)
        err = &scratch;
    enc_builder_init(&j->b, out, "kernel", NULL, err);
    snprintf(out->source, sizeof out->source, "%s", src);
    snprintf(j->b.msg_prefix, sizeof j->b.msg_prefix, "%s: ", src);
    snprintf(j->base_dir, sizeof j->base_dir, "%s", base_dir && *base_dir ? base_dir : ".");
    j->max_ops = opts && opts->max_ops > 0 ? opts->max_ops : ENC_DEFAULT_MAX_OPS;
    j->b.max_ops = j->max_ops;
    j->cur_loop = -1;
    enc_env_init(&j->env);
    enc_front_opts_t dflt = {NULL, 0, 0, NULL};
    int rc;
    /* the kernel file's tree: every node, key and string in one arena,
     * read-only once parsed and freed whole (jsonarena.h) */
    const char *end = NULL;
    cJSON *root = NULL;
    tpb_ja_status_t st = tpb_json_arena_parse(tree, text, len, &root, &end);
    if (st == TPB_JA_NOMEM) {
        rc = tpb_errf(err, "%s: out of memory reading the JSON text", src);
    } else if (!root) {
        rc = tpb_json_fail_linecol(text, len, end, false, src, err);
    } else if ((end = tpb_json_trailing_text(text, len, end)) != NULL) {
        rc = tpb_json_fail_linecol(text, len, end, true, src, err);
    } else {
        rc = run(j, root, opts ? opts : &dflt) ? -1 : 0;
        if (!rc && enc_builder_complete(&j->b))
            rc = -1;
        if (!rc && j->b.failed)
            rc = -1;
    }
    tpb_arena_free(tree);
    free(j->memo);
    fj_cache_free(j);
    free(j->sched.refs);
    enc_env_free(&j->env);
    enc_builder_free(&j->b);
    free(j);
    return rc;
}

int enc_parse_kernel_json_opts(const char *text, size_t len, const char *source_name,
                               const char *base_dir, const enc_front_opts_t *opts,
                               tir_kernel_t *out, tpb_err_t *err)
{
    tpb_arena_t tree = {0};
    return parse_json_in(&tree, text, len, source_name, base_dir, opts, out, err);
}

int enc_parse_kernel_json(const char *text, size_t len, const char *source_name,
                          const char *base_dir, const char *target_override, int program_id,
                          tir_kernel_t *out, tpb_err_t *err)
{
    enc_front_opts_t o = {target_override, program_id, 0, NULL};
    return enc_parse_kernel_json_opts(text, len, source_name, base_dir, &o, out, err);
}

int enc_parse_kernel_file_opts(const char *path, const enc_front_opts_t *opts, tir_kernel_t *out,
                               tpb_err_t *err)
{
    /* the text at the start of the tree's arena: they share huge pages */
    tpb_arena_t tree = {0};
    tree.spare = opts ? opts->spare : NULL;
    enc_text_t text;
    if (enc_read_kernel_text(path, &tree, &text, err)) {
        tpb_arena_free(&tree);   /* (empty: a failed read leaves nothing) */
        tir_kernel_init(out);
        return -1;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    int rc = parse_json_in(&tree, (const char *)text.buf, text.len, path, dir, opts, out, err);
    enc_text_free(&text);   /* (in the tree: gone with it) */
    return rc;
}

int enc_parse_kernel_file(const char *path, const char *target_override, int program_id,
                          tir_kernel_t *out, tpb_err_t *err)
{
    enc_front_opts_t o = {target_override, program_id, 0, NULL};
    return enc_parse_kernel_file_opts(path, &o, out, err);
}
