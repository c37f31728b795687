"""NKI beta-1 call forms of nki.isa ops (docs/python.md "Beta-1 call forms").

A call binds first to the beta-2 signature (dst first).  Only when it does
not (no dst given: a missing argument, a beta-1 keyword such as dtype=, or
a first argument that is not a tensor) it binds to the beta-1 form: the
same parameters without dst, plus `dtype=` for the result (memset and iota
have their own beta-1 signatures).  The op then makes its result tile
(the shape NKI defines; PSUM float32 for nc_matmul, PSUM for nc_transpose
on the Tensor engine, SBUF otherwise; dtype= else the input's dtype),
emits the same kernel-format op with that dst through the beta-2 function,
and returns the tile.  `t[idx] = value` and `t[idx] += value`
(NkiTensor.__setitem__ / __iadd__) are handled by assign() / iadd()."""
import functools
import itertools
import inspect
import sys

import numpy as np

from . import _groups, _trace
from ._trace import NkiError, NkiTensor

_SKIP = _trace.SKIP


def _skip(fn):
    """fn's frames are skipped by caller_loc: the op's loc is the kernel line."""
    _SKIP.add(fn.__code__)
    return fn


# ---- result shapes: fn(args, loc) -> (shape, dtype, buffer, extra kwargs) ----

def _tensor(args, what, loc, op):
    x = args.get(what)
    if not isinstance(x, NkiTensor):
        raise NkiError("%s: nisa.%s: argument '%s': expected a tensor, got %r" %
                       (loc, op, what, x))
    return x


def _like(what, buffer="sbuf"):
    def f(args, loc, op):
        x = _tensor(args, what, loc, op)
        return x.shape, x.dtype, buffer, {}
    return f


def _rows(what, n, dtype=None):
    """A [P, n] result (max8, bn_stats, ...)."""
    def f(args, loc, op):
        x = _tensor(args, what, loc, op)
        return (x.shape[0], n), dtype or x.dtype, "sbuf", {}
    return f


def _from_psum(args, key):
    """Beta-1 kernels give a PSUM result (nc_transpose's, nc_matmul's) as an
    operand its engine reads from SBUF only: staged in a new SBUF tile (an
    exact copy, dtype kept), as NKI's compiler does; {key: the copy} or {}."""
    x = args[key]
    if not (isinstance(x, NkiTensor) and x.buffer == "psum"):
        return {}
    from . import language
    return {key: language.copy(x)}


def _matmul(args, loc, op):
    st, mv = _tensor(args, "stationary", loc, op), _tensor(args, "moving", loc, op)
    staged = dict(_from_psum(args, "stationary"), **_from_psum(args, "moving"))
    from .isa import _perf_mode, get_nc_version, nc_version
    if args.get("is_transpose") and get_nc_version() != nc_version.gen2:
        # the PE's transpose mode (v3 on): stationary's dtype; on v2 the flag
        # only tags a plain matmul (NKI), float32 as any other
        if args.get("accumulate"):
            raise NkiError("%s: nisa.nc_matmul: is_transpose=True cannot accumulate" % loc)
        return ((st.shape[-1],) + tuple(mv.shape[1:]), st.dtype, "psum",
                dict(staged, accumulate=False))
    extra = dict(staged) if args.get("accumulate") is not None else dict(staged, accumulate=False)
    if _perf_mode(args.get("perf_mode")) == "double_row":   # [K, 2, M] x [K, 2, N]
        return (st.shape[-1], mv.shape[-1]), "float32", "psum", extra
    return (st.shape[-1],) + tuple(mv.shape[1:]), "float32", "psum", extra


def _transpose(args, loc, op):
    from . import isa
    x = _tensor(args, "data", loc, op)
    if len(x.shape) != 2:
        raise NkiError("%s: nisa.nc_transpose: argument 'data': a 2-D tile is needed, got %s" %
                       (loc, list(x.shape)))
    eng = args.get("engine", isa.engine.unknown)
    if eng in (None, isa.engine.unknown):   # NKI picks: Vector for at most 32x32
        eng = isa.engine.vector if max(x.shape) <= 32 else isa.engine.tensor
    if eng not in (isa.engine.vector, isa.engine.tensor):
        raise NkiError("%s: nisa.nc_transpose: argument 'engine': %r (tensor_engine or "
                       "vector_engine)" % (loc, eng))
    return ((x.shape[1], x.shape[0]), x.dtype, "psum" if eng == isa.engine.tensor else "sbuf",
            {"engine": eng})


def _tensor_tensor(args, loc, op):
    """data1's shape; a [P, 1] operand next to a [P, F...] one is read with
    a free-dim step of 0 (broadcast along the free dims, as NKI beta-1's
    tensor_tensor took it: nki-samples' double_row matmul scales [128, 512]
    by [128, 1])."""
    x1, x2 = _tensor(args, "data1", loc, op), _tensor(args, "data2", loc, op)
    if tuple(x1.shape) == tuple(x2.shape) or x1.shape[0] != x2.shape[0]:
        return x1.shape, x1.dtype, "sbuf", {}
    n1, n2 = (int(np.prod(x.shape[1:])) for x in (x1, x2))
    if n1 != 1 and n2 != 1 or n1 == n2:
        return x1.shape, x1.dtype, "sbuf", {}   # the op's own shape error
    small, big, what = (x1, x2, "data1") if n1 == 1 else (x2, x1, "data2")
    v = NkiTensor(small.base, small.offset, [list(small._ap[0])] +
                  [[0, n] for n in big.shape[1:]])
    v._lb = small._lb
    return big.shape, x1.dtype, "sbuf", {what: v}


def _reduce(args, loc, op):
    x = _tensor(args, "data", loc, op)
    from ._refuse import reduce_axes
    axes = set(reduce_axes(x.shape, args["axis"], "nisa.tensor_reduce", loc))
    keep = args.get("keepdims")
    shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape)
                  if keep or d not in axes)
    return shape, x.dtype, "sbuf", {}


