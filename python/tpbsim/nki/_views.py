"""NKI 0.x tensor view methods (nki.language.NkiTensor): permute,
broadcast, expand_dim, squeeze_dim, reshape_dim, flatten_dims, reshape,
rearrange, slice, select, vector_select, view / reinterpret_cast, indirect
and the queries is_contiguous, get_pattern, is_indirect, strides, size.

A view is its base tensor, an element offset and [step, count] pairs
(_trace.NkiTensor); every method here builds a new one of those, sharing
the base's storage (no op is emitted).  SBUF / PSUM tiles keep their
partition dim first, as NKI's docstrings require (the kernel format's raw
access pattern takes the partition pair first, step = the tile's row).  A
view the access patterns cannot express raises NkiError naming the method
and why (docs/python.md "NKI 0.x tensor views")."""
import numpy as np

from . import _trace
from ._trace import Lin, NkiError, NkiTensor, _c_ap


# ---- argument checks ----

def _call(method, *args):
    return "%s(%s)" % (method, ", ".join(repr(a) for a in args))


def _fail(t, call, why):
    raise NkiError("%s of '%s' %s: %s" % (call, t.base.name, list(t.shape), why))


def _plain(t, call):
    """Refuse views whose access pattern is not a plain [step, count] list
    the methods can rework."""
    if t._oob is not None:
        raise t._oob[0]
    if t._pd:
        _fail(t, call, "the view keeps block dims before its partition dim (index the blocks "
                       "first: t[i]); not supported by tpbsim")
    if t.base.kind == "split":
        _fail(t, call, "a tile with block dims stored one tile per block is not "
                       "supported by tpbsim (index the blocks first)")
    if is_indirect(t) and type(t) is not _Dyn:
        _fail(t, call, "an indirect (gather / scatter) view cannot be viewed again in tpbsim "
                       "(its partitions lo:hi only, by slicing)")


def _shape_int(t, call, x, what):
    """A size (shape entry): an integer, or a float that is exactly one."""
    return _int(t, call, _trace.whole_dim(x), what)


def _int(t, call, x, what):
    if isinstance(x, (bool, np.bool_)):
        _fail(t, call, "%s must be an integer, got %r" % (what, x))
    if isinstance(x, Lin):
        if x.loop_trace() is not None:
            _trace.need_retrace()   # traced per iteration: then a plain int
        _fail(t, call, "%s depends on nl.program_id() (it must be a constant)" % what)
    if isinstance(x, (int, np.integer)):
        return int(x)
    _fail(t, call, "%s must be an integer, got %r" % (what, x))


def _dim(t, call, d, n, what="dim"):
    """d as a dim index in 0..n-1 (negative counts from the end, as NumPy)."""
    d0 = _int(t, call, d, what)
    d = d0 + n if d0 < 0 else d0
    if not 0 <= d < n:
        _fail(t, call, "%s %d is out of range for a %d-D view" % (what, d0, len(t._ap)))
    return d


def _ints(t, call, xs, what, one=_int):
    if isinstance(xs, (str, bytes)) or not hasattr(xs, "__iter__"):
        _fail(t, call, "%s must be a tuple of integers, got %r" % (what, xs))
    return [one(t, call, x, what) for x in xs]


def _new(t, off, ap):
    if type(t) is _Dyn:   # a view of a run-time select keeps its index
        return _dyn(NkiTensor(t.base, off, ap), t.dyn)
    v = NkiTensor(t.base, off, ap)
    v._lb = t._lb   # still inside the same logical block (block-dim tiles)
    return v


def _pairs(t):
    return [list(p) for p in t._ap]


def _no_partition(t, call, d, what="dim"):
    if d == 0 and t._onchip():
        _fail(t, call, "%s 0 is the partition dim of an SBUF/PSUM tile (NKI keeps it first "
                       "and whole)" % what)


# ---- shape views ----

