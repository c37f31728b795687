"""Compare a stored tile with its model's (expected, kind, arg)."""
import numpy as np

from .numerics import as64, ulp


def _bad(a, e, kind, arg, dtype):
    both_nan = np.isnan(a) & np.isnan(e)
    if kind == "exact":
        return ~((a == e) | both_nan)
    tol = arg * ulp(e, dtype) if kind == "ulp" else arg
    with np.errstate(invalid="ignore"):
        # equal infinities match whatever the tolerance (inf - inf is NaN)
        return ~((np.abs(a - e) <= tol) | both_nan | ((a == e) & np.isinf(e)))


def compare(act, exp, kind, arg, dtype):
    """(ok, detail): detail names the count of bad elements and the first."""
    a = as64(act)
    e = np.asarray(exp, np.float64)
    note = ""
    if a.shape != e.shape:
        if a.size != e.size:
            return False, "SHAPE %s vs expected %s" % (act.shape, e.shape)
        a = a.reshape(e.shape)
        note = " (shape %s vs %s)" % (act.shape, e.shape)
    bad = _bad(a, e, kind, arg, dtype)
    nb = int(bad.sum())
    if nb == 0:
        return True, note
    i = tuple(np.argwhere(bad)[0])
    return False, "%d/%d bad, first at %s: got %r expected %r%s" % (
        nb, bad.size, i, float(a[i]), float(e[i]), note)
