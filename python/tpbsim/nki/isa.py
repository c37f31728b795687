"""tpbsim.nki.isa: NKI beta-2 `nki.isa` ops (destination first, NKI's
argument names and defaults).  Each call appends one op of the kernel
format, tagged with the caller's file:line, to the kernel being traced.
Ops tpbsim cannot run raise NkiError naming the kernel line
(docs/python.md lists them).  Called without dst, the ops _beta1.py wraps
take NKI beta-1's value-returning form (docs/python.md "Beta-1 call
forms")."""
import json
import math
from enum import Enum, IntEnum

from . import _beta1, _groups, _int_tt, _refuse, _state, _trace, _views, language
from ._trace import NkiError, NkiTensor, _num
from .language import _op_name


class engine(Enum):
    unknown = 0
    tensor = 1
    scalar = 2
    gpsimd = 3
    dma = 4
    vector = 5
    sync = 6


class reduce_cmd(Enum):
    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3
    load_reduce = 4


class dge_mode(Enum):
    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3


class oob_mode(Enum):
    error = 0
    skip = 1


class matmul_perf_mode(Enum):
    none = "none"
    double_row = "double_row"


class nc_version(IntEnum):   # ordered: beta-1 kernels test `>= nc_version.gen3`
    gen2 = 2
    gen3 = 3
    gen4 = 4


_ENGINE = {engine.tensor: "pe", engine.scalar: "act", engine.gpsimd: "pool",
           engine.vector: "dve", engine.sync: "sp", engine.dma: "dma"}
_DGE = {dge_mode.swdge: "sw", dge_mode.hwdge: "hw", dge_mode.none: "none"}


_NC_VERSION = {"trn1": nc_version.gen2, "trn2": nc_version.gen3, "trn3": nc_version.gen4,
               None: nc_version.gen3}


def get_nc_version():
    """The NeuronCore version of the target being traced for (Kernel.target:
    simulate(target=), @nki.jit(platform_target=),
    NEURON_PLATFORM_TARGET_OVERRIDE; trn2 by default); outside a kernel,
    the environment's."""
    st = _trace.stack()
    if st:
        target = st[-1].target
    else:
        from .. import _target
        target = _target(None)
    if target not in _NC_VERSION:
        raise _trace.NkiError("get_nc_version: target '%s' is not one tpbsim models (trn1, "
                              "trn2, trn3)" % target)
    return _NC_VERSION[target]


def get_nc_sub_version():
    """NKI's silicon revision within a generation: 0, the first (tpbsim
    models one revision per target)."""
    return 0


def _emit(op, loc, fields):
    _trace.current().body.append('{"op": "%s", %s"loc": "%s"}' % (
        op, "".join(['"%s": %s, ' % (k, v) for k, v in fields]), loc))


# operand fields an op writes (a PSUM write is recorded for `+=`: _groups.py)
_OUTS = frozenset(("dst", "reduce_res", "val_dst", "idx_dst", "dst_scale", "dst_idx"))


def _t(x, what, loc):
    if type(x) is NkiTensor and x._txt is not None and not x.base.dead:
        if what in _OUTS and x.base.buffer == "psum":
            _groups.mark(_trace.current(), x)   # for a later `+=` (_groups.status)
        return x._txt   # the text is made once
    if not isinstance(x, NkiTensor):
        raise NkiError("%s: field '%s': expected a tensor, got %s" %
                       (loc, what, _state.not_tensor(x)))
    t = x.text()
    if what in _OUTS and x.base.buffer == "psum":
        _groups.mark(_trace.current(), x)
    return t


def _scalar(x, what, loc):
    """A number, a [P,1] tile for per-partition scalars, or an
    nl.program_id() expression (a per-instance immediate)."""
    if isinstance(x, NkiTensor):
        return x.text()
    if isinstance(x, _trace.Lin):
        return '"%s"' % x.text()
    if isinstance(x, bool):
        x = int(x)
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise NkiError("%s: field '%s': expected a number or a tensor, got %r" % (loc, what, x))
    except OverflowError:
        raise NkiError("%s: field '%s': %.40s... is out of the range of a float" %
                       (loc, what, repr(x)))
    if v != v:   # the kernel format has "inf" but no NaN immediate
        raise NkiError("%s: field '%s': NaN is not a valid immediate" % (loc, what))
    if v in (float("inf"), float("-inf")):
        return '"%s"' % ("inf" if v > 0 else "-inf")
    return repr(v)   # float repr: the shortest text that reads back exactly


