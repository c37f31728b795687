"""Trace-time machinery: a kernel body runs in Python; every nki.isa call
appends one op (JSON text, docs/kernel-format.md) to the current trace,
tagged with the caller's "loc": "file.py:LINE".  The finished description
goes to libtpb, which compiles it through the same front-end as a kernel
file (so a kernel written in Python and the same kernel written in JSON
compile to the same bytes).  See docs/python.md."""
import json
import os
import sys

import numpy as np

from . import _alloc, _groups, _programs, _sites, _tileops
# re-exported: the rest of the package reaches these through _trace
from ._state import (_LOCAL, Beta1Launch, NkiError, Retrace, beta1_form, current,  # noqa: F401
                     need_retrace, stack)
from ._lin import Lin, _num  # noqa: F401
from ._shape import Shape


# ---- tensors and views ----

# the kernel format's most dims of a tile or access pattern: an on-chip tile
# of more NKI dims (a 7-axis nl.mgrid's temporaries) is declared [P, F] and
# its ops are split (_wide.py)
_MAX_DIMS = 5

_DT_NP = {"float32": np.float32, "float16": np.float16, "int8": np.int8, "int16": np.int16,
          "int32": np.int32, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
          "bool": np.uint8, "bfloat16": np.float32, "float8_e4m3fn": np.float32, "float8_e4m3": np.float32,
          "float8_e5m2": np.float32}


class _Base:
    __slots__ = ("name", "shape", "dtype", "buffer", "kind", "loc", "dead", "depth", "nblk",
                 "rot", "blocks", "addrs", "groups", "off", "fill", "address")

    def __init__(self, name, shape, dtype, buffer, kind, loc):
        self.name, self.shape, self.dtype = name, shape, dtype
        self.buffer, self.kind, self.loc = buffer, kind, loc
        # a tile declared in a traced-once loop body, after the body: the
        # kernel-format `for` scopes it, so a use means Retrace
        self.dead = False
        self.depth = 0   # how many traced-once loops were open at its creation
        # NKI block dims (docs/python.md "Block dims"): a tile declared
        # (B..., par_dim(P), F...) is stored as [P, B..., F...]; nblk = len(B)
        self.nblk = 0
        # _alloc.py: per block dim the k physical blocks logical block i % k
        # is stored in (direct allocation), or None; kind "split": the tile
        # of each logical block by index (PSUM reuse, SBUF blocks past a
        # partition).  _groups.py: writes
        self.rot = self.blocks = self.groups = None
        self.addrs = None   # kind "split" of a direct allocation: each block's address
        # kind "split" made by nl.zeros / nl.full: (memset value
        # text, loc), each block filled when its tile is declared
        self.fill = None
        self.off = False   # the result of an op masked off whole (_beta1.whole_mask)
        # a tile placed by the kernel (address=, a direct allocation):
        # (partition, byte offset), NkiTensor.address; None when the compiler places it
        self.address = None


