"""Row gathers written as N-D patterns: NKI's .ap(pattern=[[R, n], ...],
vector_offset=idx, indirect_dim=0) on an N-D view whose pattern after
the index dim is a run inside one row (nkilib's attention_tkg reads each
[block_len, d] cache block as [[R, 128], [1, 1], [d, block_len], [1, d]]
of a [blocks, 1, block_len, d] reshape).  As a gather it is the 2-D row
gather of the same rows; as the source of a dma_transpose with axes
(3, 1, 2, 0) it is one 2-D gather-transpose per (A, B) position
(docs/python.md "NKI Library kernels")."""
import numpy as np

from . import _trace
from ._trace import NkiError, NkiTensor, _t


class RowsND(NkiTensor):
    """A 2-D row gather (what view_rows builds) that remembers the N-D
    pattern it was written with: nd = (view, off, pat, index)."""
    __slots__ = ("nd",)


def rows_nd(view, off, pat, index, view_rows):
    """The gather of pat (dim 0: one row per index) on view, an N-D
    contiguous reshape of an HBM tensor, as a 2-D row gather; None when
    pat after dim 0 is not one run of consecutive elements in one row."""
    if (view.base.kind == "tile" or not isinstance(off, int) or not isinstance(view.offset, int)
            or view.offset != 0 or not view._contig() or len(pat) < 2):
        return None
    shape = [int(n) for n in view.shape]
    row = 1
    for n in shape[1:]:
        row *= n
    # (the index dim's step is not used: NKI takes the rows' stride from the tensor)
    # the dims after the index dim, largest step first: one run when each
    # step is the next's step times its count (dims of count 1 do not matter)
    kept = [p for p in pat[1:] if p[1] != 1]
    total = 1
    for p in pat[1:]:
        total *= p[1]
    if kept and (kept[-1][0] != 1 or any(a[0] != b[0] * b[1] for a, b in zip(kept, kept[1:]))):
        return None
    if off % row + total > row:
        return None
    flat = view.reshape((_count(shape) // row, row))
    t = view_rows(flat, off, [[row, pat[0][1]], [1, total]], index, 0)
    r = RowsND(t.base, t.offset, t._ap)
    r._txt, r._gt, r._ind = t._txt, t._gt, t._ind
    r.nd = (flat, off, [list(p) for p in pat], index)
    return r


def _count(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def transpose_nd(dst, src, axes, loc, kw, name):
    """dma_transpose of a 4-D row gather src [n, A, B, C] (pattern steps
    [R, sA, sB, 1]) with axes (3, 1, 2, 0) into dst [C, A, B, n]: for each
    (a, b), the rows' C elements at a * sA + b * sB, gathered and
    transposed into dst[:, a, b, :] (NKI's one batched indirect transpose,
    as A * B of the kernel format's 2-D gather-transposes; kw: the DMA's
    other arguments)."""
    from . import isa
    from ._indirect import view_rows
    flat, off, pat, index = src.nd
    if axes is None or tuple(int(a) for a in axes) != (3, 1, 2, 0) or len(pat) != 4:
        raise NkiError("%s: dma_transpose: a %d-D gather source takes axes (3, 1, 2, 0) only "
                       "(got %s)" % (loc, len(pat), None if axes is None else tuple(axes)))
    (r, n), (sa, na), (sb, nb), (sc, nc) = pat
    if sc != 1:
        raise NkiError("%s: dma_transpose: the last dim of a 4-D gather source must be "
                       "contiguous, got pattern %s" % (loc, pat))
    if not isinstance(dst, NkiTensor) or tuple(dst.shape) != (nc, na, nb, n):
        raise NkiError("%s: dma_transpose: dst must be [%d, %d, %d, %d] for this source, got %s" %
                       (loc, nc, na, nb, n, _t(dst, "dst", loc) if isinstance(dst, NkiTensor)
                        else dst))
    _trace.SKIP.update((transpose_nd.__code__, isa.dma_transpose.__code__))
    for a in range(na):
        for b in range(nb):
            part = view_rows(flat, off + a * sa + b * sb, [[r, n], [1, nc]], index, 0)
            isa.dma_transpose(dst[:, a, b, :], part, (1, 0), name=None if name is None else
                              "%s_%d_%d" % (name, a, b), **kw)


class RowsStrided(NkiTensor):
    """Per index p, n elements step s apart from row idx[p] of a flat
    tensor: nd = (flat [N, 1] view, off, step, n, index).  Only nisa.dma_copy
    takes it (against an SBUF tile [P, n]): one single-element gather or
    scatter per j < n, at offset off + j * step."""
    __slots__ = ("nd",)

    def text(self):
        raise NkiError("'%s': a strided per-index access (.ap(vector_offset=) with pattern step "
                       "%d) is taken only by nisa.dma_copy against an SBUF tile" % (
                           self.base.name, self.nd[2]))


def strided_rows(view, off, pat, index, view_rows):
    """pat ([[1, P], [step, n]] after lead_rows) on a flat contiguous view:
    a RowsStrided, or None when pat is another form."""
    if (len(pat) != 2 or not isinstance(off, int) or not isinstance(view.offset, int)
            or view.offset != 0 or not view._contig()):
        return None
    (_, p), (step, n) = pat
    flat = view.reshape((int(view.shape[0]), 1))
    if step == 1:
        return view_rows(flat, off, [[1, p], [1, n]], index, 0) if n == 1 else None
    r = RowsStrided(view.base, off, [[1, p], [step, n]])
    r.nd = (flat, off, step, n, index)
    r._ind = _no_split
    return r


def _no_split(lo, hi):
    raise NkiError(".ap(vector_offset=...): a strided per-index access cannot be split by rows")


def strided_dma(dst, src, kw):
    """nisa.dma_copy with a RowsStrided side: n single-element gathers or
    scatters (element j of every index's run against column j of the
    tile)."""
    from . import isa
    from ._indirect import view_rows
    ind, tile = (src, dst) if isinstance(src, RowsStrided) else (dst, src)
    flat, off, step, n, index = ind.nd
    if not tile._onchip() or int(tile.shape[0]) != ind._ap[0][1] or \
            int(np.prod(tile.shape[1:])) != n:
        raise NkiError("dma_copy: a strided per-index access [%d, %d] needs an SBUF/PSUM tile of "
                       "that many elements per partition on the other side, got %s" % (
                           ind._ap[0][1], n, list(tile.shape)))
    free = [q for q in tile._ap[1:] if q[1] != 1]
    if len(free) > 1:
        raise NkiError("dma_copy: the tile side of a strided per-index access must have one free "
                       "dim (pattern %s)" % tile._ap)
    cstep = free[0][0] if free else 1
    _trace.SKIP.update((strided_dma.__code__, isa.dma_copy.__code__))
    for j in range(n):
        part = view_rows(flat, off + j * step, [[1, ind._ap[0][1]], [1, 1]], index, 0)
        col = NkiTensor(tile.base, tile.offset + j * cstep, [list(tile._ap[0]), [1, 1]])
        if ind is src:
            isa.dma_copy(col, part, **kw)
        else:
            isa.dma_copy(part, col, **kw)


def gather_cast(dst, src, kw):
    """A gather (src indirect, dst an on-chip tile) or scatter (dst
    indirect) between dtypes of different sizes (attention_tkg gathers fp8
    KV blocks into bf16 tiles): NKI's DMA converts through fp32; the
    kernel format's indirect DMA moves bytes, so the rows go through a
    tile of the HBM side's dtype and a tensor_copy converts.  Returns
    False when no conversion is needed (the caller emits the DMA; kw: its
    other arguments)."""
    from . import isa, language
    _trace.SKIP.update((gather_cast.__code__, isa.dma_copy.__code__, isa.tensor_copy.__code__))
    if isinstance(src, RowsStrided) or isinstance(dst, RowsStrided):
        strided_dma(dst, src, kw)
        return True
    hbm, tile = (src, dst) if src._ind is not None else (dst, src)
    if not tile._onchip() or _size(hbm.dtype, language) == _size(tile.dtype, language):
        return False
    stage = language.ndarray(tuple(tile.shape), dtype=hbm.dtype, buffer=language.sbuf,
                             name="gather_cast")
    if hbm is src:
        isa.dma_copy(stage, src, **kw)
        isa.tensor_copy(dst, stage)
    else:
        isa.tensor_copy(stage, src)
        isa.dma_copy(dst, stage, **kw)
    return True


class RowsRuns(NkiTensor):
    """A gather / scatter whose rows are several runs of each index's row
    (bwmm_shard_on_I_mx's [[R, P], [S, 2], [I, n], [1, I / 2]]: half of
    every I): its _ind (an _indirect.IndRows) lists them.  Only
    nisa.dma_copy takes it, as one gather / scatter per run
    (split_dma)."""
    __slots__ = ()

    def text(self):
        raise NkiError("'%s': a gather / scatter of several runs per index (.ap(vector_offset=) "
                       "with pattern %s) is taken only by nisa.dma_copy" % (self.base.name,
                                                                           self._ap))


def _squeezed(shape):
    return [int(n) for n in shape if n != 1]


def split_dma(dst, src, kw):
    """nisa.dma_copy with a gather / scatter side whose shape is not the
    other side's (NKI takes equal element counts: the rows' elements in C
    order against the other side's, moe_cte_mx's [P, 384] rows into a [P,
    1, 3, 128] tile) or whose rows are several runs (RowsRuns): one DMA per
    piece that is one run on both sides, [P, n] against [P, n].  False
    when the access needs no split (the caller emits it; kw: the DMA's
    other arguments)."""
    from . import isa
    from ._indirect import IndRows
    ind, other = (src, dst) if getattr(src, "_ind", None) is not None else (dst, src)
    rows = ind._ind
    if (not isinstance(rows, IndRows) or not isinstance(other, NkiTensor) or
            other._ind is not None):
        return False
    if len(rows.runs) == 1 and _squeezed(ind.shape) == _squeezed(other.shape):
        return False
    _trace.SKIP.update((split_dma.__code__, isa.dma_copy.__code__))
    loc = _trace.caller_loc()
    p = int(ind._ap[0][1])
    n = sum(r[2] for r in rows.runs)
    total = int(np.prod(other.shape)) if other._ap else 1
    if other._oob is not None:
        raise other._oob[0]
    if other._pd or not other._ap or int(other._ap[0][1]) != p or total != p * n:
        raise NkiError("%s: dma_copy: a gather / scatter of %d indices x %d elements against %s "
                       "%s: tpbsim takes %d x %d elements on the other side (its dim 0 one per "
                       "index)" % (loc, p, n, other.base.name, list(other.shape), p, n))
    # the other side's free dims as runs [step, count] in C order
    free = [list(q) for q in other._ap[1:] if q[1] != 1] or [[1, 1]]
    merged = [free[0]]
    for q in free[1:]:
        if merged[-1][0] == q[0] * q[1]:
            merged[-1] = [q[0], merged[-1][1] * q[1]]
        else:
            merged.append(q)
    ostep, olen = merged[-1]
    starts = [0]
    for s, c in merged[:-1]:
        starts = [a + i * s for a in starts for i in range(c)]
    pieces = [(other.offset + a, ostep, olen) for a in starts]
    parts = []
    ri, rj, pi, pj = 0, 0, 0, 0   # (run, element in it), (piece, element in it)
    while ri < len(rows.runs):
        delta, step, rn = rows.runs[ri]
        base, ps, pn = pieces[pi]
        m = min(rn - rj, pn - pj)
        parts.append(((delta + rj * step, step, m), (base + pj * ps, ps, m)))
        rj += m
        pj += m
        if rj == rn:
            ri, rj = ri + 1, 0
        if pj == pn:
            pi, pj = pi + 1, 0
    name = kw.pop("name", None)
    for i, ((delta, step, m), (o, ps, _)) in enumerate(parts):
        a = rows.part(0, p, delta, step, m)
        b = NkiTensor(other.base, o, [list(other._ap[0]), [ps, m]])
        b._lb = other._lb
        kw["name"] = name if name is None or len(parts) == 1 else "%s_%d" % (name, i)
        if ind is src:
            isa.dma_copy(dst=b, src=a, **kw)
        else:
            isa.dma_copy(dst=a, src=b, **kw)
    return True


def _size(dtype, language):
    """Bytes per element of a tile dtype (None when NumPy has no type for it:
    then no conversion is staged and the back end decides)."""
    import numpy as np
    try:
        return np.dtype(language._dtype(dtype)).itemsize
    except TypeError:
        return None