def _intf(x):
    """An integer field: an int, or an expression in the variables of
    traced-once loops (docs/python.md "Loops") and program ids (each
    program's number: the compiler's front-end binds `pid` per program)."""
    if isinstance(x, _trace.Lin):
        return '"%s"' % x.text()
    return str(int(x))


def _lin_json(x):
    """json.dumps default: a loop-variable expression as its text."""
    if isinstance(x, _trace.Lin):
        return x.text()
    raise TypeError("%r is not JSON serializable" % (x,))


def _common(f, name, eng, loc):
    if name:
        f.append(("name", json.dumps(str(name))))
    if eng is not None and eng != engine.unknown:
        e = _ENGINE.get(eng)
        if e is None:
            raise NkiError("%s: field 'engine': %r is not an engine" % (loc, eng))
        f.append(("engine", '"%s"' % e))
    return f


def _one_pred(m, loc):
    out = {}
    for k, v in m.items():
        if k == "pattern":
            v = [[int(a), int(b)] for a, b in v]
        elif k == "cmp_op":
            v = _op_name(v, "%s: field 'mask.cmp_op'" % loc)
        elif k in ("offset", "channel_multiplier"):
            v = int(v)
        out[k] = v
    return out


def _mask(f, mask, loc, dst=None):
    """NKI mask=: an index expression over nl.arange indices (`(i_p < n) &
    (i_f >= 2)`, an AND of up to 4 affine comparisons), or the kernel
    format's mask written out: one affine predicate over dst's indices
    ({"pattern": [[step, count], ...], "offset", "channel_multiplier",
    "cmp_op"}) or a list of them, ANDed (docs/kernel-format.md "mask")."""
    if mask is None:
        return f
    _trace.beta1_form()   # NKI 0.x ops take no mask=
    if isinstance(mask, (language.IndexPredicate, language.IndexMask)):
        if not isinstance(dst, NkiTensor):
            raise NkiError("%s: field 'mask': an index-expression mask needs a dst tensor" % loc)
        try:
            m = mask.kernel_mask(dst.shape)
        except ValueError as e:
            raise NkiError("%s: field 'mask': %s" % (loc, e)) from None
    elif isinstance(mask, dict) and "pattern" in mask:
        m = _one_pred(mask, loc)
    elif (isinstance(mask, (list, tuple)) and mask and
          all(isinstance(x, dict) and "pattern" in x for x in mask)):
        m = [_one_pred(x, loc) for x in mask]
    else:
        raise NkiError("%s: field 'mask': expected an index expression over nl.arange "
                       "((i_p < n) & (i_f < m)), {'pattern': [[step, count], ...], 'offset', "
                       "'channel_multiplier', 'cmp_op'} (one affine predicate over dst's "
                       "indices) or a list of them, got %r" % (loc, mask))
    f.append(("mask", json.dumps(m, default=_lin_json)))
    return f


def _opn(x, what, loc):
    if type(x) is language._Fn:   # nl.add & co.: no error text to build
        return '"%s"' % x.name
    n = _op_name(x, "%s: field '%s'" % (loc, what))
    return '"%s"' % n


def _flags(f, **flags):
    """Append each true boolean field, in order, as "true" (the kernel
    format's booleans default to false)."""
    f.extend((k, "true") for k, v in flags.items() if v)


def _enum_of(cls, v, what, loc):
    """An enum field given as its integer value (the NKI Library passes
    `dge_mode=3`, NKI's value of dge_mode.none) as the member."""
    if isinstance(v, int) and not isinstance(v, (bool, Enum)):
        try:
            return cls(v)
        except ValueError:
            raise NkiError("%s: %s=%d: not a %s value (%s)" % (
                loc, what, v, cls.__name__, ", ".join("%s=%d" % (m.name, m.value) for m in cls)))
    return v


def _dma(op, dst, src, loc, oob, dge, priority):
    return [("dst", _t(dst, "dst", loc)), ("src", _t(src, "src", loc))] + \
        _dma_opts(oob, dge, priority, loc)


def _dma_opts(oob, dge, priority, loc=""):
    f = []
    oob, dge = _enum_of(oob_mode, oob, "oob_mode", loc), _enum_of(dge_mode, dge, "dge_mode", loc)
    if oob != oob_mode.error:
        f.append(("oob_mode", '"%s"' % oob.name))
    if dge not in (dge_mode.unknown, None):
        f.append(("dge_mode", '"%s"' % _DGE[dge]))
    if priority is not None:
        f.append(("dma_qos", str(int(priority))))
    return f


# ---- data movement ----

