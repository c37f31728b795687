"""nki.isa.dma_compute: dst = sum srcs[i] * scales[i] on the DMA engine,
float32 inside, one cast to dst's dtype (docs/python.md "Supported, and
not").  isa.py re-exports it."""
import json
import math

from . import _beta1, _trace, language
from ._trace import NkiError, NkiTensor
from .isa import _common, _dma, _emit, _enum_of, _opn, _t, dge_mode, dma_copy, memset, oob_mode

_OOB = oob_mode   # (the class; dma_compute's parameter takes its name)


def dma_compute(dst, srcs, reduce_op, scales=None, unique_indices=True, oob_mode=oob_mode.error,
                name=None):
    """dst = sum srcs[i] * scales[i] on the DMA engine (kernel-format
    dma_compute; reduce_op add, direct operands).  NKI sums in float32 and
    casts once to dst's dtype; the kernel format adds source by source in
    dst, so into a narrower dst it rounds once only when the first source
    is copied exactly (_exact_first: two sources, one of scale 1 in dst's
    dtype, the library's fused residual add).  Any other sum into a
    narrower dst (qkv_tkg's three bf16 sources, vllm-neuron's
    depthwise_conv1d adding two float32 tiles into its bf16 output) goes to
    a float32 scratch (_acc_buffer), then one DMA rounds it into dst."""
    loc = _trace.caller_loc()
    oob_mode = _enum_of(_OOB, oob_mode, "oob_mode", loc)
    if _gathered(dst):
        return _scatter_rmw(dst, srcs, reduce_op, scales, unique_indices, oob_mode, name, loc)
    if oob_mode == _OOB.skip and any(_gathered(x) for x in srcs):
        _gather_rmw_only(dst, srcs, scales, loc)
        srcs = [_staged(x, oob_mode) for x in srcs]
        oob_mode = _OOB.error   # applied: the staging gather skipped those rows
    else:
        srcs = [_staged(x, oob_mode) for x in srcs]   # gathered sources: through a tile
    narrow = isinstance(dst, NkiTensor) and language._dtype(dst.dtype) != "float32"
    if narrow and len(srcs) == 2:
        srcs, scales = _exact_first(dst, srcs, scales, loc)
    if narrow and len(srcs) > 1 and not (len(srcs) == 2 and _exact(dst, srcs[0], 0, scales)):
        acc = language._ndarray(dst.shape, "float32", _acc_buffer(dst), "dma_compute_acc", loc)
        dma_compute(acc, srcs, reduce_op, scales=scales, unique_indices=unique_indices,
                    oob_mode=oob_mode, name=name)
        dma_copy(dst=dst, src=acc)
        return
    f = [("dst", _t(dst, "dst", loc)),
         ("srcs", "[%s]" % ", ".join(_t(s, "srcs", loc) for s in srcs)),
         ("reduce_op", _opn(reduce_op, "reduce_op", loc))]
    if scales is not None:
        f.append(("scales", json.dumps([float(x) for x in scales])))
    if not unique_indices:
        f.append(("unique_indices", "false"))
    if oob_mode != oob_mode.error:
        f.append(("oob_mode", '"%s"' % oob_mode.name))
    _emit("dma_compute", loc, _common(f, name, None, loc))


def _acc_buffer(dst):
    """Where dma_compute's float32 sum for a narrow dst goes: an SBUF tile
    of dst's shape when it can be one of at most _ACC_SBUF bytes a
    partition (the extra DMA then reads SBUF, the cheaper one), else an
    HBM scratch."""
    shape = [int(n) for n in dst.shape]
    if len(shape) >= 2 and shape[0] <= 128 and 4 * int(math.prod(shape[1:])) <= _ACC_SBUF:
        return language.sbuf
    return language.hbm


_ACC_SBUF = 16 * 1024   # (a small share of a partition: no SBUF pressure a kernel would see)


def _exact(dst, src, i, scales):
    """Whether source i is copied into dst exactly: scale 1, dst's dtype
    (the kernel format's one-rounding case, encoder/builder_nki.c)."""
    return (isinstance(src, NkiTensor) and (scales is None or float(scales[i]) == 1.0) and
            language._dtype(src.dtype) == language._dtype(dst.dtype))


def _exact_first(dst, srcs, scales, loc):
    """Two sources into a narrow dst, in the order the kernel format adds
    them: the dst named as a source first (it is read before it is
    overwritten, encoder/builder_nki.c), else the one copied exactly first
    when only the second is (the fp32 sum is the same; no scratch)."""
    a, b = srcs
    if _t(a, "srcs", loc) == _t(dst, "dst", loc) or (
            _exact(dst, a, 0, scales) or not _exact(dst, b, 1, scales)) and (
            _t(b, "srcs", loc) != _t(dst, "dst", loc)):
        return srcs, scales
    return [b, a], None if scales is None else [scales[1], scales[0]]


def _gathered(src):
    return isinstance(src, NkiTensor) and src.is_indirect()


def _is_dst(src, dst, loc):
    """Whether source src is dst itself (the same view, or the same text):
    the read-modify-write forms name their destination as a source."""
    return isinstance(src, NkiTensor) and (_beta1._same_view(src, dst) or
                                           _t(src, "srcs", loc) == _t(dst, "dst", loc))


