/* _dtypes.c - the tpbsim_dtypes extension module: NumPy dtypes bfloat16,
 * float8_e4m3fn, float8_e4m3 and float8_e5m2 (see _dtypes.h; python/tpbsim/_ndtypes.py
 * loads it).  This file makes the scalar types, the dtype descriptors and
 * their array functions, and registers them; _dtypes_ops.c has the casts
 * and ufunc loops.
 *
 * Everything is made once at import and owned by NumPy's user-dtype
 * registry from then on (NumPy never unregisters a dtype); the module
 * keeps no state of its own. */
#define TDT_MAIN
#include "_dtypes.h"

#include <math.h>

const tdt_fmt_t TDT_FMTS[TDT_NFMT] = {
    { "tpbsim.bfloat16", 2, 'E' },
    { "tpbsim.float8_e4m3fn", 1, '4' },
    { "tpbsim.float8_e5m2", 1, '5' },
    { "tpbsim.float8_e4m3", 1, '3' },
};

int tdt_fmt_of_descr(const PyArray_Descr *d)
{
    for (int f = 0; f < TDT_NFMT; f++)
        if (d && d->type == TDT_FMTS[f].typechar && d->elsize == TDT_FMTS[f].size &&
            d->type_num >= NPY_USERDEF)
            return f;
    return -1;
}

/* The format of a scalar object of ours, or -1. */
static int fmt_of_obj(PyObject *o)
{
    for (int f = 0; f < TDT_NFMT; f++)
        if (!strcmp(Py_TYPE(o)->tp_name, TDT_FMTS[f].tp_name))
            return f;
    return -1;
}

static int fmt_of_type(PyTypeObject *t)
{
    for (int f = 0; f < TDT_NFMT; f++)
        if (!strcmp(t->tp_name, TDT_FMTS[f].tp_name))
            return f;
    return -1;
}

static float scalar_value(PyObject *o)
{
    return tdt_load(fmt_of_obj(o), ((tdt_scalar_t *)o)->raw);
}

static PyObject *new_scalar(PyTypeObject *t, int fmt, float v)
{
    tdt_scalar_t *s = (tdt_scalar_t *)t->tp_alloc(t, 0);
    if (s)
        tdt_store(fmt, s->raw, v);
    return (PyObject *)s;
}

/* A Python object's value as a double: ours, a str, or anything float()
 * takes.  -1 with an exception set on failure. */
static int value_of(PyObject *o, double *v)
{
    if (fmt_of_obj(o) >= 0) {
        *v = scalar_value(o);
        return 0;
    }
    PyObject *f = PyUnicode_Check(o) ? PyFloat_FromString(o) : PyNumber_Float(o);
    if (!f)
        return -1;
    *v = PyFloat_AS_DOUBLE(f);
    Py_DECREF(f);
    return 0;
}

/* ---- the scalar types ---- */

static PyObject *sc_new(PyTypeObject *t, PyObject *args, PyObject *kw)
{
    int fmt = fmt_of_type(t);
    PyObject *x;
    if (fmt < 0 || (kw && PyDict_Size(kw)) || !PyArg_ParseTuple(args, "O", &x)) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "%s() takes one positional argument", t->tp_name);
        return NULL;
    }
    if (Py_TYPE(x) == t) {
        Py_INCREF(x);
        return x;
    }
    if (PyArray_Check(x))
        return PyObject_CallMethod(x, "astype", "O", (PyObject *)t);
    double v;
    if (value_of(x, &v))
        return NULL;
    tdt_scalar_t *s = (tdt_scalar_t *)t->tp_alloc(t, 0);
    if (s)
        tdt_store_f64(fmt, s->raw, v);
    return (PyObject *)s;
}

static PyObject *sc_float(PyObject *o) { return PyFloat_FromDouble(scalar_value(o)); }

static PyObject *sc_int(PyObject *o) { return PyLong_FromDouble(scalar_value(o)); }

static int sc_bool(PyObject *o) { return scalar_value(o) != 0; }

