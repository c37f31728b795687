"""mode= of nl.load / nl.store: NKI beta-1's out-of-bounds mode of the
DMA (an nki.isa.oob_mode; the two take it through their **kwargs, which
their docs do not list).  NxDI's paged-attention kernel gathers KV-cache
blocks with `buf[i_p, i_f] = nl.load(key_cache[block_tables[...], i_f],
mode=oob_mode.skip)`: a row whose index is out of range is not moved, so
buf keeps its contents there.  oob_mode.error is the default DMA; skip
goes through nisa.dma_copy(oob_mode=skip), which writes it for the
indirect accesses (a[idx_tile, cols], .ap(vector_offset=), a run-time
select) and takes it as a no-op on a direct one (nothing to skip: its
bounds are checked when traced)."""
from . import _trace
from ._trace import NkiError, NkiTensor


def skips(mode, fn, loc):
    """Whether mode (an isa.oob_mode, or NKI's integer value of one; None:
    error) is oob_mode.skip; anything else raises, naming it."""
    if mode is None:
        return False
    from . import isa
    m = isa._enum_of(isa.oob_mode, mode, "%s: mode" % fn, loc)
    if not isinstance(m, isa.oob_mode):
        raise NkiError("%s: %s: mode=%r is not an nki.isa.oob_mode (oob_mode.error or "
                       "oob_mode.skip)" % (loc, fn, mode))
    return m is isa.oob_mode.skip


def _caller(fn):
    from . import language
    return getattr(language, fn).__code__


def _refuse_mask(mask, fn, loc):
    if mask is not None:
        raise NkiError("%s: %s: mode=oob_mode.skip together with mask= is not supported by "
                       "tpbsim" % (loc, fn))


def load_skip(src, dtype, mask, loc):
    """nl.load(src, mode=oob_mode.skip): a new SBUF tile, written by one
    nisa.dma_copy(oob_mode=skip); the rows it skips are left unwritten.
    Assigned (`x[...] = nl.load(...)`), the DMA writes x in place
    (_beta1._retarget), so there the skipped rows keep x's contents; where
    it cannot, the assignment raises (check_copy) rather than copy the
    unwritten rows into x."""
    from . import isa
    from .language import _dtype, sbuf
    _refuse_mask(mask, "nl.load", loc)
    tr = _trace.current()
    t = tr.new_tensor(src.shape, _dtype(dtype) if dtype else src.dtype, sbuf, "", loc)
    _trace.SKIP.update((load_skip.__code__, _caller("load")))   # dma_copy's loc: the kernel's
    isa.dma_copy(dst=t, src=src, oob_mode=isa.oob_mode.skip)
    tr.b1_skip = (t.base, loc)
    return t


def store_skip(dst, value, mask, loc):
    """nl.store(dst, value, mode=oob_mode.skip): nisa.dma_copy(dst, value,
    oob_mode=skip) (a scatter `out[idx_tile, cols]` leaves the rows of an
    index out of range as they were)."""
    from . import isa
    _refuse_mask(mask, "nl.store", loc)
    if not isinstance(value, NkiTensor):
        raise NkiError("%s: nl.store: mode=oob_mode.skip needs a tile value, got %r" %
                       (loc, value))
    dst, value = _trace.dma_sides(dst, value)
    _trace.SKIP.update((store_skip.__code__, _caller("store")))
    isa.dma_copy(dst=dst, src=value, oob_mode=isa.oob_mode.skip)


def check_copy(tr, target, value, loc):
    """Called by assign when value is copied into target (not written in
    place): refused for the result of nl.load(mode=oob_mode.skip), whose
    skipped rows would overwrite target's with unwritten ones."""
    rec = getattr(tr, "b1_skip", None)
    if rec is not None and rec[0] is value.base:
        raise NkiError("%s: assignment to '%s' of nl.load(..., mode=oob_mode.skip) at %s: the "
                       "load cannot write '%s' in place here (a dtype conversion, a named "
                       "result or an HBM target), so the rows it skips would not keep their "
                       "contents; not supported by tpbsim (assign the nl.load call itself, "
                       "in the target's dtype)" % (loc, target.base.name, rec[1],
                                                   target.base.name))
