/* fj_loops.c - the JSON front-end's loops (docs/kernel-format.md "for"):
 * ranges, their trip counts and the ops they unroll to, dynamic ranges,
 * the loop records the back-end rolls, and the iterations themselves, each
 * running its body through fj_exec_block. */
#include "frontend.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "builder.h"
#include "expr.h"
#include "fj.h"
#include "strutil.h"

/* Static estimate of the ops a block unrolls to (saturating).  Nested loop
 * trip counts are evaluated where the environment allows, else taken as 1. */
static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int range_of(jx_t *j, const cJSON *o, const char *path, int64_t r[3], bool *dep,
                    bool quiet);

/* The tile statements directly in a loop body (a guess at the tensors one
 * iteration declares; nested loops make their own); *nstmts (when not
 * NULL): all its statements, cJSON_GetArraySize's answer from the same
 * walk (a second walk of compile-live's 9 000 nodes missed the cache). */
int64_t fj_count_tiles(const cJSON *body, int *nstmts)
{
    int64_t n = 0;
    int count = 0;
    for (const cJSON *s = body->child; s; s = s->next) {
        count++;
        if (!fj_is_object(s))
            continue;
        /* "op" is mostly the first key: fj_field's answer then, without its call */
        const cJSON *c = s->child;
        const char *k = c ? c->string : NULL;
        const cJSON *opn = k && k[0] == 'o' && k[1] == 'p' && !k[2] ? c : fj_field(s, "op");
        n += fj_is_string(opn) && opn->valuestring[0] == 't' &&   /* one byte: most are not */
             su_eq(opn->valuestring, "tile");
    }
    if (nstmts)
        *nstmts = count;
    return n;
}

static int64_t estimate_block(jx_t *j, const cJSON *body, int depth)
{
    if (!cJSON_IsArray(body) || depth > ENC_MAX_NESTING)
        return 0;
    int64_t total = 0;
    for (const cJSON *s = body->child; s; s = s->next) {
        const cJSON *opn = cJSON_IsObject(s) ? fj_field(s, "op") : NULL;
        const char *n = cJSON_IsString(opn) ? opn->valuestring : "";
        if (!strcmp(n, "for")) {
            int64_t r[3];
            bool dep;
            int64_t trips = 1;
            if (!range_of(j, s, "", r, &dep, true) && r[2] > 0 && r[1] > r[0])
                trips = (r[1] - r[0] + r[2] - 1) / r[2];
            total = sat_add(total, sat_mul(trips, estimate_block(j, fj_field(s, "body"), depth + 1)));
        } else if (!strcmp(n, "if")) {
            int64_t a = estimate_block(j, fj_field(s, "body"), depth + 1);
            int64_t b = estimate_block(j, fj_field(s, "else"), depth + 1);
            total = sat_add(total, a > b ? a : b);
        } else if (strcmp(n, "let") && strcmp(n, "tile")) {
            total = sat_add(total, 1);
        }
    }
    return total;
}

static int range_of(jx_t *j, const cJSON *o, const char *path, int64_t r[3], bool *dep,
                    bool quiet)
{
    const cJSON *rg = fj_field(o, "range");
    *dep = false;
    if (!cJSON_IsArray(rg) || cJSON_GetArraySize(rg) < 1 || cJSON_GetArraySize(rg) > 3)
        return quiet ? -1 : fj_jfail(j, path, "range", "expected [stop], [start, stop] or "
                                  "[start, stop, step], got %s", fj_type_name(rg));
    int64_t v[3] = { 0, 0, 0 };
    int n = 0;
    for (const cJSON *c = rg->child; c; c = c->next) {
        bool d = false;
        if (quiet) {
            if (cJSON_IsNumber(c) && c->valuedouble == floor(c->valuedouble) &&
                fabs(c->valuedouble) < 9e18) {
                v[n++] = (int64_t)c->valuedouble;
                continue;
            }
            enc_val_t ev;
            char msg[64];
            if (!cJSON_IsString(c) || enc_expr_eval(c->valuestring, &j->env, &ev, msg, sizeof msg))
                return -1;
            v[n++] = ev.v;
            continue;
        }
        if (fj_get_int_item(j, c, path, "range", &v[n++], &d))
            return -1;
        *dep |= d;
    }
    r[0] = n == 1 ? 0 : v[0];
    r[1] = n == 1 ? v[0] : v[1];
    r[2] = n == 3 ? v[2] : 1;
    return 0;
}

