/* tpb run - compile + simulate + check one kernel or golden case, in
 * process: it calls `tpb compile` and `tpb sim` through their command entry
 * points and then the checker of `tpb check`, leaving everything in one
 * output folder:
 *
 *   <out>/artifacts/    the compiled artifact directory
 *   <out>/<name>.npy    simulated outputs
 *   <out>/stats.json    simulator statistics (--stats-json)
 *   <out>/trace.json    timeline trace (--trace)
 *   <out>/inputs/       generated inputs (bare kernel without inputs only)
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "case.h"
#include "check.h"
#include "cli_golden.h"
#include "fileio.h"
#include "jsonread.h"
#include "isa.h"
#include "npy.h"

int tpb_cmd_run(int argc, char **argv);
int tpb_cmd_compile(int argc, char **argv);
int tpb_cmd_sim(int argc, char **argv);

typedef struct {
    const char *subject;        /* kernel.json or case directory */
    const char *outdir;         /* -o */
    const char *target;         /* --target */
    const char *trace;          /* --trace FILE (default <out>/trace.json) */
    bool no_trace;
    const char *stats;          /* --stats-json FILE (default <out>/stats.json) */
    const char *max_cycles;     /* passed through to tpb sim */
    const char *seed;           /* passed through to tpb sim */
    const char *threads;        /* passed through to tpb sim */
    bool split_all;             /* passed through to tpb sim */
    const char *inputs;         /* --inputs DIR */
    bool timing_only;
    bool ignore_cycles;
    gc_check_opts_t check;
} run_opts_t;

/* Everything a run decides before it starts. */
typedef struct {
    gc_case_t c;                /* the case (defaults for a bare kernel) */
    bool is_case;               /* subject was a golden case directory */
    bool has_expected;
    char expected[GC_PATH_MAX];
    char inputs[GC_PATH_MAX];
    char artifacts[GC_PATH_MAX];
    char trace[GC_PATH_MAX];
    char stats[GC_PATH_MAX];
    char outdir[GC_PATH_MAX];
} run_plan_t;

typedef enum { STEP_OK = 0, STEP_FAILED } step_t;

static void print_usage(FILE *f)
{
    fprintf(f,
        "usage: tpb run [options] <kernel.json | golden-case-dir>\n\n"
        "Compile, simulate and check in one step.  For a golden case directory\n"
        "(golden/<case>: kernel.json, case.json, inputs/, expected/) the outputs are\n"
        "compared with expected/ using the case's tolerances, and the simulated cycle\n"
        "count with the case's \"cycles\" range.  A case marked \"xfail\" in case.json\n"
        "reports XFAIL (exit 0) when it fails and XPASS (exit 1) when it passes.\n"
        "For a bare kernel.json, inputs come from inputs/ next to the kernel or are\n"
        "generated deterministically (--seed) into <out>/inputs/, and the run reports\n"
        "\"no golden to check\".\n\n"
        "options:\n"
        "  -o, --out DIR       output folder (default: tpb-run/<name>); receives the\n"
        "                      artifacts/, the output .npy files, stats.json, trace.json\n"
        "  --target NAME       target (trn1, trn2, trn3); default: case.json, then the kernel\n"
        "  --trace FILE        write the trace here instead of <out>/trace.json\n"
        "  --no-trace          do not write a trace\n"
        "  --stats-json FILE   write statistics here instead of <out>/stats.json\n"
        "  --max-cycles N      stop the simulation after N cycles (passed to tpb sim)\n"
        "  --seed N            simulator seed (random memset, dropout) and input seed;\n"
        "                      default: the case's \"seed\"\n"
        "  --threads N         threads splitting large instructions (passed to tpb sim;\n"
        "                      default: the online CPUs; results do not depend on N)\n"
        "  --split-all         (testing) split every splittable instruction (tpb sim)\n"
        "  --timing-only       simulate timing only; values are not checked\n"
        "  --inputs DIR        take the input .npy files from DIR\n"
        "  --ignore-cycles     do not check the case's cycle range (it is also skipped\n"
        "                      when --target differs from the case's target)\n"
        "  --rtol X, --atol X  override the case's tolerances\n"
        "  -q, --quiet         print only failures and the verdict (no command lines,\n"
        "                      no compile/sim summary)\n"
        "  -h, --help          show this help\n\n"
        "exit status: 0 pass (or XFAIL, or no golden to check), 1 failure (or XPASS),\n"
        "2 usage error.\n");
}

