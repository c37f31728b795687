/* case.h - a golden case directory and its case.json (docs/golden.md).
 *
 *   golden/<case>/kernel.json     the kernel (docs/kernel-format.md)
 *                 case.json       tolerances, target, lnc, cycle range, tags, xfail
 *                 ref.py          NumPy reference (scripts/golden.py runs it)
 *                 inputs/<name>.npy   generated inputs, named after kernel inputs
 *                 expected/<name>.npy generated expected outputs
 *
 * case.json is optional: a directory holding kernel.json and expected/ is
 * checked with default tolerances.  Unknown keys are errors (typos in a
 * tolerance must not silently loosen nothing). */
#ifndef TPB_GOLDEN_CASE_H
#define TPB_GOLDEN_CASE_H

#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "diag.h"

#define GC_MAX_OUTPUTS 16
#define GC_MAX_TAGS 8
#define GC_PATH_MAX 4096

typedef struct {
    char name[128];         /* output tensor name = expected/<name>.npy */
    gc_tol_t tol;
} gc_output_cfg_t;

typedef struct {
    char dir[GC_PATH_MAX];          /* the case directory */
    char name[128];                 /* its last path component */
    char description[512];
    char kernel[GC_PATH_MAX];       /* path of the kernel file */
    char target[32];                /* "" = the kernel's / compiler default */
    int lnc;                        /* logical cores (1; 2 with issue #5) */
    int ntags;
    char tags[GC_MAX_TAGS][32];
    uint64_t seed;                  /* input generation and simulator seed */
    bool has_seed;
    bool has_cycles;
    uint64_t cycles_min, cycles_max; /* accepted total cycles, inclusive */
    bool xfail;                     /* expected to fail ... */
    char xfail_reason[512];         /* ... because of this */
    gc_tol_t default_tol;
    int noutputs;
    gc_output_cfg_t outputs[GC_MAX_OUTPUTS];
} gc_case_t;

/* Load <dir>/case.json (defaults when absent).  Errors name the file and
 * the field. */
int gc_case_load(const char *dir, gc_case_t *c, tpb_err_t *err);

/* Parse case.json text (`path` for messages) into c (c->dir must be set). */
int gc_case_parse(const char *text, const char *path, gc_case_t *c, tpb_err_t *err);

/* The tolerance for one output: its own entry or the case default. */
const gc_tol_t *gc_case_tol(const gc_case_t *c, const char *output);

bool gc_case_has_tag(const gc_case_t *c, const char *tag);

#endif
