"""tpbsim.nki.language: NKI beta-2 `nki.language` names used at trace time
(dtypes, buffers, nl.ndarray, nl.ds, the range iterators, program ids, and
the ALU / activation function names passed to nki.isa ops), and the nl
functions that are a few nki.isa ops each (nl.add(x, y) on tiles, nl.load,
nl.mean, nl.matmul, nl.softmax, ...).  docs/python.md "Supported, and not"
lists what each lowers to and what is refused."""

import builtins
import sys

import numpy as np

from .. import _ndtypes
from . import _abs_ext, _carried, _int_tt, _loadmode, _programs, _runindex, _trace, _views
from ._trace import DynSlice, Lin, NkiError, NkiTensor

class NKIObject:
    """NKI's base class of kernel dataclasses and configuration objects
    (nki.language.NKIObject).  NKI compiles such objects into the kernel;
    tpbsim traces the kernel as Python, so they are plain Python objects:
    keyword arguments become attributes, and a @dataclass subclass keeps
    its own __init__.  As in NKI, an annotated field the initializer is
    not given is None."""

    def __init_subclass__(cls, **kw):
        # NKI's initializer gives every annotated field it is not passed the
        # value None (nki-language-guide "Class Support": `def __init__(self,
        # x=None, y=False)`), with or without @dataclass; Python's dataclass
        # would demand it.  A field without a class default gets None as its
        # default here, before @dataclass (which runs after this) reads them
        super().__init_subclass__(**kw)
        for name in cls.__dict__.get("__annotations__", {}):
            if name not in cls.__dict__:
                setattr(cls, name, None)
        # a plain class attribute (`section_idx = None`, no annotation) is a
        # field as well: NKI's initializer takes it by keyword (the NKI
        # Library's attention_cte builds SectionParams(section_idx=...) of
        # such a @dataclass); Python's dataclass would ignore it
        plain = [n for n, v in cls.__dict__.items()
                 if not n.startswith("_") and n not in cls.__dict__.get("__annotations__", {})
                 and not callable(v) and not isinstance(v, (property, staticmethod, classmethod,
                                                            list, dict, set))]
        if plain:
            if "__annotations__" not in cls.__dict__:
                cls.__annotations__ = {}
            for n in plain:
                cls.__annotations__[n] = object

    def __init__(self, *args, **kwargs):
        # without @dataclass and without an __init__ of its own, a class
        # takes its annotated fields positionally too (NKI's default
        # initializer), then runs __post_init__ when it has one
        fields = [n for c in reversed(type(self).__mro__)
                  for n in c.__dict__.get("__annotations__", {})]
        if len(args) > len(fields):
            raise TypeError("%s() takes %d positional arguments (its annotated fields), %d given"
                            % (type(self).__name__, len(fields), len(args)))
        for k, v in zip(fields, args):
            if k in kwargs:
                raise TypeError("%s() got multiple values for argument %r" % (type(self).__name__, k))
            setattr(self, k, v)
        for k, v in kwargs.items():
            setattr(self, k, v)
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()


# NKI's type names for annotations: a tensor (nl.tensor, nki.tensor) is a
# traced NkiTensor, a dtype (nki.dtype, nl.DType) one of the names below
tensor = NkiTensor
DType = dtype = str


# ---- dtypes (strings, as the kernel format spells them) ----
bool_ = "bool"
int8, int16, int32 = "int8", "int16", "int32"
uint8, uint16, uint32 = "uint8", "uint16", "uint32"
float16, float32 = "float16", "float32"
# NKI's narrow floats are NumPy dtypes (ml_dtypes there, tpbsim's own
# extension module here: python/tpbsim/_ndtypes.py); _dtype() turns them
# into the kernel format's names
bfloat16 = _ndtypes.bfloat16
# float8_e4m3 is NKI's legacy IEEE-style e4m3 (inf, max 240), float8_e4m3fn
# OCP's (no inf, max 448): two formats, as in NKI (docs/semantics.md)
float8_e4m3fn = _ndtypes.float8_e4m3fn
float8_e4m3 = _ndtypes.float8_e4m3
float8_e5m2 = _ndtypes.float8_e5m2
tfloat32 = "tfloat32"   # declared by NKI; rejected by the front-end
# NKI's packed MX quads (NeuronCore-v4: four fp8 or fp4 values per element,
# scaled in [8 partitions, 4 lanes] groups): tiles and views of them feed
# quantize_mx's dst and nc_matmul_mx's data, and DMA moves them as they
# are; no other instruction takes one (docs/semantics.md "MX on
# NeuronCore-v4").  Host arrays hold their bits (uint32 / uint16).
float8_e5m2_x4, float8_e4m3fn_x4, float4_e2m1fn_x4 = (
    "float8_e5m2_x4", "float8_e4m3fn_x4", "float4_e2m1fn_x4")
# NKI 0.5's MX block scale (OCP E8M0: 2^(b - 127), 0xFF NaN): the dtype of
# quantize_mx's dst_scale and nc_matmul_mx's scales, which also take uint8
# holding the same bits; DMA moves it as it is, no other instruction takes
# one.  Host arrays hold its bits (uint8).
float8_e8m0fnu = "float8_e8m0fnu"


class _ShortDtype(_ndtypes.DtypeName):
    """NKI beta-1's short dtype names (nl.fp32, ...): the dtype string, with
    the type's finite range as .min / .max (`on_false_value=nl.fp32.min`);
    nl.bf16 also equals nl.bfloat16 (a NumPy type: _ndtypes.DtypeName)."""

    def __new__(cls, name, lo=None, hi=None):
        s = str.__new__(cls, name)
        s.min, s.max = lo, hi
        return s


def _fin(name, bits):   # finite range of a float with `bits` exponent/mantissa
    e, m = bits
    hi = (2.0 - 2.0 ** -m) * 2.0 ** (2 ** (e - 1) - 1)
    return _ShortDtype(name, -hi, hi)


