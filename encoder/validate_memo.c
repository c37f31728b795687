/* validate_memo.c - the operand-check memo's alias (builder.h
 * enc_check_memo_alias): a loop body's tile declared anew takes its
 * previous instance's pass, when check_ap (validate.c) reads the same of
 * both (docs/performance-log.md, the front-end per op, second round). */
#include "validate_int.h"

#include <stdbool.h>
#include <stdint.h>

void enc_check_memo_alias(enc_check_memo_t *m, const tir_kernel_t *k, const tpb_target_t *tg,
                          const tir_ap_t *from, const tir_ap_t *to)
{
    unsigned hf = enc_check_memo_slot(from);
    if (!m || m->k != k || m->tg != (tg ? tg : tpb_target_default()) || from == to ||
        m->e[hf].ap != from)
        return;   /* no pass kept */
    int nt = k->ntensors;
    if (from->tensor < 0 || from->tensor >= nt || to->tensor < 0 || to->tensor >= nt)
        return;
    const tir_tensor_t *a = &k->tensors[from->tensor], *b = &k->tensors[to->tensor];
    if (a->kind != b->kind || a->ndim != b->ndim || from->ndim != to->ndim ||
        from->offset != to->offset || from->ndim < 1 || from->ndim > TIR_MAX_DIMS ||
        from->view != to->view || (from->view && a->dtype != b->dtype))
        return;   /* (a dtype view's bounds depend on the tensor's dtype) */
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return;
    for (int d = 0; d < from->ndim; d++)   /* the dims check_ap reads */
        if (from->step[d] != to->step[d] || from->count[d] != to->count[d])
            return;
    unsigned ht = enc_check_memo_slot(to);
    m->e[ht] = m->e[hf];
    m->e[ht].ap = to;
}