class NkiTensor:
    """A tensor or a view of one: base + element offset + [step, count]
    pairs (outermost first), as NKI's access patterns."""
    __slots__ = ("base", "offset", "_ap", "_txt", "_sl", "_gt", "_views", "_pd", "_lb", "_oob",
                 "_ind")
    # NumPy defers to the tile's own operators (np.float32(2) * t is
    # t.__rmul__, as 2 * t), instead of reading it as a sequence of rows
    __array_ufunc__ = None

    def __array__(self, *args, **kwargs):
        """A NumPy function given a tile (np.mean(t), np.exp(t)): it has no
        values at trace time; NKI's nl functions compute on tiles."""
        raise NkiError("NumPy cannot read '%s' (a tensor of the kernel, no values while it is "
                       "traced): use the nki.language function (nl.mean, nl.exp, ...)"
                       % self.base.name)

    def __init__(self, base, offset, ap, sl=None, pd=0):
        self.base = base
        self.offset = offset
        self._ap = ap          # list of [step, count]
        self._txt = None
        # the view as a NumPy slice of the base, when it is one: per base
        # dim [start, step, count] (kept) or an index (dropped); None after
        # .ap() / .reshape()
        self._sl = sl
        # an indirect row access: the kernel text of its 3-D [n, 1, row]
        # form, which a gather-transpose (dma_transpose) takes
        self._gt = None
        # views of this one already made, by _view_key (a view is never
        # changed once made, so one index written again returns it as is)
        self._views = None
        # the position of the partition dim among the view's dims: > 0 while
        # block dims of a block-dim tile are kept (then the view is no operand)
        self._pd = pd
        # in a block-dim tile: (block indexes given so far, as ints / Lin,
        # the part of offset they add), else None (_groups.py)
        self._lb = None
        # an index-expression view whose indices leave the tensor: (the
        # error, the indexed view, the key); only a mask= that keeps the
        # indices inside makes it an operand (_beta1.mask_restrict)
        self._oob = None
        # an indirect (gather / scatter) view (_indirect.py): fn(lo, hi) -> its partitions
        # lo:hi, the same access with index rows lo:hi (a mask= keeping some
        # partitions), else None
        self._ind = None

    def __class_getitem__(cls, item):
        """nki.typing.tensor[shape, dtype]: an input given by shape and
        dtype (for nki.benchmark / nki.profile; _bench.TensorSpec);
        nki.typing.tensor[nki.typing.mutable]: the tensor type."""
        from ._bench import tensor_spec
        return tensor_spec(cls, item)

    # NKI attributes
    @property
    def shape(self):
        """A tuple that also equals a list of the same sizes (_shape.py)."""
        return Shape(c for _, c in self._ap)

    @property
    def dtype(self):
        return self.base.dtype

    @property
    def buffer(self):
        return self.base.buffer

    @property
    def name(self):
        return self.base.name

    @property
    def ndim(self):
        return len(self._ap)

    @property
    def address(self):
        """(partition_offset, free byte offset) of a tile the kernel placed
        (nl.ndarray(address=), a direct allocation), as the NKI Library's
        allocator page prints it; None for a tensor the compiler places
        after tracing (every other tile, every HBM tensor)."""
        return self.base.address

    def __repr__(self):
        return "NkiTensor(%s%s, %s, %s)" % (self.base.name, list(self.shape), self.dtype,
                                            self.base.buffer)

    def _onchip(self):
        return self.base.kind == "tile"

    def __getitem__(self, key):
        ck = _view_key(key)
        if ck is None:
            if isinstance(key, (IndexPredicate, IndexMask)):   # not in NKI's documented API
                raise NkiError("'%s'[<predicate>]: indexing a tile with a predicate "
                               "(t[i < n]) is not supported by tpbsim: give the op that reads "
                               "it mask=(i < n)" % self.base.name)
            no_loop_iterator(self, key)
            return self._index(key)
        views = self._views
        if views is None:
            views = self._views = {}
        v = views.get(ck)
        if v is None:
            v = views[ck] = self._index(key)   # only a valid index is kept
        return v

    def _index(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if self._ind is not None:
            from . import _indirect
            return _indirect.indirect_part(self, key)
        # the common keys (ints, loop variables, slices, index expressions)
        # skip the checks for tensor indices and Ellipsis
        plain, expr = bool(key), False
        for k in key:
            tk = type(k)
            if tk is int or tk is Lin:
                continue
            if tk is slice and not isinstance(k.start, NkiTensor):
                continue
            if tk is IndexExpr:
                expr = True
                continue
            plain = False
            break
        if not plain:
            if (not self._pd and len(key) > 2 and type(key[-2]) is NkiTensor and
                    all(type(k) in (int, Lin) for k in key[:-2])):
                from . import _indirect   # data[b, idx_tile, cols]
                return _indirect.tile_index_nd(self, key)
            if (not self._pd and not self._onchip() and type(key[-1]) is NkiTensor and
                    len(key) in (len(self.shape), len(self.shape) - 1) and
                    int(np.prod(key[-1].shape)) > 1 and
                    all(type(k) in (int, Lin) for k in key[:-1])):
                # a[i, ..., idx_tile] (biquando's quantum simulator): on the last dim,
                # one element per index row -- the gather a[i, ..., idx_tile, 0:1] of
                # the view with a trailing size-1 dim; on the one before, the gather
                # a[i, ..., idx_tile, :] of whole rows
                if len(key) == len(self.shape) - 1:
                    return self[key + (slice(None),)]
                return self.reshape(tuple(self.shape) + (1,))[key + (slice(0, 1),)]
            if any(_runindex.tensor_key(k) for k in key):
                v = _runindex.index(self, key)   # m_buffer[:, q]: q read at run time
                if v is not None:
                    return v
        if self.base.kind == "split":   # one tile per logical block (_alloc.py)
            return _alloc.split_index(self, key)
        if expr if plain else any(hasattr(k, "_nki_index") for k in key):
            # nl.arange / nl.mgrid indices
            pd = self._pd
            if pd and len(key) > pd and all(type(k) in (int, Lin) for k in key[:pd]):
                return self[key[:pd]]._index(key[pd:])   # t[k, i.p, i.x]: t[k] cached
            if pd:
                raise NkiError("'%s': nl.arange / nl.mgrid indices on its block dims are "
                               "not supported by tpbsim (index the blocks with integers or "
                               "loop variables)" % self.base.name)
            key = _beta1.index_key(self, key)
            if isinstance(key, NkiTensor):   # not slices: an access pattern
                key._lb = self._lb   # still inside the same logical block
                return key
        if not plain and any(k is Ellipsis for k in key):
            i = key.index(Ellipsis)
            key = key[:i] + (slice(None),) * (len(self._ap) - len(key) + 1) + key[i + 1:]
        if len(key) == 2 == len(self._ap) + 1 and self._onchip() and not self._pd:
            v = _beta1.column_of_column(self, key)
            if v is not None:
                return v
        if len(key) > len(self._ap):
            raise NkiError("%d indices for a %d-dimensional tensor '%s'" %
                           (len(key), len(self._ap), self.base.name))
        off = self.offset
        ap = []
        sl = self._sl
        pd = self._pd
        npd = 0   # block dims kept before the partition dim
        last = None   # on chip: (step, base dim, slice) of the last free dim an int dropped
        rot = self.base.rot
        lb = self._lb or ((), 0) if pd else self._lb
        onchip = self.base.kind == "tile"
        if sl is not None:
            sl = list(sl)
            kept = [i for i, e in enumerate(sl) if isinstance(e, list)]
            if pd:   # the view's dims in base order: the partition dim first
                kept = kept[1:pd + 1] + [kept[0]] + kept[pd + 1:]
        for d, (step, cnt) in enumerate(self._ap):
            k = key[d] if d < len(key) else slice(None)
            if isinstance(k, DynSlice):
                if (type(k.size) is int and k.size <= 0
                        or type(k.start) is int and k.start < 0):
                    # not a NumPy negative index: ds(0, -64) is no slice 0:-64
                    raise NkiError("dimension %d of '%s': nl.ds(%r, %r): the start must be "
                                   ">= 0 and the size > 0" % (d, self.base.name, k.start, k.size))
                k = slice(k.start, k.start + k.size)
            if isinstance(k, slice):
                if rot is not None and d < pd:
                    _alloc.no_block_slice(self, d, k, kept)
                s0, s1, st = k.start, k.stop, k.step
                if not (type(s0) is int or s0 is None) and isinstance(s0, np.integer):
                    s0 = int(s0)
                if not (type(s1) is int or s1 is None) and isinstance(s1, np.integer):
                    s1 = int(s1)
                if st is not None and isinstance(st, np.integer):
                    st = int(st)
                st = 1 if st is None else st
                if not isinstance(st, int) or st <= 0:
                    raise NkiError("dimension %d of '%s': step %r (positive integers only)" %
                                   (d, self.base.name, st))
                s0 = 0 if s0 is None else s0
                s1 = cnt if s1 is None else s1
                if isinstance(s0, int) and s0 < 0:
                    s0 += cnt
                if isinstance(s1, int) and s1 < 0:
                    s1 += cnt
                if isinstance(s1, int) and s1 > cnt:
                    s1 = cnt   # NumPy clipping (edge tiles)
                if type(s0) is Lin or type(s1) is Lin:
                    _check_sym(s0, 0, cnt - 1)
                    _check_sym(s1, 1, cnt)
                n = s1 - s0
                if isinstance(n, Lin):
                    raise NkiError("dimension %d of '%s': the slice size depends on "
                                   "nl.program_id()" % (d, self.base.name))
                if isinstance(s0, int) and (s0 < 0 or s0 >= cnt) or n <= 0:
                    raise NkiError("dimension %d of '%s' (size %d): slice %s:%s is empty or "
                                   "out of range" % (d, self.base.name, cnt, _t(s0), _t(s1)))
                off = off + s0 * step
                c = (n + st - 1) // st
                ap.append([step * st, c])
                npd += d < pd
                if sl is not None:
                    b0, bst, _ = sl[kept[d]]
                    sl[kept[d]] = [b0 + s0 * bst, bst * st, c]
            else:
                if not isinstance(k, (int, Lin)):
                    if isinstance(k, NkiTensor) and d == 0 and not pd:   # a[idx_tile, cols]
                        from . import _indirect
                        return _indirect.tile_index(self, key)
                    if isinstance(k, NkiTensor):
                        raise NkiError("indexing '%s' with a tensor is not supported (use "
                                       "nisa.dma_copy with an indirect operand)" % self.base.name)
                    k = int(k)
                if type(k) is Lin:
                    _check_sym(k, 0, cnt - 1)
                if isinstance(k, int):
                    if k < 0:
                        k += cnt
                    if k < 0 or k >= cnt:
                        raise NkiError("dimension %d of '%s': index %d out of range 0..%d" %
                                       (d, self.base.name, k, cnt - 1))
                if d < pd:   # a block index: the logical block, physical i % k
                    lb = (lb[0] + (k,), lb[1])
                    if rot is not None:
                        k = _alloc.physical(self, k, kept[d])
                    lb = (lb[0], lb[1] + k * step)
                off = off + k * step
                keep = d == pd and onchip
                if keep:
                    ap.append([step, 1])   # the partition dim is never dropped
                if sl is not None:
                    b0, bst, _ = sl[kept[d]]
                    sl[kept[d]] = [b0 + k * bst, bst, 1] if keep else b0 + k * bst
                if d > pd and onchip:   # a free dim dropped
                    last = (step, kept[d], [b0 + k * bst, bst, 1]) if sl is not None else \
                        (step, None, None)
        if last is not None and len(ap) < 2:
            # NKI: an on-chip view stays >= 2-D, its last free dim kept at size 1
            # (t[:, 0, 10] is (64, 1): the language guide's "Tensor Indexing")
            ap.append([last[0], 1])
            if last[1] is not None:
                sl[last[1]] = last[2]
        v = NkiTensor(self.base, off, ap, sl, npd)
        v._lb = lb
        return v

    def _front(self, pd):
        """This view with its dim pd moved first, as a raw access pattern:
        the two sides of a DMA of a view keeping block dims (pd its
        partition dim), so the tile side is partition-first."""
        if self.base.rot is not None or self.base.kind == "split":
            _alloc.no_whole(self, "a DMA of every block")
        ap = self._ap
        return NkiTensor(self.base, self.offset, [ap[pd]] + ap[:pd] + ap[pd + 1:])

    def ap(self, pattern, offset=None, scalar_offset=None, vector_offset=None, indirect_dim=0,
           dtype=None):
        """An explicit [[step, count], ...] pattern from this view's offset
        (+ offset).  With vector_offset (an SBUF [P, 1] index tile) on an HBM
        tensor: a gather/scatter row access (the kernel format's indirect
        operand)."""
        if dtype is not None:   # a reinterpretation of the storage (_reinterp.py)
            from . import _reinterp
            v = _reinterp.retype(self, dtype, scalar_offset, vector_offset)
            if v is not self:
                return v.ap(pattern, offset)
        static = getattr(scalar_offset, "static", None)   # ncc.rank_id(): known per program
        if static is not None and vector_offset is None:
            if not 0 <= indirect_dim < len(self._ap):
                raise NkiError(".ap(indirect_dim=%r): '%s' has %d dims" %
                               (indirect_dim, self.base.name, len(self._ap)))
            offset = (0 if offset is None else offset) + static * self._ap[indirect_dim][0]
            scalar_offset, indirect_dim = None, 0
        if scalar_offset is not None:   # a run-time one is _views.ap_scalar's
            raise NkiError(".ap(scalar_offset=...) is not supported by tpbsim here")
        if self.base.nblk:
            raise NkiError(".ap() on '%s', a tile with block dims, is not supported by tpbsim"
                           % self.base.name)
        off = self.offset + (0 if offset is None else offset)
        pat = [list(p) for p in pattern]
        if vector_offset is None:
            if indirect_dim != 0:
                raise NkiError(".ap(indirect_dim=%r) needs vector_offset" % indirect_dim)
            return NkiTensor(self.base, off, pat)
        return self._indirect(off, pat, vector_offset, indirect_dim)

    def _indirect(self, off, pat, index, indirect_dim):
        from . import _indirect
        return _indirect.view_rows(self, off, pat, index, indirect_dim)

    def _contig(self):
        return self._ap == _c_ap(self.shape)

    def text(self):
        """The operand as kernel JSON: a slice string ("t[0:44, :]") when
        the view is a NumPy slice of its tensor, else a raw access pattern."""
        if self.base.dead:
            need_retrace()
        if self._oob is not None:
            raise self._oob[0]
        if self._pd:
            raise NkiError("'%s'%s keeps block dim(s) before its partition dim: tpbsim takes "
                           "one block per operand (index the blocks: t[i], t[i, :, 0:n])" %
                           (self.base.name, list(self.shape)))
        t = self._txt
        if t is None:
            if self._sl is not None and len(self.base.shape) <= _MAX_DIMS:
                t = self._txt = '"%s"' % _slice_text(self.base, self._sl)
            else:
                from ._reinterp import dtype_json
                ap = self._ap
                if len(ap) > _MAX_DIMS:   # size-1 dims address nothing: within the 5
                    ap = drop_unit_dims(ap)
                t = self._txt = '{"tensor": "%s", "offset": %s, "ap": %s%s}' % (
                    self.base.name, _num(self.offset), _ap_json(ap), dtype_json(self.base))
        return t

    def __len__(self):
        return self._ap[0][1]

    def __setitem__(self, key, value):
        """NKI beta-1 `t[idx] = value` (docs/python.md "Beta-1 call forms")."""
        beta1_form()
        _beta1.assign(self[key], value)

    def broadcast_to(self, shape):
        """NKI beta-1's tile.broadcast_to(shape) = nl.broadcast_to(tile, shape)."""
        from . import language
        return language.broadcast_to(self, shape)

    def __iadd__(self, value):
        """NKI beta-1 `psum[idx] += nisa.nc_matmul(...)` and tile += tile."""
        beta1_form()
        return _beta1.iadd(self, value)


# code objects of tpbsim wrappers between a kernel line and the op it calls
# (the beta-1 call forms, _beta1.py, adds its own): caller_loc skips them
def _arith(name, reverse=False):
    """tile OP x (x OP tile when reverse): nl.<name>(tile, x), one op into a
    new SBUF tile (NKI's tile arithmetic: equal shapes, a number or a
    [P, 1] tile)."""
    def f(self, o):
        from . import language
        x, y = (o, self) if reverse else (self, o)
        return language._binary(name, x, y, None, caller_loc())
    f.__name__ = "__%s%s__" % ("r" if reverse else "", name)
    return f


for _n, _op in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                ("truediv", "divide")):
    setattr(NkiTensor, "__%s__" % _n, _arith(_op))
    setattr(NkiTensor, "__r%s__" % _n, _arith(_op, True))