def _part_reduce(args, loc, op):
    x = _tensor(args, "data", loc, op)
    return (1,) + tuple(x.shape[1:]), x.dtype, "sbuf", {}


def _bounds(args, loc, op):
    x = _tensor(args, "segment_ids", loc, op)
    return (x.shape[0], 2) + tuple(x.shape[1:]), x.dtype, "sbuf", {}


def _local_gather(args, loc, op):
    """[P, F, 16, num_elem_per_idx] when every index of a 2-D [P, F] index
    tile is valid (the SDK example's layout: each core's indices are read
    partition first, so gathered element j = f*16 + q comes from index
    row q, column f), else [P, num_valid_indices, num_elem_per_idx]; the
    same elements in the same order either way."""
    src, idx = _tensor(args, "src_buffer", loc, op), _tensor(args, "index", loc, op)
    e = int(args.get("num_elem_per_idx", 1))
    per_core = min(idx.shape[0], 16)
    for n in idx.shape[1:]:
        per_core *= n
    nv = args.get("num_valid_indices")
    nv = per_core if nv is None else int(nv)
    if nv == per_core and len(idx.shape) == 2 and idx.shape[0] % 16 == 0:
        shape = (src.shape[0], idx.shape[1], 16, e)
    else:
        shape = (src.shape[0], nv, e)
    return shape, src.dtype, "sbuf", {}


def _dma_transpose(args, loc, op):
    x = _tensor(args, "src", loc, op)
    axes = args.get("axes")
    axes = tuple(range(len(x.shape)))[::-1] if axes is None else tuple(int(a) for a in axes)
    if sorted(axes) != list(range(len(x.shape))):
        raise NkiError("%s: nisa.dma_transpose: argument 'axes': %r for a %d-D src" %
                       (loc, axes, len(x.shape)))
    return tuple(x.shape[a] for a in axes), x.dtype, "sbuf", {}


# op name -> result spec; the beta-1 signature is the beta-2 one without dst
# plus dtype= (and mask= where beta-2 has none)
_SPECS = {
    "nc_matmul": _matmul, "nc_transpose": _transpose,
    "activation": _like("data"), "tensor_tensor": _tensor_tensor,
    "tensor_scalar": _like("data"), "tensor_copy": _like("src"),
    "tensor_reduce": _reduce, "reciprocal": _like("data"),
    "tensor_partition_reduce": _part_reduce, "tensor_tensor_scan": _like("data0"),
    "scalar_tensor_tensor": _like("data"), "exponential": _like("src"),
    "dropout": _like("data"), "nc_match_replace8": _like("data"),
    "max8": _rows("src", 8), "nc_find_index8": _rows("data", 8, "uint32"),
    "bn_stats": _rows("data", 6), "bn_aggr": _rows("data", 2),
    "dma_transpose": _dma_transpose, "sequence_bounds": _bounds,
    "range_select": _like("on_true_tile"), "tensor_scalar_reduce": _like("data"),
    "activation_reduce": _like("data"), "local_gather": _local_gather,
}
# ops whose beta-1 positional call also binds to the beta-2 signature: it
# is the beta-2 call only when these parameters are tensors too
# (local_gather(src, index, n, m) would bind dst=src, index=n)
_TENSOR_PARAMS = {"local_gather": ("src_buffer", "index")}


def _beta1_sig(sig2):
    ps = [p for n, p in sig2.parameters.items() if n != "dst"]
    names = {p.name for p in ps}
    for extra in ("dtype", "mask"):
        if extra not in names:
            ps.append(inspect.Parameter(extra, inspect.Parameter.KEYWORD_ONLY, default=None))
    return sig2.replace(parameters=ps)


def _bind(sig, a, k):
    try:
        return sig.bind(*a, **k), None
    except TypeError as e:
        return None, str(e)


def _binder(sig):
    """fn(a, k) -> (the arguments of sig.bind(*a, **k) after apply_defaults(),
    a new dict in parameter order, None), or (None, bind's TypeError
    message).  Without *args / **kwargs in sig, whether a call binds and
    where each parameter comes from (a position, a keyword, its default)
    depend only on the argument count and the keyword names: that plan is
    made once per (count, names) by sig.bind itself (per op call,
    inspect's bind was a tenth of a beta-1 kernel's trace)."""
    params = list(sig.parameters.values())
    plain = all(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)
    plans = {}

    def bind(a, k):
        plan = plans.get((len(a), tuple(k))) if plain else None
        if plan is None:
            b, e = _bind(sig, a, k)
            if b is None:
                return None, e
            b.apply_defaults()
            if not plain:
                return dict(b.arguments), None
            plan = plans[(len(a), tuple(k))] = [
                (p.name, i if i < len(a) else None, p.default) for i, p in enumerate(params)]
        return {name: a[i] if i is not None else k[name] if name in k else d
                for name, i, d in plan}, None
    return bind


def _tensors_at(sig2, names):
    """fn(a, k): whether the parameters names of sig2 are tensors in the
    call (positional or keyword)."""
    pos = [(list(sig2.parameters).index(n), n) for n in names]

    def f(a, k):
        return all(type(a[i] if i < len(a) else k.get(n)) is NkiTensor for i, n in pos)
    return f


