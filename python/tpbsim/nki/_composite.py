"""tpbsim.nki.language's composite functions: nl.mean, nl.var, nl.softmax,
nl.matmul, nl.shared_constant, ... -- each a few nki.isa ops traced into the
kernel format (docs/python.md "Supported, and not").  Imported by
language.py, which re-exports them under NKI's names."""
import json

import numpy as np

from . import _trace
from ._trace import NkiError, NkiTensor
from ._alloc import _DT_BYTES
from .language import (_INT_DTYPES, _dtype, _ndarray, _reduce, float32, float16, hbm, int8,
                       int16, int32, is_on_chip, private_hbm, psum, sbuf, shared_hbm, uint8,
                       uint16, uint32)


def _emit(op, loc, fields):
    from . import isa
    isa._emit(op, loc, fields)


def _new(shape, dtype, loc, buffer=sbuf):
    return _trace.current().new_tensor(shape, dtype, buffer, "", loc)


def _tile(x, fn, what, loc, buffers=(sbuf, psum)):
    """x as an operand of nl.<fn>: a tensor in one of buffers."""
    if not isinstance(x, NkiTensor) or x.buffer not in buffers:
        raise NkiError("%s: nl.%s: %s must be a tensor in %s, got %r" % (
            loc, fn, what, "HBM" if hbm in buffers else "/".join(b.upper() for b in buffers), x))
    return x


def _free_axes(x, axis, fn, loc, every=False):
    """NKI's reduction axes of x (_refuse.reduce_axes: the last contiguous
    free dims, negative ones counting from the end).  every: they must be
    all the free dims (the result is a per-partition scalar)."""
    from ._refuse import reduce_axes
    ax = reduce_axes(x.shape, axis, "nl." + fn, loc)
    if every and ax != list(range(1, len(x.shape))):
        raise NkiError("%s: nl.%s: axis %r: tpbsim supports reducing all free dims only "
                       "(axis %s for a %d-D tile)" % (loc, fn, axis, list(range(1, len(x.shape))),
                                                      len(x.shape)))
    return ax


def _whole(mask, fn, loc):
    """NKI beta-1's mask= of an nl function that takes no index-expression
    mask: a condition on loop variables only (_beta1.whole_mask), True
    (or None) or False; whether it is False (the function then writes
    nothing).  An index-expression mask raises naming fn and the argument."""
    from ._beta1 import whole_mask
    mask, off = whole_mask(mask)
    if mask is not None:
        raise NkiError("%s: nl.%s: argument 'mask': an index-expression mask is not supported "
                       "by tpbsim for nl.%s (a condition on loop variables only is)" %
                       (loc, fn, fn))
    return off


def _skipped(shape, dtype, buffer=sbuf):
    from ._beta1 import skipped
    return skipped(shape, dtype, buffer)


def _count(x, axes):
    return int(np.prod([x.shape[a] for a in axes]))


def _ts(src, op0, operand0, dtype, loc, op1=None, operand1=None, mask=None):
    """A new tile = (src op0 operand0) [op1 operand1] (one tensor_scalar;
    mask: over its indices)."""
    from . import isa
    t = _new(src.shape, dtype, loc)
    f = [("dst", t.text()), ("src", src.text()), ("op0", '"%s"' % op0),
         ("operand0", isa._scalar(operand0, "operand0", loc))]
    if op1:
        f += [("op1", '"%s"' % op1), ("operand1", isa._scalar(operand1, "operand1", loc))]
    _emit("tensor_scalar", loc, isa._mask(f, mask, loc, t))
    return t


def _col(t):
    """A keepdims reduction [P, 1, ..., 1] as the [P, 1] per-partition scalar."""
    return t.reshape((t.shape[0], 1))


def _out_dtype(dtype, x):
    return _dtype(dtype) if dtype is not None else x.dtype


