/* cli_sim.c - `tpb sim`: run an artifact directory on .npy inputs.
 * Exit codes: 0 success, 1 simulation error (including a malformed
 * artifact), 2 usage or input error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "sim.h"
#include "threads.h"

int tpb_cmd_sim(int argc, char **argv);

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tpb sim <artifact-dir> --inputs <dir | name=file.npy ...> [-o <outdir>] [options]\n"
            "\n"
            "Simulate every core of an artifact directory (docs/artifacts.md) and write each\n"
            "output tensor as <outdir>/<name>.npy.  The outputs of a run (npy files, stats,\n"
            "trace) are one transaction: all are replaced or none (docs/reliability.md).\n"
            "Prints a summary: cycles, per-engine utilisation, instruction classes, semaphore\n"
            "waits, DMA bytes and bandwidth per queue, wall time.\n"
            "\n"
            "options:\n"
            "  --inputs <dir>          read <dir>/<name>.npy for every input tensor\n"
            "  --inputs name=file.npy  one input per argument (several may follow --inputs)\n"
            "  -o, --out <outdir>      directory for the output .npy files (created if needed)\n"
            "  --target <name>         target parameters (%s); default: the tensor map's\n"
            "  --max-cycles <n>        stop with an error beyond n reference cycles\n"
            "                          (default %llu)\n"
            "  --trace <file.json>     write a Chrome/Perfetto trace (docs/trace-format.md)\n"
            "  --stats-json <file>     write the summary as JSON (top-level total_cycles)\n"
            "  --timing-only           skip arithmetic and data movement, keep timing; no\n"
            "                          input is read (--inputs is optional and ignored)\n"
            "  --threads <n>           threads that split one large instruction (matmuls,\n"
            "                          elementwise rows; docs/simulator.md \"Threads\"),\n"
            "                          counting the main one; results and cycles do not\n"
            "                          depend on n;\n"
            "                          default: the online CPUs (%u here), 1 = no threads\n"
            "  --split-all             (testing) split every splittable instruction across\n"
            "                          the --threads, however small\n"
            "  --seed <n>              seed of Memset random / Dropout generators (default 0)\n"
            "  --check-uninit          stop at the first read of never-written SBUF/PSUM/HBM\n"
            "  --fsync                 also survive an OS crash or power loss: fsync every\n"
            "                          output before renaming it into place (slower; by\n"
            "                          default the outputs are all-or-nothing for killed\n"
            "                          and failed runs, docs/reliability.md)\n"
            "  --recover <dir>         only finish or remove what killed runs left in <dir>\n"
            "                          (every run does this for its output directories)\n"
            "  -q, --quiet             no summary on stdout\n"
            "  -h, --help              this help\n"
            "\n"
            "exit status: 0 success, 1 simulation error (bad artifact, bounds violation,\n"
            "deadlock, cycle limit), 2 usage or input error.\n",
            tpb_target_names(), (unsigned long long)SIM_DEFAULT_MAX_CYCLES, sim_online_cpus());
}

typedef struct {
    const char *dir;
    const char *out;
    const char *trace;
    const char *stats;
    const char *inputs_dir;
    const char **input_pairs;
    int npairs;
    bool quiet;
    sim_options_t opt;
} sim_cli_t;

static int parse_u64(const char *opt, const char *v, uint64_t *out)
{
    char *end;
    if (!v || !*v || *v == '-') {
        fprintf(stderr, "tpb sim: %s needs a non-negative integer\n", opt);
        return -1;
    }
    unsigned long long x = strtoull(v, &end, 0);
    if (*end) {
        fprintf(stderr, "tpb sim: %s: '%s' is not an integer\n", opt, v);
        return -1;
    }
    *out = x;
    return 0;
}

/* --threads: 1..SIM_MAX_THREADS */
static int parse_threads(const char *v, unsigned *out)
{
    uint64_t n = 0;
    if (parse_u64("--threads", v, &n))
        return -1;
    if (n < 1 || n > SIM_MAX_THREADS) {
        fprintf(stderr, "tpb sim: --threads must be 1..%u, not %s\n", SIM_MAX_THREADS, v);
        return -1;
    }
    *out = (unsigned)n;
    return 0;
}

