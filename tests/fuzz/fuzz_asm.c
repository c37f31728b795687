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
    isa_text_t t;
    fuzz_dis_canonical(r->bytes, r->len, &t);
    isa_asm_result_t *r2 = fuzz_assemble_ok(&t);
    FUZZ_CHECK(r2->len == r->len && memcmp(r2->bytes, r->bytes, r->len) == 0,
               "as(dis(as(x))) != as(x)\n%s", t.s);
    isa_asm_result_free(r);
    isa_asm_result_free(r2);
    free(r);
    free(r2);
    isa_text_free(&t);
    return 0;
}
