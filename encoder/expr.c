/* expr.c - the expression grammar of the kernel file (index and number
 * fields alike; slice operands are in expr_slice.c, see expr.h).  A small
 * recursive-descent parser over a NUL-terminated string with a depth
 * limit, evaluating as it parses and, when asked, recording a postfix
 * program that replays the same evaluation (loop bodies). */
#include "expr.h"
#include "strutil.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- environment ---- */

void enc_env_init(enc_env_t *e)
{
    memset(e, 0, sizeof *e);
}

void enc_env_free(enc_env_t *e)
{
    free(e->vars);
    memset(e, 0, sizeof *e);
}

int enc_env_push(enc_env_t *e, const char *name, int64_t value, bool pid_dep)
{
    if (e->n == e->cap) {
        int nc = e->cap ? e->cap * 2 : 16;
        enc_var_t *p = realloc(e->vars, (size_t)nc * sizeof *p);
        if (!p)
            return -1;
        e->vars = p;
        e->cap = nc;
    }
    enc_var_t *v = &e->vars[e->n++];
    su_copy(v->name, sizeof v->name, name);
    v->value = value;
    v->pid_dep = pid_dep;
    return 0;
}

void enc_env_pop_to(enc_env_t *e, int n)
{
    if (n >= 0 && n < e->n)
        e->n = n;
}

const enc_var_t *enc_env_find(const enc_env_t *e, const char *name)
{
    for (int i = e->n - 1; i >= 0; i--)
        if (su_eq(e->vars[i].name, name))
            return &e->vars[i];
    return NULL;
}

/* ---- the expression grammar (integer and number fields alike) ----
 *
 * One recursive-descent parser with Python's precedence and types:
 * comparisons < + - < * / // % < unary - + < ** < primaries.  A value is an
 * int64 or a double: + - * // % ** stay integers on integers (overflow is
 * an error), `/` is true division, a float operand makes the result a
 * float; floor/ceil/trunc return integers (Python's math.floor).  Index
 * fields (enc_expr_eval) need an integer result, number fields
 * (enc_fexpr_eval) take either and round once to the field's type. */

typedef struct {
    const char *s;       /* whole text */
    const char *p;       /* cursor */
    const enc_env_t *env;
    int depth;
    char *msg;
    size_t n;
    bool failed;
    struct enc_expr *rec;   /* non-NULL: also record the postfix program */
} px_t;

typedef struct {
    bool fl;             /* a float (d), else an integer (i) */
    int64_t i;
    double d;
    bool dep;            /* derives from pid */
} nv_t;

/* A compiled expression: the postfix program the parser recorded while it
 * evaluated the text once (docs/compiler.md "Front-end").  Replaying it
 * applies the same arithmetic helpers as the parser, so a value is the
 * parser's; a replay that fails is reported by parsing the text again. */
enum { XI_CONST, XI_VAR, XI_NEG, XI_POW, XI_MUL, XI_ADD, XI_CMP, XI_CALL };
typedef struct {
    unsigned char op;
    int arg;             /* XI_MUL/XI_ADD: the operator; XI_CMP: which; XI_CALL: argc */
    nv_t val;            /* XI_CONST */
    char name[ENC_VAR_NAME];   /* XI_VAR, XI_CALL */
} xins_t;

#define XSTACK 64        /* longer operand stacks are not compiled */

struct enc_expr {
    xins_t *ins;
    int n, cap;
    int sp, max_sp;      /* operand stack while recording */
    bool bad;            /* out of memory or too deep: not usable */
};

