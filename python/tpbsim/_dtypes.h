/* _dtypes.h - shared parts of the tpbsim_dtypes extension module
 * (_dtypes.c: module, scalar types, registration; _dtypes_ops.c: casts and
 * ufunc loops).  The module gives NumPy 1.x four user dtypes -- bfloat16,
 * float8_e4m3fn, float8_e4m3 and float8_e5m2 -- through NumPy's legacy user-dtype API,
 * so that NKI code can use nl.bfloat16 & co. as NumPy dtypes, as NKI's own
 * (ml_dtypes) types are.  Every narrowing to one of them is common/numeric.c
 * (round to nearest even, the overflow rules of docs/semantics.md): this
 * module only moves values between NumPy and those functions. */
#ifndef TPB_PY_DTYPES_H
#define TPB_PY_DTYPES_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tpbsim_dtypes_ARRAY_API
#define PY_UFUNC_UNIQUE_SYMBOL tpbsim_dtypes_UFUNC_API
#ifndef TDT_MAIN
#define NO_IMPORT_ARRAY
#define NO_IMPORT_UFUNC
#endif
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>

#include <stdint.h>
#include <string.h>

#include "numeric.h"

/* TDT_E4M3: OCP float8_e4m3fn; TDT_E4M3IEEE: NKI's legacy float8_e4m3
 * (IEEE-style, inf at exponent 1111, max 240; ml_dtypes' float8_e4m3). */
enum { TDT_BF16, TDT_E4M3, TDT_E5M2, TDT_E4M3IEEE, TDT_NFMT };

typedef struct {
    const char *tp_name;    /* the scalar type's name; NumPy's dtype.name is the part after '.' */
    int size;               /* bytes per element */
    char typechar;          /* dtype.char */
} tdt_fmt_t;

extern const tdt_fmt_t TDT_FMTS[TDT_NFMT];

/* The scalar object: NumPy's PyArray_Scalar copies an element right after
 * the object header (aligned to the dtype's alignment: 2 at most here). */
typedef struct {
    PyObject_HEAD
    uint8_t raw[2];
} tdt_scalar_t;

static inline float tdt_load(int fmt, const void *p)
{
    const uint8_t *b = p;
    if (fmt == TDT_BF16) {
        uint16_t h;
        memcpy(&h, b, 2);
        return num_bf16_to_f32(h);
    }
    return fmt == TDT_E4M3 ? num_fp8e4m3_to_f32(b[0]) :
           fmt == TDT_E4M3IEEE ? num_fp8e4m3ieee_to_f32(b[0]) : num_fp8e5m2_to_f32(b[0]);
}

static inline void tdt_store(int fmt, void *p, float v)
{
    uint8_t *b = p;
    if (fmt == TDT_BF16) {
        uint16_t h = num_f32_to_bf16(v);
        memcpy(b, &h, 2);
    } else {
        b[0] = fmt == TDT_E4M3 ? num_f32_to_fp8e4m3(v) :
               fmt == TDT_E4M3IEEE ? num_f32_to_fp8e4m3ieee(v) : num_f32_to_fp8e5m2(v);
    }
}

/* The element-wise operations (ufunc loops and scalar arithmetic). */
enum {
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_MAX, OP_MIN, OP_FMAX, OP_FMIN,
    OP_NEG, OP_POS, OP_ABS, OP_SQRT, OP_EXP, OP_LOG, OP_SQUARE, OP_RECIP, OP_FLOOR, OP_CEIL,
    OP_RINT, OP_SIGN, OP_TANH,
    OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
    OP_ISNAN, OP_ISINF, OP_ISFINITE, OP_SIGNBIT,
};

/* op's result in float32: OP_ADD .. OP_FMIN; OP_EQ .. OP_GE. */
float tdt_binary(int op, float a, float b);
int tdt_compare(int op, float a, float b);

/* A float64 value into format fmt (see _dtypes_ops.c). */
void tdt_store_f64(int fmt, void *p, double v);
/* The format of a dtype registered here (by its type char), or -1. */
int tdt_fmt_of_descr(const PyArray_Descr *d);
/* Register the casts of format fmt (dtype number typenum, descriptor d)
 * to and from NumPy's numeric types and the other formats registered so
 * far (registered[f] holds their numbers, -1 for not yet), and its ufunc
 * loops.  0, or -1 with a Python exception set. */
int tdt_register_casts(int fmt, PyArray_Descr *d, const int registered[TDT_NFMT]);
int tdt_register_ufuncs(int fmt, int typenum);

#endif
