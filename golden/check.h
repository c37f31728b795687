/* check.h - compare one simulator output array with one golden array.
 *
 * The comparison is dtype-aware:
 *   - integer (and bool) arrays must match exactly;
 *   - float arrays match element-wise when |got - want| <= atol + rtol*|want|
 *     (the numpy.allclose rule), with NaN and Inf handled explicitly:
 *     a NaN output matches only where the expected value is NaN, and an
 *     infinite expected value matches only the same-signed infinity.
 *   - "dropout" mode (statistical check of a seeded dropout): each output
 *     element is either 0 (dropped) or matches the expected "kept" value under
 *     the float rule; the fraction of kept elements (over elements whose
 *     expected value is non-zero) must lie within [keep_min, keep_max].
 *
 * Shape and dtype must be identical (bf16/fp8 tensors travel as float32
 * arrays on both sides, see docs/artifacts.md); a mismatch is an error,
 * not a failed comparison.  Library code: nothing is printed. */
#ifndef TPB_GOLDEN_CHECK_H
#define TPB_GOLDEN_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "npy.h"

/* How many mismatching elements a result keeps for the report. */
#define GC_MAX_REPORTED 8

typedef enum {
    GC_MODE_VALUES = 0,   /* element-wise comparison (default) */
    GC_MODE_DROPOUT,      /* out[i] in {0, expected[i]}, keep fraction bounded */
} gc_mode_t;

typedef struct {
    double rtol;          /* relative tolerance (floats only) */
    double atol;          /* absolute tolerance (floats only) */
    gc_mode_t mode;
    double keep_min;      /* GC_MODE_DROPOUT: accepted kept fraction range */
    double keep_max;
} gc_tol_t;

typedef struct {
    size_t flat;                    /* flat C-order index */
    int64_t index[NPY_MAX_DIMS];    /* multi-dimensional index */
    double got;
    double want;
} gc_mismatch_t;

typedef struct {
    bool pass;                      /* every element matched (and keep fraction ok) */
    bool exact;                     /* integer comparison was used */
    int ndim;
    int64_t shape[NPY_MAX_DIMS];
    unsigned dtype;                 /* isa dtype of both arrays */
    size_t count;                   /* elements compared */
    size_t mismatches;              /* elements outside tolerance */
    double max_abs_err;             /* over elements where both are finite */
    int64_t max_abs_index[NPY_MAX_DIMS]; /* where max_abs_err occurs */
    double max_rel_err;             /* |got-want|/|want|, want != 0, finite */
    size_t nreported;               /* entries used in first[] */
    gc_mismatch_t first[GC_MAX_REPORTED];
    /* GC_MODE_DROPOUT only */
    size_t kept;                    /* elements equal to their expected value */
    size_t keep_population;         /* elements whose expected value is non-zero */
    double keep_fraction;           /* kept / keep_population (0 if none) */
    bool keep_fraction_ok;
} gc_result_t;

/* Default tolerances: exact for integers; these for floats. */
void gc_tol_default(gc_tol_t *tol);

/* True when `got` matches `want` under tol's float rule (NaN/Inf rules
 * included).  Exposed for tests and for reuse by other checks. */
bool gc_float_match(double got, double want, const gc_tol_t *tol);

/* Compare two arrays.  Returns 0 when the comparison ran (res->pass says
 * whether it passed), -1 with err set on shape/dtype mismatch. */
int gc_compare(const npy_array_t *got, const npy_array_t *want, const gc_tol_t *tol,
               gc_result_t *res, tpb_err_t *err);

/* Read both files and compare.  A missing or unreadable file is an error
 * naming the path. */
int gc_compare_files(const char *got_path, const char *want_path, const gc_tol_t *tol,
                     gc_result_t *res, tpb_err_t *err);

/* Format a multi-dimensional index as "[3, 17]" into buf. */
void gc_format_index(const int64_t *index, int ndim, char *buf, size_t len);

#endif
