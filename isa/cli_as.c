/* tpb as - assemble a text file into a .bin stream of 64-byte bundles. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/fileio.h"
#include "asm.h"

int tpb_cmd_as(int argc, char **argv);

static void as_usage(FILE *f)
{
    fprintf(f,
            "usage: tpb as <in.s | -> -o <out.bin> [--engine NAME]\n\n"
            "Assemble instruction text (docs/assembly.md) into 64-byte bundles;\n"
            "'-' reads the text from standard input.\n"
            "Errors are reported as file:line:col: error: message; on any error\n"
            "nothing is written (the output is replaced atomically).\n\n"
            "options:\n"
            "  -o, --output FILE   output .bin file (required)\n"
            "  --engine NAME       reject opcodes not legal on this engine\n"
            "                      (PE, Activation, Pool, DVE, SP)\n"
            "  -h, --help          show this help\n");
}

/* Print one diagnostic with the source line and a caret under the column. */
static void print_diag(const char *file, const char *src, size_t len, const isa_asm_diag_t *d)
{
    fprintf(stderr, "%s:%u:%u: error: %s\n", file, d->line, d->col, d->msg);
    const char *p = src, *end = src + len;
    for (unsigned l = 1; l < d->line && p < end; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    if (!d->line || p >= end)
        return;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    int n = (int)((nl ? nl : end) - p);
    if (n > 300)
        return;
    fprintf(stderr, "  %.*s\n", n, p);
    if (d->col)
        fprintf(stderr, "  %*s^\n", (int)d->col - 1, "");
}

int tpb_cmd_as(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    isa_asm_opts_t opts = { ISA_ENG_UNASSIGNED };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            as_usage(stdout);
            return 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) {
                fprintf(stderr, "tpb as: %s needs a file name\n", a);
                return 2;
            }
            out = argv[i];
        } else if (!strcmp(a, "--engine")) {
            if (++i >= argc) {
                fprintf(stderr, "tpb as: --engine needs an engine name\n");
                return 2;
            }
            int e = isa_engine_by_name(argv[i]);
            if (e < 0 || !isa_engine_is_tpb((isa_engine_t)e)) {
                fprintf(stderr, "tpb as: unknown engine '%s' (PE, Activation, Pool, DVE, SP)\n", argv[i]);
                return 2;
            }
            opts.engine = (isa_engine_t)e;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "tpb as: unknown option '%s'\n", a);
            as_usage(stderr);
            return 2;
        } else if (!in) {
            in = a;
        } else {
            fprintf(stderr, "tpb as: more than one input file ('%s')\n", a);
            return 2;
        }
    }
    if (!in || !out) {
        fprintf(stderr, "tpb as: %s\n", !in ? "missing input file" : "missing -o <out.bin>");
        as_usage(stderr);
        return 2;
    }
    uint8_t *src;
    size_t len;
    tpb_err_t err;
    /* "-" reads standard input (e.g. tpb dis --canonical x.bin | ... | tpb as - -o y.bin) */
    bool is_stdin = !strcmp(in, "-");
    if (is_stdin)
        in = "<stdin>";
    if (fio_read_all(is_stdin ? "/dev/stdin" : in, &src, &len, &err)) {
        fprintf(stderr, "tpb as: %s\n", err.msg);
        return 1;
    }
    isa_asm_result_t res;
    int rc = isa_assemble((const char *)src, len, &opts, &res);
    if (rc) {
        for (unsigned i = 0; i < res.ndiags; i++)
            print_diag(in, (const char *)src, len, &res.diags[i]);
        if (res.nerrors > res.ndiags)
            fprintf(stderr, "%s: %u more errors not shown\n", in, res.nerrors - res.ndiags);
        fprintf(stderr, "%s: %u error%s, nothing written\n", in, res.nerrors, res.nerrors == 1 ? "" : "s");
    } else if (fio_write_atomic(out, res.bytes, res.len, &err)) {
        fprintf(stderr, "tpb as: %s\n", err.msg);
        rc = -1;
    }
    isa_asm_result_free(&res);
    free(src);
    return rc ? 1 : 0;
}
