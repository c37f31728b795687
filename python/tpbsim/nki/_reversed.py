"""nisa.scalar_tensor_tensor with reverse0 / reverse1 (NKI: operand0 is
the lhs of op0, operand1 the lhs of op1; the NKI Library's attention_bwd
computes a sink gradient as `operand1 - data * operand0`).  The kernel
format's scalar_tensor_tensor has no reverse fields, so a reversed
non-commutative op is written as NKI defines the instruction, two ops
back to back: tensor_scalar (with reverse0) into a float32 tile, then
tensor_tensor with the operands of op1 in NKI's order.  The Vector
engine computes the instruction in float32, so the float32 tile holds
exactly its intermediate."""
from . import _trace

# ops whose operands may be swapped (reverse makes no difference)
COMMUTATIVE = {"add", "multiply", "maximum", "minimum", "max", "min"}


def split(dst, data, op0, operand0, op1, operand1, reverse0, reverse1, op0_name, op1_name, mask):
    """The two ops, or False when the reverses do not matter (commutative
    ops: the caller emits the one instruction without them)."""
    r0 = bool(reverse0) and op0_name not in COMMUTATIVE
    r1 = bool(reverse1) and op1_name not in COMMUTATIVE
    if not (r0 or r1):
        return False
    from . import isa, language
    _trace.SKIP.update((split.__code__, isa.tensor_scalar.__code__, isa.tensor_tensor.__code__,
                        isa.scalar_tensor_tensor.__code__))
    tmp = language.ndarray(tuple(data.shape), dtype="float32", buffer=language.sbuf,
                           name="stt_reversed")
    isa.tensor_scalar(tmp, data, op0, operand0, reverse0=r0)
    if r1:
        isa.tensor_tensor(dst, operand1, tmp, op1, mask=mask)
    else:
        isa.tensor_tensor(dst, tmp, operand1, op1, mask=mask)
    return True