def _dual(name, fn2, result, own=None):
    """The public nisa.<name>: beta-2 when the call binds to fn2's signature
    with a tensor dst, else the beta-1 form: through result() (fn2's
    parameters without dst, plus dtype= and mask=), or own(fn2, ...) for an
    op whose beta-1 signature is its own (memset, iota)."""
    sig2 = inspect.signature(fn2)
    if own is None:
        sig1 = _beta1_sig(sig2)
    else:
        sig1 = inspect.signature(own)
        sig1 = sig1.replace(parameters=list(sig1.parameters.values())[1:])

    binds2 = {}   # whether a call binds to sig2 depends only on its argument count
    #               and keyword names: cached per (count, names)
    bind1 = _binder(sig1)
    tensors2 = _tensors_at(sig2, _TENSOR_PARAMS[name]) if name in _TENSOR_PARAMS else None

    @functools.wraps(fn2)
    def op(*a, **k):
        if "dst" in k:
            return _with_dst(name, fn2, sig2, a, k)
        if a and type(a[0]) is NkiTensor:
            key = (len(a), tuple(k))
            ok = binds2.get(key)
            if ok is None:
                ok = binds2[key] = _bind(sig2, a, k)[0] is not None
            if ok and (tensors2 is None or tensors2(a, k)):   # dst is a[0], a tensor
                return _with_dst(name, fn2, sig2, a, k)
        if own is not None:
            b1, e1 = _bind(sig1, a, k)
        else:
            args, e1 = bind1(a, k)
        _trace.beta1_form()
        if e1 is not None:
            e2 = _bind(sig2, a, k)[1]
            raise NkiError("%s: nisa.%s: the arguments bind to neither the beta-2 signature "
                           "%s (%s) nor the beta-1 form %s (%s)" % (
                               _trace.caller_loc(), name, sig2, e2 or "dst is not a tensor",
                               sig1, e1))
        if own is not None:
            return own(fn2, *b1.args, **b1.kwargs)
        dtype = args.pop("dtype")
        mask = args.pop("mask") if "mask" not in sig2.parameters else None
        mask, off = whole_mask(mask)
        if mask is not None and _always(mask):
            mask = None   # true at every index: the op unmasked (LayerNorm v2's bn_stats)
        if mask is not None:
            _refuse_mask(name)
        return _make(name, fn2, result, args, dtype, mask=mask, off=off)
    _SKIP.add(op.__code__)
    op.__signature__ = sig2
    return op


@_skip
def _dst_dtype(name, dst, dtype):
    """An early beta-2 call form (nki-samples' tutorials): `dtype=` next to
    `dst=` (`nisa.tensor_copy(dst=t, src=s, dtype=t.dtype)`).  The op writes
    dst's dtype, so dtype= must be that dtype; another raises."""
    from .language import _dtype
    if isinstance(dst, NkiTensor) and _dtype(dtype) != dst.dtype:
        raise NkiError("%s: nisa.%s: dtype=%s differs from dst's dtype %s (the op writes "
                       "dst's dtype: drop dtype=, or give a dst of that dtype)" % (
                           _trace.caller_loc(), name, _dtype(dtype), dst.dtype))


@_skip
def _make(name, fn2, result, args, dtype, *, fixed=None, mask=None, off=False):
    """Allocate the result tile, emit fn2(dst=tile, **args), return it;
    with mask (beta-1's, on an op without one), fn2 on the mask's rectangle
    (_on_rect).  A mask= that is False (off, or fn2's own mask=) writes
    nothing: the tile is returned unwritten (skipped)."""
    from .language import _dtype
    loc = _trace.caller_loc()
    tr = _trace.current()
    if fixed is None:
        shape, dt, buf, extra = result(args, loc, name)
        args.update(extra)
    else:
        shape, dt, buf = fixed
    if "mask" in args:   # fn2's own mask=
        args["mask"], off2 = whole_mask(args["mask"])
        off = off or off2
    if off:
        return skipped(shape, dtype if dtype is not None else dt, buf)
    t = tr.new_tensor(shape, _dtype(dtype) if dtype is not None else dt, buf, "", loc)
    if mask is None:
        fn2(t, **args)
    else:
        _on_rect(name, fn2, args, t, mask)
    # a fresh result: `x[idx] = ` may write the op into x instead (assign)
    tr.b1_fresh = (t.base, dtype is None)
    return t


# ops that run on the rectangle a beta-1 mask= keeps (bounds on single
# indices of their data, NKI: "mask applies to data").  The kernel format's
# mask, an element predicate on dst, does not fit them: dst is not one
# element per input element, the elements masked out would still feed a
# reduction, the scan's carry or the random draws, or dst keeps elements
# the op does not write.  (the operands cut to the rectangle, the first
# giving its grid; the per-partition operands cut to its rows; whether dst
# takes the rectangle, else its rows)
_MASK_RECT = {
    "max8": (("src",), (), False),
    "nc_find_index8": (("data",), ("vals",), False),
    "nc_match_replace8": (("data",), ("vals", "dst_idx"), True),
    "tensor_tensor_scan": (("data0", "data1"), ("initial",), True),
    "activation_reduce": (("data",), ("bias", "scale", "reduce_res"), True),
    "tensor_scalar_reduce": (("data",), ("operand0", "reduce_res"), True),
    "bn_stats": (("data",), (), False),
    "bn_aggr": (("data",), (), False),
    "dropout": (("data",), ("prob",), True),
    "range_select": (("on_true_tile",), ("bound0", "bound1", "reduce_res"), True),
    "select_reduce": (("predicate", "on_true"), ("on_false", "reduce_res"), True),
    "tensor_copy_predicated": (("predicate", "src"), (), True),
}


@_skip
def _on_rect(name, fn2, args, dst, mask):
    """fn2(dst, **args) on the rectangle mask keeps (_MASK_RECT[name]): the
    data operands and dst cut to it (or dst to its rows), the per-partition
    operands to its rows; the rest of dst is left unwritten, as NKI leaves
    it.  Nothing when the rectangle is empty.  Other masks raise."""
    from . import _masked
    loc = _trace.caller_loc()
    data, rows, whole = _MASK_RECT[name]
    key = data[0]
    grid = _tensor(args, key, loc, name)
    _masked._need_dims(_mask_preds(grid, mask, "nisa." + name, loc), grid.shape,
                       "nisa." + name, loc)
    sl = mask_bounds(grid, mask, "nisa." + name, key, loc)
    if any(r.stop <= r.start for r in sl):
        return
    for k in data:
        if isinstance(args.get(k), NkiTensor):
            args[k] = mask_restrict(args[k], sl)
    for k in rows:
        if isinstance(args.get(k), NkiTensor):
            args[k] = args[k][sl[0]]
    if name == "range_select":
        _range_start(args, sl, loc)
    part = sl if whole else sl[:1]
    fn2(dst[part], **args)
    # `x[...] = op(..., mask=)` writes that part of x (_retarget)
    _trace.current().b1_part = (dst.base, dst[part].text(), part)


