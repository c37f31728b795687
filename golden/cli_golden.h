/* cli_golden.h - shared between the `tpb check` and `tpb run` commands
 * (command-level code: these print to the stream they are given). */
#ifndef TPB_GOLDEN_CLI_H
#define TPB_GOLDEN_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "case.h"
#include "check.h"

typedef struct {
    bool rtol_set, atol_set;        /* --rtol / --atol override case.json */
    double rtol, atol;
    int max_report;                 /* mismatching elements listed per output */
    bool quiet;                     /* only FAIL/ERROR lines and the overall verdict */
} gc_check_opts_t;

typedef struct {
    int outputs;                    /* expected files found */
    int passed;
    int failed;                     /* values outside tolerance */
    int errors;                     /* missing file, shape/dtype mismatch, unreadable */
} gc_check_summary_t;

void gc_check_opts_default(gc_check_opts_t *o);

/* Compare every <expected_dir>/<name>.npy with <outdir>/<name>.npy, print a
 * verdict line per output (and a diff on failure) to `out`.  `c` supplies
 * per-output tolerances (may be NULL).  Returns 0 when every output
 * matched, 1 otherwise (including "no expected files"). */
int gc_check_dir(FILE *out, const char *outdir, const char *expected_dir, const gc_case_t *c,
                 const gc_check_opts_t *opts, gc_check_summary_t *sum);

#endif
