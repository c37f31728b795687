/* fuzz_dis: bundle decoder, disassembler and assembler (`tpb dis` / `tpb
 * as`).  Any byte stream disassembles (bad bundles become `.bundle` data
 * lines); the canonical text must assemble back to exactly the same bytes
 * (the whole bundles of the input), so dis and as agree on every bundle. */
#include <stdint.h>
#include <string.h>

#include "asm.h"
#include "dis.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 256)
        return 0;
    isa_dis_opts_t o;
    memset(&o, 0, sizeof o);
    o.canonical = true;
    o.engine = ISA_ENG_UNASSIGNED;
    isa_text_t t = { 0 };
    isa_dis_report_t rep;
    FUZZ_CHECK(isa_disassemble(data, size, &o, &t, &rep) == 0, "out of memory");
    size_t whole = size / ISA_BUNDLE_BYTES * ISA_BUNDLE_BYTES;
    FUZZ_CHECK(rep.trailing == size - whole, "trailing %zu of %zu", rep.trailing, size);
    isa_asm_opts_t ao = { ISA_ENG_UNASSIGNED };
    isa_asm_result_t *r = calloc(1, sizeof *r);
    FUZZ_CHECK(r != NULL, "oom");
    int rc = isa_assemble(t.s ? t.s : "", t.len, &ao, r);
    FUZZ_CHECK(rc == 0, "the disassembly does not assemble: line %u: %s\n%s", r->diags[0].line,
               r->diags[0].msg, t.s);
    FUZZ_CHECK(r->len == whole && memcmp(r->bytes, data, whole) == 0,
               "round trip changed the bytes (%zu -> %zu)\n%s", whole, r->len, t.s);
    isa_asm_result_free(r);
    free(r);
    isa_text_free(&t);
    return 0;
}