def dma_copy(dst, src, priority=None, oob_mode=oob_mode.error, dge_mode=dge_mode.unknown,
             engine=engine.unknown, name=None, *, dst_rmw_op=None, mask=None):
    """dst_rmw_op (NKI beta-1): np.add / nl.add adds src to dst (the kernel
    format's rmw_op "add"; with oob_mode error only, as NKI requires).
    mask= (NKI beta-1): bounds on single indices, as nl.store's: both sides
    cut to that rectangle (nothing copied when it is empty)."""
    loc = _trace.caller_loc()
    _refuse.hwdge_dtypes(dst, src, _enum_of(globals()["dge_mode"], dge_mode, "dge_mode", loc), loc)
    if type(src) is _views._Dyn or type(dst) is _views._Dyn:   # select(dim, tensor)
        return _views.dynamic_dma(dst, src, loc, oob_mode, dge_mode, priority, name,
                                  dst_rmw_op, mask)
    mask, off = _beta1.whole_mask(mask)
    if off:   # a condition on loop variables only, false: nothing copied
        return
    if mask is not None:
        from ._beta1 import mask_rect, mask_bounds
        if any(r.stop <= r.start for r in mask_bounds(dst, mask, "dma_copy", "dst", loc)):
            return
        dst, src = (mask_rect(x, mask, "dma_copy", w, loc) for x, w in ((dst, "dst"), (src, "src")))
    if any(isinstance(x, NkiTensor) and x._ind is not None for x in (src, dst)):
        from . import _gather_nd, _runindex
        kw = dict(priority=priority, oob_mode=oob_mode, dge_mode=dge_mode, engine=engine,
                  name=name)
        if _runindex.hbm_indirect(dst, src, loc, dict(kw, dst_rmw_op=dst_rmw_op)):
            return   # between two HBM tensors: register-offset copies, index by index
        if dst_rmw_op is None and _gather_nd.gather_cast(dst, src, kw):
            return   # a gather / scatter converting dtypes: staged
        if _gather_nd.split_dma(dst, src, dict(kw, dst_rmw_op=dst_rmw_op)):
            return   # shapes of equal element counts, several runs per index: split
    f = _dma("dma_copy", dst, src, loc, oob_mode, dge_mode, priority)
    if dst_rmw_op is not None:
        rmw = _op_name(dst_rmw_op, "%s: dma_copy: dst_rmw_op" % loc)
        if rmw != "add":
            raise NkiError("%s: dma_copy: dst_rmw_op=%s: only np.add (nl.add) is supported" %
                           (loc, rmw))
        if oob_mode != globals()["oob_mode"].error:
            raise NkiError("%s: dma_copy: dst_rmw_op allows oob_mode=oob_mode.error only" % loc)
        f.append(("rmw_op", '"add"'))
    _emit("dma_copy", loc, _common(f, name, None, loc))


def dma_transpose_rect(dst, src, axes, mask, fn, loc):
    """mask= (NKI beta-1) of a DMA transpose: bounds on single indices of
    src (a DMA has no per-element predicate), as dma_copy's; src cut to
    their rectangle, dst to its transpose.  (dst, src), or None when the
    mask keeps nothing (a condition on loop variables only that is false,
    or an empty rectangle)."""
    mask, off = _beta1.whole_mask(mask)
    if off or mask is None:
        return None if off else (dst, src)
    from ._beta1 import mask_bounds, mask_restrict
    rect = mask_bounds(src, mask, fn, "src", loc)
    if any(r.stop <= r.start for r in rect):
        return None
    axes = range(len(rect))[::-1] if axes is None else [int(a) for a in axes]
    part = tuple(rect[a] for a in axes)
    # `x[...] = nisa.dma_transpose(..., mask=)` writes that part of x (_beta1._retarget)
    _trace.current().b1_part = (dst.base, dst[part].text(), part)
    return dst[part], mask_restrict(src, rect)