def _unit_scales(scales):
    return scales is None or all(float(x) == 1.0 for x in scales)


def _gather_rmw_only(dst, srcs, scales, loc):
    """oob_mode.skip with a gathered source: NKI's gather read-modify-write
    form only, dst(SBUF) = dst + src(HBM)[indices] (two sources, one of
    them dst itself, scales 1).  There a skipped row adds -0.0, the
    additive identity, so dst keeps that row bit for bit, as when the DMA
    skips it; with any other source or scale the row would change."""
    g = [s for s in srcs if _gathered(s)]
    rest = [s for s in srcs if not _gathered(s)]
    ok = (len(srcs) == 2 and len(g) == 1 and type(dst) is NkiTensor and not _gathered(dst) and
          type(rest[0]) is NkiTensor and _is_dst(rest[0], dst, loc) and _unit_scales(scales))
    if not ok:
        raise NkiError("%s: dma_compute: oob_mode.skip with a gathered (vector_offset) source "
                       "is supported in NKI's gather read-modify-write form only: "
                       "dma_compute(dst=acc, srcs=[table.ap(..., vector_offset=idx), acc], "
                       "reduce_op=nl.add) with acc in SBUF and scales 1.0" % loc)


def _scatter_rmw(dst, srcs, reduce_op, scales, unique_indices, oob, name, loc):
    """NKI's scatter read-modify-write form, dst(HBM)[indices] =
    dst(HBM)[indices] + src(SBUF): two sources, one of them dst itself (the
    same vector_offset view), the other data in SBUF, scales 1, indices
    unique.  It is one indirect DMA that adds: the kernel format's dma_copy
    with an indirect dst and rmw_op add (float32 add, one rounding to dst's
    dtype, docs/semantics-dma.md), unique_indices kept, so the simulator
    refuses a repeated index as NKI's unique_indices=True allows none."""
    if _opn(reduce_op, "reduce_op", loc) != '"add"':
        raise NkiError("%s: dma_compute: reduce_op: only nl.add is supported" % loc)
    same = [s for s in srcs if _is_dst(s, dst, loc)]
    data = [s for s in srcs if not any(s is x for x in same)]
    if not (len(srcs) == 2 and len(same) == 1 and len(data) == 1 and
            type(data[0]) is NkiTensor and not _gathered(data[0]) and
            data[0].buffer == language.sbuf and _unit_scales(scales)):
        raise NkiError("%s: dma_compute: an indirect (vector_offset) dst is supported in NKI's "
                       "scatter read-modify-write form only: dma_compute(dst=rows, srcs=[rows, "
                       "data], reduce_op=nl.add) with rows = table.ap(..., vector_offset=idx) in "
                       "HBM, data in SBUF and scales 1.0" % loc)
    if not unique_indices:
        raise NkiError("%s: dma_compute: unique_indices=False: read-modify-write with repeated "
                       "indices is not supported (as in NKI)" % loc)
    if oob != _OOB.error:   # the kernel format's scatter-add check, also for the cast path
        raise NkiError("%s: dma_compute: field 'oob_mode': scatter add cannot have other modes "
                       "except for error" % loc)
    if language._dtype(data[0].dtype) != language._dtype(dst.dtype):
        return _scatter_rmw_cast(dst, data[0], name)
    f = _dma("dma_copy", dst, data[0], loc, oob, dge_mode.unknown, None)
    f += [("rmw_op", '"add"'), ("unique_indices", "true")]
    _emit("dma_copy", loc, _common(f, name, None, loc))


def _scatter_rmw_cast(dst, data, name):
    """The scatter read-modify-write form where data's dtype is not dst's:
    an indirect DMA does not convert (the kernel format refuses it), so
    the rows are gathered into SBUF, summed in float32 by a direct
    dma_compute, rounded once into dst's dtype by a direct DMA and
    scattered back -- NKI's float32 sum and one cast, in four DMAs.
    Indices must be unique here as in NKI; a repeated one is not refused
    on this path (its rows are written, not added, twice)."""
    shape = tuple(dst.shape)
    rows = language.ndarray(shape, dtype=dst.dtype, buffer=language.sbuf, name="dma_compute_rows")
    acc = language.ndarray(shape, dtype="float32", buffer=language.sbuf, name="dma_compute_acc")
    dma_copy(dst=rows, src=dst)
    dma_compute(acc, [rows, data], language.add, name=name)
    dma_copy(dst=rows, src=acc)
    dma_copy(dst=dst, src=rows)


def _staged(src, oob):
    """A gathered / run-time-selected dma_compute source read into an SBUF
    tile first (the kernel format's dma_compute takes direct operands; the
    NKI Library's topk_reduce adds gathered rows into its accumulator with
    srcs=[gather, acc]).  The sum is the same; under oob_mode.skip the tile
    is set to -0.0 first, so a skipped row adds x + -0.0 == x (every x,
    -0.0 included; +0.0 would turn a -0.0 into +0.0): _gather_rmw_only."""
    if not _gathered(src):
        return src
    t = language.ndarray(tuple(src.shape), dtype=src.dtype, buffer=language.sbuf,
                         name="dma_compute_src")
    if oob == oob_mode.skip:
        memset(dst=t, value=-0.0)
    dma_copy(dst=t, src=src, oob_mode=oob)
    return t