del _n, _op
_tileops.install(NkiTensor)   # comparisons, shifts, bitwise, ** %, unary ops, bool()

SKIP = {NkiTensor.__setitem__.__code__, NkiTensor.__iadd__.__code__,
        NkiTensor.broadcast_to.__code__}


def dma_sides(dst, src):
    """(dst, src) of a DMA: when one side keeps block dims (a whole
    block-dim tile, t[0:2]) and the other is an HBM view of the same shape,
    both with that side's partition dim first (one DMA of every block)."""
    for t, o in ((src, dst), (dst, src)):
        if (type(t) is NkiTensor and t._pd and type(o) is NkiTensor and not o._onchip()
                and o.shape == t.shape):
            pd = t._pd
            if t is dst and t.base.buffer == "psum":   # every block written
                _groups.mark_whole(current(), t.base)
            d, s = dst._front(pd), src._front(pd)
            if len(d._ap) > _MAX_DIMS:   # more than 4 block and free dims
                d._ap, s._ap = _fold_free(d._ap, s._ap)
            return d, s
    return dst, src


def drop_unit_dims(ap):
    """ap without its free dims of size 1 (the partition pair kept): the
    same elements in fewer pairs."""
    return ap[:1] + [p for p in ap[1:] if p[1] != 1]


def _fold_free(a, b):
    """Two access patterns of the same counts, partition dim first, with
    their dims of size 1 after it dropped and adjacent dims merged where
    both are one strided run: the sides of a DMA of every block of a tile
    with more than 4 block and free dims (dims the kernel format's tiles
    do not have)."""
    oa, ob = [a[0]], [b[0]]
    for pa, pb in zip(a[1:], b[1:]):
        if pa[1] == 1:
            continue
        if len(oa) > 1 and oa[-1][0] == pa[0] * pa[1] and ob[-1][0] == pb[0] * pb[1]:
            oa[-1] = [pa[0], oa[-1][1] * pa[1]]
            ob[-1] = [pb[0], ob[-1][1] * pb[1]]
        else:
            oa.append(list(pa))
            ob.append(list(pb))
    if len(oa) == 1:
        oa.append([1, 1])
        ob.append([1, 1])
    return oa, ob


