/* validate_reg.c - checks of the sequencer-register ops (regalloc.h):
 * register numbers in range, register_store's destination one 32-bit
 * integer element of a tile.  "<path> (<op>): field '<field>': <what>". */
#include "regalloc.h"

#include "isa.h"

bool enc_is_register_op(tir_opkind_t k)
{
    return k == TIR_REGISTER_MOVE || k == TIR_REGISTER_STORE;
}

static int reg_ok(const tir_op_t *op, int r, const char *field, tpb_err_t *err)
{
    if (r < 0 || r >= ISA_NUM_REGS)
        return tpb_errf(err, "%s (%s): field '%s': register %d outside 0..%d", op->path,
                        tir_op_name(op->kind), field, r, ISA_NUM_REGS - 1);
    return 0;
}

int enc_validate_register(const tir_kernel_t *k, const tir_op_t *op, tpb_err_t *err)
{
    if (op->kind == TIR_REGISTER_MOVE) {
        if (reg_ok(op, op->rare->reg, "dst", err) ||
            (op->rare->reg_src >= 0 && reg_ok(op, op->rare->reg_src, "src", err)))
            return -1;
        if (op->rare->reg_src < 0 && (op->rare->reg_imm < INT32_MIN || op->rare->reg_imm > UINT32_MAX))
            return tpb_errf(err, "%s (register_move): field 'src': %lld does not fit a 32-bit "
                            "register", op->path, (long long)op->rare->reg_imm);
        return 0;
    }
    if (reg_ok(op, op->rare->reg, "src", err))
        return -1;
    const tir_ap_t *d = op->dst;
    if (d->tensor < 0)
        return tpb_errf(err, "%s (register_store): field 'dst': missing", op->path);
    int64_t n = 1;
    for (int i = 0; i < d->ndim; i++)
        n *= d->count[i];
    unsigned dt = tir_ap_dtype(&k->tensors[d->tensor], d);
    if (n != 1)
        return tpb_errf(err, "%s (register_store): field 'dst': %lld elements; a register "
                        "store writes exactly one", op->path, (long long)n);
    if (dt != ISA_DT_INT32 && dt != ISA_DT_UINT32)
        return tpb_errf(err, "%s (register_store): field 'dst': dtype %s; a register holds a "
                        "32-bit integer (int32 or uint32)", op->path, isa_dtype_numpy_name(dt));
    return 0;
}