def permute(self, dims):
    """NKI: reorder the dims; dims a permutation of range(ndim), dims[0]
    == 0 on an SBUF/PSUM tile."""
    call = _call("permute", dims)
    _plain(self, call)
    n = len(self._ap)
    ds = _ints(self, call, dims, "dims")
    ds = [d + n if d < 0 else d for d in ds]
    if sorted(ds) != list(range(n)):
        _fail(self, call, "dims must be a permutation of 0..%d" % (n - 1))
    if self._onchip() and ds[0] != 0:
        _fail(self, call, "on an SBUF/PSUM tile dims[0] must be 0 (the partition dim stays "
                          "first)")
    if ds == list(range(n)):
        return self
    return _new(self, self.offset, [list(self._ap[d]) for d in ds])


def broadcast(self, dim, size):
    """NKI: a size-1 dim repeated size times (step 0)."""
    call = _call("broadcast", dim, size)
    _plain(self, call)
    d = _dim(self, call, dim, len(self._ap))
    size = _shape_int(self, call, size, "size")
    if size < 1:
        _fail(self, call, "size must be >= 1")
    if self._ap[d][1] != 1:
        _fail(self, call, "dim %d has size %d; only a size-1 dim can be broadcast" %
              (d, self._ap[d][1]))
    _no_partition(self, call, d)
    ap = _pairs(self)
    ap[d] = [0, size]
    return _new(self, self.offset, ap)


def expand_dim(self, dim):
    """NKI: a new size-1 dim at position dim (0..ndim)."""
    call = _call("expand_dim", dim)
    _plain(self, call)
    n = len(self._ap)
    d = _dim(self, call, dim, n + 1)
    _no_partition(self, call, d)
    ap = _pairs(self)
    ap.insert(d, [ap[d][0] * ap[d][1] if d < n else 1, 1])
    return _new(self, self.offset, ap)


def squeeze_dim(self, dim):
    """NKI: drop a size-1 dim."""
    call = _call("squeeze_dim", dim)
    _plain(self, call)
    n = len(self._ap)
    d = _dim(self, call, dim, n)
    if self._ap[d][1] != 1:
        _fail(self, call, "dim %d has size %d; only a size-1 dim can be squeezed" %
              (d, self._ap[d][1]))
    _no_partition(self, call, d)
    if n == 1:
        _fail(self, call, "a view keeps at least one dim")
    ap = _pairs(self)
    del ap[d]
    return _new(self, self.offset, ap)