def _view_key(key):
    """A hashable form of an index made of ints and int slices (None when
    it holds anything else: program ids, nl.ds, tensors, index expressions,
    ...)."""
    if type(key) is not tuple:
        key = (key,)
    out = []
    for k in key:
        tk = type(k)
        if tk is int:
            out.append(k)
        elif tk is slice:
            a, b, c = k.start, k.stop, k.step
            if not ((a is None or type(a) is int) and (b is None or type(b) is int) and
                    (c is None or type(c) is int)):
                return None
            out.append((a, b, c))
        else:
            return None
    return tuple(out)


def _slice_text(base, sl):
    parts = []
    for e, full in zip(sl, base.shape):
        if not isinstance(e, list):
            parts.append(_t(e))
        elif type(e[0]) is int and e[0] == 0 and e[1] == 1 and e[2] == full:
            parts.append(":")
        else:
            a, st, c = e
            stop = a + (c - 1) * st + 1
            parts.append("%s:%s%s" % (_t(a), _t(stop), ":%d" % st if st != 1 else ""))
    while parts and parts[-1] == ":":
        parts.pop()
    return "%s[%s]" % (base.name, ", ".join(parts)) if parts else base.name


def _ap_json(ap):
    """json.dumps(ap): str() gives the same text for a list of [int, int]."""
    if type(ap) is list and all(type(p) is list and len(p) == 2 and type(p[0]) is int and
                                type(p[1]) is int for p in ap):
        return str(ap)
    return json.dumps(ap)


