"""nl.where(condition, x, y) whose condition is an index predicate: a
comparison of nl.arange / nl.mgrid expressions (`i_q >= i_k`, a causal
mask), an `&` of such (`mask_p & mask_f`), or a condition on loop
variables only (a bool).  NKI beta-1 does not restrict the condition to
tiles (docs/python.md "Tile arithmetic").

- A comparison that holds at every index is dropped; one that holds at
  none, or a bool, picks x or y whole (a memset or a tensor_copy).
- y a number and x an SBUF tile of the result's shape: one affine_select
  per comparison, chained (NKI's nisa.affine_select; the elements where
  the comparison fails take y).
- Otherwise a uint8 predicate tile of the result's shape: memset 1, then
  one affine_select per comparison clearing where it fails; then the
  select of a tile condition (where_tile below)."""
import json

import numpy as np

from ._index import IndexExpr, IndexMask, IndexPredicate
from ._trace import NkiError, NkiTensor
from . import _trace

_NOT = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}


class _Shape:
    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = tuple(shape)


def _preds(cond, loc):
    """cond's comparisons, or a bool for a condition on loop variables only."""
    if isinstance(cond, (bool, np.bool_)):
        return bool(cond)
    if isinstance(cond, IndexExpr):   # NumPy's truth: non-zero
        cond = IndexPredicate(cond, "ne")
    if isinstance(cond, IndexPredicate):
        return [cond]
    if isinstance(cond, IndexMask):
        return list(cond.preds)
    raise NkiError("%s: nl.where: condition must be a tile or comparisons of nl.arange / "
                   "nl.mgrid indices (an & of them), got %r" % (loc, cond))


def _pred_shape(p, loc):
    e = p.e
    if e.coef.get(None):
        raise NkiError("%s: nl.where: condition: nl.arange(n) must be placed on an axis "
                       "([:, None] / [None, :])" % loc)
    s = e.shape()
    if s is None:
        raise NkiError("%s: nl.where: condition: an axis holds nl.arange indices of two "
                       "sizes" % loc)
    return s


def where(condition, x, y, dtype, mask, off, loc):
    """language.where for a condition that is not a tile (module doc);
    mask, off: where's mask= as _beta1.whole_mask gave them."""
    from . import language
    from ._beta1 import skipped
    preds = _preds(condition, loc)
    vals = [v for v in (x, y) if isinstance(v, NkiTensor)]
    shapes = [_Shape(s) for s in (_pred_shape(p, loc) for p in preds) if s] \
        if isinstance(preds, list) else []
    if not vals and (dtype is None or not shapes):
        raise NkiError("%s: nl.where: x or y must be a tile (or give dtype= with a condition "
                       "on indices)" % loc)
    out = tuple(language._broadcast_shape("where", shapes + vals, loc))
    dt = (language._dtype(dtype) if dtype else
          language._promoted([language._dtype(v.dtype) for v in vals]))
    if off:
        return skipped(out, dt, language.sbuf)
    if isinstance(preds, list):
        if any(IndexPredicate(p.e, _NOT[p.op]).always() for p in preds):
            preds = False
        else:
            preds = [p for p in preds if not p.always()] or True
    if isinstance(preds, bool):
        return _whole(x if preds else y, out, dt, mask, loc)
    try:
        kp = [p.kernel_pred(out) for p in preds]
    except ValueError as e:
        raise NkiError("%s: nl.where: condition: %s" % (loc, e)) from None
    if (mask is None and not isinstance(y, NkiTensor) and isinstance(x, NkiTensor) and
            tuple(x.shape) == out and x.buffer == language.sbuf and not x._pd and
            language._dtype(x.dtype) == dt):
        r = _trace.current().new_tensor(out, dt, language.sbuf, "", loc)
        src = x
        for m in kp:
            _affine_select(r, src, m, y, loc)
            src = r
        return r
    c = _trace.current().new_tensor(out, "uint8", language.sbuf, "", loc)
    from . import isa
    isa._emit("memset", loc, [("dst", c.text()), ("value", "1")])
    for m in kp:
        _affine_select(c, c, m, 0, loc)
    return where_tile(c, x, y, dtype, mask, False, loc)


def _affine_select(dst, on_true, m, on_false, loc):
    from . import isa
    isa._emit("affine_select", loc, [
        ("dst", dst.text()), ("on_true", on_true.text()),
        ("pattern", json.dumps([[int(a), int(b)] for a, b in m["pattern"]])),
        ("offset", isa._intf(m["offset"])),
        ("channel_multiplier", str(int(m["channel_multiplier"]))),
        ("cmp_op", '"%s"' % m["cmp_op"]),
        ("on_false_value", isa._scalar(on_false, "y", loc))])


def _whole(v, out, dt, mask, loc):
    """A new tile of out holding v (a number, or a tile broadcast to out)."""
    from . import isa, language
    t = _trace.current().new_tensor(out, dt, language.sbuf, "", loc)
    if isinstance(v, NkiTensor):
        src = language._step0(language._partitions("where", v, out, loc), out)
        f = [("dst", t.text()), ("src", src.text())]
        isa._emit("tensor_copy", loc, isa._mask(f, mask, loc, t))
    else:
        f = [("dst", t.text()), ("value", isa._scalar(v, "x", loc))]
        isa._emit("memset", loc, isa._mask(f, mask, loc, t))
    return t


def where_tile(condition, x, y, dtype, mask, off, loc):
    """nl.where of a tile condition: one select (language.where's body)."""
    from . import isa, language
    from ._beta1 import skipped
    from ._psum_pair import off_psum
    L = language
    vals = [v for v in (x, y) if isinstance(v, NkiTensor)]
    if not vals and dtype is None:
        raise NkiError("%s: nl.where: x or y must be a tile (or give dtype=)" % loc)
    out = L._broadcast_shape("where", [condition] + vals, loc)
    condition, x, y = (L._step0(L._partitions("where", v, out, loc), out)
                       if isinstance(v, NkiTensor) else v for v in (condition, x, y))
    dt = L._dtype(dtype) if dtype else L._promoted([L._dtype(v.dtype) for v in vals])
    if off:
        return skipped(out, dt, L.sbuf)
    if not isinstance(x, NkiTensor):   # a [P, 1] column of x, read with step 0
        col = _trace.current().new_tensor((out[0],) + (1,) * (len(out) - 1), dt, L.sbuf, "",
                                          loc)
        isa._emit("memset", loc, [("dst", col.text()), ("value", isa._scalar(x, "x", loc))])
        x = L._step0(col, out)
    x = off_psum(condition, x, loc)   # on_true, pred: not both in PSUM
    t = _trace.current().new_tensor(out, dt, L.sbuf, "", loc)
    isa._emit("select", loc, isa._mask([("dst", t.text()), ("pred", condition.text()),
                                        ("on_true", x.text()),
                                        ("on_false", isa._scalar(y, "y", loc))], mask, loc, t))
    return t
