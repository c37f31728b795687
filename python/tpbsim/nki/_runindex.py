"""NKI beta-1's run-time HBM index: one element of an SBUF/PSUM integer
tile used as an index of an HBM tensor -- `m_buffer[:, q]`,
`query[b, h, :, q, :]`, `buf[nl.ds(q, n), :]` (NxDI's
flash_paged_attention_with_schedule picks its q tile at run time:
`large_q_idx = tile_q_indices_sbuf[0, t]`).  As on NKI's dynamic DMA the
value is read at run time and moves the DMA's HBM address by value x the
dim's stride: the view is a run-time select (_views._Dyn, what
select(dim, tile) makes), which nisa.dma_copy, nl.load and nl.store take.

Its DMA (_views.dynamic_dma) gets value x stride from a constant table
[count, 1] by an indirect DMA with oob_mode error, so a value outside the
dim (0 <= value < count) is the simulator's out-of-range error (NKI's
IndexError) before the copy is issued; then the register load and the
register-offset DMA of .ap(scalar_offset=).  The table also makes the
product exact in int32 (select's fp32 multiply needs it below 2^24)."""
import json

import numpy as np

from . import _trace
from ._trace import DynSlice, Lin, NkiError, NkiTensor

_INT = ("int32", "uint32", "int16", "uint16", "int8", "uint8")


class RunIndex(tuple):
    """The _Dyn.dyn of a run-time index: (index, stride, count) as a
    select's (count: the number of valid values), and what the bounds
    table and the messages need."""

    def offset_tile(self, loc, skip=False):
        """A new int32 [1, 1] SBUF tile holding index x stride, read from
        the table by the index (the bounds check): _views.dynamic_dma
        loads it into the register.  skip (oob_mode.skip between two HBM
        tensors): the tile is first set to -2^31 and the table read skips
        an index out of range, which leaves that value -- an offset past
        every register bound, so the register-offset copy is skipped whole
        (docs/semantics-dma.md "Register bounds")."""
        from . import isa, language
        index, stride, count = self
        tr = _trace.current()
        if not _index_in_place(index, tr):
            # an indirect DMA's index is in SBUF and starts where the engines
            # start one partition: other elements to a tile of their own
            t = language._ndarray((1, 1), index.dtype, "sbuf", "run_index", loc)
            isa._emit("dma_copy", loc, [("dst", t.text()), ("src", index.text())])
            index = t
        table = _table(tr, count, stride, loc)
        off = language._ndarray((1, 1), "int32", "sbuf", "run_offset", loc)
        rows = table.ap(pattern=[[1, 1], [1, 1]], offset=0, vector_offset=index, indirect_dim=0)
        f = [("dst", off.text()), ("src", rows.text())]
        if skip:
            isa._emit("memset", loc, [("dst", off.text()), ("value", str(SKIPPED))])
            f.append(("oob_mode", '"skip"'))
        isa._emit("dma_copy", loc, f)
        if self.axis is not None:   # NumPy's message for an out-of-range value
            tr.indirect.add((count, 1, 0, self.axis))
        return off


# the offset an out-of-range index leaves under oob_mode.skip: below any
# register bound (a bound is at least minus the tensor's element count)
SKIPPED = -(1 << 31)


def _index_in_place(index, tr):
    """Whether an indirect DMA takes the element as its index tile: an SBUF
    [1] or [1, 1] view on partition 0, 32, 64 or 96 in every iteration."""
    if index.buffer != "sbuf" or len(index.shape) > 2 or index.base.nblk:
        return False
    off, per = index.offset, index._ap[0][0]   # elements per partition
    b = (off, off) if isinstance(off, int) else off.bounds(tr) if type(off) is Lin else None
    return b is not None and per > 0 and b[0] // per == b[1] // per and b[0] // per % 32 == 0


def _table(tr, count, stride, loc):
    """The kernel's constant [count, 1] int32 table of i x stride (one per
    count and stride, declared for the whole kernel even inside a traced-
    once loop body: it is no tile of that body; Trace.add_const keeps its
    name out of the names the body's tiles are numbered by)."""
    tables = getattr(tr, "run_index_tables", None)
    if tables is None:
        tables = tr.run_index_tables = {}
    v = tables.get((count, stride))
    if v is None:
        name = "run_index_%dx%d" % (count, stride)
        while name in tr.names:   # (a kernel's own tensor of that name)
            name += "_"
        v = tables[(count, stride)] = tr.add_const(
            (count, 1), "int32", json.dumps([[i * stride] for i in range(count)]), loc, name)
    return v


