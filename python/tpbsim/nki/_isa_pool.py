"""nki.isa's Pool-pattern, selection and top-k ops (iota, affine_select,
range_select, select_reduce, the cumulative and scalar reductions,
sequence_bounds, nonzero_with_count, topk, dropout, the Max8 family,
quantize_mx): split from isa.py, which imports them after the helpers they
use are defined and re-exports them as nki.isa's."""
import json
import math

from . import _trace, language
from ._trace import NkiError, NkiTensor
from .isa import (_common, _emit, _intf, _mask, _opn, _scalar, _t, reduce_cmd)

def _iota_dst(dst, pattern, loc):
    """NKI's iota (and affine_select) needs only the product of the
    pattern's counts to match dst's elements per partition; the kernel
    format pairs each count with a dst free dim, so a contiguous dst is
    viewed as [P, counts...]."""
    counts = tuple(int(b) for _, b in pattern)
    shape = tuple(getattr(dst, "shape", ()))
    if not shape or shape[1:] == counts or math.prod(counts) != math.prod(shape[1:]):
        return dst   # as given: the compiler names a mismatch
    try:   # a strided view can often be regrouped too (one strided free dim)
        return dst.reshape((shape[0],) + counts)
    except NkiError:
        raise NkiError("%s: iota pattern counts %s regroup dst %s, whose layout cannot be "
                       "regrouped without a copy" % (loc, list(counts), list(shape))) from None


def iota(dst, pattern, offset=0, channel_multiplier=0, name=None, mask=None):
    loc = _trace.caller_loc()
    dst = _iota_dst(dst, pattern, loc)
    f = [("dst", _t(dst, "dst", loc)), ("pattern", json.dumps([[int(a), int(b)]
                                                              for a, b in pattern])),
         ("offset", _intf(offset)), ("channel_multiplier", str(int(channel_multiplier)))]
    _emit("iota", loc, _mask(_common(f, name, None, loc), mask, loc, dst))


def affine_select(dst, pattern, channel_multiplier, on_true_tile, on_false_value, cmp_op=None,
                  offset=0, name=None, reverse_pred=False, mask=None):
    """reverse_pred (a tpbsim extension, seed 001 set_reverse_pred): select
    on_true_tile where the predicate fails.  mask= (NKI beta-1) over dst's
    indices, which are on_true_tile's."""
    loc = _trace.caller_loc()
    # NKI: only the product of the counts must match the elements per
    # partition (fewer than 4 levels are padded with 1s): dst and
    # on_true_tile are viewed as [P, counts...] as iota's dst is
    # levels of count 1 add nothing to the affine value: dropped, so that
    # the lowering pairs each level with a non-unit dim
    pattern = [[int(a), int(b)] for a, b in pattern if int(b) != 1] or [[0, 1]]
    dst = _iota_dst(dst, pattern, loc)
    on_true_tile = _iota_dst(on_true_tile, pattern, loc)
    f = [("dst", _t(dst, "dst", loc)), ("on_true", _t(on_true_tile, "on_true_tile", loc)),
         ("pattern", json.dumps([[int(a), int(b)] for a, b in pattern])),
         ("offset", _intf(offset)), ("channel_multiplier", str(int(channel_multiplier))),
         ("cmp_op", _opn(cmp_op if cmp_op is not None else "equal", "cmp_op", loc)),
         ("on_false_value", _scalar(on_false_value, "on_false_value", loc))]
    if reverse_pred:
        f.append(("reverse_pred", "true"))
    _emit("affine_select", loc, _mask(_common(f, name, None, loc), mask, loc, dst))


