"""nisa.dma_copy of a run-time select (`.ap(scalar_offset=idx,
indirect_dim=d)`) with oob_mode.skip whose other side is an SBUF/PSUM
tile: the NKI Library's attention_block_tkg stores each row's new KV
tokens at a run-time cache slot and passes 2^32 - 1 for a padding row,
whose write NKI skips.  The access is written as the indirect (gather /
scatter) DMA it is: rows of the tensor seen as [N / stride, stride], row p
of the access at idx + p (the index tile built on the engines in float32,
every row outside [0, N / stride) moved to N / stride, past the last row,
so an index out of range is skipped however large or negative),
oob_mode.skip applied per row.  (Between two HBM tensors the kernel
format's register-offset dma_copy takes skip itself and skips the whole
copy, _views.dynamic_dma; the two agree unless the access is partly out
of range: docs/python.md "Run-time selects".)"""
from . import _trace
from ._trace import NkiError, NkiTensor


def rows_of(side, stride):
    """(n, m): the static access of side as n rows stride apart, m
    consecutive elements each inside one row; None when it is not."""
    pairs = [list(p) for p in side._ap if p[1] != 1]
    n = 1
    if pairs and pairs[0][0] == stride and len(pairs) > 1:
        n = pairs.pop(0)[1]
    m = 1
    for p in pairs:
        m *= p[1]
    if pairs and (pairs[-1][0] != 1 or any(a[0] != b[0] * b[1] for a, b in zip(pairs, pairs[1:]))):
        return None
    if not isinstance(side.offset, int) or side.offset % stride + m > stride:
        return None
    return n, m


def skip_dma(dst, src, side, loc, kw):
    """The skip-mode copy as an indirect DMA (see the module doc)."""
    from . import isa, language
    from ._indirect import view_rows
    index, stride, _ = side.dyn
    other = src if side is dst else dst
    shape = rows_of(side, stride)
    total = 1
    for s in side.base.shape:
        total *= int(s)
    rows = total // stride
    if shape is None or total % stride:
        raise NkiError("%s: dma_copy: oob_mode.skip with a run-time offset: tpbsim takes it on "
                       "rows of the offset's dim (pattern %s, stride %d)" % (loc, side._ap, stride))
    if rows >= 1 << 24:
        raise NkiError("%s: dma_copy: oob_mode.skip with a run-time offset: tpbsim builds the row "
                       "index in float32, exact below 2^24 rows (%d)" % (loc, rows))
    n, m = shape
    _trace.SKIP.update((skip_dma.__code__, isa.dma_copy.__code__, isa.tensor_copy.__code__,
                        isa.tensor_tensor.__code__, isa.tensor_scalar.__code__, isa.iota.__code__))
    f32 = language.float32
    one = language.ndarray((1, 1), dtype=f32, buffer=language.sbuf, name="skip_start")
    if not (isinstance(index.offset, int) and index.offset == 0):
        t = language.ndarray((1, 1), dtype=index.dtype, buffer=language.sbuf, name="skip_index")
        isa.dma_copy(dst=t, src=index)
        index = t
    isa.tensor_copy(dst=one, src=index)
    start = language.broadcast_to(one, (n, 1)) if n > 1 else one
    at = language.ndarray((n, 1), dtype=f32, buffer=language.sbuf, name="skip_rows")
    isa.iota(at, [[0, 1]], offset=0, channel_multiplier=1)
    isa.tensor_tensor(dst=at, data1=at, data2=start, op=language.add)
    # rows outside [0, rows) go to row `rows` (skipped): a negative start
    # (indexed_flatten's -1000000 for an unused slot) as well as a large one
    isa.tensor_scalar(dst=at, data=at, op0=language.maximum, operand0=-1.0,
                      op1=language.minimum, operand1=float(rows))
    neg = language.ndarray((n, 1), dtype=f32, buffer=language.sbuf, name="skip_neg")
    isa.tensor_scalar(dst=neg, data=at, op0=language.less, operand0=0.0,
                      op1=language.multiply, operand1=float(rows + 1))
    isa.tensor_tensor(dst=at, data1=at, data2=neg, op=language.add)
    idx = language.ndarray((n, 1), dtype=language.uint32, buffer=language.sbuf, name="skip_rows_u32")
    isa.tensor_copy(dst=idx, src=at)
    flat = NkiTensor(side.base, 0, [[stride, rows], [1, stride]])
    ind = view_rows(flat, side.offset, [[stride, n], [1, m]], idx, 0)
    if side is dst:
        isa.dma_copy(dst=ind, src=other, **kw)
    else:
        isa.dma_copy(dst=other, src=ind, **kw)