def mean(x, axis, dtype=None, keepdims=False, mask=None):
    """NKI: the mean over free axes, in float32 (a tensor_reduce add into a
    float32 tile, then a tensor_scalar divide by the count into dtype).
    mask= as nl.sum's; the count is the reduced elements it keeps."""
    loc = _trace.caller_loc()
    x = _tile(x, "mean", "x", loc)
    axes = _free_axes(x, axis, "mean", loc)
    s, cut, m = _reduce(x, axes, "add", float32, keepdims, loc, mask, "nl.mean", cut=True)
    if cut is None:
        return s   # masked off: nothing written
    return _ts(s, "divide", float(_count(cut, axes)), _out_dtype(dtype, x), loc, mask=m)


def prod(x, axis, dtype=None, keepdims=False, mask=None):
    """NKI: the product over free axes (one tensor_reduce multiply, as nl.sum,
    mask= too)."""
    loc = _trace.caller_loc()
    x = _tile(x, "prod", "x", loc)
    return _reduce(x, _free_axes(x, axis, "prod", loc), "multiply", _out_dtype(dtype, x),
                   keepdims, loc, mask, "nl.prod")


def var(x, axis, dtype=None, keepdims=False, mask=None):
    """NKI: the population variance over the reduced free axes (NKI's rule:
    the last contiguous ones), in float32; the result keeps the reduced
    axes (NKI ignores keepdims): mean, x - mean (a tensor_scalar when every
    free axis is reduced, else a tensor_tensor reading the mean with step 0
    along the reduced axes), its square (tensor_tensor), sum, divide by the
    count.  mask=: a condition on loop variables only (_whole)."""
    from .language import _binary
    loc = _trace.caller_loc()
    x = _tile(x, "var", "x", loc)
    axes = _free_axes(x, axis, "var", loc)
    if _whole(mask, "var", loc):
        return _skipped([1 if d in axes else n for d, n in enumerate(x.shape)],
                        _out_dtype(dtype, x))
    n = float(_count(x, axes))
    m = _ts(_reduce(x, axes, "add", float32, True, loc), "divide", n, float32, loc)
    if axes == list(range(1, len(x.shape))):
        d = _ts(x, "subtract", _col(m), float32, loc)
    else:
        d = _binary("subtract", x, m, float32, loc)
    sq = _new(x.shape, float32, loc)
    _emit("tensor_tensor", loc, [("dst", sq.text()), ("in0", d.text()), ("in1", d.text()),
                                 ("operator", '"multiply"')])
    return _ts(_reduce(sq, axes, "add", float32, True, loc), "divide", n,
               _out_dtype(dtype, x), loc)


def all(x, axis, dtype=None, mask=None):   # noqa: A001 (NKI's name)
    """NKI: 1 where every element along the free axes is nonzero, else 0
    (x != 0 as a float32 tile, then a tensor_reduce minimum into dtype,
    default x's dtype; mask= as nl.sum's)."""
    loc = _trace.caller_loc()
    x = _tile(x, "all", "x", loc)
    axes = _free_axes(x, axis, "all", loc)
    nz = _ts(x, "not_equal", 0.0, float32, loc)
    return _reduce(nz, axes, "minimum", _out_dtype(dtype, x), False, loc, mask, "nl.all")


def softmax(x, axis=-1, dtype=None, mask=None):
    """NKI: exp(x - max) / sum(exp(x - max)) over all free axes: a
    tensor_reduce max, its negation, an exp activation with that bias
    summing each row into a [P, 1] tile, and a tensor_scalar divide.
    mask=: a condition on loop variables only (_whole)."""
    loc = _trace.caller_loc()
    x = _tile(x, "softmax", "x", loc)
    axes = _free_axes(x, axis, "softmax", loc)
    if _whole(mask, "softmax", loc):
        return _skipped(x.shape, _out_dtype(dtype, x))
    if axes != list(range(1, len(x.shape))):
        return _softmax_axes(x, axes, _out_dtype(dtype, x), loc)
    mx = _reduce(x, list(range(1, len(x.shape))), "maximum", float32, True, loc)
    neg = _ts(_col(mx), "multiply", -1.0, float32, loc)
    e, s = _new(x.shape, float32, loc), _new((x.shape[0], 1), float32, loc)
    _emit("activation", loc, [("dst", e.text()), ("src", x.text()), ("func", '"exp"'),
                              ("bias", neg.text()), ("reduce_op", '"add"'),
                              ("reduce_res", s.text())])
    return _ts(e, "divide", s, _out_dtype(dtype, x), loc)