static void add_loop_note(jx_t *j)
{
    if (j->note_added || !j->b.failed || !j->b.err)
        return;
    j->note_added = true;
    /* name the loop variables' values where the error happened */
    char note[256];
    size_t o = 0;
    note[0] = 0;
    for (int i = j->env_base; i < j->env.n && o < sizeof note; i++) {
        const enc_var_t *v = &j->env.vars[i];
        o += (size_t)snprintf(note + o, sizeof note - o, "%s%s=%lld", o ? ", " : "", v->name,
                              (long long)v->value);
    }
    if (note[0]) {
        size_t len = strlen(j->b.err->msg);
        snprintf(j->b.err->msg + len, sizeof j->b.err->msg - len, " (at %s)", note);
    }
}

/* The iterations a dynamic loop (what: "a dynamic_range") is unrolled to
 * ("guess", 2..64, default 6); it may not sit in another loop. */
static int dynamic_guess(jx_t *j, const cJSON *o, const char *path, const char *what,
                         int64_t *guess)
{
    if (fj_get_int(j, o, path, "guess", guess, 6, false))
        return -1;
    if (*guess < 2 || *guess > 64)
        return fj_jfail(j, path, "guess", "expected 2..64 iterations, got %lld", (long long)*guess);
    if (j->cur_loop >= 0)
        return fj_jfail(j, path, NULL, "%s loop cannot be nested in another loop", what);
    return 0;
}

/* dynamic_range / fori_loop (docs/compiler.md "Dynamic loops"): "range"
 * [stop], [start, stop] or [start, stop, step] whose stop names a register.
 * *reg = its physical register, or -1 when stop is not a register name (a
 * compile-time loop); r[1] = start + guess * step then. */
static int dynamic_range_of(jx_t *j, const cJSON *o, const char *path, int64_t r[3], int *reg)
{
    *reg = -1;
    const cJSON *rg = fj_field(o, "range");
    int n = cJSON_IsArray(rg) ? cJSON_GetArraySize(rg) : 0;
    const cJSON *stop = n ? cJSON_GetArrayItem(rg, n == 1 ? 0 : 1) : NULL;
    bool named = false;
    for (int i = 0; cJSON_IsString(stop) && i < j->nvregs; i++)
        named |= !strcmp(j->vregs[i].name, fj_strip_prefix(stop->valuestring));
    if (!named)
        return 1;
    int64_t v[3] = {0, 0, 1};
    int k = 0;
    for (const cJSON *c = rg->child; c; c = c->next, k++) {
        if (c == stop)
            continue;
        for (int i = 0; cJSON_IsString(c) && i < j->nvregs; i++)
            if (!strcmp(j->vregs[i].name, fj_strip_prefix(c->valuestring)))
                return fj_jfail(j, path, "range", "only the stop of a dynamic_range may be a "
                                "register ('%s' is one)", c->valuestring);
        bool dep;
        if (fj_get_int_item(j, c, path, "range", &v[k], &dep))
            return -1;
    }
    if (v[2] <= 0)
        return fj_jfail(j, path, "range", "dynamic_range step must be a positive compile-time "
                        "integer, got %lld", (long long)v[2]);
    if ((*reg = fj_vreg(j, path, "range", stop->valuestring)) < 0)
        return -1;
    int64_t guess;
    if (dynamic_guess(j, o, path, "a dynamic_range", &guess))
        return -1;
    r[0] = v[0], r[2] = v[2];
    r[1] = r[0] + guess * r[2];
    return 0;
}

/* while_loop (NKI 0.6; docs/compiler.md "Dynamic loops"): "cond" names the
 * register the loop tests before each iteration; r = [0, guess, 1], the
 * iterations the front-end unrolls. */
static int while_of(jx_t *j, const cJSON *o, const char *path, int64_t r[3], int *reg)
{
    const cJSON *c = fj_field(o, "cond");
    if (!cJSON_IsString(c))
        return fj_jfail(j, path, "cond", "expected the name of a register (register_alloc), "
                        "got %s", fj_type_name(c));
    if ((*reg = fj_vreg(j, path, "cond", c->valuestring)) < 0)
        return -1;
    int64_t guess;
    if (dynamic_guess(j, o, path, "a while_loop", &guess))
        return -1;
    r[0] = 0, r[1] = guess, r[2] = 1;
    return 0;
}

/* A dynamic_range's "reg" (NKI hands a fori_loop / dynamic_range body its
 * variable as a VirtualRegister): a register the body may read holding
 * the current iteration's value -- set before the loop to the start, or to
 * register "reg_start" (NKI's register lower bound), and stepped at the
 * end of every iteration ("<var>.next"), so the iterations stay alike for
 * the rolled loop.  Its register, -2 when the loop has none, -1 after the
 * error. */