static void rec_emit(px_t *x, int op, int arg, const nv_t *val, const char *name)
{
    struct enc_expr *e = x->rec;
    if (!e || e->bad)
        return;
    if (e->n == e->cap) {
        int nc = e->cap ? 2 * e->cap : 8;
        xins_t *ni = realloc(e->ins, (size_t)nc * sizeof *ni);
        if (!ni) {
            e->bad = true;
            return;
        }
        e->ins = ni;
        e->cap = nc;
    }
    xins_t *in = &e->ins[e->n++];
    memset(in, 0, sizeof *in);
    in->op = (unsigned char)op;
    in->arg = arg;
    if (val)
        in->val = *val;
    if (name)
        snprintf(in->name, sizeof in->name, "%s", name);
    /* stack effect: constants and names push, unary ops keep, binary pop one,
     * a call pops its arguments and pushes its result */
    e->sp += op == XI_CONST || op == XI_VAR ? 1 : op == XI_NEG ? 0 : op == XI_CALL ? 1 - arg : -1;
    if (e->sp > e->max_sp)
        e->max_sp = e->sp;
    if (e->max_sp > XSTACK)
        e->bad = true;
}

static int pfail(px_t *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int pfail(px_t *x, const char *fmt, ...)
{
    if (x->failed)
        return -1;
    x->failed = true;
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    snprintf(x->msg, x->n, "%s at offset %d of \"%.80s\"", tmp, (int)(x->p - x->s), x->s);
    return -1;
}

static void skip_ws(px_t *x)
{
    while (*x->p == ' ' || *x->p == '\t' || *x->p == '\n' || *x->p == '\r')
        x->p++;
}

static bool accept(px_t *x, const char *tok)
{
    skip_ws(x);
    size_t n = strlen(tok);
    if (strncmp(x->p, tok, n))
        return false;
    x->p += n;
    return true;
}

static double dv(const nv_t *v)
{
    return v->fl ? v->d : (double)v->i;
}

static void set_f(nv_t *v, double d)
{
    v->fl = true;
    v->d = d;
}

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static int64_t floormod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

/* a double that must become an integer (floor/ceil/trunc) */
static int to_int(px_t *x, double d, nv_t *out)
{
    if (!(d >= -9.2e18 && d <= 9.2e18))
        return pfail(x, "integer overflow");
    out->fl = false;
    out->i = (int64_t)d;
    return 0;
}

static int parse_expr(px_t *x, nv_t *out);

static int call_int(px_t *x, const char *fn, nv_t *a, int na, nv_t *out)
{
    if (!strcmp(fn, "min") || !strcmp(fn, "max")) {
        if (na < 2)
            return pfail(x, "%s() takes at least 2 arguments", fn);
        int best = 0;
        for (int i = 1; i < na; i++) {
            double u = dv(&a[i]), w = dv(&a[best]);
            bool both_int = !a[i].fl && !a[best].fl;
            bool less = both_int ? a[i].i < a[best].i : u < w;
            bool more = both_int ? a[i].i > a[best].i : u > w;
            if (fn[1] == 'i' ? less : more)
                best = i;
        }
        bool dep = out->dep;
        *out = a[best];
        out->dep = dep;
        return 0;
    }
    if (!strcmp(fn, "cdiv")) {
        if (na != 2 || a[0].fl || a[1].fl)
            return pfail(x, "cdiv() takes 2 integer arguments");
        if (a[1].i == 0)
            return pfail(x, "division by zero in cdiv()");
        if (a[0].i == INT64_MIN)
            return pfail(x, "integer overflow");
        int64_t q = floordiv(-a[0].i, a[1].i);
        if (q == INT64_MIN)
            return pfail(x, "integer overflow");
        out->i = -q;
        return 0;
    }
    if (!strcmp(fn, "abs")) {
        if (na != 1)
            return pfail(x, "abs() takes 1 argument");
        if (a[0].fl) {
            set_f(out, fabs(a[0].d));
            return 0;
        }
        if (a[0].i == INT64_MIN)
            return pfail(x, "integer overflow");
        out->i = a[0].i < 0 ? -a[0].i : a[0].i;
        return 0;
    }
    /* NKI launch-grid queries: program_id(a), num_programs(a) (no argument:
     * the whole grid), program_ndim() -- bindings the front-end makes */
    if (!strcmp(fn, "program_id") || !strcmp(fn, "num_programs") || !strcmp(fn, "program_ndim")) {
        bool pid = fn[8] == 'i';
        if (na > 1 || (pid && na != 1) || (fn[8] == 'n' && na != 0) || (na && a[0].fl))
            return pfail(x, "%s() takes %s", fn, pid ? "1 argument (the axis)" :
                         fn[8] == 'n' ? "no argument" : "0 or 1 argument (the axis)");
        char name[ENC_VAR_NAME + 24];
        if (na)
            snprintf(name, sizeof name, "%s%lld", pid ? "pid" : fn, (long long)a[0].i);
        else
            snprintf(name, sizeof name, "%s", fn);
        const enc_var_t *var = enc_env_find(x->env, name);
        if (!var)
            return na ? pfail(x, "%s(%lld): the launch grid has no axis %lld", fn,
                              (long long)a[0].i, (long long)a[0].i)
                      : pfail(x, "%s() is not known here", fn);
        out->i = var->value;
        out->dep = var->pid_dep;
        return 0;
    }
    return 1;   /* not an integer function */
}

/* sqrt exp log (float), floor ceil trunc (integer results), sign, fmod pow */
static int call_num(px_t *x, const char *fn, nv_t *a, int na, nv_t *out)
{
    static const struct { const char *name; int nargs; } fns[] = {
        {"sqrt", 1}, {"exp", 1}, {"log", 1}, {"floor", 1}, {"ceil", 1}, {"trunc", 1},
        {"sign", 1}, {"pow", 2}, {"fmod", 2},
    };
    for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++) {
        if (strcmp(fn, fns[k].name) != 0)
            continue;
        if (na != fns[k].nargs)
            return pfail(x, "%s() takes %d argument(s), not %d", fn, fns[k].nargs, na);
        double u = dv(&a[0]), w = na > 1 ? dv(&a[1]) : 0;
        switch (k) {
        case 0: set_f(out, sqrt(u)); return 0;
        case 1: set_f(out, exp(u)); return 0;
        case 2: set_f(out, log(u)); return 0;
        case 3: return a[0].fl ? to_int(x, floor(u), out) : (*out = a[0], 0);
        case 4: return a[0].fl ? to_int(x, ceil(u), out) : (*out = a[0], 0);
        case 5: return a[0].fl ? to_int(x, trunc(u), out) : (*out = a[0], 0);
        case 6:
            if (a[0].fl)
                set_f(out, u > 0 ? 1.0 : u < 0 ? -1.0 : u);
            else
                out->i = a[0].i > 0 ? 1 : a[0].i < 0 ? -1 : 0;
            return 0;
        case 7: set_f(out, pow(u, w)); return 0;
        default:
            if (w == 0)
                return pfail(x, "division by zero in fmod()");
            set_f(out, fmod(u, w));   /* C fmod = NKI nl.fmod: the dividend's sign */
            return 0;
        }
    }
    return pfail(x, "unknown function '%s' (min, max, cdiv, abs, sqrt, exp, log, floor, ceil, "
                 "trunc, sign, pow, fmod, program_id, num_programs, program_ndim)", fn);
}