static int parse_num_arg(const char *opt, const char *v, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !(d >= 0)) {
        fprintf(stderr, "tpb run: %s needs a non-negative number, got '%s'\n", opt, v);
        return -1;
    }
    *out = d;
    return 0;
}

static bool is_uint(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* Options taking a value; returns 0 consumed, 1 not mine, -1 error. */
static int parse_valued(run_opts_t *o, const char *a, const char *v)
{
    double d;
    if (strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0)
        o->outdir = v;
    else if (strcmp(a, "--target") == 0)
        o->target = v;
    else if (strcmp(a, "--trace") == 0)
        o->trace = v;
    else if (strcmp(a, "--stats-json") == 0)
        o->stats = v;
    else if (strcmp(a, "--inputs") == 0)
        o->inputs = v;
    else if (strcmp(a, "--max-cycles") == 0 || strcmp(a, "--seed") == 0 ||
             strcmp(a, "--threads") == 0) {
        if (!is_uint(v)) {
            fprintf(stderr, "tpb run: %s needs a non-negative integer, got '%s'\n", a, v);
            return -1;
        }
        if (a[2] == 'm')
            o->max_cycles = v;
        else if (a[2] == 't')
            o->threads = v; /* the range is checked by tpb sim */
        else
            o->seed = v;
    } else if (strcmp(a, "--rtol") == 0 || strcmp(a, "--atol") == 0) {
        if (parse_num_arg(a, v, &d) != 0)
            return -1;
        if (a[2] == 'r') {
            o->check.rtol = d;
            o->check.rtol_set = true;
        } else {
            o->check.atol = d;
            o->check.atol_set = true;
        }
    } else
        return 1;
    return 0;
}

static bool takes_value(const char *a)
{
    static const char *const v[] = { "-o", "--out", "--target", "--trace", "--stats-json",
                                     "--inputs", "--max-cycles", "--seed", "--threads",
                                     "--rtol", "--atol", NULL };
    for (int i = 0; v[i]; i++)
        if (strcmp(a, v[i]) == 0)
            return true;
    return false;
}

/* Returns 0 ok, 1 help printed, 2 usage error. */
static int parse_args(int argc, char **argv, run_opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            print_usage(stdout);
            return 1;
        } else if (takes_value(a)) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tpb run: %s needs a value\n", a);
                return 2;
            }
            if (parse_valued(o, a, argv[++i]) != 0)
                return 2;
        } else if (strcmp(a, "--no-trace") == 0) {
            o->no_trace = true;
        } else if (strcmp(a, "--timing-only") == 0) {
            o->timing_only = true;
        } else if (strcmp(a, "--split-all") == 0) {
            o->split_all = true;
        } else if (strcmp(a, "--ignore-cycles") == 0) {
            o->ignore_cycles = true;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->check.quiet = true;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "tpb run: unknown option '%s'\n", a);
            print_usage(stderr);
            return 2;
        } else if (!o->subject) {
            o->subject = a;
        } else {
            fprintf(stderr, "tpb run: more than one kernel or case given ('%s')\n", a);
            return 2;
        }
    }
    if (!o->subject) {
        fprintf(stderr, "tpb run: need a kernel.json or a golden case directory\n");
        print_usage(stderr);
        return 2;
    }
    return 0;
}

/* ---- deterministic inputs for a bare kernel --------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

/* Floats: multiples of 1/8 in [-1, 1] (exact in every float dtype, fp8
 * included); integers: 0..15 (valid in every integer dtype). */
static void fill_input(npy_array_t *a, unsigned dt, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < a->count; i++) {
        uint64_t r = splitmix64(&s);
        if (isa_dtype_kind(dt) == ISA_DK_F)
            ((float *)a->data)[i] = (float)((int)(r % 17) - 8) / 8.0f;
        else if (a->dtype == ISA_DT_UINT8 || a->dtype == ISA_DT_INT8)
            ((uint8_t *)a->data)[i] = (uint8_t)(r % 16);
        else if (a->dtype == ISA_DT_UINT16 || a->dtype == ISA_DT_INT16)
            ((uint16_t *)a->data)[i] = (uint16_t)(r % 16);
        else
            ((uint32_t *)a->data)[i] = (uint32_t)(r % 16);
    }
}