def dma_transpose(dst, src, axes=None, priority=None, dge_mode=dge_mode.unknown,
                  oob_mode=oob_mode.error, name=None, mask=None):
    """mask= (NKI beta-1): dma_transpose_rect."""
    loc = _trace.caller_loc()
    sides = dma_transpose_rect(dst, src, axes, mask, "nisa.dma_transpose", loc)
    if sides is None:
        return
    dst, src = sides
    from . import _gather_nd
    if isinstance(src, _gather_nd.RowsND) and len(src.nd[2]) > 2:
        # a 4-D gather source: one 2-D gather-transpose per (A, B) position
        return _gather_nd.transpose_nd(dst, src, axes, loc, dict(
            priority=priority, dge_mode=dge_mode, oob_mode=oob_mode), name)
    if isinstance(src, NkiTensor) and src._gt is not None:
        from ._indirect import gather_transpose_cols   # NKI's [128, N] index: N of them
        if gather_transpose_cols(dst, src, axes, loc, dict(priority=priority, dge_mode=dge_mode,
                                                           oob_mode=oob_mode), name):
            return
    if type(src) is NkiTensor and src._gt is None and src._onchip() and len(src.shape) > 1:
        # NKI's direct DMA transpose takes an SBUF source (its SB->SB
        # examples); tpbsim's back end transposes from HBM, so the tile is
        # first copied to an HBM scratch tensor (one more DMA; the same values)
        scratch = language.ndarray(src.shape, src.dtype, buffer=language.hbm,
                                   name="transpose_src")
        _emit("dma_copy", loc, [("dst", scratch.text()), ("src", _t(src, "src", loc))])
        src = scratch
    from ._reinterp import vector_transpose
    moved = vector_transpose(dst, src)
    if moved is not None:   # a dtype view's vector "transpose": the copy it is
        return dma_copy(dst=moved[0], src=moved[1], oob_mode=oob_mode, dge_mode=dge_mode,
                        priority=priority, name=name)
    f = _dma("dma_transpose", dst, src, loc, oob_mode, dge_mode, priority)
    if isinstance(src, NkiTensor) and src._gt is not None:
        # NKI's 2-D gather-transpose (src rows [n, P] by vector_offset, dst
        # [P, n]) is the kernel format's 3-D one: src [n, 1, P], dst
        # [P, 1, n], axes (2, 1, 0) (docs/compiler.md)
        if axes is not None and tuple(int(a) for a in axes) != (1, 0):
            raise NkiError("%s: dma_transpose: %s provided for gather transpose, only (1, 0) "
                           "supported." % (loc, tuple(axes)))
        if not isinstance(dst, NkiTensor) or len(dst._ap) != 2:
            raise NkiError("%s: dma_transpose: a gather-transpose dst must be a 2-D tile" % loc)
        (s0, n0), (s1, n1) = dst._ap
        f[0] = ("dst", '{"tensor": "%s", "offset": %s, "ap": %s}' % (
            dst.base.name, _num(dst.offset), json.dumps([[s0, n0], [1, 1], [s1, n1]])))
        f[1] = ("src", src._gt)
        axes = (2, 1, 0)
    if axes is not None:
        f.append(("axes", json.dumps([int(a) for a in axes])))
    _emit("dma_transpose", loc, _common(f, name, None, loc))


def tensor_copy(dst, src, engine=engine.unknown, name=None, mask=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(src, "src", loc))]
    _emit("tensor_copy", loc, _mask(_common(f, name, engine, loc), mask, loc, dst))


def memset(dst, value, engine=engine.unknown, name=None, mask=None):
    loc = _trace.caller_loc()
    _refuse.memset_value(dst, value, loc)
    f = [("dst", _t(dst, "dst", loc)), ("value", _scalar(value, "value", loc))]
    if mask is None:   # a start partition the engines do not allow: a masked window
        from ._partition import memset_fields
        f = memset_fields(dst, f)
    _emit("memset", loc, _mask(_common(f, name, engine, loc), mask, loc, dst))


def nc_stream_shuffle(dst, src, shuffle_mask, name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(src, "src", loc)),
         ("shuffle_mask", json.dumps([int(m) for m in shuffle_mask]))]
    _emit("stream_shuffle", loc, _common(f, name, None, loc))


def nc_n_gather(dst, data, indices, name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("data", _t(data, "data", loc)),
         ("indices", _t(indices, "indices", loc))]
    _emit("nc_n_gather", loc, _common(f, name, None, loc))


def local_gather(dst, src_buffer, index, num_elem_per_idx=1, num_valid_indices=None,
                 name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("src_buffer", _t(src_buffer, "src_buffer", loc)),
         ("index", _t(index, "index", loc)), ("num_elem_per_idx", str(int(num_elem_per_idx)))]
    if num_valid_indices is not None:
        f.append(("num_valid_indices", str(int(num_valid_indices))))
    _emit("local_gather", loc, _common(f, name, None, loc))


# ---- PE ----

def _pe_tiling(f, tile_position, tile_size):
    if tile_position:
        f.append(("tile_position", json.dumps([int(v) for v in tile_position])))
    if tile_size:
        f.append(("tile_size", json.dumps([int(v) for v in tile_size])))