fp32, fp16, bf16 = _fin(float32, (8, 23)), _fin(float16, (5, 10)), _fin("bfloat16", (8, 7))
tf32 = _ShortDtype(tfloat32)
fp8_e4m3, fp8_e5m2 = _ShortDtype("float8_e4m3fn", -448.0, 448.0), _fin("float8_e5m2", (5, 2))
_FP8_E4M3_IEEE = _fin("float8_e4m3", (4, 3))   # NKI's legacy float8_e4m3: +-240



class _Finfo:
    __slots__ = ("dtype", "min", "max", "bits")

    def __repr__(self):
        return "finfo(dtype=%s, min=%r, max=%r)" % (self.dtype, self.min, self.max)


def finfo(dtype):
    """NKI beta-1's nl.finfo(dtype) (declared, undocumented, in the beta-1
    stubs): a float dtype's .min / .max (its finite range, as nl.fp32.min)
    and .bits, as numpy.finfo gives them."""
    d = _dtype(dtype)
    s = {"float32": fp32, "float16": fp16, "bfloat16": bf16, "float8_e4m3fn": fp8_e4m3,
         "float8_e4m3": _FP8_E4M3_IEEE, "float8_e5m2": fp8_e5m2}.get(d)
    if s is None:
        raise NkiError("nl.finfo: %r is not a float dtype" % (dtype,))
    f = _Finfo()
    f.dtype, f.min, f.max = d, s.min, s.max
    f.bits = {"float32": 32, "float16": 16, "bfloat16": 16}.get(d, 8)
    return f


_NP_NAMES = {"bool": "bool", "float64": "float32"}
_PLAIN = frozenset((bool_, int8, int16, int32, uint8, uint16, uint32, float16, float32, tfloat32))


def _dtype(d):
    """A dtype as the kernel format names it.  bfloat16 / float8_e4m3fn /
    float8_e5m2 give _ndtypes.CANON's names, which also equal the NumPy
    types (a kernel's `t.dtype == nl.bfloat16`)."""
    if type(d) is str and d in _PLAIN:   # the common case: nl.float32 & co.
        return d
    n = _ndtypes.name_of(d)
    if n is not None:
        return n
    if isinstance(d, str):
        d = str(d[3:] if d.startswith(("nl.", "np.")) else d)
        return _ndtypes.CANON.get(d, d)
    try:
        n = np.dtype(d).name
    except TypeError:
        raise NkiError("unknown dtype %r" % (d,))
    n = _NP_NAMES.get(n, n)
    return _ndtypes.CANON.get(n, n)


# ---- buffers ----
sbuf, psum, hbm, private_hbm, shared_hbm = "sbuf", "psum", "hbm", "private_hbm", "shared_hbm"


def _buffer(b):
    if type(b).__name__ == "_Alloc":   # nki.compiler direct allocation (_alloc.py)
        return b.buffer
    if isinstance(b, str) and b in (sbuf, psum, hbm, private_hbm, shared_hbm):
        return b
    raise NkiError("unknown buffer %r (nl.sbuf, nl.psum, nl.hbm, nl.shared_hbm)" % (b,))


def ndarray(shape, dtype, buffer=sbuf, name="", address=None):
    """A new tensor: an SBUF/PSUM tile (a `tile` op) or an HBM tensor (an
    output when the kernel returns it, else scratch).  address=
    (partition_offset, free_offset) places a tile (_address.py)."""
    return _ndarray(shape, dtype, buffer, name, _trace.caller_loc(), address)


def _ndarray(shape, dtype, buffer, name, loc, address=None):
    shape = tuple(map(_trace.whole_dim, shape if isinstance(shape, (tuple, list)) else (shape,)))
    for s in shape:
        if (type(s) is not int and (isinstance(s, Lin) or not isinstance(s, (int, np.integer)))
                or s <= 0):
            raise NkiError("%s: nl.ndarray: bad shape %r" % (loc, shape))
    pds = [i for i, s in enumerate(shape) if type(s) is _ParDim]
    if len(pds) > 1:
        raise NkiError("%s: nl.ndarray: shape %s: nl.par_dim given more than once" %
                       (loc, [int(s) for s in shape]))
    # block dims: only on chip (an HBM tensor has no partitions: par_dim is
    # a plain size there, as in NKI)
    nblk = pds[0] if pds and _buffer(buffer) in (sbuf, psum) else 0
    tr, dt, rot, place = _trace.current(), _dtype(dtype), None, None
    if tr.ranks and _buffer(buffer) in (hbm, private_hbm, shared_hbm):
        from . import _ranks   # ncc.run_ranks: every rank its own HBM tensor
        return _ranks.rank_hbm(tr, shape, dt, _buffer(buffer), name, loc)
    if type(buffer).__name__ == "_Alloc":
        tr.mod_allocs += 1   # written for beta-2's traced-once loops (_carried)
        if not getattr(tr, "force_auto_alloc", False):
            from . import _alloc
            p = pds[0] if pds else 0
            rot, place = tr.sites.once(loc, (tuple(shape), dt, buffer.buffer, p),
                                       lambda: _alloc.plan(buffer, shape, p, dt, loc))
    if address is not None and not getattr(tr, "force_auto_alloc", False):
        from . import _address   # NKI 0.x direct allocation of one tile
        if place is not None:
            raise NkiError("%s: nl.ndarray: both address= and a direct-allocation buffer" % loc)
        place = _address.place(address, shape, nblk, dt, _buffer(buffer), loc)
    return tr.new_tensor(shape, dt, _buffer(buffer), name, loc, nblk, rot, place)


def is_hbm(buffer):
    """NKI: whether the buffer is an HBM one (nl.hbm, private_hbm, shared_hbm)."""
    return _buffer(buffer) in (hbm, private_hbm, shared_hbm)


def is_on_chip(buffer):
    """NKI: whether the buffer is SBUF or PSUM."""
    return _buffer(buffer) in (sbuf, psum)


def is_psum(buffer):
    return _buffer(buffer) == psum


