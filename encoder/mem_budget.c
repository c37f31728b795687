/* mem_budget.c - the memory budget of a compile (mem_budget.h). */
#include "mem_budget.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bir.h"
#include "fj.h"
#include "frontend.h"

/* A compile holds every unrolled op (tir_op_t), about two backend
 * instructions per op (bir_inst_t) and the text of the sidecars and
 * streams (~512 B per op, measured on the golden kernels).  The estimate
 * is per op, so the front-end's op limit enforces it while unrolling,
 * before the memory is used. */
static uint64_t bytes_per_op(void)
{
    return (uint64_t)sizeof(tir_op_t) + 2 * (uint64_t)sizeof(bir_inst_t) + 512;
}

/* What each program of a grid holds besides its ops (all are held at once
 * by the multi-core driver): its ops and tensors arrays, which start at 64
 * elements (tir.c), its tir_kernel_t and its share of the split, the link
 * and the stream text (~8 KiB).  Measured: 38 KB per program for a 3-op
 * kernel at grid [16384] on x86-64, 3.4 KB of them its ops. */
static uint64_t bytes_per_program(void)
{
    return 64 * ((uint64_t)sizeof(tir_op_t) + sizeof(tir_tensor_t)) + sizeof(tir_kernel_t) + 8192;
}

/* An op of a grid costs more: the multi-core driver holds it in its
 * program, again in its core's kernel after the split, in the core's
 * backend and in the linked module.  Measured on x86-64: a grid [2] of
 * 100 000 relu ops a program takes 775 MB (3.9 KB an op), of 20 000 ops
 * 167 MB; a single program of 200 000 such ops 91 MB. */
#define GRID_BYTES_PER_OP 4096u

/* Each declared tensor, once per program: its record and names (measured
 * 127 bytes a tensor and program at grid [16384]). */
static uint64_t bytes_per_tensor(void)
{
    return (uint64_t)sizeof(tir_tensor_t) + 32;
}

uint64_t enc_budget_default_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psz <= 0)
        return 16ull << 30;
    return (uint64_t)pages / 4 * 3 * (uint64_t)psz;
}

void enc_budget_fmt_bytes(uint64_t b, char *buf, size_t n)
{
    if (b >= 1ull << 30)
        snprintf(buf, n, "%.1f GiB", (double)b / (double)(1ull << 30));
    else if (b >= 1ull << 20)
        snprintf(buf, n, "%.1f MiB", (double)b / (double)(1ull << 20));
    else
        snprintf(buf, n, "%.1f KiB", (double)b / 1024.0);
}

void enc_budget_init(enc_budget_t *b, uint64_t max_memory, const char *option)
{
    memset(b, 0, sizeof *b);
    b->limit = max_memory ? max_memory : enc_budget_default_limit();
    b->per_op = bytes_per_op();
    b->option = option;
    uint64_t ops = b->limit / b->per_op;
    /* 0 = the front end's default, which is the smaller one here */
    b->front_max_ops = ops < (uint64_t)ENC_DEFAULT_MAX_OPS ? (int64_t)ops : 0;
    if (b->front_max_ops == 0 && ops < 1)
        b->front_max_ops = 1;
}

int enc_budget_check(enc_budget_t *b, const tir_kernel_t *k, bool link, const char *source,
                     tpb_err_t *err)
{
    /* a grid: every program's fixed part (the tensors are the same in all
     * of them), then the ops, counted from program 0 here and shared by
     * all programs while they unroll (enc_compile_mc_limit) */
    uint64_t np = k->num_programs > 1 ? (uint64_t)k->num_programs : 1;
    b->mc = np > 1 || link;
    b->fixed = np > 1 ? np * (bytes_per_program() + (uint64_t)k->ntensors * bytes_per_tensor()) : 0;
    if (b->mc)
        b->per_op = GRID_BYTES_PER_OP;
    uint64_t est = b->fixed + (uint64_t)k->nops * b->per_op * np;
    if (est > b->limit) {
        char lim_s[32], est_s[32];
        enc_budget_fmt_bytes(b->limit, lim_s, sizeof lim_s);
        enc_budget_fmt_bytes(est, est_s, sizeof est_s);
        if (np > 1)
            return tpb_errf(err, "%s: estimated memory %s (%llu programs x (%d ops x %llu bytes "
                                 "+ %llu bytes for the program and its %d tensors)) exceeds the "
                                 "limit of %s; give a larger %s to try anyway",
                            source, est_s, (unsigned long long)np, k->nops,
                            (unsigned long long)b->per_op, (unsigned long long)(b->fixed / np),
                            k->ntensors, lim_s, b->option);
        return tpb_errf(err, "%s: estimated memory %s (%llu ops x %llu bytes) exceeds the limit "
                             "of %s; give a larger %s to try anyway",
                        source, est_s, (unsigned long long)k->nops,
                        (unsigned long long)b->per_op, lim_s, b->option);
    }
    b->mc_ops = b->limit > b->fixed ? (int64_t)((b->limit - b->fixed) / b->per_op) : 0;
    if (b->mc_ops < 1)
        b->mc_ops = 1;
    return 0;
}

void enc_budget_note(const enc_budget_t *b, bool after, const char *msg, char *note, size_t n)
{
    char lim_s[32], fixed_s[32];
    note[0] = 0;
    enc_budget_fmt_bytes(b->limit, lim_s, sizeof lim_s);
    if (!after) {
        if (!b->front_max_ops)
            return;
        /* the unrolling guards: the op limit, and the loop-iteration
         * limit the front end derives from it (fj_loops.c) */
        if (strstr(msg, "loop iterations"))
            snprintf(note, n, "the loop-iteration limit of %lld (%d x the op limit of %lld) comes "
                              "from the memory limit of %s (estimated %llu bytes per op); give a "
                              "larger %s",
                     (long long)b->front_max_ops * MAX_LOOP_ITERATIONS_FACTOR,
                     MAX_LOOP_ITERATIONS_FACTOR, (long long)b->front_max_ops, lim_s,
                     (unsigned long long)b->per_op, b->option);
        else if (strstr(msg, "ops"))
            snprintf(note, n, "the op limit of %lld comes from the memory limit of %s (estimated "
                              "%llu bytes per op); give a larger %s",
                     (long long)b->front_max_ops, lim_s, (unsigned long long)b->per_op, b->option);
        return;
    }
    if (b->mc && strstr(msg, "op limit")) {
        enc_budget_fmt_bytes(b->fixed, fixed_s, sizeof fixed_s);
        snprintf(note, n, "the op limit of %lld comes from the memory limit of %s less %s for the "
                          "programs and their tensors (estimated %llu bytes per op); give a larger %s",
                 (long long)b->mc_ops, lim_s, fixed_s, (unsigned long long)b->per_op, b->option);
    }
}