static PyObject *sc_repr(PyObject *o)
{
    PyObject *f = sc_float(o);
    PyObject *r = f ? PyObject_Repr(f) : NULL;
    Py_XDECREF(f);
    return r;
}

static Py_hash_t sc_hash(PyObject *o)
{
    PyObject *f = sc_float(o);
    Py_hash_t h = f ? PyObject_Hash(f) : -1;
    Py_XDECREF(f);
    return h;
}

/* a op b for two scalars of the same format: computed in float32 and
 * rounded, as the ufunc loops do; anything else goes to NumPy's generic
 * scalar arithmetic (arrays, the ufuncs and their type promotion). */
static PyObject *sc_binop(PyObject *a, PyObject *b, int op, binaryfunc generic)
{
    int fa = fmt_of_obj(a);
    if (fa >= 0 && fa == fmt_of_obj(b))
        return new_scalar(Py_TYPE(a), fa, tdt_binary(op, scalar_value(a), scalar_value(b)));
    return generic(a, b);
}

#define GENERIC_NB(slot) (PyGenericArrType_Type.tp_as_number->slot)
static PyObject *sc_add(PyObject *a, PyObject *b) { return sc_binop(a, b, OP_ADD, GENERIC_NB(nb_add)); }
static PyObject *sc_sub(PyObject *a, PyObject *b) { return sc_binop(a, b, OP_SUB, GENERIC_NB(nb_subtract)); }
static PyObject *sc_mul(PyObject *a, PyObject *b) { return sc_binop(a, b, OP_MUL, GENERIC_NB(nb_multiply)); }
static PyObject *sc_div(PyObject *a, PyObject *b) { return sc_binop(a, b, OP_DIV, GENERIC_NB(nb_true_divide)); }

static PyObject *sc_neg(PyObject *o) { return new_scalar(Py_TYPE(o), fmt_of_obj(o), -scalar_value(o)); }
static PyObject *sc_pos(PyObject *o) { Py_INCREF(o); return o; }
static PyObject *sc_abs(PyObject *o) { return new_scalar(Py_TYPE(o), fmt_of_obj(o), fabsf(scalar_value(o))); }

static PyObject *sc_richcompare(PyObject *a, PyObject *b, int op)
{
    int fa = fmt_of_obj(a);
    if (fa < 0 || fa != fmt_of_obj(b))
        return PyGenericArrType_Type.tp_richcompare(a, b, op);
    static const int OPS[] = { [Py_LT] = OP_LT, [Py_LE] = OP_LE, [Py_EQ] = OP_EQ,
                               [Py_NE] = OP_NE, [Py_GT] = OP_GT, [Py_GE] = OP_GE };
    return PyBool_FromLong(tdt_compare(OPS[op], scalar_value(a), scalar_value(b)));
}

static const PyType_Slot SCALAR_SLOTS[] = {
    { Py_tp_new, sc_new }, { Py_tp_repr, sc_repr }, { Py_tp_str, sc_repr },
    { Py_tp_hash, sc_hash }, { Py_tp_richcompare, sc_richcompare },
    { Py_nb_add, sc_add }, { Py_nb_subtract, sc_sub }, { Py_nb_multiply, sc_mul },
    { Py_nb_true_divide, sc_div }, { Py_nb_negative, sc_neg }, { Py_nb_positive, sc_pos },
    { Py_nb_absolute, sc_abs }, { Py_nb_float, sc_float }, { Py_nb_int, sc_int },
    { Py_nb_bool, sc_bool },
    { Py_tp_doc, (void *)"a tpbsim narrow float (NKI's ml_dtypes type): float32 holds every value "
                         "exactly; narrowing rounds to nearest even (docs/semantics.md)" },
    { 0, NULL },
};

/* ---- array functions ----
 * NumPy passes the array to these, but not always (PyArray_Scalar may
 * pass none): each format has its own set (the wrappers at the end), so
 * none needs it. */