def _range_start(args, sl, loc):
    """range_select compares each element's free index (+ range_start): on
    a rectangle starting at column c the elements keep their index when
    range_start grows by c (the last free dim of a 2-D tile only)."""
    c = sl[-1].start
    if any(r.start for r in sl[1:-1]) or c and len(sl) != 2:
        raise NkiError("%s: nisa.range_select: argument 'mask': a rectangle that starts past "
                       "column 0 is supported on a 2-D tile only" % loc)
    args["range_start"] = args.get("range_start", 0) + c


@_skip
def _with_dst(name, fn2, sig2, a, k):
    """A call that names its dst (beta-2, or an op whose beta-1 form takes
    dst=, as select_reduce), with beta-1's keywords: dtype= (_dst_dtype)
    and mask=, a condition on loop variables only (True: no mask, False:
    nothing written) or, on an op that has none, the rectangle of
    _on_rect; any other raises."""
    if "dtype" in k and "dtype" not in sig2.parameters and "dst" in k:
        k = dict(k)
        _dst_dtype(name, k["dst"], k.pop("dtype"))
    if "mask" not in k:
        return fn2(*a, **k)
    k = dict(k)
    mask, off = whole_mask(k.pop("mask"))
    if off:
        return None
    if mask is not None and "mask" in sig2.parameters:
        k["mask"] = mask
    elif mask is not None and not _always(mask):
        b, e = _bind(sig2, a, k)
        if b is None:
            raise NkiError("%s: nisa.%s: %s" % (_trace.caller_loc(), name, e))
        _refuse_mask(name)
        args = dict(b.arguments)
        return _on_rect(name, fn2, args, args.pop("dst"), mask)
    return fn2(*a, **k)


@_skip
def _refuse_mask(name):
    """An index-expression mask= on an op without one, nor a _MASK_RECT op."""
    if name not in _MASK_RECT:
        raise NkiError("%s: nisa.%s: argument 'mask': an index-expression mask is not supported "
                       "by tpbsim for this op (a condition on loop variables only is)" %
                       (_trace.caller_loc(), name))


def _dst_only(name, fn2):
    """The public nisa.<name> of an op whose beta-1 form names its dst too
    (dst=): fn2, taking beta-1's mask= (_with_dst)."""
    sig2 = inspect.signature(fn2)

    @functools.wraps(fn2)
    def op(*a, **k):
        return _with_dst(name, fn2, sig2, a, k)
    _SKIP.add(op.__code__)
    op.__signature__ = sig2
    return op


def install(ns):
    """Replace the ops of the isa module namespace ns by their dual forms."""
    for name, spec in _SPECS.items():
        ns[name] = _dual(name, ns[name], spec)
    for name in ("select_reduce", "tensor_copy_predicated", "nc_stream_shuffle"):
        ns[name] = _dst_only(name, ns[name])
    ns["memset"] = _dual("memset", ns["memset"], None, _memset1)
    ns["iota"] = _dual("iota", ns["iota"], None, _iota1)
    ns["affine_select"] = _dual("affine_select", ns["affine_select"], None, _affine_select1)


@_skip
def _memset1(fn2, shape, value, dtype, mask=None, engine=None, name=None):
    """beta-1 memset(shape, value, dtype, ...): a new SBUF tile filled."""
    from . import isa
    args = {"value": value, "engine": engine or isa.engine.unknown, "name": name, "mask": mask}
    return _make("memset", fn2, None, args, dtype,
                 fixed=(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,),
                        dtype, "sbuf"))


@_skip
def _iota1(fn2, expr, dtype, mask=None, name=None):
    """beta-1 iota(expr, dtype): expr an affine nl.arange / nl.mgrid
    expression, the axes it spans the result's shape; its constant may hold
    program ids (per-program numbers: the offset an expression in them).
    A constant alone (vLLM's `iota(nl.program_id(1))`) is a [1, 1] tile."""
    from .language import IndexExpr
    loc = _trace.caller_loc()
    if type(expr) in (int, _trace.Lin):
        expr = IndexExpr(expr, {}, 2)
    if not isinstance(expr, IndexExpr) or expr.ndim is None or None in expr.coef:
        raise NkiError("%s: nisa.iota: argument 'expr': expected an affine expression of "
                       "nl.arange indices placed on axes ([:, None]), got %r" % (loc, expr))
    shape = expr.shape()
    if shape is None:
        raise NkiError("%s: nisa.iota: argument 'expr': the size of an axis is not known" % loc)
    args = {"pattern": [[expr.coef.get(d, 0), shape[d]] for d in range(1, len(shape))],
            "offset": expr.c, "channel_multiplier": expr.coef.get(0, 0), "name": name,
            "mask": mask}
    return _make("iota", fn2, None, args, dtype, fixed=(shape, dtype, "sbuf"))