static int loop_var_reg(jx_t *j, const cJSON *o, const char *path, int kind, const char *var,
                        int64_t start)
{
    const cJSON *from = fj_field(o, "reg_start");
    if (kind != 2 || (!from && !fj_field(o, "reg")))
        return -2;
    if (!fj_field(o, "reg"))
        return fj_jfail(j, path, "reg_start", "needs \"reg\", the loop variable's register");
    if (from && !cJSON_IsString(from))
        return fj_jfail(j, path, "reg_start", "expected a register name, got %s",
                        fj_type_name(from));
    int src = from ? fj_vreg(j, path, "reg_start", from->valuestring) : -1;
    if (from && src < 0)
        return -1;
    char name[ENC_VAR_NAME + 8];
    snprintf(name, sizeof name, "%s.start", var);
    int reg = fj_reg_named(j, o, path);
    return reg < 0 || fj_reg_set(j, path, name, reg, src, start, false) ? -1 : reg;
}

/* Record a loop about to run (rec: kind, trips, dynamic fields) with its
 * "roll" field: true / false roll this loop or never (docs/compiler.md
 * "Rolled loops"); the record lets the back-end find each iteration.  The
 * loop index, or -1 after the error. */
static int add_loop_record(jx_t *j, const cJSON *o, const char *path, tir_loop_t *rec)
{
    const cJSON *rl = fj_field(o, "roll");
    if (rl && !cJSON_IsBool(rl))
        return fj_jfail(j, path, "roll", "expected true or false, got %s", fj_type_name(rl));
    rec->roll = rl ? cJSON_IsTrue(rl) : -1;
    rec->parent = j->cur_loop;
    /* a dynamic loop's body is emitted once: loops inside it stay unrolled */
    for (int q = j->cur_loop; q >= 0; q = j->b.k->loops[q].parent)
        if (j->b.k->loops[q].dynamic) {
            if (rec->roll == 1)
                return fj_jfail(j, path, "roll", "a loop inside a dynamic_range loop is not "
                                "rolled on its own");
            rec->roll = 0;
        }
    if (rec->dynamic)
        rec->roll = 1;
    su_copy(rec->path, sizeof rec->path, path);
    int li = tir_add_loop(j->b.k, rec);
    return li < 0 ? fj_jfail(j, path, NULL, "out of memory") : li;
}

/* A loop the Python front-end traced (docs/kernel-format.md
 * "iterations"): each iteration's ops as one array, no loop variable, no
 * scope (tiles stay visible after it, as in Python); recorded like any
 * loop, so the back-end can roll it. */
static int exec_iterations(jx_t *j, const cJSON *o, const char *path, int kind)
{
    static const char *const allowed[] = {"op", "iterations", "roll", NULL};
    if (fj_check_fields(j, o, path, allowed))
        return -1;
    const cJSON *its = fj_field(o, "iterations");
    if (kind == 2)
        return fj_jfail(j, path, "iterations", "a dynamic_range loop takes a range and a body");
    int64_t trips = cJSON_GetArraySize(its), iter_cap = sat_mul(j->max_ops, MAX_LOOP_ITERATIONS_FACTOR);
    for (const cJSON *c = its->child; c; c = c->next)
        if (!cJSON_IsArray(c))
            return fj_jfail(j, path, "iterations", "expected an array of ops per iteration, "
                            "got %s", fj_type_name(c));
    if (sat_add(j->iterations, trips) > iter_cap)
        return fj_jfail(j, path, "iterations", "the kernel would run more than %lld loop "
                        "iterations", (long long)iter_cap);
    j->iterations += trips;
    tir_loop_t rec = {.sequential = kind == 1, .trips = trips, .dyn_reg = -1};
    int li = add_loop_record(j, o, path, &rec), outer = j->cur_loop;
    if (li < 0)
        return -1;
    int it = 0, once = j->once_depth;
    /* each iteration is its own objects, visited once -- unless a body
     * around this loop runs more than once (a dynamic_range's guess
     * iterations): then its answers stay kept, so a register_alloc in it
     * keeps its register in every run of the body */
    if (!fj_memo_keeps(j))
        j->once_depth = j->depth;
    for (const cJSON *c = its->child; c; c = c->next, it++) {
        char sub[ENC_PATH_MAX + 32];
        snprintf(sub, sizeof sub, "%s.iterations[%d]", path, it);
        tir_loop_mark(j->b.k, li, it);
        j->cur_loop = li;
        int rc = fj_exec_block(j, c, sub, NULL);   /* no scope: Python's names outlive the loop */
        j->cur_loop = outer;
        if (rc) {
            j->once_depth = once;
            return -1;
        }
    }
    j->once_depth = once;
    tir_loop_mark(j->b.k, li, trips);
    return 0;
}