/* The registered descriptor of format f (a new reference), or NULL. */
static PyArray_Descr *descr_of_fmt(int f)
{
    for (int n = NPY_USERDEF; n < NPY_USERDEF + NPY_NUMUSERTYPES; n++) {
        PyArray_Descr *d = PyArray_DescrFromType(n);
        if (d && tdt_fmt_of_descr(d) == f)
            return d;
        Py_XDECREF(d);
    }
    PyErr_SetString(PyExc_SystemError, "tpbsim_dtypes: dtype not registered");
    return NULL;
}

static PyObject *getitem(int f, void *p, void *arr)
{
    PyArray_Descr *d = arr ? PyArray_DESCR((PyArrayObject *)arr) : descr_of_fmt(f);
    if (!d)
        return NULL;
    PyTypeObject *t = d->typeobj;
    if (!arr)
        Py_DECREF(d);   /* (the registry keeps it) */
    tdt_scalar_t *s = (tdt_scalar_t *)t->tp_alloc(t, 0);
    if (s)
        memcpy(s->raw, p, (size_t)TDT_FMTS[f].size);
    return (PyObject *)s;
}

static int setitem(int f, PyObject *item, void *p)
{
    if (fmt_of_obj(item) == f) {
        memcpy(p, ((tdt_scalar_t *)item)->raw, (size_t)TDT_FMTS[f].size);
        return 0;
    }
    double v;
    if (value_of(item, &v))
        return -1;
    uint8_t raw[2];
    tdt_store_f64(f, raw, v);
    memcpy(p, raw, (size_t)TDT_FMTS[f].size);
    return 0;
}

/* src NULL: swap dst in place (ndarray.byteswap). */
static void copyswapn(int f, void *dst, npy_intp ds, void *src, npy_intp ss, npy_intp n, int swap)
{
    size_t sz = (size_t)TDT_FMTS[f].size;
    if (!src) {
        src = dst;
        ss = ds;
    }
    for (npy_intp i = 0; i < n; i++) {
        uint8_t b[2];
        memcpy(b, (char *)src + i * ss, sz);
        if (swap && sz == 2) {
            uint8_t t = b[0];
            b[0] = b[1];
            b[1] = t;
        }
        memcpy((char *)dst + i * ds, b, sz);
    }
}

/* For sorting: NaNs last, as NumPy sorts floats. */
static int compare(int f, const void *a, const void *b)
{
    float x = tdt_load(f, a), y = tdt_load(f, b);
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

/* argmax / argmin: the first NaN if any, else the first extreme. */
static int arg_extreme(int f, void *data, npy_intp n, npy_intp *out, int want_max)
{
    size_t sz = (size_t)TDT_FMTS[f].size;
    *out = 0;
    float best = n ? tdt_load(f, data) : 0;
    for (npy_intp i = 1; i < n && !isnan(best); i++) {
        float v = tdt_load(f, (char *)data + (size_t)i * sz);
        if (isnan(v) || (want_max ? v > best : v < best)) {
            best = v;
            *out = i;
        }
    }
    return 0;
}

/* np.arange's fill: start + i * delta, from the first two elements. */
static int fill(int f, void *data, npy_intp n)
{
    size_t sz = (size_t)TDT_FMTS[f].size;
    float start = tdt_load(f, data), delta = tdt_load(f, (char *)data + sz) - start;
    for (npy_intp i = 2; i < n; i++)
        tdt_store(f, (char *)data + (size_t)i * sz, start + (float)i * delta);
    return 0;
}

static void dot(int f, void *a, npy_intp as, void *b, npy_intp bs, void *out, npy_intp n)
{
    float acc = 0;
    for (npy_intp i = 0; i < n; i++)
        acc += tdt_load(f, (char *)a + i * as) * tdt_load(f, (char *)b + i * bs);
    tdt_store(f, out, acc);
}

#define TDT_ARRFUNCS(F) \
    static PyObject *getitem_##F(void *p, void *arr) { return getitem(F, p, arr); } \
    static int setitem_##F(PyObject *o, void *p, void *arr) { (void)arr; return setitem(F, o, p); } \
    static void copyswapn_##F(void *d, npy_intp ds, void *s, npy_intp ss, npy_intp n, int sw, \
                              void *arr) { (void)arr; copyswapn(F, d, ds, s, ss, n, sw); } \
    static void copyswap_##F(void *d, void *s, int sw, void *arr) \
    { (void)arr; copyswapn(F, d, 0, s, 0, 1, sw); } \
    static npy_bool nonzero_##F(void *p, void *arr) { (void)arr; return tdt_load(F, p) != 0; } \
    static int compare_##F(const void *a, const void *b, void *arr) \
    { (void)arr; return compare(F, a, b); } \
    static int argmax_##F(void *d, npy_intp n, npy_intp *o, void *arr) \
    { (void)arr; return arg_extreme(F, d, n, o, 1); } \
    static int argmin_##F(void *d, npy_intp n, npy_intp *o, void *arr) \
    { (void)arr; return arg_extreme(F, d, n, o, 0); } \
    static int fill_##F(void *d, npy_intp n, void *arr) { (void)arr; return fill(F, d, n); } \
    static void dot_##F(void *a, npy_intp as, void *b, npy_intp bs, void *o, npy_intp n, void *arr) \
    { (void)arr; dot(F, a, as, b, bs, o, n); } \
    static void arrfuncs_##F(PyArray_ArrFuncs *f) \
    { \
        f->getitem = getitem_##F; \
        f->setitem = setitem_##F; \
        f->copyswapn = copyswapn_##F; \
        f->copyswap = copyswap_##F; \
        f->nonzero = nonzero_##F; \
        f->compare = compare_##F; \
        f->argmax = argmax_##F; \
        f->argmin = argmin_##F; \
        f->fill = fill_##F; \
        f->dotfunc = dot_##F; \
    }