@_skip
def _affine_select1(fn2, pred, on_true_tile, on_false_value, dtype=None, mask=None, name=None):
    """beta-1 affine_select(pred, on_true_tile, on_false_value): pred one
    comparison of affine nl.arange / nl.mgrid expressions (`iy < ix`), the
    kernel format's pattern / offset / channel_multiplier / cmp_op over
    the result (on_true_tile's shape)."""
    from .language import IndexPredicate
    loc = _trace.caller_loc()
    mask, off = whole_mask(mask)
    if not isinstance(pred, IndexPredicate):
        raise NkiError("%s: nisa.affine_select: argument 'pred': expected one comparison of "
                       "affine nl.arange / nl.mgrid expressions (iy < ix), got %r" % (loc, pred))
    x = _tensor({"on_true_tile": on_true_tile}, "on_true_tile", loc, "affine_select")
    if off:
        return skipped(x.shape, dtype or x.dtype, "sbuf")
    x = on_true_tile = _from_psum({"x": x}, "x").get("x", x)   # the GpSimd reads SBUF only
    try:
        m = pred.kernel_pred(x.shape)
    except ValueError as e:
        raise NkiError("%s: nisa.affine_select: argument 'pred': %s" % (loc, e)) from None
    args = {"pattern": m["pattern"], "channel_multiplier": m["channel_multiplier"],
            "on_true_tile": on_true_tile, "on_false_value": on_false_value,
            "cmp_op": m["cmp_op"], "offset": m["offset"], "name": name, "mask": mask}
    return _make("affine_select", fn2, None, args, dtype, fixed=(x.shape, x.dtype, "sbuf"))


# ---- mask= naming no index ----

def whole_mask(mask):
    """NKI's mask= that names no index, a condition on loop variables only
    (`(2*i + g) * 128 < seqlen`): the unrolled trace makes it a bool, and
    an op masked by False does nothing.  (the mask, or None for True or
    False; whether the op is masked off)."""
    if mask is not None:
        _trace.beta1_form()   # NKI 0.x's nl functions take no mask=
    if isinstance(mask, (bool, np.bool_)):
        return None, not mask
    return mask, False


def input_mask(mask, data, to, nd_out, fn, loc):
    """NKI's index-expression mask= of an op whose dst axes are not its
    input's in order (a transpose, a reduction): its comparisons bound the
    input's indices (_index.to_dst; to maps input axes to dst axes, None for
    a reduced one).  (the mask over dst's indices, data): bounds on reduced
    axes cut data to their rectangle (data None when it is empty: the op
    writes nothing); any other comparison on a reduced axis raises.  A
    kernel-format mask (dicts) is over dst's indices already: as given."""
    from ._index import IndexMask, IndexPredicate, to_dst
    if not isinstance(mask, (IndexPredicate, IndexMask)):
        return mask, data
    m, dropped = to_dst(mask, to, nd_out, fn, loc)
    if dropped:
        rect = mask_bounds(data, IndexMask(dropped), fn, "data (on a reduced axis)", loc)
        if any(r.stop <= r.start for r in rect):
            return m, None
        data = mask_restrict(data, rect)
    return m, data


def _always(mask):
    """Whether an index mask holds at every index of its grid (each of its
    comparisons bounds the indices beyond their range)."""
    from ._index import IndexMask, IndexPredicate
    preds = mask.preds if isinstance(mask, IndexMask) else [mask]
    return all(isinstance(p, IndexPredicate) and p.always() for p in preds)


def skipped(shape, dtype, buffer):
    """The result of an op masked off whole: a tile no op writes; assigning
    it (`x[...] = op(..., mask=False)`, `+=`) writes nothing, as in NKI."""
    from .language import _dtype
    t = _trace.current().new_tensor(shape, _dtype(dtype), buffer, "", _trace.caller_loc())
    t.base.off = True
    return t


# ---- nl.arange / nl.mgrid indices ----

def column_of_column(t, key):
    """t[k0, k1] on a partition-only (1-D) on-chip view t, a [P] tile
    (t2[:, i] is [P, 1], as in NKI: NkiTensor._index): k1 = 0 is t[k0]
    itself, a slice of that one column (0:1, :) its [P, 1] view; None for
    other keys."""
    k = key[1]
    if type(k) is int and k in (0, -1):
        return t._index(key[:1])
    if isinstance(k, slice) and k.step in (None, 1) and k.start in (None, 0) and (
            k.stop is None or (type(k.stop) is int and k.stop >= 1)):
        v = t._index(key[:1])
        return NkiTensor(v.base, v.offset, v._ap + [[1, 1]], v._sl, 0)
    return None


def index_key(t, key):
    """t[e0, e1, ...] with affine index expressions over nl.arange /
    nl.mgrid axes.  When each one uses one grid axis a (c + s * i_a, s > 0),
    the axes in the order of the tensor's dims, it is the slice
    c : c + s * size_a : s (a key of slices).  Else the view is the access
    pattern the expressions give (_index_ap)."""
    out, last = [], -1
    for d, k in enumerate(key):
        if not isinstance(k, _trace.IndexExpr):
            out.append(k)
            continue
        if None in k.coef and k.coef[None]:
            raise NkiError("index %d of '%s': nl.arange(n) must be placed on an axis "
                           "([:, None] / [None, :])" % (d, t.base.name))
        if k.ndim != len(t._ap):   # the view takes the grid's shape: idx[i_p] -> [P, 1]
            return _index_ap(t, key)
        axes = [(a, v) for a, v in k.coef.items() if v]
        n = k.sizes.get(axes[0][0], -1) if len(axes) == 1 else -1
        if n <= 0 or axes[0][1] <= 0 or axes[0][0] <= last:
            return _index_ap(t, key)
        a, step = axes[0]
        last = a
        if type(k.c) is int and not 0 <= k.c < t._ap[d][1]:
            return _index_ap(t, key)   # starts past the end: a view marked _oob
        out.append(slice(k.c, k.c + step * (n - 1) + 1, step))
    return tuple(out)


