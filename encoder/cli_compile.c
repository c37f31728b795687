/* cli_compile.c - `tpb compile kernel.json -o <out>`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bir.h"
#include "compile.h"
#include "hugepage.h"

#if defined(__has_include)
#if __has_include("frontend.h")
#include "frontend.h"
#include "lnc.h"
#include "mem_budget.h"
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
            "  --loops                emit rolled loops (registers and a back branch) for\n"
            "                         sequential_range loops and long loops, instead of\n"
            "                         unrolling them (docs/compiler.md \"Rolled loops\")\n"
            "  --dump-bin-per-inst    also write <Engine>.<24-digit seq>.<name>.bin per\n"
            "                         instruction into the core directory\n"
            "  --link                 compile a one-program kernel through the multi-core\n"
            "                         split/link too (LNC=1: a one-call dispatcher and\n"
            "                         OUTDIR/sgLnk/; see docs/multicore.md)\n"
            "  --dma-desc-reuse       multi-core: the instances of one module definition\n"
            "                         share its DMA descriptors (funcArgs in registers,\n"
            "                         set by the dispatcher; docs/multicore.md)\n"
            "  --buffers N            at most N rotating buffers per tile declared in a\n"
            "                         loop body (default: up to 4 in SBUF, 8 in PSUM, as\n"
            "                         many as fit; 1 = none; docs/compiler.md)\n"
            "  --sbuf-limit SIZE      let the allocator use at most SIZE bytes of each\n"
            "                         SBUF partition (K suffix allowed; for tests: forces\n"
            "                         spilling, docs/compiler.md \"SBUF spilling\")\n"
            "  --max-memory SIZE      refuse a kernel whose compile is estimated to need\n"
            "                         more than SIZE bytes (K/M/G suffixes; default 3/4\n"
            "                         of physical memory; docs/reliability.md)\n"
            "  --fsync                also survive an OS crash or power loss: fsync every\n"
            "                         artifact before the directory is renamed into place\n"
            "                         (slower; by default the directory appears whole or\n"
            "                         not at all for killed and failed compiles,\n"
            "                         docs/reliability.md)\n"
            "  --stats                print per-engine instruction counts, the opcode\n"
            "                         histogram, memory peaks, the sync summary and\n"
            "                         the compiler's own memory (heap reserve, peak)\n"
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

/* This process's peak resident memory in KiB, or 0 where unknown.  VmHWM
 * belongs to the address space exec created, so unlike getrusage()'s
 * ru_maxrss it does not include the pages of the parent the process was
 * forked from (a large benchmark driver, say). */
static unsigned long long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

static void print_stats(const enc_stats_t *st, bool histogram, bool heap_reserved,
                        size_t small_head, size_t spare_reused)
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
    if (st->spills)
        printf("spilling: %u tiles spilled, %u saves, %u reloads; spill_save_bytes %llu, "
               "spill_reload_bytes %llu\n", st->spills, st->spill_saves, st->spill_reloads,
               (unsigned long long)st->spill_save_bytes,
               (unsigned long long)st->spill_reload_bytes);
    if (st->rolled || st->roll_failed)
        printf("rolled loops: %u rolled, %u left unrolled%s%s%s\n", st->rolled, st->roll_failed,
               st->roll_note[0] ? " (first: " : "", st->roll_note, st->roll_note[0] ? ")" : "");
    if (heap_reserved && small_head)
        printf("heap reserve %zu KiB in huge pages after %zu KiB in 4 KiB pages\n",
               TPB_HEAP_RESERVE >> 10, small_head >> 10);
    else if (heap_reserved)
        printf("heap reserve %zu KiB in huge pages\n", TPB_HEAP_RESERVE >> 10);
    if (spare_reused)
        printf("freed mappings reused %zu KiB\n", spare_reused >> 10);
    unsigned long long kib = peak_rss_kib();
    if (kib)
        printf("peak memory %llu KiB\n", kib);
}

/* Take the malloc heap reserve (common/hugepage.h), before anything is
 * malloc'ed; whether it was taken, and in *small_head the bytes of small
 * pages before its huge ones.  Every compile takes it: even a one-op
 * kernel touches ~25 pages of small heap blocks (the target, the name and
 * operand tables, the artifact writers), a 100-op flat body ~100, and a
 * 4 KiB fault costs ~1-11 us here (docs/performance-log.md "Start-up: the
 * heap reserve for every compile").  A kernel text under TPB_SMALL_TEXT
 * gets a small-page head of TPB_HEAP_SMALL_HEAD: the examples and golden
 * cases touch 0.2-1 MiB of heap, in 50-70 small pages, where the first
 * huge page cost a clear of 2 MiB (a loop that unrolls to 10^5 ops pays
 * ~256 small faults more, ~0.3 % of its compile); a larger text grows
 * past the head, which would only add faults ("Fixed cost of a small
 * compile").  stat() does not malloc. */