def _softmax_axes(x, axes, dtype, loc):
    """Softmax over some trailing free axes of x (not all of them): the max
    and the sum are keepdims reductions over those axes, read back with
    step 0 along them by tensor_tensor subtract and divide (the same float32
    arithmetic as the per-partition form, the exp an activation)."""
    from .language import _binary
    mx = _reduce(x, axes, "maximum", float32, True, loc)
    d = _binary("subtract", x, mx, float32, loc)
    e = _new(x.shape, float32, loc)
    _emit("activation", loc, [("dst", e.text()), ("src", d.text()), ("func", '"exp"')])
    s = _reduce(e, axes, "add", float32, True, loc)
    return _binary("divide", e, s, dtype, loc)


def _rect_mask(x, mask, fn, loc):
    """An index-expression mask= of nl.<fn> that bounds single indices of x
    (`i_p < n`, `i_f >= m`, ANDed): the rectangle of x it keeps, one slice
    per dim; any other mask (two indices, `==`, a program id) raises."""
    from ._beta1 import mask_bounds
    rest = []
    rect = mask_bounds(x, mask, "nl." + fn, "x", loc, None, rest)
    if rest:
        raise NkiError("%s: nl.%s: argument 'mask': an index-expression mask is not supported "
                       "by tpbsim for nl.%s (a condition on loop variables only is, and bounds "
                       "on single indices: i_p < n, i_f >= m)" % (loc, fn, fn))
    return rect


def rms_norm(x, w, axis, n, epsilon=1e-06, dtype=None, compute_dtype=None, mask=None):
    """NKI: x / sqrt(sum(x * x) / n + epsilon) * w over all free axes, in
    float32: a square activation summing each row, a tensor_scalar (/ n,
    + epsilon), a sqrt activation, a tensor_scalar divide and a
    tensor_tensor multiply by w (x's shape, or [1, ...] broadcast to the
    partitions with broadcast_partition).  mask=: a condition on loop
    variables only, or bounds on single indices (the partial last tile's
    `i_p < n`): the ops run on that rectangle of x (and w), the sum over
    its columns, and write that rectangle of the result; the rest of the
    result is left unwritten, as NKI's masked instructions leave it."""
    from ._beta1 import whole_mask
    loc = _trace.caller_loc()
    x = _tile(x, "rms_norm", "x", loc)
    w = _tile(w, "rms_norm", "w", loc)
    _free_axes(x, axis, "rms_norm", loc, every=True)
    mask, off = whole_mask(mask)
    if off:   # mask=: a condition on loop variables only, False
        return _skipped(x.shape, _out_dtype(dtype, x))
    if compute_dtype is not None and _dtype(compute_dtype) != float32:
        raise NkiError("%s: nl.rms_norm: compute_dtype=%r is not supported by tpbsim (it "
                       "computes in float32)" % (loc, _dtype(compute_dtype)))
    if w.shape != x.shape and not (w.shape[0] == 1 and w.shape[1:] == x.shape[1:]):
        raise NkiError("%s: nl.rms_norm: w %s must have x's shape %s or [1, ...] of its free "
                       "dims" % (loc, list(w.shape), list(x.shape)))
    if isinstance(n, bool) or not isinstance(n, (int, np.integer, float)) or n <= 0:
        raise NkiError("%s: nl.rms_norm: n must be a positive number, got %r" % (loc, n))
    if mask is None:
        return _rms_norm(x, w, n, epsilon, _out_dtype(dtype, x), loc)
    rect = _rect_mask(x, mask, "rms_norm", loc)
    if any(r.stop <= r.start for r in rect):
        return _skipped(x.shape, _out_dtype(dtype, x))   # masked off: nothing written
    # from partition 0 (the engines start few partition counts elsewhere):
    # rows are independent, those before the mask's are computed, not written
    part = (slice(0, rect[0].stop),) + rect[1:]
    w = w[part] if w.shape == x.shape else w[(slice(0, 1),) + rect[1:]]
    return _rms_norm(x[part], w, n, epsilon, _out_dtype(dtype, x), loc, x.shape, part,
                     rect[0].start)