def _check_sym(x, lo, hi):
    """A slice bound or index in a traced-once loop's variables must stay in
    lo..hi in every iteration (no negative wrap, no clipping: those differ
    per iteration), else the loop is traced per iteration (Retrace)."""
    if type(x) is Lin:
        tr = x.loop_trace()
        if tr is not None:
            b = x.bounds(tr)
            if b is None or b[0] < lo or b[1] > hi:
                need_retrace()


def _whole(shape):
    return [[0, 1, s] for s in shape]


def whole_dim(x):
    """A shape dim given as a float that is exactly a whole number (a CS149
    kernel's `h / pool`, Python 3's `/`: 7.0) as that int; anything else as
    it is, for the caller's own check (7.5 stays refused)."""
    if isinstance(x, (float, np.floating)) and float(x).is_integer():
        return int(x)
    return x


def _dims(shape, loc):
    """shape's dims with whole floats as ints; any other float is refused
    (int() would truncate it)."""
    shape = tuple(whole_dim(s) for s in shape)
    bad = [s for s in shape if isinstance(s, (float, np.floating))]
    if bad:
        raise NkiError("%s: shape %r: dimensions must be integers, got %r" % (loc, shape, bad[0]))
    return shape


def _t(x):
    return x.text() if isinstance(x, Lin) else str(x)


def _c_ap(shape):
    ap, step = [], 1
    for s in reversed(shape):
        ap.append([step, s])
        step *= s
    return ap[::-1]


class DynSlice:
    __slots__ = ("start", "size")

    def __init__(self, start, size):
        self.start, self.size = start, size


# ---- the current trace ----

_FILE = {}
# "file:line" per call site, keyed by (code object, offset of the calling
# instruction): f_lasti is cheap where f_lineno decodes the line table, and
# two calls on one line have different offsets but the same line, so the
# cached text is always the line the call is on
_LOC = {}


def caller_loc(depth=2):
    f = sys._getframe(depth)
    while f.f_code in SKIP:
        f = f.f_back
    key = (f.f_code, f.f_lasti)
    loc = _LOC.get(key)
    if loc is None:
        fn = f.f_code.co_filename
        b = _FILE.get(fn)
        if b is None:
            # JSON-escaped once here: the loc goes into the description as is
            b = _FILE[fn] = json.dumps(os.path.basename(fn), ensure_ascii=False)[1:-1]
        loc = _LOC[key] = "%s:%d" % (b, f.f_lineno)
    return loc


class LoopFrame:
    """What one pass over a traced-once loop body added to the trace (tile
    names, tiles, first PSUM writes), so the pass can be undone before the
    next one (language._symbolic_loop)."""
    __slots__ = ("names", "bases", "psum", "var", "start")

    def __init__(self, var, start):
        self.names, self.bases, self.psum = [], [], []
        self.var, self.start = var, start