def is_sbuf(buffer):
    return _buffer(buffer) == sbuf


def _filled(shape, value, dtype, buffer, name, loc, fn):
    """A new tensor filled with value: a memset of a tile, or a dma_copy of
    the number into an HBM tensor (the kernel format makes the memset tile)."""
    from . import isa
    try:
        v = isa._scalar(value, "fill_value", loc)
    except NkiError as e:
        raise NkiError("nl.%s: %s" % (fn, e)) from None
    if isinstance(value, NkiTensor):
        raise NkiError("%s: nl.%s: fill_value must be a number, got a tensor" % (loc, fn))
    t = _ndarray(shape, dtype, buffer, name, loc)
    if is_hbm(t.buffer):
        _fill_hbm(t, v, loc)
    else:   # the whole stored tile (also of a tile with block dims)
        if t.base.rot is not None or t.base.kind == "split":
            from . import _alloc
            return _alloc.fill_blocks(t, v, loc, fn)
        isa._emit("memset", loc, [("dst", '"%s"' % t.base.name), ("value", v)])
        if t.buffer == psum:   # for a later `+=` (_groups.status)
            from . import _groups
            _groups.mark_whole(_trace.current(), t.base)
    return t


def _fill_hbm(t, v, loc):
    """dma_copy the immediate text v into the HBM view t: the kernel
    format's number tile is [<= 128 rows, rest], 2-D (one element: [1, 1])."""
    from . import isa
    if not t.shape:
        t = NkiTensor(t.base, t.offset, [[1, 1], [1, 1]])
    d = t.reshape((t.shape[0], int(np.prod(t.shape[1:])))) if len(t.shape) > 2 else t
    for r in builtins.range(0, t.shape[0], 128):
        isa._emit("dma_copy", loc, [("dst", (d[r:r + 128] if t.shape[0] > 128 else d).text()),
                                    ("src", v)])


# lazy_initialization= (NKI beta-1): whether NKI's compiler may fold the
# fill into the tile's first write; the values are the same, tpbsim always
# fills at once
def zeros(shape, dtype, buffer=sbuf, name="", lazy_initialization=False):
    return _filled(shape, 0, dtype, buffer, name, _trace.caller_loc(), "zeros")


def ones(shape, dtype, buffer=sbuf, name="", lazy_initialization=False):
    return _filled(shape, 1, dtype, buffer, name, _trace.caller_loc(), "ones")


def full(shape, fill_value, dtype, buffer=sbuf, name="", lazy_initialization=False):
    return _filled(shape, fill_value, dtype, buffer, name, _trace.caller_loc(), "full")


def _like(x, fn, loc):
    if not isinstance(x, NkiTensor):
        raise NkiError("%s: nl.%s: expected a tensor, got %r" % (loc, fn, x))
    if x._pd:
        raise NkiError("%s: nl.%s of '%s', a view keeping block dims, is not supported by "
                       "tpbsim" % (loc, fn, x.name))
    return x


def zeros_like(x, dtype=None, buffer=None, name=""):
    """NKI: zeros of x's shape; dtype defaults to x's, buffer to SBUF."""
    loc = _trace.caller_loc()
    x = _like(x, "zeros_like", loc)
    return _filled(x.shape, 0, dtype or x.dtype, buffer or sbuf, name, loc, "zeros_like")


def empty_like(x, dtype=None, buffer=None, name=""):
    """NKI: an uninitialised tensor of x's shape; dtype and buffer default to x's."""
    loc = _trace.caller_loc()
    x = _like(x, "empty_like", loc)
    return _ndarray(x.shape, dtype or x.dtype, buffer or x.buffer, name, loc)


def expand_dims(x, axis):
    """NKI / numpy.expand_dims: a view of x with a size-1 axis inserted at
    position axis (a raw access pattern; no data moves).  On an SBUF/PSUM
    tile axis 0 would move the partition axis into the free axes: refused."""
    loc = _trace.caller_loc()
    x = _like(x, "expand_dims", loc)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise NkiError("%s: nl.expand_dims: axis must be an integer, got %r" % (loc, axis))
    n = len(x._ap) + 1
    a = int(axis) + n if axis < 0 else int(axis)
    if not 0 <= a < n:
        raise NkiError("%s: nl.expand_dims: axis %d is out of range for %d-D %s" %
                       (loc, axis, n - 1, list(x.shape)))
    if a == 0 and x._onchip():
        raise NkiError("%s: nl.expand_dims: axis 0 of an SBUF/PSUM tile (the partition "
                       "axis) is not supported by tpbsim" % loc)
    if x._ind is not None or x._gt is not None:   # a gather / scatter (not by name)
        raise NkiError("%s: nl.expand_dims: an indirect view is not supported" % loc)
    ap = [list(p) for p in x._ap]
    ap.insert(a, [1, 1])
    return NkiTensor(x.base, x.offset, ap)


def broadcast_to(x, shape, dtype=None):
    """NKI / numpy.broadcast_to of an SBUF/PSUM tile: the same rank, each
    dim of x equal to shape's or 1 (a 1-D [P] tile is a [P, 1, ...]
    column, the SDK's `(1.0 / sum).broadcast_to((P, F))`).  x itself when
    nothing changes; else a new SBUF tile: a partition dim of 1 grown by
    one broadcast_partition, free dims of 1 by one tensor_copy reading them
    with step 0."""
    return _broadcast_to(x, shape, dtype, _trace.caller_loc())


