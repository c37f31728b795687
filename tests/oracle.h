/* oracle.h - "every kernel that compiles simulates without an instruction
 * field refusal" (docs/reliability.md "Compile-and-simulate oracle"), shared
 * by the fuzz_kernel_sim harness and test_oracle_sweep.  The compiler
 * validates its tile IR but not every field of the instructions it emits;
 * the simulator checks each instruction's fields when it executes it.  So a
 * compiled kernel runs with zero inputs and a small cycle limit, and only a
 * refusal the program text alone decides (sim_error_class SIM_ERR_FIELD)
 * counts: values (an index out of range), the cycle limit and deadlocks are
 * the kernel's own. */
#ifndef TPB_TEST_ORACLE_H
#define TPB_TEST_ORACLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "fileio.h"
#include "frontend.h"
#include "lnc.h"
#include "sim.h"

typedef enum {
    ORC_COMPILE_ERROR = 0, /* refused by the compiler (err: its message) */
    ORC_OK,                /* compiled and ran to the end */
    ORC_RUN_ERROR,         /* compiled; the run stopped on values, cycles, a deadlock */
    ORC_FIELD_ERROR,       /* compiled; the simulator refused an instruction's fields */
    ORC_SKIPPED,           /* orc_check_kernel: a launch grid of more than one program */
} orc_result_t;

static inline const char *orc_result_name(orc_result_t r)
{
    static const char *const n[] = { "compile-error", "ok", "run-error", "FIELD-ERROR",
                                     "skipped" };
    return n[r];
}

/* Simulate the artifact in dir with zero inputs for at most max_cycles,
 * remove dir.  timing_only (sim_options_t): every instruction's fields are
 * still checked, the arithmetic is skipped (the fuzz harness under ASan: a
 * 512 x 512 matmul would take seconds), and so are the value checks. */
static inline orc_result_t orc_simulate(const char *dir, uint64_t max_cycles, bool timing_only,
                                        tpb_err_t *err)
{
    sim_options_t so;
    sim_options_default(&so);
    so.max_cycles = max_cycles;
    so.timing_only = timing_only;
    sim_t *s = NULL;
    orc_result_t r;
    if (sim_load(dir, &so, &s, err) != 0) {
        r = ORC_FIELD_ERROR;   /* the compiler's own artifact does not load */
    } else {
        sim_bind_zero_inputs(s);
        if (sim_run(s, err) == 0)
            r = ORC_OK;
        else
            r = sim_error_class(s) == SIM_ERR_FIELD ? ORC_FIELD_ERROR : ORC_RUN_ERROR;
    }
    sim_free(s);
    fio_rmtree(dir);
    return r;
}

/* Compile a one-program kernel k into dir (replaced) and simulate it
 * (orc_simulate).  err gets the compile or simulation message.  base:
 * compile options to start from (--sbuf-limit, --loops), or NULL. */
static inline orc_result_t orc_check_kernel_opts(const tir_kernel_t *k, const char *dir,
                                                 uint64_t max_cycles, bool timing_only,
                                                 const enc_options_t *base, tpb_err_t *err)
{
    err->msg[0] = 0;
    if (k->num_programs > 1)
        return ORC_SKIPPED;
    enc_options_t o;
    if (base)
        o = *base;
    else
        memset(&o, 0, sizeof o);
    o.mode = ENC_RUN_ISA_CHECKS;
    o.out_dir = dir;
    if (enc_compile(k, &o, NULL, err) != 0) {
        fio_rmtree(dir);
        return ORC_COMPILE_ERROR;
    }
    return orc_simulate(dir, max_cycles, timing_only, err);
}

static inline orc_result_t orc_check_kernel(const tir_kernel_t *k, const char *dir,
                                            uint64_t max_cycles, bool timing_only,
                                            tpb_err_t *err)
{
    return orc_check_kernel_opts(k, dir, max_cycles, timing_only, NULL, err);
}

/* The same from kernel JSON text (constant files resolved in base_dir); a
 * launch grid of several programs is compiled by the multi-core driver
 * from the text written to <dir>.json. */
static inline orc_result_t orc_check_text_opts(const char *text, size_t len, const char *source,
                                               const char *base_dir, int64_t max_ops,
                                               const char *dir, uint64_t max_cycles,
                                               const enc_options_t *base, tpb_err_t *err)
{
    enc_front_opts_t fo;
    memset(&fo, 0, sizeof fo);
    fo.max_ops = max_ops;
    tir_kernel_t k;
    orc_result_t r = ORC_COMPILE_ERROR;
    if (enc_parse_kernel_json_opts(text, len, source, base_dir, &fo, &k, err) == 0) {
        if (k.num_programs > 1) {
            char path[4200];
            snprintf(path, sizeof path, "%s.json", dir);
            enc_options_t o;
            memset(&o, 0, sizeof o);
            o.mode = ENC_RUN_ISA_CHECKS;
            o.out_dir = dir;
            if (fio_write_atomic(path, text, len, err) == 0 &&
                enc_compile_mc(path, &o, NULL, err) == 0)
                r = orc_simulate(dir, max_cycles, false, err);
            else
                fio_rmtree(dir);
            unlink(path);
        } else {
            r = orc_check_kernel_opts(&k, dir, max_cycles, false, base, err);
        }
    }
    tir_kernel_free(&k);
    return r;
}

static inline orc_result_t orc_check_text(const char *text, size_t len, const char *source,
                                          const char *base_dir, int64_t max_ops, const char *dir,
                                          uint64_t max_cycles, tpb_err_t *err)
{
    return orc_check_text_opts(text, len, source, base_dir, max_ops, dir, max_cycles, NULL, err);
}

#endif