def _infer_accumulate(dst):
    """NKI's accumulate=None (and beta-1's `psum[...] += nc_matmul(...)`):
    the first matmul into a PSUM region overwrites, later ones into the same
    region accumulate, inferred at trace time: False, True, or an
    expression over the traced-once loops the tile lives across."""
    tr = _trace.current()
    # a block of a block-dim tile: keyed on its logical block (blocks i and
    # i + k of a rotated tile share storage but are two accumulation groups)
    key = _groups.acc_key(dst) if isinstance(dst, NkiTensor) else None
    if key is not None and dst._lb is not None and dst._lb[0]:
        _groups.same_blocks(tr, dst)
    if key in tr.psum_written:
        return True
    tr.psum_written.add(key)
    if tr.frames and key is not None:   # in a traced-once loop body
        tr.frames[-1].psum.append(key)
        return tr.first_write(dst)
    return False


def _perf_mode(perf_mode):
    """The perf_mode name; the SDK's beta-1 nc_matmul test spells double_row
    on trn2 "double_row_gen3" (the same [K, 2, M] x [K, 2, N] contraction)."""
    pm = perf_mode.value if isinstance(perf_mode, matmul_perf_mode) else perf_mode
    return "double_row" if pm == "double_row_gen3" else pm


_SWAP = {0: 1, 1: 0}   # a 2-D transpose's input axis -> dst axis


def nc_matmul(dst, stationary, moving, is_stationary_onezero=False, is_moving_onezero=False,
              is_transpose=False, accumulate=None, tile_position=(), tile_size=(),
              perf_mode=matmul_perf_mode.none, name=None, mask=None):
    """mask= is over dst's indices [M, N] (NKI's docs: a mask cannot tell
    the two operands' free axes apart); with is_transpose, dst =
    stationary.T, over stationary's indices, as nc_transpose's."""
    loc = _trace.caller_loc()
    if is_transpose and len(getattr(stationary, "shape", ())) == 2:
        mask, _ = _beta1.input_mask(mask, stationary, _SWAP, 2, "nisa.nc_matmul", loc)
    f = [("dst", _t(dst, "dst", loc)), ("stationary", _t(stationary, "stationary", loc)),
         ("moving", _t(moving, "moving", loc))]
    if accumulate is None:
        accumulate = _infer_accumulate(dst)
    f.append(("accumulate", '"%s"' % accumulate if isinstance(accumulate, str) else
              "true" if accumulate else "false"))
    _flags(f, transpose=is_transpose, is_stationary_onezero=is_stationary_onezero,
           is_moving_onezero=is_moving_onezero)
    _pe_tiling(f, tile_position, tile_size)
    pm = _perf_mode(perf_mode)
    if pm not in (None, "none"):
        f.append(("perf_mode", '"%s"' % pm))
    _emit("matmul", loc, _mask(_common(f, name, None, loc), mask, loc, dst))


def nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale, tile_position=None,
                 tile_size=None, accumulate=None, name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("stationary", _t(stationary, "stationary", loc)),
         ("moving", _t(moving, "moving", loc)),
         ("stationary_scale", _t(stationary_scale, "stationary_scale", loc)),
         ("moving_scale", _t(moving_scale, "moving_scale", loc))]
    if accumulate is not None:
        f.append(("accumulate", "true" if accumulate else "false"))
    _pe_tiling(f, tile_position, tile_size)
    _emit("matmul_mx", loc, _common(f, name, None, loc))


def nc_transpose(dst, data, engine=engine.unknown, name=None, mask=None):
    """An index-expression mask= bounds data's indices (NKI: the input tile's
    axes), so dst gets the transposed rectangle (_beta1.input_mask)."""
    loc = _trace.caller_loc()
    mask, _ = _beta1.input_mask(mask, data, _SWAP, 2, "nisa.nc_transpose", loc)
    if mask is None and engine != globals()["engine"].vector and _int_pe(dst, data):
        if _int_pe(dst, data) == 1:   # through float32 (its values exact), as nl.transpose
            from . import _composite
            f32 = _composite._copy(data, language.float32, loc)
            f32 = f32.reshape((f32.shape[0], math.prod(f32.shape[1:])))   # free axes flattened
            t = _composite._pe_transpose(f32, language.float32, loc, None)
            _emit("tensor_copy", loc, [("dst", _t(dst, "dst", loc)), ("src", t.text())])
            return
        dst, data = _int_pe_views(dst, data, loc)   # NKI: any dtype; the PE takes floats
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(data, "data", loc))]
    _emit("transpose", loc, _mask(_common(f, name, engine, loc), mask, loc, dst))