def _broadcast_to(x, shape, dtype, loc):
    shape = tuple(map(_trace.whole_dim, shape))
    if not isinstance(x, NkiTensor) or not x._onchip() or x._pd:
        raise NkiError("%s: nl.broadcast_to: x must be an SBUF/PSUM tile (not a view keeping "
                       "block dims), got %r" % (loc, x))
    if len(x.shape) == 1 and len(shape) > 1:   # a [P] column
        x = NkiTensor(x.base, x.offset, x._ap + [[0, 1] for _ in shape[1:]])
    if len(x.shape) != len(shape) or [1 for a, b in zip(x.shape, shape) if a not in (1, b)]:
        raise NkiError("%s: nl.broadcast_to: %s cannot be broadcast to %s (NKI: the same rank, "
                       "each dim equal or 1)" % (loc, list(x.shape), list(shape)))
    dt = _dtype(dtype) if dtype else x.dtype
    if x.shape[0] != shape[0]:   # x's one partition read by every partition
        x = _copied("broadcast_partition", x, (shape[0],) + x.shape[1:],
                    dt if x.shape[1:] == shape[1:] else x.dtype, loc)
    if x.shape != shape or x.dtype != dt:
        x = _copied("tensor_copy", _step0(x, shape), shape, dt, loc)
    return x


def _copied(op, src, shape, dtype, loc):
    """A new SBUF tile of shape and dtype written by op (dst, src)."""
    from . import isa
    t = _trace.current().new_tensor(shape, dtype, sbuf, "", loc)
    isa._emit(op, loc, [("dst", t.text()), ("src", src.text())])
    return t


class _ParDim(int):
    """nl.par_dim(n): n, marked as the partition dim of a shape."""


def par_dim(n):
    n = _trace.whole_dim(n)
    if isinstance(n, (float, np.floating)):   # _ParDim(7.5) would be 7
        raise NkiError("%s: nl.par_dim: the size must be an integer, got %r" %
                       (_trace.caller_loc(), n))
    return _ParDim(n)


def ds(start, size):
    return DynSlice(start, size)


def _range(start, stop=None, step=1):
    if stop is None:
        start, stop = 0, start
    return builtins.range(start, stop, step)


static_range = _range


def _traced_loop(kind, r, loc):
    """affine_range / sequential_range in a kernel being traced: the body
    traced once with a symbolic variable into a kernel-format loop with a
    "var", "range" and "body" (_symbolic_loop), or, when the kernel is
    traced per iteration (after a Retrace; also for 0 or 1 iterations and
    inside a dynamic_range body), per iteration (_unrolled_loop)."""
    tr = _trace.current()
    if tr.symbolic and len(r) > 1 and not tr.dyn_depth:
        return _symbolic_loop(tr, kind, r, loc)
    return _unrolled_loop(tr, kind, r, loc)


def _symbolic_loop(tr, kind, r, loc):
    """Yield one symbolic variable (a Lin) twice: the body is traced two
    times, the first pass undone before the second (Trace.undo_pass).  The
    passes must give the same ops, which catches Python state carried from
    one iteration to the next (`prev = t`, a counter used in an op), and
    so must the Python state they leave (_carried: a counter read after
    the loop); the ops become one loop op with a body.  A pass that stops
    early (break, return, an exception), ops or state that differ make the
    kernel be traced again per iteration (docs/python.md "Loops")."""
    var = tr.loop_var(r)
    sym = Lin(0, {var: 1})
    fr = tr.open_frame(var, r.start)
    mark = len(tr.body)
    passes = []
    site = tr.sites.enter_loop(loc)
    state = _carried.Watch(tr, sys._getframe(1))   # the frame running the loop
    try:
        for p in (0, 1):
            with tr.sites.iteration(site):
                yield sym
            state.after_pass(sys._getframe(1))
            passes.append(tr.body[mark:])
            del tr.body[mark:]
            if p == 0:
                tr.undo_pass(fr)
    finally:
        tr.close_frame(fr)
        tr.closed.add(var)
        if len(passes) != 2:
            tr.retrace = True   # closed early: no exception may escape here
    if passes[0] != passes[1] or state.carried():
        _trace.need_retrace()
    rng = [r.start, r.stop, r.step] if r.step != 1 else [r.start, r.stop] if r.start else [r.stop]
    tr.body.append('{"op": "%s", "var": "%s", "range": %s, "loc": "%s", "body": [\n%s\n]}' % (
        kind, var, rng, loc, ",\n".join(passes[1])))


def _unrolled_loop(tr, kind, r, loc):
    """Run the loop in Python (the variable is an int), but group each
    iteration's ops into one kernel-format loop op with "iterations"
    (docs/python.md), so the compiler knows the loop and can roll it
    (tpb compile --loops, docs/compiler.md "Rolled loops")."""
    mark = len(tr.body)
    iters = []
    site = tr.sites.enter_loop(loc)
    tr.unrolling.append(iters)   # (what an op wrote in an earlier iteration: _beta1)
    try:
        for v in r:
            with tr.sites.iteration(site):
                yield v
            iters.append(tr.body[mark:])
            del tr.body[mark:]
    finally:
        tr.unrolling[:] = [x for x in tr.unrolling if x is not iters]
        if len(tr.body) > mark:   # left by break: the iteration ran up to it
            iters.append(tr.body[mark:])
            del tr.body[mark:]
        if iters:
            tr.body.append('{"op": "%s", "loc": "%s", "iterations": [%s]}' % (
                kind, loc, ",\n".join("[\n%s\n]" % ",\n".join(it) for it in iters)))


class no_reorder:
    """NKI's `with nl.no_reorder():` -- the ops traced inside (dynamically
    scoped: also those of functions called there) each run after the
    block's previous op; one kernel-format "no_reorder" op (docs/python.md,
    docs/kernel-format.md "Scheduling")."""

    def __enter__(self):
        tr = _trace.current()
        self._mark = len(tr.body)
        self._loc = _trace.caller_loc()
        return self

    def __exit__(self, *exc):
        tr = _trace.current()
        body = tr.body[self._mark:]
        del tr.body[self._mark:]
        if body:
            tr.body.append('{"op": "no_reorder", "loc": "%s", "body": [\n%s\n]}' % (
                self._loc, ",\n".join(body)))
        return False


from . import _wide   # noqa: E402  (ops over more than 5 dims)
from ._psum_pair import off_psum   # noqa: E402
from ._promote import promote   # noqa: E402  (the dtype of an op on two tiles)