static int generate_one_input(const cJSON *in, const char *dir, uint64_t seed, tpb_err_t *err)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(in, "name");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(in, "shape");
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(in, "dtype");
    if (!cJSON_IsString(name) || !cJSON_IsArray(shape) || !cJSON_IsString(dtype))
        return tpb_errf(err, "inputs[]: need name, shape and dtype");
    int dt = isa_dtype_by_name(dtype->valuestring);
    if (strcmp(dtype->valuestring, "bool") == 0)
        dt = ISA_DT_UINT8;
    if (dt < 0)
        return tpb_errf(err, "input '%s': unknown dtype '%s'", name->valuestring, dtype->valuestring);
    int64_t dims[NPY_MAX_DIMS];
    int nd = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, shape) {
        if (nd >= NPY_MAX_DIMS || !cJSON_IsNumber(d) || d->valuedouble < 0)
            return tpb_errf(err, "input '%s': bad shape", name->valuestring);
        dims[nd++] = (int64_t)d->valuedouble;
    }
    /* bf16/fp8 travel as float32 arrays */
    unsigned file_dt = npy_descr((unsigned)dt) ? (unsigned)dt : ISA_DT_FP32;
    npy_array_t a;
    if (npy_alloc(&a, file_dt, nd, dims, err) != 0)
        return tpb_err_prefix(err, "input '%s'", name->valuestring);
    fill_input(&a, (unsigned)dt, seed ^ hash_name(name->valuestring));
    char file[300], path[GC_PATH_MAX];
    snprintf(file, sizeof file, "%s.npy", name->valuestring);
    int rc = fio_join(path, sizeof path, dir, file, err);
    if (rc == 0)
        rc = npy_write(path, &a, err);
    npy_free(&a);
    return rc;
}

static int generate_inputs(const char *kernel, const char *dir, uint64_t seed, int *count,
                           tpb_err_t *err)
{
    *count = 0;
    cJSON *root;
    if (tpb_json_read_file(kernel, &root, err) != 0)
        return -1;
    int rc = fio_mkdirs(dir, err);
    const cJSON *in;
    cJSON_ArrayForEach(in, cJSON_GetObjectItemCaseSensitive(root, "inputs")) {
        if (rc != 0)
            break;
        rc = generate_one_input(in, dir, seed, err);
        if (rc != 0)
            tpb_err_prefix(err, "%s", kernel);
        else
            (*count)++;
    }
    cJSON_Delete(root);
    return rc;
}

/* ---- stats ------------------------------------------------------------------ */

/* Total simulated cycles from stats.json: top-level "total_cycles" (or
 * "cycles"), else the same key inside "summary". */
static int read_total_cycles(const char *path, uint64_t *cycles, tpb_err_t *err)
{
    cJSON *root;
    if (tpb_json_read_file(path, &root, err) != 0)
        return -1;
    static const char *const keys[] = { "total_cycles", "cycles", NULL };
    const cJSON *objs[2] = { root, cJSON_GetObjectItemCaseSensitive(root, "summary") };
    int rc = tpb_errf(err, "%s: no \"total_cycles\" field", path);
    for (int o = 0; o < 2 && rc != 0; o++)
        for (int k = 0; keys[k] && rc != 0; k++) {
            const cJSON *it = cJSON_GetObjectItemCaseSensitive(objs[o], keys[k]);
            if (cJSON_IsNumber(it) && it->valuedouble >= 0) {
                *cycles = (uint64_t)it->valuedouble;
                rc = 0;
            }
        }
    cJSON_Delete(root);
    return rc;
}

/* ---- planning --------------------------------------------------------------- */

static void default_outdir(const char *name, char *out, size_t len)
{
    snprintf(out, len, "tpb-run/%s", name);
}