def _infer(t, call, sizes, total):
    """sizes with one -1 replaced so that their product is total."""
    if sizes.count(-1) > 1:
        _fail(t, call, "only one size may be -1")
    if any(s < 1 and s != -1 for s in sizes):
        _fail(t, call, "sizes must be >= 1 (or one -1)")
    known = int(np.prod([s for s in sizes if s != -1]))
    if -1 in sizes:
        if total % known:
            _fail(t, call, "%d elements cannot be split into %s" % (total, sizes))
        sizes = [total // known if s == -1 else s for s in sizes]
    if int(np.prod(sizes)) != total:
        _fail(t, call, "the product of %s is not %d" % (sizes, total))
    return sizes


def reshape_dim(self, dim, shape):
    """NKI: split one dim into shape (one entry may be -1); an SBUF/PSUM
    tile's partition dim only into itself."""
    call = _call("reshape_dim", dim, shape)
    _plain(self, call)
    d = _dim(self, call, dim, len(self._ap))
    step, cnt = self._ap[d]
    sizes = _infer(self, call, _ints(self, call, shape, "shape", _shape_int), cnt)
    if not sizes:
        _fail(self, call, "shape must not be empty")
    if len(sizes) == 1:
        return self
    _no_partition(self, call, d)
    split = []
    for s in reversed(sizes):
        split.append([step, s])
        step *= s
    ap = _pairs(self)
    ap[d:d + 1] = split[::-1]
    return _new(self, self.offset, ap)


def _merge(pairs):
    """[step, count] pairs as one, or None when they are not one strided
    run (dims of size 1 do not matter)."""
    kept = [p for p in pairs if p[1] != 1]
    total = int(np.prod([p[1] for p in pairs]))
    for (so, _), (si, ci) in zip(kept, kept[1:]):
        if so != si * ci:
            return None
    return [kept[-1][0] if kept else pairs[-1][0], total]


def flatten_dims(self, start_dim, end_dim):
    """NKI: merge dims start_dim..end_dim (inclusive), which must be
    contiguous in memory; start_dim > 0 on an SBUF/PSUM tile."""
    call = _call("flatten_dims", start_dim, end_dim)
    _plain(self, call)
    n = len(self._ap)
    s = _dim(self, call, start_dim, n, "start_dim")
    e = _dim(self, call, end_dim, n, "end_dim")
    if s > e:
        _fail(self, call, "start_dim must not be after end_dim")
    _no_partition(self, call, s, "start_dim")
    if s == e:
        return self
    m = _merge(self._ap[s:e + 1])
    if m is None:
        _fail(self, call, "dims %d..%d (pattern %s) are not contiguous in memory (after a "
                          "permute or a strided slice), so they are not one dim of a view" %
              (s, e, self._ap[s:e + 1]))
    ap = _pairs(self)
    ap[s:e + 1] = [m]
    return _new(self, self.offset, ap)


def _restride(pairs, shape):
    """The [step, count] pairs of shape viewing the elements of pairs in the
    same (C) order, or None when they cannot (NumPy's no-copy reshape:
    each group of old dims that makes a group of new ones must be one
    strided run)."""
    old = [p for p in pairs if p[1] != 1]
    new = [None] * len(shape)
    oi = ni = 0
    while ni < len(shape) and oi < len(old):
        nj, oj = ni + 1, oi + 1
        np_, op = shape[ni], old[oi][1]
        while np_ != op:
            if np_ < op:
                np_ *= shape[nj]
                nj += 1
            else:
                op *= old[oj][1]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][0] != old[k + 1][0] * old[k + 1][1]:
                return None
        st = old[oj - 1][0]
        for k in range(nj - 1, ni - 1, -1):
            new[k] = [st, shape[k]]
            st *= shape[k]
        ni, oi = nj, oj
    for k in range(ni, len(shape)):   # trailing size-1 dims
        new[k] = [1, 1]
    return new


def reshape(self, shape):
    """NKI: the same elements in C order as shape, without a copy; an
    SBUF/PSUM tile keeps its partition count (shape[0])."""
    call = _call("reshape", shape)
    _plain(self, call)
    total = int(np.prod(self.shape))
    want = _ints(self, call, shape, "shape", _shape_int)
    if not want or any(s < 1 and s != -1 for s in want) or want.count(-1) > 1 or (
            -1 not in want and int(np.prod(want)) != total):
        raise NkiError("cannot reshape '%s' %s to %s" % (self.base.name, list(self.shape),
                                                         list(want)))
    want = tuple(_infer(self, call, want, total))
    onchip = self._onchip()
    if onchip and want[0] != self._ap[0][1]:
        _fail(self, call, "an SBUF/PSUM tile keeps its partition dim: shape[0] must be %d" %
              self._ap[0][1])
    if self._contig():
        return _new(self, self.offset, _c_ap(want))
    ap = _restride(self._ap[1:], want[1:]) if onchip else _restride(self._ap, want)
    if ap is None:
        _fail(self, call, "the view's layout (pattern %s) cannot be seen as that shape "
                          "without a copy (after a permute or a strided slice)" % self._ap)
    return _new(self, self.offset, [list(self._ap[0])] + ap if onchip else ap)