# index expressions (nl.arange, nl.mgrid, masks): _index.py
from ._index import (_CMP_OPS, IndexExpr, IndexMask, IndexPredicate, _Grid,  # noqa: E402,F401
                     _MGrid, _mask_truth, arange, mgrid)


def affine_range(start, stop=None, step=1, directives=None, precise_schedule=False):
    """precise_schedule (NKI beta-1, nki-samples' pipelined attention): a
    scheduling hint for NKI's compiler; values do not depend on it."""
    r = _range(start, stop, step)
    return _traced_loop("affine_range", r, _trace.caller_loc()) if _trace.stack() else r


def sequential_range(start, stop=None, step=1, directives=None):
    r = _range(start, stop, step)
    return _traced_loop("sequential_range", r, _trace.caller_loc()) if _trace.stack() else r


def program_id(axis=0):
    tr = _trace.current()
    if tr.ranks:   # ncc.run_ranks: every rank is an LNC=1 launch
        return 0
    if axis < 0 or axis >= (len(tr.grid) or 1):
        raise NkiError("nl.program_id(%d): the launch grid has %d axes" % (axis, len(tr.grid)))
    if tr.grid[axis] == 1 and len(tr.grid) == 1:
        return 0
    return _programs.program_id(tr, axis)   # an int when traced per program, else a Lin


def num_programs(axes=None):
    g = _trace.current().grid
    if _trace.current().ranks:
        return 1
    if axes is None:
        return int(np.prod(g))
    if isinstance(axes, (tuple, list)):
        return int(np.prod([g[a] for a in axes]))
    return g[axes]


def program_ndim():
    g = _trace.current().grid
    return 0 if g == (1,) or _trace.current().ranks else len(g)


def _grid_int(x, what):
    """A launch-grid size: an integer (2.7 or "2" is an error, never
    truncated or parsed)."""
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise NkiError("%s: %r is not an integer" % (what, x))
    return int(x)


class nc:
    """nl.nc(k): a launch-grid axis spread over k physical cores.  As in NKI,
    `nl.nc(k) * m` (= `nl.spmd_dim(nl.nc(k), m)`) is k*m instances blocked
    over the cores (instance i on core i // m) and `m * nl.nc(k)`
    (= `nl.spmd_dim(m, nl.nc(k))`) interleaves them (core i % k)."""

    def __init__(self, k):
        self.k, self.m, self.interleaved = _grid_int(k, "nl.nc(k)"), 1, False
        if self.k < 1:
            raise NkiError("nl.nc(%r): the core count must be positive" % k)

    @property
    def n(self):
        """The axis size (instances on this axis)."""
        return self.k * self.m

    def _times(self, m, interleaved):
        if isinstance(m, nc) or self.m != 1:
            raise NkiError("a launch-grid axis takes one nl.nc(k) times one integer "
                           "(nl.nc(k) * m or m * nl.nc(k))")
        r = nc(self.k)
        r.m, r.interleaved = _grid_int(m, "nl.nc(%d) * m" % self.k), interleaved
        if r.m < 1:
            raise NkiError("nl.nc(%d) * %r: the multiplier must be positive" % (self.k, m))
        return r

    def __mul__(self, m):
        return self._times(m, False)

    def __rmul__(self, m):
        return self._times(m, True)

    def grid_text(self):
        """The axis in the kernel format's grid (docs/kernel-format.md)."""
        if self.m == 1:
            return "nc(%d)" % self.k
        if self.interleaved:
            return "%d*nc(%d)" % (self.m, self.k)
        return "nc(%d)*%d" % (self.k, self.m)


def spmd_dim(a, b):
    """nl.spmd_dim(nl.nc(k), m): blocked; nl.spmd_dim(m, nl.nc(k)):
    interleaved (NKI's spelled-out forms of nc(k) * m and m * nc(k))."""
    if isinstance(a, nc) and not isinstance(b, nc):
        return a * b
    if isinstance(b, nc) and not isinstance(a, nc):
        return a * b
    raise NkiError("nl.spmd_dim(%r, %r): exactly one argument must be nl.nc(k)" % (a, b))


class _TileSize:
    pmax = 128
    psum_fmax = 2048 // 4
    psum_bank_fmax = 2048 // 4
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    psum_num_banks = 8
    psum_bank_fmax_bytes = 2048
    # the least byte alignment of a free-dim address (nl.ndarray(address=)):
    # NKI's values (its front-end's tile_size constants, leanprover/KLR's
    # kernelEnv); tpbsim asks a multiple of the element size (kernel-format.md)
    psum_min_align = 4
    sbuf_min_align = 1

    @property
    def total_available_sbuf_size(self):
        """Usable SBUF bytes per partition (NKI's deprecated name, which the
        NKI Library budgets its tiles with): the partition size of the
        target traced for (trn1 192 KiB, trn2 224 KiB, trn3 256 KiB)."""
        from ._alloc import _sbuf_bytes
        return _sbuf_bytes()

    sbuf_fmax_bytes = total_available_sbuf_size

    @property
    def sbuf_fmax(self):
        return self.sbuf_fmax_bytes // 4

    @property
    def sbuf_size_bytes(self):
        return self.sbuf_fmax_bytes * self.pmax


tile_size = _TileSize()


