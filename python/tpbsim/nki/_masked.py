"""nl.load / nl.store masks that are not a rectangle (NKI beta-1): a
comparison over two indices (the flat offset `512 * i_p + i_f < n` of
nki-samples' tutorial add kernel), a bound that depends on
nl.program_id(), `==` / `!=`.  A DMA has no per-element predicate, so the
masked elements are picked by an engine copy that has one (the kernel
format's `mask`, one PredExt per comparison):

- load: the rectangle the mask's one-index bounds keep is DMA'd into a
  staging tile, and a tensor_copy masked by every comparison writes the
  result tile: only the masked elements are written, the others are left
  unwritten, as NKI leaves them.
- store: a read-modify-write of dst.  The rectangle of dst is DMA'd into a
  staging tile, a masked tensor_copy puts value's masked elements over it,
  and the tile is DMA'd back, so dst's other elements keep their values.
  On a multi-core grid (nl.nc) another core may write those elements
  meanwhile, so that is refused.

docs/python.md "mask= on nl functions"."""
from . import _trace
from ._trace import NkiError


def _tile_like(shape, dtype, loc):
    from .language import sbuf
    return _trace.current().new_tensor(shape, dtype, sbuf, "", loc)


def _masked_copy(dst, src, preds, loc):
    from . import isa
    from .language import IndexMask
    keep = [p for p in preds if not p.always()]
    if not keep:
        isa._emit("tensor_copy", loc, [("dst", dst.text()), ("src", src.text())])
        return
    isa._emit("tensor_copy", loc, isa._mask([("dst", dst.text()), ("src", src.text())],
                                            IndexMask(keep), loc, dst))


def _need_dims(preds, shape, fn, loc):
    for p in preds:
        if p.e.ndim is not None and p.e.ndim != len(shape):
            raise NkiError("%s: %s: argument 'mask': the mask indexes %d axes but the tile "
                           "has %d" % (loc, fn, p.e.ndim, len(shape)))


def load(shape, dtype, part, rect, preds, loc):
    """A new tile of shape, written where preds (all of the mask's
    comparisons) hold: part, src's view over rect (the one-index bounds'
    rectangle), staged.  The masked copy is the last op, after the tile's
    declaration, so `x[...] = nl.load(..., mask=)` writes x (_retarget)."""
    from . import isa
    _need_dims(preds, shape, "nl.load", loc)
    stage = _tile_like(shape, dtype, loc)
    isa._emit("dma_copy", loc, [("dst", stage[rect].text()), ("src", part.text())])
    t = _tile_like(shape, dtype, loc)
    _masked_copy(t, stage, preds, loc)
    return t


def store(dst, value, mask, loc):
    """dst[mask] <- value[mask]: the read-modify-write above."""
    from . import isa
    from ._beta1 import _mask_preds, mask_bounds, mask_restrict
    if not isinstance(value, _trace.NkiTensor) or not value._onchip():
        raise NkiError("%s: nl.store: argument 'mask': a mask that is not a rectangle needs "
                       "an SBUF/PSUM value, got %r" % (loc, value))
    if "nc(" in _trace.current().grid_json:
        raise NkiError("%s: nl.store: argument 'mask': a mask that is not a rectangle (over "
                       "two indices, or depending on nl.program_id()) is stored as a "
                       "read-modify-write of dst, which another core of this multi-core grid "
                       "may write meanwhile -- not supported by tpbsim" % loc)
    rect = mask_bounds(dst, mask, "nl.store", "dst", loc, None, [])
    preds = _mask_preds(dst, mask, "nl.store", loc)
    _need_dims(preds, value.shape, "nl.store", loc)
    if list(dst.shape) != list(value.shape):
        raise NkiError("%s: nl.store: dst %s and value %s differ in shape" %
                       (loc, list(dst.shape), list(value.shape)))
    if any(r.stop <= r.start for r in rect):
        return   # all masked off
    part = mask_restrict(dst, rect)
    stage = _tile_like(value.shape, dst.dtype, loc)
    isa._emit("dma_copy", loc, [("dst", stage[rect].text()), ("src", part.text())])
    _masked_copy(stage, value, preds, loc)
    isa._emit("dma_copy", loc, [("dst", part.text()), ("src", stage[rect].text())])


def rectangle(t, mask, fn, what, loc):
    """Whether mask is bounds on single indices (nl.store's rectangle)."""
    from ._beta1 import mask_bounds
    rest = []
    mask_bounds(t, mask, fn, what, loc, None, rest)
    return not rest