static bool reserve_heap(const char *in, size_t *small_head)
{
    struct stat st;
    *small_head = stat(in, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size < TPB_SMALL_TEXT
                  ? TPB_HEAP_SMALL_HEAD : 0;
    if (tpb_heap_reserve(TPB_HEAP_RESERVE, *small_head))
        return true;
    *small_head = 0;
    return false;
}

static int parse_size(const char *v, uint64_t *out)
{
    char *end;
    if (!v || *v < '0' || *v > '9')
        return -1;
    double x = strtod(v, &end);
    uint64_t m = 1;
    if (*end == 'K' || *end == 'k')
        m = 1ull << 10;
    else if (*end == 'M' || *end == 'm')
        m = 1ull << 20;
    else if (*end == 'G' || *end == 'g')
        m = 1ull << 30;
    else if (*end == 'T' || *end == 't')
        m = 1ull << 40;
    if (m > 1)
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || x <= 0 || x * (double)m > 1e18)
        return -1;
    *out = (uint64_t)(x * (double)m);
    return 0;
}

int tpb_cmd_compile(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *target = NULL;
    int mode = ENC_RUN_ISA_CHECKS;
    bool dump = false, stats = false, link = false, ldw_opt = false, loops = false;
    bool desc_reuse = false, durable = false;
    int buffers = 0;
    uint64_t max_memory = 0, sbuf_limit = 0;
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
        } else if (!strcmp(a, "--max-memory")) {
            if (i + 1 >= argc || parse_size(argv[i + 1], &max_memory)) {
                fprintf(stderr, "tpb compile: --max-memory needs a size in bytes (e.g. 8G, 512M), "
                                "got '%s'\n", i + 1 < argc ? argv[i + 1] : "");
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--sbuf-limit")) {
            if (i + 1 >= argc || parse_size(argv[i + 1], &sbuf_limit) || sbuf_limit == 0 ||
                sbuf_limit > UINT32_MAX) {
                fprintf(stderr, "tpb compile: --sbuf-limit needs a size in bytes per partition "
                                "(e.g. 64K), got '%s'\n", i + 1 < argc ? argv[i + 1] : "");
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--dump-bin-per-inst")) {
            dump = true;
        } else if (!strcmp(a, "--enable-ldw-opt")) {
            ldw_opt = true;
        } else if (!strcmp(a, "--loops")) {
            loops = true;
        } else if (!strcmp(a, "--stats")) {
            stats = true;
        } else if (!strcmp(a, "--link")) {
            link = true;
        } else if (!strcmp(a, "--dma-desc-reuse")) {
            desc_reuse = true;
        } else if (!strcmp(a, "--fsync")) {
            durable = true;
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
    size_t small_head;
    bool heap_reserved = reserve_heap(in, &small_head);
    tpb_stack_prefault(TPB_STACK_PREFAULT);
    tir_kernel_t k;
    enc_budget_t budget;
    enc_budget_init(&budget, max_memory, "--max-memory");
    /* one compile, one thread: what a phase frees, the next one reuses */
    tpb_spare_t spare;
    memset(&spare, 0, sizeof spare);
    enc_front_opts_t fo;
    memset(&fo, 0, sizeof fo);
    fo.target_override = target;
    fo.spare = &spare;
    fo.max_ops = budget.front_max_ops;
    char note[512];
    if (enc_parse_kernel_file_opts(in, &fo, &k, &err)) {
        fprintf(stderr, "tpb compile: %s\n", err.msg);
        enc_budget_note(&budget, false, err.msg, note, sizeof note);
        if (note[0])
            fprintf(stderr, "tpb compile: note: %s\n", note);
        tir_kernel_free(&k);
        tpb_spare_release(&spare);
        return 1;
    }
    if (enc_budget_check(&budget, &k, link, in, &err)) {
        fprintf(stderr, "tpb compile: %s\n", err.msg);
        tir_kernel_free(&k);
        tpb_spare_release(&spare);
        return 1;
    }
    enc_options_t o = {.out_dir = out, .target = target, .mode = mode, .dump_bin_per_inst = dump,
                       .buffers = buffers, .enable_ldw_opt = ldw_opt, .loops = loops,
                       .dma_desc_reuse = desc_reuse, .fsync = durable,
                       .sbuf_limit = sbuf_limit, .spare = &spare};
    enc_stats_t st;
    memset(&st, 0, sizeof st);
    /* a grid of several programs goes through the multi-core split/link,
     * its programs sharing budget.mc_ops while they unroll */
    int rc = budget.mc ? enc_compile_mc_limit(in, &o, budget.mc_ops, &st, &err)
                       : enc_compile_release(&k, &o, &st, &err);
    tir_kernel_free(&k);
    tpb_spare_release(&spare);
    if (rc) {
        fprintf(stderr, "tpb compile: %s: %s\n", in, err.msg);
        enc_budget_note(&budget, true, err.msg, note, sizeof note);
        if (note[0])
            fprintf(stderr, "tpb compile: note: %s\n", note);
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
        print_stats(&st, mode != ENC_COLLECT_OPCODES, heap_reserved, small_head, spare.reused);
    return 0;
#else
    (void)dump;
    (void)link;
    (void)stats;
    (void)print_stats;
    (void)print_opcode_set;
    (void)reserve_heap;
    fprintf(stderr, "tpb compile: %s: the kernel-file front-end is not built into this tpb yet\n",
            in);
    return 1;
#endif
}