# ---- ALU and activation function names ----
class _Fn:
    """An nl function used as an op name (op=nl.add, op=nl.exp, ...)."""

    def __init__(self, name):
        self.name = name

    def __call__(self, x, *a, dtype=None, **k):
        """nl.<op>(x, y) / nl.<func>(x) on tiles: one nki.isa op into a new
        SBUF tile (tensor_tensor, tensor_scalar -- also the unary rounding
        ops -- or activation)."""
        loc = _trace.caller_loc()
        mask = k.pop("mask", None)   # NKI: an index-expression mask over the result
        from ._beta1 import skipped, whole_mask
        mask, off = whole_mask(mask)
        if off:
            y = a[0] if a and isinstance(a[0], NkiTensor) and not isinstance(x, NkiTensor) else x
            return skipped(y.shape, dtype or y.dtype, sbuf)
        if self.name in ("abs_max", "abs_min") and len(a) == 1 and not k:   # signed, trn3
            return _abs_ext.signed(self.name, x, a[0], dtype, loc, mask)
        if self.name in _BINARY and len(a) == 1 and not k:
            return _binary(self.name, x, a[0], dtype, loc, mask)
        if (self.name in _UNARY_ALU or self.name in _UNARY) and not a and not k and \
                isinstance(x, NkiTensor):
            return _unary(self.name, x, loc, dtype, mask)
        raise NkiError("%s: nl.%s(...) with these arguments is not supported by tpbsim; use "
                       "the nki.isa ops (pass nl.%s as their op)" % (loc, self.name, self.name))

    def __repr__(self):
        return "nl." + self.name


_BINARY = set("""add subtract multiply divide maximum minimum abs_max abs_min power equal
not_equal less less_equal greater greater_equal logical_and logical_or logical_xor bitwise_and
bitwise_or bitwise_xor left_shift right_shift mod fmod""".split())
# unary ALU ops (tensor_scalar without an operand): the rounding family
# (invert: the ALU's bitwise_not, NKI's "XOR with all-ones")
_UNARY_ALU = set("floor ceil trunc negative invert logical_not".split())
_UNARY = set("""exp log tanh sigmoid relu gelu gelu_dx gelu_apprx_tanh gelu_apprx_sigmoid
gelu_apprx_sigmoid_dx silu silu_dx softplus mish erf erf_dx sqrt rsqrt square reciprocal sin
cos tan arctan sign copy abs identity""".split())


def _unary(name, x, loc, dtype=None, mask=None):
    """nl.<name>(x) of a unary function: one nki.isa op into a new SBUF tile
    (tensor_scalar for the ALU's, activation for the others)."""
    from . import isa
    op, field = ("tensor_scalar", "op0") if name in _UNARY_ALU else ("activation", "func")
    t = _trace.current().new_tensor(x.shape, _dtype(dtype) if dtype else x.dtype, sbuf, "", loc)
    f = [(field, '"%s"' % name)]
    if name == "logical_not":   # NKI's "XOR with 1": logical_xor 1, x == 0 on any input
        op, f = "tensor_scalar", [("op0", '"logical_xor"'), ("operand0", "1")]
    if name == "copy" and {x.dtype, t.dtype} <= _INT_DTYPES:
        # exact (the Vector engine's; Activation computes in fp32)
        op, f = "tensor_copy", []
    _wide.emit(op, loc, isa._mask([("dst", t.text()), ("src", x.text())] + f, mask, loc, t),
               {"dst": t, "src": x})
    return t


def _is_col(t, other):
    """A [P, 1] tile used as a per-partition scalar against `other`."""
    return (isinstance(t, NkiTensor) and isinstance(other, NkiTensor) and
            t.shape[1:] in ((1,), ()) and t.shape[0] == other.shape[0] and
            other.shape != t.shape)


def _broadcast_shape(name, tiles, loc):
    """The shape tiles of one rank broadcast to, as NumPy's (NKI's rule for
    the nl element-wise functions); else NkiError naming the shapes."""
    shapes = [tuple(t.shape) for t in tiles]
    try:
        if len(set(map(len, shapes))) > 1:   # NumPy would put a partition dim on a free dim
            raise ValueError
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise NkiError("%s: nl.%s: shapes %s do not broadcast (tpbsim: tiles of one rank, "
                       "each dim equal or 1)" % (loc, name, " and ".join(str(list(s))
                                                                       for s in shapes))) from None


def _partitions(name, t, out, loc):
    """t with a partition dim of 1 broadcast to out's (broadcast_to: one
    broadcast_partition into a new tile), else t."""
    if t._pd:
        raise NkiError("%s: nl.%s: broadcasting a tile that keeps block dims (%s) is not "
                       "supported" % (loc, name, list(t.shape)))
    if t.shape[0] == 1 and out[0] != 1:
        return _broadcast_to(t, (out[0],) + t.shape[1:], None, loc)
    return t


def _step0(t, out):
    """t read as shape out (the same partitions): its free dims of 1 with
    step 0."""
    if t.shape == out:
        return t
    return NkiTensor(t.base, t.offset, t._ap[:1] + [
        [0, m] if c == 1 and m != 1 else a for a, c, m in zip(t._ap[1:], t.shape[1:], out[1:])])


def _broadcast(name, x, y, loc):
    """x and y (tiles of other shapes, the same rank) broadcast as NumPy
    does: a partition dim of 1 against P is a broadcast_to (_partitions);
    a free dim of 1 against n a view with step 0 on that dim -- except a
    [P, 1] operand against a tile, which stays the per-partition scalar of
    a tensor_scalar."""
    out = _broadcast_shape(name, (x, y), loc)
    x, y = (_partitions(name, t, out, loc) for t in (x, y))
    if x.shape == out and _is_col(y, x) or y.shape == out and _is_col(x, y):
        return x, y
    return _step0(x, out), _step0(y, out)


_INT_DTYPES = frozenset("int8 int16 int32 uint8 uint16 uint32 bool".split())


def _divide_dtype(x, y):
    """nl.divide's result dtype when none is given.  NKI documents none for
    its binary ops (nl.divide is "similar to numpy.divide"), so NumPy's
    true division: integers divided give a float, float32 here (NKI has no
    float64); else the float tile's dtype, as the other ops take their
    tile operand's (two tiles: NKI's promotion, _promote.py).
    (resize_nearest: int32 iota / width, then nl.floor.)  docs/python.md
    "Tile arithmetic"."""
    tiles = [_dtype(t.dtype) for t in (x, y) if isinstance(t, NkiTensor)]
    if not [d for d in tiles if d not in _INT_DTYPES]:   # (nl.all shadows all())
        return float32
    return _promoted(tiles)