def tensor_key(k):
    return (isinstance(k, NkiTensor) or
            isinstance(k, (DynSlice, slice)) and isinstance(k.start, NkiTensor))


def _fail(t, why):
    raise NkiError("indexing '%s' with a tensor is not supported: %s" % (t.base.name, why))


def index(t, key):
    """t[key] when key holds a run-time index (a one-element tile, or
    nl.ds(tile, n)): the _Dyn view; None when key is a gather tpbsim reads
    elsewhere (a[idx_tile, cols] on a 2-D view: _indirect.tile_index)."""
    pos = [i for i, k in enumerate(key) if tensor_key(k)]
    if not pos:
        return None
    d = pos[0]
    k = key[d]
    if isinstance(k, slice):
        _fail(t, "a slice with a run-time start (q:q + n): write nl.ds(q, n)")
    q, size = (k.start, k.size) if isinstance(k, DynSlice) else (k, None)
    one = int(np.prod(q.shape)) == 1
    if (d == 0 and size is None and not t._pd and
            (not one or len(key) == 2 and len(t.shape) == 2)):
        return None   # a[idx_tile, cols]: a gather / scatter (a [1, 1] index: of one row)
    if not one:
        _fail(t, "an index tile of shape %s: tpbsim takes a[idx_tile, cols] and a[i, ..., "
                 "idx_tile, cols] (gathers / scatters) and a run-time index of one element "
                 "(an int element of an SBUF/PSUM tile, e.g. idx_sbuf[0, i])" % (list(q.shape),))
    if len(pos) > 1:
        _fail(t, "tpbsim takes one run-time index per access (NKI's dynamic DMA moves it by "
                 "one offset): index a reshape with one combined index instead, e.g. "
                 "t.reshape((A * B, C))[q1 * B + q2]")
    if t._onchip():
        _fail(t, "a run-time index on an SBUF/PSUM tile is not supported by tpbsim (it moves "
                 "an HBM address): index the HBM tensor in nl.load / nl.store / "
                 "nisa.dma_copy, or use integer or loop-variable indices on the tile")
    if type(t) is not NkiTensor or t._ind is not None:
        _fail(t, "the view is a gather / scatter or already selected at run time (one "
                 "run-time index per view)")
    if not q._onchip():
        _fail(t, "the index '%s' is in HBM: nl.load it into an SBUF tile and index with its "
                 "element (idx_sbuf[0, i])" % q.base.name)
    if q.dtype not in _INT:
        _fail(t, "the index '%s' is %s: a run-time index is an integer element (nl.load(..., "
                 "dtype=nl.int32))" % (q.base.name, q.dtype))
    n = len(t._ap)
    ell = [i for i, x in enumerate(key) if x is Ellipsis]
    dim = d + n - len(key) if ell and ell[0] < d else d
    if not 0 <= dim < n:
        _fail(t, "%d indices for a %d-D tensor" % (len(key), n))
    stride, cnt = (int(x) for x in t._ap[dim])
    if size is not None and (type(size) is not int or not 0 < size <= cnt):
        _fail(t, "nl.ds(<run-time start>, %r) on dim %d of size %d: the size must be an "
                 "integer 1..%d" % (size, dim, cnt, cnt))
    if stride == 0:
        _fail(t, "dim %d is a broadcast (step 0) dim" % dim)
    count = cnt if size is None else cnt - size + 1
    if (count - 1) * stride >= 1 << 31:
        _fail(t, "dim %d: offsets up to %d x %d elements do not fit the register's 32 bits" %
              (dim, count - 1, stride))
    static = t[key[:d] + ((0 if size is None else slice(0, size)),) + key[d + 1:]]
    if type(static) is not NkiTensor or static.base is not t.base:
        _fail(t, "the other indices make no plain view of '%s' (index it with slices, "
                 "integers or nl.arange ranges)" % t.base.name)
    from . import _views
    dyn = RunIndex((q, stride, count))
    dyn.axis = dim if size is None else None
    return _views._dyn(static, dyn)


