/* mem_budget.h - the memory budget of a compile (docs/reliability.md
 * "Memory budget").
 *
 * A compile holds every unrolled op at once, so a kernel whose loops
 * unroll past what the machine holds must be refused while it unrolls,
 * before the memory is used.  The budget (a byte limit: `tpb compile
 * --max-memory`, tpb_v1_set_max_memory, or three quarters of physical
 * memory) is turned into the front end's op limit, checked again against
 * the parsed kernel (a grid holds all its programs), and split into the
 * op limit the multi-core driver's programs share.  `tpb compile` and
 * libtpb (the Python package) use the same budget and the same messages;
 * only the name of the option that raises it differs. */
#ifndef TPB_MEM_BUDGET_H
#define TPB_MEM_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "tir.h"

typedef struct {
    uint64_t limit;          /* bytes */
    uint64_t per_op;         /* estimated bytes an op costs (a grid's: GRID_BYTES_PER_OP) */
    int64_t front_max_ops;   /* enc_front_opts_t.max_ops for program 0 (0: the default) */
    const char *option;      /* what raises the limit, for messages ("--max-memory") */
    /* set by enc_budget_check */
    bool mc;                 /* the kernel goes through the multi-core driver */
    uint64_t fixed;          /* a grid's programs and tensors, bytes */
    int64_t mc_ops;          /* the op limit the driver's programs share */
} enc_budget_t;

/* Three quarters of physical memory (16 GiB when unknown). */
uint64_t enc_budget_default_limit(void);
/* The budget of max_memory bytes (0: the default); option names what
 * raises it in messages. */
void enc_budget_init(enc_budget_t *b, uint64_t max_memory, const char *option);
/* "1.5 GiB", "256.0 MiB", "8.0 KiB" */
void enc_budget_fmt_bytes(uint64_t bytes, char *buf, size_t n);
/* Program 0 parsed as k: whether the whole compile fits (a grid of
 * several programs, or link: the multi-core driver).  0, with b->mc,
 * b->fixed and b->mc_ops set; -1 with err "<source>: estimated memory ...". */
int enc_budget_check(enc_budget_t *b, const tir_kernel_t *k, bool link, const char *source,
                     tpb_err_t *err);
/* After the parse (after == false) or the multi-core compile (after ==
 * true) failed with message msg: the note that says the op limit came
 * from the budget and how to raise it, or "" when msg is not about the
 * op limit (or the limit was not the budget's). */
void enc_budget_note(const enc_budget_t *b, bool after, const char *msg, char *note, size_t n);

#endif
