/* _dtypes_ops.c - casts and ufunc loops of the tpbsim_dtypes module (see
 * _dtypes.h).
 *
 * Casts go through float32, which holds every bf16/fp8 value exactly:
 * format -> X is the exact widening, then NumPy's own float32 -> X cast
 * (so `.astype(np.int32)` truncates as float32's does); X -> format is
 * NumPy's X -> float32 cast, then numeric.c's rounding.  float64 -> fp8
 * is the exception: a float64 value is first rounded to float32 "to odd"
 * (an inexact result takes the neighbour with an odd last bit), which
 * makes the following nearest-even rounding to 4 or 3 significant bits
 * the correctly rounded one (as ml_dtypes rounds float64 to fp8 directly);
 * float64 -> bf16 goes through float32 rounded to nearest, as ml_dtypes'
 * bfloat16 does.
 *
 * Ufunc loops compute in float32 and round the result to the format
 * (ml_dtypes computes the same way). */
#include "_dtypes.h"

#include <math.h>

#define CHUNK 256

/* float64 -> float32 rounded to odd (see above).  An overflow gives
 * FLT_MAX (odd), which every format here rounds to its overflow value. */
static float f64_to_f32_odd(double d)
{
    float f = (float)d;
    if (isnan(d) || (double)f == d)
        return f;
    uint32_t u;
    memcpy(&u, &f, 4);
    if (u & 1u)
        return f;
    return nextafterf(f, d > (double)f ? INFINITY : -INFINITY);
}

void tdt_store_f64(int fmt, void *p, double v)
{
    tdt_store(fmt, p, fmt == TDT_BF16 ? (float)v : f64_to_f32_odd(v));
}

/* NumPy's cast function from type a to type b (builtin numeric types). */
static PyArray_VectorUnaryFunc *npy_cast(int a, int b)
{
    PyArray_Descr *d = PyArray_DescrFromType(a);
    PyArray_VectorUnaryFunc *f = d ? PyArray_GetCastFunc(d, b) : NULL;
    Py_XDECREF(d);
    return f;
}

static size_t npy_size(int t)
{
    PyArray_Descr *d = PyArray_DescrFromType(t);
    size_t s = d ? (size_t)d->elsize : 1;
    Py_XDECREF(d);
    return s;
}

/* n elements of NumPy type t at src -> format fmt at dst. */
static void cast_in(int fmt, int t, const void *src, void *dst, npy_intp n)
{
    const char *s = src;
    char *d = dst;
    size_t ss = npy_size(t), ds = (size_t)TDT_FMTS[fmt].size;
    int wide = fmt != TDT_BF16 && (t == NPY_DOUBLE || t == NPY_LONGDOUBLE);
    PyArray_VectorUnaryFunc *f = NULL;
    if (wide ? t != NPY_DOUBLE : t != NPY_FLOAT)
        f = npy_cast(t, wide ? NPY_DOUBLE : NPY_FLOAT);
    if (!f && (wide ? t != NPY_DOUBLE : t != NPY_FLOAT))
        return;   /* (no NumPy cast: the Python error is set) */
    for (npy_intp i = 0; i < n; i += CHUNK) {
        npy_intp m = n - i < CHUNK ? n - i : CHUNK;
        double b64[CHUNK];
        float b32[CHUNK];
        if (wide) {
            if (f)
                f((void *)(s + (size_t)i * ss), b64, m, NULL, NULL);
            else
                memcpy(b64, s + (size_t)i * ss, (size_t)m * 8);
            for (npy_intp j = 0; j < m; j++)
                tdt_store_f64(fmt, d + (size_t)(i + j) * ds, b64[j]);
        } else {
            if (f)
                f((void *)(s + (size_t)i * ss), b32, m, NULL, NULL);
            else
                memcpy(b32, s + (size_t)i * ss, (size_t)m * 4);
            for (npy_intp j = 0; j < m; j++)
                tdt_store(fmt, d + (size_t)(i + j) * ds, b32[j]);
        }
    }
}

/* n elements of format fmt at src -> NumPy type t at dst. */
static void cast_out(int fmt, int t, const void *src, void *dst, npy_intp n)
{
    const char *s = src;
    char *d = dst;
    size_t ss = (size_t)TDT_FMTS[fmt].size, ds = npy_size(t);
    PyArray_VectorUnaryFunc *f = t == NPY_FLOAT ? NULL : npy_cast(NPY_FLOAT, t);
    if (!f && t != NPY_FLOAT)
        return;
    for (npy_intp i = 0; i < n; i += CHUNK) {
        npy_intp m = n - i < CHUNK ? n - i : CHUNK;
        float b32[CHUNK];
        for (npy_intp j = 0; j < m; j++)
            b32[j] = tdt_load(fmt, s + (size_t)(i + j) * ss);
        if (f)
            f(b32, d + (size_t)i * ds, m, NULL, NULL);
        else
            memcpy(d + (size_t)i * ds, b32, (size_t)m * 4);
    }
}

