/* dis.h - instruction text: the canonical assembly form of one decoded
 * instruction (used by `tpb dis`, the simulator's trace events and the
 * viewer), and the disassembly of whole bundle streams.
 *
 * The syntax is documented in docs/assembly.md; the assembler (asm.h)
 * accepts every line printed here and re-creates the identical bytes. */
#ifndef TPB_ISA_DIS_H
#define TPB_ISA_DIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isa.h"

/* Format the fields of one decoded instruction (prefixes already folded, as
 * isa_stream_decode() leaves them), without the mnemonic:
 *   "op=add in0=sbuf[0:128]@0x0:fp32<1x512> in1=... out=... wait=S3>=5"
 * Works like snprintf: always NUL-terminates when len > 0 and returns the
 * length the full text needs (excluding the NUL).  This exact text is what
 * trace events carry in args.fields. */
int isa_format_inst(const isa_inst_t *in, char *buf, size_t len);

/* Mnemonic + " " + fields (just the mnemonic when there are no fields). */
int isa_format_line(const isa_inst_t *in, char *buf, size_t len);

/* ".bundle <128 hex digits>" for a raw 64-byte bundle (memory order). */
int isa_format_bundle_data(const uint8_t b[ISA_BUNDLE_BYTES], char *buf, size_t len);

/* Format one F32 field value so that parsing it gives back the same bits:
 * "%.9g" for numbers, "bits(0x7fc00001)" for NaNs. */
int isa_format_f32(float v, char *buf, size_t len);

/* Growable text buffer owned by the caller; free with isa_text_free(). */
typedef struct {
    char *s;       /* NUL-terminated */
    size_t len, cap;
    bool oom;      /* an allocation failed; text is truncated */
} isa_text_t;
void isa_text_free(isa_text_t *t);

typedef struct {
    bool hex;            /* listing: raw bytes under each instruction */
    bool canonical;      /* just the assembly (no offsets), for `tpb as` */
    isa_engine_t engine; /* check legality; ISA_ENG_UNASSIGNED = don't */
    /* Optional per-bundle notes (e.g. the compiler's op name from the
     * <Engine>.json sidecar), printed as a comment line before bundle i;
     * NULL entries and indices >= nnotes print nothing. */
    const char *const *notes;
    size_t nnotes;
} isa_dis_opts_t;

typedef struct {
    size_t nbundles;     /* whole bundles printed */
    size_t ninvalid;     /* bundles printed as .bundle data (decode/prefix errors) */
    size_t nillegal;     /* instructions not legal on opts.engine */
    size_t trailing;     /* bytes after the last whole bundle (not printed) */
    size_t first_error_offset; /* byte offset of the first problem */
    char first_error[300];     /* its message ("" when none) */
} isa_dis_report_t;

/* Disassemble a stream into out (appended).  Never fails on bad input:
 * undecodable bundles and misused prefixes become `.bundle` lines with a
 * comment giving the error; the report counts them.  Returns 0, or -1 only
 * when memory runs out. */
int isa_disassemble(const uint8_t *buf, size_t len, const isa_dis_opts_t *opts,
                    isa_text_t *out, isa_dis_report_t *rep);

#endif
