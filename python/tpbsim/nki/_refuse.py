"""Forms NKI documents as errors where tpbsim would otherwise compute
something a kernel could silently rely on (the SDK's migration guide,
NKI 0.3.0's "breaking changes"): refused with an NkiError naming the
kernel line.  docs/python.md "Supported, and not"."""
import math
import numbers

from ._state import NkiError
from .language import _INT_DTYPES


def hwdge_dtypes(dst, src, dge, loc):
    """dma_copy(dge_mode=hwdge) between two dtypes: the hardware DGE moves
    raw bytes (no conversion), so NKI 0.3 requires src and dst to have one
    dtype (NKI 0.2: undefined behaviour).  dge: the dge_mode member."""
    if getattr(dge, "name", None) != "hwdge":
        return
    a, b = getattr(src, "dtype", None), getattr(dst, "dtype", None)
    if a is not None and b is not None and a != b:
        raise NkiError("%s: nisa.dma_copy: dge_mode=hwdge moves raw bytes, so src and dst must "
                       "have one dtype (src %s, dst %s): read the bytes as dst's dtype with "
                       "src.view(%s), or convert with dge_mode=swdge or none" % (loc, a, b, b))


def memset_value(dst, value, loc):
    """nisa.memset of an integer tile with a non-integral number: NKI 0.3
    requires the value to match dst's dtype (NKI 0.2 cast it silently; a
    whole float such as 2.0 is kept for those kernels)."""
    if getattr(dst, "dtype", None) not in _INT_DTYPES:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return   # a tile operand or an expression: not an immediate
    v = float(value)
    if not math.isfinite(v) or not v.is_integer():
        raise NkiError("%s: nisa.memset: value %r for the %s tile '%s': an integer tile takes "
                       "an integer value (NKI: value must match dst's dtype)" %
                       (loc, value, dst.dtype, dst.name))


def _beta1_kernel():
    """Whether the kernel being traced is NKI beta-1's: a beta-1 entry
    point (Kernel.beta1) or a beta-1 form used so far (_state.beta1_form)."""
    from ._state import stack
    s = stack()
    return bool(s) and (s[-1].beta1_forms or s[-1].beta1_entry)


def reduce_axes(shape, axis, fn, loc):
    """A reduction's axis (an int, or a tuple / list of ints; negative ones
    count from the end, as NumPy's) over a tile of shape: the axes, in
    order.  NKI (nisa.tensor_reduce and the nl reductions' stubs; NKI 0.3.0
    fixed 0.2.0, which read axis=1 of a 3-D/4-D tile as its last dim) takes
    only the last contiguous free dims, ending at the final dim: others are
    refused, so a port never silently gets another dim's reduction.  NKI
    beta-1 reduced any free dims, NumPy's meaning (the SDK's own beta-1
    pooling examples reduce axis=[2, 4] of a 5-D view): kept for a beta-1
    kernel.  The partition axis 0 is never reduced."""
    nd = len(shape)

    def bad(why):
        return NkiError("%s: %s: axis=%r on the %d-D tile %s: %s" %
                        (loc, fn, axis, nd, list(shape), why))

    def is_int(a):
        return isinstance(a, numbers.Integral) and not isinstance(a, bool)

    if is_int(axis):
        ax = [int(axis)]
    elif isinstance(axis, (tuple, list)) and axis and all(is_int(a) for a in axis):
        ax = [int(a) for a in axis]
    else:
        raise bad("axis must be an int or a non-empty tuple / list of ints")
    if any(not -nd <= a < nd for a in ax):
        raise bad("an axis is out of range")
    ax = [a + nd if a < 0 else a for a in ax]
    if len(set(ax)) != len(ax):
        raise bad("an axis is named twice")
    if 0 in ax:
        raise bad("axis 0 is the partition axis, which a free-axis reduction cannot reduce "
                  "(nisa.tensor_partition_reduce, or nc_transpose first)")
    ax.sort()
    if ax != list(range(nd - len(ax), nd)) and not _beta1_kernel():
        forms = [str(nd - 1)] + [str(tuple(range(k, nd))) for k in range(nd - 2, 0, -1)]
        raise bad("NKI reduces only the last contiguous free dim(s), ending at the final dim "
                  "(here axis=%s; NKI 0.2 read axis=1 of a 3-D/4-D tile as the last dim, "
                  "0.3 refuses it): move the dim to reduce last first" % (
                      " or ".join(forms) if len(forms) < 3 else
                      ", ".join(forms[:-1]) + " or " + forms[-1]))
    return ax
