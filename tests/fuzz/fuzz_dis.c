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
    isa_text_t t;
    isa_dis_report_t rep = fuzz_dis_canonical(data, size, &t);
    size_t whole = size / ISA_BUNDLE_BYTES * ISA_BUNDLE_BYTES;
    FUZZ_CHECK(rep.trailing == size - whole, "trailing %zu of %zu", rep.trailing, size);
    isa_asm_result_t *r = fuzz_assemble_ok(&t);
    FUZZ_CHECK(r->len == whole && memcmp(r->bytes, data, whole) == 0,
               "round trip changed the bytes (%zu -> %zu)\n%s", whole, r->len, t.s);
    isa_asm_result_free(r);
    free(r);
    isa_text_free(&t);
    return 0;
}