def _index_ap(t, key):
    """The view of t that affine index expressions over one grid (nl.mgrid /
    nl.arange axes) address: per grid axis a, [sum_k stride_k * coef_k[a],
    size_a] from offset + sum_k stride_k * c_k, every index inside its dim.
    On chip, grid axis 0 must be the partition index alone."""
    from .language import IndexExpr
    name = t.base.name

    def bad(why):
        return NkiError("index of '%s': %s -- not supported by tpbsim" % (name, why))
    if len(key) != len(t._ap) or not all(isinstance(k, (IndexExpr, int, _trace.Lin))
                                         for k in key):
        raise bad("an index expression that is not a slice needs one index expression or "
                  "integer per dim")
    exprs = [k for k in key if isinstance(k, IndexExpr)]
    nd = exprs[0].ndim
    sizes = {}
    for e in exprs:
        if e.ndim != nd:
            raise bad("index expressions over %d and %d axes" % (nd, e.ndim))
        for a, n in e.sizes.items():
            if n < 0 or sizes.get(a, n) != n:
                raise bad("two sizes on grid axis %s" % a)
            sizes[a] = n
    shape = [sizes.get(a, 1) for a in range(nd)]
    off, steps = t.offset, [0] * nd
    oob = None
    for d, (k, (stride, cnt)) in enumerate(zip(key, t._ap)):
        e = k if isinstance(k, IndexExpr) else IndexExpr(k, {}, nd)
        lo = hi = e.c
        for a, v in e.coef.items():
            lo, hi = (lo, hi + v * (shape[a] - 1)) if v > 0 else (lo + v * (shape[a] - 1), hi)
            steps[a] += stride * v
        for x in (lo, hi):
            if type(x) is int and not 0 <= x < cnt:
                oob = oob or bad("index %d spans %s..%s, outside 0..%d" % (d, lo, hi, cnt - 1))
            else:
                _trace._check_sym(x, 0, cnt - 1)
        off = off + stride * e.c
    if t._onchip():
        k0 = key[0]
        if (not isinstance(k0, IndexExpr) or k0.coef != {0: 1} or
                any(isinstance(k, IndexExpr) and k.coef.get(0) for k in key[1:])):
            raise bad("on chip the first index must be the partition index (grid axis 0) alone")
    # a grid axis no index uses repeats the element along it (step 0, as
    # NumPy broadcasting of an index that lacks that axis)
    v = NkiTensor(t.base, off, [[steps[a] if steps[a] or shape[a] > 1 else 1, shape[a]]
                                for a in range(nd)])
    if oob is not None:   # an error unless a mask keeps the indices inside
        v._oob = (oob, t, key)
    return v


def mask_rect(t, mask, fn, what, loc):
    """t cut to the rectangle an index mask bounds: each comparison one
    index (+ a constant) against 0, e.g. (i_p < 64) & (i_f < 256) -> t[0:64,
    0:256] (bounds past t's dims are NumPy-clipped); other masks raise."""
    return mask_restrict(t, mask_bounds(t, mask, fn, what, loc))


def mask_restrict(t, rect):
    """t[rect]; for a view by index expressions that leave the tensor
    (_index_ap), the view of those expressions over the rectangle of their
    grid, which must stay inside."""
    if t._oob is None:
        return t[rect]
    from .language import IndexExpr
    _, base, key = t._oob
    lo = {a: r.start for a, r in enumerate(rect)}
    key2 = []
    for k in key:
        if isinstance(k, IndexExpr):
            k = IndexExpr(k.c + sum(v * lo.get(a, 0) for a, v in k.coef.items() if v),
                          k.coef, k.ndim, {a: rect[a].stop - rect[a].start
                                           for a in k.sizes if a is not None and a < len(rect)})
        key2.append(k)
    v = _index_ap(base, tuple(key2))
    if v._oob is not None:
        raise v._oob[0]
    return v


def _mask_preds(t, mask, fn, loc):
    from .language import IndexMask, IndexPredicate
    preds = mask.preds if isinstance(mask, IndexMask) else [mask]
    if not isinstance(t, NkiTensor) or not all(isinstance(p, IndexPredicate) for p in preds):
        raise NkiError("%s: %s: argument 'mask': expected comparisons of nl.arange / nl.mgrid "
                       "indices, got %r" % (loc, fn, mask))
    return preds


def mask_bounds(t, mask, fn, what, loc, shape=None, rest=None):
    """mask_rect's rectangle: one slice per dim of t (of shape, when given).
    A bound that depends on a traced-once loop variable retraces the loop
    per iteration (the rectangle's size then is a number).  rest: a list
    that takes the comparisons that are no such bound (two indices, a
    program id, ...: _masked.py) instead of raising."""
    preds = _mask_preds(t, mask, fn, loc)
    shape = list(t.shape if shape is None else shape)
    lo, hi = [0] * len(shape), list(shape)
    for p in preds:
        axes = [(a, v) for a, v in p.e.coef.items() if v]
        one = (len(axes) == 1 and axes[0][0] is not None and abs(axes[0][1]) == 1 and
               0 <= axes[0][0] < len(shape) and p.op not in ("eq", "ne"))
        if type(p.e.c) is _trace.Lin and p.e.c.loop_trace() is not None and (
                one or rest is None):
            _trace.need_retrace()
        if not one or type(p.e.c) is not int:
            if rest is not None:
                rest.append(p)
                continue
            raise NkiError("%s: %s: argument 'mask': only bounds on one index (i_p < n, "
                           "i_f >= m) that do not depend on nl.program_id() are supported "
                           "for %s" % (loc, fn, what))
        (a, v), c = axes[0], p.e.c
        op = p.op if v > 0 else {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}[p.op]
        c = -c if v > 0 else c   # the compared bound: i_a OP c
        if op in ("lt", "le"):
            hi[a] = min(hi[a], c + (op == "le"))
        else:
            lo[a] = max(lo[a], c + (op == "gt"))
    return tuple(slice(a, b) for a, b in zip(lo, hi))


