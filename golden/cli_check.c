/* tpb check - compare simulator outputs with golden .npy files. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "check.h"
#include "cli_golden.h"
#include "fileio.h"
#include "isa.h"

int tpb_cmd_check(int argc, char **argv);

#define MAX_EXPECTED 64

void gc_check_opts_default(gc_check_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->max_report = 5;
}

static void print_usage(FILE *f)
{
    fprintf(f,
        "usage: tpb check [options] <outdir> <golden-case-dir | expected-dir>\n"
        "       tpb check [options] <output.npy> <expected.npy>\n\n"
        "Compare every expected .npy (a golden case's expected/ directory, or the\n"
        "directory given) with the file of the same name in <outdir>.\n"
        "Floats match when |out - exp| <= atol + rtol*|exp| (NaN only where NaN is\n"
        "expected, infinities of the same sign); integers must match exactly.\n"
        "Tolerances come from the case's case.json (default rtol 1e-05, atol 1e-06).\n\n"
        "options:\n"
        "  --rtol X        relative tolerance for every float output (overrides case.json)\n"
        "  --atol X        absolute tolerance for every float output (overrides case.json)\n"
        "  --max-report N  mismatching elements listed per failing output (default 5, max %d)\n"
        "  -q, --quiet     print only failing outputs and the overall verdict\n"
        "  -h, --help      show this help\n\n"
        "exit status: 0 every output matches, 1 a mismatch or a missing/unreadable file,\n"
        "2 usage error.\n", GC_MAX_REPORTED);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted list of "<name>" for each <dir>/<name>.npy; returns count or -1. */
static int list_npy(const char *dir, char **names, int max, tpb_err_t *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return tpb_errf(err, "%s: cannot open directory", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= 4 || strcmp(e->d_name + len - 4, ".npy") != 0)
            continue;
        if (n >= max) {
            closedir(d);
            for (int i = 0; i < n; i++)
                free(names[i]);
            return tpb_errf(err, "%s: more than %d .npy files", dir, max);
        }
        names[n] = malloc(len - 3);
        if (!names[n])
            break;
        memcpy(names[n], e->d_name, len - 4);
        names[n][len - 4] = 0;
        n++;
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_names);
    return n;
}

static void describe_array(const gc_result_t *r, char *buf, size_t len)
{
    char shape[160];
    gc_format_index(r->shape, r->ndim, shape, sizeof shape);
    snprintf(buf, len, "%s %s", shape, isa_dtype_numpy_name(r->dtype));
}

static void print_mismatches(FILE *out, const gc_result_t *r, int max_report)
{
    int n = (int)r->nreported < max_report ? (int)r->nreported : max_report;
    if (n == 0)
        return;
    fprintf(out, "      first mismatches (index: output vs expected):\n");
    for (int i = 0; i < n; i++) {
        const gc_mismatch_t *m = &r->first[i];
        char idx[160];
        gc_format_index(m->index, r->ndim, idx, sizeof idx);
        if (r->exact)
            fprintf(out, "        %-16s %lld vs %lld\n", idx, (long long)m->got,
                    (long long)m->want);
        else
            fprintf(out, "        %-16s %.9g vs %.9g  (abs err %.3g)\n", idx, m->got, m->want,
                    m->got - m->want);
    }
    if (r->mismatches > (size_t)n)
        fprintf(out, "        ... and %zu more\n", r->mismatches - (size_t)n);
}

static void print_result(FILE *out, const char *name, const gc_result_t *r, const gc_tol_t *tol,
                         const gc_check_opts_t *opts)
{
    char desc[200], where[160];
    describe_array(r, desc, sizeof desc);
    gc_format_index(r->max_abs_index, r->ndim, where, sizeof where);
    const char *verdict = r->pass ? "PASS" : "FAIL";
    if (r->pass && opts->quiet)
        return;
    fprintf(out, "%s  %s  %s", verdict, name, desc);
    if (r->exact)
        fprintf(out, "  exact");
    else
        fprintf(out, "  rtol %g atol %g", tol->rtol, tol->atol);
    if (r->mismatches)
        fprintf(out, "  %zu of %zu elements differ (%.2f%%)", r->mismatches, r->count,
                100.0 * (double)r->mismatches / (double)(r->count ? r->count : 1));
    fprintf(out, "  max abs err %.3g", r->max_abs_err);
    if (r->max_abs_err > 0)
        fprintf(out, " at %s", where);
    if (!r->exact)
        fprintf(out, ", max rel err %.3g", r->max_rel_err);
    fprintf(out, "\n");
    if (tol->mode == GC_MODE_DROPOUT)
        fprintf(out, "      dropout: kept %zu of %zu non-zero elements (%.4f), accepted [%g, %g]%s\n",
                r->kept, r->keep_population, r->keep_fraction, tol->keep_min, tol->keep_max,
                r->keep_fraction_ok ? "" : "  <-- out of range");
    if (!r->pass)
        print_mismatches(out, r, opts->max_report);
}

