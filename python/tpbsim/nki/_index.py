"""Index expressions of tpbsim.nki.language: nl.arange(n) placed on an
axis, nl.mgrid (dense), their integer-affine combinations, and the
comparisons of them that mask= takes (docs/python.md "Index
expressions", "mask= on nl functions")."""
import types
import warnings

import numpy as np

from . import _trace
from ._trace import Lin, NkiError


def no_loop_iterator(t, key):
    """t[key] with a generator in key -- what nl.affine_range /
    sequential_range return in a kernel (nkipy's playground indexes with
    them): NKI documents them as loop iterators (an alias of Python's
    range) and gives no meaning to indexing with one, so this raises."""
    for k in key if type(key) is tuple else (key,):
        if isinstance(k, types.GeneratorType):   # inspect.isgenerator, without the call
            raise NkiError("'%s'[...]: an index is a generator, such as nl.affine_range(n) / "
                           "nl.sequential_range(n) return: those are loop iterators (`for i in "
                           "nl.affine_range(n)`), not indices; index with slices (a[0:n, 0:m]) "
                           "or nl.arange (nl.arange(n)[:, None], nl.arange(m)[None, :])"
                           % t.base.name)


# ---- index expressions for mask= (NKI: i_p = nl.arange(P)[:, None]) ----

_CMP_OPS = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
            "eq": "equal", "ne": "not_equal"}


class IndexExpr:
    """c + sum(coef[axis] * index[axis]): nl.arange(n) placed on an axis by
    indexing ([:, None] = the partition axis, [None, :] = free axis 1, ...),
    and integer-affine combinations of such.  Comparing two gives an
    IndexPredicate; `&` of predicates an IndexMask (mask= only)."""
    __slots__ = ("c", "coef", "ndim", "sizes")
    _nki_index = True   # NkiTensor indexing maps it to a slice (_beta1.index_key)

    def __init__(self, c=0, coef=None, ndim=None, sizes=None):
        # sizes: per axis the nl.arange size placed on it (-1: two differ)
        self.c, self.coef, self.ndim, self.sizes = c, dict(coef or {}), ndim, sizes or {}

    def __getitem__(self, key):
        if self.coef != {None: 1} or self.c:
            raise NkiError("index: only a bare nl.arange(n) is placed on an axis ([:, None])")
        key = key if isinstance(key, tuple) else (key,)
        axes = [i for i, k in enumerate(key) if isinstance(k, slice)]
        if len(axes) != 1 or any(k is not None and not isinstance(k, slice) for k in key):
            raise NkiError("index: place nl.arange(n) with one ':' and Nones, e.g. [:, None], "
                           "got %r" % (key,))
        return IndexExpr(0, {axes[0]: 1}, len(key), {axes[0]: self.sizes[None]})

    def shape(self):
        """The tile shape the expression spans (axes without an index are
        1), or None when two sizes on one axis differ."""
        s = tuple(self.sizes.get(d, 1) for d in range(self.ndim or 0))
        return None if -1 in s else s

    @staticmethod
    def _of(x):
        if isinstance(x, IndexExpr):
            return x
        if isinstance(x, Lin):
            # a loop variable or a program id: the offset is an expression
            return IndexExpr(x)
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
            raise NkiError("index expressions combine with integers only, got %r" % (x,))
        return IndexExpr(int(x))

    def _lin(self, o, k):
        o = IndexExpr._of(o)
        coef = dict(self.coef)
        for a, v in o.coef.items():
            coef[a] = coef.get(a, 0) + k * v
        nd = self.ndim if self.ndim is not None else o.ndim
        if self.ndim is not None and o.ndim is not None and self.ndim != o.ndim:
            raise NkiError("index expressions over %d and %d axes" % (self.ndim, o.ndim))
        sizes = dict(self.sizes)
        for a, n in o.sizes.items():
            sizes[a] = n if sizes.get(a, n) == n else -1
        return IndexExpr(self.c + k * o.c, coef, nd, sizes)

    def __add__(self, o):
        return self._lin(o, 1)

    __radd__ = __add__

    def __sub__(self, o):
        return self._lin(o, -1)

    def __rsub__(self, o):
        return IndexExpr._of(o)._lin(self, -1)

    def __neg__(self):
        return IndexExpr(-self.c, {a: -v for a, v in self.coef.items()}, self.ndim, self.sizes)

    def __mul__(self, o):
        if isinstance(o, bool) or not isinstance(o, (int, np.integer)):
            raise NkiError("index expressions multiply by integers only, got %r" % (o,))
        o = int(o)
        return IndexExpr(self.c * o, {a: v * o for a, v in self.coef.items()}, self.ndim,
                         self.sizes)

    __rmul__ = __mul__

    def _cmp(self, o, op):
        return IndexPredicate(self - o, op)

    def __lt__(self, o):
        return self._cmp(o, "lt")

    def __le__(self, o):
        return self._cmp(o, "le")

    def __gt__(self, o):
        return self._cmp(o, "gt")

    def __ge__(self, o):
        return self._cmp(o, "ge")

    def __eq__(self, o):
        return self._cmp(o, "eq")

    def __ne__(self, o):
        return self._cmp(o, "ne")

    __hash__ = object.__hash__

    def __bool__(self):
        raise NkiError("an index expression has no truth value at trace time (use it in mask=)")