static int plan_paths(run_plan_t *p, const run_opts_t *o, tpb_err_t *err)
{
    if (o->outdir)
        snprintf(p->outdir, sizeof p->outdir, "%s", o->outdir);
    else
        default_outdir(p->c.name, p->outdir, sizeof p->outdir);
    if (fio_join(p->artifacts, sizeof p->artifacts, p->outdir, "artifacts", err) != 0 ||
        fio_join(p->trace, sizeof p->trace, p->outdir, "trace.json", err) != 0 ||
        fio_join(p->stats, sizeof p->stats, p->outdir, "stats.json", err) != 0)
        return -1;
    if (o->trace)
        snprintf(p->trace, sizeof p->trace, "%s", o->trace);
    if (o->stats)
        snprintf(p->stats, sizeof p->stats, "%s", o->stats);
    return 0;
}

static void kernel_name_from_path(const char *kernel, char *name, size_t len)
{
    const char *base = strrchr(kernel, '/');
    base = base ? base + 1 : kernel;
    snprintf(name, len, "%s", base);
    char *dot = strrchr(name, '.');
    if (dot && dot != name)
        *dot = 0;
    /* "<dir>/kernel.json": name the run after the directory */
    if (strcmp(name, "kernel") == 0 && base != kernel) {
        char dir[GC_PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", (int)(base - kernel - 1), kernel);
        const char *d = strrchr(dir, '/');
        d = d ? d + 1 : dir;
        size_t n = strlen(d) < len - 1 ? strlen(d) : len - 1;
        memcpy(name, d, n);
        name[n] = 0;
    }
}

static int plan_subject(run_plan_t *p, const run_opts_t *o, tpb_err_t *err)
{
    if (fio_is_dir(o->subject)) {
        if (gc_case_load(o->subject, &p->c, err) != 0)
            return -1;
        p->is_case = true;
        if (!fio_exists(p->c.kernel))
            return tpb_errf(err, "%s: no kernel file (%s)", o->subject, p->c.kernel);
        if (fio_join(p->expected, sizeof p->expected, o->subject, "expected", err) ||
            fio_join(p->inputs, sizeof p->inputs, o->subject, "inputs", err))
            return -1;
        p->has_expected = fio_is_dir(p->expected);
        if (!fio_is_dir(p->inputs))
            p->inputs[0] = 0; /* a kernel without inputs (git keeps no empty dir) */
    } else {
        if (!fio_exists(o->subject))
            return tpb_errf(err, "%s: no such kernel file or case directory", o->subject);
        memset(&p->c, 0, sizeof p->c);
        p->c.lnc = 1;
        gc_tol_default(&p->c.default_tol);
        snprintf(p->c.kernel, sizeof p->c.kernel, "%s", o->subject);
        kernel_name_from_path(o->subject, p->c.name, sizeof p->c.name);
        /* inputs/ next to the kernel file, if there is one */
        const char *slash = strrchr(o->subject, '/');
        char dir[GC_PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - o->subject) : 1,
                 slash ? o->subject : ".");
        if (fio_join(p->inputs, sizeof p->inputs, dir, "inputs", err) != 0)
            return -1;
        if (!fio_is_dir(p->inputs))
            p->inputs[0] = 0;
    }
    if (o->inputs)
        snprintf(p->inputs, sizeof p->inputs, "%s", o->inputs);
    return plan_paths(p, o, err);
}

/* ---- steps -------------------------------------------------------------------- */

#define MAX_ARGS 32

typedef struct {
    int argc;
    char *argv[MAX_ARGS + 1];
} argv_t;

static void arg_push(argv_t *a, const char *s)
{
    if (a->argc < MAX_ARGS)
        a->argv[a->argc++] = (char *)s;
    a->argv[a->argc] = NULL;
}

static void print_cmdline(const argv_t *a)
{
    printf("== tpb");
    for (int i = 0; i < a->argc; i++)
        printf(" %s", a->argv[i]);
    printf("\n");
    fflush(stdout);
}

/* The subcommands may use getopt(); give each a fresh parser state. */
static int call_cmd(int (*fn)(int, char **), argv_t *a, bool quiet)
{
    if (!quiet)
        print_cmdline(a);
    optind = 0;
    int rc = fn(a->argc, a->argv);
    optind = 0;
    fflush(stdout);
    fflush(stderr);
    return rc;
}