def _int_pe(dst, data):
    """The element size of an integer tile transposed into one of its dtype
    (on the PE, which takes floats only), else 0."""
    from ._alloc import _DT_BYTES
    if (getattr(data, "dtype", None) in language._INT_DTYPES and
            getattr(dst, "dtype", None) == data.dtype):
        return _DT_BYTES.get(data.dtype, 0)
    return 0


def _int_pe_views(dst, data, loc):
    """dst and data as the float of their size: the PE's transpose mode
    moves those bits as they are (nl.transpose's integer path)."""
    from . import _composite
    from ._alloc import _DT_BYTES
    fdt = _composite._BITS_AS[_DT_BYTES[data.dtype]]
    try:
        dv = dst.view(fdt)
    except NkiError:
        return dst, data   # as given: the compiler names what it refuses
    return dv, _composite._bits(data, fdt, loc)


# ---- elementwise and reductions ----

_ENGINE_UNKNOWN = engine.unknown


def tensor_tensor(dst, data1, data2, op, engine=engine.unknown, name=None, mask=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("in0", _t(data1, "data1", loc)),
         ("in1", _t(data2, "data2", loc)), ("operator", _opn(op, "op", loc))]
    if engine in (None, _ENGINE_UNKNOWN) and _int_tt.on_pool(f[3][1][1:-1],
                                                             (dst, data1, data2)):
        engine = gpsimd_engine   # NKI: int32/uint32 on GpSimd, exact (_int_tt.py)
    _emit("tensor_tensor", loc, _mask(_common(f, name, engine, loc), mask, loc, dst))


def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None,
                  reverse1=False, engine=engine.unknown, name=None, mask=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(data, "data", loc)),
         ("op0", _opn(op0, "op0", loc)), ("operand0", _scalar(operand0, "operand0", loc))]
    if reverse0:
        f.append(("reverse0", "true"))
    if op1 is not None:
        f.append(("op1", _opn(op1, "op1", loc)))
        f.append(("operand1", _scalar(operand1, "operand1", loc)))
        if reverse1:
            f.append(("reverse1", "true"))
    _emit("tensor_scalar", loc, _mask(_common(f, name, engine, loc), mask, loc, dst))


def scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, reverse0=False,
                         reverse1=False, name=None, mask=None):
    loc = _trace.caller_loc()
    if reverse0 or reverse1:   # the kernel format has no reverse fields
        from . import _reversed
        if _reversed.split(dst, data, op0, operand0, op1, operand1, reverse0, reverse1,
                           _opn(op0, "op0", loc)[1:-1], _opn(op1, "op1", loc)[1:-1], mask):
            return
    f = [("dst", _t(dst, "dst", loc)), ("in0", _t(data, "data", loc)),
         ("op0", _opn(op0, "op0", loc)), ("scalar", _scalar(operand0, "operand0", loc)),
         ("op1", _opn(op1, "op1", loc)), ("in1", _t(operand1, "operand1", loc))]
    _emit("scalar_tensor_tensor", loc, _mask(_common(f, name, None, loc), mask, loc, dst))


def _axis(axis):
    if isinstance(axis, (tuple, list)):
        return json.dumps([int(a) for a in axis])
    return str(int(axis))


def _reduce_mask(mask, data, axis, dst, fn, loc):
    """A reduction's index-expression mask, over data's indices (NKI), as
    (the mask over dst's, data cut along the reduced axes it bounds)."""
    if not isinstance(mask, (language.IndexPredicate, language.IndexMask)):
        return mask, data
    nd = len(data.shape)
    try:
        red = {int(a) % nd for a in (axis if isinstance(axis, (tuple, list)) else [axis])}
    except (TypeError, ValueError):
        return mask, data   # the op names its bad axis
    from ._index import reduce_axes
    to = reduce_axes(nd, red, len(dst.shape))
    return _beta1.input_mask(mask, data, to, len(dst.shape), fn, loc)


