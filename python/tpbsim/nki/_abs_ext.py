"""nl.abs_max(x, y) / nl.abs_min(x, y) called on tiles: NKI's language
docstring gives the input with the larger (smaller) magnitude with its
sign kept, y on a tie (abs_max(-5, 3) == -5), and the callable form only
on NeuronCore-v4 (trn3; Neuron 2.30 release notes).  Here |x| and |y| in
fp32, their comparison, and a select of x or y.  The ALU op of the same
name (op=nl.abs_max in tensor_tensor, tensor_scalar, tensor_reduce, a
reduce_op) is not this: it stays the magnitude max(|a|, |b|)
(docs/semantics.md "ALU", docs/python.md)."""
from ._trace import NkiError, NkiTensor


def signed(name, x, y, dtype, loc, mask):
    """nl.abs_max / nl.abs_min (name) of x and y (tiles or numbers): a new
    SBUF tile, x where |x| > |y| (abs_min: <) else y."""
    from . import isa, language as L
    from ._where_index import where_tile
    if isa.get_nc_version() < isa.nc_version.gen4:
        raise NkiError("%s: nl.%s(x, y) is NeuronCore-v4 (trn3) only in NKI (it returns the "
                       "signed input of the %s magnitude); trace for trn3, or pass nl.%s as "
                       "an op (nisa.tensor_tensor(op=nl.%s)) for the magnitude %s(|x|, |y|)" % (
                           loc, name, "larger" if name == "abs_max" else "smaller", name, name,
                           name[4:]))
    if not isinstance(x, NkiTensor) and not isinstance(y, NkiTensor):
        raise NkiError("%s: nl.%s needs at least one tensor" % (loc, name))
    dtype = L._dtype(dtype) if dtype else None
    ax, ay = (L._unary("abs", v, loc, L.float32) if isinstance(v, NkiTensor) else abs(v)
              for v in (x, y))
    cond = L._binary("greater" if name == "abs_max" else "less", ax, ay, L.uint8, loc)
    return where_tile(cond, x, y, dtype, mask, False, loc)