def range_select(dst, on_true_tile, comp_op0, comp_op1, bound0, bound1,
                 reduce_cmd=reduce_cmd.reset_reduce, reduce_res=None, reduce_op=None,
                 range_start=0, on_false_value=None, name=None):
    """Kernel-format range_select (docs/kernel-format.md); reduce_op is
    maximum (the only one NKI allows) when None."""
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("on_true", _t(on_true_tile, "on_true_tile", loc)),
         ("comp_op0", _opn(comp_op0, "comp_op0", loc)),
         ("comp_op1", _opn(comp_op1, "comp_op1", loc)),
         ("bound0", _t(bound0, "bound0", loc)), ("bound1", _t(bound1, "bound1", loc)),
         ("reduce_cmd", '"%s"' % reduce_cmd.name)]
    if reduce_res is not None:
        f.append(("reduce_res", _t(reduce_res, "reduce_res", loc)))
    if reduce_op is not None:
        f.append(("reduce_op", _opn(reduce_op, "reduce_op", loc)))
    if range_start:
        f.append(("range_start", str(int(range_start))))
    if on_false_value is not None:
        f.append(("on_false_value", _scalar(on_false_value, "on_false_value", loc)))
    _emit("range_select", loc, _common(f, name, None, loc))


def select_reduce(dst, predicate, on_true, on_false, reduce_res=None,
                  reduce_cmd=reduce_cmd.idle, reduce_op=None, reverse_pred=False, name=None):
    """Kernel-format select_reduce (docs/kernel-format.md)."""
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("predicate", _t(predicate, "predicate", loc)),
         ("on_true", _t(on_true, "on_true", loc)), ("on_false", _scalar(on_false, "on_false", loc))]
    if reduce_res is not None:
        f.append(("reduce_res", _t(reduce_res, "reduce_res", loc)))
    if reduce_cmd.name != "idle":
        f.append(("reduce_cmd", '"%s"' % reduce_cmd.name))
    if reduce_op is not None:
        f.append(("reduce_op", _opn(reduce_op, "reduce_op", loc)))
    if reverse_pred:
        f.append(("reverse_pred", "true"))
    _emit("select_reduce", loc, _common(f, name, None, loc))


def tensor_scalar_cumulative(dst, src, op0, op1, imm0, imm1=None,
                             reduce_cmd=reduce_cmd.reset_reduce, name=None):
    """Kernel-format tensor_scalar_cumulative (docs/kernel-format.md)."""
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(src, "src", loc)),
         ("op0", _opn(op0, "op0", loc)), ("op1", _opn(op1, "op1", loc)),
         ("imm0", _scalar(imm0, "imm0", loc))]
    if imm1 is not None:
        f.append(("imm1", _scalar(imm1, "imm1", loc)))
    if reduce_cmd.name != "reset_reduce":
        f.append(("reduce_cmd", '"%s"' % reduce_cmd.name))
    _emit("tensor_scalar_cumulative", loc, _common(f, name, None, loc))


def tensor_scalar_reduce(dst, data, op0, operand0, reduce_op, reduce_res=None, reverse0=False,
                         reduce_cmd=reduce_cmd.reset_reduce, reduce_init=None,
                         reduce_res_negate=False, name=None):
    """Kernel-format tensor_scalar_reduce (docs/kernel-format.md); operand0
    None is the unary form."""
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("data", _t(data, "data", loc)),
         ("op0", _opn(op0, "op0", loc))]
    if operand0 is not None:
        f.append(("operand0", _scalar(operand0, "operand0", loc)))
    f.append(("reduce_op", _opn(reduce_op, "reduce_op", loc)))
    if reduce_res is not None:
        f.append(("reduce_res", _t(reduce_res, "reduce_res", loc)))
    if reverse0:
        f.append(("reverse0", "true"))
    if reduce_cmd.name != "reset_reduce":
        f.append(("reduce_cmd", '"%s"' % reduce_cmd.name))
    if reduce_init is not None:
        f.append(("reduce_init", _scalar(reduce_init, "reduce_init", loc)))
    if reduce_res_negate:
        f.append(("reduce_res_negate", "true"))
    _emit("tensor_scalar_reduce", loc, _common(f, name, None, loc))


def sequence_bounds(dst, segment_ids, name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("segment_ids", _t(segment_ids, "segment_ids", loc))]
    _emit("sequence_bounds", loc, _common(f, name, None, loc))