def _rms_norm(x, w, n, epsilon, dtype, loc, shape=None, part=None, first=0):
    """rms_norm's ops on x and w (x's shape, or [1, ...]): a new tile of
    dtype, of x's shape, or of shape with x its rectangle part, of which
    the rows from `first` on are written (the rest unwritten).  The tile is
    declared just before its one op, so that `t[...] = nl.rms_norm(...)`
    writes t in place (_beta1._retarget; with part, only what it writes)."""
    from . import isa
    P = x.shape[0]
    sq, ss = _new(x.shape, float32, loc), _new((P, 1), float32, loc)
    _emit("activation", loc, [("dst", sq.text()), ("src", x.text()), ("func", '"square"'),
                              ("reduce_op", '"add"'), ("reduce_res", ss.text())])
    ms = _ts(ss, "divide", float(n), float32, loc, "add", epsilon)
    rms = _new((P, 1), float32, loc)
    _emit("activation", loc, [("dst", rms.text()), ("src", ms.text()), ("func", '"sqrt"')])
    y = _ts(x, "divide", rms, float32, loc)
    if w.shape != x.shape:
        wb = _new(x.shape, w.dtype, loc)
        _emit("broadcast_partition", loc, [("dst", wb.text()), ("src", w.text())])
        w = wb
    t = _new(x.shape if shape is None else shape, dtype, loc)
    dst = t if part is None else t[part]
    f = [("dst", dst.text()), ("in0", y.text()), ("in1", w.text()), ("operator", '"multiply"')]
    if first:   # partition p >= first
        f = isa._mask(f, {"pattern": [[0, c] for c in dst.shape[1:]], "offset": -first,
                          "channel_multiplier": 1, "cmp_op": "greater_equal"}, loc, dst)
    _emit("tensor_tensor", loc, f)
    if part is not None:   # `x[...] = nl.rms_norm(..., mask=)` writes that part of x
        _trace.current().b1_part = (t.base, dst.text(), part)
    return t


def dropout(x, rate, dtype=None, mask=None):
    """NKI: x with each element zeroed with probability rate (a number or a
    [P, 1] tile, one rate per partition): one isa dropout into a new tile.
    mask=: a condition on loop variables only (_whole)."""
    loc = _trace.caller_loc()
    x = _tile(x, "dropout", "x", loc)
    if _whole(mask, "dropout", loc):
        return _skipped(x.shape, _out_dtype(dtype, x))
    from . import isa
    t = _new(x.shape, _out_dtype(dtype, x), loc)
    _emit("dropout", loc, [("dst", t.text()), ("src", x.text()),
                           ("prob", isa._scalar(rate, "rate", loc))])
    return t


def _pe_limit(fn, what, x, pmax, fmax, loc):
    if len(x.shape) != 2 or x.shape[0] > pmax or x.shape[1] > fmax:
        raise NkiError("%s: nl.%s: %s %s must be a 2-D tile of at most [%d, %d]" %
                       (loc, fn, what, list(x.shape), pmax, fmax))


def _pe_transpose(x, dtype, loc, mask=None):
    """x transposed on the PE into a new PSUM tile (mask: over its indices)."""
    from . import isa
    t = _new((x.shape[1], x.shape[0]), dtype, loc, psum)
    _emit("transpose", loc, isa._mask([("dst", t.text()), ("src", x.text()),
                                       ("engine", '"pe"')], mask, loc, t))
    return t


def _copy(x, dtype, loc, buffer=sbuf, mask=None):
    """A new tile holding x in dtype (one tensor_copy; mask: over its indices)."""
    from . import isa
    t = _new(x.shape, dtype, loc, buffer)
    _emit("tensor_copy", loc, isa._mask([("dst", t.text()), ("src", x.text())], mask, loc, t))
    return t


