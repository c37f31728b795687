/* cli_compile.c - `tpb compile kernel.json -o <out>`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"

#if defined(__has_include)
#if __has_include("frontend.h")
#include "frontend.h"
#include "lnc.h"
#define HAVE_FRONTEND 1
#endif
#endif

int tpb_cmd_compile(int argc, char **argv);

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tpb compile KERNEL.json -o OUTDIR [options]\n"
            "\n"
            "Compile a kernel file (docs/kernel-format.md) into an artifact directory\n"
            "(docs/artifacts.md): OUTDIR/tensor-map.json and OUTDIR/nc0/sg0/ with one\n"
            "<Engine>.bin + <Engine>.json per engine used, def.json and constants.\n"
            "The directory is built beside OUTDIR and renamed into place; on an error\n"
            "nothing is left behind.  A kernel whose grid has several programs is split\n"
            "per core, compiled per core and linked: OUTDIR/nc<c>/sg0/ per core plus\n"
            "OUTDIR/sgLnk/ (docs/multicore.md).\n"
            "\n"
            "options:\n"
            "  -o, --out DIR          artifact directory to write (required in the\n"
            "                         default mode)\n"
            "  --target NAME          target description (%s); default: the\n"
            "                         kernel's \"target\", else trn2\n"
            "  --mode MODE            CodeGenMode: run-isa-checks (1, default: write the\n"
            "                         artifacts and check every bundle), generate-isacode\n"
            "                         (2: build and validate every bundle, write nothing),\n"
            "                         collect-opcodes (0: print the opcodes each engine\n"
            "                         uses, write nothing)\n"
            "  --enable-ldw-opt       drop an LdWeights that reloads the weights PE holds\n"
            "  --dump-bin-per-inst    also write <Engine>.<24-digit seq>.<name>.bin per\n"
            "                         instruction into the core directory\n"
            "  --link                 compile a one-program kernel through the multi-core\n"
            "                         split/link too (LNC=1: a one-call dispatcher and\n"
            "                         OUTDIR/sgLnk/; see docs/multicore.md)\n"
            "  --buffers N            at most N rotating buffers per tile declared in a\n"
            "                         loop body (default: up to 4 in SBUF, 8 in PSUM, as\n"
            "                         many as fit; 1 = none; docs/compiler.md)\n"
            "  --stats                print per-engine instruction counts, the opcode\n"
            "                         histogram, memory peaks and the sync summary\n"
            "  -h, --help             this text\n"
            "\n"
            "exit status: 0 ok, 1 compile error, 2 usage error\n",
            tpb_target_names());
}

static int parse_mode(const char *s, int *mode)
{
    if (!strcmp(s, "collect-opcodes") || !strcmp(s, "COLLECT_OPCODES"))
        *mode = ENC_COLLECT_OPCODES;
    else if (!strcmp(s, "run-isa-checks") || !strcmp(s, "RUN_ISA_CHECKS"))
        *mode = ENC_RUN_ISA_CHECKS;
    else if (!strcmp(s, "generate-isacode") || !strcmp(s, "GENERATE_ISACODE"))
        *mode = ENC_GENERATE_ISACODE;
    else {
        char *end;
        long v = strtol(s, &end, 10);
        if (*s == 0 || *end)
            return -1;
        *mode = (int)v;   /* numeric: validated by enc_check_mode */
    }
    return 0;
}

static void print_opcode_set(FILE *f, const uint32_t set[8])
{
    bool first = true;
    for (unsigned v = 0; v < 256; v++) {
        if (!(set[v >> 5] >> (v & 31) & 1u))
            continue;
        const isa_opinfo_t *oi = isa_op_by_l2((uint8_t)v);
        fprintf(f, "%s%s(0x%02x)", first ? "" : " ", oi ? oi->mnemonic : "?", v);
        first = false;
    }
}

static void print_stats(const enc_stats_t *st, bool histogram)
{
    printf("engine       bundles\n");
    for (int i = 0; i < 5; i++) {
        isa_engine_t e = isa_tpb_engines[i];
        if (st->insts[e])
            printf("%-12s %u\n", isa_engine_name(e), st->insts[e]);
    }
    if (histogram) {
        printf("opcode                      count\n");
        for (unsigned v = 0; v < 256; v++)
            if (st->histogram[v]) {
                const isa_opinfo_t *oi = isa_op_by_l2((uint8_t)v);
                printf("%-22s 0x%02x %u\n", oi ? oi->mnemonic : "?", v, st->histogram[v]);
            }
    }
    printf("semaphores %u, queues %u, waits %u, wait nops %u\n", st->sems, st->queues, st->waits,
           st->nops);
    printf("SBUF peak %llu B/partition, PSUM peak %llu B/partition, HBM %llu B\n",
           (unsigned long long)st->sbuf_peak, (unsigned long long)st->psum_peak,
           (unsigned long long)st->hbm_bytes);
    printf("rotating buffers: SBUF %u, PSUM %u\n", st->sbuf_buffers, st->psum_buffers);
}