def nonzero_with_count(dst, src, index_offset=0, padding_val=-1, name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(src, "src", loc))]
    if index_offset != 0:
        f.append(("index_offset", str(int(index_offset))))
    if padding_val != -1:
        f.append(("padding_val", str(int(padding_val))))
    _emit("nonzero_with_count", loc, _common(f, name, None, loc))


def topk(val_dst, idx_dst, src, n, name=None):
    loc = _trace.caller_loc()
    f = [("val_dst", _t(val_dst, "val_dst", loc)), ("idx_dst", _t(idx_dst, "idx_dst", loc)),
         ("src", _t(src, "src", loc)), ("n", str(int(n)))]
    _emit("topk", loc, _common(f, name, None, loc))


def dropout(dst, data, prob=None, name=None, keep_rate=None):
    """prob is NKI's drop probability; keep_rate (a tpbsim extension, seed 001
    set_keep_rate) gives the keep probability instead.  Exactly one."""
    loc = _trace.caller_loc()
    if (prob is None) == (keep_rate is None):
        raise NkiError("%s: field 'prob': give prob (drop probability) or keep_rate, exactly one" % loc)
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(data, "data", loc))]
    if keep_rate is None:
        f.append(("prob", _scalar(prob, "prob", loc)))
    else:
        f.append(("keep_rate", _scalar(keep_rate, "keep_rate", loc)))
    _emit("dropout", loc, _common(f, name, None, loc))


def max8(dst, src, name=None):
    loc = _trace.caller_loc()
    _emit("max8", loc, _common([("dst", _t(dst, "dst", loc)), ("src", _t(src, "src", loc))],
                               name, None, loc))


def _vals8(vals, loc):
    """The Max8 family's vals is a per-partition pointer to 8 contiguous
    elements; a view that repeats or strides them (cascaded_max's
    `value.ap([[1, P], [0, 8]])`, one max broadcast to the 8 slots) is first
    copied to a [P, 8] tile (a tensor_copy: the same values)."""
    if _ptr8(vals):
        return vals
    t = language._ndarray((vals.shape[0], 8), vals.dtype, language.sbuf, "vals8", loc)
    _emit("tensor_copy", loc, [("dst", t.text()), ("src", _t(vals, "vals", loc))])
    return t


def _ptr8(x):
    """Whether x is what the Max8 family's per-partition pointer reads or
    writes: 8 contiguous elements a partition (or not an on-chip view)."""
    if type(x) is not NkiTensor or not x._onchip():
        return True
    free = [(st, n) for st, n in x._ap[1:] if n != 1]
    return bool(free) and free[-1][0] == 1 and all(
        a == b * m for (a, _), (b, m) in zip(free, free[1:]))


def nc_find_index8(dst, data, vals, name=None):
    loc = _trace.caller_loc()
    vals = _vals8(vals, loc)
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(data, "data", loc)),
         ("vals", _t(vals, "vals", loc))]
    _emit("find_index8", loc, _common(f, name, None, loc))


def nc_match_replace8(dst, data, vals, imm, dst_idx=None, name=None):
    loc = _trace.caller_loc()
    vals = _vals8(vals, loc)
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(data, "data", loc)),
         ("vals", _t(vals, "vals", loc)), ("imm", _scalar(imm, "imm", loc))]
    view = None
    if dst_idx is not None and not _ptr8(dst_idx) and math.prod(dst_idx.shape[1:]) == 8:
        # any other view (argsort_unstable's reversed `.ap([[n, P], [-1, 8]])`):
        # written to a [P, 8] tile, which is then copied into it
        view = dst_idx
        dst_idx = language._ndarray((view.shape[0], 8), view.dtype, language.sbuf, "idx8", loc)
    if dst_idx is not None:
        f.append(("dst_idx", _t(dst_idx, "dst_idx", loc)))
    _emit("match_replace8", loc, _common(f, name, None, loc))
    if view is not None:
        _emit("tensor_copy", loc, [("dst", _t(view, "dst_idx", loc)), ("src", dst_idx.text())])


def quantize_mx(dst, src, dst_scale, name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(src, "src", loc)),
         ("scale", _t(dst_scale, "dst_scale", loc))]
    _emit("quantize_mx", loc, _common(f, name, None, loc))


