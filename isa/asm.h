/* asm.h - the assembler: canonical assembly text (docs/assembly.md) to
 * 64-byte bundles.  Accepts everything dis.h prints, plus labels for branch
 * targets, `.bundle` raw data and TAPs with 3-4 free dims (the ApExt prefix
 * is emitted automatically). */
#ifndef TPB_ISA_ASM_H
#define TPB_ISA_ASM_H

#include <stddef.h>
#include <stdint.h>

#include "isa.h"

typedef struct {
    unsigned line, col;   /* 1-based; col 0 = the whole line */
    char field[48];       /* the field the error is about, "" if none */
    char msg[320];        /* message without the file:line:col prefix */
} isa_asm_diag_t;

#define ISA_ASM_MAX_DIAGS 100

typedef struct {
    uint8_t *bytes;       /* malloc'ed bundles; NULL when there were errors */
    size_t len;           /* bytes (a multiple of 64) */
    unsigned nerrors;     /* total errors; the first ISA_ASM_MAX_DIAGS are kept */
    unsigned ndiags;
    isa_asm_diag_t diags[ISA_ASM_MAX_DIAGS];
} isa_asm_result_t;

typedef struct {
    isa_engine_t engine;  /* reject opcodes not legal here; UNASSIGNED = any */
} isa_asm_opts_t;

/* Assemble a whole source text (need not be NUL-terminated).  Returns 0 on
 * success (res->bytes/len set), -1 when there were errors (res->diags). */
int isa_assemble(const char *src, size_t len, const isa_asm_opts_t *opts,
                 isa_asm_result_t *res);
void isa_asm_result_free(isa_asm_result_t *res);

/* Parse one instruction line ("Mnemonic field=value ...", no label, no
 * directive) into a decoded-form instruction: TAPs keep all their dims, as
 * isa_stream_decode() returns them.  Branch targets must be numbers here.
 * Nothing is encoded, so struct-level range checks are left to isa_encode.
 * Returns 0, or -1 with *diag filled (line is 1). */
int isa_parse_inst(const char *line, isa_inst_t *out, isa_asm_diag_t *diag);

#endif