def _mask_truth():
    warnings.warn("a mask comparison used as a truth value is true (as in NKI): "
                  "'a and b' keeps only b; combine masks with &", stacklevel=3)
    return True


def _no_or(a, b):
    """`|` of mask comparisons: NKI's masks are one comparison or several
    joined with `&` (beta-1 docs, "NKI API Masking"); a union is not one."""
    raise NkiError("`|` of index comparisons: a mask (or an nl.where condition on "
                   "indices) joins comparisons with & only, all of them holding, as NKI's "
                   "masks: `mask=(i_p < n)` or `mask=(i_p < n) & (i_f < m)`; keep the "
                   "comparison that decides it, or split the op in two with disjoint masks")


class IndexPredicate:
    """expr CMP 0 over dst's indices: one affine predicate (one PredExt)."""
    __slots__ = ("e", "op")
    __or__ = __ror__ = _no_or

    def __init__(self, e, op):
        self.e, self.op = e, op

    def __and__(self, o):
        return IndexMask([self]) & o

    __rand__ = __and__

    def __bool__(self):
        # Python's `a and b` returns one of its operands; NKI's own test
        # (nc_match_replace8, `mask=(ix < n and iy < m)`) only passes with
        # b, so NKI takes a comparison as true: `a and b` is b, `a or b`
        # is a.  The same here, with a warning (docs/python.md)
        return _mask_truth()

    def always(self):
        """Whether the comparison holds at every index of its grid (a
        bound the indices never reach)."""
        e = self.e
        if type(e.c) is not int or None in e.coef:
            return False
        lo = hi = e.c
        for a, v in e.coef.items():
            n = e.sizes.get(a, -1)
            if n <= 0:
                return False
            lo, hi = (lo, hi + v * (n - 1)) if v > 0 else (lo + v * (n - 1), hi)
        return {"lt": hi < 0, "le": hi <= 0, "gt": lo > 0, "ge": lo >= 0,
                "eq": lo == hi == 0, "ne": hi < 0 or lo > 0}[self.op]

    def kernel_pred(self, shape):
        e = self.e
        if e.ndim is not None and e.ndim != len(shape):
            raise ValueError("the mask indexes %d axes but dst has %d" % (e.ndim, len(shape)))
        if None in e.coef and e.coef[None]:
            raise ValueError("nl.arange(n) must be placed on an axis ([:, None] / [None, :])")
        bad = [a for a in e.coef if a is not None and not 0 <= a < len(shape)]
        if bad:
            raise ValueError("axis %d is not an axis of dst %s" % (bad[0], list(shape)))
        return {"pattern": [[e.coef.get(d, 0), int(shape[d])] for d in range(1, len(shape))],
                "offset": e.c, "channel_multiplier": e.coef.get(0, 0),
                "cmp_op": _CMP_OPS[self.op]}


class IndexMask:
    """An AND of IndexPredicates (at most 4: one PredExt each)."""
    __slots__ = ("preds",)
    __or__ = __ror__ = _no_or

    def __init__(self, preds):
        self.preds = list(preds)

    def __and__(self, o):
        if isinstance(o, (bool, np.bool_)):   # a condition on loop variables only
            return self if o else False   # False: the op is masked off (_beta1.whole_mask)
        if isinstance(o, IndexPredicate):
            return IndexMask(self.preds + [o])
        if isinstance(o, IndexMask):
            return IndexMask(self.preds + o.preds)
        raise NkiError("a mask combines with another mask comparison, got %r" % (o,))

    __rand__ = __and__

    def __bool__(self):
        return _mask_truth()

    def kernel_mask(self, shape):
        if len(self.preds) > 4:
            raise ValueError("%d comparisons ANDed (at most 4)" % len(self.preds))
        return [p.kernel_pred(shape) for p in self.preds]