def _promoted(dtypes):
    """The dtype of one tile, or NKI's promotion of two (_promote.py)."""
    return promote(*dtypes) if len(dtypes) == 2 else dtypes[0]


def _binary(name, x, y, dtype, loc, mask=None):
    from . import isa
    tx, ty = isinstance(x, NkiTensor), isinstance(y, NkiTensor)
    if not tx and not ty:
        raise NkiError("%s: nl.%s needs at least one tensor" % (loc, name))
    if dtype is None and name == "divide":
        dtype = _divide_dtype(x, y)
    elif dtype is None and tx and ty:   # two tiles: NKI's type promotion
        dtype = promote(_dtype(x.dtype), _dtype(y.dtype))
    if tx and ty and x.shape == y.shape:
        y = off_psum(x, y, loc)   # not both in PSUM (_psum_pair.py)
        t = _trace.current().new_tensor(x.shape, _dtype(dtype) if dtype else x.dtype, sbuf,
                                        "", loc)
        f = [("dst", t.text()), ("in0", x.text()), ("in1", y.text()),
             ("operator", '"%s"' % name)] + _int_tt.engine_field(name, (t, x, y))
        _wide.emit("tensor_tensor", loc, isa._mask(f, mask, loc, t),
                   {"dst": t, "in0": x, "in1": y})
        return t
    if tx and ty and not (_is_col(x, y) or _is_col(y, x)):
        x, y = _broadcast(name, x, y, loc)
        if x.shape == y.shape or not (_is_col(x, y) or _is_col(y, x)):
            return _binary(name, x, y, dtype, loc, mask)
    rev = not tx or _is_col(x, y)   # the tensor operand is y
    data, scal = (y, x) if rev else (x, y)
    t = _trace.current().new_tensor(data.shape, _dtype(dtype) if dtype else data.dtype, sbuf,
                                    "", loc)
    f = [("dst", t.text()), ("src", data.text()), ("op0", '"%s"' % name),
         ("operand0", isa._scalar(scal, "y", loc))]
    if rev:
        f.append(("reverse0", "true"))
    _wide.emit("tensor_scalar", loc, isa._mask(f, mask, loc, t), {"dst": t, "src": data})
    return t


def where(condition, x, y, dtype=None, mask=None):
    """nl.where (NumPy's): a new SBUF tile, x where condition != 0 else y
    (one select), the tiles broadcast as the nl element-wise functions'
    (_partitions, _step0).  x or y may be a number: y is select's
    immediate, x a memset [P, 1] column read with step 0 (select's on_true
    is a tile).  The dtype is x's and y's (promoted when both are tiles).
    mask= (NKI beta-1) over the result, as the element-wise functions'.
    A condition of nl.arange / nl.mgrid comparisons: _where_index.py."""
    loc = _trace.caller_loc()
    from ._beta1 import whole_mask
    mask, off = whole_mask(mask)
    from . import _where_index
    if not isinstance(condition, NkiTensor):   # an index predicate, or a bool
        return _where_index.where(condition, x, y, dtype, mask, off, loc)
    return _where_index.where_tile(condition, x, y, dtype, mask, off, loc)


def load(src, dtype=None, mask=None, mode=None):
    """nl.load: a new SBUF tile holding src (one dma_copy); mask= (NKI
    beta-1) bounds on single indices, as nl.store's: only that rectangle is
    loaded (_beta1.masked_load); a condition on loop variables only that is
    false loads nothing (_beta1.whole_mask).  mode= (beta-1): the DMA's
    nisa.oob_mode (_loadmode.py)."""
    loc = _trace.caller_loc()
    skip = _loadmode.skips(mode, "nl.load", loc)
    if type(src) is _views._Dyn:   # an index read at run time (_runindex.py)
        _runindex.no_skip(skip, "nl.load", loc)
        return _runindex.load(src, dtype, mask, loc)
    from ._beta1 import skipped, whole_mask
    mask, off = whole_mask(mask)
    if not isinstance(src, NkiTensor):
        from ._state import not_tensor
        raise NkiError("%s: nl.load: expected a tensor, got %s" % (loc, not_tensor(src)))
    if not src.shape:   # one element (sinks[b, h]): a [1, 1] tile
        src = NkiTensor(src.base, src.offset, [[1, 1], [1, 1]])
    if off:   # nothing accessed: src may index past the tensor (its _oob unraised)
        return skipped(src.shape, dtype or src.dtype, sbuf)
    if skip:
        return _loadmode.load_skip(src, dtype, mask, loc)
    if mask is not None:
        from ._beta1 import masked_load
        return masked_load(src, dtype, mask, loc)
    t = _trace.current().new_tensor(src.shape, _dtype(dtype) if dtype else src.dtype, sbuf,
                                    "", loc)
    from . import isa
    isa._emit("dma_copy", loc, [("dst", t.text()), ("src", src.text())])
    return t


def store(dst, value, mask=None, mode=None):
    """nl.store: dst <- value (one dma_copy); mask= (NKI beta-1) bounds on
    single indices, `(i_p < 64) & (i_f < 256)`: both sides cut to that
    rectangle (docs/python.md "Beta-1 call forms"); mode=, as nl.load's."""
    loc = _trace.caller_loc()
    skip = _loadmode.skips(mode, "nl.store", loc)
    if type(dst) is _views._Dyn:   # an index read at run time (_runindex.py)
        _runindex.no_skip(skip, "nl.store", loc)
        return _runindex.store(dst, value, mask, loc)
    from . import isa
    from ._beta1 import whole_mask
    mask, off = whole_mask(mask)
    if off:   # a condition on loop variables only, false: nothing stored
        return
    if skip:
        return _loadmode.store_skip(dst, value, mask, loc)
    if mask is not None:
        from . import _masked
        if not _masked.rectangle(dst, mask, "nl.store", "dst", loc):
            return _masked.store(dst, value, mask, loc)
        from ._beta1 import mask_rect
        dst, value = (mask_rect(x, mask, "nl.store", w, loc)
                      for x, w in ((dst, "dst"), (value, "value")))
    if (isinstance(value, (int, float)) and not isinstance(value, bool) and
            isinstance(dst, NkiTensor) and is_hbm(dst.buffer)):   # beta-1: a number (a fill)
        return _fill_hbm(dst, isa._scalar(value, "value", loc), loc)
    dst, value = _trace.dma_sides(dst, value)
    isa._emit("dma_copy", loc, [("dst", isa._t(dst, "dst", loc)),
                                ("src", isa._t(value, "value", loc))])


