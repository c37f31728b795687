"""Dtype reinterpretation of a tensor's storage: NKI's `tensor.view(dtype)`
(alias `reinterpret_cast`) and `.ap(pattern, dtype=)` (docs/python.md "NKI
0.x tensor views").

The same bytes read as another dtype.  A view is an NkiTensor over a
_ViewBase: the base tensor seen as an array of the new dtype (its last dim
scaled by the ratio of the element sizes, as NKI's view), whose offset and
[step, count] pairs count elements of that dtype.  Such an operand is
written as the kernel format's raw access pattern with a "dtype"
(docs/kernel-format.md), which the compiler takes on direct DMA operands
(load / store / dma_copy) and refuses elsewhere."""
from ._alloc import _DT_BYTES
from ._lin import Lin
from ._trace import NkiError, NkiTensor, _Base


class _ViewBase(_Base):
    """tensor `orig`'s storage as dtype: same name, buffer and kind; the
    trace's per-tensor records (scope, PSUM accumulation groups) stay the
    original's."""
    __slots__ = ("orig",)

    def __init__(self, orig, dtype, shape):   # no _Base.__init__: dead / groups / off are orig's
        self.orig = orig
        self.name, self.shape, self.dtype = orig.name, shape, dtype
        self.buffer, self.kind, self.loc = orig.buffer, orig.kind, orig.loc
        self.depth, self.nblk = orig.depth, 0
        self.rot = self.blocks = self.addrs = None

    dead = property(lambda self: self.orig.dead)
    off = property(lambda self: self.orig.off)
    groups = property(lambda self: self.orig.groups,
                      lambda self, g: setattr(self.orig, "groups", g))


def _size(t, what, dt):
    n = _DT_BYTES.get(dt)
    if n is None:
        raise NkiError("%s of '%s': tpbsim has no element size for dtype %s" %
                       (what, t.base.name, dt))
    return n


def _fail(t, what, why):
    raise NkiError("%s of '%s' %s (%s): %s" % (what, t.base.name, list(t.shape), t.dtype, why))