static int parse_args(int argc, char **argv, sim_cli_t *c)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(a, "--recover")) {
            if (!next || !fio_is_dir(next)) {
                fprintf(stderr, "tpb sim: --recover needs a directory\n");
                return -1;
            }
            printf("tpb sim: %s: %d leftover(s) of killed runs cleaned up\n", next,
                   tpb_txn_recover_dir(next));
            return 1;
        } else if (!strcmp(a, "--inputs")) {
            if (!next) {
                fprintf(stderr, "tpb sim: --inputs needs a directory or name=file.npy\n");
                return -1;
            }
            while (i + 1 < argc && argv[i + 1][0] != '-') {
                const char *v = argv[++i];
                if (strchr(v, '='))
                    c->input_pairs[c->npairs++] = v;
                else if (c->inputs_dir) {
                    fprintf(stderr, "tpb sim: --inputs: two input directories ('%s', '%s')\n",
                            c->inputs_dir, v);
                    return -1;
                } else
                    c->inputs_dir = v;
            }
        } else if (!strcmp(a, "-o") || !strcmp(a, "--out") || !strcmp(a, "--trace") ||
                   !strcmp(a, "--stats-json") || !strcmp(a, "--target") ||
                   !strcmp(a, "--max-cycles") || !strcmp(a, "--seed") ||
                   !strcmp(a, "--threads")) {
            if (!next) {
                fprintf(stderr, "tpb sim: %s needs a value\n", a);
                return -1;
            }
            i++;
            if (!strcmp(a, "-o") || !strcmp(a, "--out"))
                c->out = next;
            else if (!strcmp(a, "--trace"))
                c->trace = next;
            else if (!strcmp(a, "--stats-json"))
                c->stats = next;
            else if (!strcmp(a, "--target")) {
                c->opt.target = tpb_target_get(next);
                if (!c->opt.target) {
                    fprintf(stderr, "tpb sim: unknown target '%s' (known: %s)\n", next,
                            tpb_target_names());
                    return -1;
                }
            } else if (!strcmp(a, "--max-cycles")) {
                if (parse_u64(a, next, &c->opt.max_cycles) || !c->opt.max_cycles) {
                    if (!c->opt.max_cycles)
                        fprintf(stderr, "tpb sim: --max-cycles must be at least 1\n");
                    return -1;
                }
            } else if (!strcmp(a, "--threads")) {
                if (parse_threads(next, &c->opt.threads))
                    return -1;
            } else if (parse_u64(a, next, &c->opt.seed))
                return -1;
        } else if (!strcmp(a, "--timing-only")) {
            c->opt.timing_only = true;
        } else if (!strcmp(a, "--check-uninit")) {
            c->opt.check_uninit = true;
        } else if (!strcmp(a, "--split-all")) {
            c->opt.split_all = true;
        } else if (!strcmp(a, "--fsync")) {
            c->opt.fsync = true;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            c->quiet = true;
        } else if (a[0] == '-') {
            fprintf(stderr, "tpb sim: unknown option '%s' (see tpb sim --help)\n", a);
            return -1;
        } else if (!c->dir) {
            c->dir = a;
        } else {
            fprintf(stderr, "tpb sim: unexpected argument '%s' (one artifact directory)\n", a);
            return -1;
        }
    }
    if (!c->dir) {
        fprintf(stderr, "tpb sim: missing <artifact-dir> (see tpb sim --help)\n");
        return -1;
    }
    return 0;
}