def rearrange(self, src_pattern, dst_pattern, fixed_sizes=None):
    """NKI (einops-style): src_pattern names the dims (a tuple of names
    splits one dim, sizes from fixed_sizes, one inferred; () is a size-1
    dim), dst_pattern orders them (a tuple merges dims, which must be
    contiguous; () adds a size-1 dim).  reshape_dim, permute and
    flatten_dims in turn."""
    call = _call("rearrange", src_pattern, dst_pattern, fixed_sizes)
    _plain(self, call)
    fixed = dict(fixed_sizes or {})

    def groups(pat, what):
        if isinstance(pat, str) or not hasattr(pat, "__iter__"):
            _fail(self, call, "%s must be a tuple of names and tuples of names" % what)
        out = []
        for g in pat:
            g = (g,) if isinstance(g, str) else tuple(g)
            if not all(isinstance(x, str) and x.isidentifier() for x in g):
                _fail(self, call, "%s: %r is not a name or a tuple of names" % (what, g))
            out.append(g)
        return out

    src, dst = groups(src_pattern, "src_pattern"), groups(dst_pattern, "dst_pattern")
    if len(src) != len(self._ap):
        _fail(self, call, "src_pattern has %d dims, the view %d" % (len(src), len(self._ap)))
    names = [x for g in src for x in g]
    order = [x for g in dst for x in g]
    if len(set(names)) != len(names) or len(set(order)) != len(order) or set(names) != set(order):
        _fail(self, call, "src_pattern and dst_pattern must name the same dims once each")
    for k in fixed:
        if k not in names:
            _fail(self, call, "fixed_sizes names %r, which src_pattern does not" % k)
    v = self
    for d in range(len(src) - 1, -1, -1):   # right to left: dims before d keep their index
        g = src[d]
        if not g:
            v = squeeze_dim(v, d)
        elif len(g) == 1:
            if g[0] in fixed and _shape_int(self, call, fixed[g[0]], g[0]) != v._ap[d][1]:
                _fail(self, call, "dim %d (%r) has size %d, fixed_sizes says %r" %
                      (d, g[0], v._ap[d][1], fixed[g[0]]))
        else:
            v = reshape_dim(v, d, [_shape_int(self, call, fixed.get(x, -1), x) for x in g])
    v = permute(v, [names.index(x) for x in order])
    pos, starts = 0, []
    for g in dst:
        starts.append(pos)
        pos += len(g)
    for g, p in reversed(list(zip(dst, starts))):
        if not g:
            v = expand_dim(v, p)
        elif len(g) > 1:
            v = flatten_dims(v, p, p + len(g) - 1)
    return v


# ---- element access ----

def slice_(self, dim, start, end, step=1):
    """NKI: t[..., start:end:step, ...] on dim (0 <= start < end <= size,
    step >= 1)."""
    call = _call("slice", dim, start, end, step)
    n = len(self._ap)
    d = _dim(self, call, dim, n)
    step = _int(self, call, step, "step")
    if step < 1:
        _fail(self, call, "step must be >= 1")
    cnt = self.shape[d]
    if type(start) is not Lin and type(end) is not Lin:
        start, end = _int(self, call, start, "start"), _int(self, call, end, "end")
        if not 0 <= start < end <= cnt:
            _fail(self, call, "needs 0 <= start < end <= %d (the size of dim %d)" % (cnt, d))
    key = [slice(None)] * n
    key[d] = slice(start, end, step)
    return self[tuple(key)]


def select(self, dim, index):
    """NKI: index on dim (dropped, except an SBUF/PSUM tile's partition
    dim, kept at size 1).  A tensor index: a run-time select of an HBM
    view (_Dyn, for nisa.dma_copy)."""
    call = _call("select", dim, index)
    n = len(self._ap)
    d = _dim(self, call, dim, n)
    if isinstance(index, NkiTensor):
        _plain(self, call)
        if type(self) is _Dyn:
            _fail(self, call, "only one dynamic select per view (NKI)")
        if self._onchip():
            _fail(self, call, "a run-time index on an SBUF/PSUM tile is not supported by "
                              "tpbsim (only on HBM, for nisa.dma_copy)")
        if self._ap[d][0] == 0:
            _fail(self, call, "dim %d is a broadcast (step 0) dim" % d)
        static = select(self, d, 0)
        return _dyn(static, _dyn_index(self, call, index, self._ap[d][0], self._ap[d][1]))
    if type(index) is not Lin:
        index = _int(self, call, index, "index")
        if not 0 <= index < self.shape[d]:
            _fail(self, call, "needs 0 <= index < %d (the size of dim %d)" % (self.shape[d], d))
    key = [slice(None)] * n
    key[d] = index
    return self[tuple(key)]