static int op_call(px_t *x, const char *fn, nv_t *a, int na, nv_t *out)
{
    *out = (nv_t){false, 0, 0, false};
    for (int i = 0; i < na; i++)
        out->dep |= a[i].dep;
    int rc = call_int(x, fn, a, na, out);
    return rc <= 0 ? rc : call_num(x, fn, a, na, out);
}

static int parse_call(px_t *x, const char *fn, nv_t *out)
{
    nv_t a[16];
    int na = 0;
    skip_ws(x);
    if (!accept(x, ")")) {
        for (;;) {
            if (na == 16)
                return pfail(x, "too many arguments to %s()", fn);
            if (parse_expr(x, &a[na++]))
                return -1;
            if (accept(x, ")"))
                break;
            if (!accept(x, ","))
                return pfail(x, "expected ',' or ')'");
        }
    }
    rec_emit(x, XI_CALL, na, NULL, fn);
    return op_call(x, fn, a, na, out);
}

/* digits [. digits] [e [+-] digits]: an integer, or a float when it has a
 * fraction or an exponent (decimal only) */
static int parse_number(px_t *x, nv_t *out)
{
    const char *q = x->p;
    while (isdigit((unsigned char)*q))
        q++;
    bool fl = false;
    if (*q == '.') {
        fl = true;
        q++;
        while (isdigit((unsigned char)*q))
            q++;
    }
    if ((*q == 'e' || *q == 'E') &&
        (isdigit((unsigned char)q[1]) || ((q[1] == '+' || q[1] == '-') && isdigit((unsigned char)q[2])))) {
        fl = true;
        q += 2;
        while (isdigit((unsigned char)*q))
            q++;
    }
    if (isalpha((unsigned char)*q) || *q == '_' || *q == '.')
        return pfail(x, "malformed number");
    *out = (nv_t){fl, 0, 0, false};
    if (fl) {
        out->d = strtod(x->p, NULL);
    } else {
        for (const char *c = x->p; c < q; c++)
            if (__builtin_mul_overflow(out->i, 10, &out->i) ||
                __builtin_add_overflow(out->i, *c - '0', &out->i))
                return pfail(x, "integer literal too large");
    }
    x->p = q;
    rec_emit(x, XI_CONST, 0, out, NULL);
    return 0;
}