def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, name=None, mask=None,
                  per_axis=False):
    """per_axis (a tpbsim extension, seed 001 NeuronReduceMacro): one
    TensorReduce per reduced axis instead of one for all."""
    loc = _trace.caller_loc()
    if isinstance(data, NkiTensor):   # (a bad data is named by _t)
        from ._refuse import reduce_axes
        axis = reduce_axes(data.shape, axis, "nisa.tensor_reduce", loc)
    mask, data = _reduce_mask(mask, data, axis, dst, "nisa.tensor_reduce", loc)
    if data is None:
        return   # the mask keeps no index of a reduced axis: nothing written
    from . import _wide
    parts = _wide.reduce_views(dst, data, axis)
    if len(parts) > 1 and mask is not None:
        raise NkiError("%s: field 'mask': a mask on a tensor_reduce over more than %d dims is "
                       "not supported by tpbsim" % (loc, _trace._MAX_DIMS))
    for dst, data, axis in parts:
        f = [("dst", _t(dst, "dst", loc)), ("src", _t(data, "data", loc)),
             ("operator", _opn(op, "op", loc)), ("axis", _axis(axis))]
        _flags(f, negate=negate, keepdims=keepdims, per_axis=per_axis)
        _emit("tensor_reduce", loc, _mask(_common(f, name, None, loc), mask, loc, dst))


def tensor_partition_reduce(dst, op, data, name=None, mask=None):
    loc = _trace.caller_loc()
    mask, data = _reduce_mask(mask, data, 0, dst, "nisa.tensor_partition_reduce", loc)
    if data is None:
        return   # the mask keeps no partition: nothing written
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(data, "data", loc)),
         ("operator", _opn(op, "op", loc))]
    _emit("tensor_partition_reduce", loc, _mask(_common(f, name, None, loc), mask, loc, dst))


def tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False,
                       name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("in0", _t(data0, "data0", loc)),
         ("in1", _t(data1, "data1", loc)), ("initial", _scalar(initial, "initial", loc)),
         ("op0", _opn(op0, "op0", loc)), ("op1", _opn(op1, "op1", loc))]
    _flags(f, reverse0=reverse0, reverse1=reverse1)
    _emit("tensor_tensor_scan", loc, _common(f, name, None, loc))


def _act_fields(f, loc, bias, scale, reduce_op, reduce_res, reduce_cmd_):
    if isinstance(bias, NkiTensor):
        f.append(("bias", bias.text()))
    elif bias is not None:
        # a compile-time number (NKI: NeuronCore-v3 on; the lowering refuses
        # it on trn1); the kernel format has no "inf" or program-id expression there
        v = _scalar(bias, "bias", loc)
        if v.startswith('"'):
            raise NkiError("%s: field 'bias': %s is not supported as a bias (a number or a "
                           "[P,1] tile)" % (loc, v))
        if float(v) != 0.0:
            f.append(("bias", v))
    if isinstance(scale, NkiTensor) or scale != 1.0:
        f.append(("scale", _scalar(scale, "scale", loc)))
    if reduce_op is not None:
        f.append(("reduce_op", _opn(reduce_op, "reduce_op", loc)))
        if reduce_res is not None:   # None: the result stays in the reduce registers
            f.append(("reduce_res", _t(reduce_res, "reduce_res", loc)))
    if reduce_cmd_ not in (None, reduce_cmd.idle):
        f.append(("reduce_cmd", '"%s"' % reduce_cmd_.name))
    return f


def activation(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
               reduce_cmd=reduce_cmd.idle, name=None, mask=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(data, "data", loc)),
         ("func", _opn(op, "op", loc))]
    _act_fields(f, loc, bias, scale, reduce_op, reduce_res, reduce_cmd)
    _emit("activation", loc, _mask(_common(f, name, None, loc), mask, loc, dst))


def activation_reduce(dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(data, "data", loc)),
         ("func", _opn(op, "op", loc))]
    _act_fields(f, loc, bias, scale, reduce_op, reduce_res, None)
    _emit("activation", loc, _common(f, name, None, loc))


def activate2(dst, op, data, imm0, imm1, op0, op1, relu_param=0.0, reverse0=False,
              reverse1=False, reduce_op=None, reduce_res=None, reduce_cmd=reduce_cmd.idle,
              name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(data, "data", loc)),
         ("op0", _opn(op0, "op0", loc)), ("imm0", _scalar(imm0, "imm0", loc)),
         ("op1", _opn(op1, "op1", loc)), ("imm1", _scalar(imm1, "imm1", loc)),
         ("func", _opn(op, "op", loc))]
    _flags(f, reverse0=reverse0, reverse1=reverse1)
    if isinstance(relu_param, NkiTensor) or relu_param != 0.0:
        f.append(("relu_param", _scalar(relu_param, "relu_param", loc)))
    _act_fields(f, loc, None, 1.0, reduce_op, reduce_res, reduce_cmd)
    _emit("activate2", loc, _common(f, name, None, loc))