static gc_tol_t effective_tol(const gc_case_t *c, const char *name, const gc_check_opts_t *opts)
{
    gc_tol_t tol;
    if (c)
        tol = *gc_case_tol(c, name);
    else
        gc_tol_default(&tol);
    if (opts->rtol_set)
        tol.rtol = opts->rtol;
    if (opts->atol_set)
        tol.atol = opts->atol;
    return tol;
}

/* Compare one output; updates sum.  Returns 1 on pass. */
static int check_one(FILE *out, const char *name, const char *got_path, const char *want_path,
                     const gc_tol_t *tol, const gc_check_opts_t *opts, gc_check_summary_t *sum)
{
    gc_result_t r;
    tpb_err_t err;
    sum->outputs++;
    if (gc_compare_files(got_path, want_path, tol, &r, &err) != 0) {
        fprintf(out, "ERROR %s  %s\n", name, err.msg);
        sum->errors++;
        return 0;
    }
    print_result(out, name, &r, tol, opts);
    if (r.pass)
        sum->passed++;
    else
        sum->failed++;
    return r.pass;
}

static void print_overall(FILE *out, const gc_check_summary_t *s)
{
    if (s->outputs == 0)
        fprintf(out, "overall: FAIL (no expected outputs to compare)\n");
    else if (s->passed == s->outputs)
        fprintf(out, "overall: PASS (%d output%s)\n", s->outputs, s->outputs == 1 ? "" : "s");
    else
        fprintf(out, "overall: FAIL (%d of %d outputs: %d mismatched, %d errors)\n",
                s->outputs - s->passed, s->outputs, s->failed, s->errors);
}

int gc_check_dir(FILE *out, const char *outdir, const char *expected_dir, const gc_case_t *c,
                 const gc_check_opts_t *opts, gc_check_summary_t *sum)
{
    char *names[MAX_EXPECTED];
    tpb_err_t err;
    memset(sum, 0, sizeof *sum);
    if (!fio_is_dir(outdir)) {
        fprintf(out, "ERROR output directory %s does not exist\n", outdir);
        sum->errors++;
    }
    int n = list_npy(expected_dir, names, MAX_EXPECTED, &err);
    if (n < 0) {
        fprintf(out, "ERROR %s\n", err.msg);
        sum->errors++;
        n = 0;
    }
    for (int i = 0; i < n; i++) {
        char file[300], got[GC_PATH_MAX], want[GC_PATH_MAX];
        snprintf(file, sizeof file, "%s.npy", names[i]);
        gc_tol_t tol = effective_tol(c, names[i], opts);
        if (fio_join(got, sizeof got, outdir, file, &err) != 0 ||
            fio_join(want, sizeof want, expected_dir, file, &err) != 0) {
            fprintf(out, "ERROR %s  %s\n", names[i], err.msg);
            sum->outputs++;
            sum->errors++;
        } else {
            check_one(out, names[i], got, want, &tol, opts, sum);
        }
        free(names[i]);
    }
    print_overall(out, sum);
    return (sum->outputs > 0 && sum->passed == sum->outputs) ? 0 : 1;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Where the expected files are, and the case config if there is one: a
 * case directory (has expected/), or an expected/ dir inside a case. */
static int resolve_golden(const char *arg, char *expected_dir, size_t len, gc_case_t *c,
                          bool *have_case, tpb_err_t *err)
{
    char sub[GC_PATH_MAX];
    *have_case = false;
    if (fio_join(sub, sizeof sub, arg, "expected", err) != 0)
        return -1;
    if (fio_is_dir(sub)) {
        if (gc_case_load(arg, c, err) != 0)
            return -1;
        *have_case = true;
        snprintf(expected_dir, len, "%s", sub);
        return 0;
    }
    if (!fio_is_dir(arg))
        return tpb_errf(err, "%s: not a golden case directory or an expected-output directory", arg);
    snprintf(expected_dir, len, "%s", arg);
    /* <case>/expected given directly: still use the case's tolerances */
    char parent[GC_PATH_MAX], cfg[GC_PATH_MAX];
    snprintf(parent, sizeof parent, "%s", arg);
    size_t n = strlen(parent);
    while (n > 1 && parent[n - 1] == '/')
        parent[--n] = 0;
    char *slash = strrchr(parent, '/');
    if (slash && strcmp(slash + 1, "expected") == 0) {
        *slash = 0;
    } else if (strcmp(parent, "expected") == 0) {
        snprintf(parent, sizeof parent, ".");
    } else {
        return 0;
    }
    if (fio_join(cfg, sizeof cfg, parent, "case.json", err) == 0 && fio_exists(cfg)) {
        if (gc_case_load(parent, c, err) != 0)
            return -1;
        *have_case = true;
    }
    return 0;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0))
        return -1;
    *out = v;
    return 0;
}