/* a name: a binding (innermost first), else pi */
static int op_var(px_t *x, const char *id, nv_t *out)
{
    const enc_var_t *var = enc_env_find(x->env, id);
    if (var)
        *out = (nv_t){false, var->value, 0, var->pid_dep};
    else if (!strcmp(id, "pi"))
        *out = (nv_t){true, 0, 3.14159265358979323846, false};
    else
        return pfail(x, "unknown name '%s'", id);
    return 0;
}

static int parse_primary(px_t *x, nv_t *out)
{
    skip_ws(x);
    if (++x->depth > ENC_EXPR_MAX_DEPTH)
        return pfail(x, "expression nested too deeply");
    int rc = 0;
    if (accept(x, "(")) {
        rc = parse_expr(x, out);
        if (!rc && !accept(x, ")"))
            rc = pfail(x, "expected ')'");
    } else if (isdigit((unsigned char)*x->p) || (*x->p == '.' && isdigit((unsigned char)x->p[1]))) {
        rc = parse_number(x, out);
    } else if (isalpha((unsigned char)*x->p) || *x->p == '_') {
        char id[ENC_VAR_NAME];
        size_t n = 0;
        while (isalnum((unsigned char)*x->p) || *x->p == '_') {
            if (n + 1 >= sizeof id)
                return pfail(x, "name too long");
            id[n++] = *x->p++;
            if (n == 2 && !strncmp(id, "nl", 2) && x->p[0] == '.' &&
                (isalpha((unsigned char)x->p[1]) || x->p[1] == '_')) {
                n = 0;   /* NKI spelling: nl.program_id(0) */
                x->p++;
            }
        }
        id[n] = 0;
        if (accept(x, "(")) {
            rc = parse_call(x, id, out);
        } else {
            if (op_var(x, id, out))
                return -1;
            rec_emit(x, XI_VAR, 0, NULL, id);
        }
    } else if (*x->p == 0) {
        return pfail(x, "unexpected end of expression");
    } else {
        return pfail(x, "expected a number, a name or '(' (got '%c')", *x->p);
    }
    x->depth--;
    return rc;
}

static int parse_unary(px_t *x, nv_t *out);
static int op_pow(px_t *x, nv_t *out, const nv_t *ep);

static int op_neg(px_t *x, nv_t *out)
{
    if (out->fl)
        out->d = -out->d;
    else if (out->i == INT64_MIN)
        return pfail(x, "integer overflow");
    else
        out->i = -out->i;
    return 0;
}