def vector_select(self, dim, vector_offset):
    """NKI: partition p of the result is row vector_offset[p] of a 2-D HBM
    view (dim 0): the kernel format's indirect (gather / scatter) operand,
    as .ap(vector_offset=)."""
    call = _call("vector_select", dim, vector_offset)
    _plain(self, call)
    if _int(self, call, dim, "dim") != 0:
        _fail(self, call, "dim must be 0")
    if self._onchip():
        _fail(self, call, "only an HBM tensor can be vector-selected")
    vo = vector_offset
    if (not isinstance(vo, NkiTensor) or not vo._onchip() or len(vo.shape) != 2 or
            vo.shape[1] != 1):
        _fail(self, call, "vector_offset must be an SBUF (P, 1) tile of indices")
    if len(self._ap) != 2 or self._ap[1][0] != 1:
        _fail(self, call, "tpbsim gathers rows of a 2-D HBM view with contiguous rows "
                          "(flatten_dims the other dims first)")
    if self._ap[0][0] == 0:
        _fail(self, call, "dim 0 is a broadcast (step 0) dim")
    return self.ap(pattern=[[self._ap[0][0], vo.shape[0]], list(self._ap[1])],
                   vector_offset=vo, indirect_dim=0)


def view(self, dtype):
    """NKI: the bytes read as dtype (_reinterp.py); the same dtype gives the
    view itself."""
    from . import _reinterp
    return _reinterp.view(self, dtype)


def indirect(self, index, num_elem=None):
    raise NkiError("tensor.indirect() of '%s' (NeuronCore-v4 tensor indirection) is not "
                   "supported by tpbsim" % self.base.name)


# ---- run-time (dynamic) selects: select(dim, tensor), .ap(scalar_offset=) ----

class _Dyn(NkiTensor):
    """A view moved at run time by index * stride elements: (index, stride,
    the largest valid index) in dyn.  Only nisa.dma_copy between it (an
    HBM view) and an SBUF/PSUM tile takes it (dynamic_dma); any other use
    raises, never reading the static view instead."""
    __slots__ = ("dyn",)

    def text(self):
        raise NkiError("'%s' %s selected with a run-time index (select(dim, tensor) / "
                       ".ap(scalar_offset=) / t[:, idx_sbuf[0, i]]): tpbsim takes it only as "
                       "the HBM side of nisa.dma_copy, nl.load or nl.store" % (
                           self.base.name, list(self.shape)))

    def __getitem__(self, key):
        v = NkiTensor.__getitem__(self, key)
        return _dyn(v, self.dyn) if type(v) is NkiTensor and v.base is self.base else v

    def ap(self, *a, **k):
        raise NkiError(".ap() of '%s', a view with a run-time index, is not supported by "
                       "tpbsim" % self.base.name)


def _dyn(static, dyn):
    v = _Dyn(static.base, static.offset, static._ap)
    v.dyn = dyn
    return v


def _dyn_index(t, call, index, stride, count):
    """(index view, stride, count): the index must be one int32/uint32
    element of an SBUF/PSUM tile; the offset index * stride is computed
    in fp32 on the Vector engine, so every product must be exact there
    (_exact_in_fp32)."""
    if (not index._onchip() or type(index) is not NkiTensor or
            int(np.prod(index.shape)) != 1 or index.dtype not in ("int32", "uint32")):
        _fail(t, call, "the run-time index must be one int32/uint32 element of an SBUF tile "
                       "((1, 1)), got %r" % (index,))
    if not _exact_in_fp32(stride, count):
        _fail(t, call, "tpbsim scales a run-time index in fp32: index x stride %d for indices "
                       "below %d needs more than fp32's 24 significant bits" % (stride, count))
    return index, stride, count


def _exact_in_fp32(stride, count):
    """Whether every index * stride (0 <= index < count) is exact in fp32:
    stride's power of two costs no significant bits (fg_allgather moves a
    [4, ..., 1024, 4096] tensor by whole 2^22-element ranks)."""
    step, last = abs(int(stride)), int(count) - 1
    if step <= 1 or last <= 0:
        return True
    odd = step // (step & -step)   # the stride without its power of two
    return last * odd < 1 << 24 and last * step < 1 << 31


