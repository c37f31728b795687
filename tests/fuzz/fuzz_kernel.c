/* fuzz_kernel: kernel JSON front-end and compiler.  Parsing is
 * deterministic (two parses give the same tile IR text), every error names
 * the source, and whatever parses compiles to validated bundles or a clean
 * error (GENERATE_ISACODE mode: nothing is written).  The arena JSON
 * reader the front-end parses with agrees with cJSON on the text (accepts,
 * position, every node: jsonarena_diff.h).  Constant files are
 * resolved in an empty directory; the op limit is kept small so one input
 * stays fast.  A grid of 2..8 programs goes through the multi-core driver
 * as tpb compile runs it (enc_compile_mc: every program parsed under one
 * shared op limit, split, compiled, linked and written to a private
 * directory on tmpfs): it succeeds or fails with a message.
 *
 * Built as fuzz_kernel_sim (FUZZ_KERNEL_SIM, tests/fuzz/fuzz_kernel_sim.c),
 * it also checks the compile-and-simulate oracle (tests/oracle.h): a kernel
 * that compiles is written to a private directory and simulated with zero
 * inputs, a 2-million-cycle limit and no arithmetic (timing_only: the
 * fields are checked all the same), and the simulator must not refuse an
 * instruction's fields (sim_error_class SIM_ERR_FIELD). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "fileio.h"
#include "frontend.h"
#include "lnc.h"
#include "fuzz_art.h"
#include "fuzz_util.h"
#include "../jsonarena_diff.h"
#ifdef FUZZ_KERNEL_SIM
#include "../oracle.h"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_OPS 4096

/* The multi-core driver reads the kernel from a file (once per program). */
static void compile_grid(const uint8_t *data, size_t size)
{
    fuzz_art_setup("kernel");
    char path[128], out[128];
    snprintf(path, sizeof path, "%s/k.json", fuzz_dir);
    snprintf(out, sizeof out, "%s/art", fuzz_dir);
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL, "%s: cannot create", path);
    FUZZ_CHECK(fwrite(data, 1, size, f) == size && fclose(f) == 0, "%s: write failed", path);
    enc_options_t o;
    memset(&o, 0, sizeof o);
    o.mode = ENC_RUN_ISA_CHECKS;
    o.out_dir = out;
    tpb_err_t ce = { { 0 } };
    if (enc_compile_mc_limit(path, &o, FUZZ_MAX_OPS, NULL, &ce) != 0)
        FUZZ_CHECK(ce.msg[0] != 0, "a multi-core compile error without a message");
    fio_rmtree(out);
}

#ifdef FUZZ_KERNEL_SIM
/* Whether the kernel has inline assembly: its instruction is the user's,
 * passed through as given (docs/compiler.md "Inline assembly"; the
 * compiler checks that it decodes, not which operands its opcode needs),
 * so a field the simulator refuses there is the kernel's, named by the
 * simulator, not a gap between compiler and simulator. */
static bool has_inline_asm(const tir_kernel_t *k)
{
    for (int i = 0; i < k->nops; i++)
        if (k->ops[i].kind == TIR_INLINE_ASM || k->ops[i].kind == TIR_INLINE_ASM_BYTES)
            return true;
    return false;
}
#endif

static char *parse_text(const uint8_t *data, size_t size, bool compile, int *rc, tpb_err_t *err)
{
    enc_front_opts_t fo;
    memset(&fo, 0, sizeof fo);
    fo.max_ops = FUZZ_MAX_OPS;
    tir_kernel_t k;
    *rc = enc_parse_kernel_json_opts((const char *)data, size, "k.json", "/nonexistent-fuzz-dir",
                                     &fo, &k, err);
    char *text = NULL;
    size_t len;
    if (*rc == 0) {
        FUZZ_CHECK(enc_tir_format(&k, &text, &len, err) == 0, "%s", err->msg);
        enc_options_t o;
        memset(&o, 0, sizeof o);
        o.mode = ENC_GENERATE_ISACODE;
        tpb_err_t ce = { { 0 } };
        if (compile && k.num_programs <= 1 && enc_compile(&k, &o, NULL, &ce) != 0)
            FUZZ_CHECK(ce.msg[0] != 0, "a compile error without a message");
#ifdef FUZZ_KERNEL_SIM
        else if (compile && k.num_programs <= 1) {
            fuzz_art_setup("kernel-sim");
            char dir[128];
            snprintf(dir, sizeof dir, "%s/art", fuzz_dir);
            tpb_err_t se = { { 0 } };
            orc_result_t r = orc_check_kernel(&k, dir, 2000000, true, &se);
            FUZZ_CHECK(r != ORC_FIELD_ERROR || has_inline_asm(&k),
                       "compiled, but the simulator refuses it: %s", se.msg);
            FUZZ_CHECK(r == ORC_OK || se.msg[0] != 0, "a %s without a message",
                       orc_result_name(r));
        }
#endif
        if (compile && k.num_programs > 1 && k.num_programs <= 8)
            compile_grid(data, size);
    }
    tir_kernel_free(&k);
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 15)
        return 0;
    bool json_ok;
    const char *d = ja_diff_text((const char *)data, size, &json_ok);
    FUZZ_CHECK(d == NULL, "the arena JSON reader and cJSON differ: %s", d);
    tpb_err_t e1 = { { 0 } }, e2 = { { 0 } };
    int r1, r2;
    char *t1 = parse_text(data, size, true, &r1, &e1);
    if (r1) {
        FUZZ_CHECK(strstr(e1.msg, "k.json") != NULL, "message without the source: %s", e1.msg);
        return 0;
    }
    char *t2 = parse_text(data, size, false, &r2, &e2);
    FUZZ_CHECK(r2 == 0 && t1 && t2 && !strcmp(t1, t2), "two parses differ");
    free(t1);
    free(t2);
    return 0;
}