TDT_ARRFUNCS(TDT_BF16)
TDT_ARRFUNCS(TDT_E4M3)
TDT_ARRFUNCS(TDT_E5M2)
TDT_ARRFUNCS(TDT_E4M3IEEE)

static void (*const ARRFUNCS[TDT_NFMT])(PyArray_ArrFuncs *) = {
    arrfuncs_TDT_BF16, arrfuncs_TDT_E4M3, arrfuncs_TDT_E5M2, arrfuncs_TDT_E4M3IEEE,
};

/* ---- registration ---- */

/* str() of a scalar type is its dtype name ('bfloat16'), as NKI's dtypes
 * print: NKI Library code compares str(tile.dtype) with str(nl.bfloat16)
 * and with names like 'float8_e4m3'.  repr() stays Python's. */
static PyObject *meta_str(PyObject *t)
{
    return PyUnicode_FromString(strchr(((PyTypeObject *)t)->tp_name, '.') + 1);
}

/* hash() of a scalar type is its name's: inside a kernel a tile's dtype
 * is that name (tpbsim._ndtypes.DtypeName, equal to the type), so a dict
 * keyed by nl.float8_e4m3 finds a tile's dtype (the NKI Library's
 * _max_pos_range_map.get(weight.dtype)).  The name is fixed at creation:
 * the hash never changes. */
static Py_hash_t meta_hash(PyObject *t)
{
    PyObject *name = meta_str(t);
    if (!name)
        return -1;
    Py_hash_t h = PyObject_Hash(name);
    Py_DECREF(name);
    return h;
}

static const PyType_Slot META_SLOTS[] = {
    { Py_tp_str, meta_str },
    { Py_tp_hash, meta_hash },
    { Py_tp_doc, (void *)"the metatype of tpbsim's narrow float types: str() is the dtype name, hash() its hash" },
    { 0, NULL },
};

/* The scalar types' metatype (a subclass of type adding only tp_str; same
 * layout), made once per type made: it lives as long as its type, which
 * NumPy's registry keeps for good. */
static PyObject *make_meta(void)
{
    PyType_Spec spec = { "tpbsim.dtype_type", 0, 0, Py_TPFLAGS_DEFAULT, (PyType_Slot *)META_SLOTS };
    PyObject *bases = PyTuple_Pack(1, (PyObject *)&PyType_Type);
    PyObject *meta = bases ? PyType_FromSpecWithBases(&spec, bases) : NULL;
    Py_XDECREF(bases);
    return meta;
}