def transpose(x, dtype=None, mask=None):
    """NKI: a 2-D SBUF tile [P, F] (at most [128, 128]) transposed on the
    Tensor engine into a new PSUM tile [F, P] (an isa transpose, engine pe;
    an integer tile by _int_transpose, then copied into dtype if another;
    a PSUM x is copied to SBUF first, as nl.matmul's operands).  mask=
    (NKI beta-1) is over x's indices, as nisa.nc_transpose's: the result
    gets the transposed rectangle, the rest is left unwritten."""
    from ._beta1 import input_mask, whole_mask
    from .isa import _SWAP
    loc = _trace.caller_loc()
    x = _sbuf_operand(_tile(x, "transpose", "x", loc), loc)
    _pe_limit("transpose", "x", x, 128, 128, loc)
    dt = _out_dtype(dtype, x)
    mask, off = whole_mask(mask)
    if off:
        return _skipped((x.shape[1], x.shape[0]), dt, psum)
    mask, _ = input_mask(mask, x, _SWAP, 2, "nl.transpose", loc)
    if x.dtype not in _INT_DTYPES:
        return _pe_transpose(x, dt, loc, mask)
    t = _int_transpose(x, loc, mask)
    return t if t.dtype == dt else _copy(t, dt, loc, psum, mask)


# the float of an integer's size that PSUM holds: the PE's transpose mode
# (one dtype in and out) moves its bits as they are, NaN payloads,
# subnormals and -0.0 included
_BITS_AS = {4: float32, 2: "bfloat16"}


def _int_transpose(x, loc, mask=None):
    """An integer tile transposed exactly (the PE takes no integers): a 2-
    or 4-byte one as its bits viewed as the float of its size, the PSUM
    result viewed back as x's dtype; a 1-byte one copied into float32
    (its values exact there), transposed, and copied back into x's dtype
    (PSUM).  mask: over the result's indices."""
    f = _BITS_AS.get(_DT_BYTES[x.dtype])
    if f is None:
        return _copy(_pe_transpose(_copy(x, float32, loc), float32, loc, mask), x.dtype, loc,
                     psum, mask)
    return _pe_transpose(_bits(x, f, loc), f, loc, mask).view(x.dtype)


def _bits(x, f, loc):
    """x's bits as the dtype f of x's size: a view, or when x has none
    (block dims, a strided last dim) a view of a copy of x (a tensor_copy
    of one dtype, the Vector engine's: exact)."""
    try:
        return x.view(f)
    except NkiError:
        return _copy(x, x.dtype, loc).view(f)


def matmul(x, y, transpose_x=False, mask=None):
    """NKI: x @ y (x.T @ y with transpose_x) into a new float32 PSUM tile:
    one isa matmul with x as the stationary and y as the moving operand;
    without transpose_x, x is first transposed on the Tensor engine (PSUM)
    and copied back to SBUF, as NKI's stub describes.  mask= (NKI beta-1)
    is over the result's indices [M, N], as nisa.nc_matmul's."""
    from . import isa
    from ._beta1 import whole_mask
    loc = _trace.caller_loc()
    mask, off = whole_mask(mask)
    x = _sbuf_operand(_tile(x, "matmul", "x", loc), loc)
    y = _sbuf_operand(_tile(y, "matmul", "y", loc), loc)
    _pe_limit("matmul", "x", x, 128, 128, loc)
    _pe_limit("matmul", "y", y, 128, 512, loc)
    if x.shape[0 if transpose_x else 1] != y.shape[0]:
        raise NkiError("%s: nl.matmul: the contraction sizes differ: x %s (%s) and y %s [K, N]"
                       % (loc, list(x.shape), "[K, M], transpose_x=True" if transpose_x else
                          "[M, K]", list(y.shape)))
    if off:
        return _skipped((x.shape[1 if transpose_x else 0], y.shape[1]), float32, psum)
    if not transpose_x:
        xt = _new((x.shape[1], x.shape[0]), x.dtype, loc)
        _emit("tensor_copy", loc, [("dst", xt.text()),
                                   ("src", _pe_transpose(x, x.dtype, loc).text())])
        x = xt
    t = _new((x.shape[1], y.shape[1]), float32, loc, psum)
    _emit("matmul", loc, isa._mask([("dst", t.text()), ("stationary", x.text()),
                                    ("moving", y.text()), ("accumulate", "false")], mask, loc, t))
    return t