_NAMES = """add subtract multiply divide maximum minimum abs_max abs_min power equal
not_equal less less_equal greater greater_equal logical_and logical_or logical_xor
bitwise_and bitwise_or bitwise_xor invert left_shift right_shift mod fmod abs rsqrt reciprocal
exp log tanh sigmoid relu gelu gelu_dx gelu_apprx_tanh gelu_apprx_sigmoid silu silu_dx
softplus mish erf erf_dx sqrt square sin arctan sign copy bypass logical_not negative
cos tan ceil floor trunc gelu_apprx_sigmoid_dx prelu average identity""".split()
for _n in _NAMES:
    globals()[_n] = _Fn(_n)
del _n


class _Reduce(_Fn):
    """nl.sum / nl.max / nl.min: an op name, or called as nl.sum(x, axis)
    a tensor_reduce into a new SBUF tile (the reduced axes dropped)."""

    def __init__(self, name, alu):
        _Fn.__init__(self, alu)
        self.nl_name = name

    def __call__(self, x, axis, dtype=None, keepdims=False, mask=None):
        loc = _trace.caller_loc()
        if not isinstance(x, NkiTensor):
            raise NkiError("%s: nl.%s: expected a tensor" % (loc, self.nl_name))
        from ._refuse import reduce_axes
        axes = reduce_axes(x.shape, axis, "nl." + self.nl_name, loc)
        return _reduce(x, axes, self.name, _dtype(dtype) if dtype else x.dtype, keepdims, loc,
                       mask, "nl." + self.nl_name)


def _reduce(x, axes, op, dtype, keepdims, loc, mask=None, fn="nl.sum", cut=False):
    """A tensor_reduce of x over axes into a new SBUF tile of dtype.  mask=
    (NKI beta-1) is over x's indices: True is no mask, False writes nothing;
    a comparison on a kept axis masks the result, bounds on a reduced axis
    reduce over the indices they keep (_beta1.input_mask).  cut: return
    (the tile, the part of x reduced -- None when nothing is --, the mask
    over the tile's indices)."""
    shape = [1 if d in axes else n for d, n in enumerate(x.shape) if keepdims or d not in axes]
    from ._beta1 import input_mask, skipped, whole_mask
    from ._index import reduce_axes
    mask, off = whole_mask(mask)
    mask, x = input_mask(mask, x, reduce_axes(len(x.shape), axes, len(shape)), len(shape),
                         fn, loc)
    if off or x is None:
        t = skipped(shape, dtype, sbuf)
        return (t, None, None) if cut else t
    t = _trace.current().new_tensor(shape, dtype, sbuf, "", loc)
    from . import isa
    if not [d for d in axes if x.shape[d] != 1]:
        # over one element the reduction is a copy (the back end's TensorReduce
        # needs an axis of more than one element), as beta-1's tensor_reduce
        kind, f = "tensor_copy", [("dst", t.text()), ("src", x.text())]
    else:
        kind = "tensor_reduce"
        f = [("dst", t.text()), ("src", x.text()), ("operator", '"%s"' % op),
             ("axis", str(axes))] + ([("keepdims", "true")] if keepdims else [])
    isa._emit(kind, loc, isa._mask(f, mask, loc, t))
    return (t, x, mask) if cut else t


max = _Reduce("max", "maximum")   # noqa: A001 (NKI's names)
min = _Reduce("min", "minimum")   # noqa: A001
sum = _Reduce("sum", "add")   # noqa: A001


# NumPy functions whose __name__ is not the op's name (np.max is "amax";
# np.sum as a reduce op, nki-samples' pipelined attention, adds)
_NP_OPS = {"amax": "max", "amin": "min", "sum": "add"}


def _op_name(f, what):
    if isinstance(f, _Fn):
        return f.name
    if isinstance(f, str):
        return f
    if f is None:
        return None
    n = getattr(f, "__name__", None)
    if n:
        return _NP_OPS.get(n, n)
    raise NkiError("%s: %r is not an operator name (use nl.add, nl.exp, ...)" % (what, f))


# run-time loops (dynamic_range, fori_loop, while_loop) live in _dynloop.py
from ._dynloop import (_is_vreg, _loop_register, dynamic_range, fori_loop,  # noqa: E402,F401
                       while_loop)

# the composite functions live in _composite.py (imported here, after the
# names they use are defined)
from ._composite import (all, device_print, dropout, gather_flattened,  # noqa: E402,F401,A004
                         load_transpose2d, loop_reduce, matmul, mean, prod, rand,
                         random_seed, rms_norm, shared_constant, shared_identity_matrix,
                         softmax, transpose, var)

from ._host import static_cast  # noqa: E402,F401
from . import _lconst  # noqa: E402
_lconst.install(__name__, globals(), {"sizeinbytes": _lconst.sizeinbytes})
# the ops a run-time select's DMA adds inside nl.load / nl.store
# (_views.dynamic_dma) are the kernel line's
_trace.SKIP.update((load.__code__, store.__code__))


__all__ = [n for n in dir() if not n.startswith("_")] + ["NkiTensor"]


# nl.range: the NKI Library's experimental kernels loop with it
# (mxfp_load_utils); NKI's API reference does not list it.  Read as a loop
# in program order, sequential_range: every loop form gives the same values
# here, so the choice only names the loop in the kernel file.  Bound last:
# the module's own code uses builtins.range.
range = sequential_range   # noqa: A001  (NKI's name)