static int bind_inputs(sim_t *s, const sim_cli_t *c, tpb_err_t *err)
{
    if (c->inputs_dir && !fio_is_dir(c->inputs_dir))
        return tpb_errf(err, "--inputs: %s is not a directory", c->inputs_dir);
    for (int i = 0; i < c->npairs; i++) {
        char name[512];
        const char *eq = strchr(c->input_pairs[i], '=');
        size_t n = (size_t)(eq - c->input_pairs[i]);
        if (n == 0 || n >= sizeof name)
            return tpb_errf(err, "--inputs: '%s' is not name=file.npy", c->input_pairs[i]);
        memcpy(name, c->input_pairs[i], n);
        name[n] = 0;
        if (sim_load_input_file(s, name, eq + 1, err) != 0)
            return tpb_err_prefix(err, "input '%s'", name);
    }
    if (c->inputs_dir) {
        /* pairs override files of the directory: load only what is unbound */
        char missing[2048];
        if (sim_missing_inputs(s, missing, sizeof missing) > 0) {
            char *save = NULL;
            for (char *tok = strtok_r(missing, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
                char path[4400];
                snprintf(path, sizeof path, "%s/%s.npy", c->inputs_dir, tok);
                if (!fio_exists(path))
                    return tpb_errf(err, "input '%s': %s not found", tok, path);
                if (sim_load_input_file(s, tok, path, err) != 0)
                    return -1;
            }
        }
    }
    char missing[1024];
    /* --timing-only reads no data: unbound inputs are fine (the full-size
     * tutorial kernels of scripts/fidelity run without input files) */
    if (!c->opt.timing_only && sim_missing_inputs(s, missing, sizeof missing) > 0)
        return tpb_errf(err, "missing input tensor(s): %s (give --inputs <dir> or name=file.npy)",
                        missing);
    return 0;
}

static void progress(void *user, uint64_t cycles, uint64_t insts)
{
    (void)user;
    fprintf(stderr, "\rtpb sim: cycle %llu, %llu instructions ...", (unsigned long long)cycles,
            (unsigned long long)insts);
    fflush(stderr);
}

static void print_summary(const sim_t *s, FILE *f)
{
    sim_summary_t sum;
    sim_get_summary(s, &sum);
    fprintf(f, "kernel %s on %s, %u core(s)\n", sum.kernel[0] ? sum.kernel : "?", sum.target,
            sum.num_cores);
    fprintf(f, "total: %llu cycles at %.3g GHz = %.3f us simulated\n",
            (unsigned long long)sum.total_cycles, sum.clock_ghz, (double)sum.total_ps / 1e6);
    for (unsigned ci = 0; ci < sum.num_cores; ci++) {
        /* the port column only where the target shares ports (port.c) */
        bool ports = sum.shared_ports;
        fprintf(f, "core %u\n  %-11s %12s %6s %10s %12s %12s%s\n", ci, "engine", "busy_cycles",
                "util", "insts", "sem_wait", "barrier_wait", ports ? "    port_wait" : "");
        for (unsigned k = 0; k < 5; k++) {
            sim_engine_stats_t e;
            sim_get_engine_stats(s, ci, k, &e);
            if (!e.present)
                continue;
            double u = sum.total_cycles ? 100.0 * (double)e.busy_cycles / (double)sum.total_cycles : 0;
            fprintf(f, "  %-11s %12llu %5.1f%% %10llu %12llu %12llu", e.name,
                    (unsigned long long)e.busy_cycles, u, (unsigned long long)e.instructions,
                    (unsigned long long)e.sem_wait_cycles, (unsigned long long)e.barrier_wait_cycles);
            if (ports)
                fprintf(f, " %12llu", (unsigned long long)e.port_wait_cycles);
            fputc('\n', f);
        }
        sim_queue_stats_t q[64];
        unsigned nq = sim_get_queue_stats(s, ci, q, 64);
        if (nq)
            fprintf(f, "  %-20s %12s %9s %12s %10s\n", "dma queue", "bytes", "transfers",
                    "busy_cycles", "GB/s");
        for (unsigned i = 0; i < nq; i++) {
            char name[64];
            snprintf(name, sizeof name, "q%u%s%.40s", q[i].queue, q[i].name ? " " : "",
                     q[i].name ? q[i].name : "");
            double ns = (double)q[i].busy_cycles / sum.clock_ghz;
            fprintf(f, "  %-20s %12llu %9llu %12llu %10.2f\n", name, (unsigned long long)q[i].bytes,
                    (unsigned long long)q[i].transfers, (unsigned long long)q[i].busy_cycles,
                    ns > 0 ? (double)q[i].bytes / ns : 0.0);
        }
    }
    fprintf(f, "instructions: %llu (", (unsigned long long)sum.instructions);
    for (unsigned c = 0, first = 1; c < ISA_CLASS_COUNT; c++) {
        if (c == ISA_CLASS_PREFIX)
            continue;
        fprintf(f, "%s%s %llu", first ? "" : ", ", isa_class_name((isa_class_t)c),
                (unsigned long long)sum.by_class[c]);
        first = 0;
    }
    fprintf(f, ")\n");
    fprintf(f, "wall: %.3f s, %.2f M simulated instructions/s\n", sum.wall_seconds,
            sum.wall_seconds > 0 ? (double)sum.instructions / sum.wall_seconds / 1e6 : 0.0);
}

/* Every output of the run as one transaction (common/txn.h): the .npy
 * outputs (only after a successful run), the stats and the trace (also
 * after a failed run: they describe the failure).  Nothing is replaced
 * unless every file was written; a directory -o created is removed again. */
static int write_run_outputs(const sim_t *s, const sim_cli_t *c, bool ok, tpb_err_t *err)
{
    tpb_txn_t txn;
    tpb_txn_init(&txn);
    txn.durable = c->opt.fsync;
    bool made_out = false;
    const char *stage;
    int rc = 0;
    if (ok && c->out) {
        made_out = !fio_exists(c->out);
        rc = sim_stage_outputs(s, c->out, &txn, err);
    }
    if (!rc && c->stats)
        rc = tpb_txn_stage(&txn, c->stats, &stage, err) || sim_write_stats_json(s, stage, err);
    if (!rc && c->trace)
        rc = tpb_txn_stage(&txn, c->trace, &stage, err) || sim_write_trace(s, stage, err);
    if (rc) {
        tpb_txn_fix_msg(&txn, err);
        tpb_txn_abort(&txn);
    } else {
        rc = tpb_txn_commit(&txn, err);
    }
    if (rc && made_out)
        rmdir(c->out);
    return rc ? -1 : 0;
}

int tpb_cmd_sim(int argc, char **argv)
{
    sim_cli_t c;
    memset(&c, 0, sizeof c);
    sim_options_default(&c.opt);
    c.opt.threads = sim_online_cpus();
    c.input_pairs = calloc((size_t)argc + 1, sizeof *c.input_pairs);
    if (!c.input_pairs)
        return 1;
    int pr = parse_args(argc, argv, &c);
    if (pr != 0) {
        free(c.input_pairs);
        return pr > 0 ? 0 : 2;
    }
    int rc = 0;
    tpb_err_t err = { { 0 } };
    sim_t *s = NULL;
    c.opt.trace = c.trace != NULL;
    bool tty = isatty(fileno(stderr));
    if (tty) {
        c.opt.progress = progress;
    }
    if (!fio_is_dir(c.dir)) {
        fprintf(stderr, "tpb sim: %s: not an artifact directory\n", c.dir);
        rc = 2;
    } else if (sim_load(c.dir, &c.opt, &s, &err) != 0) {
        fprintf(stderr, "tpb sim: %s\n", err.msg);
        rc = 1;
    } else if (!c.opt.timing_only && bind_inputs(s, &c, &err) != 0) {
        /* (--timing-only reads no input: values never affect timing) */
        fprintf(stderr, "tpb sim: %s\n", err.msg);
        rc = 2;
    } else {
        int run = sim_run(s, &err);
        if (tty && s)
            fprintf(stderr, "\r\033[K");
        if (run != 0) {
            fprintf(stderr, "tpb sim: error: %s\n", err.msg);
            rc = 1;
        }
    }
    if (s && (rc == 0 || rc == 1) && write_run_outputs(s, &c, rc == 0, &err) != 0) {
        fprintf(stderr, "tpb sim: %s\n", err.msg);
        rc = rc ? rc : 1;
    }
    if (rc == 0 && s) {
        sim_device_prints(s, stdout);
        for (unsigned i = 0; sim_warning(s, i); i++)
            fprintf(stderr, "tpb sim: warning: %s\n", sim_warning(s, i));
        if (!c.quiet) {
            print_summary(s, stdout);
            if (!c.out)
                printf("(no -o given: outputs not written)\n");
        }
    }
    sim_free(s);
    free(c.input_pairs);
    return rc;
}