int tpb_cmd_compile(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *target = NULL;
    int mode = ENC_RUN_ISA_CHECKS;
    bool dump = false, stats = false, link = false, ldw_opt = false;
    int buffers = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--out") || !strcmp(a, "--target") ||
                   !strcmp(a, "--mode") || !strcmp(a, "--buffers")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tpb compile: %s needs a value\n", a);
                return 2;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--target"))
                target = v;
            else if (!strcmp(a, "--buffers")) {
                char *end = NULL;
                long n = strtol(v, &end, 10);
                if (!*v || *end || n < 1 || n > 64) {
                    fprintf(stderr, "tpb compile: --buffers %s: expected an integer 1..64 (1 = no "
                                    "rotating buffers)\n", v);
                    return 2;
                }
                buffers = (int)n;
            }
            else if (!strcmp(a, "--mode")) {
                if (parse_mode(v, &mode)) {
                    fprintf(stderr, "tpb compile: --mode %s: Wrong CodeGenMode. It must be one of "
                                    "GENERATE_ISACODE, RUN_ISA_CHECKS, or COLLECT_OPCODES\n", v);
                    return 2;
                }
            } else
                out = v;
        } else if (!strcmp(a, "--dump-bin-per-inst")) {
            dump = true;
        } else if (!strcmp(a, "--enable-ldw-opt")) {
            ldw_opt = true;
        } else if (!strcmp(a, "--stats")) {
            stats = true;
        } else if (!strcmp(a, "--link")) {
            link = true;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "tpb compile: unknown option '%s' (see tpb compile --help)\n", a);
            return 2;
        } else if (!in) {
            in = a;
        } else {
            fprintf(stderr, "tpb compile: more than one kernel file ('%s', '%s')\n", in, a);
            return 2;
        }
    }
    tpb_err_t err = {{0}};
    if (enc_check_mode(mode, &err)) {
        fprintf(stderr, "tpb compile: %s\n", err.msg);
        return 2;
    }
    if (!in) {
        fprintf(stderr, "tpb compile: no kernel file given (see tpb compile --help)\n");
        return 2;
    }
    if (mode == ENC_RUN_ISA_CHECKS && !out) {
        fprintf(stderr, "tpb compile: -o OUTDIR is required\n");
        return 2;
    }
    if (target && !tpb_target_get(target)) {
        fprintf(stderr, "tpb compile: unknown target '%s' (known: %s)\n", target,
                tpb_target_names());
        return 2;
    }
#ifdef HAVE_FRONTEND
    tir_kernel_t k;
    if (enc_parse_kernel_file(in, target, 0, &k, &err)) {
        fprintf(stderr, "tpb compile: %s\n", err.msg);
        tir_kernel_free(&k);
        return 1;
    }
    enc_options_t o = {.out_dir = out, .target = target, .mode = mode, .dump_bin_per_inst = dump,
                       .buffers = buffers, .enable_ldw_opt = ldw_opt};
    enc_stats_t st;
    memset(&st, 0, sizeof st);
    /* a grid of several programs goes through the multi-core split/link */
    int rc = k.num_programs > 1 || link ? enc_compile_mc(in, &o, &st, &err) : enc_compile(&k, &o, &st, &err);
    tir_kernel_free(&k);
    if (rc) {
        fprintf(stderr, "tpb compile: %s: %s\n", in, err.msg);
        return 1;
    }
    if (mode == ENC_COLLECT_OPCODES) {
        for (int i = 0; i < 5; i++) {
            isa_engine_t e = isa_tpb_engines[i];
            bool any = false;
            for (int w = 0; w < 8; w++)
                any |= st.engine_opcodes[e][w] != 0;
            if (!any)
                continue;
            printf("%-12s ", isa_engine_name(e));
            print_opcode_set(stdout, st.engine_opcodes[e]);
            printf("\n");
        }
    } else if (mode == ENC_GENERATE_ISACODE) {
        printf("%s: every bundle built and validated (nothing written)\n", in);
    }
    if (stats)
        print_stats(&st, mode != ENC_COLLECT_OPCODES);
    return 0;
#else
    (void)dump;
    (void)link;
    (void)stats;
    (void)print_stats;
    (void)print_opcode_set;
    fprintf(stderr, "tpb compile: %s: the kernel-file front-end is not built into this tpb yet\n",
            in);
    return 1;
#endif
}