static const char *effective_target(const run_plan_t *p, const run_opts_t *o)
{
    if (o->target)
        return o->target;
    return p->c.target[0] ? p->c.target : NULL;
}

static step_t step_compile(const run_plan_t *p, const run_opts_t *o)
{
    argv_t a = { 0 };
    arg_push(&a, "compile");
    arg_push(&a, p->c.kernel);
    arg_push(&a, "-o");
    arg_push(&a, p->artifacts);
    const char *t = effective_target(p, o);
    if (t) {
        arg_push(&a, "--target");
        arg_push(&a, t);
    }
    int rc = call_cmd(tpb_cmd_compile, &a, o->check.quiet);
    if (rc != 0) {
        printf("tpb run: compile failed (exit %d)\n", rc);
        return STEP_FAILED;
    }
    return STEP_OK;
}

static step_t step_sim(const run_plan_t *p, const run_opts_t *o, const char *seed)
{
    argv_t a = { 0 };
    arg_push(&a, "sim");
    arg_push(&a, p->artifacts);
    if (p->inputs[0]) {
        arg_push(&a, "--inputs");
        arg_push(&a, p->inputs);
    }
    arg_push(&a, "-o");
    arg_push(&a, p->outdir);
    arg_push(&a, "--stats-json");
    arg_push(&a, p->stats);
    if (!o->no_trace) {
        arg_push(&a, "--trace");
        arg_push(&a, p->trace);
    }
    const char *t = effective_target(p, o);
    if (t) {
        arg_push(&a, "--target");
        arg_push(&a, t);
    }
    if (o->max_cycles) {
        arg_push(&a, "--max-cycles");
        arg_push(&a, o->max_cycles);
    }
    if (seed) {
        arg_push(&a, "--seed");
        arg_push(&a, seed);
    }
    if (o->threads) {
        arg_push(&a, "--threads");
        arg_push(&a, o->threads);
    }
    if (o->split_all)
        arg_push(&a, "--split-all");
    if (o->timing_only)
        arg_push(&a, "--timing-only");
    if (o->check.quiet)
        arg_push(&a, "--quiet");
    int rc = call_cmd(tpb_cmd_sim, &a, o->check.quiet);
    if (rc != 0) {
        printf("tpb run: simulation failed (exit %d)\n", rc);
        return STEP_FAILED;
    }
    return STEP_OK;
}

/* Cycle summary and range check; returns STEP_FAILED when out of range. */
static step_t step_cycles(const run_plan_t *p, const run_opts_t *o)
{
    uint64_t cycles = 0;
    tpb_err_t err;
    if (read_total_cycles(p->stats, &cycles, &err) != 0) {
        printf("cycles: unknown (%s)\n", err.msg);
        return (p->c.has_cycles && !o->ignore_cycles) ? STEP_FAILED : STEP_OK;
    }
    /* the pinned range belongs to the case's target */
    bool other_target = o->target && p->c.target[0] && strcmp(o->target, p->c.target) != 0;
    if (!p->c.has_cycles || o->ignore_cycles || other_target) {
        if (o->check.quiet)
            return STEP_OK;
        printf("cycles: %" PRIu64 "%s%s%s\n", cycles,
               o->ignore_cycles ? " (range not checked)"
               : other_target   ? " (range not checked: case.json pins it for "
                                : " (no expected range in case.json)",
               other_target && !o->ignore_cycles ? p->c.target : "",
               other_target && !o->ignore_cycles ? ")" : "");
        return STEP_OK;
    }
    bool ok = cycles >= p->c.cycles_min && cycles <= p->c.cycles_max;
    if (ok && o->check.quiet)
        return STEP_OK;
    printf("cycles: %" PRIu64 " %s expected range [%" PRIu64 ", %" PRIu64 "]%s\n", cycles,
           ok ? "within" : "OUTSIDE", p->c.cycles_min, p->c.cycles_max,
           ok ? "" : "  (timing regression? re-bless with scripts/golden.py --bless-cycles)");
    return ok ? STEP_OK : STEP_FAILED;
}