/* primary ['**' unary]: right associative; binds tighter than a unary minus
 * on its left (-2**2 is -4) */
static int parse_power(px_t *x, nv_t *out)
{
    if (parse_primary(x, out))
        return -1;
    if (!accept(x, "**"))
        return 0;
    nv_t e;
    if (parse_unary(x, &e))
        return -1;
    rec_emit(x, XI_POW, 0, NULL, NULL);
    return op_pow(x, out, &e);
}

static int op_pow(px_t *x, nv_t *out, const nv_t *ep)
{
    nv_t e = *ep;
    out->dep |= e.dep;
    if (!out->fl && !e.fl && e.i >= 0) {
        int64_t r = 1;
        for (int64_t k = 0; k < e.i; k++)
            if (__builtin_mul_overflow(r, out->i, &r))
                return pfail(x, "integer overflow");
            else if (r == 0 || r == 1)
                break;   /* 0**k, 1**k: done */
        if (out->i == -1)
            r = e.i % 2 ? -1 : 1;
        out->i = e.i == 0 ? 1 : r;
        return 0;
    }
    set_f(out, pow(dv(out), dv(&e)));
    return 0;
}

static int parse_unary(px_t *x, nv_t *out)
{
    bool neg = accept(x, "-");
    if (neg || accept(x, "+")) {
        if (++x->depth > ENC_EXPR_MAX_DEPTH)
            return pfail(x, "expression nested too deeply");
        if (parse_unary(x, out))
            return -1;
        x->depth--;
        if (neg)
            rec_emit(x, XI_NEG, 0, NULL, NULL);
        return neg ? op_neg(x, out) : 0;
    }
    return parse_power(x, out);
}

/* out = out <op> r for * // % / */
static int op_mul(px_t *x, int op, nv_t *out, const nv_t *rp)
{
    nv_t r = *rp;
    out->dep |= r.dep;
    bool ints = !out->fl && !r.fl;
    if (op == '*') {
        if (ints) {
            if (__builtin_mul_overflow(out->i, r.i, &out->i))
                return pfail(x, "integer overflow");
        } else {
            set_f(out, dv(out) * dv(&r));
        }
        return 0;
    }
    if (ints ? r.i == 0 : dv(&r) == 0)
        return pfail(x, "division by zero");
    if (op == '/') {
        set_f(out, dv(out) / dv(&r));
    } else if (ints) {
        if (out->i == INT64_MIN && r.i == -1)
            return pfail(x, "integer overflow");
        out->i = op == 'f' ? floordiv(out->i, r.i) : floormod(out->i, r.i);
    } else {
        double a = dv(out), b = dv(&r), q = floor(a / b);
        set_f(out, op == 'f' ? q : a - b * q);
    }
    return 0;
}

static int parse_mul(px_t *x, nv_t *out)
{
    if (parse_unary(x, out))
        return -1;
    for (;;) {
        int op;
        if (accept(x, "//"))
            op = 'f';
        else if (accept(x, "*"))
            op = '*';
        else if (accept(x, "%"))
            op = '%';
        else if (accept(x, "/"))
            op = '/';
        else
            return 0;
        nv_t r;
        if (parse_unary(x, &r))
            return -1;
        rec_emit(x, XI_MUL, op, NULL, NULL);
        if (op_mul(x, op, out, &r))
            return -1;
    }
}

static int op_add(px_t *x, int op, nv_t *out, const nv_t *rp)
{
    nv_t r = *rp;
    out->dep |= r.dep;
    if (!out->fl && !r.fl) {
        bool ovf = op == '+' ? __builtin_add_overflow(out->i, r.i, &out->i)
                             : __builtin_sub_overflow(out->i, r.i, &out->i);
        if (ovf)
            return pfail(x, "integer overflow");
    } else {
        set_f(out, op == '+' ? dv(out) + dv(&r) : dv(out) - dv(&r));
    }
    return 0;
}

