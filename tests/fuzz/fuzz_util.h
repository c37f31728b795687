/* fuzz_util.h - shared by the libFuzzer harnesses (tests/fuzz/, built with
 * -DTPB_FUZZ=ON and clang; run by scripts/fuzz).  A harness aborts (which
 * libFuzzer reports as a crash, with the input saved) when an invariant
 * does not hold: a round trip that changes bytes, two parsers that
 * disagree, an error message without a location. */
#ifndef TPB_FUZZ_UTIL_H
#define TPB_FUZZ_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm.h"
#include "dis.h"

#define FUZZ_CHECK(cond, ...)                                                  \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "fuzz invariant failed: %s: ", #cond);             \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* The canonical disassembly (input for `tpb as`) of any bytes. */
static inline isa_dis_report_t fuzz_dis_canonical(const uint8_t *buf, size_t len, isa_text_t *t)
{
    isa_dis_opts_t o;
    memset(&o, 0, sizeof o);
    o.canonical = true;
    o.engine = ISA_ENG_UNASSIGNED;
    isa_dis_report_t rep;
    memset(t, 0, sizeof *t);
    FUZZ_CHECK(isa_disassemble(buf, len, &o, t, &rep) == 0, "out of memory");
    return rep;
}

/* Assemble text that must assemble (it came from the disassembler). */
static inline isa_asm_result_t *fuzz_assemble_ok(const isa_text_t *t)
{
    isa_asm_opts_t ao = { ISA_ENG_UNASSIGNED };
    isa_asm_result_t *r = calloc(1, sizeof *r);
    FUZZ_CHECK(r != NULL, "oom");
    FUZZ_CHECK(isa_assemble(t->s ? t->s : "", t->len, &ao, r) == 0,
               "the canonical disassembly does not assemble: line %u: %s\n%s", r->diags[0].line,
               r->diags[0].msg, t->s);
    return r;
}

#endif