IndexPredicate.kernel_mask = lambda self, shape: self.kernel_pred(shape)


def arange(*args):
    """nl.arange(n) (or arange(0, n)): an index for mask=, placed on an axis
    by indexing: nl.arange(P)[:, None] (partitions), nl.arange(F)[None, :]."""
    r = range(*args)
    _trace.beta1_form()
    if r.step != 1 or r.start != 0:
        raise NkiError("nl.arange: only arange(n) / arange(0, n) (add an offset to the "
                       "expression instead)")
    return IndexExpr(0, {None: 1}, None, {None: len(r)})


class _MGrid:
    """nl.mgrid[0:P, 0:F, ...]: one IndexExpr per axis (`.p`, `.x`, `.y`,
    `.z`, or unpacked `ip, ix = nl.mgrid[...]`), each starting at its
    slice's start: index tensors with them (`t[g.p, g.x]`: a slice per
    dim) or use them in mask= / iota."""

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        _trace.beta1_form()
        nd = len(key)
        rs = []
        for d, k in enumerate(key):
            if not isinstance(k, slice) or k.step not in (None, 1):
                raise NkiError("nl.mgrid: expected slices start:stop (step 1), got %r" % (k,))
            r = range(*k.indices(1 << 62)) if k.stop is not None else None
            if r is None or len(r) == 0:
                raise NkiError("nl.mgrid: axis %d: %r is empty or has no stop" % (d, k))
            rs.append(r)
        # dense, as NumPy's mgrid: each index spans the whole grid (nl.iota
        # of one of them, or of a sum of some, fills the grid's shape)
        sizes = {d: len(r) for d, r in enumerate(rs)}
        return _Grid(IndexExpr(r.start, {d: 1}, nd, sizes) for d, r in enumerate(rs))


class _Grid(tuple):
    """The axes of nl.mgrid[...] (a tuple, so it unpacks), also as .p .x .y .z."""
    p = property(lambda self: self[0])
    x = property(lambda self: self[1])
    y = property(lambda self: self[2])
    z = property(lambda self: self[3])


mgrid = _MGrid()


def reduce_axes(nd, reduced, nd_out):
    """The input axis -> dst axis map (to_dst) of a reduction of an nd-D
    input over the axes `reduced` into an nd_out-D dst: a dst that keeps
    the reduced axes (keepdims, or NKI's [P, 1] for [P]) keeps every axis
    where it is, else the kept axes close up; the reduced ones map to None."""
    kept = [d for d in range(nd) if d not in reduced]
    return {d: None if d in reduced else d if nd_out == nd else kept.index(d)
            for d in range(nd)}


def to_dst(mask, to, nd_out, fn, loc):
    """An index mask of an op whose dst axes are not its input's in order
    (a transpose, a reduction) over dst's axes.  NKI's mask= bounds the
    indices "along one of the input tile axes": to[a] is the dst axis of
    input axis a, None for one the op drops (reduced).  A comparison that
    holds over the whole grid is dropped.  (the comparisons on kept axes
    renumbered to dst's, as an IndexMask or None; those on a dropped axis)."""
    preds = mask.preds if isinstance(mask, IndexMask) else [mask]
    if [p for p in preds if not isinstance(p, IndexPredicate)]:
        raise NkiError("%s: %s: argument 'mask': expected comparisons of nl.arange / nl.mgrid "
                       "indices, got %r" % (loc, fn, mask))
    kept, dropped = [], []
    for p in preds:
        e = p.e
        if p.always():
            continue
        if e.ndim is not None and e.ndim != len(to):
            raise NkiError("%s: %s: argument 'mask': the mask indexes %d axes but the input "
                           "has %d" % (loc, fn, e.ndim, len(to)))
        axes = [a for a, v in e.coef.items() if v]
        if any(a is not None and to[a] is None for a in axes if a in to):
            dropped.append(p)
            continue
        m = {a: to.get(a, a) if a is not None else None for a in axes}
        kept.append(IndexPredicate(IndexExpr(e.c, {m[a]: e.coef[a] for a in axes}, nd_out,
                                             {m[a]: e.sizes[a] for a in axes if a in e.sizes}),
                                   p.op))
    return (IndexMask(kept) if kept else None), dropped