def _sbuf_operand(x, loc):
    """A PE operand in PSUM (NKI's nl.matmul of an nl.matmul / nl.transpose
    result) copied to a new SBUF tile first, as NKI's compiler does."""
    if x.buffer != psum:
        return x
    return _copy(x, x.dtype, loc)


def load_transpose2d(src, dtype=None, mask=None):
    """NKI: a 2-D HBM tensor [N, M] into a new SBUF tile [M, N] (one
    dma_transpose; another dtype casts, as the kernel format's
    dma_transpose does).  mask= (NKI beta-1): bounds on single indices of
    src, as nisa.dma_transpose's (the rest of the tile is left unwritten)."""
    from .isa import dma_transpose_rect
    loc = _trace.caller_loc()
    src = _tile(src, "load_transpose2d", "src", loc, (hbm, private_hbm, shared_hbm))
    if len(src.shape) != 2:
        raise NkiError("%s: nl.load_transpose2d: src %s must be 2-D" % (loc, list(src.shape)))
    t = _new((src.shape[1], src.shape[0]), _out_dtype(dtype, src), loc)
    sides = dma_transpose_rect(t, src, None, mask, "nl.load_transpose2d", loc)
    if sides is None:
        t.base.off = True   # nothing loaded: assigning it writes nothing
        return t
    _emit("dma_transpose", loc, [("dst", sides[0].text()), ("src", sides[1].text())])
    return t


def shared_identity_matrix(n, dtype=uint8, dst=None):
    """NKI: an n x n identity in SBUF (or written into dst): a memset of 1
    and an affine_select keeping it where partition - column == 0."""
    loc = _trace.caller_loc()
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 < n <= 128:
        raise NkiError("%s: nl.shared_identity_matrix: n must be an integer in 1..128, got %r"
                       % (loc, n))
    n = int(n)
    if dst is None:
        dst = _new((n, n), _dtype(dtype), loc)
    elif not isinstance(dst, NkiTensor) or not dst._onchip() or dst.shape != (n, n):
        raise NkiError("%s: nl.shared_identity_matrix: dst must be an SBUF/PSUM [%d, %d] tile, "
                       "got %r" % (loc, n, n, dst))
    _emit("memset", loc, [("dst", dst.text()), ("value", "1")])
    _emit("affine_select", loc, [("dst", dst.text()), ("on_true", dst.text()),
                                 ("pattern", "[[-1, %d]]" % n), ("offset", "0"),
                                 ("channel_multiplier", "1"), ("cmp_op", '"equal"'),
                                 ("on_false_value", "0")])
    return dst


def gather_flattened(data, indices, axis=0, dtype=None, mask=None):
    """NKI: per partition, data's (flattened) free elements at the positions
    in indices (uint32 or int32), shaped as indices: one gather_flattened (Pool), and
    a tensor_copy when dtype differs from data's.  Only NKI's default axis=0
    (the stub's example: numpy.take_along_axis(data, indices, axis=-1))."""
    loc = _trace.caller_loc()
    data = _tile(data, "gather_flattened", "data", loc)
    indices = _tile(indices, "gather_flattened", "indices", loc)
    if _whole(mask, "gather_flattened", loc):   # mask=: a condition on loop variables only
        return _skipped(indices.shape, _out_dtype(dtype, data))
    if axis != 0:
        raise NkiError("%s: nl.gather_flattened: axis=%r is not supported by tpbsim (only the "
                       "default axis=0)" % (loc, axis))
    if indices.dtype == int32:
        # NKI 0.x takes "integer indices" (beta-1 asked for uint32): the
        # instruction reads uint32, which holds the same bits for indices
        # >= 0 (a negative one is then past data's end: a run-time error)
        indices = _bits(indices, uint32, loc)
    t = _new(indices.shape, data.dtype, loc)
    _emit("gather_flattened", loc, [("dst", t.text()), ("data", data.text()),
                                    ("indices", indices.text())])
    if dtype is None or _dtype(dtype) == data.dtype:
        return t
    c = _new(indices.shape, _dtype(dtype), loc)
    _emit("tensor_copy", loc, [("dst", c.text()), ("src", t.text())])
    return c


