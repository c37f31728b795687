/* expr.h - the expression grammar and NumPy-style slice operands of the
 * kernel file (docs/kernel-format.md, "Names, expressions and slices").
 *
 * One grammar (expr.c) for index and number fields, with Python's
 * precedence and int/float typing: literals (integers, decimals), names
 * (loop variables, `let`s, pid, num_programs, ..., pi), + - * / // % **,
 * unary - +, parentheses, comparisons < <= > >= == != (giving 0/1), and the
 * calls min max cdiv abs sqrt exp log floor ceil trunc sign pow fmod
 * program_id num_programs program_ndim.  Integer overflow and division by
 * zero are errors.  Every value remembers whether it depends on pid. */
#ifndef TPB_EXPR_H
#define TPB_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "builder.h"

#define ENC_VAR_NAME 64
#define ENC_EXPR_MAX_DEPTH 64
#define ENC_MAX_SLICES 8

typedef struct {
    char name[ENC_VAR_NAME];
    int64_t value;
    bool pid_dep;                 /* value derives from pid */
} enc_var_t;

/* A stack of bindings; lookups search from the top (innermost). */
typedef struct {
    enc_var_t *vars;
    int n, cap;
} enc_env_t;

typedef struct {
    int64_t v;
    bool pid_dep;
} enc_val_t;

void enc_env_init(enc_env_t *e);
void enc_env_free(enc_env_t *e);
int enc_env_push(enc_env_t *e, const char *name, int64_t value, bool pid_dep);
void enc_env_pop_to(enc_env_t *e, int n);
const enc_var_t *enc_env_find(const enc_env_t *e, const char *name);

/* Evaluate `text` completely as an index expression: the result must be an
 * integer ("7 / 2" is a float and an error; floor(7 / 2) is 3).  On error
 * returns -1 and writes a message (with the offset) to msg. */
int enc_expr_eval(const char *text, const enc_env_t *env, enc_val_t *out, char *msg, size_t n);

/* Compiled expressions (a loop body's fields are parsed once): the same
 * evaluation as enc_expr_eval, which also records the parse as a postfix
 * program in *prog when it succeeds (*prog stays NULL when it cannot be
 * kept).  enc_expr_run replays it under another environment; it returns -1
 * without a message on any error: evaluate the text with enc_expr_eval for
 * the parser's exact message. */
typedef struct enc_expr enc_expr_t;
int enc_expr_compile(const char *text, const enc_env_t *env, enc_expr_t **prog, enc_val_t *out,
                     char *msg, size_t n);
int enc_expr_run(const enc_expr_t *e, const enc_env_t *env, enc_val_t *out);
void enc_expr_free(enc_expr_t *e);

/* Evaluate a number field's expression in the same grammar; an integer
 * result is converted to double.  A result that is not finite is an
 * error. */
int enc_fexpr_eval(const char *text, const enc_env_t *env, double *out, char *msg, size_t n);

/* Parse an operand "name" or "name[s0, s1, ...]" where each s is an
 * expression (integer index), or start:stop[:step] with optional parts.
 * Writes the tensor name and the slices; *pid_dep is set when any bound
 * depends on pid. */
int enc_parse_slice_operand(const char *text, const enc_env_t *env, char *name, size_t name_len,
                            enc_slice_t *slices, int *nslices, bool *pid_dep, char *msg,
                            size_t n);

/* The operand when it is a flat body's common form, "t" or "a[5:6, :]" (a
 * name, then items of plain decimal integers and ':' with spaces, ']'
 * ending the text) shorter than max_len: what enc_parse_slice_operand
 * gives it, without its copies and scans.  false for any other text. */
bool enc_quick_slice_operand(const char *text, char *name, size_t name_len, enc_slice_t *slices,
                             int *nslices, size_t max_len);

/* The same, also compiling the slice list into *prog (NULL when it cannot
 * be kept); enc_slice_prog_run evaluates it under another environment and
 * returns -1 without a message on any error (parse the text again for the
 * message).  The name is the caller's to keep. */
typedef struct enc_slice_prog enc_slice_prog_t;
int enc_slice_operand_compile(const char *text, const enc_env_t *env, char *name,
                              size_t name_len, enc_slice_t *slices, int *nslices, bool *pid_dep,
                              char *msg, size_t n, enc_slice_prog_t **prog);
int enc_slice_prog_run(const enc_slice_prog_t *p, const enc_env_t *env, enc_slice_t *slices,
                       int *nslices, bool *pid_dep);
void enc_slice_prog_free(enc_slice_prog_t *p);
/* how many slices the compiled list holds (0: a bare name) */
int enc_slice_prog_count(const enc_slice_prog_t *p);

/* Parse just a slice list body "a:b, c" (no name, no brackets), e.g. for
 * the `rows` field of indirect operands. */
int enc_parse_slices(const char *text, const enc_env_t *env, enc_slice_t *slices, int *nslices,
                     bool *pid_dep, char *msg, size_t n);

#endif
