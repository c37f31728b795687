/* regalloc.h - the physical sequencer registers (0..ISA_NUM_REGS-1) a
 * kernel uses: one bitmap, tir_kernel_t.regs_used, shared by every
 * allocator (NKI virtual registers of register_alloc today; rolled-loop
 * counters can take theirs from the same set).  Allocation is from the top
 * (r63 down) so registers a kernel names by number (load_tensor_to_register
 * `reg`, `src_reg`/`dst_reg`), usually low, stay clear. */
#ifndef TPB_ENC_REGALLOC_H
#define TPB_ENC_REGALLOC_H

#include <stdbool.h>
#include <stdint.h>

/* The highest free register, marked used; -1 when all are taken. */
int enc_reg_alloc(uint64_t *used);
/* Mark register r used; -1 when r is outside 0..ISA_NUM_REGS-1. */
int enc_reg_reserve(uint64_t *used, int r);
bool enc_reg_is_used(uint64_t used, int r);
void enc_reg_release(uint64_t *used, int r);

/* The register ops (TIR_REGISTER_MOVE, TIR_REGISTER_STORE) and their checks
 * (validate_reg.c; engine already legal). */
#include "diag.h"
#include "target.h"
#include "tir.h"
bool enc_is_register_op(tir_opkind_t k);
int enc_validate_register(const tir_kernel_t *k, const tir_op_t *op, tpb_err_t *err);

#endif
