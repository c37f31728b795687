"""Element-wise ops over more dims than the kernel format's tiles and access
patterns have (5: the partition dim and 4 free dims, as the engines' access
patterns).  A 7-axis nl.mgrid (nki-samples' interpolate_trilinear: `i_p,
i_d_x, i_h_x, i_w_x, i_d_y, i_h_y, i_w_y = nl.mgrid[...]`) indexes a tile
into a 7-dim view, and arithmetic on it makes 7-dim temporaries.  Such a
temporary is declared [P, F] (its elements in C order, _trace.new_tensor)
and every op whose operands have more than 5 dims is split: one op per
index of the leading free dims beyond 5, each on the remaining dims, so
each operand is an access pattern of at most 5 dims.  The values are the
same; the op count grows by that product.  docs/python.md "Index
expressions"."""
import itertools

from . import _trace
from ._trace import NkiError, NkiTensor


def emit(op, loc, fields, views):
    """isa._emit(op, loc, fields), split when a view of views (field name ->
    an operand of dst's shape, dst included) has more than 5 dims."""
    from . import isa
    if all(len(v._ap) <= _trace._MAX_DIMS for v in views.values()):
        isa._emit(op, loc, fields)
        return
    shape = tuple(views["dst"].shape)
    for name, v in views.items():
        if tuple(v.shape) != shape:
            raise NkiError("%s: %s: operand '%s' %s and dst %s differ in shape over more than "
                           "%d dims (not supported by tpbsim)" % (
                               loc, op, name, list(v.shape), list(shape), _trace._MAX_DIMS))
    if any(k == "mask" for k, _ in fields):
        raise NkiError("%s: %s: a mask on an op over %d dims (more than %d) is not supported "
                       "by tpbsim" % (loc, op, len(shape), _trace._MAX_DIMS))
    k = len(shape) - _trace._MAX_DIMS
    for idx in itertools.product(*(range(n) for n in shape[1:1 + k])):
        sub = {}
        for name, v in views.items():
            off = v.offset
            for (st, _), i in zip(v._ap[1:1 + k], idx):
                off = off + st * i
            sub[name] = NkiTensor(v.base, off, v._ap[:1] + v._ap[1 + k:]).text()
        isa._emit(op, loc, [(f, sub.get(f, t)) for f, t in fields])


def _squeeze(v):
    """v without its free dims of size 1 (_trace.drop_unit_dims)."""
    return NkiTensor(v.base, v.offset, _trace.drop_unit_dims(v._ap))


def reduce_views(dst, data, axis):
    """tensor_reduce's operands as [(dst, data, axes), ...], one op each:
    the size-1 free dims of an operand over 5 dims dropped and the axes
    renumbered, so a pooling view such as (P, n, R/k, k, W/k, k) fits the
    format's 4 free dims.  When every reduced axis has size 1, one of them
    stays (the back end lowers a reduction over single elements, and checks
    the op as for any reduction); should that leave 6 dims, the op is split
    over the first kept free dim.  Operands of at most 5 dims come back
    unchanged, as one op."""
    big = [isinstance(v, NkiTensor) and len(v._ap) > _trace._MAX_DIMS for v in (dst, data)]
    if not big[1]:
        return [(_squeeze(dst) if big[0] else dst, data, axis)]
    n = len(data._ap)
    try:
        axes = [int(a) % n for a in (axis if isinstance(axis, (tuple, list)) else [axis])]
    except (TypeError, ValueError):
        return [(dst, data, axis)]   # the op's own check names the bad axis
    units = [d for d in range(1, n) if data._ap[d][1] == 1]
    single = bool(axes) and all(a in units for a in axes)
    if single:
        units.remove(axes[0])
    axes = [a - sum(u < a for u in units) for a in axes if a not in units]
    data = NkiTensor(data.base, data.offset, [p for d, p in enumerate(data._ap) if d not in units])
    dst = _squeeze(dst)
    if len(data._ap) <= _trace._MAX_DIMS or not single:
        return [(dst, data, axes)]   # (too many dims: the format's error)
    return _split_first_kept(dst, data, axes)


def _split_first_kept(dst, data, axes):
    """One (dst, data, axes) per index of data's first kept free dim (dst's
    first free dim)."""
    k = next(d for d in range(1, len(data._ap)) if d not in axes)
    (ds, dn), (ss, sn) = dst._ap[1], data._ap[k]
    if dn != sn:
        return [(dst, data, axes)]   # the op's own check names the mismatch
    axes = [a - (a > k) for a in axes]
    return [(NkiTensor(dst.base, dst.offset + ds * i, dst._ap[:1] + dst._ap[2:]),
             NkiTensor(data.base, data.offset + ss * i, data._ap[:k] + data._ap[k + 1:]), axes)
            for i in range(sn)]