def masked_load(src, dtype, mask, loc):
    """nl.load(src, mask=) (NKI beta-1): a new SBUF tile of the index
    grid's shape, of which only the rectangle the mask bounds is loaded (the
    rest is left unwritten, as NKI leaves it).  The grid's size along a
    bounded axis is the mask index's (src may be NumPy-clipped there: its
    index runs past src's end where the mask excludes it)."""
    from .language import _dtype, sbuf
    shape = list(src.shape)
    for p in _mask_preds(src, mask, "nl.load", loc):
        for a, n in p.e.sizes.items():
            if p.e.ndim == len(shape) and a is not None and 0 <= a < len(shape) and n > 0:
                shape[a] = max(shape[a], n)
    rest = []   # comparisons that are no one-index bound: _masked.py
    rect = mask_bounds(src, mask, "nl.load", "src", loc, shape, rest)
    dtype = _dtype(dtype) if dtype else src.dtype
    tr = _trace.current()
    if any(r.stop <= r.start for r in rect):
        return tr.new_tensor(shape, dtype, sbuf, "", loc)   # all masked off: nothing loaded
    part = mask_restrict(src, rect)
    if list(part.shape) != [r.stop - r.start for r in rect]:
        raise NkiError("%s: nl.load: src %s is read past its end inside the mask %s" %
                       (loc, list(src.shape), [(r.start, r.stop) for r in rect]))
    if rest:
        from . import _masked
        return _masked.load(shape, dtype, part, rect, _mask_preds(src, mask, "nl.load", loc),
                            loc)
    from . import isa
    t = tr.new_tensor(shape, dtype, sbuf, "", loc)
    dst = t[rect].text()
    isa._emit("dma_copy", loc, [("dst", dst), ("src", part.text())])
    # `x[...] = nl.load(..., mask=)` loads into x's rectangle (_retarget)
    tr.b1_part = (t.base, dst, rect)
    return t


# ---- t[idx] = value, t[idx] += value ----

# refcount of a temporary value seen in assign(): the caller's stack, the
# __setitem__ argument, assign's argument and getrefcount's own (pinned by
# tests/python/test_beta1.py: a named value is copied, a temporary retargeted)
_TEMP_REFS = 4


def _fresh(tr, value, target):
    """The body index of the op that made value, when value is the fresh
    result of the last op (a whole tile declared just before it: a beta-1
    isa op, nl.load, nl.exp(x), nl.matmul, ...) and nothing else holds it;
    else None."""
    base, i = value.base, len(tr.body) - 1
    if (i < 1 or base.kind != "tile" or value.text() != '"%s"' % base.name or
            not tr.body[i - 1].startswith('{"op": "tile", "name": "%s",' % base.name) or
            sys.getrefcount(value) > _TEMP_REFS + 1):
        return None
    if base.buffer == "psum" and target.buffer != "psum":
        return None   # a PE result goes to PSUM
    rec = getattr(tr, "b1_fresh", None)
    if target.dtype != base.dtype and not (rec is not None and rec[0] is base and rec[1]):
        return None   # a dtype given for the result rounds first: keep it, copy
    return i


def _dst_keys(name):
    return [pre % name + end for pre in ('"dst": "%s', '"dst": {"tensor": "%s')
            for end in ('"', '[', '.')]   # not a longer name (t_6 vs t_61)


def _traced_ops(tr):
    """The ops traced so far: the body, and the finished iterations of the
    loops being unrolled (language._unrolled_loop holds them until the
    loop ends)."""
    return itertools.chain(tr.body, *(o for its in tr.unrolling for o in its))


def _ever_written(tr, name):
    """Whether an op traced so far (loop bodies included) writes tile
    `name` (its dst names it, plainly or as a raw access pattern)."""
    keys = _dst_keys(name)
    return any(k in op for op in _traced_ops(tr) for k in keys)


def written_of(tr, names):
    """Those of names that _ever_written: the ops searched as one text
    (no key holds the newline joining the ops) instead of once per op and
    name."""
    text = "\n".join(_traced_ops(tr))
    return [n for n in names if any(k in text for k in _dst_keys(n))]


def _retarget(tr, i, value, target, accumulate):
    base = value.base
    key = '"dst": "%s", ' % base.name
    op = tr.body[i]
    part = getattr(tr, "b1_part", None)
    if (part is not None and part[0] is base and key not in op and
            tuple(target.shape) == tuple(value.shape) and
            op.count('"dst": %s, ' % part[1]) == 1 and op.count(base.name) == 1):
        # a masked nl.load's rectangle of its tile: that rectangle of target
        op = op.replace('"dst": %s, ' % part[1], '"dst": %s, ' % target[part[2]].text(), 1)
    elif op.count('"%s"' % base.name) != 1 or key not in op:
        return False
    else:
        op = op.replace(key, '"dst": %s, ' % target.text(), 1)
    tr.psum_written.discard('"%s"' % base.name)
    if accumulate:
        # `+=` into a PSUM region nothing has written (not zeroed): NKI's
        # accumulation group, whose first matmul overwrites the region
        # (inferred as for accumulate=None); into a written one it adds to
        # what the kernel wrote there (nl.zeros, an earlier matmul or copy);
        # regions per LOGICAL block of a block-dim tile (_groups.py)
        rec = _groups.recorded(target.base)
        st = _groups.status(tr, target)
        if st == "none" and not rec and _ever_written(tr, target.base.name):
            st = "all"   # a write the trace did not record: the tile-level rule
        if st == "part":
            raise NkiError("%s: '%s' += nisa.nc_matmul(...): part of the region %s was written "
                           "before: whether the matmul starts an accumulation group there is "
                           "not defined (not supported by tpbsim)" %
                           (_trace.caller_loc(), target.base.name, target.text()))
        if st == "all":
            acc = True
        else:
            from .isa import _infer_accumulate
            acc = _infer_accumulate(target)
        op = op.replace('"accumulate": false', '"accumulate": %s' % (
            '"%s"' % acc if isinstance(acc, str) else "true" if acc else "false"), 1)
    tr.body[i] = op
    del tr.body[i - 1]   # the tile declaration
    tr.names.discard(base.name)   # later names as if it was never made
    if tr.frames and base.name in tr.frames[-1].names:
        tr.frames[-1].names.remove(base.name)
    if base.buffer == "psum" and not accumulate:
        tr.psum_written.add(_groups.acc_key(target))
    if target.buffer == "psum":
        _groups.mark(tr, target)
    base.dead = True
    tr.b1_fresh = None
    return True