def _view_base(t, what, dt):
    """t's base tensor (the original storage) seen as dtype dt."""
    base = t.base
    orig = base.orig if isinstance(base, _ViewBase) else base
    if orig.dtype == dt:
        return orig
    if orig.nblk or orig.rot is not None or orig.blocks is not None or orig.kind == "split":
        _fail(t, what, "a tile with block dims cannot be reinterpreted by tpbsim (declare it "
                       "without block dims)")
    old, new = _size(t, what, orig.dtype), _size(t, what, dt)
    shape = tuple(orig.shape)
    if (shape[-1] * old) % new == 0:   # NKI: the last dim scaled by the size ratio
        shape = shape[:-1] + (shape[-1] * old // new,)
    else:   # C order is all the kernel format needs: the row (a tile) or the whole flattened
        lead = 1 if orig.kind == "tile" else 0
        n = 1
        for s in shape[lead:]:
            n *= s
        if (n * old) % new:
            _fail(t, what, "%s bytes (%d) are not a multiple of the %d-byte %s elements" % (
                "a partition's" if lead else "its", n * old, new, dt))
        shape = shape[:lead] + (n * old // new,)
    return _ViewBase(orig, dt, shape)


def _offset(t, what, off, old, new):
    """An element offset of old-size elements in elements of new size."""
    if old <= new:
        if isinstance(off, Lin):
            if off.loop_trace() is not None:
                from . import _trace
                _trace.need_retrace()   # traced per iteration: then a plain int
            _fail(t, what, "the offset depends on nl.program_id(); tpbsim reinterprets a view "
                           "to a larger dtype at a constant offset only")
        if (off * old) % new:
            _fail(t, what, "the view starts at byte %d, not a multiple of the %d-byte elements"
                  % (off * old, new))
        return off * old // new
    return off * (old // new)


def _plain(t, what):
    if t._oob is not None:
        raise t._oob[0]
    if t._pd:
        _fail(t, what, "the view keeps block dims before its partition dim (index the blocks "
                       "first: t[i])")
    if t.is_indirect():
        _fail(t, what, "not supported after a dynamic / vector select (NKI's rule)")


def view(t, dtype):
    """NKI tensor.view(dtype): the bytes of t as dtype; the last dim (which
    must be contiguous) scaled by the ratio of the element sizes."""
    from .language import _dtype
    dt = _dtype(dtype)
    if dt == t.dtype:
        return t
    what = "view(%s)" % dt
    _plain(t, what)
    old, new = _size(t, what, t.dtype), _size(t, what, dt)
    vb = _view_base(t, what, dt)
    ap = [list(p) for p in t._ap]
    step, cnt = ap[-1]
    if step != 1 and cnt != 1:
        _fail(t, what, "the last dim must be contiguous (step 1, got %d)" % step)
    if old == new:
        return NkiTensor(vb, t.offset, ap)
    if new > old:
        r = new // old
        if cnt % r:
            _fail(t, what, "the last dim's size %d is not a multiple of %d (the size ratio)" %
                  (cnt, r))
        for d, (s, c) in enumerate(ap[:-1]):
            if s % r:
                _fail(t, what, "dim %d steps by %d elements, not a multiple of %d (the size "
                               "ratio)" % (d, s, r))
            ap[d][0] = s // r
        ap[-1] = [1, cnt // r]
    else:
        r = old // new
        for d in range(len(ap) - 1):
            ap[d][0] *= r
        ap[-1] = [1, cnt * r]
    return NkiTensor(vb, _offset(t, what, t.offset, old, new), ap)


def retype(t, dtype, scalar_offset=None, vector_offset=None):
    """For .ap(pattern, dtype=): t's storage as dtype, its offset converted
    (the pattern is .ap's own, in elements of dtype); t when dtype is its
    dtype."""
    from .language import _dtype
    try:
        dt = _dtype(dtype)
    except Exception:   # a dtype tpbsim has no NumPy type for (trn3's float8_e5m2_x4)
        dt = None
    what = ".ap(dtype=%s)" % (dt or getattr(dtype, "name", dtype))
    if dt is None:
        _fail(t, what, "tpbsim has no such dtype")
    if dt == t.dtype:
        return t
    _plain(t, what)
    if scalar_offset is not None or vector_offset is not None:
        _fail(t, what, "a reinterpretation with scalar_offset / vector_offset (an indirect "
                       "access) is not supported by tpbsim")
    old, new = _size(t, what, t.dtype), _size(t, what, dt)
    vb = _view_base(t, what, dt)
    return NkiTensor(vb, _offset(t, what, t.offset, old, new), [[1, 1]])


def dtype_json(base):
    """The kernel format's "dtype" member of a raw operand of base ("" when
    it is no reinterpretation)."""
    return ', "dtype": "%s"' % base.dtype if isinstance(base, _ViewBase) else ""


def vector_transpose(dst, src):
    """(dst, src) as 2-D views of one copy, when dma_transpose moves a
    vector: a dtype view on either side (which the compiler takes on direct
    copies only) and at most one dim of more than one element on each, the
    same count (topk_reduce transposes each row's int32 token index, a
    [TK, 1, 1, 1] int32 view of its bf16 rows, into a [1, TK] tile).  Every
    element keeps its place in the flat order, so the transpose is that
    copy; None otherwise."""
    if not all(type(t) is NkiTensor for t in (dst, src)):
        return None
    if not any(isinstance(t.base, _ViewBase) for t in (dst, src)):
        return None
    runs = []
    for t in (dst, src):
        big = [p for p in t._ap if p[1] != 1]
        if len(big) > 1:
            return None
        runs.append(big[0] if big else [1, 1])
    if runs[0][1] != runs[1][1]:
        return None
    lead = dst._ap[0][1] != 1   # dst's run on its partitions, else along a free dim
    out = []
    for t, run in zip((dst, src), runs):
        ap = [list(run), [1, 1]] if lead else [[run[0] * run[1], 1], list(run)]
        out.append(NkiTensor(t.base, t.offset, ap))
    return out