def ap_scalar(self, pattern, offset, scalar_offset, vector_offset, indirect_dim, dtype, base_ap):
    """NKI .ap(scalar_offset=idx, indirect_dim=d): the pattern moved by
    idx * (the stride of dim d of this tensor) elements at run time.  The
    dim is one of self.shape, the tensor .ap is called on (as NKI
    documents it): after a reshape that is the reshaped shape, not the
    allocation's (a [s, b, h, q] mask reshaped to [1, s, 2, b*h*q / 2]
    and indexed on dim 2 moves by b*h*q / 2 elements, not q)."""
    call = ".ap(scalar_offset=...)"
    if vector_offset is not None:
        _fail(self, call, "scalar_offset and vector_offset cannot be combined")
    d = _dim(self, call, indirect_dim, len(self._ap), "indirect_dim")
    stride, count = self._ap[d]
    kind = type(scalar_offset).__name__
    if kind == "Lin" or (isinstance(scalar_offset, (int, np.integer)) and
                         not isinstance(scalar_offset, bool)):
        # a dynamic_range / fori_loop index (in tpbsim a symbol that moves
        # DMA addresses), a program id or a number: a static offset
        v = base_ap(self, pattern, offset=offset, dtype=dtype)
        return NkiTensor(v.base, v.offset + scalar_offset * stride, v._ap)
    if kind == "VirtualRegister":   # its value, through a tile (register_store)
        from . import isa, language
        t = language.ndarray((1, 1), dtype="int32", buffer="sbuf", name="dyn_index")
        isa.register_store(t, scalar_offset)
        scalar_offset = t
    if not isinstance(scalar_offset, NkiTensor):
        _fail(self, call, "scalar_offset must be an SBUF tile, got %r" % (scalar_offset,))
    if self._onchip():
        _fail(self, call, "a run-time offset on an SBUF/PSUM tile is not supported by tpbsim "
                          "(only on HBM, for nisa.dma_copy)")
    # (under ncc.run_ranks self is the rank's part: its dims are the rank's)
    static = base_ap(self, pattern, offset=offset, dtype=dtype)
    return _dyn(static, _dyn_index(self, call, scalar_offset, stride, count))


# the sequencer register run-time selects use: the lowest, away from
# register_alloc's (r63 down) and the rolled loops' (r63 down; a register a
# TensorLoad uses, r0..r7 here, is never taken: docs/compiler.md)
DYN_REG = 0


def dynamic_dma(dst, src, loc, oob, dge, priority, name, rmw, mask):
    """nisa.dma_copy with a run-time-selected HBM side: the index scaled
    into an int32 tile (tensor_scalar multiply), loaded into register
    DYN_REG of every engine (load_tensor_to_register), and the kernel
    format's register-offset DMA (load with src_reg, store with dst_reg;
    a dma_copy with one of them when the other side is HBM too); the
    simulator checks the moved access against the tensor before anything
    moves (oob_mode error: the run stops; skip, HBM to HBM: nothing moves)."""
    from . import isa, language
    _trace.SKIP.update((dynamic_dma.__code__, isa.dma_copy.__code__))   # ops at the kernel line
    d_dyn, s_dyn = type(dst) is _Dyn, type(src) is _Dyn
    side = src if s_dyn else dst
    other = dst if s_dyn else src
    if d_dyn and s_dyn:
        raise NkiError("%s: dma_copy: both sides selected at run time (not supported by tpbsim)"
                       % loc)
    if not isinstance(other, NkiTensor):
        raise NkiError("%s: dma_copy: a view with a run-time index needs a tensor on the other "
                       "side in tpbsim (a register-offset DMA), got %r" % (loc, other))
    if rmw is not None or mask is not None:
        raise NkiError("%s: dma_copy: dst_rmw_op / mask with a run-time index are not "
                       "supported by tpbsim" % loc)
    if isa._enum_of(isa.oob_mode, oob, "oob_mode", loc) == isa.oob_mode.skip and other._onchip():
        # (between two HBM tensors the register-offset copy below takes
        # skip: the whole copy skipped when the moved access leaves the
        # tensor, the trigger's bounds of docs/semantics-dma.md)
        from . import _dyn_skip   # skipped out-of-range rows: an indirect DMA
        return _dyn_skip.skip_dma(dst, src, side, loc, dict(oob_mode=oob, dge_mode=dge,
                                                              priority=priority, name=name))
    index, stride, _ = side.dyn
    if hasattr(side.dyn, "offset_tile"):   # a beta-1 run-time index, bounds-checked (_runindex)
        skip = isa._enum_of(isa.oob_mode, oob, "oob_mode", loc) == isa.oob_mode.skip
        index, stride = side.dyn.offset_tile(loc, skip), 1
    if not (isinstance(index.offset, int) and index.offset == 0):
        # an element off partition 0 (cross_entropy's targets tile [P, 1],
        # element p): to a tile of its own, as a register load or the
        # multiply starts at a quadrant
        t = language.ndarray((1, 1), dtype=index.dtype, buffer="sbuf", name="dyn_index")
        isa.dma_copy(dst=t, src=index)
        index = t
    off = index
    if stride != 1:
        off = language.ndarray((1, 1), dtype="int32", buffer="sbuf", name="dyn_offset")
        isa.tensor_scalar(dst=off, data=index, op0=language.multiply, operand0=stride)
    # one register for every run-time select, loaded right before its DMA
    # (each engine runs its register loads and DMA triggers in program order)
    isa._emit("load_tensor_to_register", loc, [("src", isa._t(off, "src", loc)),
                                               ("reg", str(DYN_REG))])
    static = NkiTensor(side.base, side.offset, side._ap)
    op = "dma_copy" if not other._onchip() else "load" if s_dyn else "store"
    f = isa._dma(op, static if d_dyn else dst, static if s_dyn else src, loc, oob, dge, priority)
    f.append(("src_reg" if s_dyn else "dst_reg", str(DYN_REG)))
    isa._emit(op, loc, isa._common(f, name, None, loc))


