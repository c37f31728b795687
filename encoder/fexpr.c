/* fexpr.c - floating-point constant expressions for the numeric fields of
 * the kernel file (scales, scalar operands, memset values; see expr.h and
 * docs/kernel-format.md).  Evaluated in double precision as they are
 * parsed; the caller rounds the result once to the field's type. */
#include "expr.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *s;        /* whole text */
    const char *p;        /* cursor */
    const enc_env_t *env;
    int depth;
    char *msg;
    size_t n;
} fx_t;

static int fx_fail(fx_t *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fx_fail(fx_t *x, const char *fmt, ...)
{
    char tmp[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    snprintf(x->msg, x->n, "%s at offset %d of \"%s\"", tmp, (int)(x->p - x->s), x->s);
    return -1;
}

static void skip_ws(fx_t *x)
{
    while (*x->p == ' ' || *x->p == '\t')
        x->p++;
}

static bool eat(fx_t *x, const char *tok)
{
    skip_ws(x);
    size_t n = strlen(tok);
    if (strncmp(x->p, tok, n) != 0)
        return false;
    x->p += n;
    return true;
}

static int expr(fx_t *x, double *out);
static int unary(fx_t *x, double *out);

/* digits [. digits] [e [+-] digits]: decimal only (no inf/nan/hex spellings) */
static int number(fx_t *x, double *out)
{
    const char *q = x->p;
    while (isdigit((unsigned char)*q))
        q++;
    if (*q == '.')
        for (q++; isdigit((unsigned char)*q); q++)
            ;
    if (q == x->p || (q == x->p + 1 && *x->p == '.'))
        return fx_fail(x, "expected a number");
    if (*q == 'e' || *q == 'E') {
        const char *r = q + 1;
        if (*r == '+' || *r == '-')
            r++;
        if (isdigit((unsigned char)*r)) {
            while (isdigit((unsigned char)*r))
                r++;
            q = r;
        }
    }
    char buf[64];
    if ((size_t)(q - x->p) >= sizeof buf)
        return fx_fail(x, "number too long");
    memcpy(buf, x->p, (size_t)(q - x->p));
    buf[q - x->p] = 0;
    *out = strtod(buf, NULL);
    x->p = q;
    return 0;
}

/* name(args): sqrt exp log abs floor ceil trunc sign (one argument), min max
 * pow fmod (two); fmod is C fmod (NKI nl.fmod: the sign of the dividend) */
static int call(fx_t *x, const char *name, double *out)
{
    double a[2];
    int na = 0;
    if (!eat(x, ")")) {
        for (;;) {
            if (na == 2)
                return fx_fail(x, "too many arguments to %s()", name);
            if (expr(x, &a[na++]))
                return -1;
            if (eat(x, ")"))
                break;
            if (!eat(x, ","))
                return fx_fail(x, "expected ',' or ')'");
        }
    }
    static const struct { const char *name; int nargs; } fns[] = {
        {"sqrt", 1}, {"exp", 1}, {"log", 1}, {"abs", 1}, {"min", 2}, {"max", 2}, {"pow", 2},
        {"floor", 1}, {"ceil", 1}, {"trunc", 1}, {"sign", 1}, {"fmod", 2},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        if (strcmp(name, fns[i].name) != 0)
            continue;
        if (na != fns[i].nargs)
            return fx_fail(x, "%s() takes %d argument(s), not %d", name, fns[i].nargs, na);
        switch (i) {
        case 0: *out = sqrt(a[0]); break;
        case 1: *out = exp(a[0]); break;
        case 2: *out = log(a[0]); break;
        case 3: *out = fabs(a[0]); break;
        case 4: *out = a[0] < a[1] ? a[0] : a[1]; break;
        case 5: *out = a[0] > a[1] ? a[0] : a[1]; break;
        case 6: *out = pow(a[0], a[1]); break;
        case 7: *out = floor(a[0]); break;
        case 8: *out = ceil(a[0]); break;
        case 9: *out = trunc(a[0]); break;
        case 10: *out = a[0] > 0 ? 1.0 : a[0] < 0 ? -1.0 : a[0]; break;
        default:
            if (a[1] == 0)
                return fx_fail(x, "division by zero in fmod()");
            *out = fmod(a[0], a[1]);
            break;
        }
        return 0;
    }
    return fx_fail(x, "unknown function %s() (sqrt, exp, log, abs, floor, ceil, trunc, sign, "
                   "min, max, pow, fmod)", name);
}

static int primary(fx_t *x, double *out)
{
    skip_ws(x);
    if (++x->depth > ENC_EXPR_MAX_DEPTH)
        return fx_fail(x, "expression nested more than %d deep", ENC_EXPR_MAX_DEPTH);
    int rc;
    if (eat(x, "(")) {
        rc = expr(x, out);
        if (rc == 0 && !eat(x, ")"))
            rc = fx_fail(x, "expected ')'");
    } else if (isdigit((unsigned char)*x->p) || *x->p == '.') {
        rc = number(x, out);
    } else if (isalpha((unsigned char)*x->p) || *x->p == '_') {
        char name[ENC_VAR_NAME];
        size_t k = 0;
        while ((isalnum((unsigned char)*x->p) || *x->p == '_') && k + 1 < sizeof name)
            name[k++] = *x->p++;
        name[k] = 0;
        const enc_var_t *v = enc_env_find(x->env, name);
        if (eat(x, "("))
            rc = call(x, name, out);
        else if (v)
            *out = (double)v->value, rc = 0;
        else if (!strcmp(name, "pi"))
            *out = 3.14159265358979323846, rc = 0;
        else
            rc = fx_fail(x, "unknown name '%s'", name);
    } else {
        rc = fx_fail(x, "expected a number, a name or '('");
    }
    x->depth--;
    return rc;
}

/* primary ['**' unary] (right associative, binds tighter than unary minus
 * on its left, as in Python: -2**2 == -4) */
static int power(fx_t *x, double *out)
{
    if (primary(x, out))
        return -1;
    if (eat(x, "**")) {
        double e;
        if (unary(x, &e))
            return -1;
        *out = pow(*out, e);
    }
    return 0;
}

static int unary(fx_t *x, double *out)
{
    if (eat(x, "-")) {
        if (++x->depth > ENC_EXPR_MAX_DEPTH)
            return fx_fail(x, "expression nested more than %d deep", ENC_EXPR_MAX_DEPTH);
        int rc = unary(x, out);
        x->depth--;
        *out = -*out;
        return rc;
    }
    if (eat(x, "+"))
        return unary(x, out);
    return power(x, out);
}

static int term(fx_t *x, double *out)
{
    if (unary(x, out))
        return -1;
    for (;;) {
        skip_ws(x);
        if (x->p[0] == '*' && x->p[1] != '*') {
            x->p++;
            double r;
            if (unary(x, &r))
                return -1;
            *out *= r;
        } else if (x->p[0] == '/' && x->p[1] != '/') {
            x->p++;
            double r;
            if (unary(x, &r))
                return -1;
            if (r == 0)
                return fx_fail(x, "division by zero");
            *out /= r;
        } else {
            return 0;
        }
    }
}

static int expr(fx_t *x, double *out)
{
    if (term(x, out))
        return -1;
    for (;;) {
        double r;
        if (eat(x, "+")) {
            if (term(x, &r))
                return -1;
            *out += r;
        } else if (eat(x, "-")) {
            if (term(x, &r))
                return -1;
            *out -= r;
        } else {
            return 0;
        }
    }
}

int enc_fexpr_eval(const char *text, const enc_env_t *env, double *out, char *msg, size_t n)
{
    fx_t x = { text, text, env, 0, msg, n };
    *out = 0;
    if (expr(&x, out))
        return -1;
    skip_ws(&x);
    if (*x.p)
        return fx_fail(&x, "unexpected '%c'", *x.p);
    if (!isfinite(*out))
        return fx_fail(&x, "the value is not finite (%g)", *out);
    return 0;
}
