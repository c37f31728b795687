/* fuzz_asm: the assembler on arbitrary text.  Errors carry a line (and the
 * field when there is one); accepted text gives whole bundles whose
 * canonical disassembly assembles to the same bytes again. */
#include <stdint.h>
#include <string.h>

#include "asm.h"
#include "dis.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    isa_asm_opts_t ao = { ISA_ENG_UNASSIGNED };
    isa_asm_result_t *r = calloc(1, sizeof *r);
    FUZZ_CHECK(r != NULL, "oom");
    if (isa_assemble((const char *)data, size, &ao, r) != 0) {
        FUZZ_CHECK(r->nerrors > 0 && r->ndiags > 0 && r->diags[0].line >= 1 && r->diags[0].msg[0],
                   "an error without a line or message");
        isa_asm_result_free(r);
        free(r);
        return 0;
    }
    FUZZ_CHECK(r->len % ISA_BUNDLE_BYTES == 0, "%zu bytes", r->len);
    isa_dis_opts_t o;
    memset(&o, 0, sizeof o);
    o.canonical = true;
    o.engine = ISA_ENG_UNASSIGNED;
    isa_text_t t = { 0 };
    isa_dis_report_t rep;
    FUZZ_CHECK(isa_disassemble(r->bytes, r->len, &o, &t, &rep) == 0, "oom");
    isa_asm_result_t *r2 = calloc(1, sizeof *r2);
    FUZZ_CHECK(r2 != NULL, "oom");
    FUZZ_CHECK(isa_assemble(t.s ? t.s : "", t.len, &ao, r2) == 0, "canonical text rejected: %s\n%s",
               r2->diags[0].msg, t.s);
    FUZZ_CHECK(r2->len == r->len && memcmp(r2->bytes, r->bytes, r->len) == 0,
               "as(dis(as(x))) != as(x)\n%s", t.s);
    isa_asm_result_free(r);
    isa_asm_result_free(r2);
    free(r);
    free(r2);
    isa_text_free(&t);
    return 0;
}