static PyObject *make_type(int fmt)
{
    PyType_Spec spec = { TDT_FMTS[fmt].tp_name, sizeof(tdt_scalar_t), 0, Py_TPFLAGS_DEFAULT,
                         (PyType_Slot *)SCALAR_SLOTS };   /* (CPython only reads it) */
    PyObject *bases = PyTuple_Pack(1, (PyObject *)&PyGenericArrType_Type);
    PyObject *t = bases ? PyType_FromSpecWithBases(&spec, bases) : NULL;
    Py_XDECREF(bases);
    PyObject *meta = t ? make_meta() : NULL;
    if (!meta) {
        Py_XDECREF(t);
        return NULL;
    }
    /* CPython 3.11 has no PyType_FromMetaclass: the type made with `type`
     * as its metatype gets the subclass (the same object layout); the type
     * holds the reference to it (type was static: it held none) */
    Py_SET_TYPE(t, (PyTypeObject *)meta);
    return t;
}

/* The dtype of format fmt with scalar type t: registered with NumPy, its
 * number returned (-1 with an exception set on failure). */
static int register_dtype(int fmt, PyTypeObject *t)
{
    PyArray_ArrFuncs *f = PyMem_Calloc(1, sizeof *f);
    PyArray_Descr *d = PyObject_Malloc(sizeof *d);
    if (!f || !d) {
        PyMem_Free(f);
        PyObject_Free(d);
        PyErr_NoMemory();
        return -1;
    }
    PyArray_InitArrFuncs(f);
    ARRFUNCS[fmt](f);
    memset(d, 0, sizeof *d);
    PyObject_Init((PyObject *)d, &PyArrayDescr_Type);
    Py_INCREF(t);
    d->typeobj = t;
    d->kind = 'V';   /* as ml_dtypes: .npy files say '<V2' / '|V1' */
    d->type = TDT_FMTS[fmt].typechar;
    d->byteorder = TDT_FMTS[fmt].size > 1 ? '=' : '|';
    d->flags = NPY_NEEDS_PYAPI | NPY_USE_GETITEM | NPY_USE_SETITEM;
    d->elsize = d->alignment = TDT_FMTS[fmt].size;
    d->f = f;
    d->hash = -1;
    int num = PyArray_RegisterDataType(d);
    if (num < 0)
        return -1;
    /* np.dtype(nl.bfloat16) finds the registered type; .dtype as ml_dtypes has it */
    if (PyObject_SetAttrString((PyObject *)t, "dtype", (PyObject *)d) < 0)
        return -1;
    return num;
}

/* CPython's module definition (it writes into the head: the one mutable
 * object here, besides NumPy's C-API table that import_array fills). */
static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "tpbsim_dtypes",
    "NumPy dtypes bfloat16, float8_e4m3fn, float8_e4m3 and float8_e5m2 for tpbsim.nki.language", -1,
    NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_tpbsim_dtypes(void)
{
    import_array();
    import_umath();
    PyObject *m = PyModule_Create(&MODULE);
    if (!m)
        return NULL;
    int nums[TDT_NFMT] = { -1, -1, -1, -1 };
    for (int fmt = 0; fmt < TDT_NFMT; fmt++) {
        PyObject *t = make_type(fmt);
        const char *name = strchr(TDT_FMTS[fmt].tp_name, '.') + 1;
        if (!t || (nums[fmt] = register_dtype(fmt, (PyTypeObject *)t)) < 0 ||
            PyModule_AddObjectRef(m, name, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(m);
            return NULL;
        }
        Py_DECREF(t);
        PyArray_Descr *d = PyArray_DescrFromType(nums[fmt]);
        int bad = !d || tdt_register_casts(fmt, d, nums) < 0 ||
                  tdt_register_ufuncs(fmt, nums[fmt]) < 0;
        Py_XDECREF(d);
        if (bad) {
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