def reciprocal(dst, data, name=None, mask=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("data", _t(data, "data", loc))]
    _emit("reciprocal", loc, _mask(_common(f, name, None, loc), mask, loc, dst))


def exponential(dst, src, max_value=0.0, reduce_res=None, reduce_cmd=reduce_cmd.idle,
                reduce_init=0.0, name=None):
    """exp(src - max_value), optionally summed per partition into reduce_res
    (given a reduce_res, reduce_cmd idle sums as reset_reduce does)."""
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(src, "src", loc)),
         ("max_value", _scalar(max_value, "max_value", loc))]
    if reduce_res is not None:
        f.append(("reduce_res", _t(reduce_res, "reduce_res", loc)))
    if reduce_cmd not in (None, globals()["reduce_cmd"].idle):
        f.append(("reduce_cmd", '"%s"' % reduce_cmd.name))
    if isinstance(reduce_init, NkiTensor) or reduce_init != 0.0:
        f.append(("reduce_init", _scalar(reduce_init, "reduce_init", loc)))
    _emit("exponential", loc, _common(f, name, None, loc))


def bn_stats(dst, data, name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("data", _t(data, "data", loc))]
    _emit("bn_stats", loc, _common(f, name, None, loc))


def bn_aggr(dst, data, name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("data", _t(data, "data", loc))]
    _emit("bn_aggr", loc, _common(f, name, None, loc))


def tensor_copy_predicated(dst, src, predicate, reverse_pred=False, name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("src", _scalar(src, "src", loc)),
         ("predicate", _t(predicate, "predicate", loc))]
    if reverse_pred:
        f.append(("reverse_pred", "true"))
    _emit("tensor_copy_predicated", loc, _common(f, name, None, loc))


def core_barrier(data, cores, engine=engine.gpsimd, name=None):
    loc = _trace.caller_loc()
    f = [("cores", json.dumps([int(c) for c in cores]))]
    if data is not None and not (isinstance(data, NkiTensor) and not data._onchip()):
        f.append(("data", _t(data, "data", loc)))
    # shared-HBM data (NKI's case: both cores wrote parts of it) is not
    # passed: the barrier orders every access to memory before and after it
    # (docs/multicore.md), those writes included
    _emit("core_barrier", loc, _common(f, name, engine, loc))


class dma_engine(Enum):
    dma = 1
    gpsimd_dma = 2


def _rank(x):
    return x.text() if isinstance(x, _trace.Lin) else str(int(x))


def sendrecv(src, dst, send_to_rank, recv_from_rank, pipe_id, dma_engine=dma_engine.dma,
             name=None):
    """Exchange with one peer program (send_to_rank == recv_from_rank, e.g.
    1 - nl.program_id(0)); the kernel format's NKI-named sendrecv checks
    them, pipe_id and dma_engine (gpsimd_dma: at most 256 elements per
    partition)."""
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("src", _t(src, "src", loc)),
         ("send_to_rank", '"%s"' % _rank(send_to_rank)),
         ("recv_from_rank", '"%s"' % _rank(recv_from_rank)), ("pipe_id", str(int(pipe_id))),
         ("dma_engine", '"%s"' % dma_engine.name)]
    _emit("sendrecv", loc, _common(f, name, None, loc))


# the random-number ops live in _isa_rng.py (imported here, after the
# names they use are defined, and before _beta1.install reads the ops)
from ._isa_rng import rand2, rand_get_state, rand_set_state, rng, set_rng_seed  # noqa: E402,F401
from ._dma_compute import dma_compute  # noqa: E402,F401
from ._isa_pool import (affine_select, dropout, iota, max8, nc_find_index8,  # noqa: E402,F401
                        nc_match_replace8, nonzero_with_count, quantize_mx, range_select,
                        select_reduce, sequence_bounds, tensor_scalar_cumulative,
                        tensor_scalar_reduce, topk)


# NKI beta-1: the engine names, and ops that return their result tile when
# called without dst (docs/python.md "Beta-1 call forms")
unknown_engine, tensor_engine, scalar_engine = engine.unknown, engine.tensor, engine.scalar
gpsimd_engine, vector_engine = engine.gpsimd, engine.vector
_beta1.install(globals())
# nki.isa.constants (the enums' module in NKI): tpbsim.nki.isa.constants
from . import _lconst  # noqa: E402
_lconst.install(__name__, globals(), {n: globals()[n] for n in _lconst.ISA})


# the virtual registers live in _registers.py (imported here, after the
# names they use are defined)
from ._registers import (VirtualRegister, register_alloc, register_load,  # noqa: E402,F401
                         register_move, register_store)
