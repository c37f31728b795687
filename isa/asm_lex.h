/* asm_lex.h - the assembler's line lexer, shared by the one-line parser
 * (asm_line.c) and the program assembler (asm.c).  Internal to isa/. */
#ifndef TPB_ISA_ASM_LEX_H
#define TPB_ISA_ASM_LEX_H

#include "asm.h"

#include <stdbool.h>
#include <stddef.h>

#define MAX_GIVEN 64
#define MAX_LABEL 64

/* A field set on the line: where, so encode errors can point at it. */
typedef struct {
    const char *name;     /* table name: "in0", "wait_sem", "op" ... */
    const char *by;       /* the key written on the line ("wait" for wait_sem) */
    unsigned col;
} given_t;

typedef struct {
    const char *line;     /* start of the line (not NUL-terminated) */
    const char *end;      /* end of the line */
    const char *p;        /* cursor */
    unsigned lineno;
    isa_asm_diag_t *diag;
    given_t given[MAX_GIVEN];
    unsigned ngiven;
    char label_ref[MAX_LABEL]; /* target=<label> */
    unsigned label_col;
} lex_t;

unsigned asm_col_of(const lex_t *lx, const char *at);
int asm_perr(lex_t *lx, const char *at, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bool asm_at_end(const lex_t *lx);
void asm_skip_ws(lex_t *lx);
bool asm_token_end(const lex_t *lx, const char *q);
bool asm_ident_char(char c, bool first);
size_t asm_take_ident(lex_t *lx, char *buf, size_t len);
int asm_parse_inst_at(lex_t *lx, isa_inst_t *in);

#endif