int fj_exec_for(jx_t *j, const cJSON *o, const char *path, int kind)
{
    static const char *const allowed[] = {"op", "var", "range", "body", "roll", NULL};
    static const char *const allowed_dyn[] = {"op", "var", "range", "body", "guess", "reg",
                                              "reg_start", NULL};
    static const char *const allowed_while[] = {"op", "cond", "body", "guess", NULL};
    bool sequential = kind > 0;
    if (kind != 3 && cJSON_IsArray(fj_field(o, "iterations")))
        return exec_iterations(j, o, path, kind);
    if (fj_check_fields(j, o, path, kind == 3 ? allowed_while : kind == 2 ? allowed_dyn : allowed))
        return -1;
    const char *var = NULL;   /* a while_loop has none */
    if (kind != 3 && fj_get_var(j, o, path, &var))
        return -1;
    const cJSON *body = fj_field(o, "body");
    if (!cJSON_IsArray(body))
        return fj_jfail(j, path, "body", "expected an array of ops, got %s", fj_type_name(body));
    int64_t r[3] = {0, 0, 1};   /* set by range_of or dynamic_range_of */
    bool dep = false;
    int dreg = -1, drc = kind == 3 ? while_of(j, o, path, r, &dreg)
                         : kind == 2 ? dynamic_range_of(j, o, path, r, &dreg) : 1;
    if (drc < 0 || (drc > 0 && range_of(j, o, path, r, &dep, false)))
        return -1;
    if (r[2] == 0)
        return fj_jfail(j, path, "range", "step is 0");
    int64_t trips = 0;
    if (r[2] > 0 && r[1] > r[0])
        trips = (r[1] - r[0] - 1) / r[2] + 1;
    else if (r[2] < 0 && r[1] < r[0])
        trips = (r[0] - r[1] - 1) / (-r[2]) + 1;
    int64_t iter_cap = sat_mul(j->max_ops, MAX_LOOP_ITERATIONS_FACTOR);
    if (trips > iter_cap || sat_add(j->iterations, trips) > iter_cap)
        return fj_jfail(j, path, "range", "%lld iterations: the kernel would run more than %lld "
                     "loop iterations (runaway loop?)", (long long)trips, (long long)iter_cap);
    int64_t est = sat_mul(trips, estimate_block(j, body, j->depth + 1));
    if (sat_add(est, j->b.k->nops) > j->max_ops)
        return fj_jfail(j, path, "range", "the loop unrolls to about %lld ops, more than the limit "
                     "of %lld", (long long)est, (long long)j->max_ops);
    j->iterations += trips;
    if (trips > 1)   /* the unrolled ops' and tiles' arrays sized up front */
        enc_builder_reserve(&j->b, est, sat_mul(trips, fj_count_tiles(body, NULL)));
    int vreg = loop_var_reg(j, o, path, kind, var, r[0]);
    if (vreg == -1)
        return -1;
    char next[ENC_VAR_NAME + 8];
    snprintf(next, sizeof next, "%s.next", var ? var : "");
    tir_loop_t rec = {.sequential = sequential, .trips = trips, .dynamic = dreg >= 0,
                      .dyn_reg = dreg, .dyn_start = r[0], .dyn_step = r[2],
                      .dyn_while = kind == 3};
    int li = add_loop_record(j, o, path, &rec), outer = j->cur_loop;
    if (li < 0)
        return -1;
    char sub[ENC_PATH_MAX + 16];
    snprintf(sub, sizeof sub, "%s.body", path);
    fj_paths_t bp = {NULL, NULL, NULL};
    if (trips > 1)
        fj_body_paths(body, sub, &bp);
    int mark = j->env.n;
    for (int64_t it = 0; it < trips; it++) {
        tir_loop_mark(j->b.k, li, it);
        j->cur_loop = li;
        if (var && enc_env_push(&j->env, var, r[0] + it * r[2], false))
            return fj_jfail(j, path, NULL, "out of memory");
        enc_scope_begin(&j->b);
        int rc = fj_exec_block(j, body, sub, &bp);
        if (!rc && vreg >= 0)
            rc = fj_reg_set(j, sub, next, vreg, -1, r[2], true);
        if (rc)
            add_loop_note(j);
        enc_scope_end(&j->b);
        enc_env_pop_to(&j->env, mark);
        j->cur_loop = outer;
        if (rc) {
            fj_body_paths_free(&bp);
            return -1;
        }
    }
    fj_body_paths_free(&bp);
    tir_loop_mark(j->b.k, li, trips);
    return 0;
}