def _same_view(a, b):
    """a and b access the same elements (offsets compared as terms: == on a
    loop variable or program id would be a trace-time decision)."""
    if a is b:
        return True
    x, y = a.offset, b.offset
    if type(x) is _trace.Lin and type(y) is _trace.Lin:
        same = x.c == y.c and x.t == y.t
    else:
        same = type(x) is int and type(y) is int and x == y
    return a.base is b.base and same and a._ap == b._ap


def _free(shape):
    """The partition dim and the free dims other than 1: [P] and [P, 1]
    hold the same elements (NKI assigns a [P] reduction into [P, 1])."""
    return tuple(shape[:1]) + tuple(n for n in shape[1:] if n != 1)


def _with_ones(t, shape):
    """The view t in shape, which differs from t's by free dims of 1."""
    rest = [p for p in t._ap[1:] if p[1] != 1]
    return NkiTensor(t.base, t.offset, t._ap[:1] + [[1, 1] if n == 1 else rest.pop(0)
                                                    for n in shape[1:]])


@_skip
def assign(target, value):
    """target (a view) = value: a fresh op result written in place, else a
    copy (tensor_copy on chip, dma_copy when either side is in HBM), or a
    memset of a number."""
    from . import isa
    loc = _trace.caller_loc()
    tr = _trace.current()
    if isinstance(value, NkiTensor) and value.base.off:
        return   # the op was masked off: nothing written
    if target.buffer == "psum":
        _groups.mark(tr, target)
    if isinstance(value, NkiTensor):
        if _same_view(target, value):
            return   # x[i] += y came back, or x[...] = x[...]
        ones = tuple(value.shape) != tuple(target.shape)
        if ones and _free(value.shape) != _free(target.shape):
            raise NkiError("%s: assignment: value shape %s does not match the target %s" %
                           (loc, list(value.shape), list(target.shape)))
        i = _fresh(tr, value, target) if target._onchip() else None
        # the op writes target viewed in its result's shape ([P] into
        # [P, 1]: its mask's pattern is over that shape)
        if i is not None and _retarget(tr, i, value, _with_ones(target, value.shape)
                                       if ones else target, False):
            return
        from ._loadmode import check_copy
        check_copy(tr, target, value, loc)
        if ones:   # [P] into [P, 1]: value viewed in target's shape
            value = _with_ones(value, target.shape)
        if target._onchip() and value._onchip():
            from . import _wide
            _wide.emit("tensor_copy", loc, [("dst", target.text()), ("src", value.text())],
                       {"dst": target, "src": value})
        else:
            target, value = _trace.dma_sides(target, value)
            isa._emit("dma_copy", loc, [("dst", target.text()), ("src", value.text())])
        return
    from ._composite import LoopReduce
    if isinstance(value, LoopReduce) and target._onchip():   # t = op(t, x)
        if _free(value.x.shape) != _free(target.shape):
            raise NkiError("%s: assignment of nl.loop_reduce: shape %s into %s" %
                           (loc, list(value.x.shape), list(target.shape)))
        x = value.x if value.x.shape == target.shape else _with_ones(value.x, target.shape)
        from ._composite import assign_loop_reduce
        assign_loop_reduce(tr, target, x, value.op, loc)
        return
    if target._onchip() and isinstance(value, (int, float)) and not isinstance(value, bool):
        from ._partition import memset_fields   # t[i, j] = v at any partition i
        isa._emit("memset", loc, memset_fields(target, [
            ("dst", target.text()), ("value", isa._scalar(value, "value", loc))]))
        return
    raise NkiError("%s: assignment to '%s': value %r is not supported (a tile, or a number "
                   "into an SBUF/PSUM tile)" % (loc, target.base.name, value))


@_skip
def iadd(target, value):
    """target += value: a fresh nc_matmul result accumulates into a PSUM
    target (accumulate as NKI's accumulate=None infers it: the first matmul
    into the region overwrites); another tile of target's shape is added with
    a tensor_tensor into target."""
    from . import isa
    loc = _trace.caller_loc()
    tr = _trace.current()
    if isinstance(value, NkiTensor) and value.base.off:
        return target   # the op was masked off: nothing added
    num = isinstance(value, (int, float, _trace.Lin)) and not isinstance(value, bool)
    if not (isinstance(value, NkiTensor) or num) or not target._onchip():
        raise NkiError("%s: '%s' += %r: only an SBUF/PSUM tile += a tile or a number is "
                       "supported" % (loc, target.base.name, value))
    if target.buffer == "psum" and not isinstance(value, NkiTensor):
        _groups.mark(tr, target)
    if num:
        isa._emit("tensor_scalar", loc, [("dst", target.text()), ("src", target.text()),
                                         ("op0", '"add"'),
                                         ("operand0", isa._scalar(value, "value", loc))])
        return target
    if tuple(value.shape) != tuple(target.shape):
        if _free(value.shape) != _free(target.shape):
            # NumPy's rule, as nl.add broadcasts: the sum, then assigned
            # (which refuses a sum that is not target's shape)
            from . import language
            assign(target, language.add(target, value))
            return target
        value = _with_ones(value, target.shape)   # [P] into [P, 1], as assign
    i = _fresh(tr, value, target)
    if (i is not None and target.buffer == "psum" and
            tr.body[i].startswith('{"op": "matmul", ') and
            _retarget(tr, i, value, target, True)):
        return target
    if target.buffer == "psum":
        _groups.mark(tr, target)
    from . import _wide
    from ._psum_pair import off_psum
    value = off_psum(target, value, loc)   # not both in PSUM
    from ._int_tt import engine_field   # int32: GpSimd, exact, as nisa.tensor_tensor
    f = [("dst", target.text()), ("in0", target.text()), ("in1", value.text()),
         ("operator", '"add"')] + engine_field("add", (target, value))
    _wide.emit("tensor_tensor", loc, f, {"dst": target, "in0": target, "in1": value})
    return target