static int parse_add(px_t *x, nv_t *out)
{
    if (parse_mul(x, out))
        return -1;
    for (;;) {
        int op;
        if (accept(x, "+"))
            op = '+';
        else if (accept(x, "-"))
            op = '-';
        else
            return 0;
        nv_t r;
        if (parse_mul(x, &r))
            return -1;
        rec_emit(x, XI_ADD, op, NULL, NULL);
        if (op_add(x, op, out, &r))
            return -1;
    }
}

/* comparison i of "<=", ">=", "==", "!=", "<", ">" (0/1) */
static void op_cmp(int i, nv_t *out, const nv_t *rp)
{
    nv_t r = *rp;
    bool ints = !out->fl && !r.fl;
    double a = dv(out), b = dv(&r);
    bool res = ints ? (i == 0 ? out->i <= r.i : i == 1 ? out->i >= r.i : i == 2 ? out->i == r.i
                       : i == 3 ? out->i != r.i : i == 4 ? out->i < r.i : out->i > r.i)
                    : (i == 0 ? a <= b : i == 1 ? a >= b : i == 2 ? a == b : i == 3 ? a != b
                       : i == 4 ? a < b : a > b);
    out->fl = false;
    out->i = res;
    out->dep |= r.dep;
}

static int parse_expr(px_t *x, nv_t *out)
{
    if (++x->depth > ENC_EXPR_MAX_DEPTH)
        return pfail(x, "expression nested too deeply");
    if (parse_add(x, out))
        return -1;
    static const char *const cmps[] = {"<=", ">=", "==", "!=", "<", ">"};
    for (int i = 0; i < 6; i++) {
        if (!accept(x, cmps[i]))
            continue;
        nv_t r;
        if (parse_add(x, &r))
            return -1;
        rec_emit(x, XI_CMP, i, NULL, NULL);
        op_cmp(i, out, &r);
        break;
    }
    x->depth--;
    return 0;
}

static int parse_all(const char *text, const enc_env_t *env, nv_t *out, char *msg, size_t n,
                     px_t *x, struct enc_expr *rec)
{
    *x = (px_t){text, text, env, 0, msg, n, false, rec};
    if (parse_expr(x, out))
        return -1;
    skip_ws(x);
    if (*x->p)
        return pfail(x, "unexpected '%c' after the expression", *x->p);
    return 0;
}

int enc_expr_eval(const char *text, const enc_env_t *env, enc_val_t *out, char *msg, size_t n)
{
    return enc_expr_compile(text, env, NULL, out, msg, n);
}

int enc_expr_compile(const char *text, const enc_env_t *env, enc_expr_t **prog, enc_val_t *out,
                     char *msg, size_t n)
{
    px_t x;
    nv_t v;
    struct enc_expr *rec = NULL;
    if (prog) {
        *prog = NULL;
        rec = calloc(1, sizeof *rec);   /* NULL: evaluated, not compiled */
    }
    int rc = parse_all(text, env, &v, msg, n, &x, rec);
    if (!rc && v.fl)
        rc = pfail(&x, "only integers are allowed in index expressions (this one is a "
                   "float; use '//' for integer division, floor() to round down)");
    if (!rc && rec && !rec->bad) {
        *prog = rec;
        rec = NULL;
    }
    enc_expr_free(rec);
    if (rc)
        return -1;
    out->v = v.i;
    out->pid_dep = v.dep;
    return 0;
}

int enc_fexpr_eval(const char *text, const enc_env_t *env, double *out, char *msg, size_t n)
{
    px_t x;
    nv_t v;
    if (parse_all(text, env, &v, msg, n, &x, NULL))
        return -1;
    *out = dv(&v);
    if (!isfinite(*out))
        return pfail(&x, "the value is not finite (%g)", *out);
    return 0;
}

void enc_expr_free(enc_expr_t *e)
{
    if (e) {
        free(e->ins);
        free(e);
    }
}

