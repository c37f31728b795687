"""Indirect (gather / scatter) accesses of HBM tensors: NKI's
a[idx_tile, cols], data[b, idx_tile, cols] and .ap(vector_offset=,
indirect_dim=), as the kernel format's indirect operand (docs/python.md
"Beta-1 call forms", "nki-samples kernels")."""
import numpy as np

from . import _trace
from ._trace import NkiError, NkiTensor, _t


def index_text(index):
    """The index tile's operand text: a slice string, as the kernel
    format's "index" field takes.  A raw pattern one column wide on a tile
    (what nkilib's TensorView.get_view() makes of a column slice: .ap([[F,
    n], [1, 1]], offset=p0 * F + c)) is written as the slice it is,
    tile[p0:p0 + n, c] (c as coordinates of the tile's free dims)."""
    t = index.text()
    if t.startswith('"'):
        return t
    b, ap, off = index.base, index._ap, index.offset
    free = [int(n) for n in b.shape[1:]]
    f = int(np.prod(free))
    if (len(ap) == 2 and ap[1][1] == 1 and ap[0][0] == f and isinstance(off, int) and
            0 <= off and off // f + ap[0][1] <= b.shape[0]):
        p0, c = divmod(off, f)
        coord = [int(x) for x in np.unravel_index(c, free)] if free else []
        parts = ["%d:%d" % (p0, p0 + ap[0][1])] + [str(x) for x in coord[:-1]]
        parts.append("%d:%d" % (coord[-1], coord[-1] + 1))
        return '"%s[%s]"' % (b.name, ", ".join(parts))
    raise NkiError(".ap(vector_offset=...): the index '%s' is a pattern %s at offset %s: tpbsim "
                   "takes one column of a tile ([P, 1])" % (b.name, ap, _t(off)))


def lead_rows(pat, row):
    """pat with its index dim's step set to the tensor's row length and
    its size-1 dims after it dropped, the rest merged when it is one run:
    NKI ignores the step of the pattern's leading (index) dim -- the rows
    are index x the base tensor's stride of indirect_dim 0 (its deep dive
    on access patterns) -- and size-1 dims move nothing (attention_block_tkg
    scatters its KV cache rows with [[1, B], [d, 1], [1, d]])."""
    if len(pat) < 2:
        return pat
    tail = [list(p) for p in pat[1:] if p[1] != 1] or [[1, 1]]
    total = 1
    for p in tail:
        total *= p[1]
    if len(tail) > 1 and tail[-1][0] == 1 and all(
            a[0] == b[0] * b[1] for a, b in zip(tail, tail[1:])):
        tail = [[1, total]]
    return [[row, pat[0][1]]] + tail


class IndRows:
    """The _ind of a gather / scatter view: called with (lo, hi), the same
    access with index rows lo:hi.  runs: each index's elements in C order
    as (offset delta, step, count) runs; part(lo, hi, delta, step, n) is
    the one-run access of index rows lo:hi at offset + delta (what
    _gather_nd.split_dma moves a piece of a run with).  dyn: (index tile,
    the elements one index value moves the access by, the number of valid
    values): the view's own pattern at offset is the access of value 0, so
    one index row is a run-time select of it (_runindex.hbm_indirect, a
    gather / scatter between two HBM tensors).  reindex(idx, n): the same
    access of n rows indexed by idx (a gather-transpose's index column,
    gather_transpose_cols), or None."""
    __slots__ = ("part", "runs", "whole", "dyn", "reindex")

    def __init__(self, part, runs, whole, dyn, reindex=None):
        self.part, self.runs, self.whole, self.dyn = part, runs, whole, dyn
        self.reindex = reindex

    def __call__(self, lo, hi):
        return self.whole(lo, hi)


def _row_of(view):
    """(rows, cols, name) of a gather's table when view is all of its HBM
    tensor in C order (the tensor or a reshape of it, N-D: its [dim 0,
    the rest] reshape), else None."""
    b = view.base
    if not (isinstance(view.offset, int) and view.offset == 0 and view._contig() and
            len(view.shape) >= 2 and int(np.prod(view.shape)) == int(np.prod(b.shape))):
        return None   # (a[0:64] of a [128, n] tensor is C-order too, but not all of it)
    rows, cols = int(view.shape[0]), int(np.prod(view.shape[1:]))
    if (rows, cols) == tuple(int(n) for n in b.shape):
        return rows, cols, b.name
    return rows, cols, "%s.reshape(%d, %d)" % (b.name, rows, cols)


def view_rows(view, off, pat, index, indirect_dim):
    """Rows of a 2-D HBM tensor, of a reshape of one (the kernel format's
    "name.reshape(r, c)" view; an N-D one read as its [dim 0, the rest]
    reshape: _gather_nd.rows_nd), or of a whole N-D one.  As NKI, row
    idx[p] starts idx[p] x the viewed tensor's stride of dim 0: a reshape's
    row (hidden_states.reshape((T * 4, H // 512, 128)) steps by H / 4, not
    the tensor's H), its slices' too.  A pattern whose dims after the index
    dim are several runs inside one row is kept as such (IndRows.runs):
    nisa.dma_copy moves it run by run (_gather_nd.split_dma)."""
    b = view.base
    if indirect_dim != 0:
        return view_rows_dim(view, off, pat, index, indirect_dim)
    if len(view.shape) == 1 and b.kind != "tile":
        # a flat view: its rows are single elements; a strided run per index
        # (attention_block_tkg's K^T cache column) is one DMA per element
        from . import _gather_nd
        r = _gather_nd.strided_rows(view, off, lead_rows(pat, 1), index, view_rows)
        if r is not None:
            return r
    if b.kind == "tile":
        raise NkiError(".ap(vector_offset=...): tpbsim gathers/scatters rows of a 2-D HBM "
                       "tensor, a 2-D reshape of one or a whole N-D one (indirect_dim=0)")
    whole = _row_of(view)
    if len(view.shape) > 2 or (len(b.shape) != 2 and whole is None):
        from . import _gather_nd   # an N-D pattern of whole-row runs: the same rows
        r = _gather_nd.rows_nd(view, off, pat, index, view_rows)
        if r is not None:
            return r
    if whole is None and len(b.shape) == 2:
        # a part of a 2-D tensor or of a reshape of one: its rows are the
        # viewed tensor's (stride of dim 0), which a reshape changes (a
        # NumPy slice of the tensor keeps its rows, as NKI's base tensor)
        row = (int(view._ap[0][0]) if len(view._ap) >= 2 and view._sl is None else
               int(b.shape[1]))
        n = int(np.prod(b.shape))
        if row != int(b.shape[1]):
            if row <= 0 or n % row:
                raise NkiError(".ap(vector_offset=...): '%s' viewed with stride %d on dim 0 "
                               "(pattern %s): tpbsim gathers/scatters rows of the tensor or of "
                               "a reshape of it" % (b.name, row, view._ap))
            return view_rows(NkiTensor(b, 0, [[row, n // row], [1, row]]), off, pat, index, 0)
        whole = (int(b.shape[0]), int(b.shape[1]), b.name)
    if whole is None:
        raise NkiError(".ap(vector_offset=...): tpbsim gathers/scatters rows of a 2-D HBM "
                       "tensor, a 2-D reshape of one or a whole N-D one (indirect_dim=0)")
    if not isinstance(index, NkiTensor) or index.base.kind != "tile":
        raise NkiError(".ap(vector_offset=...): the index must be an SBUF [P, 1] tile")
    rows, cols, name = whole
    pat = lead_rows(pat, cols)
    runs = _runs(pat, off, cols)
    if runs is not None and len(runs) > 1:
        return _multi_run(view, off, pat, index, runs, cols)
    if runs is not None:
        pat = [pat[0], [1, runs[0][2]]]
    if (len(pat) != 2 or pat[0][0] != cols or pat[1][0] != 1 or not isinstance(off, int)
            or off % cols + pat[1][1] > cols):
        raise NkiError(".ap(vector_offset=...): pattern %s at offset %s is not [[%d, P], "
                       "[1, n]] within one row of '%s'" % (pat, _t(off), cols, b.name))
    r0, c0 = divmod(off, cols)
    t = NkiTensor(b, off, pat)
    t._txt = '{"tensor": "%s[%d:, %d:%d]", "index": %s}' % (name, r0, c0, c0 + pat[1][1],
                                                           index_text(index))
    t._gt = '{"tensor": "%s.reshape(%d, 1, %d)[%d:, :, %d:%d]", "index": %s}' % (
        b.name, rows, cols, r0, c0, c0 + pat[1][1], index_text(index))
    t._ind = IndRows(
        lambda lo, hi, delta, step, n: view_rows(view, off + delta, [[cols, hi - lo], [1, n]],
                                                 index[lo:hi], 0),
        [(0, 1, pat[1][1])],
        lambda lo, hi: view_rows(view, off, [[pat[0][0], hi - lo], pat[1]], index[lo:hi], 0),
        (index, cols, rows - r0),
        lambda idx, n: view_rows(view, off, [[pat[0][0], n], pat[1]], idx, 0))
    return t


def gather_transpose_cols(dst, src, axes, loc, kw, name):
    """A gather-transpose (dma_transpose of a .ap(vector_offset=idx) src)
    whose index idx is [128, N], N > 1: NKI reads it column-major, row j
    of the gather is idx.T.flatten()[j] (its dma_transpose docstring), so
    it is one gather-transpose per index column c: rows 128c.. of the
    gather into dst columns 128c.. (the kernel format's index is one per
    partition).  False when idx has one column (the caller emits it; kw:
    the DMA's other arguments)."""
    from . import isa
    rows = src._ind
    index = rows.dyn[0] if isinstance(rows, IndRows) else None
    if (index is None or rows.reindex is None or len(index.shape) != 2 or
            int(index.shape[1]) == 1):
        return False
    p, ncol = int(index.shape[0]), int(index.shape[1])
    n = int(src._ap[0][1])   # src.shape[0]: the rows gathered
    if p != 128:
        raise NkiError("%s: dma_transpose: an index of %d columns must have exactly 128 "
                       "partitions (NKI: when indices.shape[1] > 1, indices.shape[0] must be "
                       "128), got [%d, %d]" % (loc, ncol, p, ncol))
    if n > p * ncol:
        raise NkiError("%s: dma_transpose: the index [%d, %d] holds %d indices for %d rows (NKI: "
                       "indices.shape[0] * indices.shape[1] must be >= src.shape[0])" % (
                           loc, p, ncol, p * ncol, n))
    if not isinstance(dst, NkiTensor) or len(dst.shape) != 2 or int(dst.shape[1]) != n:
        raise NkiError("%s: dma_transpose: a gather-transpose dst must be a 2-D tile [%d, %d], "
                       "got %s" % (loc, int(src._ap[1][1]), n, _t(dst, "dst", loc)
                                   if isinstance(dst, NkiTensor) else dst))
    _trace.SKIP.update((gather_transpose_cols.__code__, isa.dma_transpose.__code__))
    for c in range((n + p - 1) // p):
        m = min(p, n - c * p)
        part = rows.reindex(index[0:m, c:c + 1], m)
        isa.dma_transpose(dst[:, c * p:c * p + m], part, axes,
                          name=None if name is None else "%s_%d" % (name, c), **kw)
    return True


def _runs(pat, off, cols):
    """The runs (offset delta, 1, n) of each index's elements when pat
    (after lead_rows) has several dims after the index dim, the last one
    step 1, all inside one row of cols elements from off; else None."""
    tail = pat[1:]
    if (len(tail) < 2 or not isinstance(off, int) or tail[-1][0] != 1 or
            any(s <= 0 for s, _ in tail[:-1]) or
            off % cols + sum(s * (n - 1) for s, n in tail) + 1 > cols):
        return None
    deltas = [0]
    for s, n in tail[:-1]:
        deltas = [d + i * s for d in deltas for i in range(n)]
    runs = []
    for d in deltas:   # runs that follow each other are one
        if runs and runs[-1][0] + runs[-1][2] == d:
            runs[-1] = (runs[-1][0], 1, runs[-1][2] + tail[-1][1])
        else:
            runs.append((d, 1, tail[-1][1]))
    return runs


def _multi_run(view, off, pat, index, runs, cols):
    """A gather / scatter whose rows are several runs: a view of the
    pattern's shape that only nisa.dma_copy takes (one DMA per run,
    _gather_nd.split_dma)."""
    from ._gather_nd import RowsRuns
    t = RowsRuns(view.base, off, [list(p) for p in pat])
    t._ind = IndRows(
        lambda lo, hi, delta, step, n: view_rows(view, off + delta, [[cols, hi - lo], [1, n]],
                                                 index[lo:hi], 0),
        runs,
        lambda lo, hi: view_rows(view, off, [[pat[0][0], hi - lo]] + pat[1:], index[lo:hi], 0),
        (index, cols, int(np.prod(view.base.shape)) // cols - off // cols))
    return t


def view_rows_dim(view, off, pat, index, d):
    """NKI's .ap(vector_offset=idx, indirect_dim=d) on an HBM tensor:
    partition p reads from off + idx[p] * stride(d) along the pattern's
    one free [step, n] pair, which must run along one other dim of the
    tensor (the kernel format's indirect operand with "indirect_dim")."""
    b = view.base
    shape, name = list(b.shape), b.name
    if (b.kind != "tile" and isinstance(view.offset, int) and view.offset == 0 and
            view._contig() and tuple(view.shape) != tuple(b.shape) and
            int(np.prod(view.shape)) == int(np.prod(b.shape))):   # a reshape of it all
        shape = list(view.shape)
        name = "%s.reshape(%s)" % (b.name, ", ".join(str(n) for n in shape))
    if b.kind == "tile" or not 0 < d < len(shape):
        raise NkiError(".ap(indirect_dim=%r): needs an HBM tensor with a dim %r" % (d, d))
    if not isinstance(index, NkiTensor) or index.base.kind != "tile":
        raise NkiError(".ap(vector_offset=...): the index must be an SBUF [P, 1] tile")
    strides = [int(np.prod(shape[k + 1:])) for k in range(len(shape))]
    if not isinstance(off, int) or off < 0:
        raise NkiError(".ap(indirect_dim=%r): the offset must be a constant" % d)
    coord, rem = [], off
    for st in strides:
        coord.append(rem // st)
        rem %= st
    # the free pair's dim: the one other than d with its stride (a size-1
    # dim shares its stride with the dim before it: a[i, idx_tile])
    e = next((k for k, st in enumerate(strides) if st == pat[1][0] and k != d),
             -1) if len(pat) == 2 else -1
    if (len(pat) != 2 or pat[0][0] != strides[d] or e < 0 or e == d or
            coord[e] + pat[1][1] > shape[e]):
        raise NkiError(".ap(indirect_dim=%d): pattern %s at offset %s is not [[%d, P], "
                       "[step, n]] along one other dim of '%s'" % (d, pat, off, strides[d],
                                                                 b.name))
    sl = [str(c) for c in coord]
    sl[d] = "%d:" % coord[d]
    sl[e] = "%d:%d" % (coord[e], coord[e] + pat[1][1])
    t = NkiTensor(b, off, pat)
    t._txt = '{"tensor": "%s[%s]", "index": %s, "indirect_dim": %d}' % (
        name, ", ".join(sl), index_text(index), d)
    t._ind = IndRows(
        lambda lo, hi, delta, step, n: view_rows_dim(view, off + delta, [[pat[0][0], hi - lo],
                                                                         [step, n]],
                                                     index[lo:hi], d),
        [(0, pat[1][0], pat[1][1])],
        lambda lo, hi: view_rows_dim(view, off, [[pat[0][0], hi - lo], pat[1]], index[lo:hi], d),
        (index, strides[d], shape[d] - coord[d]))
    return t


def tile_index(t, key):
    """NKI's indirect row access a[idx_tile, cols] (cols a slice, an integer
    or an nl.arange index) on a whole 2-D HBM tensor or a 2-D .reshape() of
    all of one (paged attention's key_cache (blocks, heads, bs, d) as
    (blocks * heads, bs * d): its rows step by the reshape's row length):
    the gather / scatter .ap(pattern=[[C, P], [1, n]], offset=c0,
    vector_offset=idx_tile)."""
    idx = key[0]
    if (len(key) != 2 or t.base.kind == "tile" or len(t.shape) != 2 or
            _row_of(t) is None):
        raise NkiError("indexing '%s' with a tensor: tpbsim supports a[idx_tile, cols] on a "
                       "whole 2-D HBM tensor or a 2-D .reshape() of all of one (NKI's "
                       "indirect DMA; or use .ap(vector_offset=))" % t.base.name)
    rows, cols = t.shape
    k = key[1]
    if type(k) is int:
        k = slice(k, k + 1)
    if not isinstance(k, slice) or k.step not in (None, 1):
        raise NkiError("indexing '%s' with a tensor: the column index must be an integer or "
                       "a step-1 slice / nl.arange range" % t.base.name)
    c0, c1, _ = k.indices(cols)
    if idx.base.kind != "tile" or len(idx.shape) not in (1, 2) or idx.shape[1:] not in ((), (1,)):
        raise NkiError("indexing '%s' with a tensor: the index must be an SBUF [P, 1] tile, "
                       "got %r" % (t.base.name, idx))
    _trace.current().indirect.add((rows, cols, c0))   # for an out-of-bounds IndexError
    return t.ap(pattern=[[cols, idx.shape[0]], [1, c1 - c0]], offset=c0, vector_offset=idx,
                indirect_dim=0)


def indirect_part(t, key):
    """A slice of an indirect (gather / scatter) view: its partitions lo:hi
    are the same access with index rows lo:hi; other slices raise (never a
    plain view of the indexed tensor)."""
    key = key + (slice(None),) * (len(t.shape) - len(key))
    if (len(key) == len(t.shape) and all(isinstance(k, slice) for k in key) and
            key[0].step in (None, 1) and
            all(k.indices(n) == (0, n, 1) for k, n in zip(key[1:], t.shape[1:]))):
        lo, hi, _ = key[0].indices(t.shape[0])
        if hi > lo:
            return t if (lo, hi) == (0, t.shape[0]) else t._ind(lo, hi)
    raise NkiError("a part %r of an indirect (gather / scatter) access: tpbsim takes its "
                   "partitions lo:hi only" % (key,))


def tile_index_nd(t, key):
    """NKI's data[b, idx_tile, cols] on a whole HBM tensor (or a reshape of
    all of it): integer (or loop-variable) indices, then an SBUF [P, 1]
    index tile on dim d, then the columns of the last dim -- the gather /
    scatter .ap(vector_offset=idx_tile, indirect_dim=d)."""
    from . import language
    d = next(i for i, k in enumerate(key) if type(k) is NkiTensor)
    name = t.base.name
    if (t.base.kind == "tile" or len(key) != len(t.shape) or d != len(t.shape) - 2 or
            not all(type(k) in (int, _trace.Lin) for k in key[:d]) or
            not (t.offset == 0 and t._contig())):
        raise NkiError("indexing '%s' with a tensor: tpbsim supports a[idx_tile, cols] and "
                       "a[i, ..., idx_tile, cols] (integer indices first) on a whole HBM "
                       "tensor only" % name)
    for k in key[:d]:
        if type(k) is _trace.Lin:
            if k.loop_trace() is None:
                raise NkiError("indexing '%s' with a tensor: an index that depends on "
                               "nl.program_id() before the index tile" % name)
            _trace.need_retrace()
    k = key[d + 1]
    if isinstance(k, language.IndexExpr):
        axes = [a for a, v in k.coef.items() if v]
        if len(axes) != 1 or k.coef[axes[0]] != 1 or type(k.c) is not int:
            raise NkiError("indexing '%s' with a tensor: the columns must be a step-1 range"
                           % name)
        k = slice(k.c, k.c + k.sizes[axes[0]])
    if type(k) is int:
        k = slice(k, k + 1)
    if not isinstance(k, slice) or k.step not in (None, 1):
        raise NkiError("indexing '%s' with a tensor: the column index must be an integer or "
                       "a step-1 slice / nl.arange range" % name)
    c0, c1, _ = k.indices(t.shape[-1])
    idx = key[d]
    if idx.base.kind != "tile" or len(idx.shape) not in (1, 2) or idx.shape[1:] not in ((), (1,)):
        raise NkiError("indexing '%s' with a tensor: the index must be an SBUF [P, 1] tile, "
                       "got %r" % (name, idx))
    strides = [int(np.prod(t.shape[i + 1:])) for i in range(len(t.shape))]
    off = sum(int(i) * st for i, st in zip(key[:d], strides)) + c0
    return t.ap(pattern=[[strides[d], idx.shape[0]], [1, c1 - c0]], offset=off,
                vector_offset=idx, indirect_dim=d)