# ---- queries ----

def is_contiguous(self):
    """NKI: every dim of size > 1 steps by the product of the sizes inside
    it (an SBUF/PSUM tile: its free dims only)."""
    inner = 1
    for st, c in reversed(self._ap[1:] if self._onchip() else self._ap):
        if c != 1:
            if st != inner:
                return False
            inner *= c
    return True


def get_pattern(self):
    """NKI: the view's [[step, count], ...] (what .ap() takes)."""
    return [list(p) for p in self._ap]


def is_indirect(self):
    """NKI: a gather / scatter or run-time selected view.  Structural: every
    gather / scatter view gets its _ind where it is made (_indirect.py,
    _gather_nd.py), a run-time select is a _Dyn; never the kernel text,
    which holds user names (a parameter named 'index')."""
    return type(self) is _Dyn or self._ind is not None or self._gt is not None


def _strides(self):
    return tuple(st for st, _ in self._ap)


def _size(self):
    return int(np.prod([c for _, c in self._ap]))


def install(cls):
    for name, f in (("permute", permute), ("broadcast", broadcast), ("expand_dim", expand_dim),
                    ("squeeze_dim", squeeze_dim), ("reshape_dim", reshape_dim),
                    ("flatten_dims", flatten_dims), ("reshape", reshape),
                    ("rearrange", rearrange), ("slice", slice_), ("select", select),
                    ("vector_select", vector_select), ("view", view),
                    ("reinterpret_cast", view), ("indirect", indirect),
                    ("is_contiguous", is_contiguous), ("get_pattern", get_pattern),
                    ("is_indirect", is_indirect)):
        setattr(cls, name, f)
    cls.strides = property(_strides)
    cls.size = property(_size)
    base_ap = cls.ap

    def ap(self, pattern, offset=None, scalar_offset=None, vector_offset=None, indirect_dim=0,
           dtype=None):
        if scalar_offset is None or getattr(scalar_offset, "static", None) is not None:
            # (ncc.rank_id(): a per-program constant, a static offset in base_ap)
            return base_ap(self, pattern, offset, scalar_offset, vector_offset, indirect_dim,
                           dtype)
        return ap_scalar(self, pattern, offset, scalar_offset, vector_offset, indirect_dim,
                         dtype, base_ap)
    ap.__doc__ = base_ap.__doc__
    cls.ap = ap
