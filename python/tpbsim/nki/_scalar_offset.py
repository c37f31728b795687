"""NKI's `.ap(pattern, offset, scalar_offset=s, indirect_dim=d)` on an HBM
tensor: the access starts `s * stride(d)` elements further, s read at run
time from a one-element SBUF tile or a register (docs/python.md "Dynamic
offsets").  It is the kernel format's register-offset DMA: a `load` with
`src_reg` (the view is dma_copy's src, dst on chip) or a `store` with
`dst_reg` (the view is dst), the register filled just before by
`register_load` (docs/kernel-format.md "Register-offset (dynamic) DMA")."""
import numpy as np

from . import _trace
from ._trace import NkiError, NkiTensor

# the engines' datapath is fp32: an offset scaled by the stride is exact
# only below this (docs/semantics.md "Integer results of non-bitwise ops")
_EXACT = 1 << 24


def view(t, off, pat, scalar, d):
    """The static access (t's base at off along pat) carrying its run-time
    offset: (scalar, stride of dim d)."""
    b = t.base
    if b.kind == "tile":
        raise NkiError(".ap(scalar_offset=...) on '%s', an on-chip tile: tpbsim moves only "
                       "HBM accesses by a run-time offset" % b.name)
    shape = list(b.shape)
    if (isinstance(t.offset, int) and t.offset == 0 and t._contig() and
            int(np.prod(t.shape)) == int(np.prod(shape))):   # a reshape of it all
        shape = list(t.shape)
    if not 0 <= d < len(shape):
        raise NkiError(".ap(scalar_offset=..., indirect_dim=%r): '%s' %s has no dim %r" %
                       (d, b.name, shape, d))
    kind = type(scalar).__name__
    stride = int(np.prod(shape[d + 1:]))
    if kind == "Lin" or isinstance(scalar, (int, np.integer)):
        # a loop variable (tpbsim's dynamic_range / fori_loop index is a
        # symbol that moves DMA addresses) or a number: a static offset
        return NkiTensor(b, off + scalar * stride, pat)
    if kind == "NkiTensor":
        if scalar.base.kind != "tile" or int(np.prod(scalar.shape)) != 1:
            raise NkiError(".ap(scalar_offset=...): the offset must be one element of an SBUF "
                           "tile (or a register), got '%s' %s" % (scalar.base.name,
                                                                  list(scalar.shape)))
        if np.dtype(scalar.dtype) not in (np.dtype(np.int32), np.dtype(np.uint32)):
            raise NkiError(".ap(scalar_offset=...): the offset tile '%s' must be int32 or "
                           "uint32, not %s" % (scalar.base.name, np.dtype(scalar.dtype).name))
    elif kind != "VirtualRegister":
        raise NkiError(".ap(scalar_offset=%r): expected a one-element SBUF tile or a register"
                       % (scalar,))
    if stride != 1 and int(np.prod(shape)) > _EXACT:
        raise NkiError(".ap(scalar_offset=..., indirect_dim=%d) on '%s' %s: the offset times "
                       "the dim's stride %d is computed on the fp32 datapath, exact only below "
                       "2^24 elements" % (d, b.name, shape, stride))
    v = NkiTensor(b, off, pat)
    v._soff = (scalar, stride)
    return v


def _register(scalar, stride, loc):
    """A register holding scalar * stride (emitting the ops that fill it)."""
    from . import isa, language
    if type(scalar).__name__ == "VirtualRegister":
        if stride == 1:
            return scalar
        tmp = language._ndarray((1, 1), language.int32, language.sbuf, "soff", loc)
        isa._emit("register_store", loc, [("dst", tmp.text()), ("src", isa._vreg(scalar, "src",
                                                                                 loc))])
        scalar = tmp
    if stride != 1 or not (isinstance(scalar.offset, int) and scalar.offset == 0):
        # to partition 0 of a tile of its own (a register load, an engine
        # op, starts at a quadrant: cross_entropy's offset is on partition
        # p), times the dim's stride: the element offset
        tmp = language._ndarray((1, 1), language.int32, language.sbuf, "soff", loc)
        isa._emit("dma_copy", loc, [("dst", tmp.text()), ("src", scalar.text())])
        if stride != 1:
            isa._emit("tensor_scalar", loc, [("dst", tmp.text()), ("src", tmp.text()),
                                             ("op0", '"multiply"'), ("operand0", str(stride))])
        scalar = tmp
    # one register per source line (and loop body the name is bound in),
    # loaded right before each use: the registers are few (64, some taken
    # by rolled loops), and an unrolled loop would take one per iteration
    tr = _trace.current()
    regs = tr.__dict__.setdefault("_soff_regs", {})
    key = (loc, tr.dyn_depth, tuple(id(f) for f in tr.frames))
    r = regs.get(key)
    if r is None:
        n = getattr(tr, "_nki_nregs", 0)
        tr._nki_nregs = n + 1
        r = regs[key] = isa.VirtualRegister("vreg%d" % n)
        isa._emit("register_alloc", loc, [("reg", '"%s"' % r.name)])
    isa._emit("register_load", loc, [("dst", '"%s"' % r.name), ("src", scalar.text())])
    return r


def dma_copy(dst, src, fields, loc):
    """dma_copy with a run-time offset on one side: `load` + src_reg (HBM
    src) or `store` + dst_reg (HBM dst); fields: dma_copy's other fields."""
    from . import isa
    ds, ss = (getattr(x, "_soff", None) if isinstance(x, NkiTensor) else None
              for x in (dst, src))
    if ds is not None and ss is not None:
        raise NkiError("%s: dma_copy: src and dst both have a scalar_offset; tpbsim moves one "
                       "side" % loc)
    side, other = (src, dst) if ss is not None else (dst, src)
    if not isinstance(other, NkiTensor) or other.base.kind != "tile":
        raise NkiError("%s: dma_copy: a scalar_offset access pairs with an SBUF tile on the "
                       "other side (the kernel format's load / store)" % loc)
    fields = [kv for kv in fields if kv[0] not in ("dst", "src")]
    bad = [k for k, _ in fields if k not in ("name", "dge_mode", "oob_mode", "dma_qos")]
    if bad or ("oob_mode", '"skip"') in fields:
        raise NkiError("%s: dma_copy with a scalar_offset: %s not supported by tpbsim (a load / "
                       "store with a register offset is bounds-checked, oob_mode error)" %
                       (loc, ", ".join(bad) or "oob_mode skip"))
    scalar, stride = side._soff
    reg = _register(scalar, stride, loc)
    static = NkiTensor(side.base, side.offset, side._ap)
    f = [("dst", dst.text() if side is src else static.text()),
         ("src", static.text() if side is src else src.text()),
         ("src_reg" if side is src else "dst_reg", '"%s"' % reg.name)]
    isa._emit("load" if side is src else "store", loc,
              f + [kv for kv in fields if kv[0] != "oob_mode"])
