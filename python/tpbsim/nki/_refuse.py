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