def rand(shape, dtype=float32, buffer=sbuf, name=""):
    """NKI: a new SBUF/PSUM tile of uniform values in [0, 1): one rand2
    (min 0, max 1) on the Vector engine (dtype float32 by default, as in
    NKI beta-1), whose generator nl.random_seed seeds (docs/semantics.md "Random numbers"; stored in dtype, round to
    nearest even)."""
    loc = _trace.caller_loc()
    if not is_on_chip(buffer):
        raise NkiError("%s: nl.rand: buffer=%r is not supported by tpbsim (SBUF or PSUM)" %
                       (loc, buffer))
    t = _ndarray(shape, dtype, buffer, name, loc)
    _emit("rand2", loc, [("dst", t.text()), ("min", "0.0"), ("max", "1.0")])
    return t


def random_seed(seed, mask=None):
    """NKI: seed the generator nl.rand draws from with a [1, 1] 32-bit
    SBUF/PSUM tensor (one set_rng_seed of the Vector engine).  mask=: a
    condition on loop variables only (_whole)."""
    loc = _trace.caller_loc()
    seed = _tile(seed, "random_seed", "seed", loc)
    if _whole(mask, "random_seed", loc):
        return
    _emit("set_rng_seed", loc, [("src_seeds", seed.text())])


_CONST_DTYPES = (float32, float16, "bfloat16", int32, int16, int8, uint32, uint16, uint8)