def hbm_indirect(dst, src, loc, kw):
    """nisa.dma_copy between two HBM tensors, one side a gather / scatter
    view (NxDI 2.27's rolling_buffer_set_state `dst=reshaped[index, h_i]`,
    split_along_dim0_kernel `src=tensor[rank_sb, i_f]`, both sides in HBM
    as NKI's dma_copy allows).  The kernel format's indirect DMA moves rows
    between HBM and SBUF only, so each index row is what a one-element
    index is: a run-time select of the view (the access of value 0, moved
    by value x the rows' stride), bounds-checked by the table read and
    copied by one register-offset DMA (_views.dynamic_dma; oob_mode.skip
    skips an out-of-range row, error stops the run).  A [P, 1] index tile
    is P such copies, row p against row p of the other side.  False when
    the call is no such copy (kw: dma_copy's other arguments)."""
    from . import isa
    ind, other = (src, dst) if src._ind is not None else (dst, src)
    if not isinstance(other, NkiTensor) or other._onchip() or ind._onchip():
        return False
    if other._ind is not None:
        raise NkiError("%s: dma_copy: both sides are gathers / scatters (indexed by a tile): "
                       "not supported by tpbsim (stage one side through an SBUF tile)" % loc)
    dyn = getattr(ind._ind, "dyn", None)
    if dyn is None or not isinstance(dyn[0], NkiTensor) or dyn[0].dtype not in _INT:
        raise NkiError("%s: dma_copy between two HBM tensors with a gather / scatter side "
                       "'%s' (pattern %s): tpbsim moves such a copy one index at a time by "
                       "register offset, which this access does not allow; stage it through "
                       "an SBUF tile (nl.load, then the gather / scatter)" % (
                           loc, ind.base.name, ind._ap))
    index, stride, count = dyn
    p = int(ind._ap[0][1])
    if p == 1:
        view = _views_dyn(NkiTensor(ind.base, ind.offset, [list(a) for a in ind._ap]),
                          index, stride, count)
        _trace.SKIP.update((hbm_indirect.__code__, isa.dma_copy.__code__))
        isa.dma_copy(dst=view if ind is dst else other, src=view if ind is src else other,
                     **kw)
        return True
    if other._pd or not other._ap or int(other._ap[0][1]) != p:
        raise NkiError("%s: dma_copy between two HBM tensors: a gather / scatter of %d indices "
                       "against '%s' %s: tpbsim copies it index by index, so the other side's "
                       "dim 0 must be %d (one per index)" % (loc, p, other.base.name,
                                                           list(other.shape), p))
    _trace.SKIP.update((hbm_indirect.__code__, isa.dma_copy.__code__))
    name = kw.pop("name", None)
    for i in range(p):
        row, orow = ind._ind(i, i + 1), other[i:i + 1]
        kw["name"] = None if name is None else "%s_%d" % (name, i)
        isa.dma_copy(dst=row if ind is dst else orow, src=row if ind is src else orow, **kw)
    return True


def _views_dyn(static, index, stride, count):
    from . import _views
    dyn = RunIndex((index, stride, count))
    dyn.axis = None   # (an a[idx, cols] gather names its IndexError itself: _indirect)
    return _views._dyn(static, dyn)


def no_skip(skip, what, loc):
    """mode=oob_mode.skip on a view with a run-time index: refused by name
    (its index is bounds-checked, NKI's error mode, before the copy)."""
    if skip:
        raise NkiError("%s: %s: mode=oob_mode.skip with an index read at run time from a tile "
                       "is not supported by tpbsim (an out-of-range index stops the run as "
                       "oob_mode.error); use nisa.dma_copy with an indirect operand and "
                       "oob_mode=skip" % (loc, what))


def load(src, dtype, mask, loc):
    """nl.load of a view with a run-time index: a new SBUF tile and the
    register-offset DMA into it."""
    from . import _views, language
    from .isa import dge_mode, oob_mode
    if not src.shape:   # one element: a [1, 1] tile
        src = _views._dyn(NkiTensor(src.base, src.offset, [[1, 1], [1, 1]]), src.dyn)
    t = _trace.current().new_tensor(src.shape, language._dtype(dtype) if dtype else src.dtype,
                                    language.sbuf, "", loc)
    _views.dynamic_dma(t, src, loc, oob_mode.error, dge_mode.unknown, None, None, None, mask)
    return t


def store(dst, value, mask, loc):
    """nl.store into a view with a run-time index (a number: a tile filled
    with it first, as the register-offset DMA takes no number src)."""
    from . import _views, isa, language
    from .isa import dge_mode, oob_mode
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        t = language._ndarray(dst.shape if len(dst.shape) > 1 else (1,) + dst.shape, dst.dtype,
                              language.sbuf, "run_fill", loc)
        isa._emit("memset", loc, [("dst", t.text()), ("value", isa._scalar(value, "value",
                                                                            loc))])
        value = t
    _views.dynamic_dma(dst, value, loc, oob_mode.error, dge_mode.unknown, None, None, None,
                       mask)


_trace.SKIP.update((load.__code__, store.__code__))
