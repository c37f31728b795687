/* regalloc.c - physical sequencer register allocation (regalloc.h). */
#include "regalloc.h"

#include "isa.h"

int enc_reg_alloc(uint64_t *used)
{
    for (int r = ISA_NUM_REGS - 1; r >= 0; r--)
        if (!(*used >> r & 1u)) {
            *used |= 1ull << r;
            return r;
        }
    return -1;
}

int enc_reg_reserve(uint64_t *used, int r)
{
    if (r < 0 || r >= ISA_NUM_REGS)
        return -1;
    *used |= 1ull << r;
    return 0;
}

bool enc_reg_is_used(uint64_t used, int r)
{
    return r >= 0 && r < ISA_NUM_REGS && (used >> r & 1u);
}

void enc_reg_release(uint64_t *used, int r)
{
    if (r >= 0 && r < ISA_NUM_REGS)
        *used &= ~(1ull << r);
}
