/* frontend.h - kernel file (JSON, docs/kernel-format.md) -> tile IR.
 *
 * The front-end validates the kernel and unrolls every loop for ONE program
 * id, producing a flat tir_kernel_t (encoder/tir.h).  For a multi-core
 * (SPMD) kernel call it once per program id: parse program 0, read
 * out->num_programs, then parse 1 .. num_programs-1.  Every program's
 * kernel lists the same tensors in the same order.
 *
 * The JSON path drives the C builder API (encoder/builder.h), so both share
 * one validation (encoder/validate.c) and one append point.
 *
 * Errors: "<file>: <path>: field '<field>': <message>", e.g.
 *   k.json: body[2].body[0] (load): field 'src': slice 0:600 of 'a' ...
 * JSON syntax errors give line and column.  Nothing is printed. */
#ifndef TPB_FRONTEND_H
#define TPB_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "tir.h"

/* Unrolling guard: a kernel may not expand to more ops than this. */
#define ENC_DEFAULT_MAX_OPS 10000000LL
/* Nesting guard for for/if/let bodies and expressions. */
#define ENC_MAX_NESTING 64

typedef struct {
    const char *target_override;  /* NULL: the kernel's "target", else trn2 */
    int program_id;               /* 0 .. num_programs-1 */
    int64_t max_ops;              /* 0: ENC_DEFAULT_MAX_OPS */
    tpb_spare_t *spare;           /* NULL, or the job's spare mappings (common/spare.h):
                                     the JSON tree's freed chunks kept for the compile */
} enc_front_opts_t;

/* Parse a kernel file.  `out` is initialised here (tir_kernel_init) and must
 * be released with tir_kernel_free() whether or not the call succeeds.
 * Returns 0 on success, -1 with err filled. */
int enc_parse_kernel_file(const char *path, const char *target_override, int program_id,
                          tir_kernel_t *out, tpb_err_t *err);

/* Parse kernel JSON text.  `source_name` is used in messages (and stored in
 * out->source); `base_dir` resolves constant `file`s (NULL = "."). */
int enc_parse_kernel_json(const char *text, size_t len, const char *source_name,
                          const char *base_dir, const char *target_override,
                          int program_id, tir_kernel_t *out, tpb_err_t *err);

/* The same with every option. */
int enc_parse_kernel_json_opts(const char *text, size_t len, const char *source_name,
                               const char *base_dir, const enc_front_opts_t *opts,
                               tir_kernel_t *out, tpb_err_t *err);
int enc_parse_kernel_file_opts(const char *path, const enc_front_opts_t *opts,
                               tir_kernel_t *out, tpb_err_t *err);
/* The kernel file's text and a NUL (frontend_read.c), as fio_read_all.
 * tree: NULL, or an empty arena for the file's JSON tree: a large file's
 * text then goes at its start, with room reserved for the tree
 * (tpb_json_arena_presize) in the same mapping, and lives as long as the
 * arena.  Release with enc_text_free (before or after the arena). */
typedef struct {
    uint8_t *buf;    /* the text, buf[len] == 0 */
    size_t len;
    size_t bytes;    /* buf's capacity for tpb_array_free (0: malloc'ed) */
    bool in_tree;    /* buf lives in the tree arena: nothing to free */
} enc_text_t;
int enc_read_kernel_text(const char *path, tpb_arena_t *tree, enc_text_t *t, tpb_err_t *err);
void enc_text_free(enc_text_t *t);

/* The tile IR as text: a header line, one line per tensor ("%3 ta#1 sbuf
 * float32 [128, 512] @body[0].body[1]") and one per op with every field
 * that differs from tir_op_init() ("#4 load load_4 @body[0].body[3]
 * dst=ta#1{+0; 128x512 512x1} src0=a{+65536; 128x512 512x1}"); APs print
 * as {+offset; count x step ...}.  *text is malloc'ed (caller frees). */
int enc_tir_format(const tir_kernel_t *k, char **text, size_t *len, tpb_err_t *err);

#endif