NAME_MAX = 55   # the kernel format's longest tensor name (docs/kernel-format.md)
RESERVED = ("pid", "num_programs")   # the kernel format's expression names


class Trace:
    def __init__(self, name, grid, symbolic=True):
        """grid: per axis an int or an nl.nc annotation (docs/python.md).
        symbolic: affine_range / sequential_range bodies are traced once
        (else per iteration, as after a Retrace)."""
        self.name = name
        self.grid = tuple(g if isinstance(g, int) else g.n for g in grid)
        self.grid_json = json.dumps([g if isinstance(g, int) else g.grid_text() for g in grid])
        self.inputs = []
        self.consts = []       # nl.shared_constant: (base, JSON of its values)
        self.hbm = []          # nl.ndarray in HBM (outputs or scratch)
        self.body = []         # JSON text per op
        self.names = set()
        self.psum_written = set()   # nc_matmul accumulate=None inference (and loop_reduce's)
        self.lr_other = {}          # tile name -> written before its first loop_reduce
        self.unrolling = []         # per loop being unrolled, its finished iterations' ops
        # PSUM block-dim tiles stored one tile per logical block (_alloc.py)
        self.split_psum = False
        self.psum_blocks = False     # a PSUM block-dim tile of more than one block
        # every SBUF block-dim tile one tile per logical block (_alloc.py)
        self.split_sbuf = False
        self.sbuf_blocks = False     # an SBUF block-dim tile of more than one block, whole
        # per shape: its JSON text, C-order access pattern and whole-tensor
        # slice (shared by the tensors of that shape: never changed in place)
        self.shapes = {}
        self.symbolic = symbolic
        self.used_symbolic = False   # a loop body was traced once
        self.retrace = False         # ... and needs tracing per iteration
        self.sym_bounds = {}         # loop variable or atom -> (min, max, loop vars)
        self.frames = []             # the traced-once loops open, innermost last
        self.closed = set()          # variables of the traced-once loops done
        self.dyn_depth = 0           # inside a dynamic_range body
        self.loop_regs = {}          # dynamic loop variable -> [its register, read as one]
        self.while_open = []         # `while reg:` bodies being traced (_whilereg.py)
        # (rows, cols, first col) of a[idx_tile, cols] accesses, (size, 1, 0,
        # axis) of run-time indices t[:, q] (_runindex): for NumPy's IndexError
        self.indirect = set()
        self.sites = _sites.Sites()  # direct allocations once per site, as NKI traces
        self.mod_allocs = 0          # tiles made with beta-2's ncc.*.mod_alloc / alloc buffers
        self.target = None           # the target traced for (None: trn2), Kernel.target
        self.ranks = 0               # ncc.run_ranks: the number of ranks (_ranks.py)
        self.rank_bases = set()      # ... and its [ranks, *shape] HBM tensors, by name
        self.lnc = False             # an LNC launch, kernel[n] (Kernel.launch_grid)
        self.beta1_forms = False     # beta1_form() was called
        self.beta1_entry = False     # a beta-1 entry point (Kernel.beta1)
        self.cmp_bases = set()       # tensors made by a tile comparison (_tileops: `t == 0`)

    def loop_var(self, r):
        """A new traced-once loop variable over range r (len(r) > 0)."""
        var = self.unique("i")
        # the ends, not min(r)/max(r): those walk the whole range (a hang
        # for affine_range(10**12), which the front-end refuses instead)
        lo, hi = sorted((r[0], r[-1]))
        self.sym_bounds[var] = (lo, hi, frozenset((var,)))
        self.used_symbolic = True
        return var

    def pid_bounds(self, k):
        """(0, n - 1) for a program-id symbol ("pid", "pid<axis>")."""
        if k == "pid":
            return 0, int(np.prod(self.grid)) - 1
        if k.startswith("pid") and k[3:].isdigit() and int(k[3:]) < len(self.grid):
            return 0, self.grid[int(k[3:])] - 1
        return None

    def first_write(self, dst):
        """nc_matmul(accumulate=None) into a PSUM region not written before:
        false in the first iteration of every traced-once loop the tile
        lives across, true in the others (as per iteration): False, or an
        expression such as "(i != 0) + (k != 0)".  A region that moves
        with a loop variable is a Retrace."""
        loops = self.frames[dst.base.depth:]
        if not loops:
            return False
        lb = dst._lb if type(dst) is NkiTensor else None
        if lb is not None and lb[0]:   # a logical block: loops it moves with excluded
            loops = _groups.block_loops(self, dst, loops)
            if not loops:
                return False
        elif type(dst.offset) is Lin and dst.offset.loop_trace() is not None:
            need_retrace()
        return " + ".join("(%s != %d)" % (fr.var, fr.start) for fr in loops)

    def atom(self, key, lo, hi, of):
        """A loop-dependent symbol for a // or % expression `of` (Lin)."""
        none = (0, 0, frozenset())   # a program id: no loop owns it
        owners = frozenset().union(*(self.sym_bounds.get(k, none)[2] for k in of.t))
        self.sym_bounds[key] = (lo, hi, owners)
        return Lin(0, {key: 1})

    def check_open(self, lin):
        """A loop variable used after its loop (`last = i`): per iteration
        it is the last value, in a `for` an unknown name, so Retrace."""
        for k in lin.t:
            b = self.sym_bounds.get(k)
            if b is not None and not b[2].isdisjoint(self.closed):
                need_retrace()

    def open_frame(self, var, start):
        fr = LoopFrame(var, start)
        self.frames.append(fr)
        return fr

    def undo_pass(self, fr):
        """Forget the names and body tiles (and their PSUM writes) of one
        pass, so the next pass makes the same ones again."""
        for n in fr.names:
            self.names.discard(n)
            self.closed.discard(n)
        for b in fr.bases:
            b.dead = True
        for key in reversed(fr.psum):   # the next pass infers accumulate the same way
            if type(key) is tuple:
                _groups.restore(self, key)
            else:
                self.psum_written.discard(key)
        fr.names, fr.bases, fr.psum = [], [], []

    def close_frame(self, fr):
        """The loop is done: its tiles go out of scope; what it added stays
        in the enclosing loop's pass."""
        for b in fr.bases:
            b.dead = True
        if self.frames[-1] is not fr:   # closed out of order (a kept iterator)
            self.retrace = True
        self.frames.remove(fr)
        if self.frames:
            up = self.frames[-1]
            up.names += fr.names
            up.bases += fr.bases
            up.psum += fr.psum

    def unique(self, want):
        n = want if want and want.isidentifier() else "t"
        # past NAME_MAX: cut, and numbered to stay distinct (only a label)
        long = len(n) > NAME_MAX
        if long or n in self.names or n in RESERVED:
            n = n[:NAME_MAX - 8] if len(n) > NAME_MAX - 8 else n
            i = len(self.names)
            while "%s_%d" % (n, i) in self.names:
                i += 1
            n = "%s_%d" % (n, i)
        self.names.add(n)
        if self.frames:
            self.frames[-1].names.append(n)
        return n

    def _shape(self, shape):
        """(shape JSON text, C-order AP, whole slice) of a shape tuple."""
        c = self.shapes.get(shape)
        if c is None:
            c = self.shapes[shape] = (str(list(shape)), _c_ap(shape), _whole(shape))
        return c

    def _whole_view(self, b, sh=None):
        """The whole tensor b as a view; its operand text is its name."""
        _, ap, sl = sh or self._shape(b.shape)
        t = NkiTensor(b, 0, ap, sl)
        t._txt = '"%s"' % b.name   # what _slice_text gives for a whole tensor
        return t

    def _split_blocks(self, nki, nblk, dtype, buffer):
        """Whether a block-dim tile of NKI shape nki, of more than one
        block and without direct allocation, is stored one tile per logical
        block (_alloc.split_tensor): in PSUM when the trace is the one with
        split_psum (docs/python.md "PSUM reuse"), in SBUF when its blocks
        together exceed an SBUF partition, or in the trace with split_sbuf
        ("SBUF blocks past a partition")."""
        if int(np.prod(nki[:nblk])) == 1:
            return False
        if buffer == "psum":
            self.psum_blocks = True
            return self.split_psum
        if buffer != "sbuf":
            return False
        if self.split_sbuf or _alloc.past_sbuf(nki, nblk, dtype):
            return True
        self.sbuf_blocks = True
        return False

    def new_tensor(self, shape, dtype, buffer, name, loc, nblk=0, rot=None, place=None):
        """nblk > 0: an on-chip tile of NKI shape (B..., P, F...) with
        nblk block dims, stored as [P, B..., F...] (docs/python.md); with
        rot (per block dim k <= B), stored as [P, k..., F...] (_alloc.py).
        place: (byte address, stored first free dim) of a direct
        allocation: the tile's "addr", its first free dim padded so that
        the stored blocks are where the allocation put them."""
        f0 = None
        shape = _dims(shape, loc)
        if place is not None and place[0] == "blocks":   # _alloc._padded_past_psum
            return _alloc.split_tensor(self, tuple(map(int, shape)), nblk, dtype, name, loc,
                                       addrs=place[1])
        if nblk:
            nki = tuple(map(int, shape))
            if rot is None and place is None and self._split_blocks(nki, nblk, dtype, buffer):
                return _alloc.split_tensor(self, nki, nblk, dtype, name, loc, buffer=buffer)
            blk = nki[:nblk] if rot is None else tuple(rot)
            free = nki[nblk + 1:]
            if place is not None and free and place[1] != free[0]:
                f0, free = free[0], (place[1],) + free[1:]
            shape = nki[nblk:nblk + 1] + blk + free
        shape = tuple(map(int, shape))
        sh = self._shape(shape)
        if buffer == "sbuf" or buffer == "psum":
            nm = self.unique(name or "t")
            b = _Base(nm, shape, dtype, buffer, "tile", loc)
            b.nblk = nblk
            if rot is not None and tuple(rot) != nki[:nblk]:
                b.rot = tuple(rot)
            if self.frames:
                self.frames[-1].bases.append(b)
                b.depth = len(self.frames)
            buf = ', "buffer": "psum"' if buffer == "psum" else ""
            if place is not None:
                buf += ', "addr": %d' % place[0]
                b.address = (0, place[0])   # tiles are placed from partition 0
            decl = sh[0]
            if len(shape) > _MAX_DIMS:   # declared [P, F], viewed in NKI's dims
                decl = str([shape[0], int(np.prod(shape[1:]))])
            self.body.append('{"op": "tile", "name": "%s", "shape": %s, "dtype": "%s"%s, '
                             '"loc": "%s"}' % (nm, decl, dtype, buf, loc))
        else:
            if self.frames:   # one HBM tensor per iteration: not a `for` body
                need_retrace()
            nm = _programs.hbm_name(self, name or "out", shape, dtype, buffer)
            b = _Base(nm, shape, dtype, buffer, "hbm", loc)
            self.hbm.append(b)
        if nblk:   # the NKI view: block dims first, on the stored layout
            ap = sh[1]
            blk = ap[1:nblk + 1]
            if b.rot is not None:   # the logical block counts, the stored steps
                blk = [[st, n] for (st, _), n in zip(blk, nki[:nblk])]
            rest, sl = ap[nblk + 1:], sh[2]
            if f0 is not None:   # a padded first free dim: the NKI view has f0
                rest = [[rest[0][0], f0]] + rest[1:]
                sl = [list(e) for e in sl]
                sl[nblk + 1][2] = f0
            return NkiTensor(b, 0, blk + ap[:1] + rest, sl, nblk)
        if len(shape) > _MAX_DIMS and b.kind == "tile":   # operands as access patterns (_wide.py)
            return NkiTensor(b, 0, sh[1])
        return self._whole_view(b, sh)

    def input_name(self, want):
        """The kernel file's name of the input for argument `want`: want
        itself, or, when the kernel format cannot take it (NKI reserves no
        argument name; the format reserves pid and num_programs and takes
        each name once, an identifier of at most NAME_MAX characters),
        want_<n> (cut; "arg" for a non-identifier **kwargs key) for the
        least n >= 1 that no argument of the kernel or earlier input has
        (the kernel's arguments are in self.names: Kernel._trace)."""
        if (want.isidentifier() and len(want) <= NAME_MAX and want not in RESERVED and
                all(b.name != want for b in self.inputs)):
            return want
        base = (want if want.isidentifier() else "arg")[:NAME_MAX - 8]
        n = 1
        while "%s_%d" % (base, n) in self.names:
            n += 1
        return "%s_%d" % (base, n)

    def add_input(self, name, shape, dtype):
        name = self.input_name(name)
        self.names.add(name)
        b = _Base(name, tuple(shape), dtype, "shared_hbm", "input", None)
        self.inputs.append(b)
        return self._whole_view(b)

    def add_const(self, shape, dtype, values_json, loc, name=None):
        """An HBM constant (the kernel format's "constants" entry with
        "value"): nl.shared_constant.  name: an internal constant's own name
        (_runindex's tables, one per kernel), kept out of names so a traced-
        once loop body making it numbers its tiles alike in both passes."""
        if name is None:
            if self.frames:   # one declaration per call: not a `for` body
                need_retrace()
            name = self.unique("const")
        b = _Base(name, tuple(shape), dtype, "shared_hbm", "const", loc)
        self.consts.append((b, values_json))
        return self._whole_view(b)

    def to_json(self, outputs, schedule=None):
        from ._whilereg import check_closed
        check_closed(self)
        outs = [o.base for o in outputs]
        decl = lambda b: '{"name": "%s", "shape": %s, "dtype": "%s"}' % (b.name, list(b.shape),
                                                                       b.dtype)
        name = "".join(c if c.isalnum() or c == "_" else "_" for c in self.name) or "kernel"
        head = ['"kernel": "%s"' % name[:48]]
        if self.grid_json != "[1]":
            head.append('"grid": %s' % self.grid_json)
        head.append('"inputs": [%s]' % ", ".join(decl(b) for b in self.inputs))
        head.append('"outputs": [%s]' % ", ".join(decl(b) for b in outs))
        if self.consts:
            head.append('"constants": [%s]' % ", ".join(
                '{"name": "%s", "dtype": "%s", "value": %s}' % (b.name, b.dtype, v)
                for b, v in self.consts))
        scratch = [b for b in self.hbm if b not in outs]
        if scratch:
            head.append('"scratch": [%s]' % ", ".join(decl(b) for b in scratch))
        if schedule:
            head.append('"schedule": %s' % json.dumps(schedule))
        return "{%s,\n\"body\": [\n%s\n]}\n" % (",\n".join(head), ",\n".join(self.body))


# NKI 0.x view methods (permute, reshape_dim, ...), the reshape / slice /
# select methods and the layout queries: _views.py
from . import _views  # noqa: E402  (it needs NkiTensor defined)
from . import _runindex  # noqa: E402  (run-time indices: t[:, q])
_views.install(NkiTensor)
from ._index import (IndexExpr, IndexMask, IndexPredicate,  # noqa: E402  (_index imports
                     no_loop_iterator)                       # this module)
from . import _beta1  # noqa: E402  (beta-1 indexing and assignment; it imports this module)
# per-program tracing (_programs.py; class defaults, set per trace by it):
# pid the program traced alone (None: all, nl.program_id() a symbol),
# hbm_plan program 0's HBM tensors, used_pid whether program_id gave a symbol
Trace.pid, Trace.hbm_plan, Trace.used_pid = None, (), False
