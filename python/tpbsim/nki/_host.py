"""Host-side helpers of nki.language that work on NumPy arrays, not on
kernel tiles (used by NKI's unit tests to prepare inputs)."""
import numpy as np

from ._trace import NkiError, NkiTensor

# significant bits and smallest normal exponent (frexp convention) of the
# narrow floats NumPy has no dtype for
_NARROW = {"bfloat16": (8, -125)}


def _round_narrow(a, bits, emin):
    """a (float64) rounded to `bits` significant bits, round half to even,
    subnormals below 2**(emin-1) keeping the smallest normal's quantum."""
    _, e = np.frexp(a)
    q = np.maximum(e, emin) - bits   # log2 of the quantum of each element
    with np.errstate(invalid="ignore", over="ignore"):
        r = np.ldexp(np.round(np.ldexp(a, -q)), q)
    return np.where(np.isfinite(a), r, a).astype(np.float32)


def static_cast(x, dtype):
    """NKI's nl.static_cast(array, dtype) on a NumPy array: the values
    converted to dtype (round to nearest even).  bfloat16 / float8 give
    arrays of tpbsim's NumPy dtypes for them (python/tpbsim/_ndtypes.py, as
    NKI's are ml_dtypes arrays); without that module, bfloat16 gives an
    nki.typed input: float32 values exactly representable in bfloat16,
    marked as bfloat16, so that a kernel given it sees a bfloat16 tensor."""
    from .. import _ndtypes
    from . import language, typed
    if isinstance(x, NkiTensor):
        raise NkiError("nl.static_cast converts NumPy arrays on the host; in a kernel use "
                       "nl.copy(x, dtype=...) or nisa.tensor_copy")
    d = language._dtype(dtype)
    a = x.array if isinstance(x, typed) else np.asarray(x)
    nd = _ndtypes.numpy_dtype(d)
    if nd is not None:
        return a.astype(nd)
    if d in _NARROW:
        return typed(_round_narrow(a.astype(np.float64), *_NARROW[d]), d)
    try:
        return a.astype(np.dtype(d))
    except TypeError:
        raise NkiError("nl.static_cast: NumPy has no dtype %s and tpbsim cannot round to it "
                       "(bfloat16 is supported)" % d) from None