def shared_constant(constant, dtype=None):
    """NKI: a shared-HBM tensor holding constant data (a NumPy array, a
    `.npy` path, or nki.typed(array, nl.bfloat16)): the kernel format's
    "constants" entry with its values inline, compiled into the kernel
    (docs/python.md).  dtype= (NKI beta-1) gives the tensor's dtype: the
    values converted to it (integer dtypes take integral values only)."""
    loc = _trace.caller_loc()
    dt = None
    if type(constant).__name__ == "typed" and hasattr(constant, "array"):
        constant, dt = constant.array, constant.dtype
    elif isinstance(constant, (str, bytes)) or hasattr(constant, "__fspath__"):
        try:
            constant = np.load(constant, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise NkiError("%s: nl.shared_constant: cannot read %r: %s" % (loc, constant, e))
    if not isinstance(constant, np.ndarray):
        raise NkiError("%s: nl.shared_constant: expected a NumPy array or a .npy path, got %r"
                       % (loc, type(constant).__name__))
    if dt is None:
        dt = constant.dtype.name
    if dtype is not None:
        dt = _dtype(dtype)
        if (not dt.startswith(("float", "bfloat")) and constant.dtype.kind == "f" and
                not np.array_equal(constant, np.round(constant))):
            raise NkiError("%s: nl.shared_constant: non-integral values for dtype %s" %
                           (loc, dt))
    if dt not in _CONST_DTYPES or not 1 <= constant.ndim <= 6:
        raise NkiError("%s: nl.shared_constant: a %d-D %s constant is not supported by tpbsim "
                       "(1..6 dims of %s; cast the array, e.g. .astype(np.float32))" %
                       (loc, constant.ndim, dt, ", ".join(_CONST_DTYPES)))
    a = constant.astype(np.float64 if dt.startswith(("float", "bfloat")) else np.int64)
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        raise NkiError("%s: nl.shared_constant: the constant holds inf or NaN (not supported "
                       "inline by tpbsim)" % loc)
    return _trace.current().add_const(a.shape, dt, json.dumps(a.tolist()), loc)


class LoopReduce:
    """nl.loop_reduce(x, op, loop_indices): what `t[idx] = ...` makes
    t[idx] = op(t[idx], x) (a tensor_tensor; _beta1.assign).  Anything else
    done with it is an error: NKI's `b = nl.loop_reduce(...)` names no
    destination tpbsim could write."""
    __slots__ = ("x", "op", "loc")

    def __init__(self, x, op, loc):
        self.x, self.op, self.loc = x, op, loc

    def __repr__(self):
        return "nl.loop_reduce(...) (assign it into a tile: t[...] = nl.loop_reduce(...))"


def loop_reduce(x, op, loop_indices, *, dtype=None, mask=None, name=None, **kwargs):
    """NKI: dst = op(dst, x), dst being the tile it is assigned into
    (`name=`, the instruction's name for NKI's scheduler, is not kept)."""
    loc = _trace.caller_loc()
    _tile(x, "loop_reduce", "x", loc)
    if _whole(mask, "loop_reduce", loc):   # masked off whole: the assignment writes nothing
        return _skipped(x.shape, dtype or x.dtype)
    if kwargs:
        raise NkiError("%s: nl.loop_reduce: %s not supported by tpbsim" % (loc, sorted(kwargs)))
    return LoopReduce(x, op, loc)


def assign_loop_reduce(tr, target, x, op, loc):
    """t[idx] = nl.loop_reduce(x, op, loop_indices): NKI's t = op(t, x).
    Into a tile no other op wrote before its first loop_reduce (an
    nl.ndarray: the NKIBench kernels neuronxcc generates reduce so, with no
    initial value) the reduction starts with the loop: the first write of
    each region -- in the first iteration of the traced-once loops the
    tile lives across and does not move with, as for a first nc_matmul
    into PSUM (Trace.first_write) -- copies x, the later ones apply op.
    The regions written are keyed as PSUM accumulation regions are
    (_groups.acc_key), so an undone loop pass forgets them (docs/python.md
    "Loop reductions")."""
    from . import isa, _groups
    from ._beta1 import _ever_written
    from ._psum_pair import off_psum
    x = off_psum(target, x, loc)
    key = "loop_reduce:" + _groups.acc_key(target)
    other = tr.lr_other.get(target.base.name)
    if other is None:   # once per tile: written by another op before?
        other = tr.lr_other[target.base.name] = _ever_written(tr, target.base.name)
    if other or key in tr.psum_written:
        isa.tensor_tensor(target, target, x, op)
        return
    tr.psum_written.add(key)
    cond = False
    if tr.frames:   # in a traced-once loop body
        tr.frames[-1].psum.append(key)
        cond = tr.first_write(target)
    if cond is False:   # this op is the region's first write
        isa.tensor_copy(target, x)
        return
    mark = len(tr.body)
    isa.tensor_tensor(target, target, x, op)
    later = tr.body[mark:]
    del tr.body[mark:]
    isa.tensor_copy(target, x)
    first = tr.body[mark:]
    del tr.body[mark:]
    tr.body.append('{"op": "if", "cond": %s, "loc": "%s", "body": [\n%s\n], "else": [\n%s\n]}'
                   % (json.dumps(cond), loc, ",\n".join(later), ",\n".join(first)))


_trace.SKIP.add(assign_loop_reduce.__code__)   # its ops' loc: the kernel line


def device_print(prefix, x, mask=None):
    """nl.device_print(prefix, x): the kernel format's device_print of tile
    x (an HBM tensor of at most 128 rows is loaded into an SBUF tile
    first); tpbsim.simulate prints `prefix` and the values after the run
    (docs/python.md "Use").  In a loop the loop is traced per
    iteration, so each iteration prints."""
    loc = _trace.caller_loc()
    if _whole(mask, "device_print", loc):   # mask=: a condition on loop variables only
        return
    if not isinstance(prefix, str):
        raise NkiError("%s: nl.device_print: the prefix must be a string, got %r" % (loc, prefix))
    if not isinstance(x, NkiTensor):
        raise NkiError("%s: nl.device_print: expected a tensor, got %r" % (loc, x))
    if _trace.current().frames:   # one print per iteration: not a traced-once body
        _trace.need_retrace()
    if not x._onchip():
        if x._pd or x.shape[0] > 128:
            raise NkiError("%s: nl.device_print: an HBM tensor of shape %s: tpbsim prints an "
                           "HBM tensor of at most 128 rows (it is loaded into SBUF first)" %
                           (loc, list(x.shape)))
        t = _new(x.shape, x.dtype, loc)
        _emit("dma_copy", loc, [("dst", t.text()), ("src", x.text())])
        x = t
    _emit("device_print", loc, [("prefix", json.dumps(prefix)), ("src", x.text())])