/* The replay of a program of integer constants and variables, unary -,
 * + - * // % only (a loop body's index expressions), on a stack of plain
 * integers: the same value and pid dependence as the full replay (every
 * value flows into the one result, so its dependence is any leaf's).
 * 1: not such a program, or a case it leaves to the full replay (a float,
 * an overflow, a division by zero, an unknown name). */
static int run_ints(const enc_expr_t *e, const enc_env_t *env, enc_val_t *out)
{
    int64_t st[XSTACK];
    bool dep = false;
    int sp = 0;
    for (int k = 0; k < e->n; k++) {
        const xins_t *in = &e->ins[k];
        switch (in->op) {
        case XI_CONST:
            if (in->val.fl)
                return 1;
            st[sp++] = in->val.i;
            dep |= in->val.dep;
            break;
        case XI_VAR: {
            const enc_var_t *var = enc_env_find(env, in->name);
            if (!var)
                return 1;
            st[sp++] = var->value;
            dep |= var->pid_dep;
            break;
        }
        case XI_NEG:
            if (st[sp - 1] == INT64_MIN)
                return 1;
            st[sp - 1] = -st[sp - 1];
            break;
        case XI_ADD:
            sp--;
            if (in->arg == '+' ? __builtin_add_overflow(st[sp - 1], st[sp], &st[sp - 1])
                               : __builtin_sub_overflow(st[sp - 1], st[sp], &st[sp - 1]))
                return 1;
            break;
        case XI_MUL: {
            int64_t a = st[sp - 2], b = st[sp - 1];
            sp--;
            if (in->arg == '*') {
                if (__builtin_mul_overflow(a, b, &st[sp - 1]))
                    return 1;
            } else if (in->arg == 'f' || in->arg == '%') {
                if (b == 0 || (a == INT64_MIN && b == -1))
                    return 1;
                st[sp - 1] = in->arg == 'f' ? floordiv(a, b) : floormod(a, b);
            } else {
                return 1;   /* '/': a float */
            }
            break;
        }
        default:
            return 1;
        }
    }
    if (sp != 1)
        return 1;
    out->v = st[0];
    out->pid_dep = dep;
    return 0;
}

/* Replay a compiled expression; -1 on any error (no message: the caller
 * evaluates the text again for the parser's exact message). */
int enc_expr_run(const enc_expr_t *e, const enc_env_t *env, enc_val_t *out)
{
    if (!run_ints(e, env, out))
        return 0;
    char msg[8];
    px_t x = {"", "", env, 0, msg, sizeof msg, false, NULL};
    nv_t st[XSTACK];
    int sp = 0;
    for (int k = 0; k < e->n; k++) {
        const xins_t *in = &e->ins[k];
        int rc = 0;
        switch (in->op) {
        case XI_CONST: st[sp++] = in->val; break;
        case XI_VAR: rc = op_var(&x, in->name, &st[sp++]); break;
        case XI_NEG: rc = op_neg(&x, &st[sp - 1]); break;
        case XI_POW: sp--; rc = op_pow(&x, &st[sp - 1], &st[sp]); break;
        case XI_MUL: sp--; rc = op_mul(&x, in->arg, &st[sp - 1], &st[sp]); break;
        case XI_ADD: sp--; rc = op_add(&x, in->arg, &st[sp - 1], &st[sp]); break;
        case XI_CMP: sp--; op_cmp(in->arg, &st[sp - 1], &st[sp]); break;
        default: {
            nv_t a[16], r;
            sp -= in->arg;
            memcpy(a, &st[sp], (size_t)in->arg * sizeof a[0]);
            rc = op_call(&x, in->name, a, in->arg, &r);
            st[sp++] = r;
        }
        }
        if (rc)
            return -1;
    }
    if (sp != 1 || st[0].fl)
        return -1;   /* a float: the parser's "only integers" message */
    out->v = st[0].i;
    out->pid_dep = st[0].dep;
    return 0;
}