static void cast_fmt(int from, int to, const void *src, void *dst, npy_intp n)
{
    const char *s = src;
    char *d = dst;
    for (npy_intp i = 0; i < n; i++)
        tdt_store(to, d + (size_t)i * (size_t)TDT_FMTS[to].size,
                  tdt_load(from, s + (size_t)i * (size_t)TDT_FMTS[from].size));
}

/* One cast function per (format, NumPy type) and direction: a legacy cast
 * function is not told its types. */
#define TDT_NPY_TYPES(X, F) X(F, BOOL) X(F, BYTE) X(F, UBYTE) X(F, SHORT) X(F, USHORT) \
    X(F, INT) X(F, UINT) X(F, LONG) X(F, ULONG) X(F, LONGLONG) X(F, ULONGLONG) X(F, HALF) \
    X(F, FLOAT) X(F, DOUBLE) X(F, LONGDOUBLE)
#define TDT_CAST_FNS(F, T) \
    static void in_##F##_##T(void *s, void *d, npy_intp n, void *a, void *b) \
    { (void)a; (void)b; cast_in(F, NPY_##T, s, d, n); } \
    static void out_##F##_##T(void *s, void *d, npy_intp n, void *a, void *b) \
    { (void)a; (void)b; cast_out(F, NPY_##T, s, d, n); }
#define TDT_CAST_ROW(F, T) { F, NPY_##T, in_##F##_##T, out_##F##_##T },
#define TDT_FMT_FN(F, G) \
    static void fmt_##F##_##G(void *s, void *d, npy_intp n, void *a, void *b) \
    { (void)a; (void)b; cast_fmt(F, G, s, d, n); }
#define TDT_FMT_ROW(F, G) { F, G, fmt_##F##_##G },

TDT_NPY_TYPES(TDT_CAST_FNS, TDT_BF16)
TDT_NPY_TYPES(TDT_CAST_FNS, TDT_E4M3)
TDT_NPY_TYPES(TDT_CAST_FNS, TDT_E5M2)
TDT_NPY_TYPES(TDT_CAST_FNS, TDT_E4M3IEEE)
/* every ordered pair of formats */
#define TDT_FMT_PAIRS(X) \
    X(TDT_BF16, TDT_E4M3) X(TDT_BF16, TDT_E5M2) X(TDT_BF16, TDT_E4M3IEEE) \
    X(TDT_E4M3, TDT_BF16) X(TDT_E4M3, TDT_E5M2) X(TDT_E4M3, TDT_E4M3IEEE) \
    X(TDT_E5M2, TDT_BF16) X(TDT_E5M2, TDT_E4M3) X(TDT_E5M2, TDT_E4M3IEEE) \
    X(TDT_E4M3IEEE, TDT_BF16) X(TDT_E4M3IEEE, TDT_E4M3) X(TDT_E4M3IEEE, TDT_E5M2)
TDT_FMT_PAIRS(TDT_FMT_FN)

static const struct {
    int fmt, npy;
    PyArray_VectorUnaryFunc *in, *out;
} NPY_CASTS[] = {
    TDT_NPY_TYPES(TDT_CAST_ROW, TDT_BF16)
    TDT_NPY_TYPES(TDT_CAST_ROW, TDT_E4M3)
    TDT_NPY_TYPES(TDT_CAST_ROW, TDT_E5M2)
    TDT_NPY_TYPES(TDT_CAST_ROW, TDT_E4M3IEEE)
};

static const struct {
    int from, to;
    PyArray_VectorUnaryFunc *fn;
} FMT_CASTS[] = {
    TDT_FMT_PAIRS(TDT_FMT_ROW)
};

/* Exact ("safe") casts, which NumPy's type promotion follows: every format
 * widens exactly to float32 and up, fp8 also to float16 and bf16; bool
 * and (u)int8 fit bf16 exactly, bool fits fp8. */
static int can_widen_to(int fmt, int npy)
{
    if (npy == NPY_FLOAT || npy == NPY_DOUBLE || npy == NPY_LONGDOUBLE)
        return 1;
    return fmt != TDT_BF16 && npy == NPY_HALF;
}

static int can_narrow_from(int fmt, int npy)
{
    return npy == NPY_BOOL || (fmt == TDT_BF16 && (npy == NPY_BYTE || npy == NPY_UBYTE));
}

int tdt_register_casts(int fmt, PyArray_Descr *d, const int registered[TDT_NFMT])
{
    int tn = d->type_num;
    for (size_t i = 0; i < sizeof NPY_CASTS / sizeof NPY_CASTS[0]; i++) {
        if (NPY_CASTS[i].fmt != fmt)
            continue;
        int t = NPY_CASTS[i].npy;
        PyArray_Descr *o = PyArray_DescrFromType(t);
        if (!o)
            return -1;
        int bad = PyArray_RegisterCastFunc(d, t, NPY_CASTS[i].out) < 0 ||
                  PyArray_RegisterCastFunc(o, tn, NPY_CASTS[i].in) < 0 ||
                  (can_widen_to(fmt, t) && PyArray_RegisterCanCast(d, t, NPY_NOSCALAR) < 0) ||
                  (can_narrow_from(fmt, t) && PyArray_RegisterCanCast(o, tn, NPY_NOSCALAR) < 0);
        Py_DECREF(o);
        if (bad)
            return -1;
    }
    /* casts between this format and the ones registered before it */
    for (size_t i = 0; i < sizeof FMT_CASTS / sizeof FMT_CASTS[0]; i++) {
        int from = FMT_CASTS[i].from, to = FMT_CASTS[i].to;
        int other = from == fmt ? to : to == fmt ? from : -1;
        if (other < 0 || registered[other] < 0)
            continue;
        PyArray_Descr *od = PyArray_DescrFromType(registered[other]);
        if (!od)
            return -1;
        PyArray_Descr *src = from == fmt ? d : od;
        int bad = PyArray_RegisterCastFunc(src, from == fmt ? registered[other] : tn,
                                           FMT_CASTS[i].fn) < 0 ||
                  (from != TDT_BF16 && to == TDT_BF16 &&
                   PyArray_RegisterCanCast(src, from == fmt ? registered[other] : tn,
                                           NPY_NOSCALAR) < 0);
        Py_DECREF(od);
        if (bad)
            return -1;
    }
    return 0;
}

/* ---- ufunc loops ---- */

enum { K_BINARY, K_UNARY, K_COMPARE, K_PREDICATE };

static const struct {
    const char *name;
    int op, kind;
} UFUNCS[] = {
    { "add", OP_ADD, K_BINARY }, { "subtract", OP_SUB, K_BINARY },
    { "multiply", OP_MUL, K_BINARY }, { "true_divide", OP_DIV, K_BINARY },
    { "power", OP_POW, K_BINARY }, { "maximum", OP_MAX, K_BINARY },
    { "minimum", OP_MIN, K_BINARY }, { "fmax", OP_FMAX, K_BINARY }, { "fmin", OP_FMIN, K_BINARY },
    { "negative", OP_NEG, K_UNARY }, { "positive", OP_POS, K_UNARY },
    { "absolute", OP_ABS, K_UNARY }, { "sqrt", OP_SQRT, K_UNARY }, { "exp", OP_EXP, K_UNARY },
    { "log", OP_LOG, K_UNARY }, { "square", OP_SQUARE, K_UNARY },
    { "reciprocal", OP_RECIP, K_UNARY }, { "floor", OP_FLOOR, K_UNARY },
    { "ceil", OP_CEIL, K_UNARY }, { "rint", OP_RINT, K_UNARY }, { "sign", OP_SIGN, K_UNARY },
    { "tanh", OP_TANH, K_UNARY },
    { "equal", OP_EQ, K_COMPARE }, { "not_equal", OP_NE, K_COMPARE },
    { "less", OP_LT, K_COMPARE }, { "less_equal", OP_LE, K_COMPARE },
    { "greater", OP_GT, K_COMPARE }, { "greater_equal", OP_GE, K_COMPARE },
    { "isnan", OP_ISNAN, K_PREDICATE }, { "isinf", OP_ISINF, K_PREDICATE },
    { "isfinite", OP_ISFINITE, K_PREDICATE }, { "signbit", OP_SIGNBIT, K_PREDICATE },
};
#define NUFUNCS (sizeof UFUNCS / sizeof UFUNCS[0])
_Static_assert(NUFUNCS == 32, "LOOP_ROW below has one entry per UFUNCS row");

/* The loop data: which format and which row of UFUNCS (constant). */
typedef struct {
    int fmt, op;
} loop_t;

#define LOOP_ROW(F) \
    { F, 0 }, { F, 1 }, { F, 2 }, { F, 3 }, { F, 4 }, { F, 5 }, { F, 6 }, { F, 7 }, { F, 8 }, \
    { F, 9 }, { F, 10 }, { F, 11 }, { F, 12 }, { F, 13 }, { F, 14 }, { F, 15 }, { F, 16 }, \
    { F, 17 }, { F, 18 }, { F, 19 }, { F, 20 }, { F, 21 }, { F, 22 }, { F, 23 }, { F, 24 }, \
    { F, 25 }, { F, 26 }, { F, 27 }, { F, 28 }, { F, 29 }, { F, 30 }, { F, 31 }
static const loop_t LOOPS[TDT_NFMT][NUFUNCS] = {
    { LOOP_ROW(TDT_BF16) }, { LOOP_ROW(TDT_E4M3) }, { LOOP_ROW(TDT_E5M2) },
    { LOOP_ROW(TDT_E4M3IEEE) },
};

float tdt_binary(int op, float a, float b)
{
    switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    case OP_POW: return powf(a, b);
    case OP_MAX: return (a >= b || isnan(a)) ? a : b;   /* NaN propagates */
    case OP_MIN: return (a <= b || isnan(a)) ? a : b;
    case OP_FMAX: return fmaxf(a, b);
    default: return fminf(a, b);
    }
}

static float unary(int op, float a)
{
    switch (op) {
    case OP_NEG: return -a;
    case OP_POS: return a;
    case OP_ABS: return fabsf(a);
    case OP_SQRT: return sqrtf(a);
    case OP_EXP: return expf(a);
    case OP_LOG: return logf(a);
    case OP_SQUARE: return a * a;
    case OP_RECIP: return 1.0f / a;
    case OP_FLOOR: return floorf(a);
    case OP_CEIL: return ceilf(a);
    case OP_RINT: return rintf(a);
    case OP_SIGN: return isnan(a) ? a : (float)((a > 0) - (a < 0));
    default: return tanhf(a);
    }
}

int tdt_compare(int op, float a, float b)
{
    switch (op) {
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    default: return a >= b;
    }
}

static int predicate(int op, float a)
{
    switch (op) {
    case OP_ISNAN: return isnan(a) != 0;
    case OP_ISINF: return isinf(a) != 0;
    case OP_ISFINITE: return isfinite(a) != 0;
    default: return signbit(a) != 0;
    }
}

static void loop_binary(char **args, npy_intp const *dim, npy_intp const *st, void *data)
{
    const loop_t *l = data;
    for (npy_intp i = 0; i < dim[0]; i++)
        tdt_store(l->fmt, args[2] + i * st[2],
                  tdt_binary(UFUNCS[l->op].op, tdt_load(l->fmt, args[0] + i * st[0]),
                             tdt_load(l->fmt, args[1] + i * st[1])));
}

static void loop_unary(char **args, npy_intp const *dim, npy_intp const *st, void *data)
{
    const loop_t *l = data;
    for (npy_intp i = 0; i < dim[0]; i++)
        tdt_store(l->fmt, args[1] + i * st[1],
                  unary(UFUNCS[l->op].op, tdt_load(l->fmt, args[0] + i * st[0])));
}

static void loop_compare(char **args, npy_intp const *dim, npy_intp const *st, void *data)
{
    const loop_t *l = data;
    for (npy_intp i = 0; i < dim[0]; i++)
        *(npy_bool *)(args[2] + i * st[2]) = (npy_bool)tdt_compare(
            UFUNCS[l->op].op, tdt_load(l->fmt, args[0] + i * st[0]),
            tdt_load(l->fmt, args[1] + i * st[1]));
}

static void loop_predicate(char **args, npy_intp const *dim, npy_intp const *st, void *data)
{
    const loop_t *l = data;
    for (npy_intp i = 0; i < dim[0]; i++)
        *(npy_bool *)(args[1] + i * st[1]) =
            (npy_bool)predicate(UFUNCS[l->op].op, tdt_load(l->fmt, args[0] + i * st[0]));
}

int tdt_register_ufuncs(int fmt, int typenum)
{
    PyObject *np = PyImport_ImportModule("numpy");
    if (!np)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < NUFUNCS && !rc; i++) {
        PyObject *uf = PyObject_GetAttrString(np, UFUNCS[i].name);
        if (!uf) {
            rc = -1;
            break;
        }
        int k = UFUNCS[i].kind;
        int types[3] = { typenum, typenum, typenum };
        PyUFuncGenericFunction fn = loop_binary;
        if (k == K_UNARY)
            fn = loop_unary;
        else if (k == K_COMPARE) {
            fn = loop_compare;
            types[2] = NPY_BOOL;
        } else if (k == K_PREDICATE) {
            fn = loop_predicate;
            types[1] = NPY_BOOL;
        }
        rc = PyUFunc_RegisterLoopForType((PyUFuncObject *)uf, typenum, fn, types,
                                         (void *)&LOOPS[fmt][i]);
        Py_DECREF(uf);
    }
    Py_DECREF(np);
    return rc;
}