static step_t step_check(const run_plan_t *p, const run_opts_t *o)
{
    gc_check_summary_t sum;
    if (!o->check.quiet)
        printf("== check %s against %s\n", p->outdir, p->expected);
    fflush(stdout);
    int rc = gc_check_dir(stdout, p->outdir, p->expected, &p->c, &o->check, &sum);
    return rc == 0 ? STEP_OK : STEP_FAILED;
}

/* Inputs for a bare kernel without inputs/: generated into <out>/inputs. */
static int prepare_inputs(run_plan_t *p, const char *seed, bool quiet, tpb_err_t *err)
{
    if (p->inputs[0])
        return 0;
    if (fio_join(p->inputs, sizeof p->inputs, p->outdir, "inputs", err) != 0)
        return -1;
    int n;
    uint64_t s = seed ? strtoull(seed, NULL, 10) : 0;
    if (generate_inputs(p->c.kernel, p->inputs, s, &n, err) != 0)
        return -1;
    if (quiet)
        return 0;
    printf("== generated %d input%s into %s (seed %" PRIu64 ")\n", n, n == 1 ? "" : "s",
           p->inputs, s);
    return 0;
}

/* The final verdict; folds in the expected-failure flag. */
static int verdict(const run_plan_t *p, bool failed, const char *what)
{
    const char *name = p->c.name;
    if (p->c.xfail) {
        if (failed) {
            printf("tpb run: %s: XFAIL (%s)\n", name, p->c.xfail_reason);
            return 0;
        }
        printf("tpb run: %s: XPASS: passed although case.json marks it as an expected "
               "failure (%s); remove \"xfail\" from %s/case.json\n", name, p->c.xfail_reason,
               p->c.dir);
        return 1;
    }
    printf("tpb run: %s: %s%s%s\n", name, failed ? "FAIL" : "PASS", what ? " " : "",
           what ? what : "");
    return failed ? 1 : 0;
}

static int run_plan(run_plan_t *p, const run_opts_t *o)
{
    tpb_err_t err;
    char seedbuf[32];
    const char *seed = o->seed;
    if (!seed && p->c.has_seed) {
        snprintf(seedbuf, sizeof seedbuf, "%" PRIu64, p->c.seed);
        seed = seedbuf;
    }
    if (fio_mkdirs(p->outdir, &err) != 0) {
        printf("tpb run: %s\n", err.msg);
        return verdict(p, true, "(cannot create output folder)");
    }
    if (!p->is_case && prepare_inputs(p, seed, o->check.quiet, &err) != 0) {
        printf("tpb run: %s\n", err.msg);
        return verdict(p, true, "(inputs)");
    }
    if (step_compile(p, o) != STEP_OK)
        return verdict(p, true, "(compile)");
    if (step_sim(p, o, seed) != STEP_OK)
        return verdict(p, true, "(simulate)");
    bool cycles_bad = step_cycles(p, o) != STEP_OK;
    if (o->timing_only) {
        printf("values: not checked (--timing-only)\n");
        return verdict(p, cycles_bad, cycles_bad ? "(cycles)" : "(timing only)");
    }
    if (!p->has_expected) {
        printf("tpb run: %s: no golden to check (outputs in %s)\n", p->c.name, p->outdir);
        return cycles_bad ? 1 : 0;
    }
    bool values_bad = step_check(p, o) != STEP_OK;
    return verdict(p, values_bad || cycles_bad,
                   values_bad ? (cycles_bad ? "(values, cycles)" : "(values)")
                              : (cycles_bad ? "(cycles)" : NULL));
}

int tpb_cmd_run(int argc, char **argv)
{
    run_opts_t o;
    memset(&o, 0, sizeof o);
    gc_check_opts_default(&o.check);
    int rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc == 1 ? 0 : 2;
    run_plan_t *p = calloc(1, sizeof *p);
    if (!p) {
        fprintf(stderr, "tpb run: out of memory\n");
        return 1;
    }
    tpb_err_t err;
    if (plan_subject(p, &o, &err) != 0) {
        fprintf(stderr, "tpb run: %s\n", err.msg);
        free(p);
        return 1;
    }
    if (p->c.description[0] && !o.check.quiet)
        printf("== %s: %s\n", p->c.name, p->c.description);
    rc = run_plan(p, &o);
    free(p);
    return rc;
}