/* Returns 0 ok, 1 help printed, 2 usage error. */
static int parse_args(int argc, char **argv, gc_check_opts_t *o, const char **pos, int *npos)
{
    *npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            print_usage(stdout);
            return 1;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->quiet = true;
        } else if (strcmp(a, "--rtol") == 0 || strcmp(a, "--atol") == 0 ||
                   strcmp(a, "--max-report") == 0) {
            double v;
            if (i + 1 >= argc || parse_double(argv[i + 1], &v) != 0) {
                fprintf(stderr, "tpb check: %s needs a non-negative number\n", a);
                return 2;
            }
            i++;
            if (strcmp(a, "--rtol") == 0) {
                o->rtol = v;
                o->rtol_set = true;
            } else if (strcmp(a, "--atol") == 0) {
                o->atol = v;
                o->atol_set = true;
            } else {
                o->max_report = v > GC_MAX_REPORTED ? GC_MAX_REPORTED : (int)v;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "tpb check: unknown option '%s'\n", a);
            print_usage(stderr);
            return 2;
        } else if (*npos < 2) {
            pos[(*npos)++] = a;
        } else {
            fprintf(stderr, "tpb check: too many arguments\n");
            return 2;
        }
    }
    if (*npos != 2) {
        fprintf(stderr, "tpb check: need <outdir> and <golden-case-dir | expected-dir>\n");
        print_usage(stderr);
        return 2;
    }
    return 0;
}

static int check_file_pair(const char *got, const char *want, const gc_check_opts_t *opts)
{
    gc_check_summary_t sum;
    memset(&sum, 0, sizeof sum);
    gc_tol_t tol = effective_tol(NULL, "", opts);
    const char *base = strrchr(want, '/');
    base = base ? base + 1 : want;
    check_one(stdout, base, got, want, &tol, opts, &sum);
    print_overall(stdout, &sum);
    return sum.passed == 1 ? 0 : 1;
}

int tpb_cmd_check(int argc, char **argv)
{
    gc_check_opts_t opts;
    gc_check_opts_default(&opts);
    const char *pos[2];
    int npos;
    int rc = parse_args(argc, argv, &opts, pos, &npos);
    if (rc != 0)
        return rc == 1 ? 0 : 2;
    if (has_suffix(pos[0], ".npy") && has_suffix(pos[1], ".npy"))
        return check_file_pair(pos[0], pos[1], &opts);

    gc_case_t *c = malloc(sizeof *c);
    if (!c) {
        fprintf(stderr, "tpb check: out of memory\n");
        return 1;
    }
    char expected[GC_PATH_MAX];
    bool have_case;
    tpb_err_t err;
    if (resolve_golden(pos[1], expected, sizeof expected, c, &have_case, &err) != 0) {
        fprintf(stderr, "tpb check: %s\n", err.msg);
        free(c);
        return 1;
    }
    gc_check_summary_t sum;
    rc = gc_check_dir(stdout, pos[0], expected, have_case ? c : NULL, &opts, &sum);
    free(c);
    return rc;
}
